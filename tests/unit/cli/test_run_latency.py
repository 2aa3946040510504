"""The latency ``sparkstorm run`` shows: recent windows live, the run apart from its start.

A short run's all-time latency is mostly its start-up (cold JVM jobs, the window sizer's
first guesses), so the live line shows the recent windows' latency and the summary adds the
figures since :meth:`TopologyStats.mark` (half-way through ``--time``).
"""

from __future__ import annotations

import re

from sparkstorm.cli.run import latency_lines, progress_line, recent_latency
from sparkstorm.engine.driver.topology_stats import TopologyStats, WindowRecord
from sparkstorm.engine.wire.stats import ComponentCounters


def _spout_window(latency_ms: float, acked: int) -> ComponentCounters:
    return ComponentCounters(emitted={"default": acked}, acked={"default": acked},
                             complete_count=acked, complete_total_ms=latency_ms * acked,
                             complete_values=[latency_ms] * min(acked, 100),
                             complete_ms={"default": latency_ms * acked})


def _record(stats: TopologyStats, window: int, latency_ms: float, acked: int) -> None:
    stats.record(WindowRecord(window, 100.0 + window, 1.0,
                              {"words": _spout_window(latency_ms, acked)}, {}))


def test_the_summary_tells_the_run_since_the_mark_apart_from_its_start_up() -> None:
    stats = TopologyStats(5)
    for window in range(4):  # start-up: slow windows
        _record(stats, window, 3000.0, 1000)
    stats.mark()
    for window in range(4, 10):
        _record(stats, window, 400.0, 1000)
    summary = stats.summary()
    lines = latency_lines(summary, marked_after=15.0)
    whole = re.search(r"words, whole run \(start-up included\): complete latency p50 ([\d,]+) "
                      r"ms, p99 [\d,]+ ms, mean ([\d,]+) ms over 10,000 acked", lines[0])
    later = re.search(r"words, from 15 s on: complete latency p50 ([\d,]+) ms, p99 ([\d,]+) ms,"
                      r" mean ([\d,]+) ms over 6,000 acked", lines[1])
    assert whole and later, lines
    assert whole.group(2) == "1,440", "the whole run's mean: 4 windows at 3 s, 6 at 0.4 s"
    assert later.groups() == ("400", "400", "400"), "only the windows after the mark"


def test_without_a_mark_only_the_whole_run_is_told() -> None:
    stats = TopologyStats(5)
    _record(stats, 0, 500.0, 10)
    lines = latency_lines(stats.summary())
    assert len(lines) == 1 and "whole run" in lines[0]


def test_the_live_line_shows_the_recent_windows_latency_weighted_by_acks() -> None:
    stats = TopologyStats(2)  # keeps the last two windows
    _record(stats, 0, 9000.0, 1000)  # rolled out of the recent windows
    _record(stats, 1, 1000.0, 100)
    _record(stats, 2, 100.0, 900)
    summary = stats.summary()
    assert recent_latency(summary["recent_windows"]) == 190.0
    assert "complete latency 190 ms" in progress_line(summary, 3.0)
    assert recent_latency([]) is None


def test_the_live_line_leaves_out_windows_older_than_its_few_seconds() -> None:
    stats = TopologyStats(100)
    _record(stats, 0, 9000.0, 1000)  # started at 100 s: 10 s before the newest
    _record(stats, 9, 300.0, 100)
    _record(stats, 10, 100.0, 100)
    assert "complete latency 200 ms" in progress_line(stats.summary(), 11.0)


def test_the_steady_throughput_leaves_out_the_start_and_the_drain() -> None:
    from sparkstorm.cli.run import SteadyThroughput
    line = SteadyThroughput(14.5, 28.7, 239_310, 616_659).line()
    assert line == ("throughput from 14 s until the spouts stopped at 29 s: 26,574 acked "
                    "tuples/s")
    assert SteadyThroughput(15.0, 15.0, 10, 10).line().endswith(": 0 acked tuples/s")
