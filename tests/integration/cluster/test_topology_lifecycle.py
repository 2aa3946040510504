"""A topology's life on a real cluster: submit through the CLI, run, kill.

A killed worker comes back. Nimbus, the supervisors and the worker are real processes, the state
lives in a real ZooKeeper (or the embedded store, for ``sparkstorm cluster``); Spark is local[2].
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import httpx
import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster, wait_gone

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]


def _topology(cluster: TestCluster, name: str) -> dict[str, Any] | None:
    rows = cluster.get("/api/v1/topology/summary")["topologies"]
    return next((row for row in rows if row["name"] == name), None)


def _spout_acked(cluster: TestCluster, topology_id: str) -> int:
    spouts = cluster.get(f"/api/v1/topology/{topology_id}")["spouts"]
    return int(spouts[0]["acked"])


def _submit_exclamation(cluster: TestCluster, supervisors: int = 1) -> str:
    cluster.start_nimbus()
    if supervisors == 1:
        cluster.start_supervisor()
    for index in range(supervisors if supervisors > 1 else 0):  # own dirs and ports
        cluster.start_named_supervisor(f"sup-{index}",
                                       **{"supervisor.slots.ports": [6700 + 10 * index]})
    result = cluster.cli("submit", "examples/exclamation.py", "-c", "exclamation.count=50")
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    assert topology_id.startswith("exclamation-1-")
    return topology_id


def test_submit_runs_to_50_acked_then_kill_removes_everything(zk_cluster: TestCluster) -> None:
    """Nimbus, two supervisors and a real ZooKeeper."""
    cluster = zk_cluster
    topology_id = _submit_exclamation(cluster, supervisors=2)
    listed = cluster.cli("list")
    assert "exclamation" in listed.stdout and topology_id in listed.stdout, listed.stderr
    row = _topology(cluster, "exclamation")
    assert row is not None and row["id"] == topology_id and row["status"] == "ACTIVE"

    wait_for(lambda: _spout_acked(cluster, topology_id) == 50, 90,
             message=f"50 acked at the spout\n{cluster.logs()}")
    detail = cluster.get(f"/api/v1/topology/{topology_id}")
    assert [b["boltId"] for b in detail["bolts"]] == ["exclaim1", "exclaim2"]
    assert detail["bolts"][1]["executed"] == 50 and detail["topologyStats"][0]["acked"] == 50
    assert detail["workers"][0]["topologyId"] == topology_id
    summary = cluster.get("/api/v1/cluster/summary")
    assert summary["topologies"] == 1 and summary["slotsUsed"] == 1
    assert summary["supervisors"] == 2 and summary["slotsTotal"] == 2
    worker_pid = cluster.worker_records()[0]["pid"]
    worker_id = cluster.worker_records()[0]["worker_id"]
    _stack_traces_of_worker_and_executors(cluster, topology_id, detail["executorsTotal"])

    killed = cluster.cli("kill", "exclamation", "-w", "0")
    assert killed.returncode == 0, killed.stderr
    wait_for(lambda: _topology(cluster, "exclamation") is None, 30, message="topology gone")
    assert "No topologies running" in cluster.cli("list").stdout
    wait_gone(worker_pid)
    wait_for(lambda: not cluster.worker_records(), 30, message="worker record removed")
    _killed_topologys_log_is_read_through_nimbus(cluster, topology_id, worker_id)
    assert not any((cluster.local / "nimbus" / "stormdist").iterdir())
    for local in cluster.supervisor_dirs.values():  # the supervisors dropped its code too
        code = local / "supervisor" / "stormdist"
        wait_for(lambda code=code: not code.exists() or not any(code.iterdir()), 30,
                 message=f"supervisor code removed from {code}")


def _killed_topologys_log_is_read_through_nimbus(cluster: TestCluster, topology_id: str,
                                                 worker_id: str) -> None:
    """After the kill the worker's logs are kept: Nimbus lists, reads and searches them."""
    files = cluster.request("GET", f"/api/v1/topology/{topology_id}/logfiles")
    assert files.status_code == 200, files.text
    kept = {(f["workerId"], f["file"]): f for f in files.json()["files"]}
    entry = kept.get((worker_id, "worker.log"))
    assert entry is not None and entry["live"] is False and entry["size"] > 0, kept
    line = f"worker {worker_id} runs topology {topology_id}"
    read = cluster.request("GET", f"/api/v1/topology/{topology_id}/logfile",
                           params={"worker": worker_id, "file": "worker.log", "start": 0})
    assert read.status_code == 200, read.text
    assert line in read.json()["data"] and read.json()["live"] is False
    found = cluster.request("GET", f"/api/v1/topology/{topology_id}/logsearch",
                            params={"search": line})
    assert found.status_code == 200, found.text
    assert [(f["workerId"], f["file"], len(f["matches"])) for f in found.json()["files"]
            if f["matches"]] == [(worker_id, "worker.log", 1)], found.json()


