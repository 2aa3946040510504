"""An executor serves overlapping windows in the driver's order (issue 12 §3).

A real executor server over a real Unix socket, with a bolt that records what it processes:
window 1's request arrives first and must wait for window 0's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor import main as executor_main
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.main import ExecutorServer
from sparkstorm.engine.executor.window_turns import WindowTurns
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import call_executor
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.frames import pack
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import (
    NOT_YET,
    OK,
    RestoreRequest,
    ServedRequest,
    SkipRequest,
    WindowFlags,
    WindowRequest,
)
from sparkstorm.testing.polling import wait_for

PROCESSED: list[int] = []
"""What the recording bolt processed, in order (the server runs in this process)."""


class Numbers(Spout):
    outputs = ["n"]


class Remember(Bolt):
    outputs: list[Any] = []

    def process(self, tup: Any) -> None:
        if tup.values.n < 0:
            msg = f"refused {tup.values.n}"
            raise ValueError(msg)
        PROCESSED.append(tup.values.n)


class RememberTopology(Topology):
    numbers = Numbers.spec()
    remember = Remember.spec(inputs=[numbers])


class Served:
    """An executor server of the recording bolt, and a way to send it window requests."""

    def __init__(self, tmp_path: Path) -> None:
        plan = ExecutionPlan(RememberTopology.topology_spec, {"topology.acker.executors": 1})
        gid = next(e.gid for e in plan.executors if e.component == "remember")
        self.task = plan.component_tasks["remember"][0]
        self.source = plan.component_tasks["numbers"][0]
        self.server = ExecutorServer(BoltExecutor(plan, gid, "turns"),
                                     str(tmp_path / "e.sock"))
        self.endpoint = Endpoint(self.server.path, "127.0.0.1", 1)
        self.senders = ThreadPoolExecutor(2)

    def send(self, window: int, n: int, after: int | None) -> Future[tuple[Any, bytes]]:
        """Send window ``window`` carrying number ``n`` from a thread of its own."""
        rows = pack([[self.task, self.source, "default", [[n]], [None], [None]]])
        request = WindowRequest(window, WindowFlags(after=after), rows=[rows])
        return self.senders.submit(call_executor, self.endpoint, "", request, 10, 5.0)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    PROCESSED.clear()
    one = Served(tmp_path)
    thread = threading.Thread(target=one.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield one
    finally:
        one.senders.shutdown(wait=True, cancel_futures=True)
        one.server._shutdown()
        thread.join(5)


def test_a_window_that_arrives_first_waits_for_the_one_before_it(served: Served) -> None:
    second = served.send(1, 11, after=0)
    wait_for(lambda: served.server.turns.waiting == 1, timeout=10,
             message="window 1 waiting for window 0")
    assert PROCESSED == []
    first = served.send(0, 10, after=-1)
    first.result(10)
    second.result(10)
    assert PROCESSED == [10, 11]


def test_a_retried_task_of_either_window_in_flight_is_answered_from_memory(
        served: Served) -> None:
    replies = [served.send(w, 10 + w, after=w - 1).result(10) for w in range(2)]
    again = [served.send(w, 10 + w, after=w - 1).result(10) for w in range(2)]
    assert PROCESSED == [10, 11]  # nothing ran twice
    assert again == replies
    assert WindowMeta.decode(again[0][1]).stats.executed == {"numbers:default": 1}


def test_a_skipped_window_releases_the_one_after_it(served: Served) -> None:
    later = served.send(5, 15, after=4)
    wait_for(lambda: served.server.turns.waiting == 1, timeout=10,
             message="window 5 waiting for window 4")
    call_executor(served.endpoint, "", SkipRequest(4), 10)
    later.result(10)
    assert PROCESSED == [15]


def test_a_served_request_answers_once_its_window_was_served(served: Served) -> None:
    """The driver's signal that a chained spout stage handed over (``hand_over_wait``)."""
    heard = served.senders.submit(call_executor, served.endpoint, "", ServedRequest(0, 30.0),
                                  40, 5.0)
    wait_for(lambda: served.server.turns.watching == 1, timeout=10,
             message="the served request waiting")
    assert not heard.done()
    served.send(0, 10, after=-1).result(10)
    assert heard.result(10)[0] == OK
    # served already: at once; a window that was skipped counts as served
    assert call_executor(served.endpoint, "", ServedRequest(0, 30.0), 10)[0] == OK
    call_executor(served.endpoint, "", SkipRequest(3), 10)
    assert call_executor(served.endpoint, "", ServedRequest(3, 30.0), 10)[0] == OK


