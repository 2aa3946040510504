"""The chaos suite's topology: ids 0..N-1 through a relay to a sink, every one tracked.

The spout behaves as a spout over a durable source should: it commits each acked id once
(``acks.jsonl`` in ``chaos.dir``) and, when it starts again after a crash, replays only the
ids not committed yet. The sink records every id it sees (``sink-<task>.jsonl``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Spout, Topology

PER_SECOND = 60
"""Ids the spout emits per second: the stream lasts long enough to hit it mid-way."""


def _append(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps({**record, "pid": os.getpid(), "time": time.time()}) + "\n")


class IdSpout(Spout):
    """Emits each id not yet committed, at :data:`PER_SECOND`; replays failed ids.

    ``committed`` is what the durable source says, so it is not part of the spout's
    checkpointed state: after a rollback (``topology.checkpoint.windows``) the restored
    spout emits again ids it had not acked at the checkpoint, and an id acked since then is
    not committed twice (Storm's at-least-once into an idempotent commit).
    """

    outputs = ["id"]
    transient = ("committed",)

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.folder = Path(conf["chaos.dir"])
        self.acks = self.folder / "acks.jsonl"
        self.committed = ({json.loads(line)["id"]
                           for line in self.acks.read_text().splitlines() if line}
                          if self.acks.exists() else set())
        self.pending = [i for i in range(int(conf["chaos.count"])) if i not in self.committed]
        self.in_flight: set[int] = set()
        self.next_at = time.monotonic()

    def next_tuple(self) -> None:
        if not self.pending or time.monotonic() < self.next_at:
            return
        self.next_at += 1.0 / PER_SECOND
        tup_id = self.pending.pop(0)
        self.in_flight.add(tup_id)
        self.emit([tup_id], tup_id=tup_id)

    def ack(self, tup_id: Any) -> None:
        if tup_id in self.in_flight:  # commit once: a replayed id's first ack counts
            self.in_flight.discard(tup_id)
            if tup_id not in self.committed:
                self.committed.add(tup_id)
                _append(self.acks, {"id": tup_id})

    def fail(self, tup_id: Any) -> None:
        if tup_id in self.in_flight:
            self.in_flight.discard(tup_id)
            self.pending.append(tup_id)


class Relay(Bolt):
    """Passes the id on, anchored."""

    outputs = ["id"]

    def process(self, tup: Any) -> None:
        self.emit([tup.values.id])


class Sink(Bolt):
    """Records every id it receives."""

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.out = Path(conf["chaos.dir"]) / f"sink-{context['taskid']}.jsonl"

    def process(self, tup: Any) -> None:
        _append(self.out, {"id": tup.values.id})


class ChaosTopology(Topology):
    ids = IdSpout.spec()
    relay = Relay.spec(inputs=[ids], par=2)
    sink = Sink.spec(inputs=[relay], par=2)
