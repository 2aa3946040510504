"""``rebalance -e`` on a running two-worker topology regroups its executors in place.

Nimbus, a supervisor with two slots, its two workers and Spark local mode, on loopback
(embedded store). The chaos topology (spout, 2 relays, 2 sinks) runs over both workers;
``sparkstorm rebalance -e relay=1`` and then ``-e relay=2`` while the stream runs. Both
workers go on (same worker ids and processes), and so do the spout's and the sinks'
executor processes (same pids, as the workers' heartbeats report them): the driver switches
between windows, the other worker follows its plan (``engine.plan.regroup``), and every endpoint
reported carries the plan it belongs to. The REST pages and the driver's heartbeat show the
new counts. Every id is acked exactly once, the sinks saw every one, and only the first
spout process ever committed an id.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY, acks, sink_ids
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]

COUNT = 2400
"""Ids: 40 s of stream at the spout's rate, so both rebalances happen mid-stream."""
NAME = "across-e"


def _acked(folder: Path) -> Counter[int]:
    return Counter(a["id"] for a in acks(folder))


def _beats(cluster: TestCluster) -> dict[str, dict[str, Any]]:
    """Each live worker's latest heartbeat, by worker id."""
    found = {}
    for record in cluster.worker_records():
        beat = cluster.local_heartbeat(record) or {}
        if beat.get("time_secs", 0) >= record["create_time"]:
            found[record["worker_id"]] = beat
    return found


def _settled(cluster: TestCluster, tag: str, executors: int) -> dict[str, dict[int, int]] | None:
    """Executor pids per worker once two workers host ``executors`` under plan ``tag``.

    Every endpoint a worker reports carries the tag of its plan
    (``engine.plan.execution.plan_tag``).
    """
    pids: dict[str, dict[int, int]] = {}
    for worker_id, beat in _beats(cluster).items():
        where = (beat.get("stats") or {}).get("endpoints") or {}
        if any(len(w) < 5 or w[4] != tag for w in where.values()):
            return None
        pids[worker_id] = {int(g): int(w[3]) for g, w in where.items()}
    gids = sorted(g for mine in pids.values() for g in mine)
    ok = len(pids) == 2 and all(pids.values()) and gids == list(range(executors))
    return pids if ok else None


def _all_pids(pids: dict[str, dict[int, int]]) -> set[int]:
    return {pid for mine in pids.values() for pid in mine.values()}


def _bolt_executors(cluster: TestCluster, topology_id: str) -> dict[str, int]:
    detail = cluster.get(f"/api/v1/topology/{topology_id}")
    return {b["boltId"]: b["executors"] for b in detail["bolts"]}


def _rebalance(cluster: TestCluster, relay: int, results: Path) -> tuple[
        dict[str, dict[int, int]], float, float]:
    """``rebalance -e relay=N``; the pids, and seconds to the new plan and to new acks."""
    began = time.monotonic()
    done = cluster.cli("rebalance", NAME, "-w", "0", "-e", f"relay={relay}")
    assert done.returncode == 0, done.stderr + cluster.logs()
    tag = f"ids=1,relay={relay},sink=2"
    pids = wait_for(lambda: _settled(cluster, tag, 3 + relay), 180,
                    message=f"both workers under {tag}\n{cluster.logs()}")
    switched = time.monotonic() - began
    before = len(_acked(results))
    wait_for(lambda: len(_acked(results)) >= min(COUNT, before + 20), 120,
             message=f"ids acked after relay={relay}\n{cluster.logs()}")
    return pids, switched, time.monotonic() - began


def test_rebalance_e_on_two_workers_keeps_workers_and_staying_executors(
        cluster: TestCluster, tmp_path: Path) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    results = tmp_path / "results"
    results.mkdir()
    submitted = cluster.cli("submit", str(TOPOLOGY), "--name", NAME,
                            "-c", "topology.workers=2", "-c", f"chaos.dir={results}",
                            "-c", f"chaos.count={COUNT}",
                            "-c", "topology.message.timeout.secs=10",
                            "-c", "topology.executor.start.timeout.secs=20")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    topology_id = submitted.stdout.strip()
    five = wait_for(lambda: _settled(cluster, "ids=1,relay=2,sink=2", 5), 240,
                    message=f"two workers host the executors\n{cluster.logs()}")
    workers = sorted((r["worker_id"], r["pid"]) for r in cluster.worker_records())
    wait_for(lambda: len(_acked(results)) >= 100, 120,
             message=f"ids acked through both workers\n{cluster.logs()}")
    (spout_pid,) = {a["pid"] for a in acks(results)}
    # gids 0 spout, 1-2 relays, 3-4 sinks (level order): the spout and sinks stay
    staying = {pid for mine in five.values() for gid, pid in mine.items() if gid in (0, 3, 4)}
    assert spout_pid in staying

    four, down_plan, down_acks = _rebalance(cluster, 1, results)
    assert staying <= _all_pids(four), f"spout and sinks kept their processes: {five} {four}"
    assert _bolt_executors(cluster, topology_id) == {"relay": 1, "sink": 2}
    (driver_beat,) = [b for b in _beats(cluster).values()  # the spout's worker: gid 0
                      if "0" in ((b.get("stats") or {}).get("endpoints") or {})]
    assert driver_beat["stats"]["executor_counts"] == {"ids": 1, "relay": 1, "sink": 2}
    assert sorted((r["worker_id"], r["pid"]) for r in cluster.worker_records()) == workers, \
        "both workers went on"

    again, up_plan, up_acks = _rebalance(cluster, 2, results)
    assert staying <= _all_pids(again), f"spout and sinks kept theirs: {four} {again}"
    assert _bolt_executors(cluster, topology_id) == {"relay": 2, "sink": 2}
    assert sorted((r["worker_id"], r["pid"]) for r in cluster.worker_records()) == workers

    wait_for(lambda: len(_acked(results)) == COUNT, 300,
             message=f"every id acked\n{cluster.logs()}")
    counts = _acked(results)
    assert set(counts) == set(range(COUNT))
    assert [i for i, n in counts.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(COUNT)), "ids the sinks never saw"
    assert {a["pid"] for a in acks(results)} == {spout_pid}, "one spout process committed"
    print(f"rebalance -e on two workers: relay=1: new plan everywhere {down_plan:.1f} s, "
          f"20 more acks {down_acks:.1f} s; relay=2: {up_plan:.1f} s, {up_acks:.1f} s")
