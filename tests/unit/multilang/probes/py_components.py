"""Our own Python components, run as multilang children by ``python -m sparkstorm.multilang``."""

from __future__ import annotations

import logging
from typing import Any

from sparkstorm import Bolt, Spout


class SplitBolt(Bolt):
    """Splits sentences; prints and logs on the way (neither may corrupt the protocol)."""

    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.prefix = conf.get("test.prefix", "")
        print("initialize() printed this")  # noqa: T201 - must end up on stderr

    def process(self, tup: Any) -> None:
        if tup.values.word == "boom":
            msg = "boom requested"
            raise ValueError(msg)
        if tup.values.word == "ids":
            self.emit(["tasks", self.emit(["x"], need_task_ids=True)])
            return
        print("processing", tup.values.word)  # noqa: T201
        logging.getLogger("split").warning("split %s", tup.values.word)
        for word in str(tup.values.word).split():
            self.emit([self.prefix + word])

    def process_tick(self, tup: Any) -> None:
        self.emit(["tick", tup.values[0]], anchors=[tup])


class ManualBolt(Bolt):
    """Acks by hand, every second tuple, anchoring explicitly."""

    auto_ack = False
    auto_anchor = False
    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.held: list[Any] = []

    def process(self, tup: Any) -> None:
        self.held.append(tup)
        if len(self.held) == 2:
            self.emit(["pair"], anchors=self.held)
            for held in self.held:
                self.ack(held)
            self.held = []


class CountSpout(Spout):
    """Emits [n] with message id n; logs acks and fails."""

    outputs = ["n"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.n = 0

    def next_tuple(self) -> None:
        self.n += 1
        self.emit([self.n], tup_id=self.n)

    def ack(self, tup_id: Any) -> None:
        self.logger.info("acked %r", tup_id)

    def activate(self) -> None:
        self.logger.info("activated")
