"""Fixtures of the Nimbus unit tests: an embedded store, a fake clock, a Nimbus on them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.cluster.nimbus.server import build_server
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.embedded import EmbeddedStore
from sparkstorm.config import load_config
from sparkstorm.testing.polling import wait_for
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import BOLT, SPEC


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1_000_000.0)


@pytest.fixture
def state(tmp_path: Path) -> Iterator[ClusterState]:
    with EmbeddedStore(tmp_path / "store.sqlite") as store:
        yield ClusterState(store)


@pytest.fixture
def nimbus(tmp_path: Path, state: ClusterState, clock: FakeClock) -> Nimbus:
    conf = load_config(env={}, cli={"storm.local.dir": str(tmp_path / "local"),
                                    "nimbus.task.timeout.secs": 30,
                                    "nimbus.task.launch.secs": 120})
    return Nimbus(conf, state, clock=clock)


@pytest.fixture
def two_components(monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC gets a bolt with 4 tasks and 1 executor (room to rebalance)."""
    monkeypatch.setitem(SPEC, "components", [*SPEC["components"], BOLT])


@pytest.fixture
def served(tmp_path: Path, state: ClusterState) -> Iterator[Callable[..., Any]]:
    """Start a real Nimbus server with conf overrides; yield the starter; stop them all."""
    started: list[tuple[Nimbus, Any, threading.Thread]] = []

    def start(**overrides: Any) -> Any:
        # plain HTTP unless a test asks for TLS (raw sockets speak HTTP to it)
        conf = load_config(env={}, cli={"storm.local.dir": str(tmp_path / "local"),
                                        "nimbus.port": 0, "storm.tls.enabled": False,
                                        **overrides})
        nimbus, server = build_server(conf, state)
        thread = threading.Thread(target=server.run, daemon=True)
        started.append((nimbus, server, thread))
        thread.start()
        wait_for(lambda: server.started, 10, message="nimbus serving")
        return server

    yield start
    for nimbus, server, thread in started:
        server.should_exit = True
        thread.join(10)
        nimbus.cleaner.stop()
        nimbus.assigner.stop()
