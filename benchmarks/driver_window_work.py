"""How long the driver's own per-window work takes, against the window period (issue 12 §2).

Runs the word count (``--spouts`` spout executors sharing the sentences, as
``wordcount.py --spouts``) with timers around the driver's per-window steps:

- ``start``: ``TopologyDriver.start_window`` (the spouts' payloads, the window's RDD built
  over py4j, the job submitted): on the window's critical path, the next window's job
  cannot run before it;
- ``absorb``: ``TopologyDriver._absorb`` (the acker's ledger, statistics): with overlapping
  windows it runs while the next window's job runs, so it delays a window only when it
  outlasts that job's first stage;
- ``job ids``: ``statusTracker().getJobIdsForGroup`` (py4j), in ``end_window``.

Prints each step's mean and p90 per window and its share of the mean window period, in
the same run, so the shares survive a loaded machine.

Run: ``PYTHONPATH=src:. .venv/bin/python benchmarks/driver_window_work.py --sentences 200000``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _wordcount_topology import shared_spout_topology  # noqa: E402
from wordcount import make_spark  # noqa: E402

TIMINGS: dict[str, list[float]] = defaultdict(list)


def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` recording its duration under ``name``."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            TIMINGS[name].append(time.perf_counter() - began)
    return wrapper


def main(argv: list[str] | None = None) -> int:
    """Run the timed word count and print each driver step's share of the window period."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=200_000)
    parser.add_argument("--spouts", type=int, default=2)
    parser.add_argument("--no-chain", action="store_true")
    args = parser.parse_args(argv)

    from sparkstorm.engine.driver.loop import TopologyDriver
    from sparkstorm.testing.local_cluster import LocalCluster

    TopologyDriver.start_window = timed("start", TopologyDriver.start_window)  # type: ignore[method-assign]
    TopologyDriver._absorb = timed("absorb", TopologyDriver._absorb)  # type: ignore[method-assign]
    spark = make_spark()
    tracker_class = type(spark.sparkContext.statusTracker())
    tracker_class.getJobIdsForGroup = timed("job ids", tracker_class.getJobIdsForGroup)
    conf = {"bench.sentences": args.sentences, "bench.share": True,
            "topology.window.chain": not args.no_chain}
    try:
        cluster = LocalCluster(conf={"spark.master": "local[2]", "spark.ui.enabled": False},
                               spark=spark)
        runner = cluster.submit_topology("driver-work", shared_spout_topology(args.spouts),
                                         conf=conf)
        try:
            while True:
                time.sleep(0.5)
                spout = runner.stats.summary()["components"].get("sentences") or {}
                if int(spout.get("acked", 0)) >= args.sentences or runner.failure:
                    break
            windows = list(runner.stats.summary()["recent_windows"])
        finally:
            cluster.kill_topology("driver-work")
            cluster.shutdown()
    finally:
        spark.stop()
    starts = [w["started"] for w in windows]
    period = statistics.fmean(b - a for a, b in zip(starts, starts[1:], strict=False))
    print(f"{len(windows)} windows, chain {not args.no_chain}, mean period "
          f"{1000 * period:,.0f} ms")
    for name, values in TIMINGS.items():
        values = values[2:]  # the first windows build Spark's Python workers
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
        mean = statistics.fmean(values)
        print(f"  {name:<8} mean {1000 * mean:7.1f} ms  p90 {1000 * p90:7.1f} ms  "
              f"= {100 * mean / period:4.1f} % of the period")
    return 0


if __name__ == "__main__":
    sys.exit(main())
