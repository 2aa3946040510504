"""What Nimbus's UI API says under trouble and for operators.

The supervisor host filter, Storm's owner summary, a killed topology's links, health at a
glance, each process's resources and the log links (FastAPI's test client, no server, no
Spark).
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.nimbus.ui_progress import (
    health_with_troubles,
    progress_marks,
    trouble_fields,
)
from sparkstorm.cluster.store.cluster_state import ClusterState
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import api_client, heartbeat_stats, register, running
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK

RESOURCES = {"worker": {"pid": 10, "cpuPercent": 12.5, "memoryMb": 100.0},
             "executors": {"0": {"pid": 11, "cpuPercent": 30.0, "memoryMb": 40.0,
                                 "uptimeSecs": 3.2},
                           "1": {"pid": 12, "cpuPercent": 5.0, "memoryMb": 20.5}}}


def _beat(nimbus: Nimbus, topology_id: str, worker_id: str, **extra: Any) -> None:
    stats = {**heartbeat_stats(nimbus.clock()), "spark_ui_url": "http://h:4040", **extra}
    nimbus.umbilical.heartbeat(worker_id, {"topology_id": topology_id, "uptime_secs": 5,
                                            "stats": stats})


def _get(client: TestClient, path: str, **params: Any) -> Any:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.usefixtures("two_components")
def test_the_supervisor_host_filter_keeps_that_host_and_its_workers(
        nimbus: Nimbus, state: ClusterState) -> None:
    topology_id, _ = running(nimbus, state)  # its worker runs on s1 (host-s1)
    register(state, "s2", 6800)
    client = api_client(nimbus)
    one = _get(client, "/api/v1/supervisor", host="host-s1")
    assert [s["id"] for s in one["supervisors"]] == ["s1"]
    assert [(w["host"], w["topologyId"]) for w in one["workers"]] == [("host-s1", topology_id)]
    other = _get(client, "/api/v1/supervisor", host="host-s2")
    assert [s["id"] for s in other["supervisors"]] == ["s2"] and other["workers"] == []
    assert [s["id"] for s in _get(client, "/api/v1/supervisor", id="s2",
                                  host="host-s1")["supervisors"]] == ["s2"]  # id wins
    assert client.get("/api/v1/supervisor").json()["code"] == "BAD_REQUEST"
    # a worker's host is its supervisor's host name everywhere, not the supervisor id
    page = _get(client, f"/api/v1/topology/{topology_id}")
    assert [w["host"] for w in page["workers"]] == ["host-s1"]
    assert _get(client, f"/api/v1/topology-workers/{topology_id}")["hostPortList"] == \
        [{"host": "host-s1", "port": 6700}]


@pytest.mark.usefixtures("two_components")
def test_owner_resources_sum_each_owners_topologies(nimbus: Nimbus,
                                                    state: ClusterState) -> None:
    topology_id, worker_id = running(nimbus, state)
    _beat(nimbus, topology_id, worker_id, resources=RESOURCES)
    client = api_client(nimbus)
    (owner,) = _get(client, "/api/v1/owner-resources")["owners"]
    assert (owner["owner"], owner["totalTopologies"], owner["totalWorkers"],
            owner["totalExecutors"], owner["totalTasks"]) == ("", 1, 1, 2, 5)
    assert owner["totalMemoryUsage"] == pytest.approx(160.5)
    assert owner["totalCpuUsage"] == pytest.approx(47.5)
    nobody = _get(client, "/api/v1/owner-resources/nobody")
    assert nobody["owner"] == "nobody" and nobody["totalTopologies"] == 0
    assert nobody["topologies"] == []


@pytest.mark.usefixtures("two_components")
def test_resources_health_and_log_links_of_a_running_topology(nimbus: Nimbus,
                                                              state: ClusterState) -> None:
    topology_id, worker_id = running(nimbus, state)
    _beat(nimbus, topology_id, worker_id, resources=RESOURCES)
    client = api_client(nimbus)
    (row,) = _get(client, "/api/v1/topology/summary")["topologies"]
    # 9 acked and 1 failed in the last 10 minutes: 10 % of the trees failed
    assert row["health"] == {"window": "600", "acked": 9, "failed": 1, "failedShare": 0.1,
                             "errors": 0, "state": "failing", "troubles": []}
    assert row["sparkUiUrl"] == "http://h:4040"
    assert (row["cpuPercent"], row["memoryMb"]) == (47.5, 160.5)
    (worker,) = _get(client, f"/api/v1/topology/{topology_id}")["workers"]
    assert (worker["cpuPercent"], worker["memoryMb"]) == (47.5, 160.5)
    assert worker["processes"] == RESOURCES
    assert worker["workerLogLink"] == \
        f"/topology/{topology_id}/logs?worker={worker_id}&source=worker"
    (executor,) = _get(client, f"/api/v1/topology/{topology_id}/component/split")[
        "executorStats"]
    assert (executor["executorId"], executor["cpuPercent"], executor["memoryMb"]) == \
        ("0", 30.0, 40.0)
    # its own process's uptime (restarted 3 s ago), not the worker's 5 s
    assert (executor["uptimeSeconds"], executor["uptime"]) == (3, "3s")
    assert executor["workerLogLink"].endswith(f"worker={worker_id}&source=executor-0")


@pytest.mark.usefixtures("two_components")
def test_a_killed_topology_links_to_no_spark_ui(nimbus: Nimbus, state: ClusterState) -> None:
    topology_id, worker_id = running(nimbus, state)
    _beat(nimbus, topology_id, worker_id)
    client = api_client(nimbus)
    assert _get(client, f"/api/v1/topology/{topology_id}")["workers"][0]["sparkUiUrl"]
    nimbus.kill(topology_id, 30)
    page = _get(client, f"/api/v1/topology/{topology_id}")
    assert page["status"] == "KILLED"
    assert [w["sparkUiUrl"] for w in page["workers"]] == [None]
    assert _get(client, "/api/v1/topology/summary")["topologies"][0]["sparkUiUrl"] is None


@pytest.mark.usefixtures("two_components")
def test_reading_a_log_asks_its_worker_for_the_tail_at_the_next_heartbeat(
        nimbus: Nimbus, state: ClusterState) -> None:
    topology_id, worker_id = running(nimbus, state)
    client = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK)
    auth = {"Authorization": "Bearer secret"}
    beat = f"/api/v1/worker/{worker_id}/heartbeat"
    body = {"topology_id": topology_id, "stats": {}, "uptime_secs": 1}
    assert client.post(beat, json=body, headers=auth).json()["send_logs"] == []
    path = f"/api/v1/topology/{topology_id}/logs"
    assert client.get(path, params={"worker": worker_id}).status_code == 401  # token only
    first = client.get(path, params={"worker": worker_id, "source": "executor-1"},
                       headers=auth).json()
    assert first["text"] is None and (first["host"], first["port"]) == ("host-s1", 6700)
    assert client.post(beat, json=body, headers=auth).json()["send_logs"] == ["executor-1"]
    sent = client.post(f"/api/v1/worker/{worker_id}/logs", headers=auth, json={
        "topology_id": topology_id, "sources": {"worker": "worker",
                                                "executor-1": "executor 1 (word)"},
        "tails": {"executor-1": "INFO picky bolt says hello\n"}})
    assert sent.status_code == 200
    shown = client.get(path, params={"worker": worker_id, "source": "executor-1"},
                       headers=auth).json()
    assert shown["text"] == "INFO picky bolt says hello\n"
    assert shown["sources"] == {"worker": "worker", "executor-1": "executor 1 (word)"}
    refused = client.get(path, params={"worker": "nope"}, headers=auth).json()
    assert refused["code"] == "WORKER_NOT_ASSIGNED" and worker_id in refused["error"]
    bad = client.get(path, params={"worker": worker_id, "source": "../etc"}, headers=auth)
    assert bad.json()["code"] == "BAD_REQUEST"


@pytest.mark.usefixtures("two_components")
def test_log_levels_and_debug_sampling_reach_the_workers_heartbeat_answer(
        nimbus: Nimbus, state: ClusterState, clock: Any) -> None:
    topology_id, worker_id = running(nimbus, state)
    client = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK)
    auth = {"Authorization": "Bearer secret"}
    base = f"/api/v1/topology/{topology_id}"
    assert client.get(f"{base}/logconfig").json() == {"namedLoggerLevels": {}}
    body = {"namedLoggerLevels": {"sparkstorm.component.split": {"target_level": "DEBUG",
                                                                  "timeout": 60}}}
    assert client.post(f"{base}/logconfig", json=body).status_code == 401
    set_levels = client.post(f"{base}/logconfig", json=body, headers=auth).json()
    entry = set_levels["namedLoggerLevels"]["sparkstorm.component.split"]
    assert (entry["target_level"], entry["timeout"]) == ("DEBUG", 60)
    assert entry["timeout_epoch"] == clock.now + 60
    debug = client.post(f"{base}/component/split/debug/enable/25", headers=auth).json()
    assert debug["topologyOperation"] == "debug/enable"
    page = client.get(f"{base}/component/split").json()
    assert (page["debug"], page["samplingPct"]) == (True, 25.0)
    assert client.get(base).json()["debug"] is False  # the topology as a whole is not

    beat = client.post(f"/api/v1/worker/{worker_id}/heartbeat", headers=auth, json={
        "topology_id": topology_id, "stats": {}, "uptime_secs": 1}).json()
    assert beat["log_control"] == {"levels": {"sparkstorm.component.split": "DEBUG"},
                                   "sampling": {"split": 25.0}}
    clock.now += 61  # the level times out; sampling is switched off
    client.post(f"{base}/component/split/debug/disable/0", headers=auth)
    beat = client.post(f"/api/v1/worker/{worker_id}/heartbeat", headers=auth, json={
        "topology_id": topology_id, "stats": {}, "uptime_secs": 1}).json()
    assert beat["log_control"] == {"levels": {}, "sampling": {}}

    bad = client.post(f"{base}/logconfig", headers=auth, json={"namedLoggerLevels": {
        "x": {"target_level": "LOUD"}}})
    assert bad.json()["code"] == "BAD_REQUEST" and "LOUD" in bad.json()["error"]
    nope = client.post(f"{base}/component/nope/debug/enable/5", headers=auth)
    assert nope.json()["code"] == "COMPONENT_NOT_FOUND"
    assert client.post(f"{base}/debug/enable/0", headers=auth).json()["code"] == "BAD_REQUEST"


@pytest.mark.usefixtures("two_components")
def test_restarts_rollbacks_and_a_stall_are_told_with_when(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    topology_id, worker_id = running(nimbus, state)
    client = api_client(nimbus)

    def row() -> dict[str, Any]:
        (found,) = _get(client, "/api/v1/topology/summary")["topologies"]
        return dict(found)

    _beat(nimbus, topology_id, worker_id, windows=10, executor_restarts=0, rollbacks=0)
    assert row()["troubles"] == [] and row()["executorRestarts"] == 0
    clock.advance(5)
    cause = "1 executor process(es) died and restarted"  # the driver's TopologyStats says
    _beat(nimbus, topology_id, worker_id, windows=20, executor_restarts=1, rollbacks=1,
          rollback_cause=cause)
    clock.advance(7)
    _beat(nimbus, topology_id, worker_id, windows=30, executor_restarts=1, rollbacks=1,
          rollback_cause=cause)
    found = row()
    assert (found["executorRestarts"], found["lastExecutorRestartSecs"]) == (1, 7.0)
    assert (found["rollbacks"], found["lastRollbackSecs"]) == (1, 7.0)
    assert found["lastRollbackCause"] == cause
    assert found["troubles"][1].endswith(f"the last 7 s ago ({cause})")
    assert found["health"]["state"] == "failing", "a worse state is kept"
    assert [t.split(":")[0] for t in found["troubles"]] == ["executors restarting",
                                                            "rolled back"]

    clock.advance(45)  # heartbeats go on, windows do not: stalled
    _beat(nimbus, topology_id, worker_id, windows=30, executor_restarts=1, rollbacks=1)
    found = row()
    assert found["windowsIdleSecs"] == 45.0 and found["health"]["state"] == "stalled"
    assert found["troubles"][0] == "stalled: no window completed for 45 s"
    detail = _get(client, f"/api/v1/topology/{topology_id}")
    assert detail["troubles"] == found["troubles"]


def test_checkpoints_that_stop_committing_are_a_trouble() -> None:
    first = {"windows": 10, "committed_window": 8}
    first["progress"] = progress_marks({}, first, now=100.0)
    later: dict[str, Any] = {"windows": 40, "committed_window": 8}
    later["progress"] = progress_marks(first, later, now=160.0)  # windows go on, no commit
    fields = trouble_fields([later], 160.0, running=True, checkpoint_windows=5)
    assert (fields["checkpointAgeSecs"], fields["windowsSinceCommit"]) == (60.0, 30)
    assert fields["troubles"] == [
        "checkpoints not committing: 30 windows since the last commit (every 5)"]
    assert health_with_troubles({"state": "ok"}, fields["troubles"])["state"] == "recovering"
    fine = trouble_fields([{**later, "windows": 12}], 101.0, running=True,
                          checkpoint_windows=5)
    assert fine["troubles"] == []


def test_a_restarted_driver_is_flagged_as_statistics_reset() -> None:
    first: dict[str, Any] = {"windows": 500}
    first["progress"] = progress_marks({}, first, now=100.0)
    again: dict[str, Any] = {"windows": 3}
    again["progress"] = progress_marks(first, again, now=130.0)
    fields = trouble_fields([again], 140.0, running=True, checkpoint_windows=0)
    assert fields["statisticsResetSecs"] == 10.0
    assert fields["troubles"][0].startswith("statistics reset 10 s ago")


def test_the_watchdogs_last_step_is_a_trouble_while_recent() -> None:
    step = {"action": "new-session", "reason": "no window completed for 20 s, and the Spark "
            "application has no executor", "time_secs": 100.0}
    beat: dict[str, Any] = {"windows": 10, "watchdog": {"remedies": 1, "stalled": True,
                                                        "steps": [step]}}
    fields = trouble_fields([beat], 105.0, running=True, checkpoint_windows=0)
    assert fields["watchdogRemedies"] == 1
    assert fields["troubles"] == [
        "healing: the watchdog's remedy 'new-session' 5 s ago (no window completed for 20 s, "
        "and the Spark application has no executor)"]
    assert health_with_troubles({"state": "ok"}, fields["troubles"])["state"] == "recovering"
    healed = {"action": "healed", "reason": "windows complete again after 25 s without "
              "(remedies: new-session)", "time_secs": 110.0}
    beat["watchdog"] = {"remedies": 1, "stalled": False, "steps": [step, healed]}
    fields = trouble_fields([beat], 130.0, running=True, checkpoint_windows=0)
    assert fields["troubles"] == ["healed 20 s ago: windows complete again after 25 s "
                                  "without (remedies: new-session)"]
    assert trouble_fields([beat], 2000.0, running=False, checkpoint_windows=0)["troubles"] \
        == [], "not once it is old"


@pytest.mark.usefixtures("two_components")
def test_all_time_counts_survive_a_worker_restart_and_say_so(nimbus: Nimbus,
                                                             state: ClusterState) -> None:
    topology_id, worker_id = running(nimbus, state)
    _beat(nimbus, topology_id, worker_id, windows=5)  # 10 emitted by word so far
    started = nimbus.umbilical.state.get_worker_heartbeat(
        topology_id, worker_id).executor_stats["started"]
    # the worker restarts: no windows while its new driver starts, then it counts from zero
    nimbus.umbilical.heartbeat(worker_id, {"topology_id": topology_id, "uptime_secs": 1,
                                           "stats": {}})
    _beat(nimbus, topology_id, worker_id)
    _beat(nimbus, topology_id, worker_id, windows=2)  # carried once, not at every beat
    client = api_client(nimbus)

    def word(window: str | None = None) -> dict[str, Any]:
        params = {"window": window} if window else {}
        page = _get(client, f"/api/v1/topology/{topology_id}", **params)
        return dict(next(s for s in page["spouts"] if s["spoutId"] == "word"))

    # all time: the 10 before the restart and the 10 after; the last 10 minutes: only after
    assert (word()["emitted"], word()["acked"], word()["failed"]) == (20, 18, 2)
    assert (word("600")["emitted"], word("600")["acked"]) == (10, 9)
    component = _get(client, f"/api/v1/topology/{topology_id}/component/split")
    all_time = next(s for s in component["boltStats"] if s["window"] == ":all-time")
    assert all_time["executed"] == 20
    assert component["windowHint"] == \
        "All time (kept across 1 worker restart; executor rows since their process started)"
    assert component["statisticsResets"] == 1
    assert _get(client, f"/api/v1/topology/{topology_id}/component/split",
                window="600")["windowHint"] == "10m 0s (since the worker restart 0 s ago)"
    # and the page says which it is
    (row,) = _get(client, "/api/v1/topology/summary")["topologies"]
    page = _get(client, f"/api/v1/topology/{topology_id}")
    assert (page["statisticsResets"], page["allTimeSinceSecs"]) == (1, started)
    assert page["windowHint"] == "All time (kept across 1 worker restart)"
    assert _get(client, f"/api/v1/topology/{topology_id}", window="600")["windowHint"] == \
        "10m 0s (since the worker restart 0 s ago)"
    assert any(t.startswith("statistics reset 0 s ago") and "kept by Nimbus" in t
               for t in row["health"]["troubles"]), row["health"]


@pytest.mark.usefixtures("two_components")
def test_a_worker_silent_for_fifteen_seconds_is_lost_until_it_beats_again(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    topology_id, worker_id = running(nimbus, state)
    client = api_client(nimbus)
    _beat(nimbus, topology_id, worker_id, windows=5)
    clock.advance(15)  # fifteen heartbeat periods: not yet
    (row,) = _get(client, "/api/v1/topology/summary")["topologies"]
    assert row["workerStatus"] == "RUNNING"
    clock.advance(2)
    (row,) = _get(client, "/api/v1/topology/summary")["topologies"]
    assert row["workerStatus"] == "LOST"
    assert row["workerStatusDetail"].startswith(f"worker {worker_id} (port 6700) sent no "
                                                "heartbeat for 17 s"), row
    page = _get(client, f"/api/v1/topology/{topology_id}")
    assert [w["status"] for w in page["workers"]] == ["LOST"]
    _beat(nimbus, topology_id, worker_id, windows=6)
    assert _get(client, f"/api/v1/topology/{topology_id}")["workerStatus"] == "RUNNING"
