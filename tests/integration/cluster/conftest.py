"""Fixtures of the cluster suite: a :class:`TestCluster` that never outlives its test."""

from __future__ import annotations

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


# the real ZooKeeper server of the state-store suites (session scoped), for the fail-over test
from tests.integration.zookeeper.conftest import zk_server  # noqa: E402, F401
