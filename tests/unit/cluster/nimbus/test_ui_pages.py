"""Storm UI pages of Nimbus through FastAPI's test client (no server process, no Spark).

Nimbus summary, component page, visualization, cluster and topology conf.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import (
    api_client,
    register,
    running,
    submit,
)


def test_nimbus_summary(nimbus: Nimbus, clock: FakeClock) -> None:
    clock.now += 3725
    body = api_client(nimbus).get("/api/v1/nimbus/summary").json()
    assert body == {"nimbuses": [{
        "host": "127.0.0.1", "port": 6627, "status": "Leader", "version": "0.1.0",
        "nimbusUpTime": "1h 2m 5s", "nimbusUpTimeSeconds": 3725, "nimbusLogLink": ""}]}


@pytest.mark.usefixtures("two_components")
def test_component_page_of_a_bolt(nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    topology_id, worker_id = running(nimbus, state)
    umbilical = nimbus.umbilical
    for text, when in (("first", clock.now - 20), ("second\n  at x", clock.now - 5)):
        umbilical.report_error(worker_id, {"topology_id": topology_id, "component": "split",
                                           "error": text, "time_secs": when})
    response = api_client(nimbus).get(f"/api/v1/topology/{topology_id}/component/split")
    assert response.status_code == 200, response.text
    page = response.json()
    assert {k: page[k] for k in ("id", "encodedId", "name", "componentType", "executors",
                                 "tasks", "topologyId", "topologyStatus", "window")} == {
        "id": "split", "encodedId": "split", "name": "t", "componentType": "bolt",
        "executors": 1, "tasks": 4, "topologyId": topology_id, "topologyStatus": "ACTIVE",
        "window": ":all-time"}
    # execute latency: busy time (2.5 ms, end-of-window work included) per executed tuple;
    # process latency: receipt to ack (5 ms summed) per acked tuple
    all_time = {"emitted": 30, "transferred": 30, "acked": 10, "failed": 0, "executed": 10,
                "executeLatency": "0.250", "processLatency": "0.500"}
    assert [(row["window"], row["windowPretty"]) for row in page["boltStats"]] == [
        ("600", "10m 0s"), ("10800", "3h 0m 0s"), ("86400", "1d 0h 0m 0s"),
        (":all-time", "All time")]
    for row in page["boltStats"]:  # one window, 2 s ago: in every window
        assert {k: row[k] for k in all_time} == all_time
    # capacity: 2.5 ms busy over the 60 s the worker ran (all time) or 60 s (10 min)
    assert page["boltStats"][-1]["capacity"] == f"{2.5 / 60_000:.3f}"
    assert page["inputStats"] == [{
        "component": "word", "encodedComponentId": "word", "stream": "default",
        "executed": 10, "executeLatency": "0.200", "processLatency": "0.500", "acked": 10,
        "failed": 0}]
    assert page["outputStats"] == [{"stream": "default", "emitted": 30, "transferred": 30}]
    (executor,) = page["executorStats"]
    assert executor["id"] == "[1-4]" and executor["host"] == "host-s1"
    assert executor["port"] == 6700 and executor["uptime"] == "1m 5s"
    assert executor["executed"] == 10 and executor["capacity"] == "0.000"
    assert [(p["window"], p["executed"], p["emitted"]) for p in page["recentWindows"]] == \
        [(0, 10, 30)]
    assert [(e["error"], e["errorLapsedSecs"], e["errorHost"], e["errorPort"])
            for e in page["componentErrors"]] == [("first", 20, "host-s1", 6700),
                                                  ("second\n  at x", 5, "host-s1", 6700)]
    assert "spoutSummary" not in page


@pytest.mark.usefixtures("two_components")
def test_component_page_of_a_spout(nimbus: Nimbus, state: ClusterState) -> None:
    topology_id, _ = running(nimbus, state)
    page = api_client(nimbus).get(f"/api/v1/topology/{topology_id}/component/word").json()
    assert page["componentType"] == "spout" and page["componentErrors"] == []
    assert page["spoutSummary"][-1] == {
        "window": ":all-time", "windowPretty": "All time", "emitted": 10, "transferred": 10,
        "acked": 9, "failed": 1, "completeLatency": "2.500", "lastError": ""}
    assert page["failuresByCause"] == {"explicit": 1, "error": 0, "timeout": 0, "crash": 0}
    (reason,) = page["failureReasons"]
    assert {k: reason[k] for k in ("cause", "reason", "count", "example")} == {
        "cause": "explicit", "reason": "split: bad word", "count": 1,
        "example": "split: bad word"}
    assert reason["firstSeen"] == reason["lastSeen"] > 0
    assert page["outputStats"] == [{"stream": "default", "emitted": 10, "transferred": 10,
                                    "acked": 9, "failed": 1, "completeLatency": "2.500"}]
    (executor,) = page["executorStats"]
    assert executor["id"] == "[5-5]" and executor["completeLatency"] == "2.500"
    assert executor["acked"] == 9 and "boltStats" not in page
    # the gauges the spout's task 5 publishes (a Kafka spout's lag), as they came
    assert page["componentMetrics"] == {"5": {"kafkaOffset": {"t/partition_0": {"spoutLag": 3}}}}


@pytest.mark.usefixtures("two_components")
def test_component_page_before_any_heartbeat_has_zero_counts(nimbus: Nimbus,
                                                             state: ClusterState) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    page = api_client(nimbus).get(f"/api/v1/topology/{topology_id}/component/split").json()
    assert page["boltStats"][0]["executed"] == 0 and page["inputStats"] == []
    assert page["executorStats"] == [] and page["recentWindows"] == []
    assert page["componentMetrics"] == {}


@pytest.mark.usefixtures("two_components")
def test_component_page_unknown_topology_or_component(nimbus: Nimbus,
                                                      state: ClusterState) -> None:
    topology_id, _ = running(nimbus, state)
    client = api_client(nimbus)
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
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    client = api_client(nimbus)
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
    client = api_client(nimbus)
    for path in ("/api/v1/nimbus/conf", "/api/v1/cluster/configuration"):
        conf = client.get(path).json()
        assert conf["storm.cluster.token"] == "********", path
        assert conf["nimbus.port"] == 6627
        assert '":"secret"' not in client.get(path).text  # the token's value, under no key


def test_topology_conf_masks_secrets_by_pattern_at_any_depth(nimbus: Nimbus,
                                                              state: ClusterState) -> None:
    register(state, "s1", 6700)
    secrets = {"spark.ssl.keyPassword": "k1", "aws.secret.access.key": "k2",
               "db_password": "k3", "topology.state.provider.config": {
                   "host": "redis-host", "password": "k4", "nodes": [{"auth_token": "k5"}]},
               "sink.url": "postgresql://app:k6@db:5432/x"}
    topology_id = submit(nimbus, conf=secrets)
    response = api_client(nimbus).get(f"/api/v1/topology/{topology_id}/conf")
    assert response.status_code == 200, response.text
    assert not [s for s in ("k1", "k2", "k3", "k4", "k5", "k6") if s in response.text]
    conf = response.json()
    assert conf["topology.state.provider.config"]["host"] == "redis-host", "not a secret"
    assert conf["sink.url"] == "postgresql://app:********@db:5432/x"
    assert conf["topology.name"] == "t"


def test_topology_conf(nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)  # submitted with storm.cluster.token in its overrides
    client = api_client(nimbus)
    response = client.get(f"/api/v1/topology/{topology_id}/conf")
    assert response.status_code == 200, response.text
    conf = response.json()
    assert conf["storm.id"] == topology_id and conf["topology.name"] == "t"
    assert conf.get("storm.cluster.token") in (None, "", "********")
    assert '":"secret"' not in response.text  # the token's value, under no key
    missing = client.get("/api/v1/topology/nope-1-1/conf")
    assert missing.status_code == 404 and missing.json()["code"] == "TOPOLOGY_NOT_FOUND"


@pytest.mark.usefixtures("two_components")
def test_topology_page_windows_failures_and_recent_windows(nimbus: Nimbus,
                                                           state: ClusterState) -> None:
    topology_id, _ = running(nimbus, state)
    client = api_client(nimbus)
    page = client.get(f"/api/v1/topology/{topology_id}", params={"window": "600"}).json()
    assert (page["window"], page["windowHint"]) == ("600", "10m 0s")
    assert [row["window"] for row in page["topologyStats"]] == ["600", "10800", "86400",
                                                                ":all-time"]
    # Storm's totals: emitted over every component, acked/failed/latency over the spouts
    assert {k: page["topologyStats"][0][k] for k in ("emitted", "transferred", "acked",
                                                     "failed", "completeLatency")} == {
        "emitted": 40, "transferred": 40, "acked": 9, "failed": 1, "completeLatency": "2.500"}
    (spout,) = page["spouts"]
    assert spout["acked"] == 9 and spout["failuresByCause"]["explicit"] == 1
    assert page["failuresByCause"] == {"explicit": 1, "error": 0, "timeout": 0, "crash": 0}
    assert [{k: r[k] for k in ("spoutId", "cause", "reason", "count")}
            for r in page["failureReasons"]] == [
        {"spoutId": "word", "cause": "explicit", "reason": "split: bad word", "count": 1}]
    (point,) = page["recentWindows"]
    assert (point["emitted"], point["acked"], point["failed"]) == (40, 9, 1)
    assert point["components"]["split"]["inputs"] == {"word:default": 10}
    assert page["workers"][0]["sparkUiUrl"] is None
    assert page["hostLocality"] == {"calls": 2, "host_local_calls": 1, "host_local_share": 0.5,
                                    "crossed_bytes": 400, "tuples": 40,
                                    "crossed_bytes_per_tuple": 10.0, "refreshed_calls": 0,
                                    "replaced_calls": 0}

    bad = client.get(f"/api/v1/topology/{topology_id}", params={"window": "60"})
    assert bad.status_code == 400 and bad.json()["code"] == "UNKNOWN_WINDOW"
    assert ":all-time" in bad.json()["error"]
    bad = client.get(f"/api/v1/topology/{topology_id}/component/word", params={"window": "x"})
    assert bad.status_code == 400 and bad.json()["code"] == "UNKNOWN_WINDOW"
