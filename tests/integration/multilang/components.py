"""In-process and runtime components of the multilang integration tests.

At module level, so executor processes and ``python -m sparkstorm.multilang`` children can import
them.
"""

from __future__ import annotations

import time
from typing import Any

from sparkstorm import Bolt, Spout
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


class AckCountingSpout(Spout):
    """Emits numbers slowly (30 ms per ``next``) and appends each id it hears acked to a file.

    Run as a multilang child; with a ``next`` outstanding most of the time, acks wait in
    the shell spout's queue, as the last ones do at shutdown.
    """

    outputs = ["n"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.n = 0
        self.heard = open(conf["test.acks.file"], "a", encoding="utf-8")  # noqa: SIM115

    def next_tuple(self) -> None:
        time.sleep(0.03)
        self.n += 1
        self.emit([self.n], tup_id=self.n)

    def ack(self, tup_id: Any) -> None:
        self.heard.write(f"{tup_id}\n")
        self.heard.flush()
