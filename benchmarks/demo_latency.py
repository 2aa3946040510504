"""Complete latency of ``make demo``'s topology, from its window records (issue 12 §4).

``make demo`` runs ``sparkstorm run examples/wordcount.py --time 30``: the example's
``WordCount`` on Spark local mode with its own conf, an unthrottled spout. The demo prints
the mean complete latency and percentiles of the first ~2,000 acks only; this runs the
same topology with the same conf (plus ``--conf`` entries per variant) on one
SparkSession, polls its statistics, and prints, over the windows that started after
``--skip`` seconds, the acked sentences per second and the complete latency p50 and p99
(acked-weighted over the windows' percentiles, as ``wordcount.py``) and mean, and the
latency's parts (``_latency_breakdown``). Variants run in the order given, after an
unreported warm-up run, so that each is compared with the others measured in the same run.

``--loads 80`` then runs the demo's conf again with the example spout offering 80 % of the
first variant's acked sentences per second (``wordcount.rate``), scaled to the CPUs' speed
just before (``_cpu_speed.scaled_load``): the demo at 80 % of its maximum, where issue 12's
latency targets apply.

Run: ``cd /work/main && .venv/bin/python benchmarks/demo_latency.py --variant default
--variant topology.max.spout.pending=5000``, or ``... --variant default --loads 60,80``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _cpu_speed import CpuSpeedProbe, mean_speed, scaled_load, wait_for_readings  # noqa: E402
from _latency_breakdown import breakdown  # noqa: E402
from wordcount import _stats, _weighted_quantile, conf_entries, make_spark  # noqa: E402

SPOUT = "sentences"
POLL_SECONDS = 0.5
MIN_WINDOWS = 2
"""Steady windows a variant needs for its figures."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0,
                        help="how long each variant runs (make demo: 30)")
    parser.add_argument("--skip", type=float, default=10.0,
                        help="seconds of start-up left out of the figures")
    parser.add_argument("--variant", action="append", default=[],
                        help="'default' (the demo's conf) or KEY=VALUE[,KEY=VALUE...] added "
                             "to it; repeatable (default: just 'default')")
    parser.add_argument("--loads", default="",
                        help="after the variants, the demo's conf at these %% of the first "
                             "variant's acked/s (its maximum when it is 'default'), offered "
                             "with the example spout's wordcount.rate; comma-separated")
    parser.add_argument("--warmup-seconds", type=float, default=10.0,
                        help="an unreported first run (JIT, Spark's Python workers)")
    return parser.parse_args(argv)


def example_topology() -> Any:
    """The example's ``WordCount`` class (``_demo_topology`` explains the detour)."""
    from _demo_topology import WordCount

    return WordCount


def run_variant(spark: Any, topology: Any, conf: dict[str, Any], seconds: float,
                skip: float, probe: CpuSpeedProbe | None = None) -> dict[str, Any]:
    """Run the demo topology for ``seconds``; its figures over the windows after ``skip``.

    With ``probe``, also the CPUs' mean speed over those windows (``cpu_speed``).
    """
    from sparkstorm.testing.local_cluster import LocalCluster

    windows: dict[int, dict[str, Any]] = {}
    cluster = LocalCluster(conf={"spark.ui.enabled": False}, spark=spark)
    try:
        cluster.submit_topology("demo", topology, conf=conf)
        started = time.time()
        while time.time() - started < seconds:
            time.sleep(POLL_SECONDS)
            for record in _stats(cluster, "demo")["recent_windows"]:
                windows[record["window"]] = record
    finally:
        cluster.kill_topology("demo")
        cluster.shutdown()
    steady = sorted(w for w, r in windows.items() if r["started"] >= started + skip)
    figures: list[tuple[dict[str, Any], int]] = []
    for w in steady:
        counters = windows[w]["components"].get(SPOUT) or {}
        if counters.get("acked"):
            figures.append((counters, int(counters["acked"])))
    if len(steady) < MIN_WINDOWS or not figures:
        return {"windows": len(steady)}
    first, last = windows[steady[0]], windows[steady[-1]]
    end = last["started"] + last["seconds"]
    span = end - first["started"]
    acked = sum(a for _, a in figures)
    return {
        "windows": len(steady), "rate": acked / span,
        "p50": _weighted_quantile([(c["complete_latency_p50_ms"], a) for c, a in figures],
                                  0.5),
        "p99": _weighted_quantile([(c["complete_latency_p99_ms"], a) for c, a in figures],
                                  0.99),
        "mean": sum(c["complete_latency_ms"] * a for c, a in figures) / acked,
        "per_window": sum(int((windows[w]["components"].get(SPOUT) or {}).get("buffered", 0))
                          for w in steady) / len(steady),
        "breakdown": breakdown(windows, SPOUT, steady[0], steady[-1]),
        "cpu_speed": mean_speed(probe.between(first["started"], end)) if probe else None,
    }


def main(argv: list[str] | None = None) -> int:
    """Run every variant; print one line each."""
    args = parse_args(argv)
    variants = args.variant or ["default"]
    topology = example_topology()
    spark = make_spark()
    results = []
    probe = CpuSpeedProbe(["0", "1"]).__enter__()
    try:
        wait_for_readings(probe)
        if args.warmup_seconds:
            run_variant(spark, topology, {}, args.warmup_seconds, 0.0)
        for variant in variants:
            conf = {} if variant == "default" else conf_entries(variant.split(","))
            results.append((variant, run_variant(spark, topology, conf, args.seconds,
                                                 args.skip, probe)))
            print(f"ran {variant}", flush=True)
        top = results[0][1] if results else {}
        for load in [int(x) for x in args.loads.split(",") if x]:
            if not top.get("rate"):
                print(f"load {load} %: no maximum measured (the first variant had no "
                      "steady windows)", flush=True)
                break
            rate, line = scaled_load(probe, top["rate"], top.get("cpu_speed"), load)
            print(line, flush=True)
            variant = f"{load} %: wordcount.rate={rate:.0f}"
            results.append((variant, run_variant(spark, topology, {"wordcount.rate": rate},
                                                 args.seconds, args.skip, probe)))
            print(f"ran {variant}", flush=True)
    finally:
        spark.stop()
        probe.__exit__(None, None, None)
    print(f"\n=== make demo's topology, windows after the first {args.skip:.0f} s of "
          f"{args.seconds:.0f} ===")
    print(f"{'variant':<44} {'acked/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'mean ms':>8} "
          f"{'/window':>8}")
    for variant, res in results:
        if "rate" not in res:
            print(f"{variant:<44} no steady windows ({res['windows']})")
            continue
        print(f"{variant:<44} {res['rate']:>9,.0f} {res['p50'] or 0:>7,.0f} "
              f"{res['p99'] or 0:>7,.0f} {res['mean']:>8,.0f} {res['per_window']:>8,.0f}")
        if res["breakdown"] is not None:
            print(f"{'':<44} {res['breakdown'].line()}")
        if res.get("cpu_speed") and top.get("cpu_speed") and variant != variants[0]:
            print(f"{'':<44} CPU speed probe {res['cpu_speed']:,.0f} "
                  f"({res['cpu_speed'] / top['cpu_speed']:.3f} of the first variant's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
