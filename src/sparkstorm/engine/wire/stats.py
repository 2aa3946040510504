"""Statistics: latency samples in executors, counters per component and executor in the driver.

:mod:`sparkstorm.engine.driver.topology_stats` keeps them over time.
"""

from __future__ import annotations

import math
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.engine.wire.failures import FAIL_CAUSES

_SAMPLE_LIMIT = 2000
MAX_FAILURE_REASONS = 32
"""Kinds of failure reasons kept per component (and per rolling bucket): a bolt that fails
with a new message every time must not grow a spout's statistics without end."""
OTHER_REASONS = "(other reasons: more kinds than are kept)"
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\b0x[0-9a-fA-F]+\b|[0-9a-fA-F]{8,}|\d+(?:\.\d+)?")


TEMPLATE_CHARS = 160
"""A kind of reason is named by this many characters at most (reasons arrive cut to 300
characters, so a long one's end depends on its data's length)."""


def reason_template(reason: str) -> str:
    """The kind of a failure reason, so that reasons differing only in their data count together.

    Quoted values become ``'…'`` and numbers (and long hex ids) ``<n>``; long ones are cut to
    :data:`TEMPLATE_CHARS`.

    Example:
        >>> reason_template("count: ValueError: no word 'foo' in line 17")
        "count: ValueError: no word '…' in line <n>"
    """
    kind = _NUMBER.sub("<n>", _QUOTED.sub("'…'", reason))
    return kind if len(kind) <= TEMPLATE_CHARS else kind[:TEMPLATE_CHARS - 1] + "…"


@dataclass
class ReasonSeen:
    """When a kind of failure reason was first and last seen, and its latest text.

    Times are epoch seconds.
    """

    first: float
    last: float
    example: str

    def merge(self, other: ReasonSeen) -> None:
        """Widen to ``other``'s times; the later one's example wins."""
        if other.last >= self.last:
            self.last, self.example = other.last, other.example
        self.first = min(self.first, other.first)


class LatencySample:
    """A bounded reservoir of latencies (ms) plus their exact count and sum.

    Once the reservoir is full, which later values replace a kept one is decided by skips
    (Li's Algorithm L): a random number per *replacement* instead of one per value, which
    kept a spout's ack loop busy (one ``randrange`` per acked tree, ~0.3 us each, when a
    window acks 50,000). The sample stays uniform over every value added.
    """

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.values: list[float] = []
        self._weight = 1.0
        self._next = 0
        """The count at which the next value replaces a kept one (once full)."""

    def add(self, value: float) -> None:
        """Count ``value`` and keep it in the reservoir (a random sample once that is full)."""
        self.count += 1
        self.total += value
        if self.count == self._next:
            self.values[random.randrange(_SAMPLE_LIMIT)] = value
            self._skip()
        elif len(self.values) < _SAMPLE_LIMIT:
            self.values.append(value)
            if len(self.values) == _SAMPLE_LIMIT:
                self._skip()

    def add_many(self, value: float, times: int) -> None:
        """:meth:`add` ``value`` ``times`` times, with a draw per replacement only.

        A spout's tuples moved into its buffer together wait alike (checkpoint
        reliability times each from that move): one call for all of them.
        """
        values = self.values
        fill = min(_SAMPLE_LIMIT - len(values), times)
        if fill > 0:
            values.extend([value] * fill)
            self.count += fill
            self.total += value * fill
            times -= fill
            if len(values) == _SAMPLE_LIMIT:
                self._skip()
        if times <= 0:
            return
        end = self.count + times
        self.total += value * times
        while self._next <= end:  # the reservoir is full: only the drawn counts replace
            self.count = self._next
            values[random.randrange(_SAMPLE_LIMIT)] = value
            self._skip()
        self.count = end

    def _skip(self) -> None:
        """Draw the count of the next value that goes into the full reservoir."""
        self._weight *= math.exp(math.log(_unit()) / _SAMPLE_LIMIT)
        self._next = self.count + int(math.log(_unit()) / math.log1p(-self._weight)) + 1

    def take(self) -> tuple[int, float, list[float]]:
        """The count, the sum and the sample, and reset."""
        out = self.count, self.total, self.values
        self.__init__()  # type: ignore[misc]
        return out


