"""A rollback cancels the window in flight and follows a moved executor to its new address.

Real sockets: a loopback port nobody listens on stands in for the executor's old address (its
host was taken away), a real executor server for the address its worker reports after the
move.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.driver.rollback_calls import await_window, restore_executor
from sparkstorm.engine.executor.host import BoltExecutor, ExecutorHost
from sparkstorm.engine.executor.main import ExecutorServer
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.endpoint import Endpoint


def test_a_window_is_awaited_untouched_while_no_rollback_is_due() -> None:
    future: Future[str] = Future()
    cancels: list[int] = []
    threading.Timer(0.5, future.set_result, ["records"]).start()
    assert await_window(future, lambda: False, lambda: cancels.append(1)) == "records"
    assert cancels == []


def test_a_window_is_cancelled_once_when_a_rollback_becomes_due() -> None:
    future: Future[str] = Future()
    due = threading.Event()
    cancels: list[float] = []

    def cancel() -> None:  # Spark fails a cancelled job's collect() a little later
        cancels.append(time.monotonic())
        threading.Timer(0.5, future.set_exception, [RuntimeError("job group cancelled")]).start()

    threading.Timer(0.3, due.set).start()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="cancelled"):
        await_window(future, due.is_set, cancel)
    assert len(cancels) == 1, "cancelled once, however long Spark takes to give up"
    assert cancels[0] - started < 2


class Numbers(Spout):
    outputs = ["n"]


class Relay(Bolt):
    outputs: list[Any] = []


class Pair(Topology):
    numbers = Numbers.spec()
    relay = Relay.spec(inputs=[numbers])


def _closed_port() -> int:
    """A loopback port nobody listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def moved(tmp_path: Path) -> Iterator[tuple[ExecutorServer, list[ExecutorHost]]]:
    """A real executor server (the executor after its move) and the hosts it rebuilt."""
    plan = ExecutionPlan(Pair.topology_spec, {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "relay")
    rebuilt: list[ExecutorHost] = []

    def rebuild(point: Any) -> ExecutorHost:
        rebuilt.append(BoltExecutor(plan, gid, "pair", point))
        return rebuilt[-1]
    server = ExecutorServer(BoltExecutor(plan, gid, "pair"), str(tmp_path / "e.sock"), rebuild)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, rebuilt
    server._shutdown()
    thread.join(5)


def test_a_restore_follows_the_executor_to_the_address_reported_after_it_moved(
        tmp_path: Path, moved: tuple[ExecutorServer, list[ExecutorHost]]) -> None:
    server, rebuilt = moved
    gone = Endpoint(str(tmp_path / "gone" / "e.sock"), "127.0.0.1", _closed_port())
    lookups: list[Endpoint] = []

    def endpoint_of() -> Endpoint:  # the worker on the host left reports after a while
        lookups.append(gone if len(lookups) < 2 else Endpoint(server.path, "127.0.0.1", 1))
        return lookups[-1]
    started = time.monotonic()
    restore_executor(endpoint_of, "", None, timeout=60)
    assert lookups[:2] == [gone, gone] and lookups[-1].path == server.path
    assert len(rebuilt) == 1 and server.host is rebuilt[0], "restored from scratch"
    assert time.monotonic() - started < 10, "not the 60 s the old address was given"


def test_a_restore_nobody_answers_gives_up_after_its_timeout(tmp_path: Path) -> None:
    gone = Endpoint(str(tmp_path / "e.sock"), "127.0.0.1", _closed_port())
    started = time.monotonic()
    with pytest.raises(ConnectionError, match="restore checkpoint 7 within 1 s"):
        restore_executor(lambda: gone, "", 7, timeout=1)
    assert time.monotonic() - started < 5
