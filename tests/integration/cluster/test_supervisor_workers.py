"""The supervisor and its workers on a real cluster.

A worker whose local heartbeat stops (SIGSTOP) is killed and relaunched; a supervisor killed with -9
leaves its worker running, and a new supervisor on the same local dir adopts it (no second worker)
and restarts it when it dies.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster, closed_after, wait_gone

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]

WORKER_TIMEOUT_SECS = 4


@pytest.fixture
def short_timeout_cluster(tmp_path: Path,
                          request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose supervisor gives up on a silent worker after a few seconds."""
    test_cluster = TestCluster(tmp_path, **{
        "supervisor.worker.timeout.secs": WORKER_TIMEOUT_SECS,
        "supervisor.worker.start.timeout.secs": 60,
        "supervisor.worker.shutdown.sleep.secs": 1})
    yield from closed_after(test_cluster, request)


def _submit_endless(cluster: TestCluster) -> dict[str, Any]:
    """Submit the exclamation topology (spout never stops); its worker record once it acks."""
    result = cluster.cli("submit", "examples/exclamation.py", "-c", "exclamation.count=0")
    assert result.returncode == 0, result.stderr + cluster.logs()
    record: dict[str, Any] = wait_for(lambda: _only_record(cluster), 30,
                                      message=f"worker launched\n{cluster.logs()}")
    wait_for(lambda: _local_acked(cluster, record) > 0, 60,
             message=f"the worker acks tuples\n{cluster.logs()}")
    return record


def _only_record(cluster: TestCluster) -> dict[str, Any] | None:
    records = cluster.worker_records()
    assert len(records) <= 1, f"one worker at most: {records}"
    return records[0] if records else None


def _local_acked(cluster: TestCluster, record: dict[str, Any]) -> int:
    beat = cluster.local_heartbeat(record) or {}
    if beat.get("time_secs", 0) < record["create_time"]:
        return 0  # the previous incarnation's
    components = (beat.get("stats") or {}).get("components") or {}
    return int((components.get("word") or {}).get("acked", 0))


def _beat_time(cluster: TestCluster, record: dict[str, Any]) -> float:
    return float((cluster.local_heartbeat(record) or {}).get("time_secs", 0.0))


def _replaced(cluster: TestCluster, old: dict[str, Any]) -> dict[str, Any] | None:
    record = _only_record(cluster)
    return record if record and record["pid"] != old["pid"] else None


def _supervisor_uptime(cluster: TestCluster) -> int:
    rows = cluster.get("/api/v1/supervisor/summary")["supervisors"]
    return int(rows[0]["uptimeSeconds"]) if len(rows) == 1 else 0


# slow (35 s): the silence rule is tested in tests/unit/cluster/supervisor/test_launcher.py
# and a dead worker's relaunch in test_workers.py::test_two_workers_share_the_executors_...
@pytest.mark.slow
def test_a_heartbeat_silent_worker_is_killed_and_relaunched(
        short_timeout_cluster: TestCluster) -> None:
    cluster = short_timeout_cluster
    cluster.start_nimbus()
    cluster.start_supervisor()
    first = _submit_endless(cluster)
    descendants = psutil.Process(first["pid"]).children(recursive=True)

    stopped_at = time.time()
    os.kill(first["pid"], signal.SIGSTOP)  # alive, but silent: a hung worker
    second = wait_for(lambda: _replaced(cluster, first), 60,
                      message=f"hung worker replaced\n{cluster.logs()}")
    assert time.time() - stopped_at >= WORKER_TIMEOUT_SECS - 1.5, "not before the timeout"
    assert second["worker_id"] == first["worker_id"], "same assignment, same worker id"
    wait_gone(first["pid"])
    wait_for(lambda: not any(_alive(p) for p in descendants), 30,
             message="the hung worker's executor processes are gone")
    log = (cluster.tmp / "supervisor.log").read_text()
    assert f"worker {first['worker_id']} (pid {first['pid']})" in log
    assert "is hung: no heartbeat for" in log and "supervisor.worker.timeout.secs=4" in log

    # the new worker heartbeats and the topology goes on processing
    wait_for(lambda: _local_acked(cluster, second) > 0, 60,
             message=f"the new worker acks tuples\n{cluster.logs()}")
    acked = _local_acked(cluster, second)
    wait_for(lambda: _local_acked(cluster, second) > acked, 30,
             message=f"the new worker keeps acking\n{cluster.logs()}")
    assert _replaced(cluster, first) == second, "replaced once"


# slow (CI budget, 34 s): the heartbeat-silent worker above keeps the supervisor relaunching
# its worker in make test
@pytest.mark.slow
def test_a_new_supervisor_adopts_the_running_worker_and_restarts_it_when_it_dies(
        cluster: TestCluster) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    record = _submit_endless(cluster)

    cluster.kill9("supervisor")
    killed_at = time.time()
    wait_for(lambda: _beat_time(cluster, record) > killed_at + 1, 30,
             message=f"the worker heartbeats without its supervisor\n{cluster.logs()}")
    assert _only_record(cluster) == record and psutil.pid_exists(record["pid"])

    cluster.start("supervisor", "supervisor2")  # same storm.local.dir, same supervisor id
    wait_for(lambda: "started with slots" in _log(cluster, "supervisor2"), 30,
             message=f"new supervisor up\n{cluster.logs()}")
    # several sync rounds (supervisor.monitor.frequency.secs=1), past the old session's
    # expiry (storm.zookeeper.session.timeout=5000): the worker stays as it is
    wait_for(lambda: time.time() > killed_at + 8 and _supervisor_uptime(cluster) >= 3, 30,
             message=f"new supervisor synced a few times\n{cluster.logs()}")
    assert _only_record(cluster) == record, "adopted: no second worker, same pid"
    assert "launched worker" not in _log(cluster, "supervisor2")
    before = _local_acked(cluster, record)
    wait_for(lambda: _local_acked(cluster, record) > before, 30,
             message=f"the adopted worker goes on\n{cluster.logs()}")
    (row,) = cluster.get("/api/v1/topology/summary")["topologies"]
    assert row["status"] == "ACTIVE"

    cluster.kill_worker(record)
    second = wait_for(lambda: _replaced(cluster, record), 30,
                      message=f"the new supervisor restarts the worker\n{cluster.logs()}")
    assert second["worker_id"] == record["worker_id"]
    died = f"worker {record['worker_id']} (pid {record['pid']}) of {record['topology_id']} died"
    assert died in _log(cluster, "supervisor2")
    wait_for(lambda: _beat_time(cluster, second) > second["create_time"], 30,
             message=f"the restarted worker heartbeats\n{cluster.logs()}")


def _log(cluster: TestCluster, name: str) -> str:
    path = cluster.tmp / f"{name}.log"
    return path.read_text(errors="replace") if path.exists() else ""


def _alive(process: psutil.Process) -> bool:
    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False
