"""A topology spread over two workers on two test hosts, submitted to Nimbus on host A.

ZooKeeper, Nimbus and the Spark standalone master run on A; a supervisor and a Spark worker
on B and on C, each supervisor with its own ``storm.local.dir`` in its host's private
``/tmp``. ``topology.workers=2`` puts one worker on each host: the one that hosts the lowest
executor runs the driver (Spark driver, window loop), the other hosts the rest of the
executors and reports where they answer. The chaos topology (``tests/chaos``) counts every
id: each must be committed exactly once and reach a sink, whatever happens to the workers.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY, acks
from tests.integration.hosts.conftest import HOST_B, HOST_C, TestHosts
from tests.integration.hosts.control_plane import (
    IP_OF,
    ClusterHosts,
    acked,
    kill_topology,
    wait_every_id_once,
)

pytestmark = pytest.mark.timeout(600)

SPOUT_GID = 0
"""The chaos topology's spout executor (its only level-0 component)."""


def _results(hosts: TestHosts, name: str) -> Path:
    folder = hosts.shared / "results" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def test_two_workers_run_executors_on_both_hosts(cluster_hosts: TestHosts) -> None:
    cluster = ClusterHosts(cluster_hosts)
    results, count = _results(cluster_hosts, "spread"), 600
    cluster.submit(TOPOLOGY, "spread", results, count, "topology.workers=2")
    driver, other = cluster.wait_spread()
    where = cluster.executor_hosts()
    assert sorted(where) == [0, 1, 2, 3, 4], f"1 spout, 2 relays, 2 sinks: {where}"
    assert {IP_OF[driver], IP_OF[other]} == set(where.values()) == {HOST_B, HOST_C}
    wait_every_id_once(cluster, results, count)
    kill_topology(cluster, "spread")


@pytest.mark.slow
def test_killed_worker_is_restarted_and_called_at_its_new_address(
        cluster_hosts: TestHosts) -> None:
    cluster = ClusterHosts(cluster_hosts)
    results, count = _results(cluster_hosts, "restart"), 1200
    # the windows in flight wait for the restarted worker's new addresses this long
    cluster.submit(TOPOLOGY, "restart", results, count, "topology.workers=2",
                   "topology.executor.answer.timeout.secs=90")
    _, other = cluster.wait_spread()
    before = {gid: where for gid, where in cluster.executor_hosts().items()
              if where == IP_OF[other]}
    wait_for(lambda: len(acked(results)) >= 100, 120,
             message=f"ids acked through both workers\n{cluster.logs()}")
    killed = cluster.kill_worker(other)
    wait_for(lambda: [w for w in cluster.workers(other) if w["record"]["pid"] != killed
                      and (w["beat"].get("stats") or {}).get("endpoints")], 120,
             message=f"the worker on {other} restarted by its supervisor\n{cluster.logs()}")
    wait_every_id_once(cluster, results, count)
    after = cluster.executor_hosts()
    assert {gid: after[gid] for gid in before} == before, "its executors stay on its host"
    # the windows that hit the killed executors were resent to their new addresses, not
    # only failed and replayed (connection refresh)
    wait_for(lambda: cluster.refreshed_calls() >= 1, 60,
             message=f"calls retried at new addresses\n{cluster.driver_stats().get('locality')}")
    kill_topology(cluster, "restart")


