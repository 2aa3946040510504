"""The benchmarks' ColumnarSentenceSpout: SentenceSpout's sentences, batched, same replays.

Run on a real spout executor (``benchmarks/_wordcount_topology.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _sentences import make_sentences
from _wordcount_topology import BATCH_TOPOLOGY, SPOUT, shared_spout_topology

from sparkstorm.engine.executor.factory import make_executor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.testing.polling import wait_for


def _sent(output: Any) -> list[str]:
    return [s for pieces in output.arrow.values() for p in pieces
            for s in p.values.column(0).to_pylist()]


def test_it_emits_the_sentences_once_and_replays_a_failed_batch_whole() -> None:
    plan = ExecutionPlan(BATCH_TOPOLOGY.topology_spec, {
        "topology.acker.executors": 1, "bench.sentences": 1000,
        "topology.spout.buffer.size": 1000})
    host = make_executor(plan, next(e.gid for e in plan.executors if e.component == SPOUT),
                         "t")
    try:
        (spout,) = host.instances.values()
        spout.max_batch_rows = 300  # four batches: 300, 300, 300, 100
        host.run_window(SpoutControl())
        wait_for(lambda: host.output.count >= 1000, timeout=10, message="all buffered")
        first = host.run_window(SpoutControl())
        assert sorted(_sent(first)) == sorted(make_sentences(1000))
        (collector,) = host.collectors.values()
        roots = {batch: root for root, (batch, _, _) in collector.pending_roots.items()}
        assert sorted(roots) == [0, 300, 600, 900]
        host.run_window(SpoutControl(fail=[roots[300]],
                                     ack=[roots[0], roots[600], roots[900]]))
        wait_for(lambda: host.output.count >= 300, timeout=10, message="the replay")
        replayed = host.run_window(SpoutControl())
        assert sorted(_sent(replayed)) == sorted(make_sentences(1000)[300:600])
        (again,) = [r for r, (batch, _, _) in collector.pending_roots.items() if batch == 300]
        host.run_window(SpoutControl(ack=[again]))
        assert (spout.acked, spout.failed) == (1000, 300)
    finally:
        host.close()


def test_shared_tasks_split_the_sentences_as_sentence_spout_does() -> None:
    topology = shared_spout_topology(2, batch_api=True)
    plan = ExecutionPlan(topology.topology_spec, {"topology.acker.executors": 1,
                                                  "bench.sentences": 101, "bench.share": True})
    columns = []
    for info in plan.executors:
        if info.component == SPOUT:
            host = make_executor(plan, info.gid, "t")
            (spout,) = host.instances.values()
            columns.append(spout.column.to_pylist())
            host.close()
    sentences = make_sentences(101)
    assert columns == [sentences[0::2], sentences[1::2]]