def _thin(values: list[float], size: float) -> list[float]:
    """A uniform random subset of ``values`` of ``size`` items (rounded at random)."""
    keep = min(len(values), int(size + random.random()))
    return list(values) if keep >= len(values) else random.sample(values, keep)


def _unit() -> float:
    """A uniform float in (0, 1) (never 0: its logarithm is taken)."""
    return 1.0 - random.random()


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


def percentile(values: list[float], fraction: float) -> float | None:
    """The ``fraction`` percentile of ``values`` (nearest rank), None if empty."""
    return percentiles(values, (fraction,))[0]


def percentiles(values: list[float], fractions: tuple[float, ...]) -> list[float | None]:
    """The ``fractions`` percentiles of ``values`` (nearest rank, one sort), None if empty."""
    if not values:
        return [None] * len(fractions)
    ordered = sorted(values)
    last = len(ordered) - 1
    return [ordered[min(last, max(0, int(round(f * len(ordered))) - 1))] for f in fractions]


@dataclass
class ComponentCounters:
    """Counters of one component or executor over some period.

    A window, a rolling window bucket or the whole run.
    """

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
    """Failed trees of a spout by (cause, kind of reason); see
    ``engine.wire.failures.FAIL_CAUSES`` and :func:`reason_template`. At most
    :data:`MAX_FAILURE_REASONS` kinds, the rest counted under :data:`OTHER_REASONS`."""
    fail_seen: dict[tuple[str, str], ReasonSeen] = field(default_factory=dict, compare=False)
    """First and last time of each ``fail_causes`` key (when, not what: left out of ``==``,
    so a decoded copy equals its original)."""
    execute_ms: dict[str, float] = field(default_factory=dict)
    """A bolt's time in ``process`` per input stream, summed."""
    process_ms: dict[str, float] = field(default_factory=dict)
    """A bolt's receipt-to-ack times per input stream, summed over its acked tuples."""
    complete_ms: dict[str, float] = field(default_factory=dict)
    """A spout's complete latencies per output stream, summed over its acked trees."""
    buffered: int = 0
    """A spout's fullest buffer when a window took it (tuples; the most over what was
    added), against ``buffer_bound`` (``topology.spout.buffer.size``)."""
    buffer_bound: int = 0
    buffered_bytes: int = 0
    """The bytes on the wire of what a spout handed over to the window (its encoded tuples),
    which the window sizer turns into bytes per tuple (``topology.spout.buffer.max.bytes``)."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """Task id -> the gauges its component publishes in ``component_metrics`` (JSON-able,
    e.g. a Kafka spout's offsets and lag per partition); the latest win when added."""

    def __post_init__(self) -> None:
        """Group raw (cause, reason) counts by kind of reason, seen now."""
        if self.fail_causes and not self.fail_seen:
            raw, self.fail_causes = self.fail_causes, {}
            now = time.time()
            for (cause, reason), n in raw.items():
                self._count_reason(cause, reason_template(reason), n,
                                   ReasonSeen(now, now, reason))

    def _count_reason(self, cause: str, kind: str, n: int, seen: ReasonSeen | None) -> None:
        key = (cause, kind)
        if key not in self.fail_causes and len(self.fail_causes) >= MAX_FAILURE_REASONS:
            key = (cause, OTHER_REASONS)
        self.fail_causes[key] = self.fail_causes.get(key, 0) + n
        if seen is None:
            return
        mine = self.fail_seen.get(key)
        if mine is None:
            self.fail_seen[key] = ReasonSeen(seen.first, seen.last, seen.example)
        else:
            mine.merge(seen)

    def end_trees_after(self, ms: float) -> None:
        """Add ``ms`` to every complete latency counted here (checkpoint reliability).

        A spout in ``topology.reliability: checkpoint`` measures its tuples' wait until a
        window took them; the window ends their trees, and its time is known only to the
        driver, which adds it here.
        """
        self.complete_total_ms += self.complete_count * ms
        self.complete_values = [value + ms for value in self.complete_values]
        for stream, n in self.acked.items():
            self.complete_ms[stream] = self.complete_ms.get(stream, 0.0) + n * ms

    def add(self, other: ComponentCounters, *, keep_samples: bool = True) -> None:
        """Add ``other``'s counts into these (and its latency sample, if ``keep_samples``)."""
        for (cause, kind), n in other.fail_causes.items():
            self._count_reason(cause, kind, n, other.fail_seen.get((cause, kind)))
        for name in ("emitted", "transferred", "executed", "acked", "failed",
                     "execute_ms", "process_ms", "complete_ms"):
            mine, theirs = getattr(self, name), getattr(other, name)
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0) + value
        self.busy_ms += other.busy_ms
        self.buffered = max(self.buffered, other.buffered)
        self.buffer_bound = max(self.buffer_bound, other.buffer_bound)
        self.buffered_bytes = max(self.buffered_bytes, other.buffered_bytes)
        self.metrics.update(other.metrics)
        self.complete_count += other.complete_count
        self.complete_total_ms += other.complete_total_ms
        self.timed_out += other.timed_out
        self.errors += other.errors
        if keep_samples:
            self._sample(other.complete_values, other.complete_count)

    def _sample(self, values: list[float], count: int) -> None:
        """Merge ``values``, a sample of ``count`` more latencies, into the kept sample.

        Every kept value stands for the same number of latencies: the side whose values
        stand for fewer is thinned to that weight first, then the whole to the limit. The
        sample stays uniform over every latency counted, whatever each merge's rate. The
        earlier merge counted each value as one latency, so a busy window's 2,000 values for
        50,000 tuples weighed as little as a start-up window's 2,000 for 2,000:
        ``sparkstorm run``'s whole-run p50 (2,761 ms) was the start-up's, above its mean
        (1,752 ms).
        """
        if not values or count <= 0:
            return
        mine = self.complete_values
        before = self.complete_count - count  # the count before this batch
        mine_weight = before / len(mine) if mine and before > 0 else 0.0
        new_weight = count / len(values)
        weight = max(mine_weight, new_weight)
        merged = (_thin(mine, len(mine) * mine_weight / weight)
                  + _thin(values, len(values) * new_weight / weight))
        mine[:] = _thin(merged, min(len(merged), _SAMPLE_LIMIT))

    def failures_by_cause(self) -> dict[str, int]:
        """Failed trees counted by cause (every cause present, zeros included)."""
        counts = dict.fromkeys(FAIL_CAUSES, 0)
        for (cause, _), n in self.fail_causes.items():
            counts[cause] = counts.get(cause, 0) + n
        return counts

    def failure_reasons(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most frequent kinds of (cause, reason), most frequent first.

        The most recently seen come first among equals; each has its first and last time and latest
        text (``example``).
        """
        rows: list[dict[str, Any]] = []
        for (cause, reason), n in self.fail_causes.items():
            seen = self.fail_seen.get((cause, reason))
            rows.append({"cause": cause, "reason": reason, "count": n,
                         "firstSeen": round(seen.first, 3) if seen else None,
                         "lastSeen": round(seen.last, 3) if seen else None,
                         "example": seen.example if seen else reason})
        rows.sort(key=lambda r: (-r["count"], -(r["lastSeen"] or 0.0)))
        return rows[:limit]

    def summary(self, seconds: float | None = None) -> dict[str, Any]:
        """Totals and latencies in Storm's terms.

        ``capacity`` is the share of ``seconds`` spent executing (Storm's capacity), None when
        ``seconds`` is not given.
        """
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
            **self._latency_percentiles(),
            "failures_by_cause": self.failures_by_cause(),
            "failure_reasons": self.failure_reasons(),
            "buffered_max": self.buffered, "buffer_bound": self.buffer_bound,
            "metrics": dict(self.metrics),
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

    def _latency_percentiles(self) -> dict[str, float | None]:
        p50, p99 = percentiles(self.complete_values, (0.5, 0.99))
        return {"complete_latency_p50_ms": p50, "complete_latency_p99_ms": p99}

    def brief(self, seconds: float) -> dict[str, Any]:
        """The few figures a chart point needs (one window of one component).

        Zeros and unknowns are left out and latencies rounded to microseconds: heartbeats carry
        ``topology.stats.window.count`` of these per component every second.
        """
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
            **self._latency_percentiles(),
            "inputs": dict(self.executed),
            "buffered": self.buffered, "buffer_bound": self.buffer_bound,
        }
        return {key: round(value, 3) if isinstance(value, float) else value
                for key, value in figures.items() if value}
