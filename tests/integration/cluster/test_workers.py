"""A topology spread over two worker processes (``topology.workers: 2``).

Nimbus, two supervisors (each its own folder) and their workers run as real processes on
loopback. One worker runs the driver (and its share of the executors), the other hosts the
rest and reports where they answer; the driver calls them there. Killing the hosting
worker with -9 makes its supervisor start it again with new addresses: the driver calls
the new ones, and every id is still acked exactly once.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import COUNT, TOPOLOGY, acks
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def _acks(folder: Path) -> Counter[int]:
    return Counter(a["id"] for a in acks(folder))


def _beats(cluster: TestCluster) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each worker's record and its latest local heartbeat (of this incarnation)."""
    found = []
    for record in cluster.worker_records():
        beat = cluster.local_heartbeat(record) or {}
        if beat.get("time_secs", 0) >= record["create_time"]:
            found.append((record, beat))
    return found


def _roles(cluster: TestCluster) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(driver's record, executor host's record) once both report their executors."""
    driver = host = None
    for record, beat in _beats(cluster):
        stats = beat.get("stats") or {}
        if not stats.get("endpoints"):
            continue
        if stats.get("windows"):
            driver = record
        else:
            host = record
    return (driver, host) if driver and host else None


def test_two_workers_share_the_executors_and_survive_a_kill(zk_cluster: TestCluster,
                                                            tmp_path: Path) -> None:
    cluster = zk_cluster
    cluster.start_nimbus()
    cluster.start_supervisor()
    cluster.start_named_supervisor("supervisor2")
    results = tmp_path / "results"
    results.mkdir()
    submitted = cluster.cli("submit", str(TOPOLOGY), "--name", "spread",
                            "-c", "topology.workers=2", "-c", f"chaos.dir={results}",
                            "-c", f"chaos.count={COUNT}")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    driver, host = wait_for(lambda: _roles(cluster), 120,
                            message=f"a driver and an executor host run\n{cluster.logs()}")
    assert driver["worker_id"] != host["worker_id"]
    hosted = {int(g) for _, beat in _beats(cluster)
              for g in (beat.get("stats") or {}).get("endpoints", {})}
    wait_for(lambda: len(_acks(results)) >= 100, 60,
             message=f"ids acked through both workers\n{cluster.logs()}")
    assert len(hosted) == 5, f"the 5 executors (1 spout, 2 relays, 2 sinks): {hosted}"
    topology_id = cluster.get("/api/v1/topology/summary")["topologies"][0]["id"]
    wait_for(lambda: cluster.get(f"/api/v1/topology/{topology_id}")["workerStatus"]
             == "RUNNING", 30, message="both workers serve: the topology's workers RUNNING")

    cluster.kill_worker(host)
    wait_for(lambda: (r := _roles(cluster)) and r[1]["pid"] != host["pid"], 120,
             message=f"the executor host restarted and reported again\n{cluster.logs()}")
    wait_for(lambda: len(_acks(results)) == COUNT, 180,
             message=f"every id acked after the restart\n{cluster.logs()}")
    acks = _acks(results)
    assert set(acks) == set(range(COUNT))
    assert [i for i, n in acks.items() if n > 1] == [], "ids acked twice"
