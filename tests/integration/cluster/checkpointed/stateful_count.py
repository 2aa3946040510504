"""A stateful count submitted to a test cluster with checkpoints on.

Self-contained: the upload is this folder.

The spout keeps its position, replays and acked ids in its attributes and the count bolt
its counts in its ``KeyValueState``, so the newest committed checkpoint holds both sides:
the ids acked and the counts of exactly those tuples.
"""

from __future__ import annotations

from typing import Any

from sparkstorm import Grouping, Spout, StatefulBolt, Topology

KEYS = 7


class PositionSpout(Spout):
    """Emits ``[n, key]`` for n in 0..stateful.count-1 (message id n); replays failures."""

    outputs = ["n", "key"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.count = int(conf["stateful.count"])
        self.next_n = 0
        self.replay: list[int] = []
        self.acked: set[int] = set()

    def next_tuple(self) -> None:
        if self.replay:
            n = self.replay.pop(0)
        elif self.next_n < self.count:
            n = self.next_n
            self.next_n += 1
        else:
            return
        self.emit([n, f"k{n % KEYS}"], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        self.acked.add(tup_id)

    def fail(self, tup_id: Any) -> None:
        self.replay.append(tup_id)


class KeyCount(StatefulBolt):
    """Counts tuples per key in its state."""

    outputs: list[Any] = []

    def init_state(self, state: Any) -> None:
        self.counts = state

    def process(self, tup: Any) -> None:
        key = tup.values.key
        self.counts.put(key, self.counts.get(key, 0) + 1)


class StatefulCount(Topology):
    numbers = PositionSpout.spec()
    count = KeyCount.spec(inputs={numbers: Grouping.fields("key")}, par=2)
