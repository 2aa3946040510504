"""A counting bolt's input loop per tuple: tracked batches, untracked batches, plain calls.

Runs the word count's ``CountBolt`` through ``engine.executor.input_loop.run_batch`` on one
task of the engine's own collector, over the same one-word tuples (a flat column, as the
split sends them), in one process:

- tracked: every tuple has a root and an edge (acking), in runs of ``WORDS_PER_ROOT``
  tuples of one root as a split's words of one sentence come, so the loop XORs each ack;
- untracked: no roots and no edges (``topology.reliability: checkpoint``), the batch takes
  ``input_loop._untracked_run``;
- reference: ``CountBolt.process`` called on one reused tuple object per value, nothing
  else (what any loop must do at least).

Nanoseconds per tuple, best of ``--repeat`` runs, and each loop against the reference of
the same run, so the ratios survive a noisy machine. Pin it to a core for steadier figures
(``taskset -c 1``).

Run: ``PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/bolt_loop.py``
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import timeit
from collections.abc import Callable
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _wordcount_topology import CountBolt  # noqa: E402

from sparkstorm import Grouping, Spout, Topology  # noqa: E402
from sparkstorm.engine.executor.collector import TaskCollector, WindowOutput  # noqa: E402
from sparkstorm.engine.executor.input_loop import run_batch  # noqa: E402
from sparkstorm.engine.executor.routing import build_routes  # noqa: E402
from sparkstorm.engine.plan.execution import ExecutionPlan  # noqa: E402
from sparkstorm.topology.task import BoltLoop  # noqa: E402
from sparkstorm.topology.tuple import Tuple, values_class  # noqa: E402

WORDS_PER_ROOT = 8
"""Tuples of one root in a row in the tracked batch (the word count: 8.5 words a sentence)."""


class Words(Spout):
    """Declares the word stream the counting bolt reads."""

    outputs = ["word"]


class CountingTopology(Topology):
    """Words into one counting task."""

    words = Words.spec()
    count = CountBolt.spec(inputs={words: Grouping.fields("word")})


def counting_loop() -> BoltLoop:
    """The count task's loop on the engine's collector, as an executor builds it."""
    plan = ExecutionPlan(CountingTopology.topology_spec, {"topology.acker.executors": 1})
    (task,) = plan.component_tasks["count"]
    collector = TaskCollector(task, "count", build_routes(plan, "count", task),
                              plan.task_executor, WindowOutput(), True, True)
    bolt = CountBolt()
    bolt._collector = collector
    bolt.initialize({}, {})
    return BoltLoop(bolt, collector)


def per_tuple_ns(run: Callable[[], Any], tuples: int, repeat: int) -> float:
    """Best nanoseconds per tuple of ``run`` (which handles ``tuples`` tuples)."""
    return min(timeit.repeat(run, number=1, repeat=repeat)) / tuples * 1e9


def main(argv: list[str] | None = None) -> int:
    """Print each loop's nanoseconds per tuple and its ratio to the reference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    rng = random.Random(42)
    words = [f"w{rng.randrange(5_000)}" for _ in range(args.tuples)]
    sentence_roots = [rng.getrandbits(64) for _ in range(len(words) // WORDS_PER_ROOT + 1)]
    roots = [sentence_roots[i // WORDS_PER_ROOT] for i in range(len(words))]
    edges = [rng.getrandbits(64) for _ in words]
    untracked = [None] * len(words)
    cls = values_class(("word",))
    loop = counting_loop()
    source = ("words", "default", 1)

    def tracked_run() -> None:
        run_batch(loop, 1, source, words, cls, roots, edges, False, flat=True)
        loop.collector.output.take()  # type: ignore[attr-defined]

    def untracked_run() -> None:
        run_batch(loop, 1, source, words, cls, untracked, untracked, False, flat=True)

    reference_bolt = CountBolt()
    reference_bolt.initialize({}, {})

    def reference() -> None:
        process, tup = reference_bolt.process, Tuple.__new__(Tuple)
        for word in words:
            tup.values = tuple.__new__(cls, (word,))  # as the engine makes them
            process(tup)

    gc.disable()  # as in executor processes
    figures = {name: per_tuple_ns(run, len(words), args.repeat)
               for name, run in (("reference: process() on one tuple object", reference),
                                 ("run_batch, tracked (acking)", tracked_run),
                                 ("run_batch, untracked (checkpoint reliability)",
                                  untracked_run))}
    gc.enable()
    base = figures["reference: process() on one tuple object"]
    print(f"{len(words):,} one-word tuples, best of {args.repeat}")
    for name, ns in figures.items():
        print(f"  {name:<48} {ns:6.0f} ns/tuple  {ns / base:5.2f}x the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
