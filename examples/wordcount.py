"""Word count: a reliable sentence spout, a split bolt and a counting bolt.

Run it with ``sparkstorm run examples/wordcount.py --time 30``. The spout keeps every
sentence it emitted until the acker says its whole tree completed, and emits it again when
the tree fails or times out: at-least-once processing, as in Storm's starter topology.
"""

from __future__ import annotations

import random
import time
from typing import Any

from sparkstorm import Bolt, Grouping, Spout, Topology

WORDS = ("the cow jumped over the moon an apple a day keeps the doctor away four score "
         "and seven years ago snow white and the seven dwarfs i am at two with nature").split()


class SentenceSpout(Spout):
    """Emits random sentences with message ids; replays the ones that fail.

    Conf ``wordcount.sentences``: stop after this many distinct sentences (0: never stop).
    Conf ``wordcount.rate``: new sentences per second (0: as fast as the topology takes
    them, the default); replays go out at once. With a rate, ``sparkstorm run`` shows the
    topology's latency at that load instead of at saturation.
    """

    outputs = ["sentence"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.limit = int(storm_conf.get("wordcount.sentences", 0))
        self.rng = random.Random(context["taskid"])
        self.next_id = 0
        self.pending: dict[int, str] = {}
        self.replay: list[int] = []
        self.acked_ids: set[int] = set()
        self.rate = float(storm_conf.get("wordcount.rate", 0) or 0)
        self.started: float | None = None

    def next_tuple(self) -> None:
        if self.replay:
            msg_id = self.replay.pop()
            self.emit([self.pending[msg_id]], tup_id=msg_id)
            return
        if self.limit and self.next_id >= self.limit:
            return
        if self.rate and not self._due():
            return  # next_tuple must not block: the engine calls it again soon
        sentence = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(5, 12)))
        self.next_id += 1
        self.pending[self.next_id] = sentence
        self.emit([sentence], tup_id=self.next_id)

    def _due(self) -> bool:
        """Whether the next new sentence is due at ``wordcount.rate`` (the first is)."""
        now = time.monotonic()
        if self.started is None:
            self.started = now
        return self.next_id < (now - self.started) * self.rate + 1

    def ack(self, tup_id: Any) -> None:
        self.pending.pop(tup_id, None)
        self.acked_ids.add(tup_id)

    def fail(self, tup_id: Any) -> None:
        if tup_id in self.pending:
            self.replay.append(tup_id)


class SplitBolt(Bolt):
    """Splits a sentence into words (anchored to the sentence, acked after process)."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        for word in tup.values.sentence.split():
            self.emit([word])


class CountBolt(Bolt):
    """Counts words; emits the running count of each word it sees."""

    outputs = ["word", "count"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.counts: dict[str, int] = {}

    def process(self, tup: Any) -> None:
        word = tup.values[0]
        count = self.counts[word] = self.counts.get(word, 0) + 1
        self.emit([word, count])


class WordCount(Topology):
    sentences = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2, num_tasks=4)
