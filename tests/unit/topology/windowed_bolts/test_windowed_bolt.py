"""Windowed-bolt semantics against references computed here.

Count and time windows, sliding and tumbling, processing and event time, watermarks, late tuples,
acking and anchoring.
"""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest

from sparkstorm.topology.windowed_bolts import Count, Duration, window_conf
from tests.unit.topology.windowed_bolts.fakes import FakeCollector, Recorder, Source, attach, tick


def run_bolt(conf: dict[str, Any]) -> tuple[Recorder, FakeCollector]:
    bolt = Recorder()
    return bolt, attach(bolt, conf)


# ---- count windows, processing time -----------------------------------------------------------

@pytest.mark.parametrize(("length", "slide"), [(5, 2), (3, 3), (4, 1), (2, 3)])
def test_count_windows_match_reference(length: int, slide: int) -> None:
    bolt, collector = run_bolt(window_conf(Count(length), Count(slide)))
    source, n = Source(), 23
    tuples = [source.tuple(i) for i in range(1, n + 1)]
    for tup in tuples:
        bolt.process(tup)

    ends = list(range(slide, n + 1, slide))
    expected_windows = [list(range(max(1, k - length + 1), k + 1)) for k in ends]
    assert [w["get"] for w in bolt.windows] == expected_windows
    previous: list[int] = []
    for window, expected in zip(bolt.windows, expected_windows, strict=True):
        assert window["new"] == [v for v in expected if v not in previous]
        if length >= slide:  # the tuples that left are exactly the previous window's others
            assert window["expired"] == [v for v in previous if v not in expected]
        previous = expected
        assert window["start_ts"] is None
    # a tuple is acked once it is in no later window: after the last window, those before
    # the next window's start
    keep_from = ends[-1] + slide - length + 1
    assert sorted(t.values[0] for t in collector.acked) == list(range(1, min(keep_from,
                                                                             ends[-1] + 1)))
    # every emit from process_window is anchored to exactly its window's tuples
    assert [[a.values[0] for a in anchors] for _, _, anchors in collector.emitted] == \
        expected_windows


def test_tumbling_count_window_acks_previous_window_before_next() -> None:
    bolt, collector = run_bolt(window_conf(Count(3)))
    source = Source()
    for i in range(1, 10):
        bolt.process(source.tuple(i))
    assert [w["get"] for w in bolt.windows] == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert [w["expired"] for w in bolt.windows] == [[], [1, 2, 3], [4, 5, 6]]
    assert [w["new"] for w in bolt.windows] == [w["get"] for w in bolt.windows]
    assert sorted(t.values[0] for t in collector.acked) == list(range(1, 10))
    # acks of a window come right after its emit (its tuples left their last window)
    kinds = [kind for kind, _ in collector.log]
    assert kinds == (["emit"] + ["ack"] * 3) * 3


# ---- duration windows, processing time --------------------------------------------------------

def test_sliding_time_window_processing_time_with_ticks() -> None:
    length, slide = 1000, 300
    bolt, collector = run_bolt(window_conf(Duration(length), Duration(slide)))
    rng = random.Random(7)
    source, arrivals, clock = Source(), [], 0
    bolt.process_tick(tick())  # the first call starts the window clock at 0
    for i in range(60):
        clock += rng.choice([0, 20, 70, 150, 450])
        bolt.clock = clock
        if rng.random() < 0.2:
            bolt.process_tick(tick())
        else:
            bolt.process(source.tuple(i))
            arrivals.append((clock, i))
    bolt.clock = clock = clock + 5000
    bolt.process_tick(tick())  # late tick: every window due since fires, in order

    expected = []
    for end in range(slide, clock, slide):
        content = [i for at, i in arrivals if end - length < at <= end]
        if content:
            expected.append((end - length, end, content))
    assert [(w["start_ts"], w["end_ts"], w["get"]) for w in bolt.windows] == expected
    assert sorted(t.values[0] for t in collector.acked) == [i for _, i in arrivals]


