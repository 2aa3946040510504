"""Tick tuples arrive at their period, from __system on __tick; acking can be turned off."""

from __future__ import annotations

from pathlib import Path

from sparkstorm import Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, RecordingBolt, read_events


class TickTopology(Topology):
    numbers = NumberSpout.spec()
    ticked = RecordingBolt.spec(inputs=[numbers], par=2, num_tasks=2,
                                config={"topology.tick.tuple.freq.secs": 1})
    unticked = RecordingBolt.spec(inputs=[numbers])


def test_ticks_arrive_at_their_period_within_one_window(cluster: LocalCluster,
                                                        tmp_path: Path) -> None:
    runner = cluster.submit_topology("ticks", TickTopology, conf={
        "test.dir": str(tmp_path), "test.count": 10})

    def ticks() -> list[dict]:
        return [e for e in read_events(tmp_path, "ticked") if e["event"] == "tick"]

    wait_for(lambda: len(ticks()) >= 10, timeout=60, message="five ticks per task")
    cluster.kill_topology("ticks")
    events = ticks()
    assert {e["task"] for e in events} == set(runner.plan.component_tasks["ticked"])
    assert all(e["source"] == "__system" and e["stream"] == "__tick" and e["values"] == [1]
               for e in events)
    window = runner.window_seconds
    recent = runner.stats.summary()["recent_windows"]
    mean_window = sum(point["seconds"] for point in recent) / len(recent)
    slack = window + mean_window  # ticks land at the start of the first window after due
    for task in runner.plan.component_tasks["ticked"]:
        times = sorted(e["time"] for e in events if e["task"] == task)
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert all(1.0 - slack <= gap <= 1.0 + slack for gap in gaps), gaps
    assert not any(e["event"] == "tick" for e in read_events(tmp_path, "unticked"))


class Untracked(Topology):
    numbers = NumberSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


def test_with_zero_ackers_spout_tuples_are_acked_at_emit(cluster: LocalCluster,
                                                         tmp_path: Path) -> None:
    runner = cluster.submit_topology("untracked", Untracked, conf={
        "test.dir": str(tmp_path), "test.count": 50, "topology.acker.executors": 0})
    wait_for(lambda: sum(e["event"] == "tuple" for e in read_events(tmp_path, "sink")) == 50,
             timeout=60, message="all delivered")
    cluster.kill_topology("untracked")
    events = read_events(tmp_path, "numbers")
    assert sorted(e["n"] for e in events if e["event"] == "ack") == list(range(50))
    assert runner.plan.acker_tasks == []


def test_deactivate_stops_the_spouts_and_activate_resumes_them(cluster: LocalCluster,
                                                               tmp_path: Path) -> None:
    cluster.submit_topology("toggle", Untracked, conf={
        "test.dir": str(tmp_path), "test.count": 10**9, "topology.max.spout.pending": 20})

    def emitted() -> int:
        return sum(e["event"] == "emit" for e in read_events(tmp_path, "numbers"))

    wait_for(lambda: emitted() > 20, timeout=60, message="spout running")
    cluster.deactivate("toggle")
    runner = cluster.runners["toggle"]
    start = runner.window
    wait_for(lambda: runner.window >= start + 3, timeout=60, message="three more windows")
    paused = emitted()
    later = runner.window
    wait_for(lambda: runner.window >= later + 3, timeout=60, message="three more windows")
    assert emitted() == paused, "a deactivated spout must not emit"
    cluster.activate("toggle")
    wait_for(lambda: emitted() > paused, timeout=60, message="spout resumed")
    cluster.kill_topology("toggle")
