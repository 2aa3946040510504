"""A spout executor times out trees oldest first, stopping at the first one still in time.

``SpoutExecutor._expire`` reads ``pending_roots`` from its front only, so that order must
hold: a reset moves its tree to the end, a restored executor puts its trees oldest first.
"""

from __future__ import annotations

import time

from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, RestorePoint
from sparkstorm.engine.executor.factory import make_executor
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.messages import SpoutControl
from tests.unit.engine.helpers import pipeline

TIMEOUT_SECS = 30


def _plan() -> tuple[ExecutionPlan, int]:
    plan = ExecutionPlan(pipeline(), {"topology.acker.executors": 1,
                                      "topology.message.timeout.secs": TIMEOUT_SECS})
    gid = next(e.gid for e in plan.executors if e.component == "sentences")
    return plan, gid


def _failed_ids(host: SpoutExecutor, task: int) -> list[str]:
    failed: list[str] = []
    host.instances[task].fail = failed.append
    return failed


def test_a_reset_tree_outlives_the_trees_emitted_after_it() -> None:
    plan, gid = _plan()
    host = SpoutExecutor(plan, gid, "t")
    try:
        task = plan.executors[gid].tasks[0]
        collector = host.collectors[task]
        for msg_id in ("first", "second", "third"):
            collector.emit(["w"], None, None, None, False, msg_id)
        # all three emitted a timeout and more ago, in emit order
        long_ago = time.monotonic() - TIMEOUT_SECS - 10
        collector.pending_roots = {root: (msg_id, long_ago + i, stream) for i, (root, (
            msg_id, _, stream)) in enumerate(collector.pending_roots.items())}
        first = next(r for r, entry in collector.pending_roots.items() if entry[0] == "first")
        failed = _failed_ids(host, task)

        host.run_window(SpoutControl(reset=[first]))  # resets come before the expiry
        stats = host.take_stats()
    finally:
        host.close()

    assert failed == ["second", "third"]
    assert stats.timed_out == 2
    assert [entry[0] for entry in collector.pending_roots.values()] == ["first"]


def test_a_restored_spout_times_out_its_oldest_trees_whatever_order_they_were_saved_in(
        ) -> None:
    plan, gid = _plan()
    task = plan.executors[gid].tasks[0]
    young, old = 11, 22
    saved = {task: {young: ("young", 1.0, "default"),
                    old: ("old", TIMEOUT_SECS + 5.0, "default")}}
    host = make_executor(plan, gid, "t", RestorePoint(3, ExecutorPart({}, saved)))
    assert isinstance(host, SpoutExecutor)
    try:
        failed = _failed_ids(host, task)
        host.run_window(SpoutControl())
        stats = host.take_stats()
    finally:
        host.close()

    assert failed == ["old"]
    assert stats.timed_out == 1
    assert list(host.collectors[task].pending_roots) == [young]
