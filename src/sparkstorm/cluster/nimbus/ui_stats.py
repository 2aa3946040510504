"""Statistics for the UI API, read from the latest heartbeat of each assigned worker.

Per component and per executor over Storm's windows (600, 10800, 86400 seconds and all time), the
recent windows for charts, and failures by cause.

Example:
    >>> check_window("600"), check_window(None), window_pretty("10800")
    ('600', ':all-time', '3h 0m 0s')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkstorm.cluster.nimbus.errors import NimbusError

if TYPE_CHECKING:
    from sparkstorm.cluster.store.records import WorkerHeartbeat, WorkerSlot

ALL_TIME = ":all-time"
WINDOWS = ("600", "10800", "86400", ALL_TIME)
"""Storm UI's windows, shortest first."""
_PRETTY = {"600": "10m 0s", "10800": "3h 0m 0s", "86400": "1d 0h 0m 0s", ALL_TIME: "All time"}
_COUNTS = ("emitted", "transferred", "executed", "acked", "failed")
_LATENCIES = ("complete_latency_ms", "execute_latency_ms", "process_latency_ms")
SYSTEM_COMPONENTS = frozenset({"__acker", "__system"})


def check_window(value: str | None) -> str:
    """The window a ``?window=`` parameter names (all time when absent).

    Raises:
        NimbusError: ``UNKNOWN_WINDOW`` for anything but Storm's four windows.
    """
    if value in (None, "", "all-time"):
        return ALL_TIME
    if value not in WINDOWS:
        msg = (f"unknown statistics window {value!r}; use one of {', '.join(WINDOWS)} "
               "(seconds, or :all-time)")
        raise NimbusError(msg, code="UNKNOWN_WINDOW")
    return value


def window_pretty(window: str) -> str:
    """Storm's ``windowPretty`` of ``window``."""
    return _PRETTY[window]


def merge(into: dict[str, Any], stats: dict[str, Any]) -> None:
    """Add one worker's summary of a component (or executor) into ``into``."""
    for key in (*_COUNTS, "timed_out", "errors"):
        into[key] = into.get(key, 0) + int(stats.get(key) or 0)
    for key in _LATENCIES:
        if stats.get(key) is not None:
            into[key] = stats[key]  # only the driver's worker reports statistics: its own
    into["capacity"] = max(into.get("capacity") or 0.0, stats.get("capacity") or 0.0)
    for key in ("buffered_max", "buffer_bound"):
        into[key] = max(int(into.get(key) or 0), int(stats.get(key) or 0))
    streams = into.setdefault("by_stream", {})
    for key, values in (stats.get("by_stream") or {}).items():
        mine = streams.setdefault(key, {})
        for stream, value in values.items():
            if key in _LATENCIES:  # per stream: the driver's worker's, its own
                mine[stream] = value
            else:
                mine[stream] = mine.get(stream, 0) + int(value)
    causes = into.setdefault("failures_by_cause", {})
    for cause, value in (stats.get("failures_by_cause") or {}).items():
        causes[cause] = causes.get(cause, 0) + int(value)
    reasons = into.setdefault("failure_reasons", [])
    reasons.extend(stats.get("failure_reasons") or [])
    # gauges by task id (a Kafka spout's lag): each task runs in one worker
    into.setdefault("metrics", {}).update(stats.get("metrics") or {})


@dataclass
class WorkerBeat:
    """One assigned worker: its slot, id and latest heartbeat (None before the first)."""

    slot: WorkerSlot
    worker_id: str
    beat: WorkerHeartbeat | None

    @property
    def stats(self) -> dict[str, Any]:
        """The executor statistics of the worker's latest heartbeat ({} without one)."""
        return self.beat.executor_stats if self.beat is not None else {}

    @property
    def resources(self) -> dict[str, Any]:
        """The worker's processes as its heartbeat measured them.

        ``worker`` and ``executors`` (by executor id), each ``{"pid", "cpuPercent", "memoryMb"}``.
        """
        found = self.stats.get("resources")
        return found if isinstance(found, dict) else {}

    def process_totals(self) -> dict[str, float]:
        """CPU and memory of the worker and its executor processes together.

        CPU in percent of one core, memory in MB (resident).
        """
        processes = [self.resources.get("worker") or {},
                     *(self.resources.get("executors") or {}).values()]
        return {"cpuPercent": round(sum(float(p.get("cpuPercent") or 0.0)
                                        for p in processes), 1),
                "memoryMb": round(sum(float(p.get("memoryMb") or 0.0) for p in processes), 1)}

    def window(self, window: str) -> dict[str, Any]:
        """This worker's ``{"components": ..., "executors": ...}`` for ``window``."""
        windowed = self.stats.get("windowed") or {}
        if window in windowed:
            found = dict(windowed[window])
        elif window == ALL_TIME:  # a heartbeat from before windows were reported
            found = {"components": self.stats.get("components") or {}, "executors": {}}
        else:
            found = {"components": {}, "executors": {}}
        carried = self.stats.get("carried_all_time")  # nimbus.carried_stats: before restarts
        if window == ALL_TIME and isinstance(carried, dict) and carried.get("components"):
            components: dict[str, dict[str, Any]] = {}
            for source in (carried["components"], found.get("components") or {}):
                for name, stats in source.items():
                    merge(components.setdefault(name, {}), stats)
            found["components"] = components
        return found


