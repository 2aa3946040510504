"""A paced stateful count for the spark-submit fault tests (self-contained: the code zip).

The spout emits ``[n, key]`` for n in 0..paced.count-1 at ``paced.rate`` per second
(message id n) and keeps its position, its replays and the ids acked in its attributes;
the count bolt keeps its counts per key in its ``KeyValueState``. So the newest committed
checkpoint holds both sides: the ids acked and the counts of exactly those tuples (the
cluster suite's ``stateful_count.py``, paced so that ids still flow after a fault).
With ``paced.dir`` set, each first ack of an id (in this incarnation of the spout's state)
is appended to ``acks.jsonl`` there with its time: how long a fault held acks up.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sparkstorm import Grouping, Spout, StatefulBolt, Topology

KEYS = 7


class PositionSpout(Spout):
    """Emits ``[n, key]`` at ``paced.rate`` per second; replays failed ids first."""

    outputs = ["n", "key"]
    transient = ("next_at",)

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.count = int(conf["paced.count"])
        self.rate = float(conf.get("paced.rate", 100))
        self.next_n = 0
        self.replay: list[int] = []
        self.acked: set[int] = set()
        self.next_at = time.monotonic()
        self.ack_log = conf.get("paced.dir")

    def next_tuple(self) -> None:
        if self.replay:
            n = self.replay.pop(0)
        elif self.next_n < self.count and time.monotonic() >= getattr(self, "next_at", 0.0):
            self.next_at = max(getattr(self, "next_at", 0.0), time.monotonic() - 1.0) + (
                1.0 / self.rate)
            n = self.next_n
            self.next_n += 1
        else:
            return
        self.emit([n, f"k{n % KEYS}"], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        if self.ack_log and tup_id not in self.acked:
            with (Path(self.ack_log) / "acks.jsonl").open("a", encoding="utf-8") as out:
                out.write(json.dumps({"id": tup_id, "time": time.time()}) + "\n")
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


class PacedCount(Topology):
    numbers = PositionSpout.spec()
    count = KeyCount.spec(inputs={numbers: Grouping.fields("key")}, par=2)
