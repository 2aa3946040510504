"""The window sizer before and after issue 12 §4's changes, interleaved in one run.

"Before" is the sizer as it was merged (the limit starts at 1,000, a job about to end is
overlapped like any other); "after" is this tree's (the limit starts at the buffer bound,
``WindowSizer.overlap_wait``). Both are the same code with two module constants set
(``window_size.INITIAL_LIMIT``, ``OVERLAP_WAIT_SHARE``; the driver reads them, the
executors do not), so pairs run in one process and SparkSession, alternating, and each
pair's ratio survives a machine whose load changes between pairs. The load is a share of
the maximum measured first (unthrottled, "after"), as ``latency_curve.py`` does.

Run: ``cd /work/main && .venv/bin/python benchmarks/sizer_ab.py --load 80 --pairs 3``
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

BEFORE = {"INITIAL_LIMIT": 1000, "OVERLAP_WAIT_SHARE": 0.0}
AFTER = {"INITIAL_LIMIT": window_size.INITIAL_LIMIT,
         "OVERLAP_WAIT_SHARE": window_size.OVERLAP_WAIT_SHARE}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=float, default=80.0, help="% of the maximum")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--max-sentences", type=int, default=120_000)
    parser.add_argument("--warmup-sentences", type=int, default=50_000)
    return parser.parse_args(argv)


def run_as(spark: Any, constants: dict[str, Any], sentences: int, rate: float
           ) -> dict[str, Any]:
    """One word-count run with the sizer's constants set to ``constants``."""
    for name, value in constants.items():
        setattr(window_size, name, value)
    return measure(spark, sentences, rate, None)


def main(argv: list[str] | None = None) -> int:
    """Measure the maximum, then the pairs; print each pair and the breakdowns."""
    args = parse_args(argv)
    spark = make_spark()
    rows: list[tuple[dict[str, Any], dict[str, Any]]] = []
    try:
        SPEED.__enter__()  # latency_curve.measure reads the CPU speed probe beside each run
        if args.warmup_sentences:
            run_as(spark, AFTER, args.warmup_sentences, 0.0)
        top = run_as(spark, AFTER, args.max_sentences, 0.0)
        if not top["completed"]:
            print("the unthrottled run did not complete")
            return 1
        rate = top["rate"] * args.load / 100.0
        sentences = max(1000, int(rate * args.seconds))
        print(f"maximum {_cells(top)}; load {args.load:.0f} %: {rate:,.0f} sentences/s",
              flush=True)
        for pair in range(args.pairs):
            order = (BEFORE, AFTER) if pair % 2 == 0 else (AFTER, BEFORE)
            results = {id(c): run_as(spark, c, sentences, rate) for c in order}
            rows.append((results[id(BEFORE)], results[id(AFTER)]))
    finally:
        for name, value in AFTER.items():
            setattr(window_size, name, value)
        spark.stop()
        SPEED.__exit__(None, None, None)
    head = f"{'sent./s':>10} {'p50 ms':>8} {'p99 ms':>8} {'period':>7} {'/window':>7}"
    print(f"\n=== {args.load:.0f} % load, pairs in run order (before first in odd pairs) ===")
    print(f"{'pair':>4} | before: {head} | after: {head}")
    for n, (before, after) in enumerate(rows, 1):
        print(f"{n:>4} | {'':>7} {_cells(before)} | {'':>6} {_cells(after)}")
    for n, (before, after) in enumerate(rows, 1):
        for label, result in (("before", before), ("after", after)):
            parts = result.get("breakdown")
            if parts is not None:
                print(f"{n:>4} {label:<7} {parts.line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
