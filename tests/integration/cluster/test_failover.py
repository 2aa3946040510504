"""Fail-over on a real cluster with a real ZooKeeper.

Nimbus killed with -9 while a topology runs (the worker goes on, a new Nimbus resumes from the
store), and a supervisor lost with its worker (Nimbus moves the worker to the other supervisor after
the timeout).
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]


def _local_acked(cluster: TestCluster, record: dict[str, Any]) -> int:
    beat = cluster.local_heartbeat(record) or {}
    components = (beat.get("stats") or {}).get("components") or {}
    return int((components.get("word") or {}).get("acked", 0))


def _first_record(cluster: TestCluster) -> dict[str, Any] | None:
    records = cluster.worker_records()
    return records[0] if records else None


def _detail(cluster: TestCluster, topology_id: str) -> dict[str, Any]:
    return dict(cluster.get(f"/api/v1/topology/{topology_id}"))


def test_kill9_nimbus_the_worker_goes_on_and_a_new_nimbus_resumes(
        zk_cluster: TestCluster) -> None:
    cluster = zk_cluster
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = cluster.cli("submit", "examples/exclamation.py", "-c", "exclamation.count=0")
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    record = wait_for(lambda: _first_record(cluster), 30,
                      message=f"worker launched\n{cluster.logs()}")
    wait_for(lambda: _local_acked(cluster, record) > 0, 60,
             message=f"the worker acks tuples\n{cluster.logs()}")

    cluster.kill9("nimbus")
    at_kill = _local_acked(cluster, record)
    wait_for(lambda: _local_acked(cluster, record) > at_kill + 20, 30,
             message=f"the worker goes on without Nimbus\n{cluster.logs()}")
    assert cluster.worker_records() == [record], "same worker, same process"

    restarted_at = time.time()
    cluster.start_nimbus()
    rows = cluster.get("/api/v1/topology/summary")["topologies"]
    assert [(r["id"], r["name"], r["status"]) for r in rows] == [
        (topology_id, "exclamation", "ACTIVE")]
    listed = cluster.cli("list")
    assert listed.returncode == 0 and topology_id in listed.stdout, listed.stderr
    before = _local_acked(cluster, record)

    def heartbeats_resumed() -> bool:
        detail = _detail(cluster, topology_id)
        workers = detail["workers"]
        return bool(workers and workers[0]["workerId"] == record["worker_id"]
                    and (workers[0]["lastHeartbeatSecs"] or 0) > restarted_at
                    and detail["spouts"][0]["acked"] > before)

    wait_for(heartbeats_resumed, 30, message=f"heartbeats reach the new Nimbus\n{cluster.logs()}")
    assert cluster.worker_records() == [record], "the new Nimbus kept the worker where it was"


# make test-all only: test_worker_moved_checkpoints (make test) loses a supervisor with its
# worker too and checks the move (not before nimbus.task.timeout.secs) and the run after it
@pytest.mark.slow
def test_a_lost_supervisor_s_worker_moves_to_the_other_supervisor(
        zk_cluster: TestCluster) -> None:
    cluster = zk_cluster
    cluster.start_nimbus()
    ports = {"sup-a": 6700, "sup-b": 6710}
    ids = {cluster.start_named_supervisor(name, **{"supervisor.slots.ports": [port]}): name
           for name, port in ports.items()}
    result = cluster.cli("submit", "examples/exclamation.py", "-c", "exclamation.count=40")
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    record = wait_for(lambda: _first_record(cluster), 30,
                      message=f"worker launched\n{cluster.logs()}")
    wait_for(lambda: _local_acked(cluster, record) > 0, 60,
             message=f"the first worker acks tuples\n{cluster.logs()}")
    first = _detail(cluster, topology_id)["workers"][0]
    lost, other = first["supervisorId"], next(i for i in ids if i != first["supervisorId"])
    assert record in cluster.worker_records(ids[lost])

    cluster.kill9(ids[lost])  # the node is lost: its supervisor and its worker
    cluster.kill_worker(record)
    lost_at = time.monotonic()

    def moved() -> bool:
        workers = _detail(cluster, topology_id)["workers"]
        return bool(workers and workers[0]["supervisorId"] == other
                    and workers[0]["port"] == ports[ids[other]])

    wait_for(moved, 30, message=f"assignment moved to {ids[other]}\n{cluster.logs()}")
    # not before nimbus.task.timeout.secs (10) of silence; the last heartbeat may be up to
    # a heartbeat interval (1 s) older than the kill
    assert time.monotonic() - lost_at >= 10 - 1.5, "moved before the heartbeat timeout"
    wait_for(lambda: cluster.worker_records(ids[other]), 30,
             message=f"{ids[other]} launched the worker\n{cluster.logs()}")
    new = cluster.worker_records(ids[other])[0]
    assert new["worker_id"] != record["worker_id"]

    def resumed() -> bool:
        detail = _detail(cluster, topology_id)
        return bool(detail["workers"][0]["workerId"] == new["worker_id"]
                    and detail["spouts"][0]["acked"] == 40)

    wait_for(resumed, 60, message=f"processing resumed on {ids[other]}\n{cluster.logs()}")
    assert os.path.isdir(cluster.supervisor_dirs[ids[other]] / "supervisor" / "stormdist"
                         / topology_id)
    supervisors = {s["id"] for s in cluster.get("/api/v1/supervisor/summary")["supervisors"]}
    assert supervisors == {other}
