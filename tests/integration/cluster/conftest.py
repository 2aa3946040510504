"""Fixtures of the cluster suite: a :class:`TestCluster` that never outlives its test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.cluster.harness import TestCluster, closed_after


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A configured, not yet started cluster; its logs are printed when the test fails."""
    test_cluster = TestCluster(tmp_path)
    yield from closed_after(test_cluster, request)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    """Keep each phase's report on the test item, for the fixture above."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


# the real ZooKeeper server of the state-store suites (session scoped)
from tests.integration.zookeeper.conftest import zk_server  # noqa: E402, F401
from tests.integration.zookeeper.zkserver import ZooKeeperServer  # noqa: E402


@pytest.fixture
def zk_cluster(zk_server: ZooKeeperServer, tmp_path: Path,  # noqa: F811 - the fixture
               request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster on the ZooKeeper backend (its own root), with short timeouts.

    A test changes its conf with ``@pytest.mark.parametrize("zk_cluster", [{...}], indirect=True)``.
    """
    test_cluster = TestCluster(
        tmp_path, **{"storm.state.store": "zookeeper",
                     "storm.zookeeper.servers": ["127.0.0.1"],
                     "storm.zookeeper.port": zk_server.port,
                     "storm.zookeeper.root": f"/sparkstorm-{uuid.uuid4().hex[:12]}",
                     "storm.zookeeper.session.timeout": 3000,
                     "nimbus.task.timeout.secs": 10,
                     "nimbus.monitor.freq.secs": 1,
                     **getattr(request, "param", {})})
    yield from closed_after(test_cluster, request)
