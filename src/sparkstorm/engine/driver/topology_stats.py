"""A running topology's statistics over time, per component and per executor.

The recent windows (for charts), rolling 10-minute, 3-hour and 1-day windows and all-time
totals, as Storm's UI reports them. :meth:`TopologyStats.summary` is what heartbeats carry.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.engine.driver.rolling import WINDOW_SECONDS, RollingWindows
from sparkstorm.engine.spark.locality import CallLocality
from sparkstorm.engine.wire.stats import ComponentCounters

ALL_TIME = ":all-time"
"""Storm's name of the all-time window."""


@dataclass
class WindowRecord:
    """What one window did: its id, timing and counters per component and per executor."""

    window: int
    started: float
    seconds: float
    components: dict[str, ComponentCounters]
    executors: dict[int, ComponentCounters] = field(default_factory=dict)
    jobs: list[int] = field(default_factory=list)
    """Its Spark job ids (links from the UI's charts to the Spark UI)."""
    locality: CallLocality = field(default_factory=CallLocality)
    """Where its executor calls went (host-local or across hosts)."""


@dataclass(frozen=True)
class ExecutorRange:
    """Which component an executor runs and its tasks, for per-executor rows."""

    component: str
    first_task: int
    last_task: int


def _range_key(where: ExecutorRange) -> str:
    """The rolling windows' key of an executor's counters (``#`` marks executors)."""
    return f"#{where.component}:{where.first_task}-{where.last_task}"


