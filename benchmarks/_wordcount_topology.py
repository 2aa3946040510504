"""The word-count topology the benchmarks run: reliable spout -> split (x2) -> count (x2).

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
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from sparkstorm import Bolt, Grouping, Spout, Topology

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # so ``_sentences`` imports however this module was reached
    sys.path.append(_HERE)

from _sentences import make_sentences  # noqa: E402


class SentenceSpout(Spout):
    """Emits sentence ``i`` with ``tup_id=i`` once; replays the ids that fail or time out."""

    outputs = ["sentence"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.count = int(storm_conf.get("bench.sentences", 0))
        self.seed = int(storm_conf.get("bench.seed", 42))
        self.sentences = make_sentences(self.count, self.seed)
        self.next_id = 0
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
        self.next_id = tup_id + 1
        self.emit([self.sentences[tup_id]], tup_id=tup_id)

    def _due(self, tup_id: int) -> bool:
        if not self.rate or tup_id == 0:
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


TOPOLOGY = WordCountBench
SPOUT, SPLIT, COUNT = "sentences", "split", "count"
