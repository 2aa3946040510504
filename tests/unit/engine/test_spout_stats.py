"""A spout executor counts acks, fails and complete latencies by the stream of each root.

The stream is the one each tree's root was emitted on (Storm's per-stream spout statistics).
"""

from __future__ import annotations

import time

from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.messages import SpoutControl
from tests.unit.engine.helpers import pipeline


def test_acks_fails_and_latencies_are_kept_per_stream() -> None:
    plan = ExecutionPlan(pipeline(), {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "sentences")
    host = SpoutExecutor(plan, gid, "t")
    try:
        task = plan.executors[gid].tasks[0]
        collector = host.collectors[task]
        roots = {}
        for msg_id, stream, values in (("d1", None, ["a b"]), ("s1", "side", ["x"]),
                                       ("s2", "side", ["y"])):
            before = set(collector.pending_roots)
            collector.emit(values, stream, None, None, False, msg_id)
            (roots[msg_id],) = set(collector.pending_roots) - before
        tup_id, _, stream = collector.pending_roots[roots["s1"]]
        collector.pending_roots[roots["s1"]] = (tup_id, time.monotonic() - 2.0, stream)

        host.run_window(SpoutControl(ack=[roots["d1"], roots["s1"]], fail=[roots["s2"]]))
        stats = host.take_stats()
    finally:
        host.close()

    assert stats.acked == {"default": 1, "side": 1}
    assert stats.failed == {"side": 1}
    by_stream = stats.complete_ms
    assert by_stream["side"] >= 2000 > by_stream["default"]
    assert stats.complete_count == 2
    assert stats.fail_causes == {("explicit", "failed (reason not reported)"): 1}
    latencies = stats.summary()["by_stream"]["complete_latency_ms"]
    assert latencies["side"] >= 2000 > latencies["default"]


def test_a_late_verdict_is_ignored_and_an_ack_that_raises_fails_only_itself() -> None:
    plan = ExecutionPlan(pipeline(), {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "sentences")
    host = SpoutExecutor(plan, gid, "t")
    try:
        task = plan.executors[gid].tasks[0]
        collector = host.collectors[task]
        instance = host.instances[task]
        seen: list[str] = []

        def ack(msg_id: str) -> None:
            if msg_id == "bad":
                msg = "ack of bad"
                raise ValueError(msg)
            seen.append(msg_id)
        instance.ack = ack
        roots = {}
        for msg_id in ("bad", "good"):
            collector.emit(["w"], None, None, None, False, msg_id)
            (roots[msg_id],) = [r for r, entry in collector.pending_roots.items()
                                if entry[0] == msg_id]
        host.run_window(SpoutControl(ack=[12345, roots["bad"], roots["good"]]))
        stats = host.take_stats()
    finally:
        host.close()
    assert seen == ["good"]
    assert stats.acked == {"default": 2}
    assert host.must_restart
    assert "ack of bad" in host.errors[0].error
    assert not collector.pending_roots
