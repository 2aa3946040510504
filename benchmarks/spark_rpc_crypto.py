"""The cost of Spark's network encryption (issue 30): the same jobs plain and encrypted, one run.

A ``local-cluster[2,1,1024]`` Spark (a master, a worker and two executor JVMs on this
machine, their block transfers and RPC over loopback TCP as between hosts), made and
stopped in turn with Spark's network plain and with ``spark.authenticate`` +
``spark.network.crypto.enabled`` (the shared secret given as a cluster worker gives it),
interleaved session by session so the CPU's speed changes hit both alike. Each session
runs, after a warm-up:

- window-like jobs: ``--blobs`` blobs of 64 KiB moved by a shuffle to fixed partitions
  (what a window job does with its tuples' blobs), jobs per second;
- a bulk shuffle of ``--mb`` MB in 1 MiB blobs, MB/s.

    PYTHONPATH=src .venv/bin/python benchmarks/spark_rpc_crypto.py --rounds 2
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sparkstorm.engine.spark.session import get_spark, stop_spark_jvm
from sparkstorm.tls.spark_rpc import SECRET_FILE_KEY, write_spark_secret

MASTER = "local-cluster[2,1,1024]"
PARTITIONS = 4


def shuffle_blobs(sc: Any, count: int, size: int) -> int:
    """Move ``count`` blobs of ``size`` bytes to fixed partitions (an identity shuffle)."""
    blobs = sc.parallelize(range(count), PARTITIONS).map(lambda i: (i % PARTITIONS,
                                                                   bytes(size)))
    moved = blobs.partitionBy(PARTITIONS, lambda key: key).map(lambda kv: len(kv[1]))
    return int(moved.sum())


def one_session(encrypted: bool, secret: Path, args: argparse.Namespace) -> dict[str, float]:
    """Start Spark, measure both figures, stop Spark (its JVM too)."""
    conf: dict[str, Any] = {"spark.master": MASTER, "spark.ui.enabled": False,
                            "spark.executor.memory": "1g"}
    if encrypted:
        conf |= {"spark.authenticate": True, "spark.network.crypto.enabled": True,
                 SECRET_FILE_KEY: str(secret)}
    spark, _ = get_spark(conf, f"crypto-{encrypted}")
    try:
        sc = spark.sparkContext
        for _ in range(3):  # warm-up: executors registered, JIT, Python workers
            shuffle_blobs(sc, args.blobs, 64 << 10)
        start = time.perf_counter()
        for _ in range(args.jobs):
            shuffle_blobs(sc, args.blobs, 64 << 10)
        jobs = args.jobs / (time.perf_counter() - start)
        start = time.perf_counter()
        assert shuffle_blobs(sc, args.mb, 1 << 20) == args.mb << 20
        bulk = args.mb / (time.perf_counter() - start)
    finally:
        stop_spark_jvm()
    return {"jobs/s": jobs, "MB/s": bulk}


def main() -> None:
    """Interleave plain and encrypted sessions; print each figure's median and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--blobs", type=int, default=16)
    parser.add_argument("--mb", type=int, default=256)
    args = parser.parse_args()
    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="spark-crypto-bench-") as folder:
        secret = Path(folder) / "spark-secret"
        write_spark_secret(secret)
        for round_number in range(args.rounds):
            for encrypted in (False, True) if round_number % 2 == 0 else (True, False):
                figures = one_session(encrypted, secret, args)
                results[encrypted].append(figures)
                print(f"round {round_number} {'encrypted' if encrypted else 'plain'}: "
                      + ", ".join(f"{v:.1f} {k}" for k, v in figures.items()), flush=True)
    print(f"\n{MASTER}, {args.rounds} rounds: median (each round)")
    for figure in ("jobs/s", "MB/s"):
        plain = [r[figure] for r in results[False]]
        crypto = [r[figure] for r in results[True]]
        ratio = statistics.median(crypto) / statistics.median(plain)
        print(f"{figure}: plain {_figures(plain)}, encrypted {_figures(crypto)}, "
              f"encrypted/plain {ratio:.2f}x")


def _figures(values: list[float]) -> str:
    """The median, then each round's value."""
    return f"{statistics.median(values):.1f} ({', '.join(f'{v:.1f}' for v in values)})"


if __name__ == "__main__":
    main()
