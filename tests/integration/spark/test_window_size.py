"""The window size follows load: a lightly loaded topology answers well under its target."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    NumberSpout,
    PacedNumberSpout,
    PassBolt,
    RecordingBolt,
    read_events,
)

TARGET_MS = 3000
WINDOW_MS = 1800
"""``topology.window.ms``: the fixed run's period; the adaptive one runs TARGET_MS / 4."""
ADAPTIVE_PERIOD_SECONDS = TARGET_MS / 4 / 1000
COUNT, RATE = 161, 20.0
"""A light load: 20 tuples/s for 8 s (after one warm-up tuple), a few dozen per window."""


class PacedTopology(Topology):
    numbers = PacedNumberSpout.spec()
    passing = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[passing])


def _run(cluster: LocalCluster, tmp_path: Path, name: str, target_ms: int) -> dict[str, Any]:
    """Run the paced topology until every number is acked; its spout's statistics."""
    folder = tmp_path / name
    folder.mkdir()
    runner = cluster.submit_topology(name, PacedTopology, conf={
        "test.dir": str(folder), "test.count": COUNT, "test.rate": RATE,
        "topology.window.ms": WINDOW_MS, "topology.window.target.latency.ms": target_ms})
    try:
        wait_for(lambda: runner.stats.summary()["components"].get("numbers", {}).get("acked")
                 == COUNT,
                 timeout=120, message=f"{name}: every number acked")
        summary = runner.stats.summary()
    finally:
        cluster.kill_topology(name)
    acks = Counter(e["n"] for e in read_events(folder, "numbers") if e["event"] == "ack")
    assert acks == Counter(range(COUNT))  # exactly once each, nothing failed or replayed
    assert summary["components"]["numbers"]["failed"] == 0
    return _second_half_latency(summary["recent_windows"])


def _second_half_latency(windows: list[dict[str, Any]]) -> dict[str, float]:
    """The spout's complete latency over the windows that acked the second half.

    p50: the acked-weighted median of the windows' p50; p99: the worst window's p99.
    """
    acked, p50s, p99s, jobs = 0, [], [], []
    for record in windows:
        spout = record["components"].get("numbers") or {}
        if acked >= COUNT // 2 and spout.get("acked"):
            p50s.extend([spout["complete_latency_p50_ms"]] * spout["acked"])
            p99s.append(spout["complete_latency_p99_ms"])
            jobs.append(round(record["seconds"], 2))
        acked += spout.get("acked", 0)
    assert acked == COUNT, "the statistics kept every window of the run"
    return {"p50": statistics.median(p50s), "p99": max(p99s), "job_seconds": jobs}


# slow (CI budget, 31 s): unit/engine/test_window_size.py keeps the light-load period in make test
@pytest.mark.slow
def test_light_load_answers_well_under_the_target_and_sooner_than_fixed_windows(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    adaptive = _run(cluster, tmp_path, "paced-adaptive", TARGET_MS)
    fixed = _run(cluster, tmp_path, "paced-fixed", 0)
    if statistics.median(adaptive["job_seconds"]) > ADAPTIVE_PERIOD_SECONDS:
        # latency is then set by the job time in both runs (seen at load average 39 on 2
        # cores); exact acking was checked above
        pytest.skip(f"machine too loaded: window jobs took {adaptive['job_seconds']} s, "
                    f"longer than the adaptive period {ADAPTIVE_PERIOD_SECONDS} s")
    well_under = 0.6 * TARGET_MS
    assert adaptive["p50"] < well_under, adaptive
    assert adaptive["p99"] < TARGET_MS, adaptive
    # a tuple waits about half a period for its window: the sizer's shorter periods answer
    # in well under the fixed windows' time (their p50 was past 0.6 x the target while
    # verdicts rode the next window; pushed at once they answer in about half a period)
    assert adaptive["p50"] < 0.6 * fixed["p50"], (adaptive, fixed)


class FloodTopology(Topology):
    numbers = NumberSpout.spec()
    passing = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[passing])


FLOOD_COUNT, FLOOD_BUFFER, FLOOD_MAX = 12_000, 300, 3000
"""An unthrottled spout: saturated, its windows grow past the buffer size to the cap."""


def _flood(cluster: LocalCluster, tmp_path: Path, name: str, conf: dict[str, Any],
           count: int = FLOOD_COUNT) -> list[int]:
    """Run the flood until every number is acked exactly once; each window's hand-over."""
    folder = tmp_path / name
    folder.mkdir()
    runner = cluster.submit_topology(name, FloodTopology, conf={
        "test.dir": str(folder), "test.count": count,
        "topology.spout.buffer.size": FLOOD_BUFFER,
        "topology.spout.buffer.max.size": FLOOD_MAX,
        # jobs seen above a tenth of the timeout stop the growth; on a loaded test machine
        # they take seconds: the timeout is long here so that growth is what is tested
        "topology.message.timeout.secs": 600, **conf})
    try:
        wait_for(lambda: runner.stats.summary()["components"].get("numbers", {}).get("acked")
                 == count, timeout=300, message=f"{name}: every number acked")
        windows = runner.stats.summary()["recent_windows"]
    finally:
        cluster.kill_topology(name)
    acks = Counter(e["n"] for e in read_events(folder, "numbers") if e["event"] == "ack")
    assert acks == Counter(range(count))
    return [int((w["components"].get("numbers") or {}).get("buffered", 0)) for w in windows]


def test_a_saturated_spout_grows_its_windows_past_the_buffer_size_up_to_the_cap(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    grown = _flood(cluster, tmp_path, "flood-sizer", {"topology.window.target.latency.ms": 1000})
    fixed = _flood(cluster, tmp_path, "flood-fixed", {"topology.window.target.latency.ms": 0})
    assert FLOOD_BUFFER < max(grown) <= FLOOD_MAX, grown
    assert max(fixed) <= FLOOD_BUFFER, fixed


def test_the_automatic_pending_bound_keeps_exact_acking(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    handed = _flood(cluster, tmp_path, "flood-pending", {
        "topology.window.target.latency.ms": 1000, "topology.spout.pending.auto": True},
        count=4000)
    assert max(handed) <= FLOOD_MAX, handed
