"""Rolling time windows of counters, as Storm keeps them for its UI.

The windows are 10 minutes, 3 hours and 1 day, each made of 20 buckets (Storm's
``NUM_STAT_BUCKETS``), so a window's figures cover its length to within one bucket (30 s, 9 min and
72 min).

Example:
    >>> from sparkstorm.engine.wire.stats import ComponentCounters
    >>> rolling = RollingWindows()
    >>> rolling.add(1000.0, {"split": ComponentCounters(emitted={"default": 5})})
    >>> rolling.add(1400.0, {"split": ComponentCounters(emitted={"default": 7})})
    >>> rolling.totals(600, now=1400.0)["split"].emitted
    {'default': 12}
    >>> rolling.totals(600, now=1700.0)["split"].emitted  # the first bucket has rolled out
    {'default': 7}
"""

from __future__ import annotations

from collections import deque

from sparkstorm.engine.wire.stats import ComponentCounters

WINDOW_SECONDS = (600, 10800, 86400)
"""Storm UI's windows besides all time: 10 minutes, 3 hours, 1 day."""

BUCKETS = 20


class _Window:
    """One window length: buckets of ``length / BUCKETS`` seconds, oldest first."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.size = length / BUCKETS
        self.buckets: deque[tuple[float, dict[str, ComponentCounters]]] = deque()

    def bucket(self, now: float) -> dict[str, ComponentCounters]:
        start = (now // self.size) * self.size
        if not self.buckets or self.buckets[-1][0] != start:
            self.buckets.append((start, {}))
            while self.buckets and self.buckets[0][0] <= now - self.length - self.size:
                self.buckets.popleft()
        return self.buckets[-1][1]

    def live(self, now: float) -> list[dict[str, ComponentCounters]]:
        """The buckets that overlap ``(now - length, now]``."""
        return [counters for start, counters in self.buckets
                if start + self.size > now - self.length]


class RollingWindows:
    """Counters per key (component or executor) over each of :data:`WINDOW_SECONDS`."""

    def __init__(self, lengths: tuple[int, ...] = WINDOW_SECONDS) -> None:
        self.windows = {length: _Window(length) for length in lengths}

    def add(self, now: float, counters: dict[str, ComponentCounters]) -> None:
        """Add one window's counters, time-stamped ``now`` (epoch seconds)."""
        for window in self.windows.values():
            bucket = window.bucket(now)
            for key, value in counters.items():
                mine = bucket.get(key)
                if mine is None:
                    mine = bucket[key] = ComponentCounters()
                mine.add(value, keep_samples=False)

    def totals(self, length: int, now: float) -> dict[str, ComponentCounters]:
        """Per key, everything added within the last ``length`` seconds."""
        out: dict[str, ComponentCounters] = {}
        for bucket in self.windows[length].live(now):
            for key, value in bucket.items():
                mine = out.get(key)
                if mine is None:
                    mine = out[key] = ComponentCounters()
                mine.add(value, keep_samples=False)
        return out
