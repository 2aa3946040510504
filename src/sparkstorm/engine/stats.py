"""Statistics: latency samples in executors, counters per component and executor in the driver
(:mod:`sparkstorm.engine.topology_stats` keeps them over time)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.engine.failures import FAIL_CAUSES

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

    def take(self) -> tuple[int, float, list[float]]:
        """The count, the sum and the sample, and reset."""
        out = self.count, self.total, self.values
        self.__init__()  # type: ignore[misc]
        return out


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


def percentile(values: list[float], fraction: float) -> float | None:
    """The ``fraction`` percentile of ``values`` (nearest rank), None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * len(ordered))) - 1))
    return ordered[index]


@dataclass
class ComponentCounters:
    """Counters of one component or executor over some period (a window, a rolling window
    bucket or the whole run)."""

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
    fail_causes: dict[tuple[str, str], int] = field(default_factory=dict)
    """Failed trees of a spout by (cause, reason); see ``engine.failures.FAIL_CAUSES``."""
    execute_ms: dict[str, float] = field(default_factory=dict)
    """A bolt's time in ``process`` per input stream, summed."""
    process_ms: dict[str, float] = field(default_factory=dict)
    """A bolt's receipt-to-ack times per input stream, summed over its acked tuples."""
    complete_ms: dict[str, float] = field(default_factory=dict)
    """A spout's complete latencies per output stream, summed over its acked trees."""

    def add(self, other: ComponentCounters, *, keep_samples: bool = True) -> None:
        """Add ``other``'s counts into these (and its latency sample, if ``keep_samples``)."""
        for name in ("emitted", "transferred", "executed", "acked", "failed", "fail_causes",
                     "execute_ms", "process_ms", "complete_ms"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0) + value
        self.busy_ms += other.busy_ms
        self.complete_count += other.complete_count
        self.complete_total_ms += other.complete_total_ms
        self.timed_out += other.timed_out
        self.errors += other.errors
        if keep_samples:
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

    def failures_by_cause(self) -> dict[str, int]:
        """Failed trees counted by cause (every cause present, zeros included)."""
        counts = dict.fromkeys(FAIL_CAUSES, 0)
        for (cause, _), n in self.fail_causes.items():
            counts[cause] = counts.get(cause, 0) + n
        return counts

    def failure_reasons(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most frequent (cause, reason) pairs, most frequent first."""
        ranked = sorted(self.fail_causes.items(), key=lambda item: (-item[1], item[0]))
        return [{"cause": cause, "reason": reason, "count": n}
                for (cause, reason), n in ranked[:limit]]

    def summary(self, seconds: float | None = None) -> dict[str, Any]:
        """Totals and latencies in Storm's terms; ``capacity`` is the share of ``seconds``
        spent executing (Storm's capacity), None when ``seconds`` is not given."""
        executed = sum(self.executed.values())
        acked = sum(self.acked.values())
        return {
            "emitted": sum(self.emitted.values()),
            "transferred": sum(self.transferred.values()),
            "acked": acked,
            "failed": sum(self.failed.values()),
            "executed": executed,
            "timed_out": self.timed_out,
            "errors": self.errors,
            "busy_ms": self.busy_ms,
            "capacity": self.busy_ms / (seconds * 1000.0) if seconds else None,
            # the executor's busy time, which includes a shell bolt's end-of-window wait
            # for its subprocess, over the tuples executed
            "execute_latency_ms": self.busy_ms / executed if executed else None,
            "process_latency_ms": _mean(sum(self.process_ms.values()), acked),
            "complete_latency_ms": (self.complete_total_ms / self.complete_count
                                    if self.complete_count else None),
            "complete_latency_p50_ms": percentile(self.complete_values, 0.5),
            "complete_latency_p99_ms": percentile(self.complete_values, 0.99),
            "failures_by_cause": self.failures_by_cause(),
            "failure_reasons": self.failure_reasons(),
            "by_stream": {
                "emitted": dict(self.emitted), "transferred": dict(self.transferred),
                "executed": dict(self.executed), "acked": dict(self.acked),
                "failed": dict(self.failed),
                "execute_latency_ms": {k: _mean(ms, self.executed.get(k, 0))
                                       for k, ms in self.execute_ms.items()},
                "process_latency_ms": {k: _mean(ms, self.acked.get(k, 0))
                                       for k, ms in self.process_ms.items()},
                "complete_latency_ms": {k: _mean(ms, self.acked.get(k, 0))
                                        for k, ms in self.complete_ms.items()},
            },
        }

    def brief(self, seconds: float) -> dict[str, Any]:
        """The few figures a chart point needs (one window of one component). Zeros and
        unknowns are left out and latencies rounded to microseconds: heartbeats carry
        ``topology.stats.window.count`` of these per component every second."""
        executed = sum(self.executed.values())
        figures: dict[str, Any] = {
            "emitted": sum(self.emitted.values()),
            "transferred": sum(self.transferred.values()),
            "executed": executed, "acked": sum(self.acked.values()),
            "failed": sum(self.failed.values()),
            "capacity": self.busy_ms / (seconds * 1000.0) if seconds > 0 else None,
            "execute_latency_ms": self.busy_ms / executed if executed else None,
            "complete_latency_ms": (self.complete_total_ms / self.complete_count
                                    if self.complete_count else None),
            "complete_latency_p50_ms": percentile(self.complete_values, 0.5),
            "complete_latency_p99_ms": percentile(self.complete_values, 0.99),
            "inputs": dict(self.executed),
        }
        return {key: round(value, 3) if isinstance(value, float) else value
                for key, value in figures.items() if value}
