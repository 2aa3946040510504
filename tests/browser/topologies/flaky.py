"""Flaky exclamation: Storm's exclamation topology, made to fail and to raise.

Its last bolt explicitly fails every ``flaky.fail.every``-th tuple (default 7) with a reason, and
raises once, on the word "boom" that the spout emits as its ``flaky.boom.at``-th tuple (default 40;
0: never), so the UI has failures to explain and an error to show.

Submitted by the browser tests with ``sparkstorm submit``; only this folder is shipped.
"""

from __future__ import annotations

import inspect
import itertools
from typing import Any

from sparkstorm import Bolt, Spout, Topology

WORDS = ("nathan", "mike", "jackson", "golda", "bertels")
REASON = "picky bolt refuses every {n}th word"


class WordSpout(Spout):
    """Emits the words in turn, forever, each with a tuple id so that it is tracked."""

    outputs = ["word"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.words = itertools.cycle(WORDS)
        self.emitted = 0
        self.boom_at = int(storm_conf.get("flaky.boom.at", 40))

    def next_tuple(self) -> None:
        self.emitted += 1
        word = "boom" if self.emitted == self.boom_at else next(self.words)
        self.emit([word], tup_id=self.emitted)


class ExclamationBolt(Bolt):
    """Appends '!!!' to the word."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        self.emit([tup.values.word + "!!!"])


class PickyBolt(Bolt):
    """Appends '!!!', but fails every n-th tuple it gets and raises on "boom".

    n is ``flaky.fail.every``.
    """

    outputs = ["word"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.every = int(storm_conf.get("flaky.fail.every", 7))
        self.seen = 0
        # Bolt.fail takes a reason in this version; older ones take the tuple only
        self.with_reason = "reason" in inspect.signature(self.fail).parameters

    def process(self, tup: Any) -> None:
        if tup.values.word.startswith("boom"):
            msg = f"boom: the picky bolt cannot take {tup.values.word!r}"
            raise ValueError(msg)
        self.seen += 1
        if self.seen % self.every == 0:
            if self.with_reason:
                self.fail(tup, reason=REASON.format(n=self.every))
            else:
                self.fail(tup)
            return
        self.emit([tup.values.word + "!!!"])


class FlakyTopology(Topology):
    word = WordSpout.spec()
    exclaim1 = ExclamationBolt.spec(inputs=[word], par=2)
    exclaim2 = PickyBolt.spec(inputs=[exclaim1], par=2)
