"""The topology of the test-host tests: ids 0..N-1 through a relay to a sink.

Its results go to ``hosts.dir`` (a folder every test host sees): the spout appends each
acked id to ``acks-<task>.jsonl``, the sink each id it received to ``sink-<task>.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Grouping, Spout, Topology


def _append(path: Path, value: int) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(value) + "\n")


class Ids(Spout):
    """Emits ids 0..hosts.count-1 with themselves as message ids; replays failures."""

    outputs = ["id"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.acks = Path(conf["hosts.dir"]) / f"acks-{context['taskid']}.jsonl"
        self.pending = list(range(int(conf["hosts.count"])))

    def next_tuple(self) -> None:
        if self.pending:
            tup_id = self.pending.pop(0)
            self.emit([tup_id], tup_id=tup_id)

    def ack(self, tup_id: Any) -> None:
        _append(self.acks, tup_id)

    def fail(self, tup_id: Any) -> None:
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
