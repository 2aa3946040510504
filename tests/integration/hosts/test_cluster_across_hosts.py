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
from tests.chaos.faults import TOPOLOGY
from tests.integration.hosts.conftest import HOST_B, HOST_C, TestHosts
from tests.integration.hosts.control_plane import (
    IP_OF,
    ClusterHosts,
    acked,
    kill_topology,
    wait_every_id_once,
)

pytestmark = pytest.mark.timeout(600)


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
    cluster = ClusterHosts(cluster_hosts)
    results, count = _results(cluster_hosts, "rebalanced"), 2400
    cluster.submit(TOPOLOGY, "rebalanced", results, count, "topology.workers=2")
    cluster.wait_spread()
    wait_for(lambda: len(acked(results)) >= 100, 120,
             message=f"ids acked through both workers\n{cluster.logs()}")
    cluster.cli("rebalance", "rebalanced", "-n", "1", "-w", "0")
    one_host = wait_for(lambda: len(set(cluster.executor_hosts().values())) == 1
                        and cluster.driver_host(), 180,
                        message=f"every executor in one worker\n{cluster.logs()}")
    progress = len(acked(results))
    wait_for(lambda: len(acked(results)) > progress + 60, 120,
             message=f"ids acked by the one worker on {one_host}\n{cluster.logs()}")
    cluster.cli("rebalance", "rebalanced", "-n", "2", "-w", "0")
    cluster.wait_spread()
    wait_every_id_once(cluster, results, count)
    kill_topology(cluster, "rebalanced")
