"""The window sizer's decisions window by window, at one load of the word count.

Runs the word-count topology with the sizer on at ``--load`` % of ``--maximum`` sentences/s
and prints, for every window the sizer observed: its start (s from the first), the gap to
the previous start, the job time, the tuples the spout executors handed over and whether
a buffer was full, then what the sizer decided (the limit of executor 0, the period) and
what it knew (smoothed rate, fitted fixed cost and cost per tuple, saturation bound, the
cost model's shortest period). Then the curve's cells (``latency_curve.measure``).

It wraps ``WindowSizer.observe`` of whatever ``sparkstorm`` the interpreter imports, so
the same script traces another tree's sizer when run with that tree's interpreter.

Run: ``cd /work/main && .venv/bin/python benchmarks/sizer_trace.py --maximum 43000 --load 80``
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from latency_curve import SPEED, _cells, measure  # noqa: E402
from wordcount import make_spark  # noqa: E402

from sparkstorm.engine.driver import window_sizer as window_size  # noqa: E402

TRACE: list[dict[str, Any]] = []
"""One entry per observed window of the traced run."""


def _traced(observe: Any) -> Any:
    def wrapper(self: Any, job_seconds: float, handed: Any, full: Any = (),
                started: float | None = None, handed_bytes: Any = None,
                finished: float | None = None) -> None:
        observe(self, job_seconds, handed, full, started, handed_bytes, finished=finished)
        cost = self.cost
        rate = self.rate()
        capacity = (window_size.CAPACITY_OVERLAP if self.overlapping
                    else window_size.CAPACITY_SERIAL)
        TRACE.append({
            "started": started, "job": job_seconds, "handed": sum(handed.values()),
            "full": bool(full), "limit": min(self.limit(g) or 0 for g in self.spouts),
            "pending": sum(self.pending(g) or 0 for g in self.spouts),
            "overlapping": self.overlapping,
            "period": self.period_seconds, "rate": rate, "fixed": cost.fixed_seconds,
            "c_us": (cost.seconds_per_tuple or 0.0) * 1e6, "bound": self.saturation_bound,
            "shortest": (cost.shortest_period(rate, capacity) if rate else None),
        })
    return wrapper


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maximum", type=float, required=True, help="sentences/s at 100 %%")
    parser.add_argument("--load", type=float, default=80.0,
                        help="%% of the maximum (0: unthrottled, as fast as the spout may)")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup-sentences", type=int, default=50_000)
    parser.add_argument("--target-latency-ms", type=int, default=None,
                        help="0: trace fixed windows (job times and sizes only)")
    return parser.parse_args(argv)


def _row(entry: dict[str, Any], first: float, previous: float | None) -> str:
    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)
    started = entry["started"]
    gap = None if previous is None or started is None else started - previous
    return (f"{num(started - first if started is not None else None, '7.2f')} "
            f"{num(gap, '5.2f')} {entry['job']:5.2f} {entry['handed']:>7,} "
            f"{'F' if entry['full'] else ' '} {entry['limit']:>7,} {entry['pending']:>7,} "
            f"{entry['period']:6.2f} "
            f"{num(entry['rate'], '7,.0f')} {num(entry['fixed'], '5.2f')} "
            f"{entry['c_us']:5.1f} {entry['bound']:>7,} {num(entry['shortest'], '6.2f')}")


def main(argv: list[str] | None = None) -> int:
    """Run the load once with the sizer traced; print the trace and the result."""
    args = parse_args(argv)
    spark = make_spark()
    try:
        SPEED.__enter__()  # latency_curve.measure reads the CPU speed probe beside each run
        if args.warmup_sentences:
            measure(spark, args.warmup_sentences, 0.0, 0)
        window_size.WindowSizer.observe = _traced(window_size.WindowSizer.observe)
        rate = args.maximum * args.load / 100.0
        sentences = int(rate * args.seconds) if rate else int(args.maximum * args.seconds)
        result = measure(spark, max(1000, sentences), rate,
                         args.target_latency_ms)
    finally:
        spark.stop()
        SPEED.__exit__(None, None, None)
    offered = f"{rate:,.0f} sentences/s" if rate else "unthrottled"
    print(f"\n=== window sizer trace, {args.load:.0f} % load: {offered} ===")
    print("  start   gap   job  handed F   limit pending period    rate fixed  c us   bound"
          " shortest")
    first = next((e["started"] for e in TRACE if e["started"] is not None), 0.0)
    previous = None
    for entry in TRACE:
        print(_row(entry, first, previous))
        previous = entry["started"]
    speed = result.get("cpu_speed")
    print(f"\nresult: {_cells(result)}" + (f"   (CPU speed probe: {speed:,.0f} sentences per "
                                            "CPU second)" if speed else ""))
    parts = result.get("breakdown")
    if parts is not None:
        print(parts.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
