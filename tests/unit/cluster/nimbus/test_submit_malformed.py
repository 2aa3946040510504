"""Malformed submissions get a 4xx with a stable code naming the place.

Never the generic 500 INTERNAL_ERROR: a spec of the wrong shape (400, the path of the bad value in
the message), a body of the wrong shape (422 BAD_REQUEST), a name that cannot name a folder (400).
Nothing is stored, the upload is removed, and Nimbus still accepts a good topology afterwards (a
``par: true`` spec once corrupted the StormBase of every later submit).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from tests.unit.cluster.nimbus.http_helpers import AUTH, LOOPBACK, upload_code

VALID: dict[str, Any] = {
    "components": [
        {"name": "word", "kind": "spout", "component": "topo:Words",
         "outputs": [{"fields": ["w"], "name": "default", "direct": False}],
         "inputs": [], "par": 1, "num_tasks": 1, "config": {}, "extra": {}},
        {"name": "split", "kind": "bolt", "component": "topo:Split",
         "outputs": [{"fields": ["w"], "name": "default", "direct": False}],
         "inputs": [{"source": "word", "stream": "default", "grouping": {"type": "SHUFFLE"}}],
         "par": 1, "num_tasks": 1, "config": {}, "extra": {}},
    ],
    "config": {},
}


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    spec = copy.deepcopy(VALID)
    target: Any = spec
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return spec


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


SPEC_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("INVALID_TOPOLOGY_SPEC", "components[0].outputs[0].fields[0]",
     _with(("components", 0, "outputs", 0, "fields"), [["w"]])),
    ("INVALID_TOPOLOGY_SPEC", "components[0].outputs[0].name",
     _with(("components", 0, "outputs", 0, "name"), ["default"])),
    ("INVALID_TOPOLOGY_SPEC", "components[0].name", _with(("components", 0, "name"), 5)),
    ("INVALID_TOPOLOGY_SPEC", "components[1].name",
     _with(("components", 1, "name"), {"a": 1})),
    ("INVALID_TOPOLOGY_SPEC", "components[1].inputs[0].grouping.fields",
     _with(("components", 1, "inputs", 0, "grouping"), {"type": "FIELDS", "fields": "w"})),
    ("INVALID_TOPOLOGY_SPEC", "components[0].kind", _with(("components", 0, "kind"), "sink")),
    ("INVALID_TOPOLOGY_SPEC", "components[0].component",
     _with(("components", 0, "component"), 3)),
    ("INVALID_TOPOLOGY_SPEC", "components[1].config['x']",
     _with(("components", 1, "config"), {"x": _deep(700)})),
    ("INVALID_TOPOLOGY_SPEC", "config", _with(("config",), ["topology.workers"])),
    ("PARALLELISM_BELOW_ONE", "components[0].par", _with(("components", 0, "par"), True)),
    ("TASKS_BELOW_ONE", "components[1].num_tasks",
     _with(("components", 1, "num_tasks"), "4")),
]

# body changes that must be refused: (status, code, what the message names, change)
BODY_CASES: list[tuple[int, str, str, dict[str, Any]]] = [
    (422, "BAD_REQUEST", "body.conf", {"conf": ["topology.workers", 2]}),
    (422, "BAD_REQUEST", "body.conf", {"conf": None}),
    (422, "BAD_REQUEST", "body.conf", {"conf": {"deep": _deep(700)}}),
    (422, "BAD_REQUEST", "body.name", {"name": 5}),
    (422, "BAD_REQUEST", "body.name", {"name": ["t"]}),
    (422, "BAD_REQUEST", "body.owner", {"owner": {"me": 1}}),
    (422, "BAD_REQUEST", "body.active", {"active": "maybe"}),
    (422, "BAD_REQUEST", "body.upload_id", {"upload_id": ["stormjar-x"]}),
    (400, "INVALID_TOPOLOGY_NAME", "topology name", {"name": "x" * 300}),
    (400, "INVALID_TOPOLOGY_NAME", "topology name", {"name": "a\x00b"}),
    (400, "INVALID_TOPOLOGY_NAME", "topology name", {"name": "a\nb"}),
    (400, "CONFIG_WRONG_TYPE", "topology.workers", {"conf": {"topology.workers": [1]}}),
]


def _submit(http: TestClient, spec: Any = VALID, **changes: Any) -> Any:
    body = {"name": "t", "upload_id": upload_code(http), "spec": spec, "conf": {}, **changes}
    return http.post("/api/v1/topologies", headers=AUTH, json=body)


@pytest.fixture
def http(nimbus: Nimbus, state: ClusterState) -> TestClient:
    """The API of a Nimbus with one supervisor.

    A server error is answered (500), not raised, as a real client would see it.
    """
    state.register_supervisor(SupervisorInfo("s1", "host-s1", (6700, 6701)))
    return TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK,
                      raise_server_exceptions=False)


def _nothing_left(nimbus: Nimbus) -> None:
    assert nimbus.storms() == {} and nimbus.stormdist.topology_ids() == []
    assert list(nimbus.inbox.folder.iterdir()) == [], "the refused upload is removed"


@pytest.mark.parametrize(("code", "path", "spec"), SPEC_CASES,
                         ids=[f"{i}-{path}" for i, (_, path, _) in enumerate(SPEC_CASES)])
def test_a_malformed_spec_is_a_400_naming_the_path(
        nimbus: Nimbus, http: TestClient, code: str, path: str, spec: dict[str, Any]) -> None:
    refused = _submit(http, spec)
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["code"] == code, body
    assert f"topology spec: {path} " in body["error"], body
    _nothing_left(nimbus)


@pytest.mark.parametrize(("status", "code", "named", "changes"), BODY_CASES,
                         ids=[f"{i}-{c}" for i, (_, c, _, _) in enumerate(BODY_CASES)])
def test_a_malformed_body_is_refused_with_a_code(
        nimbus: Nimbus, http: TestClient, status: int, code: str, named: str,
        changes: dict[str, Any]) -> None:
    refused = _submit(http, **changes)
    assert refused.status_code == status, refused.text
    body = refused.json()
    assert body["code"] == code and named in body["error"], body
    assert len(body["error"]) < 1000, "the value received is shown shortened"
    assert nimbus.storms() == {} and nimbus.stormdist.topology_ids() == []


def test_after_every_refusal_a_good_topology_is_still_accepted(
        nimbus: Nimbus, http: TestClient) -> None:
    """Nothing bad is stored by a refused spec.

    ``par: true`` used to be accepted and stored as a StormBase executor count of True, which every
    later read refused (STATE_CORRUPT_NODE).
    """
    for code, _, spec in SPEC_CASES:
        assert _submit(http, spec).json()["code"] == code
    for status, _, _, changes in BODY_CASES:
        assert _submit(http, **changes).status_code == status
    accepted = _submit(http)
    assert accepted.status_code == 200, accepted.text
    assert list(nimbus.storms()) == [accepted.json()["topologyId"]]
    summary = http.get("/api/v1/topology/summary")
    assert summary.status_code == 200, summary.text
