"""Components of the Redis and SQL connector tests (module level: executors import them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.spark.components import PacedNumberSpout

BAD_EVERY = 40
"""Every BAD_EVERY-th number (from 7) carries a value that no connector can write."""


def is_bad(n: int) -> bool:
    """Whether number ``n`` is emitted with a bad value."""
    return n % BAD_EVERY == 7


class ValueSpout(PacedNumberSpout):
    """PacedNumberSpout emitting ``[n, value]``: ``value`` is ``"v<n>"``, None for a bad one.

    With ``test.gate_at``, numbers from that one on wait until the file ``<test.dir>/gate``
    exists (replays do not wait): a test opens it once it stopped a server, so that new
    tuples surely meet the outage.
    """

    outputs = ["n", "value"]
    transient = ("record",)  # a file handle: opened again by initialize() after a restore

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        super().initialize(conf, context)
        self.gate_at = conf.get("test.gate_at")
        self.gate = Path(conf["test.dir"]) / "gate"

    def next_tuple(self) -> None:
        if (self.gate_at is not None and not self.replay and self.next_n >= self.gate_at
                and not self.gate.exists()):
            return
        super().next_tuple()

    def values(self, n: int) -> list[Any]:
        return [n, None if is_bad(n) else f"v{n}"]
