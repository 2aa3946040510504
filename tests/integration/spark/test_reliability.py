"""Acking, replay, timeouts and max spout pending on real Spark local mode."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    FlakyBolt,
    KeepingBolt,
    NumberSpout,
    PassBolt,
    RecordingBolt,
    SilentBolt,
    SlowBolt,
    read_events,
)


class FlakyTopology(Topology):
    numbers = NumberSpout.spec()
    flaky = FlakyBolt.spec(inputs=[numbers], par=2)
    passing = PassBolt.spec(inputs={flaky: Grouping.fields("key")}, par=2, num_tasks=3)
    sink = RecordingBolt.spec(inputs=[passing], par=2)


def _acked(tmp_path: Path) -> Counter[int]:
    return Counter(e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "ack")


def test_failed_tuples_replay_and_every_id_is_acked_exactly_once(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 400
    runner = cluster.submit_topology("flaky", FlakyTopology,
                                     conf={"test.dir": str(tmp_path), "test.count": count})
    wait_for(lambda: len(_acked(tmp_path)) == count, timeout=90, message="all acked")
    wait_for(lambda: runner.stats.summary()["components"]["numbers"]["acked"] == count,
             timeout=30, message="the last window's statistics")
    summary = runner.stats.summary()
    cluster.kill_topology("flaky")

    # failures explained: all explicit, with the failing bolt named, counted per spout
    # (a replay may reach the other flaky task, which fails it once more)
    fails = len([e for e in read_events(tmp_path, "flaky") if e["event"] == "failed"])
    spout = summary["components"]["numbers"]
    assert spout["failures_by_cause"] == {"explicit": fails, "error": 0, "timeout": 0,
                                          "crash": 0}
    assert [(r["cause"], r["reason"], r["count"]) for r in spout["failure_reasons"]] == \
        [("explicit", "flaky: fail() called", fails)]
    assert summary["components"]["flaky"]["failed"] == fails == spout["failed"]
    flaky = summary["components"]["flaky"]  # a failed tuple is not also counted as acked
    assert flaky["acked"] == flaky["executed"] - fails
    # the same figures in the 10-minute window, and per executor they add up
    assert summary["windowed"]["600"]["components"]["numbers"]["acked"] == count
    rows = summary["windowed"][":all-time"]["executors"].values()
    first = runner.plan.component_tasks["passing"][0]  # Storm's split: 3 tasks -> [2, 1]
    assert sum(r["executed"] for r in rows if r["component"] == "passing") == \
        summary["components"]["passing"]["executed"]
    assert sorted((r["first_task"], r["last_task"]) for r in rows
                  if r["component"] == "passing") == [(first, first + 1), (first + 2, first + 2)]

    acked = _acked(tmp_path)
    assert set(acked) == set(range(count))
    assert max(acked.values()) == 1, "a message id was acked twice"
    failed_first = {e["n"] for e in read_events(tmp_path, "flaky") if e["event"] == "failed"}
    assert failed_first == {n for n in range(count) if n % 10 == 3}
    spout_fails = {e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "fail"}
    assert spout_fails == failed_first, "the spout must see exactly the failed ids fail"
    sink_values = Counter(e["values"][0] for e in read_events(tmp_path, "sink")
                          if e["event"] == "tuple")
    assert set(sink_values) == set(range(count))


class TimeoutTopology(Topology):
    numbers = NumberSpout.spec()
    silent = SilentBolt.spec(inputs=[numbers])


def test_tuples_never_acked_time_out_and_replay(cluster: LocalCluster, tmp_path: Path) -> None:
    runner = cluster.submit_topology("timeouts", TimeoutTopology, conf={
        "test.dir": str(tmp_path), "test.count": 5, "topology.message.timeout.secs": 2})

    def fails_per_id() -> Counter[int]:
        return Counter(e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "fail")

    wait_for(lambda: len(fails_per_id()) == 5 and min(fails_per_id().values()) >= 2,
             timeout=60, message="every id timed out twice")

    def causes() -> dict[str, int]:
        return dict(runner.stats.summary()["components"]["numbers"]["failures_by_cause"])

    wait_for(lambda: causes()["timeout"] >= 10, timeout=30, message="timeouts counted")
    cluster.kill_topology("timeouts")
    silent = runner.stats.summary()["components"]["silent"]
    assert silent["executed"] >= 10 and silent["acked"] == 0, "SilentBolt never acks"
    assert causes()["explicit"] == causes()["error"] == causes()["crash"] == 0
    assert sum(causes().values()) == runner.stats.summary()["components"]["numbers"]["failed"]
    events = read_events(tmp_path, "numbers")
    first_emit = min(e["time"] for e in events if e["event"] == "emit" and e["n"] == 0)
    first_fail = min(e["time"] for e in events if e["event"] == "fail" and e["n"] == 0)
    assert first_fail - first_emit >= 2.0, "failed before the message timeout"
    assert not any(e["event"] == "ack" for e in events)
    emits = Counter(e["n"] for e in events if e["event"] == "emit")
    assert all(emits[n] >= 2 for n in range(5)), "timed-out tuples must be replayed"


class PendingTopology(Topology):
    numbers = NumberSpout.spec()
    slow = SlowBolt.spec(inputs=[numbers])


def test_max_spout_pending_bounds_tuples_in_flight(cluster: LocalCluster,
                                                   tmp_path: Path) -> None:
    cluster.submit_topology("pending", PendingTopology, conf={
        "test.dir": str(tmp_path), "test.count": 60, "test.delay": 0.005,
        "topology.max.spout.pending": 7})
    wait_for(lambda: len(_acked(tmp_path)) == 60, timeout=90, message="all acked")
    cluster.kill_topology("pending")
    in_flight = [e["in_flight"] for e in read_events(tmp_path, "numbers")
                 if e["event"] == "emit"]
    assert max(in_flight) == 7, "pending must reach the bound and never exceed it"


class KeepTopology(Topology):
    numbers = NumberSpout.spec()
    keeper = KeepingBolt.spec(inputs=[numbers], config={"topology.tick.tuple.freq.secs": 1})


TIMEOUT_SECS, HOLD_SECS = 3, 7
"""The spout notices a timeout at the first window after it: the 4 s between the timeout
and the keeper's ack leave room for slow windows on a busy machine."""


