"""Components of the checkpoint tests (imported by class path in executor processes).

The spout keeps its position, its replay queue and the ids acked so far in its own
attributes, so a rollback rewinds all of them; the count bolt keeps its counts in its
``KeyValueState``. A committed checkpoint therefore holds both sides of the guarantee: the
ids the spout saw acked and the counts of exactly those tuples.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sparkstorm import Spout, StatefulBolt
from sparkstorm.state import KeyValueState
from tests.integration.spark.components import KEYS, Recorder


class PositionSpout(Spout):
    """Emits ``[n, key]`` for n in 0..test.count-1 with message id n; replays failures."""

    outputs = ["n", "key"]
    transient = ("record",)  # a file handle: re-opened by initialize() after a restore

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.count = int(conf["test.count"])
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
        self.record("ack", n=tup_id)

    def fail(self, tup_id: Any) -> None:
        self.replay.append(tup_id)
        self.record("fail", n=tup_id)


class CheckpointedCount(StatefulBolt):
    """Counts tuples per key in its state; raises once at ``test.raise_at`` (a marker file
    under ``test.dir`` says it did, since its own attributes roll back)."""

    outputs = ["key", "count"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        raise_at = conf.get("test.raise_at")
        self.raise_at = None if raise_at is None else int(raise_at)
        self.marker = Path(conf["test.dir"]) / "raised"

    def init_state(self, state: KeyValueState) -> None:
        self.counts = state

    def process(self, tup: Any) -> None:
        n, key = tup.values
        if n == self.raise_at and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            msg = f"raising once at {n}"
            raise RuntimeError(msg)
        self.counts.put(key, self.counts.get(key, 0) + 1)
        self.emit([key, self.counts.get(key)])
