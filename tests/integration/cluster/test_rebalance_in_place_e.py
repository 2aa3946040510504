"""``rebalance -e`` on a running one-worker topology regroups its executors in place.

Nimbus, a supervisor, the worker and Spark local mode, on loopback (embedded store). The
chaos topology (spout, 2 relays, 2 sinks chained to them) runs in one worker; ``sparkstorm
rebalance -e relay=1`` and then ``-e relay=2`` while the stream runs. The worker goes on
(same worker id and process), and so do the spout's and the sinks' executor processes (same
pids, as the worker's heartbeats report them): the spout never restarts from its source.
The REST pages show the new counts. Every id is acked exactly once, the sinks saw every one,
and only the first spout process ever committed an id.
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

COUNT = 3000
"""Ids: 50 s of stream at the spout's rate, so both rebalances happen mid-stream."""


def _acked(folder: Path) -> Counter[int]:
    return Counter(a["id"] for a in acks(folder))


def _pids(cluster: TestCluster, record: dict[str, Any]) -> dict[int, int]:
    """The worker's executors (gid) and their pids, from its latest heartbeat."""
    beat = cluster.local_heartbeat(record) or {}
    where = (beat.get("stats") or {}).get("endpoints") or {}
    return {int(g): int(w[3]) for g, w in where.items()}


def _executors(cluster: TestCluster, topology_id: str) -> dict[str, int]:
    detail = cluster.get(f"/api/v1/topology/{topology_id}")
    return {b["boltId"]: b["executors"] for b in detail["bolts"]}


def _rebalance(cluster: TestCluster, record: dict[str, Any], relay: int, total: int,
               results: Path) -> float:
    """``rebalance -e relay=N``; seconds until the worker reports the regrouped executors."""
    began = time.monotonic()
    done = cluster.cli("rebalance", "inplace-e", "-w", "0", "-e", f"relay={relay}")
    assert done.returncode == 0, done.stderr + cluster.logs()
    wait_for(lambda: len(_pids(cluster, record)) == total, 180,
             message=f"{total} executors after relay={relay}\n{cluster.logs()}")
    took = time.monotonic() - began
    before = len(_acked(results))
    wait_for(lambda: len(_acked(results)) >= min(COUNT, before + 100), 180,
             message=f"ids acked after relay={relay}\n{cluster.logs()}")
    return took


def test_rebalance_e_keeps_unchanged_executors_and_counts_stay_exact(
        cluster: TestCluster, tmp_path: Path) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    results = tmp_path / "results"
    results.mkdir()
    submitted = cluster.cli("submit", str(TOPOLOGY), "--name", "inplace-e",
                            "-c", f"chaos.dir={results}", "-c", f"chaos.count={COUNT}",
                            "-c", "topology.message.timeout.secs=10")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    topology_id = submitted.stdout.strip()
    (record,) = wait_for(cluster.worker_records, 120, message="the worker")
    five = wait_for(lambda: len(_pids(cluster, record)) == 5 and _pids(cluster, record), 240,
                    message=f"five executors\n{cluster.logs()}")
    wait_for(lambda: len(_acked(results)) >= 100, 240,
             message=f"ids acked\n{cluster.logs()}")
    spout_pid = {a["pid"] for a in acks(results)}
    (spout_pid_value,) = spout_pid
    assert spout_pid_value in five.values()
    staying = set(five.values())  # the spout's and the sinks' pids are among them

    down = _rebalance(cluster, record, 1, 4, results)
    four = _pids(cluster, record)
    assert _executors(cluster, topology_id) == {"relay": 1, "sink": 2}
    assert cluster.worker_records() == [record], "the worker stayed"
    assert spout_pid_value in four.values(), "the spout's executor kept its process"
    assert len(staying & set(four.values())) == 3, f"spout and sinks kept theirs: {five} {four}"

    up = _rebalance(cluster, record, 2, 5, results)
    again = _pids(cluster, record)
    assert _executors(cluster, topology_id) == {"relay": 2, "sink": 2}
    assert spout_pid_value in again.values()
    assert len(staying & set(again.values())) == 3, f"spout and sinks kept theirs: {again}"
    assert cluster.worker_records() == [record], "the worker went on"

    wait_for(lambda: len(_acked(results)) == COUNT, 300,
             message=f"every id acked\n{cluster.logs()}")
    counts = _acked(results)
    assert set(counts) == set(range(COUNT))
    assert [i for i, n in counts.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(COUNT)), "ids the sinks never saw"
    assert {a["pid"] for a in acks(results)} == spout_pid, "one spout process committed"
    print(f"rebalance -e to the regrouped executors reported: down {down:.1f} s, "
          f"up {up:.1f} s")
