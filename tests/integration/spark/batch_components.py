"""BatchBolt components for the Spark integration tests: a word count in columns.

They live at module level so executor processes can import them, and report through the
JSON-lines files of ``components.Recorder``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sparkstorm import BatchBolt, BatchSpout, Bolt, Spout
from tests.integration.spark.components import Recorder

VOCABULARY = ["storm", "spark", "arrow", "bolt", "spout", "tuple", "window", "ack"]


def sentence(n: int) -> str:
    """Sentence ``n``: 3 to 7 words of the vocabulary, deterministic."""
    return " ".join(VOCABULARY[(n * 7 + i * 3) % len(VOCABULARY)] for i in range(3 + n % 5))


def expected_counts(count: int) -> Counter[str]:
    """The word counts of sentences ``0 .. count - 1``."""
    return Counter(word for n in range(count) for word in sentence(n).split())


class SentenceSpout(Spout):
    """Emits ``[n, sentence(n)]`` with message id n, ``test.count`` of them; replays fails."""

    outputs = ["n", "sentence"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.count = int(conf["test.count"])
        self.next_n = 0
        self.replay: list[int] = []

    def next_tuple(self) -> None:
        if self.replay:
            n = self.replay.pop(0)
        elif self.next_n < self.count:
            n = self.next_n
            self.next_n += 1
        else:
            return
        self.emit([n, sentence(n)], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        self.record("ack", n=tup_id)

    def fail(self, tup_id: Any) -> None:
        self.record("fail", n=tup_id)
        self.replay.append(tup_id)


class NumberedBatchSpout(BatchSpout):
    """Batches of numbered rows, one message id per batch, replayed whole with their id.

    Batch ``b`` holds the numbers ``b .. b + len - 1`` (``test.batch_rows`` at most, default
    :attr:`batch_rows_default`, and at most the room the engine gives); its id is ``b``.
    Subclasses give the batch's columns (:meth:`columns`) and their ``ack``/``fail``.
    """

    batch_rows_default = 40

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.count = int(conf["test.count"])
        self.batch_rows = int(conf.get("test.batch_rows", self.batch_rows_default))
        self.next_n = 0
        self.open: dict[int, list[int]] = {}
        self.replay: list[int] = []

    def columns(self, numbers: list[int]) -> pa.RecordBatch:
        """The batch of rows ``numbers``."""
        raise NotImplementedError

    def next_batch(self, max_rows: int) -> None:
        if self.replay:
            first = self.replay.pop(0)
            numbers = self.open[first]
        elif self.next_n < self.count:
            first = self.next_n
            numbers = list(range(first, min(self.count, first + self.batch_rows,
                                            first + max_rows)))
            self.next_n = numbers[-1] + 1
            self.open[first] = numbers
        else:
            return
        self.emit_batch(self.columns(numbers), batch_id=first)


class SentenceBatchSpout(NumberedBatchSpout):
    """The columnar ``SentenceSpout``: batches of ``[n, sentence(n)]``, one id per batch.

    Records ``ack``/``fail`` once per batch, with its numbers, and replays a failed batch
    with the same id.
    """

    outputs = ["n", "sentence"]

    def columns(self, numbers: list[int]) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays(
            [pa.array(numbers, pa.int64()), pa.array([sentence(n) for n in numbers])],
            ["n", "sentence"])

    def ack(self, tup_id: Any) -> None:
        self.record("batch_ack", batch=tup_id, ns=self.open.pop(tup_id))

    def fail(self, tup_id: Any) -> None:
        self.record("batch_fail", batch=tup_id, ns=self.open[tup_id])
        self.replay.append(tup_id)


class ArrowSplit(BatchBolt):
    """Splits with ``utf8_split_whitespace``; each word anchored to its sentence.

    With ``test.raise_on`` set it raises (before emitting) on its first batch that holds
    sentence ``test.raise_on``, once (a marker file survives the restart), recording the
    numbers of that batch.
    """

    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.raise_on = conf.get("test.raise_on")
        self.marker = Path(conf["test.dir"]) / "raised.marker"

    def process_batch(self, batch: Any) -> None:
        numbers = batch.column("n").to_pylist()
        if self.raise_on in numbers and not self.marker.exists():
            self.marker.write_text("x")
            self.record("raised", ns=numbers)
            msg = f"boom in a batch of {len(numbers)}"
            raise ValueError(msg)
        lists = pc.utf8_split_whitespace(batch.column("sentence"))
        self.emit_batch(pa.RecordBatch.from_arrays([pc.list_flatten(lists)], ["word"]),
                        parents=pc.list_parent_indices(lists))


class ListsSplit(BatchBolt):
    """The same split on the lists format: a dict of lists in, a dict of lists out."""

    outputs = ["word"]
    batch_format = "lists"

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)

    def process_batch(self, batch: Any) -> None:
        self.record("format", type=type(batch).__name__)
        words, parents = [], []
        for index, text in enumerate(batch["sentence"]):
            for word in text.split():
                words.append(word)
                parents.append(index)
        self.emit_batch({"word": words}, parents=parents)


class ArrowCount(BatchBolt):
    """Counts words with ``pc.value_counts`` (fields grouping on word); records each batch."""

    outputs = ["word", "count"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.counts: Counter[str] = Counter()

    def process_batch(self, batch: Any) -> None:
        counted = pc.value_counts(batch.column("word"))
        delta = dict(zip(counted.field("values").to_pylist(),
                         counted.field("counts").to_pylist(), strict=True))
        self.counts.update(delta)
        self.record("counted", delta=delta)


class TupleCount(Bolt):
    """A per-tuple count fed by a batch bolt (fields grouping on word); records each word."""

    outputs = ["word", "count"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        self.record("counted", delta={tup.values[0]: 1})
