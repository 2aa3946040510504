"""Storm UI pages of Nimbus through FastAPI's test client (no server process, no Spark):
nimbus summary, component page, visualization, cluster and topology conf."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.nimbus.umbilical import Umbilical
from sparkstorm.cluster.state.cluster_state import ClusterState
from tests.unit.cluster.nimbus.conftest import Clock
from tests.unit.cluster.nimbus.test_rebalance_and_cleanup import _worker
from tests.unit.cluster.nimbus.test_service import _register, _submit

SPOUT_STATS = {"emitted": 10, "transferred": 10, "acked": 9, "failed": 1, "executed": 0,
               "complete_latency_ms": 2.5, "execute_latency_ms": None,
               "process_latency_ms": None,
               "by_stream": {"emitted": {"default": 10}, "transferred": {"default": 10},
                             "executed": {}, "acked": {"default": 9},
                             "failed": {"default": 1}}}
BOLT_STATS = {"emitted": 30, "transferred": 30, "acked": 10, "failed": 0, "executed": 10,
              "complete_latency_ms": None, "execute_latency_ms": 0.25,
              "process_latency_ms": 0.5,
              "by_stream": {"emitted": {"default": 30}, "transferred": {"default": 30},
                            "executed": {"word:default": 10}, "acked": {"word:default": 10},
                            "failed": {}}}


def _client(nimbus: Nimbus) -> TestClient:
    return TestClient(create_app(nimbus, "secret"))


def _running(nimbus: Nimbus, state: ClusterState) -> tuple[str, str]:
    """A submitted topology whose worker sent one heartbeat: (topology id, worker id)."""
    _register(state, "s1", 6700)
    topology_id = _submit(nimbus)
    worker_id = _worker(state, topology_id)
    Umbilical(nimbus).heartbeat(worker_id, {
        "topology_id": topology_id, "uptime_secs": 65,
        "stats": {"components": {"word": SPOUT_STATS, "split": BOLT_STATS}}})
    return topology_id, worker_id


def test_nimbus_summary(nimbus: Nimbus, clock: Clock) -> None:
    clock.now += 3725
    body = _client(nimbus).get("/api/v1/nimbus/summary").json()
    assert body == {"nimbuses": [{
        "host": "127.0.0.1", "port": 6627, "status": "Leader", "version": "0.1.0",
        "nimbusUpTime": "1h 2m 5s", "nimbusUpTimeSeconds": 3725, "nimbusLogLink": ""}]}


@pytest.mark.usefixtures("two_components")
def test_component_page_of_a_bolt(nimbus: Nimbus, state: ClusterState, clock: Clock) -> None:
    topology_id, worker_id = _running(nimbus, state)
    umbilical = Umbilical(nimbus)
    for text, when in (("first", clock.now - 20), ("second\n  at x", clock.now - 5)):
        umbilical.report_error(worker_id, {"topology_id": topology_id, "component": "split",
                                           "error": text, "time_secs": when})
    response = _client(nimbus).get(f"/api/v1/topology/{topology_id}/component/split")
    assert response.status_code == 200, response.text
    page = response.json()
    assert {k: page[k] for k in ("id", "encodedId", "name", "componentType", "executors",
                                 "tasks", "topologyId", "topologyStatus", "window")} == {
        "id": "split", "encodedId": "split", "name": "t", "componentType": "bolt",
        "executors": 1, "tasks": 4, "topologyId": topology_id, "topologyStatus": "ACTIVE",
        "window": ":all-time"}
    assert page["boltStats"] == [{
        "window": ":all-time", "windowPretty": "All time", "emitted": 30, "transferred": 30,
        "acked": 10, "failed": 0, "executed": 10, "executeLatency": "0.250",
        "processLatency": "0.500", "capacity": "0.000"}]
    assert page["inputStats"] == [{
        "component": "word", "encodedComponentId": "word", "stream": "default",
        "executed": 10, "executeLatency": "0.250", "processLatency": "0.500", "acked": 10,
        "failed": 0}]
    assert page["outputStats"] == [{"stream": "default", "emitted": 30, "transferred": 30}]
    (executor,) = page["executorStats"]
    assert executor["id"] == "[1-4]" and executor["host"] == "host-s1"
    assert executor["port"] == 6700 and executor["uptime"] == "1m 5s"
    assert executor["executed"] == 10 and executor["capacity"] == "0.000"
    assert [(e["error"], e["errorLapsedSecs"], e["errorHost"], e["errorPort"])
            for e in page["componentErrors"]] == [("first", 20, "host-s1", 6700),
                                                  ("second\n  at x", 5, "host-s1", 6700)]
    assert "spoutSummary" not in page


@pytest.mark.usefixtures("two_components")
def test_component_page_of_a_spout(nimbus: Nimbus, state: ClusterState) -> None:
    topology_id, _ = _running(nimbus, state)
    page = _client(nimbus).get(f"/api/v1/topology/{topology_id}/component/word").json()
    assert page["componentType"] == "spout" and page["componentErrors"] == []
    assert page["spoutSummary"] == [{
        "window": ":all-time", "windowPretty": "All time", "emitted": 10, "transferred": 10,
        "acked": 9, "failed": 1, "completeLatency": "2.500", "lastError": ""}]
    assert page["outputStats"] == [{"stream": "default", "emitted": 10, "transferred": 10,
                                    "acked": 9, "failed": 1, "completeLatency": "2.500"}]
    (executor,) = page["executorStats"]
    assert executor["id"] == "[5-5]" and executor["completeLatency"] == "2.500"
    assert executor["acked"] == 9 and "boltStats" not in page


@pytest.mark.usefixtures("two_components")
def test_component_page_before_any_heartbeat_has_zero_counts(nimbus: Nimbus,
                                                             state: ClusterState) -> None:
    _register(state, "s1", 6700)
    topology_id = _submit(nimbus)
    page = _client(nimbus).get(f"/api/v1/topology/{topology_id}/component/split").json()
    assert page["boltStats"][0]["executed"] == 0 and page["inputStats"] == []
    assert page["executorStats"][0]["uptimeSeconds"] == 0


@pytest.mark.usefixtures("two_components")
def test_component_page_unknown_topology_or_component(nimbus: Nimbus,
                                                      state: ClusterState) -> None:
    topology_id, _ = _running(nimbus, state)
    client = _client(nimbus)
    missing = client.get("/api/v1/topology/nope-1-1/component/split")
    assert missing.status_code == 404 and missing.json()["code"] == "TOPOLOGY_NOT_FOUND"
    unknown = client.get(f"/api/v1/topology/{topology_id}/component/count")
    assert unknown.status_code == 404
    assert set(unknown.json()) == {"error", "code"}
    assert unknown.json()["code"] == "COMPONENT_NOT_FOUND"
    assert "split" in unknown.json()["error"]


@pytest.mark.usefixtures("two_components")
def test_visualization_is_open_and_has_inputs_and_groupings(nimbus: Nimbus,
                                                            state: ClusterState) -> None:
    _register(state, "s1", 6700)
    topology_id = _submit(nimbus)
    client = _client(nimbus)
    response = client.get(f"/api/v1/topology/{topology_id}/visualization")  # no token
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    by_name = {c["name"]: c for c in body["components"]}
    assert by_name["split"] == {
        "name": "split", "kind": "bolt", "par": 1, "num_tasks": 4,
        "inputs": [{"source": "word", "stream": "default", "grouping": {"type": "SHUFFLE"}}],
        "outputs": [{"name": "default", "fields": ["w"], "direct": False}]}
    assert by_name["word"]["kind"] == "spout" and by_name["word"]["inputs"] == []
    assert "component" not in by_name["word"], "no code references without the token"
    storm = body["visualization"]["split"]
    assert storm[":type"] == "bolt"
    assert storm[":inputs"] == [{":component": "word", ":stream": "default",
                                 ":sani-stream": "default", ":grouping": "shuffle"}]
    missing = client.get("/api/v1/topology/nope-1-1/visualization")
    assert missing.status_code == 404 and missing.json()["code"] == "TOPOLOGY_NOT_FOUND"


def test_cluster_configuration_masks_the_token(nimbus: Nimbus) -> None:
    nimbus.conf["storm.cluster.token"] = "secret"
    client = _client(nimbus)
    for path in ("/api/v1/nimbus/conf", "/api/v1/cluster/configuration"):
        conf = client.get(path).json()
        assert conf["storm.cluster.token"] == "********", path
        assert conf["nimbus.port"] == 6627
        assert "secret" not in client.get(path).text


def test_topology_conf(nimbus: Nimbus, state: ClusterState) -> None:
    _register(state, "s1", 6700)
    topology_id = _submit(nimbus)  # submitted with storm.cluster.token in its overrides
    client = _client(nimbus)
    response = client.get(f"/api/v1/topology/{topology_id}/conf")
    assert response.status_code == 200, response.text
    conf = response.json()
    assert conf["storm.id"] == topology_id and conf["topology.name"] == "t"
    assert conf.get("storm.cluster.token") in (None, "", "********")
    assert "secret" not in response.text
    missing = client.get("/api/v1/topology/nope-1-1/conf")
    assert missing.status_code == 404 and missing.json()["code"] == "TOPOLOGY_NOT_FOUND"
