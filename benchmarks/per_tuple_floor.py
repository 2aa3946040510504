"""The per-tuple floor: what CPython spends on a tuple before any engine code runs.

The per-tuple word count misses issue 12's target (0.75x the Spark Python-UDF reference);
this benchmark says how far the executors' engine code could fall at best. In one process it
runs, over the same sentences:

- the engine: the benchmark topology's real spout, split and count executors, window by
  window, without Spark or sockets (``profile_executor.Pipeline``, the cyclic GC off as in
  executor processes), CPU per sentence for the split and count phases and the wire between;
- the floor of each phase: the same bolt code (``SplitBolt.process``, ``CountBolt.process``)
  called once per tuple on one reused slotted tuple object, with only what any per-tuple,
  acked design must do per tuple and nothing else: store the tuple's id, values and anchor
  in the object, call ``process``, send every emitted word to the count task its fields
  grouping picks with a fresh random 64-bit edge XORed into its anchor, and XOR each acked
  tuple into its tree's value for the window. No batches, no wire, no statistics;
- plain Python: the same split and count in one loop over the sentences (no tuples).

So ``engine - floor`` is what the engine's own design costs per sentence (batches, wire,
checks), and ``floor`` is what no per-tuple engine in CPython avoids. The ratios are
printed against the plain loop of the same run, so they survive a noisy machine.

Run: ``.venv/bin/python benchmarks/per_tuple_floor.py --sentences 100000``
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
from collections import namedtuple
from itertools import count, repeat
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _sentences import make_sentences  # noqa: E402
from _wordcount_topology import CountBolt, SplitBolt  # noqa: E402
from profile_executor import Pipeline  # noqa: E402


class FloorTuple:
    """The fewest slots a delivered, acked tuple needs (the engine's ``Tuple`` has more)."""

    __slots__ = ("ack_val", "done", "edge", "id", "root", "values")


Word = namedtuple("Word", ["word"])
Sentence = namedtuple("Sentence", ["sentence"])

COUNT_TASKS = 2
"""The count's tasks in the benchmark topology (``_wordcount_topology.WordCountBench``)."""


def floor_split(sentences: list[str], rng: random.Random, tasks: int = COUNT_TASKS
                ) -> tuple[float, list[list[Any]]]:
    """CPU seconds of the split's floor, and each count task's input (words, roots, edges).

    Each word goes to the count task its fields grouping picks (``hash(word) % tasks``).
    """
    bolt = SplitBolt.__new__(SplitBolt)
    new_edge = rng.getrandbits
    xor: dict[int, int] = {}
    targets: list[list[Any]] = [[[], [], []] for _ in range(tasks)]
    appends = [(words.append, roots.append, edges.append) for words, roots, edges in targets]
    roots = [new_edge(64) for _ in sentences]
    tup = FloorTuple()
    emitted: list[str] = []

    def emit(values: list[Any]) -> None:
        emitted.append(values[0])

    bolt.emit = emit  # type: ignore[method-assign]
    process = bolt.process
    started = time.thread_time()
    for tup_id, values, root in zip(count(), map(tuple.__new__, repeat(Sentence),
                                                  zip(sentences)), roots):
        tup.id, tup.values, tup.root, tup.edge = tup_id, values, root, new_edge(64)
        tup.ack_val, tup.done = 0, False
        process(tup)
        children = 0
        for word in emitted:  # each emit: its task, a fresh edge anchored to the sentence
            append_word, append_root, append_edge = appends[hash(word) % tasks]
            edge = new_edge(64)
            children ^= edge
            append_word(word)
            append_root(root)
            append_edge(edge)
        emitted.clear()
        xor[root] = xor.get(root, 0) ^ tup.edge ^ children  # the auto-ack
    return time.thread_time() - started, targets


def floor_count(words: list[str], roots: list[int], edges: list[int]
                ) -> tuple[float, dict[str, int]]:
    """CPU seconds of the count's floor, and the counts it made.

    Consecutive words share a root, as a split sends them to a task.
    """
    bolt = CountBolt.__new__(CountBolt)
    bolt.counts = {}
    process = bolt.process
    xor: dict[int, int] = {}
    tup = FloorTuple()
    run_root, run_xor = None, 0
    started = time.thread_time()
    for tup_id, values, root, edge in zip(count(), map(tuple.__new__, repeat(Word),
                                                        zip(words)), roots, edges):
        tup.id, tup.values, tup.root, tup.edge = tup_id, values, root, edge
        tup.ack_val, tup.done = 0, False
        process(tup)
        if root == run_root:  # the auto-ack, folded per run of one root (as the engine)
            run_xor ^= edge
        else:
            if run_root is not None:
                xor[run_root] = xor.get(run_root, 0) ^ run_xor
            run_root, run_xor = root, edge
    return time.thread_time() - started, bolt.counts


def plain(sentences: list[str]) -> float:
    """CPU seconds of the same split and count in one Python loop."""
    counts: dict[str, int] = {}
    started = time.thread_time()
    for sentence in sentences:
        for word in sentence.split():
            counts[word] = counts.get(word, 0) + 1
    return time.thread_time() - started


def main(argv: list[str] | None = None) -> int:
    """Time the engine's phases and their floors over the same sentences; print both."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    n = args.sentences
    sentences = make_sentences(n, args.seed)
    print(f"{n:,} sentences, {sum(len(s.split()) for s in sentences):,} words; "
          f"CPU microseconds per sentence, {args.rounds} rounds (best of each)")
    best: dict[str, float] = {}
    gc.collect()
    gc.disable()  # as executor processes run
    try:
        for _ in range(args.rounds):
            pipe = Pipeline(n, None, args.seed)
            try:
                pipe.run()
            finally:
                pipe.close()
            wire = pipe.cpu_seconds["wire spout->split"] + pipe.cpu_seconds["wire split->count"]
            split_seconds, targets = floor_split(sentences, random.Random(1))
            count_seconds = sum(floor_count(*columns)[0] for columns in targets)
            released = time.thread_time()
            del targets  # the engine's count frees its input too
            count_seconds += time.thread_time() - released
            figures = {
                "engine: split": pipe.cpu_seconds["split"],
                "engine: count": pipe.cpu_seconds["count"],
                "engine: wire between the executors": wire,
                "engine: spout, meta, acker": sum(pipe.cpu_seconds[p] for p in (
                    "spout emit", "spout window", "meta", "acker")),
                "floor: split": split_seconds,
                "floor: count": count_seconds,
                "plain Python split and count": plain(sentences),
            }
            for name, seconds in figures.items():
                best[name] = min(best.get(name, seconds), seconds)
            del pipe
            gc.collect()
    finally:
        gc.enable()
    per = {name: seconds * 1e6 / n for name, seconds in best.items()}
    for name, micros in per.items():
        print(f"  {name:<38} {micros:7.2f} us")
    engine = sum(v for k, v in per.items() if k.startswith("engine"))
    floor = per["floor: split"] + per["floor: count"]
    reference = per["plain Python split and count"]
    print(f"engine executors in all {engine:.2f} us = {engine / reference:.1f}x plain Python; "
          f"the per-tuple floor (split + count) {floor:.2f} us = {floor / reference:.1f}x; "
          f"split {per['engine: split'] / per['floor: split']:.2f}x its floor, "
          f"count {per['engine: count'] / per['floor: count']:.2f}x its floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
