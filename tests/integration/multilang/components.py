"""In-process and runtime components of the multilang integration tests.

At module level, so executor processes and ``python -m sparkstorm.multilang`` children can import
them.
"""

from __future__ import annotations

from typing import Any

from sparkstorm import Bolt
from tests.integration.spark.components import Recorder


class WordSink(Bolt):
    """Records every (word, count) it receives; count 1 when the tuple has only a word."""

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        values = list(tup.values)
        self.record("word", word=values[0], count=values[1] if len(values) > 1 else 1)


class UpperBolt(Bolt):
    """Upper-cases words; run as a multilang child through ``python -m sparkstorm.multilang``."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        self.emit([tup.values.word.upper()])
