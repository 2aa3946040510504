"""The figures a raising bolt leaves.

Its execute time still counts, the rest of its window fails with the error's cause, and
failure reasons are grouped by kind and bounded.
"""

from __future__ import annotations

import string
import tracemalloc

import pytest

from sparkstorm.engine.driver.topology_stats import ExecutorRange, TopologyStats, WindowRecord
from sparkstorm.engine.executor.collector import FAIL_ERROR
from sparkstorm.engine.executor.host import ComponentFailure
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.stats import (
    MAX_FAILURE_REASONS,
    OTHER_REASONS,
    ComponentCounters,
    reason_template,
)
from tests.unit.engine.helpers import RaisingTopology, raiser_executor, raiser_window


def test_a_bolt_raising_in_every_window_still_has_execute_latency_and_capacity() -> None:
    host, task, src = raiser_executor()
    try:
        for window in range(3):
            with pytest.raises(ComponentFailure):
                host.run_window(raiser_window(task, src, ["a", "b", "boom", "c"], window * 10))
            host.output.take()
            stats = host.take_stats()
            # "a", "b" and the raising "boom" (executed, then failed), not "c"
            assert stats.executed == {"words:default": 3}
            # before the fix: 0 busy time although tuples were executed
            assert stats.busy_ms >= 3 * 2.0, stats
    finally:
        host.close()
    summary = stats.summary(seconds=1.0)
    assert summary["execute_latency_ms"] is not None and summary["execute_latency_ms"] >= 2.0
    assert summary["capacity"] is not None and summary["capacity"] > 0


def test_the_rest_of_a_window_after_an_error_fails_with_that_error_not_as_a_crash() -> None:
    host, task, src = raiser_executor()
    try:
        with pytest.raises(ComponentFailure):
            host.run_window(raiser_window(task, src, ["a", "boom", "c", "d", "e"], 100))
        failed = host.output.take().failed
    finally:
        host.close()
    assert set(failed) == {101, 102, 103, 104}, "the raising tuple and the rest of the window"
    causes = {cause for cause, _ in failed.values()}
    reasons = {reason for _, reason in failed.values()}
    assert causes == {FAIL_ERROR}
    assert reasons == {"raiser: ValueError: cannot take 'boom'"}


def test_reasons_are_grouped_by_kind_with_first_and_last_seen_newest_first() -> None:
    early = ComponentCounters(fail_causes={("explicit", "split: no word 'x' in line 7"): 2,
                                           ("explicit", "split: no word 'y' in line 9"): 1,
                                           ("timeout", "message timed out"): 3})
    for seen in early.fail_seen.values():
        seen.first = seen.last = 100.0
    late = ComponentCounters(fail_causes={("error", "count: KeyError: 'zz'"): 3,
                                          ("explicit", "split: no word 'q' in line 12"): 1})
    for seen in late.fail_seen.values():
        seen.first = seen.last = 200.0
    total = ComponentCounters()
    total.add(early)
    total.add(late)
    reasons = total.failure_reasons()
    assert [(r["cause"], r["reason"], r["count"]) for r in reasons] == [
        ("explicit", "split: no word '…' in line <n>", 4),
        ("error", "count: KeyError: '…'", 3),  # as many as the timeouts, seen later
        ("timeout", "message timed out", 3)]
    assert (reasons[0]["firstSeen"], reasons[0]["lastSeen"]) == (100.0, 200.0)
    assert reasons[0]["example"] == "split: no word 'q' in line 12"


def _distinct(n: int) -> str:
    """A reason no template folds: ``n`` written in letters."""
    letters = ""
    while True:
        n, digit = divmod(n, 26)
        letters += string.ascii_lowercase[digit]
        if not n:
            return f"picky: refuses {letters}"


def _one_window(stats: TopologyStats, window: int, first: int, count: int) -> None:
    raw = {("explicit", _distinct(n)): 1 for n in range(first, first + count)}
    spout = ComponentCounters(failed={"default": count}, fail_causes=raw)
    stats.record(WindowRecord(window, 1000.0 + window, 1.0, {"words": spout}, {0: spout}))


@pytest.mark.slow  # about 15 s: tracemalloc follows a million allocations
def test_a_million_distinct_failure_reasons_keep_memory_bounded() -> None:
    stats = TopologyStats(10, {0: ExecutorRange("words", 1, 1)})
    per_window, windows = 20_000, 50  # one million distinct reasons in all
    tracemalloc.start()
    try:
        for window in range(5):
            _one_window(stats, window, window * per_window, per_window)
        after_few = tracemalloc.get_traced_memory()[0]
        for window in range(5, windows):
            _one_window(stats, window, window * per_window, per_window)
        after_all = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # 45 more windows of 20,000 new reasons each: kept memory does not grow with them
    assert after_all - after_few < 256 * 1024, (after_few, after_all)
    totals = stats.totals["words"]
    assert len(totals.fail_causes) <= MAX_FAILURE_REASONS + 1
    assert totals.fail_causes[("explicit", OTHER_REASONS)] == \
        per_window * windows - MAX_FAILURE_REASONS
    assert sum(totals.fail_causes.values()) == per_window * windows
    for window in stats.rolling.windows.values():
        for _, bucket in window.buckets:
            assert len(bucket["words"].fail_causes) <= MAX_FAILURE_REASONS + 1
    summary = stats.summary(now=1000.0 + windows)
    assert len(summary["components"]["words"]["failure_reasons"]) <= 20
    assert summary["components"]["words"]["failures_by_cause"]["explicit"] == \
        per_window * windows


def test_reason_template_folds_data_only() -> None:
    assert reason_template("x: ValueError: id 0x1f and 12.5 ms, 'a' \"b\"") == \
        "x: ValueError: id <n> and <n> ms, '…' '…'"
    assert reason_template("message timed out") == "message timed out"
    # reasons cut to 300 characters: the same kind whatever their data's length
    long_ones = {reason_template(f"picky: ValueError: word{n}: {'x' * 400}"[:300])
                 for n in (7, 12345)}
    assert len(long_ones) == 1 and len(long_ones.pop()) <= 160


def test_a_spout_reports_its_buffer_fill_against_its_bound() -> None:
    from sparkstorm.engine.executor.spout import SpoutExecutor
    from sparkstorm.engine.wire.messages import SpoutControl, WindowMeta

    plan = ExecutionPlan(RaisingTopology.topology_spec, {"topology.acker.executors": 1,
                                                         "topology.spout.buffer.size": 50})
    gid = next(e.gid for e in plan.executors if e.component == "words")
    host = SpoutExecutor(plan, gid, "t")
    try:
        collector = host.collectors[plan.executors[gid].tasks[0]]
        for n in range(7):
            collector.emit([f"w{n}"], None, None, None, False, n)
        taken = host.run_window(SpoutControl())
        encoded = host.encode_rows(taken)  # as the executor's server: rows, then the meta
        stats = WindowMeta.decode(host.window_meta(taken).encode()).stats
        after = host.take_stats()
    finally:
        host.close()
    assert (stats.buffered, stats.buffer_bound) == (7, 50), "carried through the wire"
    # the window sizer's byte cap learns the bytes per tuple from these
    assert stats.buffered_bytes == sum(map(len, encoded.values())) > 7
    assert after.buffered_bytes == 0, "reported once"
    fullest = ComponentCounters(buffered=3, buffer_bound=50)
    fullest.add(stats)
    assert fullest.summary()["buffered_max"] == 7
    assert fullest.brief(1.0)["buffered"] == 7
