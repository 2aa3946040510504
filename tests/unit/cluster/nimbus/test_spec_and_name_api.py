"""The spec and name-allowed calls, over the API and through :class:`NimbusClient`.

``GET /api/v1/topology/{id}/spec`` (Storm's getUserTopology, token required) and ``GET
/api/v1/topologies/name-allowed`` (Storm's isTopologyNameAllowed), over FastAPI's test client.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import SPEC, register, submit
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK

AUTH = {"Authorization": "Bearer secret"}


def _client(nimbus: Nimbus, token: str | None = "secret") -> NimbusClient:
    client = NimbusClient("http://testserver", token)
    client.http = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK,
                             headers={"Authorization": f"Bearer {token}"} if token else {})
    return client


def test_spec_needs_the_token_and_answers_the_submitted_spec(
        nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    http = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK)
    path = f"/api/v1/topology/{topology_id}/spec"
    refused = http.get(path)
    assert refused.status_code == 401 and refused.json()["code"] == "AUTH_TOKEN_MISSING"
    answer = http.get(path, headers=AUTH)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["topologyId"], body["name"]) == (topology_id, "t")
    assert [c["name"] for c in body["spec"]["components"]] == ["word"]
    assert body["spec"]["components"][0]["component"] == SPEC["components"][0]["component"]
    missing = http.get("/api/v1/topology/nope-1-1/spec", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["code"] == "TOPOLOGY_NOT_FOUND"

    client = _client(nimbus)
    assert client.topology_spec(topology_id) == body["spec"]
    with pytest.raises(NimbusError) as caught:
        _client(nimbus, token=None).topology_spec(topology_id)
    assert caught.value.code == "AUTH_TOKEN_MISSING"


def test_name_allowed_refuses_invalid_and_live_names(nimbus: Nimbus, state: ClusterState,
                                                     clock: FakeClock) -> None:
    register(state, "s1", 6700)
    client = _client(nimbus, token=None)  # a read: no token needed
    assert client.name_allowed("t") == {"name": "t", "allowed": True, "reason": None,
                                        "code": None}
    topology_id = submit(nimbus)
    taken = client.name_allowed("t")
    assert taken["allowed"] is False and taken["code"] == "TOPOLOGY_ALREADY_ALIVE"
    assert topology_id in taken["reason"]
    for bad in ("a/b", "a.b", "a:b", "a\\b", "", "  "):
        answer = client.name_allowed(bad)
        assert (answer["name"], answer["allowed"], answer["code"]) == (
            bad, False, "INVALID_TOPOLOGY_NAME"), answer
    nimbus.kill(topology_id, 10)
    assert client.name_allowed("t")["code"] == "TOPOLOGY_ALREADY_ALIVE", "killed, not gone"
    clock.now += 11
    nimbus.assigner.check_all()
    assert client.name_allowed("t")["allowed"] is True, "free again once removed"
    no_param = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK).get(
        "/api/v1/topologies/name-allowed")
    assert no_param.status_code == 422 and no_param.json()["code"] == "BAD_REQUEST"
