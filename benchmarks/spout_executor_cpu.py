"""Spout executor CPU per sentence: the per-tuple SentenceSpout vs the columnar BatchSpout.

Runs a real spout executor of ``_wordcount_topology.WordCountBatchBenchPerTupleSpout``
(``SentenceSpout``: a ``next_tuple`` call, an emit and a message id per sentence) and of
``WordCountBatchBench`` (``ColumnarSentenceSpout``: Arrow slices, one id per batch) through
one window of ``--sentences`` as the engine does: produce into the buffer, take the window,
encode it for the split executors (Arrow IPC pieces), then apply the acks of every tree. CPU
time of the whole process (the producing thread included), GC off as in executor processes;
best and median of ``--runs`` interleaved runs, so the ratio survives a loaded machine. No
Spark, no sockets: the spout executor's own work only.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/spout_executor_cpu.py --sentences 100000``
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

from _wordcount_topology import (  # noqa: E402
    BATCH_TOPOLOGY,
    BATCH_TOPOLOGY_PER_TUPLE_SPOUT,
    SPOUT,
)

from sparkstorm.engine.executor.factory import make_executor  # noqa: E402
from sparkstorm.engine.plan.execution import ExecutionPlan  # noqa: E402
from sparkstorm.engine.wire.messages import SpoutControl  # noqa: E402


def one_run(topology: Any, sentences: int) -> float:
    """CPU seconds of producing, taking, encoding and acking ``sentences`` sentences."""
    plan = ExecutionPlan(topology.topology_spec, {
        "topology.acker.executors": 1, "bench.sentences": sentences,
        "topology.spout.buffer.size": sentences, "topology.spout.buffer.max.size": sentences})
    gid = next(e.gid for e in plan.executors if e.component == SPOUT)
    host = make_executor(plan, gid, "bench")
    try:
        started = time.process_time()
        host.run_window(SpoutControl(limit=sentences))  # activates: produce from now
        while host.output.count < sentences:
            time.sleep(0.002)
        out = host.run_window(SpoutControl(limit=sentences))
        encoded = host.encode_rows(out)
        assert sum(map(len, encoded.values())) > 0
        roots = [root for c in host.collectors.values() for root in c.pending_roots]
        host.run_window(SpoutControl(ack=roots, limit=sentences))
        spent = time.process_time() - started
        (instance,) = host.instances.values()
        assert instance.acked == sentences, (instance.acked, sentences)
        return spent
    finally:
        host.close()


def main(argv: list[str] | None = None) -> int:
    """Interleave the two spouts ``--runs`` times; print µs per sentence, best and median."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    kinds = {"per-tuple SentenceSpout": BATCH_TOPOLOGY_PER_TUPLE_SPOUT,
             "columnar ColumnarSentenceSpout": BATCH_TOPOLOGY}
    times: dict[str, list[float]] = {name: [] for name in kinds}
    gc.disable()
    for _ in range(args.runs):
        for name, topology in kinds.items():
            times[name].append(one_run(topology, args.sentences))
            gc.collect()
    n = args.sentences
    for name, spent in times.items():
        print(f"{name:32s} best {1e6 * min(spent) / n:6.2f} us/sentence   "
              f"median {1e6 * statistics.median(spent) / n:6.2f} us/sentence")
    ratio = statistics.median(times["per-tuple SentenceSpout"]) / statistics.median(
        times["columnar ColumnarSentenceSpout"])
    print(f"per-tuple / columnar (medians): {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
