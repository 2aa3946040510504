"""Latency against throughput of the word-count topology, at loads from light to saturated.

First the topology runs with its spout unthrottled: its steady throughput is the maximum
(the same with fixed windows is printed next to it: a saturated topology must keep its
throughput). Then, for each load (a share of that maximum, ``--loads``, scaled to the
CPUs' speed just before the load: ``offered_rate``), it runs with the spout offering that
many sentences per second (``bench.rate``, see ``_wordcount_topology``) for about
``--seconds`` seconds, and prints the steady throughput and the spout's complete
latency p50 and p99 over the steady windows, as ``wordcount.py`` measures them. A load's
steady span is late (``--steady``, 50–95 % of its acks): when a run starts, the first windows
(new executor processes, the first Spark jobs of a topology) leave a backlog that the
topology then catches up at its maximum, and a span that still holds that catching up
measures the start, not the load.
Each load runs twice, with the window sizer on (``topology.window.target.latency.ms``, the
engine's default unless ``--target-latency-ms``) and off (0: fixed windows, the reference,
measured in the same run), so the ratio survives a loaded machine. The targets (p50 ≤ 1 s,
p99 ≤ 2 s) are flagged at 80 % of the maximum.

The unthrottled runs also print the CPU each sentence costs in Spark's JVM and Python
workers and in all of the topology's processes, and the peak memory of all processes: a
saturated topology's windows grow (``topology.spout.buffer.max.size``) to amortise each
Spark job's fixed cost, and this shows what that buys and what memory it takes. With
``--pending-auto`` a third unthrottled run measures the maximum under the Little's-law
in-flight bound (``topology.spout.pending.auto``): the throughput a saturated spout gives
up to keep its latency near the target.

A module of its own, not a ``wordcount.py`` option: it runs 12 topologies where
``wordcount.py`` runs one and the references, and ``make bench`` runs both.

Run: ``cd /work/main && .venv/bin/python benchmarks/latency_curve.py``
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _cpu_breakdown import DRIVER, EXECUTOR, JVM, PYSPARK_WORKER  # noqa: E402
from _cpu_speed import CpuSpeedProbe, mean_speed, scaled_load  # noqa: E402
from _latency_breakdown import breakdown  # noqa: E402
from _wordcount_topology import SPOUT  # noqa: E402
from wordcount import (  # noqa: E402
    TARGET_P50_MS,
    TARGET_P99_MS,
    analyse,
    make_spark,
    run_topology,
)
from wordcount import parse_args as wordcount_args  # noqa: E402

LOAD_SPAN = (0.5, 0.95)
"""The loads' steady span, as shares of their acks: after the start's backlog is caught up."""

MIN_POLLS = 2
"""Statistics polls a run needs to have a steady state."""

FLAGGED_LOAD = 80
"""The load (% of the maximum) at which the latency targets apply."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-sentences", type=int, default=800_000,
                        help="sentences of the unthrottled run that measures the maximum "
                             "(200,000 gave a steady span of 2-3 grown windows and twice "
                             "the real rate)")
    parser.add_argument("--warmup-sentences", type=int, default=50_000,
                        help="sentences of an unreported first run (the JVM's JIT and Spark's "
                             "Python workers warm up in it, not in the first measured run)")
    parser.add_argument("--seconds", type=float, default=40.0,
                        help="how long each load offers sentences")
    parser.add_argument("--steady", type=float, nargs=2, default=LOAD_SPAN,
                        metavar=("FROM", "TO"),
                        help="the loads' steady span, as shares of their acks (the "
                             "unthrottled runs keep wordcount.py's 20-80 %%)")
    parser.add_argument("--loads", default="20,40,60,80,100",
                        help="loads as %% of the maximum, comma-separated")
    parser.add_argument("--target-latency-ms", type=int, default=None,
                        help="topology.window.target.latency.ms of the adaptive runs "
                             "(default: the engine's)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="one more topology conf entry for the window-sizer runs (as "
                             "wordcount.py --conf); repeatable")
    parser.add_argument("--skip-fixed", action="store_true",
                        help="do not run the fixed-window reference at each load")
    parser.add_argument("--maximum", type=float, default=None,
                        help="take this as the maximum (sentences/s) instead of measuring it: "
                             "the loads then offer the same rates in runs of two trees, so "
                             "that A/B runs compare like with like (no unthrottled runs)")
    parser.add_argument("--nominal-loads", action="store_true",
                        help="offer each load at its share of the maximum as measured, not "
                             "scaled to the CPUs' speed just before it (see offered_rate)")
    parser.add_argument("--pending-auto", action="store_true",
                        help="also run the unthrottled topology with topology.spout.pending."
                             "auto=true: the maximum throughput under the Little's-law bound")
    return parser.parse_args(argv)


SPEED = CpuSpeedProbe(["0", "1"])
"""The CPUs' speed beside every run (``_cpu_speed``): the maximum and the loads run minutes
apart, and this machine's virtual CPUs change speed from minute to minute, so a load's
share of the maximum is also printed at equal CPU speed."""


def measure(spark: Any, sentences: int, rate: float, target_ms: int | None,
            conf: Sequence[str] = (), span: tuple[float, float] | None = None
            ) -> dict[str, Any]:
    """Run the word count once; its steady throughput, complete latency and its parts.

    ``span``: the steady span as shares of the acks (None: ``wordcount.py``'s).
    """
    argv = ["--sentences", str(sentences), "--rate", str(rate), "--skip-references"]
    if target_ms is not None:
        argv += ["--target-latency-ms", str(target_ms)]
    for entry in conf:
        argv += ["--conf", entry]
    run, mem = run_topology(spark, wordcount_args(argv))
    if not run.completed or len(run.polls) < MIN_POLLS:
        return {"completed": False, "peak_bytes": mem.peak_bytes}
    res = analyse(run, sentences, span)
    steady = res.get("steady_window_range")
    parts = breakdown(run.windows, SPOUT, *steady, pushed=run.pushed) if steady else None
    return {"completed": True, "rate": res["steady_sentences_per_sec"],
            "p50": res["steady_p50_ms"], "p99": res["steady_p99_ms"],
            "period": res.get("steady_window_period"),
            "per_window": res.get("steady_sentences_per_window"), "breakdown": parts,
            "peak_bytes": mem.peak_bytes, "cpu_us": _cpu_per_sentence(run, res),
            "cpu_speed": mean_speed(SPEED.between(*res["steady_wall_span"]))}


def _cpu_per_sentence(run: Any, res: dict[str, Any]) -> dict[str, float] | None:
    """Core microseconds per steady sentence: JVM + Spark's Python workers, and all ours."""
    sentences = res.get("steady_sentences") or 0
    if run.cpu is None or not sentences or not res.get("steady_wall_span"):
        return None
    by_class = run.cpu.breakdown(*res["steady_wall_span"]).by_class
    def us(*classes: str) -> float:
        return sum(by_class.get(c, 0.0) for c in classes) * 1e6 / sentences
    return {"spark": us(JVM, PYSPARK_WORKER), "all": us(JVM, PYSPARK_WORKER, EXECUTOR, DRIVER)}


def _maximum_line(label: str, result: dict[str, Any] | None) -> str:
    """One unthrottled run: the curve's cells, CPU per sentence and peak memory."""
    if result is None:
        return f"{label:<28} -"
    cpu = result.get("cpu_us")
    cpu_text = (f"JVM+Python workers {cpu['spark']:5.1f} us, all ours {cpu['all']:5.1f} us "
                "per sentence" if cpu else "CPU n/a")
    mib = (result.get("peak_bytes") or 0) / 2**20
    return f"{label:<28} {_cells(result)} | {cpu_text} | peak {mib:,.0f} MiB"


def _cells(result: dict[str, Any] | None) -> str:
    if result is None:
        return f"{'-':>10} {'-':>8} {'-':>8} {'-':>7} {'-':>7}"
    if not result["completed"]:
        return f"{'incomplete':>10} {'':>8} {'':>8} {'':>7} {'':>7}"
    def ms(value: float | None) -> str:
        return "n/a" if value is None else f"{value:,.0f}"
    return (f"{result['rate']:>10,.0f} {ms(result['p50']):>8} {ms(result['p99']):>8} "
            f"{result['period'] or 0:>7.2f} {result['per_window'] or 0:>7,.0f}")


def _meets(result: dict[str, Any] | None) -> bool:
    return bool(result and result["completed"] and result["p50"] is not None
                and result["p99"] is not None and result["p50"] <= TARGET_P50_MS
                and result["p99"] <= TARGET_P99_MS)


def main(argv: list[str] | None = None) -> int:
    """Measure the maximum, then every load; print the curve (exit 1 if a run failed)."""
    args = parse_args(argv)
    loads = [int(x) for x in args.loads.split(",")]
    spark = make_spark()
    try:
        SPEED.__enter__()  # module-level: measure() reads it; sizer_ab/sizer_trace never start it
        if args.warmup_sentences:
            measure(spark, args.warmup_sentences, 0.0, 0)
        if args.maximum:
            top = {"completed": True, "rate": args.maximum, "p50": None, "p99": None,
                   "period": None, "per_window": None}
            top_fixed = top_pending = None
        else:
            top = measure(spark, args.max_sentences, 0.0, args.target_latency_ms, args.conf)
            top_fixed = None if args.skip_fixed else measure(spark, args.max_sentences, 0.0, 0)
            top_pending = (measure(spark, args.max_sentences, 0.0, args.target_latency_ms,
                                   [*args.conf, "topology.spout.pending.auto=true"])
                           if args.pending_auto else None)
        if not top["completed"]:
            print("the unthrottled run did not complete", flush=True)
            return 1
        tops = [("window sizer on", top), ("fixed windows", top_fixed)]
        if args.pending_auto:
            tops.append(("sizer + pending.auto", top_pending))
        print_maximum(tops)
        rows = []
        for load in loads:
            rate = offered_rate(top, load, scaled=not args.nominal_loads)
            sentences = max(1000, int(rate * args.seconds))
            span = (args.steady[0], args.steady[1])
            adaptive = measure(spark, sentences, rate, args.target_latency_ms, args.conf, span)
            fixed = None if args.skip_fixed else measure(spark, sentences, rate, 0, span=span)
            rows.append((load, rate, adaptive, fixed))
    finally:
        spark.stop()
        SPEED.__exit__(None, None, None)
    print_maximum(tops)
    print_curve(rows)
    print_equal_speed_loads(top, rows)
    print_breakdowns(rows)
    flagged = [r for r in rows if r[0] == FLAGGED_LOAD]
    return 0 if all(r[2]["completed"] for r in rows) and flagged else 1


def offered_rate(top: dict[str, Any], load: int, *, scaled: bool) -> float:
    """The sentences per second a load offers: ``load`` % of the maximum the CPUs carry now.

    See ``_cpu_speed.scaled_load``; with ``--nominal-loads``, of the maximum as measured.
    """
    if not scaled:
        return float(top["rate"]) * load / 100.0
    rate, line = scaled_load(SPEED, float(top["rate"]), top.get("cpu_speed"), load)
    print(line, flush=True)
    return rate


def print_maximum(tops: list[tuple[str, dict[str, Any] | None]]) -> None:
    """The unthrottled runs: throughput, latency, CPU per sentence, peak memory."""
    head = f"{'sent./s':>10} {'p50 ms':>8} {'p99 ms':>8} {'period':>7} {'/window':>7}"
    print(f"\n=== maximum throughput (unthrottled spout) ===\n{'':<28} {head}", flush=True)
    for label, result in tops:
        print(_maximum_line(label, result), flush=True)
    base, fixed = tops[0][1], tops[1][1]
    if base and fixed and base.get("completed") and fixed.get("completed") and fixed["rate"]:
        print(f"window sizer on / fixed windows: {base['rate'] / fixed['rate']:.2f}x",
              flush=True)


def print_curve(rows: list[tuple[int, float, dict[str, Any], dict[str, Any] | None]]) -> None:
    """The latency-throughput table, with the targets flagged at 80 % of the maximum."""
    head = f"{'sent./s':>10} {'p50 ms':>8} {'p99 ms':>8} {'period':>7} {'/window':>7}"
    print("\n=== latency-throughput curve (steady state; period in s) ===")
    print(f"{'load':>5} {'offered/s':>10} | window sizer on: {head} | fixed windows: {head}")
    for load, rate, adaptive, fixed in rows:
        flag = ""
        if load == FLAGGED_LOAD:
            flag = (f"  <- p50 <= {TARGET_P50_MS:,.0f} ms, p99 <= {TARGET_P99_MS:,.0f} ms: "
                    f"on {'OK' if _meets(adaptive) else 'MISS'}, "
                    f"fixed {'OK' if _meets(fixed) else 'MISS' if fixed else '-'}")
        print(f"{load:>4}% {rate:>10,.0f} | {'':>16} {_cells(adaptive)} | {'':>14} "
              f"{_cells(fixed)}{flag}")


def print_equal_speed_loads(top: dict[str, Any],
                            rows: list[tuple[int, float, dict[str, Any], dict[str, Any] | None]]
                            ) -> None:
    """Each load's offered rate as a share of the maximum the CPUs had while it ran.

    The maximum scaled by the probe's speed during the load over its speed during the
    maximum's run: a load run on faster CPUs than the maximum was a lighter load than its
    nominal share.
    """
    top_speed = top.get("cpu_speed")
    if not top_speed:  # --maximum: no run of it here; each load's probe, to compare runs by
        print("\n=== CPU speed probe during each load (sentences per CPU second) ===")
        for load, _, adaptive, fixed in rows:
            speeds = [f"{label} {result['cpu_speed']:,.0f}"
                      for label, result in (("sizer on", adaptive), ("fixed", fixed))
                      if (result or {}).get("cpu_speed")]
            print(f"{load:>4}%: {'; '.join(speeds) or 'n/a'}")
        return
    print(f"\n=== loads at equal CPU speed (probe during the maximum: {top_speed:,.0f} "
          f"sentences per CPU second) ===")
    for load, rate, adaptive, fixed in rows:
        cells = []
        for label, result in (("sizer on", adaptive), ("fixed", fixed)):
            speed = (result or {}).get("cpu_speed")
            if speed:
                share = 100 * rate / (top["rate"] * speed / top_speed)
                cells.append(f"{label} {share:5.1f} % (probe {speed:,.0f})")
        print(f"{load:>4}% nominal: {'; '.join(cells)}")


def print_breakdowns(rows: list[tuple[int, float, dict[str, Any], dict[str, Any] | None]]
                     ) -> None:
    """Where the mean complete latency goes at each load (``_latency_breakdown``)."""
    print("\n=== mean complete latency by part (steady windows; tuple-weighted ms) ===")
    for load, _, adaptive, fixed in rows:
        for label, result in (("sizer on", adaptive), ("fixed", fixed)):
            parts = (result or {}).get("breakdown")
            if parts is not None:
                print(f"{load:>4}% {label:<9} {parts.line()}")


if __name__ == "__main__":
    sys.exit(main())
