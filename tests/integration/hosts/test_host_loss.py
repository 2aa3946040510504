"""A test host disappears under a topology spread over two of them.

As in ``test_cluster_across_hosts``, with the driver's worker on one host (B or C, where
the lowest executor was placed) and the other executors on the other. That other host is
taken away: every process in its namespace is killed at once (the supervisor, the worker,
its executors, the Spark worker and executor). Nimbus notices the silent worker after
``nimbus.task.timeout.secs`` (10 s here), moves it to a free slot of the host left, the
windows in flight are resent to the executors there once the driver hears where they
answer (connection refresh), and the lost trees replay: every id is committed exactly
once, with checkpoints off (the spout's replay) and on (rollback to the last checkpoint:
the driver cancels the window still calling the lost host as soon as the moved executors
report, ``engine.driver.rollback_calls``;
``tests/integration/cluster/test_worker_moved_checkpoints.py``
is the one-machine twin that ``make test`` runs).
Each case gets fresh hosts: a lost host does not come back.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY
from tests.integration.hosts.conftest import TestHosts, running_test_hosts
from tests.integration.hosts.control_plane import (
    IP_OF,
    ClusterHosts,
    acked,
    kill_topology,
    wait_every_id_once,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture
def fresh_cluster_hosts() -> Iterator[TestHosts]:
    """The cluster on test hosts, for one test: it takes a host away."""
    with running_test_hosts("spark", "cluster") as test_hosts:
        yield test_hosts


@pytest.mark.parametrize("checkpoint_windows", [
    pytest.param(0, id="replay"), pytest.param(5, id="checkpoints")])
def test_workers_of_a_lost_host_move_to_the_host_left(fresh_cluster_hosts: TestHosts,
                                                      checkpoint_windows: int) -> None:
    cluster = ClusterHosts(fresh_cluster_hosts)
    results, count = fresh_cluster_hosts.shared / "results", 1500
    results.mkdir(parents=True)
    # checkpoint parts must outlive their host: in a folder every host sees (a cluster
    # would name a shared file system), not in the host's private storm.local.dir
    # the windows in flight wait this long for the moved executors' new addresses
    cluster.submit(TOPOLOGY, "lost", results, count, "topology.workers=2",
                   "topology.executor.answer.timeout.secs=90",
                   f"topology.checkpoint.windows={checkpoint_windows}",
                   f"topology.checkpoint.dir={fresh_cluster_hosts.shared / 'checkpoints'}")
    driver, lost = cluster.wait_spread()
    wait_for(lambda: len(acked(results)) >= 100, 120,
             message=f"ids acked through both hosts\n{cluster.logs()}")
    assert len(acked(results)) < count, "ids are still to come when the host is lost"
    taken = fresh_cluster_hosts.script("kill-host", lost, timeout=60)
    assert taken.returncode == 0, taken.stderr
    wait_for(lambda: set(cluster.executor_hosts().values()) == {IP_OF[driver]}
             and len(cluster.executor_hosts()) == 5, 180,
             message=f"every executor moved to host {driver}\n{cluster.logs()}")
    wait_every_id_once(cluster, results, count)
    if checkpoint_windows:  # the driver cancelled the window that called the lost host
        (beat,) = [w["beat"]["stats"] for w in cluster.workers(driver)
                   if w["beat"]["stats"].get("windows")]
        assert beat["rollbacks"] >= 1, "rolled back to the checkpoint"
    else:  # a rollback resends nothing: it restores and replays
        # windows that hit the lost host's executors were resent to the host left
        wait_for(lambda: cluster.refreshed_calls() >= 1, 60, message="calls retried at new "
                 f"addresses\n{cluster.driver_stats().get('locality')}\n{cluster.logs()}")
    kill_topology(cluster, "lost")