class TopologyStatsView:
    """The statistics of one topology, merged over its workers' heartbeats."""

    def __init__(self, beats: list[WorkerBeat]) -> None:
        self.beats = beats

    def components(self, window: str) -> dict[str, dict[str, Any]]:
        """Per-component summaries for ``window``."""
        merged: dict[str, dict[str, Any]] = {}
        for worker in self.beats:
            for name, stats in (worker.window(window).get("components") or {}).items():
                merge(merged.setdefault(name, {}), stats)
        for stats in merged.values():
            stats["failure_reasons"] = top_reasons(stats.get("failure_reasons") or [])
        return merged

    def executors(self, window: str, component: str
                  ) -> list[tuple[WorkerBeat, str, dict[str, Any]]]:
        """``component``'s executor rows for ``window``, each with its worker and executor id."""
        rows = []
        for worker in self.beats:
            for gid, row in (worker.window(window).get("executors") or {}).items():
                if row.get("component") == component:
                    rows.append((worker, str(gid), row))
        return sorted(rows, key=lambda item: int(item[2].get("first_task", 0)))

    def locality(self) -> dict[str, Any] | None:
        """Where the executor calls of the topology's windows went (the driver's count).

        Host-local share and bytes across hosts (``engine.spark.locality``); None before any.
        """
        for worker in self.beats:
            found = worker.stats.get("locality")
            if isinstance(found, dict) and found.get("calls"):
                return dict(found)
        return None

    def recent_windows(self) -> list[dict[str, Any]]:
        """The recent windows of the worker that reported most of them, oldest first."""
        best: list[dict[str, Any]] = []
        for worker in self.beats:
            recent = worker.stats.get("recent_windows") or []
            if len(recent) > len(best):
                best = list(recent)
        return best


def top_reasons(reasons: list[dict[str, Any]], limit: int = 20) -> list[dict[str, Any]]:
    """Merge the workers' rows of each (cause, kind of reason); keep the ``limit`` most frequent.

    The most recently seen comes first among equals (so new kinds are not crowded out by old ones of
    the same count); each row has its first and last time and its latest text.

    Example:
        >>> top_reasons([{"cause": "explicit", "reason": "r", "count": 2, "lastSeen": 5.0},
        ...              {"cause": "explicit", "reason": "r", "count": 1, "lastSeen": 9.0,
        ...               "example": "r 9"}])
        [{'cause': 'explicit', 'reason': 'r', 'count': 3, 'firstSeen': None, 'lastSeen': 9.0, \
'example': 'r 9'}]
    """
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for row in reasons:
        key = (str(row.get("cause")), str(row.get("reason")))
        mine = merged.setdefault(key, {"cause": key[0], "reason": key[1], "count": 0,
                                       "firstSeen": None, "lastSeen": None,
                                       "example": row.get("example") or key[1]})
        mine["count"] += int(row.get("count") or 0)
        first, last = row.get("firstSeen"), row.get("lastSeen")
        if first is not None and (mine["firstSeen"] is None or first < mine["firstSeen"]):
            mine["firstSeen"] = first
        if last is not None and (mine["lastSeen"] is None or last >= mine["lastSeen"]):
            mine["lastSeen"] = last
            mine["example"] = row.get("example") or key[1]
    ranked = sorted(merged.values(), key=lambda r: (-r["count"], -(r["lastSeen"] or 0.0)))
    return ranked[:limit]
