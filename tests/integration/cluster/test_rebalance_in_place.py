"""``rebalance -n`` on a running two-worker topology keeps the executors that stay.

Real ZooKeeper, Nimbus, two supervisors (each its own folder), their workers and Spark
local mode, on loopback. The chaos topology (spout, 2 relays, 2 sinks) runs over two
workers; ``rebalance -n 1`` moves the other worker's executors into the driver's worker,
``rebalance -n 2`` moves two of them out again to a new worker. The driver's worker goes
on throughout (same worker id and process), and so does the spout's executor process (same
pid, as the workers' heartbeats report it): the spout never restarts from its source.
Every id is still acked exactly once, and the sinks saw every one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY, acks, sink_ids
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

COUNT = 3000
"""Ids: 50 s of stream at the spout's rate, so both rebalances happen mid-stream."""
SPOUT_GID = 0
"""The spout's executor (the only level-0 component)."""


def _acked(folder: Path) -> Counter[int]:
    return Counter(a["id"] for a in acks(folder))


def _hosting(cluster: TestCluster) -> dict[str, tuple[dict[str, Any], dict[int, int]]]:
    """Each live worker's record and its executors' pids, from its latest heartbeat."""
    found = {}
    for record in cluster.worker_records():
        beat = cluster.local_heartbeat(record) or {}
        if beat.get("time_secs", 0) < record["create_time"]:
            continue
        where = (beat.get("stats") or {}).get("endpoints") or {}
        found[record["worker_id"]] = (record, {int(g): int(w[3]) for g, w in where.items()})
    return found


def _settled(cluster: TestCluster, workers: int) -> dict[str, dict[int, int]] | None:
    """Executor pids per worker once ``workers`` workers host all 5 executors between them.

    Each worker hosts some (a new worker reports none until its executors run, while the
    one giving them up still reports them) and each executor runs in one worker only.
    """
    hosting = _hosting(cluster)
    pids = {wid: gids for wid, (_, gids) in hosting.items()}
    everything = sorted(g for gids in pids.values() for g in gids)
    settled = (len(pids) == workers and all(pids.values())
               and everything == list(range(5)))
    return pids if settled else None


def _rebalance(cluster: TestCluster, workers: int) -> None:
    done = cluster.cli("rebalance", "inplace", "-w", "0", "-n", str(workers))
    assert done.returncode == 0, done.stderr + cluster.logs()


def test_rebalance_n_keeps_the_staying_executors_and_counts_stay_exact(
        zk_cluster: TestCluster, tmp_path: Path) -> None:
    cluster = zk_cluster
    cluster.start_nimbus()
    cluster.start_supervisor()
    cluster.start_named_supervisor("supervisor2")
    results = tmp_path / "results"
    results.mkdir()
    submitted = cluster.cli("submit", str(TOPOLOGY), "--name", "inplace",
                            "-c", "topology.workers=2", "-c", f"chaos.dir={results}",
                            "-c", f"chaos.count={COUNT}",
                            "-c", "topology.message.timeout.secs=10",
                            "-c", "topology.executor.start.timeout.secs=20")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    two = wait_for(lambda: _settled(cluster, 2), 180,
                   message=f"two workers host the executors\n{cluster.logs()}")
    (driver,) = [wid for wid, gids in two.items() if SPOUT_GID in gids]
    spout_pid = two[driver][SPOUT_GID]
    driver_pid = _hosting(cluster)[driver][0]["pid"]
    wait_for(lambda: len(_acked(results)) >= 100, 90,
             message=f"ids acked through both workers\n{cluster.logs()}")

    _rebalance(cluster, 1)
    one = wait_for(lambda: _settled(cluster, 1), 180,
                   message=f"one worker hosts every executor\n{cluster.logs()}")
    assert list(one) == [driver], "the driver's worker stayed"
    assert one[driver][SPOUT_GID] == spout_pid, "the spout's executor kept running"
    kept = {g: p for g, p in two[driver].items()}
    assert {g: one[driver][g] for g in kept} == kept, "every staying executor kept its pid"
    before = len(_acked(results))
    wait_for(lambda: len(_acked(results)) >= before + 100, 120,
             message=f"ids acked on one worker\n{cluster.logs()}")

    _rebalance(cluster, 2)
    again = wait_for(lambda: _settled(cluster, 2), 180,
                     message=f"two workers host the executors again\n{cluster.logs()}")
    assert driver in again and again[driver][SPOUT_GID] == spout_pid
    assert len(again[driver]) == 3, f"the driver keeps its share of 5: {again}"
    assert {g: one[driver][g] for g in again[driver]} == again[driver], \
        "the executors the driver's worker kept did not restart"
    assert _hosting(cluster)[driver][0]["pid"] == driver_pid, "the driver's worker went on"

    wait_for(lambda: len(_acked(results)) == COUNT, 240,
             message=f"every id acked\n{cluster.logs()}")
    counts = _acked(results)
    assert set(counts) == set(range(COUNT))
    assert [i for i, n in counts.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(COUNT)), "ids the sinks never saw"
    assert {a["pid"] for a in acks(results)} == {spout_pid}, "one spout process committed"
