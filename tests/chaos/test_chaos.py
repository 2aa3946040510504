"""Chaos: kill -9 of processes, or a ZooKeeper outage, while a topology runs on a real cluster.

Loopback only, Spark local[2]; each fault must lose no id, ack none twice, and leave nothing
behind. Slow (a Spark start per fault): ``make test-all`` runs them, ``make test`` does not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.faults import (
    CONF,
    FAULTS,
    KILL_FAULTS,
    OUTAGE_COUNT,
    OUTAGE_SECS,
    Run,
    acks,
    zookeeper_cluster_conf,
    zookeeper_outage,
    zookeeper_server,
)
from tests.integration.cluster.harness import TestCluster, closed_after
from tests.integration.zookeeper.backends import ensure_zookeeper_installed

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(420)]


@pytest.fixture
def run(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Run]:
    """A chaos run on its own cluster (closed, with every process, after the test)."""
    cluster = TestCluster(tmp_path, **CONF)
    closing = closed_after(cluster, request)
    next(closing)
    try:
        yield Run(cluster, tmp_path / "chaos")
    finally:
        closing.close()  # prints the logs of a failed test, stops every process


@pytest.fixture
def zk_run(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Run]:
    """A chaos run on a cluster whose state is on a ZooKeeper server of its own.

    Not the session's server: the test stops this one. The cluster closes first, then the
    server stops; the server's log is printed too when the test failed.
    """
    ensure_zookeeper_installed()
    with zookeeper_server(tmp_path / "zookeeper") as server:
        cluster = TestCluster(tmp_path, **CONF, **zookeeper_cluster_conf(server))
        closing = closed_after(cluster, request)
        next(closing)
        try:
            yield Run(cluster, tmp_path / "chaos", count=OUTAGE_COUNT, zookeeper=server)
        finally:
            closing.close()
            report = getattr(request.node, "rep_call", None)
            if report is not None and report.failed:
                print(f"--- ZooKeeper server.log ---\n{server.log_tail(0, 80)}")


@pytest.mark.parametrize("fault", KILL_FAULTS)
def test_kill9_loses_no_id_acks_none_twice_and_leaves_nothing(run: Run, fault: str) -> None:
    run.start()
    FAULTS[fault](run)
    run.check_every_id_once()
    run.kill_and_check_nothing_left()


def test_zookeeper_outage_loses_no_id_acks_none_twice_and_leaves_nothing(zk_run: Run) -> None:
    zk_run.start()
    stopped = zookeeper_outage(zk_run)
    assert zk_run.restored - stopped >= OUTAGE_SECS
    zk_run.check_every_id_once()
    # the outage hit a running topology: ids were acked before it and after it
    times = [a["time"] for a in acks(zk_run.folder)]
    assert min(times) < stopped, "no id acked before the outage"
    assert max(times) > zk_run.restored, "no id left to ack once ZooKeeper was back"
    # and the daemons felt it: their stores lost the connection
    for daemon in ("nimbus", "supervisor"):
        log = (zk_run.cluster.tmp / f"{daemon}.log").read_text(errors="replace")
        assert "ZooKeeper connection" in log, f"{daemon} never lost its ZooKeeper connection"
    zk_run.kill_and_check_nothing_left()
