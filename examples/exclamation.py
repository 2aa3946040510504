"""Exclamation: Storm's starter topology. Words get '!!!' appended twice on their way."""

from __future__ import annotations

import itertools
from typing import Any

from sparkstorm import Bolt, Spout, Topology

WORDS = ("nathan", "mike", "jackson", "golda", "bertels")


class WordSpout(Spout):
    """Emits the words in turn, as Storm's TestWordSpout; ``exclamation.count`` bounds it."""

    outputs = ["word"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.words = itertools.cycle(WORDS)
        self.limit = int(storm_conf.get("exclamation.count", 0))
        self.emitted = 0

    def next_tuple(self) -> None:
        if self.limit and self.emitted >= self.limit:
            return
        self.emitted += 1
        self.emit([next(self.words)], tup_id=self.emitted)


class ExclamationBolt(Bolt):
    """Appends '!!!' to the word."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        self.emit([tup.values.word + "!!!"])


class ExclamationTopology(Topology):
    word = WordSpout.spec()
    exclaim1 = ExclamationBolt.spec(inputs=[word], par=2)
    exclaim2 = ExclamationBolt.spec(inputs=[exclaim1], par=2)
