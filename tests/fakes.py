"""Fakes shared by the whole suite: one clock that moves only when a test says so."""

from __future__ import annotations


class FakeClock:
    """Seconds that move only when told.

    Epoch or monotonic, as the code under test reads them: pass the clock where a ``clock`` callable
    is taken, or patch ``time.time`` / ``time.monotonic`` with it.

    Args:
        now: the starting time.
    """

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self.now += seconds
