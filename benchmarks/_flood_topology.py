"""The two-executor topology ``tcp_flood.py`` floods (importable by its executor processes)."""

from __future__ import annotations

from typing import Any, ClassVar

from sparkstorm import Bolt, Spout, Topology


class Numbers(Spout):
    """Emits nothing: only its executor's process matters here."""

    outputs: ClassVar[list[str]] = ["n"]


class Sink(Bolt):
    """The executor flooded."""

    outputs: ClassVar[list[str]] = []

    def process(self, tup: Any) -> None:
        """Drop the tuple."""


class Pair(Topology):
    """A spout and a bolt: two executor processes."""

    numbers = Numbers.spec()
    sink = Sink.spec(inputs=[numbers])
