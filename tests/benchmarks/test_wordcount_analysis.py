"""benchmarks/wordcount.py's analysis of a run, without Spark: a run without acking too."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from wordcount import COUNT, SPOUT, Run, analyse


def _run(latency: bool) -> Run:
    run = Run()
    run.submitted, run.started, run.finished = 0.0, 1.0, 11.0
    acked = 0
    for w in range(10):
        acked += 100
        spout = {"acked": 100}
        if latency:
            spout |= {"complete_latency_p50_ms": 40.0 + w, "complete_latency_p99_ms": 90.0,
                      "complete_latency_ms": 45.0}
        run.windows[w] = {"window": w, "started": 1.0 + w, "seconds": 0.5,
                          "components": {SPOUT: spout, COUNT: {"executed": 500}}}
        run.polls.append((1.5 + w, acked, 0, 0, acked * 5))
    return run


def test_a_run_without_acking_has_no_latency_and_no_crash() -> None:
    """topology.acker.executors=0 records no complete latency (it crashed with a KeyError)."""
    figures = analyse(_run(latency=False), 1000)
    assert figures["steady_sentences_per_sec"] > 0
    assert figures["steady_p50_ms"] is None and figures["steady_mean_ms"] is None


def test_latency_figures_come_from_the_steady_windows() -> None:
    figures = analyse(_run(latency=True), 1000)
    assert figures["steady_p99_ms"] == 90.0 and figures["steady_mean_ms"] == 45.0
    assert 40.0 <= figures["steady_p50_ms"] <= 49.0
