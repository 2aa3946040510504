"""Rebalance on a real cluster.

``sparkstorm rebalance -e`` changes a component's executors in place: the topology's one worker
stays (same worker id and process) and its driver regroups the component's tasks
(``engine.plan.regroup``); the pages show the new count and the counts stay exact. A count above the
task count is refused and changes nothing.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(400)]

COUNT = 30


def _detail(cluster: TestCluster, topology_id: str) -> dict[str, Any]:
    return dict(cluster.get(f"/api/v1/topology/{topology_id}"))


def _executors(detail: dict[str, Any]) -> dict[str, int]:
    return {b["boltId"]: b["executors"] for b in detail["bolts"]}


def _executor_pids(cluster: TestCluster, record: dict[str, Any]) -> dict[int, int]:
    """The worker's executors and their pids, as its latest heartbeat reports them."""
    beat = cluster.local_heartbeat(record) or {}
    where = (beat.get("stats") or {}).get("endpoints") or {}
    return {int(g): int(w[3]) for g, w in where.items()}


# slow (CI budget): make test covers the regrouping on Spark (spark/test_replan.py) and
# Nimbus keeping the one worker (unit/cluster/nimbus/test_rebalance_and_cleanup.py)
@pytest.mark.slow
def test_rebalance_e_regroups_in_place_with_the_new_executors_and_exact_counts(
        cluster: TestCluster) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = cluster.cli("submit", "examples/exclamation.py",
                         "-c", f"exclamation.count={COUNT}")
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    wait_for(lambda: _detail(cluster, topology_id)["spouts"][0]["acked"] == COUNT, 240,
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

    before = _executor_pids(cluster, first)
    assert len(before) == 5

    def regrouped() -> bool:
        detail = _detail(cluster, topology_id)
        workers = detail["workers"]
        return bool(detail["status"] == "ACTIVE" and workers
                    and (workers[0]["lastHeartbeatSecs"] or 0) > rebalanced_at
                    and len(_executor_pids(cluster, first)) == 4)

    wait_for(regrouped, 60, message=f"regrouped in place\n{cluster.logs()}")
    assert cluster.worker_records() == [first], "the worker stayed: same id, same process"
    after = _executor_pids(cluster, first)
    kept = set(before.values()) & set(after.values())
    assert len(kept) == 3, f"the spout's and exclaim2's executors kept theirs: {before} {after}"
    detail = _detail(cluster, topology_id)
    assert _executors(detail) == {"exclaim1": 1, "exclaim2": 2}
    assert detail["executorsTotal"] == 4
    assert detail["spouts"][0]["acked"] == COUNT
    bolts = {b["boltId"]: b for b in detail["bolts"]}
    assert bolts["exclaim2"]["executed"] == COUNT and bolts["exclaim1"]["executed"] == COUNT
    # and it stays there: one more heartbeat later, still exactly COUNT
    wait_for(lambda: _detail(cluster, topology_id)["workers"][0]["lastHeartbeatSecs"]
             > time.time() - 0.5, 10, message="one more heartbeat")
    assert _detail(cluster, topology_id)["spouts"][0]["acked"] == COUNT