def _stack_traces_of_worker_and_executors(cluster: TestCluster, topology_id: str,
                                          executors: int) -> None:
    """Apex's stack trace request, token required.

    Through the heartbeat answer to the worker, which sends its threads and every executor's.
    """
    path = f"/api/v1/topology/{topology_id}/stacktrace"
    assert cluster.request("POST", path, token=None).status_code == 401
    requested = cluster.request("POST", path)
    assert requested.status_code == 200 and requested.json()["workers"] == 1, requested.text

    def stacks() -> str | None:
        workers = cluster.request("GET", path).json()["workers"]
        return str(workers[0]["stacks"]) if workers else None

    text = wait_for(stacks, 30, message=f"stack traces\n{cluster.logs()}")
    assert 'Thread "worker-heartbeat"' in text, text[:2000]
    assert text.count("=== executor ") == executors, text[:2000]
    assert text.count("executor/main.py") >= executors, "every executor answers " + text
    assert cluster.request("GET", path, token=None).status_code == 401


# a restarted worker needs a while (Spark, executors) before its first heartbeat: Nimbus
# must not take that gap for a silent worker and move it
# make test-all only: test_checkpoint_recovery (make test) kills the worker with -9 too and
# checks that its supervisor restarts it in its slot, same worker id, and that it runs on
@pytest.mark.slow
@pytest.mark.parametrize("zk_cluster", [{"nimbus.task.timeout.secs": 30}], indirect=True)
def test_a_killed_worker_is_restarted_by_its_supervisor(zk_cluster: TestCluster) -> None:
    """The worker's own supervisor restarts it in the same slot.

    Nimbus, two supervisors and a real ZooKeeper: a dead process is not a silent worker, so Nimbus
    does not move it.
    """
    cluster = zk_cluster
    topology_id = _submit_exclamation(cluster, supervisors=2)
    wait_for(lambda: _spout_acked(cluster, topology_id) == 50, 90,
             message=f"50 acked at the spout\n{cluster.logs()}")
    (first,) = cluster.worker_records()
    (home,) = [name for name in cluster.supervisor_dirs if cluster.worker_records(name)]

    killed_at = time.time()
    os.kill(first["pid"], signal.SIGKILL)

    def restarted() -> dict[str, Any] | None:
        records = cluster.worker_records(home)
        return records[0] if records and records[0]["pid"] != first["pid"] else None

    second = wait_for(restarted, 30, message=f"worker relaunched\n{cluster.logs()}")
    assert second["worker_id"] == first["worker_id"], "same assignment, same worker id"
    def fresh_and_done() -> bool:
        # the new worker's own heartbeats (its statistics start from zero) show 50 again
        detail = cluster.get(f"/api/v1/topology/{topology_id}")
        return (detail["workers"][0]["lastHeartbeatSecs"] > killed_at
                and detail["spouts"][0]["acked"] == 50)

    wait_for(fresh_and_done, 90, message=f"the restarted worker runs\n{cluster.logs()}")
    wait_gone(first["pid"])
    assert cluster.worker_records() == [second], "no second worker anywhere"


def test_cluster_command_activate_deactivate_and_stop_takes_the_workers(
        cluster: TestCluster) -> None:
    cluster.start_cluster()
    result = cluster.cli("submit", "examples/exclamation.py", "--name", "exc",
                         "-c", "exclamation.count=30", "--inactive")
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    assert _topology(cluster, "exc")["status"] == "INACTIVE"  # type: ignore[index]
    wait_for(cluster.worker_records, 30, message="worker launched")
    assert cluster.cli("activate", "exc").returncode == 0
    wait_for(lambda: _spout_acked(cluster, topology_id) == 30, 90,
             message=f"30 acked after activation\n{cluster.logs()}")
    assert cluster.cli("deactivate", "exc").returncode == 0
    assert _topology(cluster, "exc")["status"] == "INACTIVE"  # type: ignore[index]
    worker_pid = cluster.worker_records()[0]["pid"]
    ui = f"https://127.0.0.1:{cluster.ui_port}"  # TLS is on by default in cluster mode
    page = httpx.get(f"{ui}/", timeout=10, verify=cluster.verify)
    assert page.status_code == 200 and "exc" in httpx.get(
        f"{ui}/api/v1/topology/summary", timeout=10, verify=cluster.verify).text, \
        "sparkstorm cluster also serves the web UI"
    with pytest.raises(httpx.HTTPError):  # nothing in clear
        httpx.get(f"http://127.0.0.1:{cluster.ui_port}/", timeout=10)
    printed = (cluster.tmp / "cluster.log").read_text()
    assert f"UI {ui}" in printed, "where the UI is, printed"
    assert "supervisor/workers/<worker id>/worker.log" in printed, "where worker logs are"

    cluster.daemons["cluster"].send_signal(signal.SIGTERM)
    assert cluster.daemons["cluster"].wait(60) == 0, cluster.logs()
    wait_gone(worker_pid)
