"""A worker whose supervisor is lost moves to the other one; the topology rolls back.

The one-machine twin of ``tests/integration/hosts/test_host_loss.py``'s checkpoints case
(which needs root for its network namespaces and runs in ``make test-all``): a topology on
two workers under two supervisors, with checkpoints on. The supervisor of the worker that
does not run the driver is killed with -9, with that worker and its executors (a lost
host). Nimbus moves the worker to the other supervisor after ``nimbus.task.timeout.secs``;
the driver learns the new addresses and process ids, cancels the window that still calls
the old ones and rolls every executor back to the committed checkpoint, the moved ones at
their new addresses. ``topology.executor.start.timeout.secs`` is longer than the test
waits: a window left to call the lost executors until then (the stall this test guards
against) fails it. The waits are long because a loaded machine starts Spark slowly (100 s
seen at a load average of 40 on 2 cores); unloaded, the test takes about a minute.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.checkpoint import CheckpointStore
from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY, acks, sink_ids
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]

STALL_SECS = 900
"""``topology.executor.start.timeout.secs`` here: how long a stale call would retry."""
COUNT, PENDING = 1500, 100
"""Ids, and ``topology.max.spout.pending``: the stream is bound by windows, not by the
spout's clock (a slow start must not let every id be acked before the kill)."""


def _workers(cluster: TestCluster, supervisor: str) -> list[dict[str, Any]]:
    """``supervisor``'s running workers: record and this incarnation's local heartbeat."""
    found = []
    for record in cluster.worker_records(supervisor):
        beat = cluster.local_heartbeat(record) or {}
        if beat.get("time_secs", 0) >= record["create_time"]:
            found.append({"record": record, "stats": beat.get("stats") or {}})
    return found


def _placement(cluster: TestCluster) -> dict[str, str] | None:
    """Which supervisor runs the driver and which the other worker, once both report."""
    roles = {}
    for supervisor in ("supervisor", "supervisor2"):
        for worker in _workers(cluster, supervisor):
            if worker["stats"].get("endpoints"):
                roles["driver" if worker["stats"].get("windows") else "host"] = supervisor
    return roles if len(roles) == 2 and roles["driver"] != roles["host"] else None


def _acked(results: Path) -> Counter[int]:
    return Counter(a["id"] for a in acks(results))


# slow (CI budget, 41 s): test_checkpoint_recovery keeps a restore from the committed checkpoint
# in make test, and the hosts' host-loss scenario a move off a lost host
@pytest.mark.slow
def test_a_worker_moved_off_a_lost_supervisor_restores_from_the_checkpoint(
        zk_cluster: TestCluster, tmp_path: Path) -> None:
    cluster = zk_cluster
    cluster.start_nimbus()
    cluster.start_supervisor()
    cluster.start_named_supervisor("supervisor2")
    results = tmp_path / "results"
    results.mkdir()
    submitted = cluster.cli(
        "submit", str(TOPOLOGY), "--name", "moved", "-c", "topology.workers=2",
        "-c", f"chaos.dir={results}", "-c", f"chaos.count={COUNT}",
        "-c", "topology.checkpoint.windows=3", "-c", f"topology.checkpoint.dir={tmp_path / 'cp'}",
        "-c", f"topology.executor.start.timeout.secs={STALL_SECS}",
        "-c", f"topology.max.spout.pending={PENDING}")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    topology_id = submitted.stdout.strip().splitlines()[-1]
    roles = wait_for(lambda: _placement(cluster), 300,
                     message=f"a driver and an executor host\n{cluster.logs()}")
    store = CheckpointStore(str(tmp_path / "cp"), topology_id)
    wait_for(lambda: store.latest_committed() is not None and len(_acked(results)) >= 100, 180,
             message=f"a committed checkpoint and ids acked\n{cluster.logs()}")

    assert len(_acked(results)) < COUNT / 2, "ids are still to come when the host is lost"
    (lost,) = _workers(cluster, roles["host"])
    (driver,) = _workers(cluster, roles["driver"])
    cluster.kill9(roles["host"])
    cluster.kill_worker(lost["record"])
    lost_at = time.monotonic()
    moved = wait_for(lambda: [w for w in _workers(cluster, roles["driver"])
                              if w["record"]["pid"] != driver["record"]["pid"]
                              and w["stats"].get("endpoints")], 180,
                     message=f"the worker moved to {roles['driver']}\n{cluster.logs()}")
    # not before nimbus.task.timeout.secs (10) of silence; the last heartbeat may be up to
    # a heartbeat interval (1 s) older than the kill
    assert time.monotonic() - lost_at >= 10 - 1.5, "moved before the heartbeat timeout"
    assert {int(g) for g in moved[0]["stats"]["endpoints"]} == {
        int(g) for g in lost["stats"]["endpoints"]}, "the lost worker's executors moved"

    wait_for(lambda: len(_acked(results)) >= COUNT, 300,
             message=f"every id acked after the move\n{cluster.logs()}")
    counts = _acked(results)
    assert set(counts) == set(range(COUNT))
    assert [i for i, n in counts.items() if n > 1] == [], "ids committed twice"
    assert sink_ids(results) >= set(range(COUNT)), "ids the sink never saw"
    (after,) = [w for w in _workers(cluster, roles["driver"])
                if w["record"]["pid"] == driver["record"]["pid"]]
    assert after["stats"]["rollbacks"] >= 1, "rolled back to the checkpoint, not replayed"
