"""A stateful bolt shared by the stateful-bolt tests (these unit tests and the Redis ones).

:class:`CountBolt` counts keys in its state and records its hooks; :func:`started` gives one
task of it, set up as the engine sets it up before its first tuple.
"""

from __future__ import annotations

from typing import Any

from sparkstorm import StatefulBolt
from sparkstorm.state import KeyValueState
from tests.unit.topology.windowed_bolts.fakes import attach


class CountBolt(StatefulBolt):
    outputs = ["key", "count"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.hooks: list[Any] = []
        self.states: list[KeyValueState] = []

    def init_state(self, state: KeyValueState) -> None:
        self.states.append(state)
        self.counts = state

    def process(self, tup: Any) -> None:
        key = tup.values[1]
        count = self.counts.get(key, 0) + 1
        self.counts.put(key, count)
        self.emit([key, count])

    def process_tick(self, tup: Any) -> None:
        self.hooks.append("tick")

    def pre_prepare(self, txid: int) -> None:
        self.hooks.append(("pre_prepare", txid, dict(self.counts)))

    def pre_commit(self, txid: int) -> None:
        self.hooks.append(("pre_commit", txid))

    def pre_rollback(self) -> None:
        self.hooks.append("pre_rollback")


def started(conf: dict[str, Any] | None = None) -> CountBolt:
    """A ``count`` task (task id 3) with the collector stand-in, ``initialize`` done."""
    bolt = CountBolt()
    attach(bolt, conf or {}, name="count")
    bolt.context = {"taskid": 3}
    return bolt
