"""The word-count topologies the benchmarks run: reliable spout -> split (x2) -> count (x2).

``WordCountBench`` uses per-tuple bolts; ``WordCountBatchBench`` ``BatchBolt`` classes
written with pyarrow.compute (split: ``utf8_split_whitespace`` + ``list_flatten``, each word
anchored to its sentence by ``list_parent_indices``; count: ``value_counts``) fed by
``ColumnarSentenceSpout``, a ``BatchSpout`` that emits the same sentences as Arrow slices,
one message id per batch; ``WordCountBatchBenchPerTupleSpout`` is the batch bolts fed by the
per-tuple ``SentenceSpout`` (the batch API before the columnar spout). All name their
components alike, so the benchmark reads them the same way.

Components live at module level here because executor processes import them by
``module:QualName`` (the worker hands its ``sys.path`` to them). The spout makes its
input itself, deterministically, from ``bench.sentences`` and ``bench.seed`` with
``_sentences.make_sentences``, so the topology counts exactly the sentences the reference
implementations count, and no input has to travel to the executor process.

Conf keys (topology conf):
    bench.sentences: how many sentences to emit (each once, replayed on fail), then stop.
    bench.seed: seed of ``make_sentences`` (default 42, as the references).
    bench.rate: sentences per second the spout offers (0, the default: as fast as it may);
        sentence 0 goes alone, and sentence ``i`` no earlier than ``i / rate`` s after its
        ack (so Spark's first, slow jobs leave no backlog behind), as from a queue that
        receives that rate (it catches up after back-pressure, nothing is skipped).
    bench.share: true: the spout's tasks share the sentences (task ``k`` of ``n`` emits the
        ids ``i`` with ``i % n == k``), so a spout of several executors still emits each
        sentence once (``wordcount.py --spouts``); false (default): every task emits all.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from sparkstorm import BatchBolt, BatchSpout, Bolt, Grouping, Spout, Topology

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # so ``_sentences`` imports however this module was reached
    sys.path.append(_HERE)

from _sentences import make_sentences  # noqa: E402


class SentenceSpout(Spout):
    """Emits sentence ``i`` with ``tup_id=i`` once; replays the ids that fail or time out."""

    outputs = ["sentence"]
    transient = ("sentences",)  # made again by initialize: not in every checkpoint

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.count = int(storm_conf.get("bench.sentences", 0))
        self.seed = int(storm_conf.get("bench.seed", 42))
        self.sentences = make_sentences(self.count, self.seed)
        self.next_id, self.step = 0, 1
        if storm_conf.get("bench.share"):
            mine = sorted(int(t) for t, c in context["task->component"].items()
                          if c == context["componentid"])
            self.next_id, self.step = mine.index(int(context["taskid"])), len(mine)
        self.rate = float(storm_conf.get("bench.rate", 0) or 0)
        self.started: float | None = None
        self.replay: list[int] = []
        self.acked = 0
        self.failed = 0

    def next_tuple(self) -> None:
        if self.replay:
            tup_id = self.replay.pop()
            self.emit([self.sentences[tup_id]], tup_id=tup_id)
            return
        tup_id = self.next_id
        if tup_id >= self.count or not self._due(tup_id):
            return
        self.next_id = tup_id + self.step
        self.emit([self.sentences[tup_id]], tup_id=tup_id)

    def _due(self, tup_id: int) -> bool:
        if not self.rate or tup_id < self.step:  # each task's first goes at once
            return True
        return (self.started is not None
                and time.monotonic() - self.started >= tup_id / self.rate)

    def ack(self, tup_id: Any) -> None:
        self.acked += 1
        if self.started is None:
            self.started = time.monotonic() - 1.0 / max(self.rate, 1e-9)

    def fail(self, tup_id: Any) -> None:
        self.failed += 1
        self.replay.append(tup_id)


class ColumnarSentenceSpout(BatchSpout):
    """``SentenceSpout``'s sentences as Arrow slices: one batch id per slice, replayed whole.

    The task's sentences are one ``pyarrow`` string array; ``next_batch`` emits the next
    ``max_rows`` of them that are due as a zero-copy slice, with the slice's first index as
    its batch id. A failed or timed-out batch is emitted again with the same id. Same conf
    keys (``bench.sentences``, ``bench.seed``, ``bench.rate``, ``bench.share``) and counters
    (``acked``, ``failed``: sentences) as ``SentenceSpout``.
    """

    outputs = ["sentence"]
    transient = ("pa", "column")  # a module, and the sentences initialize makes again

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        import pyarrow as pa  # here: only the batch topology's processes load pyarrow

        self.pa = pa
        count = int(storm_conf.get("bench.sentences", 0))
        sentences = make_sentences(count, int(storm_conf.get("bench.seed", 42)))
        self.first_id, self.step = 0, 1
        if storm_conf.get("bench.share"):
            mine = sorted(int(t) for t, c in context["task->component"].items()
                          if c == context["componentid"])
            self.first_id, self.step = mine.index(int(context["taskid"])), len(mine)
        # sentence j of this task is sentence first_id + j * step of the run
        self.column = pa.array(sentences[self.first_id::self.step], pa.string())
        del sentences
        self.rate = float(storm_conf.get("bench.rate", 0) or 0)
        self.started: float | None = None
        self.next_j = 0
        self.open: dict[int, int] = {}
        """Batch id (its first j) -> its rows, for the batches in flight."""
        self.replay: list[int] = []
        self.acked = 0
        self.failed = 0

    def next_batch(self, max_rows: int) -> None:
        if self.replay:
            first = self.replay.pop()
            rows = self.open[first]
        else:
            first = self.next_j
            rows = min(max_rows, self._due() - first)
            if rows <= 0:
                return
            self.next_j = first + rows
            self.open[first] = rows
        batch = self.pa.RecordBatch.from_arrays([self.column.slice(first, rows)],
                                                ["sentence"])
        self.emit_batch(batch, batch_id=first)

    def _due(self) -> int:
        """How many of this task's sentences are due (``SentenceSpout._due`` per batch)."""
        total = len(self.column)
        if not self.rate:
            return total
        if self.started is None:
            return 1  # each task's first goes at once
        ids_due = (time.monotonic() - self.started) * self.rate  # sentence id i: i / rate
        return min(total, max(1, int((ids_due - self.first_id) // self.step) + 1))

    def ack(self, tup_id: Any) -> None:
        self.acked += self.open.pop(tup_id)
        if self.started is None:
            self.started = time.monotonic() - 1.0 / max(self.rate, 1e-9)

    def fail(self, tup_id: Any) -> None:
        self.failed += self.open[tup_id]
        self.replay.append(tup_id)


class SplitBolt(Bolt):
    """Splits a sentence into words; emits are anchored to it (auto_anchor), then acked."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        emit = self.emit
        for word in tup.values[0].split():
            emit([word])


class CountBolt(Bolt):
    """Counts words per task (fields grouping on ``word``); acked by auto_ack."""

    outputs = ["word", "count"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.counts: dict[str, int] = {}

    def process(self, tup: Any) -> None:
        word = tup.values[0]
        self.counts[word] = self.counts.get(word, 0) + 1


class WordCountBench(Topology):
    sentences = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)


class ArrowSplitBolt(BatchBolt):
    """Splits a window's sentences in one pyarrow call; words anchored to their sentence."""

    outputs = ["word"]

    def process_batch(self, batch: Any) -> None:
        import pyarrow as pa  # here, not at the top: the per-tuple topology's processes
        import pyarrow.compute as pc  # (and the spout's) need not load pyarrow (~70 MiB)

        lists = pc.utf8_split_whitespace(batch.column(0))
        self.emit_batch(pa.RecordBatch.from_arrays([pc.list_flatten(lists)], ["word"]),
                        parents=pc.list_parent_indices(lists))


class ArrowCountBolt(BatchBolt):
    """Counts a window's words per task with ``value_counts``; acked per batch."""

    outputs = ["word", "count"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.counts: dict[str, int] = {}

    def process_batch(self, batch: Any) -> None:
        import pyarrow.compute as pc  # see ArrowSplitBolt

        counted = pc.value_counts(batch.column(0))
        counts = self.counts
        for word, n in zip(counted.field("values").to_pylist(),
                           counted.field("counts").to_pylist(), strict=True):
            counts[word] = counts.get(word, 0) + n


class WordCountBatchBench(Topology):
    sentences = ColumnarSentenceSpout.spec(par=1)
    split = ArrowSplitBolt.spec(inputs=[sentences], par=2)
    count = ArrowCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)


class WordCountBatchBenchPerTupleSpout(Topology):
    """The batch bolts fed by the per-tuple spout (``wordcount.py --per-tuple-spout``)."""

    sentences = SentenceSpout.spec(par=1)
    split = ArrowSplitBolt.spec(inputs=[sentences], par=2)
    count = ArrowCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)


class WordCountScaling(Topology):
    """Two of each executor, so that two hosts get the same share (``scaling.py``).

    Each spout task emits every sentence: ``2 * bench.sentences`` in all.
    """

    sentences = SentenceSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)


def shared_spout_topology(spouts: int, batch_api: bool = False,
                          columnar_spout: bool = True) -> type[Topology]:
    """A word count with ``spouts`` spout executors sharing the sentences.

    ``WordCountBench``'s bolts, or ``WordCountBatchBench``'s with ``batch_api`` (fed by
    ``ColumnarSentenceSpout`` unless ``columnar_spout`` is false). Run with
    ``bench.share``. With two, spout -> split is a same-parallelism shuffle, which the engine
    chains (``engine.plan.chaining``): split runs in the spouts' Spark tasks.
    """
    split_bolt, count_bolt = (ArrowSplitBolt, ArrowCountBolt) if batch_api \
        else (SplitBolt, CountBolt)
    spout: type[Spout] = ColumnarSentenceSpout if batch_api and columnar_spout \
        else SentenceSpout
    sentences = spout.spec(par=spouts)
    split = split_bolt.spec(inputs=[sentences], par=2)
    count = count_bolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    namespace = {"sentences": sentences, "split": split, "count": count}
    kind = ("Batch" if columnar_spout else "BatchPerTupleSpout") if batch_api else ""
    return type(f"WordCount{kind}{spouts}Spouts", (Topology,), namespace)


TOPOLOGY = WordCountBench
BATCH_TOPOLOGY = WordCountBatchBench
BATCH_TOPOLOGY_PER_TUPLE_SPOUT = WordCountBatchBenchPerTupleSpout
SPOUT, SPLIT, COUNT = "sentences", "split", "count"
