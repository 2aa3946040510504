"""Multilang word count: a pystorm spout, a node bolt, a pystorm batching bolt, a Python bolt.

The shell components live in ``resources/`` (the topology's resources directory, where
their commands run) and would run unchanged under Apache Storm. Run it with::

    sparkstorm run examples/multilang/multilang_wordcount.py --time 30

``sentences.count`` bounds the spout (unset: endless).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Grouping, Topology
from sparkstorm.multilang import ShellBolt, ShellSpout

RESOURCES = Path(__file__).resolve().parent / "resources"


class TotalBolt(Bolt):
    """Keeps the running total per word (in-process Python) and logs it every 1000 counts."""

    outputs: list[Any] = []

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.totals: dict[str, int] = {}
        self.seen = 0

    def process(self, tup: Any) -> None:
        word, count = tup.values
        self.totals[word] = self.totals.get(word, 0) + count
        self.seen += count
        if self.seen % 1000 < count:
            top = sorted(self.totals.items(), key=lambda item: -item[1])[:5]
            self.logger.info("top words: %s", top)


class MultilangWordCount(Topology):
    config = {"topology.multilang.resources.dir": str(RESOURCES),
              "topology.max.spout.pending": 2000}
    sentences = ShellSpout.spec(command=[sys.executable, "words.py", "sentences"],
                                outputs=["n", "sentence"])
    split = ShellBolt.spec(command=["node", "split.js"], inputs=[sentences], outputs=["word"],
                           par=2)
    count = ShellBolt.spec(command=[sys.executable, "words.py", "count", "msgpack"],
                           serializer="msgpack", inputs={split: Grouping.fields("word")},
                           outputs=["word", "count"], par=2,
                           config={"topology.tick.tuple.freq.secs": 1})
    total = TotalBolt.spec(inputs={count: Grouping.fields("word")})
