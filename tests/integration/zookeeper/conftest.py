"""Fixtures of the state-store suites.

One real ZooKeeper server per session, and a ``backend`` fixture, parametrized indirectly, that
opens clients of either store.

Test modules say ``pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)``
and use ``store`` (a first client) and ``backend.open()`` (more clients of the same store).
Each test gets its own root node (ZooKeeper) or its own file (embedded), so tests never see
each other's nodes. When a test that used ZooKeeper fails, the server log written during the
test is attached to the report.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkstorm.cluster.store import StateStore
from tests.integration.zookeeper.backends import BASE_CONF, Backend, ensure_zookeeper_installed
from tests.integration.zookeeper.zkserver import ZooKeeperServer


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    """One ZooKeeper server for the whole session, on a free loopback port."""
    ensure_zookeeper_installed()
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A store backend, by indirect parameter: ``"embedded"`` or ``"zookeeper"``."""
    kind = request.param
    conf = BASE_CONF | {
        "storm.state.store": kind,
        "storm.local.dir": str(tmp_path / "storm-local"),
        "storm.zookeeper.root": f"/t-{uuid.uuid4().hex[:12]}",
    }
    server = None
    if kind == "zookeeper":
        server = request.getfixturevalue("zk_server")
        conf |= {"storm.zookeeper.servers": ["127.0.0.1"], "storm.zookeeper.port": server.port}
        request.node.zk_log_mark = (server, server.log_size())
    opened = Backend(kind, conf, server)
    yield opened
    opened.close_all()


@pytest.fixture
def store(backend: Backend) -> StateStore:
    """A first client of the test's store."""
    return backend.open()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Attach the ZooKeeper server's log of the test to the report of a failed test."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    mark = getattr(item, "zk_log_mark", None)
    if mark is not None and report.failed:
        server, offset = mark
        report.sections.append(("ZooKeeper server log", server.log_tail(offset)))
