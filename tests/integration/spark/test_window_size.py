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


def test_light_load_answers_well_under_the_target_where_fixed_windows_do_not(
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
    assert fixed["p50"] > well_under, fixed
