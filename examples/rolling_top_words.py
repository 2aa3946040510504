"""Rolling top words: counts over a sliding window kept by tick tuples, as Storm's example.

``RollingCountBolt`` keeps per-word counts in slots; every tick (``emit.frequency`` s) it
emits each word's count over the last ``window.slots`` ticks and advances the window.
``IntermediateRankerBolt`` (fields grouping) and ``TotalRankerBolt`` (global grouping)
keep the top N and emit the ranking on each tick.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from sparkstorm import Bolt, Grouping, Spout, Topology

WORDS = ("storm", "spark", "bolt", "spout", "tuple", "stream", "window", "acker")


class RandomWordSpout(Spout):
    """Emits words with a skewed distribution, so the ranking is stable."""

    outputs = ["word"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.rng = random.Random(context["taskid"])
        self.weights = [2 ** (len(WORDS) - i) for i in range(len(WORDS))]
        self.next_id = 0

    def next_tuple(self) -> None:
        self.next_id += 1
        self.emit([self.rng.choices(WORDS, self.weights)[0]], tup_id=self.next_id)


class RollingCountBolt(Bolt):
    """Counts per word over the last ``rolling.slots`` ticks."""

    outputs = ["word", "count"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.slots = int(storm_conf.get("rolling.slots", 5))
        self.counts: dict[str, list[int]] = defaultdict(lambda: [0] * self.slots)
        self.head = 0

    def process(self, tup: Any) -> None:
        self.counts[tup.values.word][self.head] += 1

    def process_tick(self, tup: Any) -> None:
        for word, slots in list(self.counts.items()):
            total = sum(slots)
            if total:
                self.emit([word, total], anchors=[])
            else:
                del self.counts[word]
        self.head = (self.head + 1) % self.slots
        for slots in self.counts.values():
            slots[self.head] = 0


class RankerBolt(Bolt):
    """Keeps the top ``rank.top`` words by count and emits the ranking on every tick."""

    outputs = ["rankings"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.top = int(storm_conf.get("rank.top", 3))
        self.counts: dict[str, int] = {}

    def process(self, tup: Any) -> None:
        if tup.stream == "default" and len(tup.values) == 2:
            self.counts[tup.values[0]] = tup.values[1]
        else:
            for word, count in tup.values.rankings:
                self.counts[word] = count

    def process_tick(self, tup: Any) -> None:
        ranking = sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[: self.top]
        self.emit([[list(item) for item in ranking]], anchors=[])


class TotalRankerBolt(RankerBolt):
    """The final ranking; logs it on every tick."""

    def process_tick(self, tup: Any) -> None:
        super().process_tick(tup)
        ranking = sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[: self.top]
        self.logger.info("top words: %s", ranking)


class RollingTopWords(Topology):
    config = {"topology.tick.tuple.freq.secs": 2}
    words = RandomWordSpout.spec()
    counter = RollingCountBolt.spec(inputs={words: Grouping.fields("word")}, par=2)
    ranker = RankerBolt.spec(inputs={counter: Grouping.fields("word")}, par=2)
    total = TotalRankerBolt.spec(inputs={ranker: Grouping.GLOBAL})