@pytest.mark.slow
def test_rebalance_to_one_worker_and_back_keeps_exact_counts(cluster_hosts: TestHosts) -> None:
    """``rebalance -n 1`` then ``-n 2``: the executors that stay keep their processes.

    The driver's worker stays (Storm's rebalance reassigns): its executors, the spout
    among them, keep their pids while the other host's move in, and again while two of
    them move out to a new worker.
    """
    cluster = ClusterHosts(cluster_hosts)
    results, count = _results(cluster_hosts, "rebalanced"), 2400
    cluster.submit(TOPOLOGY, "rebalanced", results, count, "topology.workers=2")
    driver, _ = cluster.wait_spread()
    two = cluster.executor_pids()
    staying = {gid: where for gid, where in two.items() if where[0] == IP_OF[driver]}
    assert SPOUT_GID in staying, f"the spout is the lowest executor: {two}"
    wait_for(lambda: len(acked(results)) >= 100, 120,
             message=f"ids acked through both workers\n{cluster.logs()}")
    cluster.cli("rebalance", "rebalanced", "-n", "1", "-w", "0")
    wait_for(lambda: set(cluster.executor_hosts().values()) == {IP_OF[driver]}
             and len(cluster.executor_hosts()) == 5, 180,
             message=f"every executor in the driver's worker\n{cluster.logs()}")
    one = cluster.executor_pids()
    assert {gid: one[gid] for gid in staying} == staying, "staying executors kept their pids"
    progress = len(acked(results))
    wait_for(lambda: len(acked(results)) > progress + 60, 120,
             message=f"ids acked by the one worker on {driver}\n{cluster.logs()}")
    cluster.cli("rebalance", "rebalanced", "-n", "2", "-w", "0")
    cluster.wait_spread()

    def driver_share() -> dict[int, tuple[str, int]] | None:
        """The driver's worker's executors, once it closed the two that moved out."""
        reported = [{int(gid): (where[1], int(where[3])) for gid, where in
                     (worker["beat"].get("stats") or {}).get("endpoints", {}).items()}
                    for worker in cluster.workers(driver)]
        return next((share for share in reported if len(share) == 3), None)

    kept = wait_for(driver_share, 120, message=f"the driver keeps its share of 5 (3)\n"
                                               f"{cluster.logs()}")
    assert SPOUT_GID in kept
    assert {gid: one[gid] for gid in kept} == kept, "staying executors kept their pids"
    wait_every_id_once(cluster, results, count)
    assert {a["pid"] for a in acks(results)} == {two[SPOUT_GID][1]}, "one spout process"
    kill_topology(cluster, "rebalanced")


def _tagged_pids(cluster: ClusterHosts, tag: str,
                 executors: int) -> dict[int, tuple[str, int]] | None:
    """Each executor's host and pid once the workers report ``executors`` under ``tag``."""
    found: dict[int, tuple[str, int]] = {}
    for host in IP_OF:
        for worker in cluster.workers(host):
            where = (worker["beat"].get("stats") or {}).get("endpoints") or {}
            if any(len(w) < 5 or w[4] != tag for w in where.values()):
                return None
            found |= {int(gid): (w[1], int(w[3])) for gid, w in where.items()}
    return found if sorted(found) == list(range(executors)) else None


@pytest.mark.slow
def test_rebalance_e_regroups_executors_on_both_hosts_in_place(
        cluster_hosts: TestHosts) -> None:
    """``rebalance -e relay=1`` then ``relay=2`` on a topology spread over B and C.

    Both workers stay; the spout's and the sinks' executors keep their processes and
    hosts (``engine.plan.regroup``: the driver switches between windows, the other worker follows
    its plan, endpoints are tagged with the plan they belong to). Every id once.
    """
    cluster = ClusterHosts(cluster_hosts)
    results, count = _results(cluster_hosts, "regrouped"), 2400
    cluster.submit(TOPOLOGY, "regrouped", results, count, "topology.workers=2")
    cluster.wait_spread()
    two = wait_for(lambda: _tagged_pids(cluster, "ids=1,relay=2,sink=2", 5), 120,
                   message=f"five executors\n{cluster.logs()}")
    staying = {two[gid] for gid in (0, 3, 4)}  # the spout and the sinks (level order)
    wait_for(lambda: len(acked(results)) >= 100, 120,
             message=f"ids acked through both workers\n{cluster.logs()}")
    for relay in (1, 2):
        tag = f"ids=1,relay={relay},sink=2"
        cluster.cli("rebalance", "regrouped", "-e", f"relay={relay}", "-w", "0")
        now = wait_for(lambda t=tag, n=3 + relay: _tagged_pids(cluster, t, n), 180,
                       message=f"both workers under {tag}\n{cluster.logs()}")
        assert staying <= set(now.values()), f"spout and sinks kept theirs: {two} {now}"
        assert {ip for ip, _ in now.values()} == {HOST_B, HOST_C}
        progress = len(acked(results))
        wait_for(lambda p=progress: len(acked(results)) > min(count - 1, p + 60), 120,
                 message=f"ids acked after relay={relay}\n{cluster.logs()}")
    wait_every_id_once(cluster, results, count)
    assert {a["pid"] for a in acks(results)} == {two[SPOUT_GID][1]}, "one spout process"
    kill_topology(cluster, "regrouped")