def test_tumbling_time_window_skips_empty_windows() -> None:
    bolt, _ = run_bolt(window_conf(Duration(100)))
    source = Source()
    bolt.process_tick(tick())
    for at, value in [(10, "a"), (90, "b"), (100, "c"), (350, "d")]:
        bolt.clock = at
        bolt.process(source.tuple(value))
    bolt.clock = 1000
    bolt.process_tick(tick())
    assert [(w["end_ts"], w["get"]) for w in bolt.windows] == [(100, ["a", "b", "c"]),
                                                                 (400, ["d"])]


# ---- event time, watermarks, late tuples ------------------------------------------------------

def event_conf(**extra: Any) -> dict[str, Any]:
    return window_conf(Duration(2000), Duration(1000), timestamp_field="ts",
                       lag=Duration(500), watermark_interval=Duration(200), **extra)


def event_source() -> Source:
    return Source(fields=("ts", "value"))


def test_event_time_sliding_windows_with_watermark_and_late_stream() -> None:
    bolt, collector = run_bolt(event_conf(late_tuple_stream="late"))
    source, accepted, rng = event_source(), [], random.Random(3)
    first = [rng.randrange(1000, 5001) for _ in range(40)]
    for ts in first:  # out of order, no watermark yet: nothing is late, nothing fires
        bolt.process(source.tuple(ts, ts))
        accepted.append(ts)
    assert bolt.windows == []
    bolt.clock = 200
    bolt.process_tick(tick())  # watermark = max - lag
    watermark = max(first) - 500
    late = source.tuple(watermark - 1, "late!")
    bolt.process(late)
    at_mark = source.tuple(watermark, watermark)  # at the watermark: not late
    bolt.process(at_mark)
    accepted.append(watermark)
    second = [rng.randrange(watermark, 9001) for _ in range(30)]
    for ts in second:
        bolt.process(source.tuple(ts, ts))
        accepted.append(ts)
    bolt.clock = 400
    bolt.process_tick(tick())
    final_mark = max(accepted) - 500

    ends = range(((min(accepted) + 999) // 1000) * 1000, final_mark, 1000)
    expected = []
    for end in ends:
        content = sorted(ts for ts in accepted if end - 2000 < ts <= end)
        if content:
            expected.append((end - 2000, end, content))
    assert [(w["start_ts"], w["end_ts"], w["get"]) for w in bolt.windows] == expected
    late_emits = [(values, anchors) for stream, values, anchors in collector.emitted
                  if stream == "late"]
    assert late_emits == [([{"component": "spout", "stream": "default", "task": 1,
                             "values": [watermark - 1, "late!"], "ts": watermark - 1}], [late])]
    assert late in collector.acked
    # acked: the late one, and everything no window after the last can hold
    last_end = expected[-1][1]
    assert sorted(t.values[1] for t in collector.acked if t is not late) == \
        sorted(ts for ts in accepted if ts <= last_end + 1000 - 2000)


def test_late_tuple_without_stream_is_acked_and_dropped() -> None:
    bolt, collector = run_bolt(event_conf())
    source = event_source()
    bolt.process(source.tuple(5000, "x"))
    bolt.clock = 200
    bolt.process_tick(tick())
    late = source.tuple(100, "old")
    bolt.process(late)
    assert collector.acked == [late]
    assert all(stream != "late" for stream, _, _ in collector.emitted)


def test_watermark_waits_for_every_input_stream() -> None:
    bolt = Recorder()
    bolt.component_spec = Recorder.spec(  # type: ignore[attr-defined]
        inputs=None, window=Duration(1000), timestamp_field="ts",
        watermark_interval=Duration(100))
    object.__setattr__(bolt.component_spec, "inputs", (  # type: ignore[attr-defined]
        _Input("a", "default"), _Input("b", "default")))
    attach(bolt, window_conf(Duration(1000), timestamp_field="ts",
                             watermark_interval=Duration(100)))
    a, b = Source("a", fields=("ts", "v")), Source("b", fields=("ts", "v"))
    for ts in (1000, 2500, 4200):
        bolt.process(a.tuple(ts, ts))
    bolt.clock = 100
    bolt.process_tick(tick())
    assert bolt.windows == []  # nothing from b yet: no watermark
    bolt.process(b.tuple(2100, 2100))
    bolt.clock = 200
    bolt.process_tick(tick())  # watermark = min(4200, 2100) = 2100: windows ending below it
    assert [w["get"] for w in bolt.windows] == [[1000]]
    bolt.process(b.tuple(5000, 5000))
    bolt.clock = 300
    bolt.process_tick(tick())  # watermark = min(4200, 5000); (3000, 4000] is empty
    assert [w["get"] for w in bolt.windows] == [[1000], [2100, 2500]]


class _Input:
    def __init__(self, source: str, stream: str) -> None:
        self.source, self.stream = source, stream


def test_event_time_count_windows() -> None:
    conf = window_conf(Count(3), Count(2), timestamp_field="ts",
                       watermark_interval=Duration(10))
    bolt, collector = run_bolt(conf)
    source, rng = event_source(), random.Random(11)
    stamps = rng.sample(range(1, 200), 25)
    for ts in stamps:
        bolt.process(source.tuple(ts, ts))
    bolt.clock = 10
    bolt.process_tick(tick())
    watermark = max(stamps)
    ordered = sorted(stamps)
    ends = [k for k in range(2, len(ordered) + 1, 2) if ordered[k - 1] <= watermark]
    assert [w["get"] for w in bolt.windows] == [ordered[max(0, k - 3):k] for k in ends]
    assert [w["end_ts"] for w in bolt.windows] == [ordered[k - 1] for k in ends]


# ---- state, declaration, errors ----------------------------------------------------------------

def test_window_contents_pickle_and_resume_identically() -> None:
    conf = event_conf()
    bolt, _ = run_bolt(conf)
    source = event_source()
    for ts in (1200, 1800, 2600, 3100, 4700):
        bolt.process(source.tuple(ts, ts))
    state = pickle.dumps(bolt._windows)  # plain task state: tuples included

    twin, _ = run_bolt(conf)
    twin._windows = pickle.loads(state)
    for target in (bolt, twin):
        for ts in (4900, 5600, 7000):
            target.process(source.tuple(ts, ts))
        target.clock = 200
        target.process_tick(tick())
    assert bolt.windows and twin.windows == bolt.windows
    restored = twin._windows.entries[-1][2]
    assert restored.values.ts == 7000 and restored.anchors


def test_spec_declares_ticks_late_stream_and_storm_keys() -> None:
    spec = Recorder.spec(window=Duration.seconds(10), slide=Duration.millis(1500),
                         late_tuple_stream="late", config={"topology.tick.tuple.freq.secs": 60})
    assert spec.config["topology.bolts.window.length.duration.ms"] == 10000
    assert spec.config["topology.bolts.sliding.interval.duration.ms"] == 1500
    assert spec.config["topology.tick.tuple.freq.secs"] == 2  # ceil(1.5 s); 60 is too slow
    assert spec.stream("late") is not None and spec.stream("late").fields == ("late_tuple",)
    counted = Recorder.spec(window=Count(10))
    assert "topology.tick.tuple.freq.secs" not in counted.config  # tuples drive count slides
    event = Recorder.spec(window=Count(10), timestamp_field="ts",
                          watermark_interval=Duration(300))
    assert event.config["topology.tick.tuple.freq.secs"] == 1


@pytest.mark.parametrize("config", [
    {},
    {"topology.bolts.window.length.count": 3, "topology.bolts.window.length.duration.ms": 5},
    {"topology.bolts.window.length.count": 3, "topology.bolts.sliding.interval.count": 1,
     "topology.bolts.sliding.interval.duration.ms": 5},
])
def test_bad_window_options_are_refused(config: dict[str, Any]) -> None:
    from sparkstorm.errors import TopologyError

    with pytest.raises(TopologyError) as caught:
        Recorder.spec(config=config)
    assert caught.value.code == "WINDOW_BAD_OPTION"


def test_missing_timestamp_field_is_a_clear_error() -> None:
    from sparkstorm.errors import TopologyError

    bolt, _ = run_bolt(event_conf())
    with pytest.raises(TopologyError) as caught:
        bolt.process(Source(fields=("value",)).tuple(3))
    assert caught.value.code == "WINDOW_TIMESTAMP_MISSING"
