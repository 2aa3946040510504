"""The topology of the test-host tests: ids 0..N-1 through a relay to a sink.

Its results go to ``hosts.dir`` (a folder every test host sees): the spout appends each
acked id to ``acks-<task>.jsonl``, the sink each id it received to ``sink-<task>.jsonl``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Grouping, Spout, Topology


def _append(path: Path, value: int) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(value) + "\n")


class Ids(Spout):
    """Emits ids 0..hosts.count-1 with themselves as message ids; replays failures.

    ``hosts.per_second`` (optional) paces it, so that a fault can hit the stream mid-way.
    It records each id once, at its first ack, as a spout over a durable source commits it;
    started again after a crash, it emits only the ids not recorded yet.
    """

    outputs = ["id"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.acks = Path(conf["hosts.dir"]) / f"acks-{context['taskid']}.jsonl"
        done = ({json.loads(line) for line in self.acks.read_text().splitlines() if line}
                if self.acks.exists() else set())
        self.pending = [i for i in range(int(conf["hosts.count"])) if i not in done]
        self.in_flight: set[int] = set()
        per_second = float(conf.get("hosts.per_second") or 0)
        self.interval = 1.0 / per_second if per_second else 0.0
        self.next_at = time.monotonic()

    def next_tuple(self) -> None:
        if not self.pending or time.monotonic() < self.next_at:
            return
        self.next_at += self.interval
        tup_id = self.pending.pop(0)
        self.in_flight.add(tup_id)
        self.emit([tup_id], tup_id=tup_id)

    def ack(self, tup_id: Any) -> None:
        if tup_id in self.in_flight:
            self.in_flight.discard(tup_id)
            _append(self.acks, tup_id)

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
        self.out = Path(conf["hosts.dir"]) / f"sink-{context['taskid']}.jsonl"

    def process(self, tup: Any) -> None:
        _append(self.out, tup.values.id)


class Numbers(Topology):
    ids = Ids.spec()
    relay = Relay.spec(inputs=[ids], par=2)
    sink = Sink.spec(inputs={relay: Grouping.fields("id")}, par=2)
