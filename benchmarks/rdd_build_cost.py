"""What building a window-shaped RDD chain costs the driver and the JVM.

With and without the JVM view that remembers its class lookups
(``engine.spark.session.cache_jvm_lookups``).

The chain is a 3-stage window's: ``parallelize``, a Python stage, two ``partitionBy`` each
followed by a Python stage, and the last RDD's ``_jrdd`` (which ``collect()`` would build).
Built ``--builds`` times per variant, the variants in turn for ``--rounds`` rounds; prints
the wall time (mean and median, the first 10 builds left out) and the JVM's and this
process's CPU per build.

Run: ``PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/rdd_build_cost.py``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from wordcount import make_spark  # noqa: E402


def _passing(window: int, index: int, records: Iterable[Any]) -> Iterator[Any]:
    yield from records


def build(sc: Any, window: int) -> Any:
    """One window-shaped RDD chain, its JVM side included."""
    rdd = sc.parallelize([([1, 2], [])], 1).mapPartitionsWithIndex(partial(_passing, window))
    for partitions in (2, 2):
        rdd = rdd.partitionBy(partitions, lambda key: key).mapPartitionsWithIndex(
            partial(_passing, window))
    rdd._jrdd  # noqa: B018 - building the JVM side is the point
    return rdd


def main(argv: list[str] | None = None) -> int:
    """Measure both variants in turn; print one line per variant and round."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=80)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from pyspark import SparkContext

    from sparkstorm.engine.spark.session import cache_jvm_lookups

    spark = make_spark()
    sc = spark.sparkContext
    jvm_pid = SparkContext._gateway.proc.pid  # type: ignore[union-attr]

    def jvm_cpu() -> float:
        with open(f"/proc/{jvm_pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    plain = SparkContext._jvm
    try:
        for _ in range(args.rounds):
            for label in ("plain py4j view", "cached lookups"):
                SparkContext._jvm = plain
                if label == "cached lookups":
                    cache_jvm_lookups()
                walls = []
                jvm0, own0 = jvm_cpu(), time.process_time()
                for window in range(args.builds):
                    began = time.perf_counter()
                    build(sc, window)
                    walls.append(time.perf_counter() - began)
                jvm1, own1 = jvm_cpu(), time.process_time()
                print(f"{label:<16} wall mean {1000 * statistics.fmean(walls[10:]):5.1f} ms, "
                      f"median {1000 * statistics.median(walls[10:]):5.1f} ms; JVM CPU "
                      f"{1000 * (jvm1 - jvm0) / args.builds:5.1f} ms, driver CPU "
                      f"{1000 * (own1 - own0) / args.builds:5.1f} ms per build", flush=True)
    finally:
        SparkContext._jvm = plain
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
