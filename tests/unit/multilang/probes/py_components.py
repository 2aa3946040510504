"""Our own Python components, run as multilang children by ``python -m sparkstorm.multilang``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sparkstorm import Bolt, Spout, Stream


class SplitBolt(Bolt):
    """Splits sentences; prints and logs on the way (neither may corrupt the protocol)."""

    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.prefix = conf.get("test.prefix", "")
        print("initialize() printed this")  # must end up on stderr

    def process(self, tup: Any) -> None:
        if tup.values.word == "boom":
            msg = "boom requested"
            raise ValueError(msg)
        if tup.values.word == "ids":
            self.emit(["tasks", self.emit(["x"], need_task_ids=True)])
            return
        print("processing", tup.values.word)
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


def _raise(exc: Exception) -> None:
    raise exc


class CallsBolt(Bolt):
    """Makes the collector call its input's ``action`` names (``arg`` as its argument).

    Tests each call end to end from a child. Keeps auto_ack and auto_fail on.
    """

    outputs = ["x", Stream(["x"], name="direct", direct=True)]

    def process(self, tup: Any) -> None:
        action, arg = tup.values.action, tup.values.arg
        calls: dict[str, Callable[[], Any]] = {
            "ack": lambda: self.ack(tup),
            "fail": lambda: self.fail(tup),
            "fail_reason": lambda: self.fail(tup, f"bad input {arg}"),
            "emit_auto": lambda: self.emit([arg]),
            "emit_anchored": lambda: self.emit([arg], anchors=[tup]),
            "emit_unanchored": lambda: self.emit([arg], anchors=[]),
            "emit_direct": lambda: self.emit([arg], stream="direct", direct_task=arg),
            "need_task_ids": lambda: self.emit([self.emit([arg], need_task_ids=True)]),
            "log": lambda: self.logger.warning("logged %s", arg),
            "reset_timeout": lambda: self.reset_timeout(tup),
            "raise": lambda: _raise(ValueError(f"raised on {arg}")),
            "raise_exception": lambda: self.raise_exception(ValueError(f"reported {arg}"), tup),
            "raise_exception_alone": lambda: self.raise_exception(KeyError(arg)),
            "report_error": lambda: self._collector.report_error(f"report_error {arg}"),
        }
        call = calls.get(action)
        if call is not None:
            call()

    def process_tick(self, tup: Any) -> None:
        self.emit(["tick"])


class CallsSpout(Spout):
    """Emits, per ``next_tuple``, the next of four kinds of tuple; logs acks and fails.

    The kinds: a tracked tuple, an untracked one, a direct one and one asking for its task ids
    (whose ids it then emits).
    """

    outputs = ["x", Stream(["x"], name="direct", direct=True)]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.calls = 0
        self.direct_task = int(conf["test.direct.task"])

    def next_tuple(self) -> None:
        self.calls += 1
        step = self.calls % 4
        if step == 1:
            self.emit([self.calls], tup_id=self.calls)
        elif step == 2:
            self.emit([self.calls])
        elif step == 3:
            self.emit([self.calls], stream="direct", direct_task=self.direct_task,
                      tup_id=self.calls)
        else:
            self.emit([self.emit([self.calls], tup_id=self.calls, need_task_ids=True)])

    def ack(self, tup_id: Any) -> None:
        self.logger.info("acked %r", tup_id)

    def fail(self, tup_id: Any) -> None:
        self.logger.info("failed %r", tup_id)


class ReportingSpout(Spout):
    """Reports errors it survives on each ``next_tuple``, then emits ``[n]`` tracked by ``n``.

    The errors go through pystorm's ``raise_exception`` and the collector's ``report_error``.
    """

    outputs = ["n"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.n = 0

    def next_tuple(self) -> None:
        self.n += 1
        self.raise_exception(RuntimeError(f"spout trouble {self.n}"))
        self._collector.report_error(f"spout report {self.n}")
        self.emit([self.n], tup_id=self.n)
