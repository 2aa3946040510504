"""Rebalance on a real cluster.

``sparkstorm rebalance`` changes a component's executors, the worker is replaced by one that runs
the new count, and the counts stay exact; a count above the task count is refused and changes
nothing.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]

COUNT = 30


def _detail(cluster: TestCluster, topology_id: str) -> dict[str, Any]:
    return dict(cluster.get(f"/api/v1/topology/{topology_id}"))


def _executors(detail: dict[str, Any]) -> dict[str, int]:
    return {b["boltId"]: b["executors"] for b in detail["bolts"]}


def test_rebalance_restarts_the_worker_with_the_new_executors_and_exact_counts(
        cluster: TestCluster) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = cluster.cli("submit", "examples/exclamation.py",
                         "-c", f"exclamation.count={COUNT}")
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    wait_for(lambda: _detail(cluster, topology_id)["spouts"][0]["acked"] == COUNT, 60,
             message=f"{COUNT} acked\n{cluster.logs()}")
    detail = _detail(cluster, topology_id)
    assert _executors(detail) == {"exclaim1": 2, "exclaim2": 2}
    (first,) = cluster.worker_records()

    refused = cluster.request("POST", f"/api/v1/topology/{topology_id}/rebalance/0",
                              json={"rebalanceOptions": {"executors": {"exclaim2": 3}}})
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == "PARALLELISM_ABOVE_TASKS"
    bad_cli = cluster.cli("rebalance", "exclamation", "-w", "0", "-e", "exclaim1=3")
    assert bad_cli.returncode == 2 and "at most 2 executors" in bad_cli.stderr, bad_cli.stderr
    assert cluster.get("/api/v1/topology/summary")["topologies"][0]["status"] == "ACTIVE"
    assert cluster.worker_records() == [first]

    rebalanced_at = time.time()
    done = cluster.cli("rebalance", "exclamation", "-w", "2", "-e", "exclaim1=1")
    assert done.returncode == 0, done.stderr
    row = cluster.get("/api/v1/topology/summary")["topologies"][0]
    assert row["status"] == "REBALANCING", "spouts pause during the wait"

    def replaced() -> dict[str, Any] | None:
        records = cluster.worker_records()
        return records[0] if len(records) == 1 and records[0] != first else None

    second = wait_for(replaced, 30, message=f"worker replaced\n{cluster.logs()}")
    assert second["worker_id"] != first["worker_id"]

    def exact_on_the_new_worker() -> bool:
        detail = _detail(cluster, topology_id)
        workers = detail["workers"]
        return bool(workers and workers[0]["workerId"] == second["worker_id"]
                    and (workers[0]["lastHeartbeatSecs"] or 0) > rebalanced_at
                    and detail["spouts"][0]["acked"] == COUNT)

    wait_for(exact_on_the_new_worker, 60, message=f"{COUNT} acked again\n{cluster.logs()}")
    detail = _detail(cluster, topology_id)
    assert detail["status"] == "ACTIVE"
    assert _executors(detail) == {"exclaim1": 1, "exclaim2": 2}
    assert detail["executorsTotal"] == 4
    bolts = {b["boltId"]: b for b in detail["bolts"]}
    assert bolts["exclaim2"]["executed"] == COUNT and bolts["exclaim1"]["executed"] == COUNT
    # and it stays there: one more heartbeat later, still exactly COUNT
    wait_for(lambda: _detail(cluster, topology_id)["workers"][0]["lastHeartbeatSecs"]
             > time.time() - 0.5, 10, message="one more heartbeat")
    assert _detail(cluster, topology_id)["spouts"][0]["acked"] == COUNT
