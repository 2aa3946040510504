"""When a spout's trees were handed to a window: where their message timeouts start.

A tree's timeout runs from the first window that takes it after its emit (or reset), not
from the emit: a tuple still in the spout's buffer cannot have failed downstream. Timed out
there by a stall longer than the timeout, it would be replayed beside the original that the
next window still takes, and counted twice (by checkpointed state too).

The spout keeps its trees in order of emit (or reset) time (``pending_roots``), so one
emit time says which of them a window took: all those emitted by the last move of the
producer's staging buffer into the window's buffer before it. The record is one pair per
window, kept for a timeout.
"""

from __future__ import annotations

from collections import deque


class HandOvers:
    """The spout executor's windows of the last timeout, each with what it took."""

    def __init__(self) -> None:
        self.moved_through = 0.0
        """When the producer last moved its staging buffer into the window's: every tree
        emitted (or reset) by then is in the window's buffer or was handed over already."""
        self.windows: deque[tuple[float, float]] = deque()
        """(when a window took the buffer, :attr:`moved_through` then), oldest first."""
        self.expired_through = 0.0
        """The trees emitted (or reset) by then were taken a timeout ago or more."""

    def moved(self, now: float) -> None:
        """The producer moved everything emitted by ``now`` into the window's buffer."""
        self.moved_through = now

    def taken(self, now: float) -> None:
        """A window took the buffer at ``now``."""
        self.windows.append((now, self.moved_through))

    def restored(self, emit_times: list[float]) -> None:
        """Trees restored from a checkpoint: taken by windows it covers, each by its time."""
        self.windows.extend((at, at) for at in sorted(emit_times))

    def timed_out_through(self, deadline: float) -> float:
        """The trees emitted (or reset) by this time were taken before ``deadline``."""
        windows = self.windows
        while windows and windows[0][0] < deadline:
            self.expired_through = max(self.expired_through, windows.popleft()[1])
        return self.expired_through


__all__ = ["HandOvers"]
