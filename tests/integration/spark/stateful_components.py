"""Components of the stateful-bolt tests (imported by class path in executor processes)."""

from __future__ import annotations

from typing import Any

from sparkstorm import StatefulBolt
from sparkstorm.state import KeyValueState


class StatefulKeyCount(StatefulBolt):
    """Counts tuples per ``key`` in its KeyValueState; emits ``[key, count]``."""

    outputs = ["key", "count"]

    def init_state(self, state: KeyValueState) -> None:
        self.counts = state

    def process(self, tup: Any) -> None:
        key = tup.values.key
        count = self.counts.get(key, 0) + 1
        self.counts.put(key, count)
        self.emit([key, count])
