"""Trouble: a topology whose bolt is slow, fails, raises and logs, for the browser tests.

The bolt spends 2 ms on each tuple, fails every 7th with a reason naming the word's number, raises
on every 25th with a 2 KB message (so it raises in every window), and logs a line when it starts;
the browser tests of ``test_trouble.py`` check what the UI says about it. The spout's id is long.

Submitted by the browser tests with ``sparkstorm submit``; only this folder is shipped.
"""

from __future__ import annotations

import time
from typing import Any

from sparkstorm import Bolt, Spout, Topology

HELLO = "picky bolt says hello"
LONG = "x" * 2048


class CountingSpout(Spout):
    """Emits numbered words, forever, each tracked by its number."""

    outputs = ["word", "n"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.n = 0

    def next_tuple(self) -> None:
        self.n += 1
        self.emit([f"word{self.n}", self.n], tup_id=self.n)


class PickyBolt(Bolt):
    """Takes 2 ms a tuple, fails every 7th tuple it gets, raises on every 25th."""

    outputs = ["word"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.seen = 0
        self.logger.info("%s (task %s)", HELLO, context.get("task_id"))

    def process(self, tup: Any) -> None:
        time.sleep(0.002)  # busy enough for its capacity to show
        self.seen += 1
        if self.seen % 25 == 0:
            msg = f"cannot take {tup.values.word}: {LONG}"
            raise ValueError(msg)
        if self.seen % 7 == 0:
            self.fail(tup, reason=f"refuses word number {tup.values.n}")
            return
        self.emit([tup.values.word + "!"])


class TroubleTopology(Topology):
    # a long component id: the graph and the tables must not clip it, nor be pushed out by it
    numbers_counted_by_a_spout_whose_component_id_is_long = CountingSpout.spec()
    picky = PickyBolt.spec(inputs=[numbers_counted_by_a_spout_whose_component_id_is_long],
                           par=2)