def _submit_warm(cluster: LocalCluster, name: str, conf: dict[str, Any]) -> Any:
    """Submit inactive and activate after a few windows.

    The first window's job starts Spark's Python workers (seconds), which would eat into the
    message timeout of the first tuples before any bolt had them.
    """
    runner = cluster.submit_topology(name, KeepTopology, conf=conf, active=False)
    wait_for(lambda: runner.window >= 3, timeout=60, message="three windows")
    cluster.activate(name)
    return runner


def test_reset_timeout_keeps_a_tuple_alive_past_the_message_timeout(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 3
    runner = _submit_warm(cluster, "reset", {
        "test.dir": str(tmp_path), "test.count": count, "test.hold": HOLD_SECS,
        "test.reset": True, "topology.message.timeout.secs": TIMEOUT_SECS})
    wait_for(lambda: len(_acked(tmp_path)) == count or any(  # a failure fails fast
        e["event"] == "fail" for e in read_events(tmp_path, "numbers")),
        timeout=60, message="all acked")
    assert not [e for e in read_events(tmp_path, "numbers") if e["event"] == "fail"], \
        "a kept tuple timed out although the bolt reset its timeout"
    wait_for(lambda: runner.stats.summary()["components"]["numbers"]["acked"] == count,
             timeout=30, message="statistics caught up")
    later = runner.window + 3  # a late timeout of an acked tree would show up here
    wait_for(lambda: runner.window >= later, timeout=30, message="three more windows")
    spout = runner.stats.summary()["components"]["numbers"]
    keeper = runner.stats.summary()["components"]["keeper"]
    cluster.kill_topology("reset")
    # process latency runs from receipt to the (late) ack; execute latency is process()
    assert keeper["process_latency_ms"] >= HOLD_SECS * 1000 > 10 * keeper["execute_latency_ms"]
    assert keeper["by_stream"]["process_latency_ms"]["numbers:default"] >= HOLD_SECS * 1000

    events = read_events(tmp_path, "numbers")
    assert not [e for e in events if e["event"] == "fail"], "a kept tuple was failed"
    assert spout["failed"] == spout["timed_out"] == 0
    assert spout["acked"] == count
    assert Counter(e["n"] for e in events if e["event"] == "emit") == dict.fromkeys(
        range(count), 1), "nothing may replay"
    assert _acked(tmp_path) == dict.fromkeys(range(count), 1)
    emitted = {e["n"]: e["time"] for e in events if e["event"] == "emit"}
    acked = {e["n"]: e["time"] for e in events if e["event"] == "ack"}
    assert all(acked[n] - emitted[n] >= HOLD_SECS > TIMEOUT_SECS for n in range(count))
    kept = read_events(tmp_path, "keeper")
    resets = Counter(e["n"] for e in kept if e["event"] == "reset")
    assert all(resets[n] >= 3 for n in range(count)), resets


# make test-all only (seconds of holds): timeouts and replays on Spark are
# test_tuples_never_acked_time_out_and_replay, when a timeout starts and that a late ack is
# ignored tests/unit/engine/test_spout_timeouts.py
@pytest.mark.slow
def test_without_reset_timeout_a_kept_tuple_times_out(cluster: LocalCluster,
                                                      tmp_path: Path) -> None:
    """The control of the test above: the same hold, no reset_timeout."""
    count = 3
    runner = _submit_warm(cluster, "noreset", {
        "test.dir": str(tmp_path), "test.count": count, "test.hold": HOLD_SECS,
        "test.reset": False, "topology.message.timeout.secs": TIMEOUT_SECS})

    def failed() -> Counter[int]:
        return Counter(e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "fail")

    wait_for(lambda: len(failed()) == count, timeout=60, message="every tuple timed out")
    wait_for(lambda: runner.stats.summary()["components"]["numbers"]["timed_out"] >= count,
             timeout=30, message="timeouts counted")
    wait_for(lambda: any(e["event"] == "acked" for e in read_events(tmp_path, "keeper")),
             timeout=30, message="the keeper acks its first tuples, too late")
    later = runner.window + 3  # the late acks reach the spout within a window or two
    wait_for(lambda: runner.window >= later, timeout=30, message="three more windows")
    spout = runner.stats.summary()["components"]["numbers"]
    cluster.kill_topology("noreset")
    assert not _acked(tmp_path), "an ack after the timeout must be ignored"
    assert spout["acked"] == 0
    assert spout["failures_by_cause"]["timeout"] == spout["timed_out"] == spout["failed"]
    events = read_events(tmp_path, "numbers")
    first_emit = {n: min(e["time"] for e in events if e["event"] == "emit" and e["n"] == n)
                  for n in range(count)}
    first_fail = {n: min(e["time"] for e in events if e["event"] == "fail" and e["n"] == n)
                  for n in range(count)}
    assert all(TIMEOUT_SECS <= first_fail[n] - first_emit[n] < HOLD_SECS
               for n in range(count))
    assert not any(e["event"] == "reset" for e in read_events(tmp_path, "keeper"))


class BufferTopology(Topology):
    numbers = NumberSpout.spec()
    sink = SlowBolt.spec(inputs=[numbers])


BUFFER = 5


@pytest.mark.parametrize(("delay", "count"), [(0.04, 60), (0.0, 100)], ids=["slow", "fast"])
def test_spout_buffer_size_bounds_tuples_in_flight_to_a_few_buffers(
    cluster: LocalCluster, tmp_path: Path, delay: float, count: int
) -> None:
    """Without max pending, the spout buffer's bound (B) is the backpressure.

    A saturated spout's windows grow past ``topology.spout.buffer.size`` up to
    ``topology.spout.buffer.max.size`` (``engine.driver.window_sizer``), so both are B here. The
    producer stops when B tuples wait for the next window. The bolts get window w's B
    tuples and ack them within w; the spout learns that when w's job ends (its verdicts are
    pushed, ``engine.driver.verdict_push``) or at the latest at the start of window w + 1, while it
    has buffered B more. So at most 2 B are in flight one window at a time, and a slow bolt
    (longer windows) makes the spout reach that bound. With overlapping windows (the
    default) window w + 1 may have taken its B before w's verdicts come: at most 3 B.
    """
    runner = cluster.submit_topology("buffer", BufferTopology, conf={
        "test.dir": str(tmp_path), "test.count": count, "test.delay": delay,
        "topology.spout.buffer.size": BUFFER, "topology.spout.buffer.max.size": BUFFER})
    wait_for(lambda: len(_acked(tmp_path)) == count, timeout=60, message="all acked")
    wait_for(lambda: runner.stats.summary()["components"]["numbers"]["acked"] == count,
             timeout=30, message="statistics caught up")
    spout = runner.stats.summary()["components"]["numbers"]
    cluster.kill_topology("buffer")
    events = read_events(tmp_path, "numbers")
    in_flight = [e["in_flight"] for e in events if e["event"] == "emit"]
    assert _acked(tmp_path) == dict.fromkeys(range(count), 1)
    assert spout["failed"] == 0 and len(in_flight) == count
    bound = (3 if runner.overlapping else 2) * BUFFER
    if delay:  # the slow bolt holds the spout at two buffers at least
        assert 2 * BUFFER <= max(in_flight) <= bound
    else:
        assert max(in_flight) <= bound


class ExactTopology(Topology):
    numbers = NumberSpout.spec(par=2, num_tasks=2)
    passing = PassBolt.spec(inputs=[numbers], par=2, num_tasks=4)
    sink = RecordingBolt.spec(inputs={passing: Grouping.fields("key")}, par=2)


def test_counts_are_exact_when_nothing_fails(cluster: LocalCluster, tmp_path: Path) -> None:
    count = 300
    cluster.submit_topology("exact", ExactTopology,
                            conf={"test.dir": str(tmp_path), "test.count": count})

    def acked() -> int:
        return sum(1 for e in read_events(tmp_path, "numbers") if e["event"] == "ack")

    wait_for(lambda: acked() == 2 * count, timeout=90, message="both spout tasks acked")
    stats: dict[str, Any] = wait_for(  # statistics arrive when the acking window's job ends
        lambda: (s := cluster.get_topology_stats("exact"))["components"]["numbers"]["acked"]
        == 2 * count and s, timeout=30, message="statistics caught up")
    cluster.kill_topology("exact")
    sink = [e for e in read_events(tmp_path, "sink") if e["event"] == "tuple"]
    assert len(sink) == 2 * count
    assert Counter(e["values"][0] for e in sink) == {n: 2 for n in range(count)}
    components = stats["components"]
    assert components["numbers"]["acked"] == 2 * count
    assert components["numbers"]["failed"] == 0
    assert components["passing"]["executed"] == 2 * count
    assert components["sink"]["executed"] == 2 * count
    assert components["numbers"]["complete_latency_ms"] > 0
