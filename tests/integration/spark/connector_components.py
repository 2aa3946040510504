"""Components of the Redis and SQL connector tests (module level: executors import them)."""

from __future__ import annotations

from typing import Any

from tests.integration.spark.components import PacedNumberSpout

BAD_EVERY = 40
"""Every BAD_EVERY-th number (from 7) carries a value that no connector can write."""


def is_bad(n: int) -> bool:
    """Whether number ``n`` is emitted with a bad value."""
    return n % BAD_EVERY == 7


class ValueSpout(PacedNumberSpout):
    """PacedNumberSpout emitting ``[n, value]``: ``value`` is ``"v<n>"``, None for a bad one."""

    outputs = ["n", "value"]
    transient = ("record",)  # a file handle: opened again by initialize() after a restore

    def values(self, n: int) -> list[Any]:
        return [n, None if is_bad(n) else f"v{n}"]
