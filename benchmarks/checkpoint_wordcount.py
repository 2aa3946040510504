"""Checkpoint benchmark: a stateful word count with and without checkpoints, in one run.

Part 1 runs the word count (reliable spout -> split x2 -> StatefulBolt count x2, fields
grouping) twice on the same SparkSession (local[2]): with ``topology.checkpoint.windows``
0 and with 10. It prints the steady-state throughput (20 % to 80 % of the acked sentences),
the spout's complete latency p99 and the window duration p99 of each, and their ratio.

Part 2 gives one StatefulBolt task a state of ``--keys`` keys (1,000,000 by default) and
runs a light stream through it with checkpoints every 10 windows, against the same without
checkpoints: window duration p50/p99 and the time from taking a checkpoint to committing it.
Pickling a million keys takes longer than a window (``checkpoint_state.py``); only the
state's copy is on the window's path, the pickling and writing run in the background.

Run: ``.venv/bin/python benchmarks/checkpoint_wordcount.py --sentences 200000``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _checkpoint_topologies import BigState, StatefulWordCount  # noqa: E402
from wordcount import make_spark  # noqa: E402

POLL_SECONDS = 0.5


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``argv``, or ``sys.argv`` when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--big-state-seconds", type=float, default=60.0)
    parser.add_argument("--every", type=int, default=10, help="topology.checkpoint.windows")
    return parser.parse_args(argv)


def _stats(cluster: Any, name: str) -> dict[str, Any]:
    for _ in range(20):
        try:
            return cluster.get_topology_stats(name)
        except RuntimeError:  # a dict changed size mid-summary: read again
            time.sleep(0.01)
    return cluster.get_topology_stats(name)


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _observe(cluster: Any, name: str, until: Any) -> tuple[list[tuple[float, int]],
                                                           dict[int, dict[str, Any]],
                                                           dict[str, Any]]:
    """Poll until ``until(stats)``: (time, acked) points, window records by id, last stats."""
    polls: list[tuple[float, int]] = []
    windows: dict[int, dict[str, Any]] = {}
    while True:
        stats = _stats(cluster, name)
        spout = stats["components"].get("sentences") or {}
        polls.append((time.monotonic(), int(spout.get("acked", 0))))
        for record in stats["recent_windows"]:
            windows[record["window"]] = record
        if until(stats):
            return polls, windows, stats
        time.sleep(POLL_SECONDS)


def _steady_rate(polls: list[tuple[float, int]], total: int) -> float:
    low = next(t for t, acked in polls if acked >= 0.2 * total)
    high_t, high = next((t, acked) for t, acked in polls if acked >= 0.8 * total)
    low_acked = next(acked for t, acked in polls if t == low)
    return (high - low_acked) / max(high_t - low, 1e-9)


def _p99_complete(windows: dict[int, dict[str, Any]]) -> float:
    values = [(r["components"].get("sentences") or {}).get("complete_latency_p99_ms")
              for r in windows.values()]
    return _quantile([v for v in values if v], 0.99)


def wordcount(spark: Any, args: argparse.Namespace, every: int, folder: str
              ) -> dict[str, float]:
    """Run the word count until all sentences are acked: its rate, p99s and checkpoint stats."""
    from sparkstorm.testing.local_cluster import LocalCluster

    name = f"wc-checkpoints-{every}"
    conf = {"bench.sentences": args.sentences, "topology.checkpoint.windows": every,
            "topology.checkpoint.dir": folder, "spark.master": "local[2]"}
    with LocalCluster(conf={"spark.master": "local[2]"}, spark=spark) as cluster:
        runner = cluster.submit_topology(name, StatefulWordCount, conf=conf)
        polls, windows, stats = _observe(cluster, name, lambda s: int(
            (s["components"].get("sentences") or {}).get("acked", 0)) >= args.sentences)
        cluster.kill_topology(name)
    durations = [r["seconds"] * 1000 for r in windows.values()]
    return {"rate": _steady_rate(polls, args.sentences), "p99": _p99_complete(windows),
            "window_p99": _quantile(durations, 0.99),
            "committed": float(stats.get("committed_window") or -1),
            "rollbacks": float(runner.stats.rollbacks)}


def big_state(spark: Any, args: argparse.Namespace, every: int, folder: str
              ) -> dict[str, float]:
    """Run one big-state task under light load: window p50/p99, take-to-commit and fill time."""
    from sparkstorm.testing.local_cluster import LocalCluster

    name = f"big-state-{every}"
    conf = {"bench.keys": args.keys, "topology.checkpoint.windows": every,
            "topology.checkpoint.dir": folder}
    with LocalCluster(conf={"spark.master": "local[2]"}, spark=spark) as cluster:
        runner = cluster.submit_topology(name, BigState, conf=conf)
        started = time.monotonic()
        # the state is filled in init_state, before the first tuple; measure after it
        _observe(cluster, name, lambda s: int(
            (s["components"].get("sentences") or {}).get("acked", 0)) > 0)
        filled, filled_at = time.monotonic(), time.time()
        _, windows, stats = _observe(
            cluster, name, lambda s: time.monotonic() - filled > args.big_state_seconds)
        commit_ms = runner.stats.checkpoint_ms
        cluster.kill_topology(name)
    steady = [r["seconds"] * 1000 for r in windows.values() if r["started"] > filled_at]
    return {"window_p50": statistics.median(steady), "window_p99": _quantile(steady, 0.99),
            "commit_ms": commit_ms, "fill_s": filled - started,
            "committed": float(stats.get("committed_window") or -1)}


def main(argv: list[str] | None = None) -> int:
    """Run both parts, with checkpoints off and on, and print their comparison."""
    args = parse_args(argv)
    spark = make_spark()
    try:
        with tempfile.TemporaryDirectory(prefix="sparkstorm-cp-bench-") as folder:
            off = wordcount(spark, args, 0, folder)
            on = wordcount(spark, args, args.every, folder)
            print(f"stateful word count, {args.sentences:,} sentences, local[2]")
            print(f"{'':28}{'sentences/s':>14}{'p99 complete ms':>18}{'window p99 ms':>16}")
            for label, r in (("checkpoints off", off), (f"every {args.every} windows", on)):
                print(f"{label:28}{r['rate']:>14,.0f}{r['p99']:>18,.0f}"
                      f"{r['window_p99']:>16,.0f}")
            print(f"throughput ratio (on/off): {on['rate'] / off['rate']:.2f}x; "
                  f"p99 ratio: {on['p99'] / off['p99']:.2f}x; last committed window "
                  f"{on['committed']:.0f}, rollbacks {on['rollbacks']:.0f}")
            big_off = big_state(spark, args, 0, folder)
            big_on = big_state(spark, args, args.every, folder)
            print(f"\none StatefulBolt task with {args.keys:,} keys, "
                  f"{args.big_state_seconds:.0f} s of light load")
            print(f"{'':28}{'window p50 ms':>14}{'window p99 ms':>16}{'take->commit ms':>18}")
            for label, r in (("checkpoints off", big_off),
                             (f"every {args.every} windows", big_on)):
                print(f"{label:28}{r['window_p50']:>14,.0f}{r['window_p99']:>16,.0f}"
                      f"{r['commit_ms']:>18,.0f}")
            print(f"last committed window {big_on['committed']:.0f}; filling the state took "
                  f"{big_on['fill_s']:.1f} s")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
