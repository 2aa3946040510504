"""Topologies of ``checkpoint_wordcount.py`` (module level: executors import them by path).

- :class:`StatefulWordCount`: the word count of ``_wordcount_topology`` with its count in a
  StatefulBolt's ``KeyValueState``; the spout's sentences are transient (made again by
  ``initialize``), so a checkpoint holds its position, replays and counters only.
- :class:`BigState`: a slow sentence stream into one StatefulBolt task whose state holds
  ``bench.keys`` keys from the start (filled in ``init_state`` when it is empty).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from sparkstorm import Grouping, StatefulBolt, Topology

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.append(_HERE)

from _wordcount_topology import SentenceSpout, SplitBolt  # noqa: E402


class CheckpointedSentences(SentenceSpout):
    """The benchmark's spout, its input list left out of checkpoints."""

    transient = ("sentences",)


class StatefulCount(StatefulBolt):
    """Counts words in its KeyValueState."""

    outputs = ["word", "count"]

    def init_state(self, state: Any) -> None:
        self.counts = state

    def process(self, tup: Any) -> None:
        word = tup.values[0]
        self.counts.put(word, self.counts.get(word, 0) + 1)


class StatefulWordCount(Topology):
    sentences = CheckpointedSentences.spec(par=1)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = StatefulCount.spec(inputs={split: Grouping.fields("word")}, par=2)


class SlowSentences(CheckpointedSentences):
    """About 200 sentences a second: load enough to see windows, not to saturate them."""

    def next_tuple(self) -> None:
        now = time.monotonic()
        if now < getattr(self, "next_at", 0.0):
            return
        self.next_at = now + 0.005
        if self.next_id >= self.count:
            self.next_id = 0  # an endless stream
        super().next_tuple()


class BigCount(StatefulCount):
    """A StatefulCount whose state starts with ``bench.keys`` keys."""

    def init_state(self, state: Any) -> None:
        super().init_state(state)
        if len(state) == 0:
            for i in range(int(self.storm_conf["bench.keys"])):
                state.put(f"key-{i}", i)


class BigState(Topology):
    sentences = SlowSentences.spec(par=1, config={"bench.sentences": 10_000})
    count = BigCount.spec(inputs=[sentences], par=1)
