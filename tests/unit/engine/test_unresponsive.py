"""The stage gives up on an executor that stops answering, never on a slow one (issue 14 §4).

Real Unix sockets: a listener that never accepts stands in for a stopped process (the
kernel queues the connection, nothing answers), and a real executor server with a slow bolt
for a long window.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.main import ExecutorServer
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import (
    DRIVER,
    ExecutorUnresponsive,
    StageInfo,
    call_executor,
    run_stage,
)
from sparkstorm.engine.wire.anchor_columns import batch_of
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.failures import FAIL_CRASH
from sparkstorm.engine.wire.frames import pack, send_reply
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import WindowFlags, WindowRequest


@pytest.fixture
def frozen(tmp_path: Path) -> Iterator[Endpoint]:
    """A socket that accepts connections into its backlog and never answers."""
    path = str(tmp_path / "frozen.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    yield Endpoint(path, "127.0.0.1", 1)  # on this host: the Unix socket is used
    listener.close()


def test_a_silent_executor_is_given_up_on_after_the_bound(frozen: Endpoint) -> None:
    started = time.monotonic()
    with pytest.raises(ExecutorUnresponsive) as caught:
        call_executor(frozen, "", WindowRequest(1, rows=[]), 10, answer_timeout=0.3)
    assert caught.value.code == "EXECUTOR_UNRESPONSIVE"
    assert time.monotonic() - started < 5


def test_the_stage_reports_it_lost_and_fails_the_trees_it_was_sent(frozen: Endpoint) -> None:
    stage = StageInfo(1, (4,), {4: 1}, {4: frozen}, "", 10.0, 0.3, {4: "count"})
    rows = pack([batch_of(7, 3, "default", [["a"], ["b"], ["c"]],
                          [{100: 1}, None, {200: 2, 300: 3}])])
    ((key, (blob, deliveries, call)),) = list(run_stage(stage, 9, WindowFlags(), 0, [(4, rows)]))
    meta = WindowMeta.decode(blob)
    assert key == DRIVER and deliveries == {}
    assert call is None, "a call given up on is not counted as one"
    assert meta.lost and meta.gid == 4 and meta.component == "count"
    assert set(meta.failed) == {100, 200, 300}
    assert {why.cause for why in meta.failed.values()} == {FAIL_CRASH}
    assert "did not answer window 9" in meta.failed[100].reason


class Numbers(Spout):
    outputs = ["n"]


class Sleepy(Bolt):
    outputs: list[Any] = []

    def process(self, tup: Any) -> None:
        time.sleep(1.5)


class SleepyTopology(Topology):
    numbers = Numbers.spec()
    sleepy = Sleepy.spec(inputs=[numbers])


def test_a_slow_window_is_waited_for_while_the_executor_answers_pings(tmp_path: Path) -> None:
    plan = ExecutionPlan(SleepyTopology.topology_spec, {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "sleepy")
    server = ExecutorServer(BoltExecutor(plan, gid, "slow"), str(tmp_path / "e.sock"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        task, src = plan.component_tasks["sleepy"][0], plan.component_tasks["numbers"][0]
        batch = pack([[task, src, "default", [[1]], [5], [1]]])
        _, body = call_executor(Endpoint(server.path, "127.0.0.1", 1), "",
                                WindowRequest(1, rows=[batch]), 10,
                                answer_timeout=0.3)
    finally:
        server._shutdown()
        thread.join(5)
    meta = WindowMeta.decode(body)
    assert not meta.lost and meta.stats.executed == {"numbers:default": 1}


def test_an_answer_that_arrives_as_the_executor_exits_is_taken(tmp_path: Path) -> None:
    """A component that raised answers its window, then its executor exits (code 70).

    The ping that went out meanwhile is refused, yet the answer is there to be read: the
    window is not reported lost (a crash's own error would be replaced by "did not answer").
    """
    path = str(tmp_path / "exiting.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)

    def answer_then_exit() -> None:
        window, _ = listener.accept()
        window.recv(1 << 16)
        ping, _ = listener.accept()  # the caller's liveness check, after its 0.3 s
        send_reply(window, {"answered": True}, b"meta")
        ping.close()  # unanswered: the process is gone
        window.close()
        listener.close()

    server = threading.Thread(target=answer_then_exit, daemon=True)
    server.start()
    payload, body = call_executor(Endpoint(path, "127.0.0.1", 1), "",
                                  WindowRequest(1, rows=[]), 10, answer_timeout=0.3)
    server.join(5)
    assert payload == {"answered": True} and body == b"meta"
