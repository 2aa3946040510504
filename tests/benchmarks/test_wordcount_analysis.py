"""benchmarks/wordcount.py's analysis of a run, without Spark: a run without acking too."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # its own helpers (_cpu_speed, ...) import from there
# under a name of its own: "wordcount" is examples/wordcount.py's, which other tests import
_SPEC = importlib.util.spec_from_file_location("benchmarks_wordcount", BENCHMARKS / "wordcount.py")
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)
COUNT, SPOUT, Run, analyse = bench.COUNT, bench.SPOUT, bench.Run, bench.analyse


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


def test_tuple_percentiles_weigh_each_window_s_samples_by_its_latencies() -> None:
    """Merged reservoirs: each window's samples count for the latencies it counted.

    Steady windows of 100 latencies at 100 ms (10 samples each), one of them at 3,000 ms:
    a seventh of the steady tuples, so their p99 is 3,000 ms. With that window holding 5
    latencies only (under 1 % of the steady ones), the tuples' p99 is 100 ms.
    """
    run = _run(latency=True)
    for w in range(10):
        run.latency_samples[w] = (100, [3000.0 if w == 5 else 100.0] * 10)
    assert analyse(run, 1000)["steady_tuple_p99_ms"] == 3000.0
    run.latency_samples[5] = (5, [3000.0] * 5)
    figures = analyse(run, 1000)
    assert figures["steady_tuple_p99_ms"] == 100.0
    assert figures["steady_tuple_p50_ms"] == 100.0
    assert figures["steady_worst_window_p99_ms"] == 90.0  # the polled figures, unchanged