class TopologyStats:
    """Per-window records (bounded), rolling windows and running totals.

    Args:
        keep_windows: how many recent windows to keep for charts.
        executors: executor id -> its component and task range (empty: no executor rows).
        window_seconds: the minimum window length, the least time a window stands for
            when its capacity is computed.
    """

    def __init__(self, keep_windows: int,
                 executors: dict[int, ExecutorRange] | None = None,
                 window_seconds: float = 0.0) -> None:
        self.recent: deque[dict[str, Any]] = deque(maxlen=keep_windows)
        """The last windows' chart points (made once, when the window is recorded)."""
        self.totals: dict[str, ComponentCounters] = {}
        self.executor_totals: dict[ExecutorRange, ComponentCounters] = {}
        """Keyed by what the executor runs (component, tasks), not its gid: after a
        ``rebalance -e`` a gid may be another component's executor, whose rows must not
        take the former one's history."""
        self.executor_ranges = dict(executors or {})
        self.rolling = RollingWindows()
        self.window_count = 0
        self.window_seconds = window_seconds
        self.started = time.time()
        self.last_errors: dict[str, dict[str, Any]] = {}
        self.restarts = 0
        self.committed_window: int | None = None
        """The newest committed checkpoint's window (None: checkpoints off or none yet)."""
        self.checkpoint_ms = 0.0
        """From taking the newest committed checkpoint to committing it."""
        self.rollbacks = 0
        self.rollback_cause = ""
        """What made the last rollback (the UI's troubles say it)."""
        self.watchdog: Any = None
        """The driver's watchdog (its ``summary()`` goes with the statistics), if any."""
        self.locality = CallLocality()
        """Every window's executor calls: host-local share, bytes across hosts."""
        self.since_mark: dict[str, ComponentCounters] | None = None
        """Component totals of the windows recorded since :meth:`mark` (None: not marked)."""
        self.marked_at = 0.0
        self.lock = threading.Lock()  # summary() is read from other threads

    def mark(self) -> None:
        """Start totals of their own from now on (``sparkstorm run``: the run past its start).

        The summary then carries them as ``since_mark`` beside the all-time totals, so a
        run's latency can be told apart from the start-up's (the JVM's first jobs, the
        window sizer still learning the load).
        """
        with self.lock:
            self.since_mark, self.marked_at = {}, time.time()

    def record(self, record: WindowRecord) -> None:
        """Add one window's counters."""
        with self.lock:
            self.recent.append(self._brief(record))
            self.window_count += 1
            self.locality.merge(record.locality)
            for name, counters in record.components.items():
                self.totals.setdefault(name, ComponentCounters()).add(counters)
                if self.since_mark is not None:
                    self.since_mark.setdefault(name, ComponentCounters()).add(counters)
            ranged = {where: counters for gid, counters in record.executors.items()
                      if (where := self.executor_ranges.get(gid)) is not None}
            for where, counters in ranged.items():
                self.executor_totals.setdefault(where, ComponentCounters()).add(
                    counters, keep_samples=False)
            keyed = {**record.components,
                     **{_range_key(where): c for where, c in ranged.items()}}
            self.rolling.add(record.started + record.seconds, keyed)

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """Everything as plain data (what a heartbeat carries)."""
        with self.lock:
            return self._summary(time.time() if now is None else now)

    def _summary(self, now: float) -> dict[str, Any]:
        elapsed = max(now - self.started, 1e-9)
        windowed: dict[str, dict[str, Any]] = {
            ALL_TIME: self._window_view(self.totals, self.executor_totals, elapsed)}
        by_key = {_range_key(where): where for where in self.executor_ranges.values()}
        for length in WINDOW_SECONDS:
            counters = self.rolling.totals(length, now)
            components = {k: c for k, c in counters.items() if not k.startswith("#")}
            executors = {by_key[k]: c for k, c in counters.items() if k in by_key}
            windowed[str(length)] = self._window_view(components, executors,
                                                      min(float(length), elapsed))
        since = None
        if self.since_mark is not None:
            seconds = max(now - self.marked_at, 1e-9)
            since = {"at": self.marked_at, "components":
                     self._window_view(self.since_mark, {}, seconds)["components"]}
        return {
            "windows": self.window_count,
            "started": self.started,
            "since_mark": since,
            "components": windowed[ALL_TIME]["components"],
            "windowed": windowed,
            "last_errors": dict(self.last_errors),
            "executor_restarts": self.restarts,
            "committed_window": self.committed_window,
            "checkpoint_ms": self.checkpoint_ms,
            "rollbacks": self.rollbacks,
            "rollback_cause": self.rollback_cause,
            "watchdog": self.watchdog.summary() if self.watchdog is not None else None,
            "locality": self.locality.summary(),
            "recent_windows": list(self.recent),
        }

    def _window_view(self, components: dict[str, ComponentCounters],
                     executors: dict[ExecutorRange, ComponentCounters],
                     seconds: float) -> dict[str, Any]:
        """One window's component summaries and executor rows.

        Rows only for the executors the topology runs now (by what they run: the history of
        an executor a ``rebalance -e`` regrouped away is not shown under a new one's id). A
        component's capacity is its busiest executor's.
        """
        rows: dict[str, Any] = {}
        busiest: dict[str, float] = {}
        gid_of = {where: gid for gid, where in self.executor_ranges.items()}
        for where, counters in sorted(executors.items(), key=lambda item: (
                gid_of.get(item[0], -1), item[0].first_task)):
            gid = gid_of.get(where)
            if gid is None:
                continue
            summary = counters.summary(seconds)
            rows[str(gid)] = {"component": where.component, "first_task": where.first_task,
                              "last_task": where.last_task, **summary}
            busiest[where.component] = max(busiest.get(where.component, 0.0),
                                           summary["capacity"] or 0.0)
        summaries = {}
        for name, counters in sorted(components.items()):
            summary = counters.summary()
            summary["capacity"] = busiest.get(name)
            summaries[name] = summary
        return {"components": summaries, "executors": rows}

    def _brief(self, record: WindowRecord) -> dict[str, Any]:
        # capacity per window: the busiest executor's busy time over the window's period
        period = max(record.seconds, self.window_seconds)
        busiest: dict[str, float] = {}
        for gid, counters in record.executors.items():
            where = self.executor_ranges.get(gid)
            if where is not None and period > 0:
                busiest[where.component] = max(busiest.get(where.component, 0.0),
                                               counters.busy_ms / (period * 1000.0))
        components = {}
        for name, counters in record.components.items():
            brief = counters.brief(period)
            brief.pop("capacity", None)
            if busiest.get(name):
                brief["capacity"] = round(busiest[name], 3)
            components[name] = brief
        return {"window": record.window, "started": round(record.started, 3),
                "seconds": round(record.seconds, 3), "components": components,
                "jobs": list(record.jobs), "locality": record.locality.summary()}
