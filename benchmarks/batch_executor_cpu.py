"""Executor CPU per sentence: per-tuple bolts vs BatchBolts, in one process, interleaved.

Feeds one window of ``--sentences`` anchored sentences to a real split executor of
``_wordcount_topology.WordCountBench`` (per-tuple, the reference) and of
``WordCountBatchBench`` (BatchBolt, pyarrow.compute; with Arrow pieces between split and
count, ``topology.batch.arrow.wire``, and with msgpack rows), serializes its output as the engine
does, then feeds that output to a count executor of the same kind. Thread CPU time, GC off
as in executor processes; best and median of ``--runs`` interleaved runs, so the ratio
survives a loaded machine. No Spark, no sockets: the executors' own work only.

Run: ``PYTHONPATH=src python benchmarks/batch_executor_cpu.py --sentences 20000 --runs 7``
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _sentences import make_sentences  # noqa: E402
from _wordcount_topology import BATCH_TOPOLOGY, COUNT, SPLIT, SPOUT, TOPOLOGY  # noqa: E402

from sparkstorm.engine.executor.factory import make_executor  # noqa: E402
from sparkstorm.engine.plan.execution import ExecutionPlan  # noqa: E402
from sparkstorm.engine.wire.frames import pack  # noqa: E402


def executors(topology: Any, wire: bool = True) -> tuple[ExecutionPlan, Any, list[Any]]:
    """The plan, the first split executor and every count executor of ``topology``.

    ``wire``: ``topology.batch.arrow.wire`` (Arrow pieces between the batch bolts).
    """
    plan = ExecutionPlan(topology.topology_spec, {"topology.acker.executors": 1,
                                                  "topology.batch.arrow.wire": wire})
    split_gid = next(e.gid for e in plan.executors if e.component == SPLIT)
    counts = [make_executor(plan, e.gid, "bench") for e in plan.executors
              if e.component == COUNT]
    return plan, make_executor(plan, split_gid, "bench"), counts


def one_run(topology: Any, sentences: list[str], wire: bool = True) -> tuple[float, float]:
    """CPU seconds of (split + serialize, every count executor) for one window."""
    plan, split, counts = executors(topology, wire)
    split_task = split.info.tasks[0]
    spout_task = plan.component_tasks[SPOUT][0]
    blob = pack([[split_task, spout_task, "default", [[s] for s in sentences],
                  list(range(1, len(sentences) + 1)), list(range(77, len(sentences) + 77))]])
    started = time.thread_time()
    out = split.encode_rows(split.run_window([blob]))
    split_cpu = time.thread_time() - started
    started = time.thread_time()
    for count in counts:
        count.run_window([out[count.info.gid]] if count.info.gid in out else [])
    count_cpu = time.thread_time() - started
    return split_cpu, count_cpu


def main(argv: list[str] | None = None) -> int:
    """Print µs of CPU per sentence for both kinds, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    sentences = make_sentences(args.sentences, 42)
    gc.freeze()
    gc.disable()
    kinds = {"per-tuple (reference)": (TOPOLOGY, False),
             "BatchBolt, rows wire": (BATCH_TOPOLOGY, False),
             "BatchBolt": (BATCH_TOPOLOGY, True)}
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    for _ in range(args.runs):
        for kind, (topology, wire) in kinds.items():
            results[kind].append(one_run(topology, sentences, wire))
            gc.collect()
    n = args.sentences
    print(f"{n:,} sentences per window, {args.runs} interleaved runs, thread CPU, GC off; "
          "µs per sentence, best / median (split: one executor, all sentences; count: both)")
    medians = {}
    for kind, runs in results.items():
        split = [s * 1e6 / n for s, _ in runs]
        count = [c * 1e6 / n for _, c in runs]
        total = [s + c for s, c in zip(split, count, strict=True)]
        medians[kind] = statistics.median(total)
        print(f"  {kind:<22} split {min(split):6.1f} / {statistics.median(split):6.1f}   "
              f"count {min(count):6.1f} / {statistics.median(count):6.1f}   "
              f"both {min(total):6.1f} / {medians[kind]:6.1f}")
    reference, batch = medians["per-tuple (reference)"], medians["BatchBolt"]
    print(f"BatchBolt / per-tuple CPU (median): {batch / reference:.2f}x; Arrow wire / "
          f"rows wire: {batch / medians['BatchBolt, rows wire']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
