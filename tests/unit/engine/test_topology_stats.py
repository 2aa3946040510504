"""TopologyStats: rolling windows, per-executor rows, capacity and failure causes."""

from __future__ import annotations

from sparkstorm.engine.driver.rolling import RollingWindows
from sparkstorm.engine.driver.topology_stats import ExecutorRange, TopologyStats, WindowRecord
from sparkstorm.engine.wire.stats import ComponentCounters

RANGES = {0: ExecutorRange("spout", 1, 1), 1: ExecutorRange("bolt", 2, 3),
          2: ExecutorRange("bolt", 4, 4)}


def _bolt(executed: int, busy_ms: float) -> ComponentCounters:
    return ComponentCounters(executed={"spout:default": executed},
                             acked={"spout:default": executed}, busy_ms=busy_ms)


def _record(stats: TopologyStats, window: int, at: float, executors: dict[int, int],
            busy_ms: float = 0.0) -> None:
    by_executor = {gid: _bolt(n, busy_ms) for gid, n in executors.items()}
    component = ComponentCounters()
    for counters in by_executor.values():
        component.add(counters)
    stats.record(WindowRecord(window, at, 1.0, {"bolt": component}, by_executor))


def test_windows_roll_and_all_time_keeps_everything() -> None:
    stats = TopologyStats(10, RANGES)
    stats.started = 0.0
    _record(stats, 0, 100.0, {1: 5, 2: 1})
    _record(stats, 1, 1000.0, {1: 7})
    summary = stats.summary(now=1001.0)
    windowed = summary["windowed"]
    assert windowed[":all-time"]["components"]["bolt"]["executed"] == 13
    assert windowed["600"]["components"]["bolt"]["executed"] == 7, "window 0 rolled out"
    assert windowed["10800"]["components"]["bolt"]["executed"] == 13
    assert summary["components"] == windowed[":all-time"]["components"]
    rows = windowed[":all-time"]["executors"]
    assert {gid: (r["first_task"], r["last_task"], r["executed"]) for gid, r in rows.items()} \
        == {"1": (2, 3, 12), "2": (4, 4, 1)}
    assert set(windowed["600"]["executors"]) == {"1"}


def test_a_regrouped_executor_id_does_not_inherit_another_executors_history() -> None:
    """After a rebalance -e, gid 2 runs other tasks: its row starts afresh (issue 31)."""
    stats = TopologyStats(10, RANGES)
    stats.started = 0.0
    _record(stats, 0, 100.0, {1: 5, 2: 8})
    # bolt regrouped into one executor (tasks 2-4) as gid 1; gid 2 is gone
    stats.executor_ranges = {0: ExecutorRange("spout", 1, 1), 1: ExecutorRange("bolt", 2, 4)}
    _record(stats, 1, 101.0, {1: 3})
    for window in (":all-time", "600"):
        rows = stats.summary(now=102.0)["windowed"][window]["executors"]
        assert {gid: (r["first_task"], r["last_task"], r["executed"])
                for gid, r in rows.items()} == {"1": (2, 4, 3)}, window
    assert stats.summary(now=102.0)["components"]["bolt"]["executed"] == 16, "totals stay"


def test_capacity_is_the_busiest_executor_s_share_of_the_window() -> None:
    stats = TopologyStats(10, RANGES, window_seconds=0.5)
    stats.started = 0.0
    _record(stats, 0, 99.0, {1: 10, 2: 10}, busy_ms=300.0)
    _record(stats, 1, 100.0, {1: 10}, busy_ms=450.0)
    summary = stats.summary(now=200.0)
    executors = summary["windowed"]["600"]["executors"]
    assert executors["1"]["capacity"] == (300.0 + 450.0) / 200_000.0
    assert summary["windowed"]["600"]["components"]["bolt"]["capacity"] == \
        executors["1"]["capacity"]
    recent = summary["recent_windows"]
    assert [r["window"] for r in recent] == [0, 1]
    assert recent[1]["components"]["bolt"]["capacity"] == 450.0 / 1000.0
    assert recent[1]["components"]["bolt"]["inputs"] == {"spout:default": 10}


def test_failures_are_counted_by_cause_and_reason() -> None:
    counters = ComponentCounters(fail_causes={("explicit", "count: bad word"): 3,
                                              ("timeout", "message timed out"): 5})
    more = ComponentCounters(fail_causes={("explicit", "count: bad word"): 1,
                                          ("crash", "a window's job failed"): 2})
    counters.add(more)
    summary = counters.summary()
    assert summary["failures_by_cause"] == {"explicit": 4, "error": 0, "timeout": 5,
                                            "crash": 2}
    first = summary["failure_reasons"][0]
    assert (first["cause"], first["reason"], first["count"]) == \
        ("timeout", "message timed out", 5)
    assert [r["count"] for r in summary["failure_reasons"]] == [5, 4, 2]


def test_rolling_windows_keep_only_their_length() -> None:
    rolling = RollingWindows()
    for minute in range(30):
        rolling.add(minute * 60.0, {"s": ComponentCounters(emitted={"default": 1})})
    now = 29 * 60.0
    assert rolling.totals(600, now)["s"].emitted["default"] in (10, 11)  # 30 s buckets
    assert rolling.totals(10800, now)["s"].emitted["default"] == 30
    assert all(len(w.buckets) <= 22 for w in rolling.windows.values()), "old buckets dropped"
