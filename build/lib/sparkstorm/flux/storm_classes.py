"""Python stand-ins for the Storm classes Flux's examples use, so those files run unchanged.

- ``LogInfoBolt`` (``org.apache.storm.flux.wrappers.bolts.LogInfoBolt``): logs each tuple.
- ``TestWordCounter`` (``org.apache.storm.testing.TestWordCounter``): counts the first
  field's values and emits ``[word, count]``.
- ``TestWordSpout`` (``org.apache.storm.testing.TestWordSpout``): emits a random word of
  Storm's five every 100 ms, unreliably.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

from sparkstorm.topology.component import BasicBolt, Spout
from sparkstorm.topology.tuple import Tuple


class LogInfoBolt(BasicBolt):
    """Logs every tuple at INFO level, as Flux's ``LogInfoBolt``."""

    def process(self, tup: Tuple) -> None:
        """Log ``tup``."""
        self.logger.info("%s", list(tup.values))


class TestWordCounter(BasicBolt):
    """Storm's ``TestWordCounter``: a running count per word."""

    outputs = ["word", "count"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Start counting from zero."""
        self.counts: Counter[Any] = Counter()

    def process(self, tup: Tuple) -> None:
        """Count the word and emit its count."""
        word = tup.values[0]
        self.counts[word] += 1
        self.emit([word, self.counts[word]])


class TestWordSpout(Spout):
    """Storm's ``TestWordSpout``."""

    outputs = ["word"]
    WORDS = ("nathan", "mike", "jackson", "golda", "bertels")

    def next_tuple(self) -> None:
        """One random word, then a pause of 100 ms, as Storm's."""
        time.sleep(0.1)
        self.emit([random.choice(self.WORDS)])
