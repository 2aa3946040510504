"""pystorm components of the multilang word-count example (run unchanged under Storm).

``python3 words.py sentences|split|count [json|msgpack]``: a ``ReliableSpout`` of numbered
sentences, a ``Bolt`` that splits them, a ``BatchingBolt`` that counts words per tick batch.
Config: ``sentences.count`` (how many sentences; unset: endless).
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from pystorm import BatchingBolt, Bolt, ReliableSpout

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


def sentence(n: int) -> str:
    """The ``n``-th sentence of the stream (deterministic, so counts can be checked)."""
    return SENTENCES[n % len(SENTENCES)]


def expected_counts(total: int) -> Counter[str]:
    """Word counts of the first ``total`` sentences."""
    return Counter(word for n in range(total) for word in sentence(n).split())


class SentenceSpout(ReliableSpout):
    """Emits sentence n with message id n; pystorm's ReliableSpout replays failed ones."""

    def initialize(self, conf, context):  # noqa: ANN001, ANN201 - pystorm's signature
        self.total = conf.get("sentences.count")
        self.n = 0

    def next_tuple(self):  # noqa: ANN201
        if self.total is not None and self.n >= self.total:
            time.sleep(0.001)  # idle: what Storm asks of spouts with nothing to emit
            return
        self.emit([self.n, sentence(self.n)], tup_id=self.n)
        self.n += 1


class SplitBolt(Bolt):
    """Splits a sentence into words (auto-anchored and auto-acked by pystorm)."""

    def process(self, tup):  # noqa: ANN001, ANN201
        for word in tup.values[1].split():
            self.emit([word])


class CountBolt(BatchingBolt):
    """Counts words per batch; a batch closes every second tick (acks come windows later)."""

    def group_key(self, tup):  # noqa: ANN001, ANN201
        return tup.values[0]

    def process_batch(self, key, tups):  # noqa: ANN001, ANN201
        self.emit([key, len(tups)])


COMPONENTS = {"sentences": SentenceSpout, "split": SplitBolt, "count": CountBolt}

if __name__ == "__main__":
    serializer = sys.argv[2] if len(sys.argv) > 2 else "json"
    COMPONENTS[sys.argv[1]](serializer=serializer).run()
