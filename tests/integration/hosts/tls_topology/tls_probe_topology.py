"""Tuples with known bytes for the TLS capture test (self-contained: the code zip).

The spout emits ``[n, text]`` for n in 0..probe.count-1, ``text`` being
:data:`MARKER` and n: bytes a capture of the hosts' traffic must never show. Acked ids go
to ``acks.jsonl`` in ``probe.dir`` (``tests.chaos.faults.acks`` reads it); each sink task
records the ids it saw in ``sink-<task>.jsonl``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Spout, Topology

MARKER = "TLS-PROBE-4b7e1c"
PER_SECOND = 100


class ProbeSpout(Spout):
    """Emits each id once with its marker text, at :data:`PER_SECOND`; replays failures."""

    outputs = ["n", "text"]
    transient = ("next_at",)

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.acks = Path(conf["probe.dir"]) / "acks.jsonl"
        self.pending = list(range(int(conf["probe.count"])))
        self.next_at = time.monotonic()

    def next_tuple(self) -> None:
        if not self.pending or time.monotonic() < self.next_at:
            return
        self.next_at += 1.0 / PER_SECOND
        n = self.pending.pop(0)
        self.emit([n, f"{MARKER}-{n:05d}"], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        with self.acks.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"id": tup_id}) + "\n")

    def fail(self, tup_id: Any) -> None:
        self.pending.append(tup_id)


class Relay(Bolt):
    """Passes the tuple on (anchored): its text crosses to the sink's host."""

    outputs = ["n", "text"]

    def process(self, tup: Any) -> None:
        self.emit([tup.values.n, tup.values.text])


class Sink(Bolt):
    """Records the ids it receives."""

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.out = Path(conf["probe.dir"]) / f"sink-{context['taskid']}.jsonl"

    def process(self, tup: Any) -> None:
        assert tup.values.text.startswith("TLS-PROBE-")
        with self.out.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"id": tup.values.n}) + "\n")


class ProbeTopology(Topology):
    numbers = ProbeSpout.spec()
    relay = Relay.spec(inputs=[numbers], par=2)
    sink = Sink.spec(inputs=[relay], par=2)
