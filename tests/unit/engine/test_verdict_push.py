"""The acker's verdicts pushed to spout executors between windows (``engine.driver.verdict_push``).

Real executor servers of the word count's two spout executors over real Unix sockets; the
driver's side is ``push_verdicts`` with ``call_executor`` as its transport, as the pool's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.engine.driver.acker import Verdicts
from sparkstorm.engine.driver.verdict_push import push_verdicts, push_window_end
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.main import ExecutorServer
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import call_executor
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.failures import FAIL_EXPLICIT, Failure
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.engine.wire.protocol import Request, VerdictsRequest
from tests.unit.engine.helpers import pipeline

BROKEN = Failure(FAIL_EXPLICIT, "the sink refused it")


class Servers:
    """One executor server per executor of the word count, and a pool-like ``call``."""

    def __init__(self, tmp_path: Path, conf: dict[str, Any] | None = None) -> None:
        self.plan = ExecutionPlan(pipeline(), conf or {"topology.acker.executors": 1})
        self.spouts = [e.gid for e in self.plan.executors if e.component == "sentences"]
        self.bolt = next(e.gid for e in self.plan.executors if e.component == "split")
        self.servers: dict[int, ExecutorServer] = {}
        self.threads: list[threading.Thread] = []
        self.tmp_path = tmp_path
        for gid in [*self.spouts, self.bolt]:
            host = (SpoutExecutor(self.plan, gid, "push") if gid in self.spouts
                    else BoltExecutor(self.plan, gid, "push"))
            server = ExecutorServer(host, str(tmp_path / f"{gid}.sock"))
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            self.servers[gid] = server
            self.threads.append(thread)
        self.acked: dict[int, list[Any]] = {gid: [] for gid in self.spouts}
        self.failed: dict[int, list[Any]] = {gid: [] for gid in self.spouts}

    def call(self, gid: int, request: Request, timeout: float) -> Any:
        endpoint = Endpoint(str(self.tmp_path / f"{gid}.sock"), "127.0.0.1", 1)
        return call_executor(endpoint, "", request, timeout, answer_timeout=timeout)[0]

    def spout(self, gid: int) -> SpoutExecutor:
        host = self.servers[gid].host
        assert isinstance(host, SpoutExecutor)
        return host

    def emit(self, gid: int, msg_ids: list[str]) -> dict[str, int]:
        """Emit one tuple per message id from spout executor ``gid``; their roots by id."""
        host = self.spout(gid)
        (task,) = self.plan.executors[gid].tasks
        collector, instance = host.collectors[task], host.instances[task]
        instance.ack = self.acked[gid].append
        instance.fail = self.failed[gid].append
        for msg_id in msg_ids:
            collector.emit(["a sentence"], None, None, None, False, msg_id)
        return {entry[0]: root for root, entry in collector.pending_roots.items()}

    def close(self) -> None:
        for server in self.servers.values():
            server._shutdown()
        for thread in self.threads:
            thread.join(5)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    running = Servers(tmp_path)
    try:
        yield running
    finally:
        running.close()


def _task(servers: Servers, gid: int) -> int:
    (task,) = servers.plan.executors[gid].tasks
    return task


def test_each_spout_executor_acks_and_fails_its_own_tuples_at_once(servers: Servers) -> None:
    first, second = servers.spouts
    roots = {gid: servers.emit(gid, [f"{gid}-a", f"{gid}-b"]) for gid in servers.spouts}
    verdicts = Verdicts()
    verdicts.ack[_task(servers, first)].extend([roots[first]["0-a"], roots[first]["0-b"]])
    verdicts.ack[_task(servers, second)].append(roots[second]["1-a"])
    verdicts.fail[_task(servers, second)].append(roots[second]["1-b"])
    verdicts.reasons[roots[second]["1-b"]] = BROKEN

    left = push_verdicts(servers.call, servers.plan, servers.spouts, verdicts)

    assert not (left.ack or left.fail or left.reset or left.reasons)
    assert servers.acked == {first: ["0-a", "0-b"], second: ["1-a"]}
    assert servers.failed == {first: [], second: ["1-b"]}
    stats = servers.spout(second).take_stats()
    assert stats.acked == {"default": 1}
    assert stats.fail_causes == {(BROKEN.cause, BROKEN.reason): 1}
    assert not servers.spout(first).collectors[_task(servers, first)].pending_roots


def test_a_verdict_heard_again_with_the_next_window_is_ignored(servers: Servers) -> None:
    (gid, _) = servers.spouts
    roots = servers.emit(gid, ["x", "y"])
    verdicts = Verdicts()
    verdicts.ack[_task(servers, gid)].append(roots["x"])
    push_verdicts(servers.call, servers.plan, [gid], verdicts)

    servers.spout(gid).run_window(SpoutControl(ack=[roots["x"]], fail=[roots["x"]]))

    assert servers.acked[gid] == ["x"]
    assert servers.failed[gid] == []
    assert list(servers.spout(gid).collectors[_task(servers, gid)].pending_roots) == [
        roots["y"]]


def test_verdicts_an_executor_does_not_take_now_wait_for_the_next_window(
        servers: Servers) -> None:
    first, second = servers.spouts
    roots = servers.emit(first, ["kept"])
    servers.servers[second]._shutdown()  # its socket is gone: the call fails
    verdicts = Verdicts()
    verdicts.ack[_task(servers, first)].append(roots["kept"])
    verdicts.fail[_task(servers, second)].append(77)
    verdicts.reasons[77] = BROKEN
    verdicts.reset[999].append(78)  # a task no executor pushed to holds

    left = push_verdicts(servers.call, servers.plan, servers.spouts, verdicts, timeout=0.5)

    assert servers.acked[first] == ["kept"]
    assert dict(left.ack) == {}
    assert dict(left.fail) == {_task(servers, second): [77]}
    assert left.reasons == {77: BROKEN}
    assert dict(left.reset) == {999: [78]}


def test_an_executor_without_a_spout_refuses_verdicts_and_keeps_them_for_later(
        servers: Servers) -> None:
    verdicts = Verdicts()
    verdicts.ack[_task(servers, servers.spouts[0])].append(5)

    left = push_verdicts(servers.call, servers.plan, [servers.bolt], verdicts, timeout=2.0)

    assert dict(left.ack) == dict(verdicts.ack)  # not an executor of that task: kept
    with pytest.raises(Exception, match="runs no spout"):
        servers.call(servers.bolt, VerdictsRequest(SpoutControl(ack=[5]).to_wire()), 2.0)


def test_under_checkpoint_reliability_spouts_hear_that_a_window_ended(tmp_path: Path) -> None:
    servers = Servers(tmp_path, {"topology.reliability": "checkpoint"})
    try:
        first, second = servers.spouts
        for gid in servers.spouts:
            servers.emit(gid, [f"{gid}-a", f"{gid}-b"])
            servers.spout(gid).run_window(SpoutControl(), None, 4)  # window 4 takes them
        books = {gid: servers.spout(gid).commit_acks for gid in servers.spouts}
        assert {gid: book.in_flight(_task(servers, gid)) for gid, book in books.items()
                if book is not None} == {first: 2, second: 2}
        servers.servers[second]._shutdown()  # it hears it with the next window instead

        push_window_end(servers.call, servers.spouts, 4, timeout=0.5)

        assert {gid: book.in_flight(_task(servers, gid)) for gid, book in books.items()
                if book is not None} == {first: 0, second: 2}
        assert servers.acked[first] == []  # ack waits for the checkpoint's commit
    finally:
        servers.close()
