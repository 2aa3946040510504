"""Every Storm UI REST endpoint we serve carries every field Storm documents for it.

As listed in shared/reference/storm-ui-rest-api.md, with Storm's types for counts (int) and
latencies and capacity (strings with 3 decimals), so dashboards and scripts written for Storm work.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from tests.unit.cluster.nimbus.helpers import api_client, running

pytestmark = pytest.mark.usefixtures("two_components")

CLUSTER = """stormVersion stormVersionInfo user supervisors topologies slotsTotal slotsUsed
slotsFree executorsTotal tasksTotal totalMem totalCpu availMem availCpu fragmentedMem
fragmentedCpu memAssignedPercentUtil cpuAssignedPercentUtil schedulerDisplayResource
availGenerics totalGenerics bugtracker-url central-log-url"""
NIMBUS = "host port status version nimbusUpTime nimbusUpTimeSeconds nimbusLogLink"
SUPERVISOR = """id host uptime uptimeSeconds slotsTotal slotsUsed slotsFree totalMem totalCpu
usedMem usedCpu availMem availCpu version blacklisted logLink totalGenericResources
usedGenericResources availGenericResources"""
SUPERVISOR_WORKER = """supervisorId host port topologyId topologyName executorsTotal
assignedMemOnHeap assignedMemOffHeap assignedCpu componentNumTasks uptime uptimeSeconds
workerLogLink owner"""
TOPOLOGY_ROW = """id encodedId name owner status uptime uptimeSeconds tasksTotal workersTotal
executorsTotal replicationCount schedulerInfo requestedMemOnHeap requestedMemOffHeap
requestedTotalMem requestedCpu assignedMemOnHeap assignedMemOffHeap assignedTotalMem assignedCpu
requestedGenericResources assignedGenericResources topologyVersion stormVersion"""
TOPOLOGY = TOPOLOGY_ROW + """ user window windowHint msgTimeout debug samplingPct configuration
schedulerDisplayResource bugtracker-url central-log-url visualizationTable
requestedRegularOnHeapMem requestedSharedOnHeapMem requestedRegularOffHeapMem
requestedSharedOffHeapMem assignedRegularOnHeapMem assignedSharedOnHeapMem
assignedRegularOffHeapMem assignedSharedOffHeapMem topologyStats workers spouts bolts"""
TOPOLOGY_STATS = "window windowPretty emitted transferred acked failed completeLatency"
LAST_ERROR = "lastError errorHost errorPort errorWorkerLogLink errorTime errorLapsedSecs"
SPOUT = "spoutId encodedSpoutId executors tasks emitted transferred acked failed " \
        "completeLatency " + LAST_ERROR
BOLT = "boltId encodedBoltId executors tasks emitted transferred acked failed executed " \
       "executeLatency processLatency capacity " + LAST_ERROR
COMPONENT = """user id encodedId name executors tasks requestedMemOnHeap requestedMemOffHeap
requestedCpu requestedGenericResources schedulerDisplayResource topologyId encodedTopologyId
topologyStatus window windowHint componentType debug samplingPct profilingAndDebuggingCapable
profileActionEnabled profilerActive componentErrors executorStats"""
COMPONENT_ERROR = "error errorTime errorHost errorPort errorWorkerLogLink errorLapsedSecs"
SPOUT_SUMMARY = "window windowPretty emitted transferred acked failed completeLatency lastError"
SPOUT_OUTPUT = "stream emitted transferred acked failed completeLatency"
EXECUTOR = "id encodedId host port uptime uptimeSeconds emitted transferred acked failed " \
           "workerLogLink"
BOLT_STATS = "window windowPretty emitted transferred acked failed executed executeLatency " \
             "processLatency capacity"
INPUT = "component encodedComponentId stream executed executeLatency processLatency acked failed"
LATENCY = re.compile(r"^\d+\.\d{3}$")
LATENCY_FIELDS = {"completeLatency", "executeLatency", "processLatency", "capacity"}
COUNT_FIELDS = {"emitted", "transferred", "acked", "failed", "executed"}


def _has(body: dict[str, Any], fields: str) -> None:
    missing = sorted(set(fields.split()) - set(body))
    assert not missing, f"Storm fields missing: {missing}"
    for name in LATENCY_FIELDS & set(body):
        assert LATENCY.match(body[name]), f"{name} must be a 3-decimal string: {body[name]!r}"
    for name in COUNT_FIELDS & set(body):
        assert isinstance(body[name], int), f"{name} must be an int: {body[name]!r}"


def _get(client: TestClient, path: str, **params: str) -> dict[str, Any]:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return dict(response.json())


def test_cluster_nimbus_supervisor_and_topology_summaries(nimbus: Nimbus,
                                                          state: ClusterState) -> None:
    running(nimbus, state)
    client = api_client(nimbus)
    _has(_get(client, "/api/v1/cluster/summary"), CLUSTER)
    for row in _get(client, "/api/v1/nimbus/summary")["nimbuses"]:
        _has(row, NIMBUS)
    supervisors = _get(client, "/api/v1/supervisor/summary")
    _has(supervisors, "supervisors schedulerDisplayResource logviewerPort logviewerScheme")
    (row,) = supervisors["supervisors"]
    _has(row, SUPERVISOR)
    one = _get(client, "/api/v1/supervisor", id=row["id"])
    assert [s["id"] for s in one["supervisors"]] == [row["id"]]
    (worker,) = one["workers"]
    _has(worker, SUPERVISOR_WORKER)
    assert worker["componentNumTasks"] == {"word": 1, "split": 4}
    by_host = _get(client, "/api/v1/supervisor", host=row["host"])
    assert by_host["workers"] == one["workers"]
    assert client.get("/api/v1/supervisor", params={"id": "nope"}).json()["code"] == \
        "SUPERVISOR_NOT_FOUND"
    topologies = _get(client, "/api/v1/topology/summary")
    _has(topologies, "topologies schedulerDisplayResource")
    _has(topologies["topologies"][0], TOPOLOGY_ROW)


@pytest.mark.parametrize("window", ["600", "10800", "86400", ":all-time"])
def test_topology_page_in_every_window(nimbus: Nimbus, state: ClusterState,
                                       window: str) -> None:
    topology_id, _ = running(nimbus, state)
    client = api_client(nimbus)
    page = _get(client, f"/api/v1/topology/{topology_id}", window=window)
    _has(page, TOPOLOGY)
    assert page["window"] == window
    assert [row["window"] for row in page["topologyStats"]] == ["600", "10800", "86400",
                                                                ":all-time"]
    for row in page["topologyStats"]:
        _has(row, TOPOLOGY_STATS)
    for spout in page["spouts"]:
        _has(spout, SPOUT)
    for bolt in page["bolts"]:
        _has(bolt, BOLT)
    for worker in page["workers"]:
        _has(worker, SUPERVISOR_WORKER)
    assert _get(client, f"/api/v1/topology/{topology_id}/metrics", window=window) == page
    workers = _get(client, f"/api/v1/topology-workers/{topology_id}")
    assert workers["hostPortList"] == [{"host": "host-s1", "port": 6700}]


def test_component_pages(nimbus: Nimbus, state: ClusterState) -> None:
    topology_id, worker_id = running(nimbus, state)

    nimbus.umbilical.report_error(worker_id, {"topology_id": topology_id,
                                               "component": "word", "error": "boom"})
    client = api_client(nimbus)
    spout = _get(client, f"/api/v1/topology/{topology_id}/component/word")
    _has(spout, COMPONENT)
    assert spout["componentType"] == "spout"
    (error,) = spout["componentErrors"]
    _has(error, COMPONENT_ERROR)
    for row in spout["spoutSummary"]:
        _has(row, SPOUT_SUMMARY)
    for row in spout["outputStats"]:
        _has(row, SPOUT_OUTPUT)
    for row in spout["executorStats"]:
        _has(row, EXECUTOR + " completeLatency")

    bolt = _get(client, f"/api/v1/topology/{topology_id}/component/split", window="600")
    _has(bolt, COMPONENT)
    assert bolt["componentType"] == "bolt" and bolt["window"] == "600"
    for row in bolt["boltStats"]:
        _has(row, BOLT_STATS)
    for row in bolt["inputStats"]:
        _has(row, INPUT)
    for row in bolt["outputStats"]:
        _has(row, "stream emitted transferred")
    assert bolt["executorStats"], "one row per executor"
    for row in bolt["executorStats"]:
        _has(row, EXECUTOR + " executed executeLatency processLatency capacity")


def test_actions_answer_storm_s_shape(nimbus: Nimbus, state: ClusterState) -> None:
    topology_id, _ = running(nimbus, state)
    client = api_client(nimbus)
    headers = {"Authorization": "Bearer secret"}
    for op in ("deactivate", "activate"):
        response = client.post(f"/api/v1/topology/{topology_id}/{op}", headers=headers)
        assert response.json() == {"topologyOperation": op, "topologyId": topology_id,
                                   "status": "success"}
    response = client.post(f"/api/v1/topology/{topology_id}/rebalance/0", headers=headers,
                           json={"rebalanceOptions": {"executors": {"split": "2"}}})
    assert response.json() == {"topologyOperation": "rebalance", "topologyId": topology_id,
                               "status": "success"}
    response = client.post(f"/api/v1/topology/{topology_id}/kill/0", headers=headers)
    assert response.json() == {"topologyOperation": "kill", "topologyId": topology_id,
                               "status": "success"}