def test_a_served_request_for_a_window_that_does_not_come_says_so(served: Served) -> None:
    started = time.monotonic()
    reply = call_executor(served.endpoint, "", ServedRequest(7, 0.2), 10)[0]
    assert reply == NOT_YET
    assert time.monotonic() - started < 5


def test_the_wait_for_a_window_that_never_comes_is_bounded() -> None:
    turns = WindowTurns(bound=0.2)
    started = time.monotonic()
    with turns:
        assert turns.wait_turn(3, 2) is False
    assert time.monotonic() - started < 5
    assert turns.waiting == 0


def test_a_restarted_executor_serves_its_first_window_at_once_then_in_order() -> None:
    turns = WindowTurns(restarted=True, bound=0.1)
    with turns:
        assert turns.wait_turn(8, 7) is True  # window 7 died with its predecessor
        turns.served(8, ({}, b""))
        assert turns.wait_turn(10, 9) is False  # from now on, in order


def test_a_window_begun_before_a_rollback_is_refused_after_it(tmp_path: Path) -> None:
    """A cancelled window's request that reaches the executor after its restore is not run.

    Run on top of the restored checkpoint it would apply its input twice (the rollback
    replays it); the first window after the rollback does not wait for it.
    """
    PROCESSED.clear()
    one = Served(tmp_path)
    plan, gid = one.server.host.plan, one.server.host.info.gid
    one.server.rebuild = lambda _point: BoltExecutor(plan, gid, "turns")
    thread = threading.Thread(target=one.server.serve_forever, daemon=True)
    thread.start()
    try:
        one.send(3, 13, after=None).result(10)
        call_executor(one.endpoint, "", RestoreRequest(None, 6), 10)
        stale = WindowRequest(4, WindowFlags(after=3), rows=[pack(
            [[one.task, one.source, "default", [[14]], [None], [None]]])])
        with pytest.raises(ConnectionError):  # never answered: tried again until the bound
            call_executor(one.endpoint, "", stale, 1, 5.0)
        one.send(6, 16, after=5).result(10)  # window 5 never comes: refused, not awaited
    finally:
        one.senders.shutdown(wait=True, cancel_futures=True)
        one.server._shutdown()
        thread.join(5)
    assert PROCESSED == [13, 16]


def test_the_exit_waits_for_the_window_reply_that_carries_the_error(
        served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bolt raised: the executor exits, but only once that window's reply is out.

    The driver's served watch (``hand_over_wait``) is answered as the window is served,
    before the window's reply is sent; its thread ended the process first, and the error
    died with it (the multilang hang test lost its error report under load). The window's
    reply is held back here to make that order certain.
    """
    server = served.server
    real_send = executor_main.send_reply
    done_when_sent: list[bool] = []

    def slow_window_reply(conn: Any, payload: Any, body: bytes = b"") -> None:
        if payload not in (OK, NOT_YET):  # a window's rows
            time.sleep(0.3)
            done_when_sent.append(server.done.is_set())
        real_send(conn, payload, body)

    monkeypatch.setattr(executor_main, "send_reply", slow_window_reply)
    watch = served.senders.submit(call_executor, served.endpoint, "", ServedRequest(0, 30.0),
                                  40, 5.0)
    wait_for(lambda: server.turns.watching == 1, timeout=10, message="the watch waiting")
    rows, meta = served.send(0, -1, after=-1).result(10)
    assert watch.result(10)[0] == OK
    assert done_when_sent == [False], "the process ended before the error's reply was out"
    assert any("refused -1" in e.error for e in WindowMeta.decode(meta).errors)
    wait_for(server.done.is_set, timeout=10, message="the executor exits after the reply")
