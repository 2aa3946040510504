"""Statistics: latency samples in executors, per-window and total counters in the worker."""

from __future__ import annotations

import random
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

_SAMPLE_LIMIT = 2000


class LatencySample:
    """A bounded reservoir of latencies (ms) plus their exact count and sum."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.values: list[float] = []

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        if len(self.values) < _SAMPLE_LIMIT:
            self.values.append(value)
        else:
            slot = random.randrange(self.count)
            if slot < _SAMPLE_LIMIT:
                self.values[slot] = value

    def take(self) -> dict[str, Any]:
        """The sample as a dict, and reset."""
        out = {"count": self.count, "total": self.total, "values": self.values}
        self.__init__()  # type: ignore[misc]
        return out


def percentile(values: list[float], fraction: float) -> float | None:
    """The ``fraction`` percentile of ``values`` (nearest rank), None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * len(ordered))) - 1))
    return ordered[index]


@dataclass
class ComponentCounters:
    """Counters of one component over some period (a window or the whole run)."""

    emitted: dict[str, int] = field(default_factory=dict)
    transferred: dict[str, int] = field(default_factory=dict)
    executed: dict[str, int] = field(default_factory=dict)
    acked: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    busy_ms: float = 0.0
    complete_count: int = 0
    complete_total_ms: float = 0.0
    complete_values: list[float] = field(default_factory=list)
    timed_out: int = 0
    errors: int = 0

    def add(self, other: ComponentCounters) -> None:
        """Add ``other``'s counts into these."""
        for name in ("emitted", "transferred", "executed", "acked", "failed"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0) + value
        self.busy_ms += other.busy_ms
        self.complete_count += other.complete_count
        self.complete_total_ms += other.complete_total_ms
        self.timed_out += other.timed_out
        self.errors += other.errors
        self._sample(other.complete_values, other.complete_count)

    def _sample(self, values: list[float], count: int) -> None:
        """Keep a uniform sample of every latency seen (reservoir over ``count`` more)."""
        mine = self.complete_values
        seen = self.complete_count - count  # the count before this batch
        for value in values:
            seen += 1
            if len(mine) < _SAMPLE_LIMIT:
                mine.append(value)
            else:
                slot = random.randrange(seen)
                if slot < _SAMPLE_LIMIT:
                    mine[slot] = value

    def summary(self) -> dict[str, Any]:
        """Totals and latencies in Storm's terms."""
        executed = sum(self.executed.values())
        return {
            "emitted": sum(self.emitted.values()),
            "transferred": sum(self.transferred.values()),
            "acked": sum(self.acked.values()),
            "failed": sum(self.failed.values()),
            "executed": executed,
            "timed_out": self.timed_out,
            "errors": self.errors,
            "execute_latency_ms": self.busy_ms / executed if executed else None,
            # Tuples are acked when process returns (or later, by the bolt); process
            # latency is measured the same way, per window, over the acked tuples.
            "process_latency_ms": (self.busy_ms / sum(self.acked.values())
                                   if executed and sum(self.acked.values()) else None),
            "complete_latency_ms": (self.complete_total_ms / self.complete_count
                                    if self.complete_count else None),
            "complete_latency_p50_ms": percentile(self.complete_values, 0.5),
            "complete_latency_p99_ms": percentile(self.complete_values, 0.99),
            "by_stream": {
                "emitted": dict(self.emitted), "transferred": dict(self.transferred),
                "executed": dict(self.executed), "acked": dict(self.acked),
                "failed": dict(self.failed),
            },
        }


@dataclass
class WindowRecord:
    """What one window did: its id, timing and per-component counters."""

    window: int
    started: float
    seconds: float
    components: dict[str, ComponentCounters]


class TopologyStats:
    """Per-window records (bounded) and running totals per component."""

    def __init__(self, keep_windows: int) -> None:
        self.windows: deque[WindowRecord] = deque(maxlen=keep_windows)
        self.totals: dict[str, ComponentCounters] = {}
        self.window_count = 0
        self.last_errors: dict[str, dict[str, Any]] = {}
        self.restarts = 0
        self.lock = threading.Lock()  # summary() is read from other threads

    def record(self, record: WindowRecord) -> None:
        """Add one window's counters."""
        with self.lock:
            self._record(record)

    def _record(self, record: WindowRecord) -> None:
        self.windows.append(record)
        self.window_count += 1
        for name, counters in record.components.items():
            self.totals.setdefault(name, ComponentCounters()).add(counters)

    def summary(self) -> dict[str, Any]:
        """Totals per component and the latest windows, as plain data."""
        with self.lock:
            return self._summary()

    def _summary(self) -> dict[str, Any]:
        return {
            "windows": self.window_count,
            "components": {n: c.summary() for n, c in sorted(self.totals.items())},
            "last_errors": dict(self.last_errors),
            "executor_restarts": self.restarts,
            "recent_windows": [
                {"window": r.window, "started": r.started, "seconds": r.seconds,
                 "components": {n: c.summary() for n, c in r.components.items()}}
                for r in list(self.windows)[-10:]
            ],
        }
