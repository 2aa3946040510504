"""Tick tuples: ``__system``'s ``__tick`` stream.

Delivered at the start of the first window after each period (``topology.tick.tuple.freq.secs``, per
component or topology-wide).
"""

from __future__ import annotations

from collections.abc import Iterator

from sparkstorm.config import conf_optional_int
from sparkstorm.engine.plan.execution import SYSTEM_TASK, ExecutionPlan
from sparkstorm.engine.wire.frames import pack
from sparkstorm.topology.tuple import TICK_STREAM


class TickSchedule:
    """When each bolt with a tick frequency gets its next tick."""

    def __init__(self, plan: ExecutionPlan) -> None:
        self.plan = plan
        self.periods: dict[str, float] = {}
        for spec in plan.spec.bolts:
            freq = conf_optional_int({**plan.conf, **spec.config},
                                     "topology.tick.tuple.freq.secs")
            if freq:
                self.periods[spec.name or ""] = float(freq)
        self.next_due: dict[str, float] = {}

    def due(self, now: float) -> Iterator[tuple[int, bytes]]:
        """Packed tick rows per executor gid for every component whose period elapsed."""
        for component, period in self.periods.items():
            due = self.next_due.setdefault(component, now + period)
            if now < due:
                continue
            self.next_due[component] = due + period if due + period > now else now + period
            freq = int(period) if period.is_integer() else period
            for executor in self.plan.executors:
                if executor.component == component:
                    rows = [[task, SYSTEM_TASK, TICK_STREAM, [[freq]], [None], [None]]
                            for task in executor.tasks]
                    yield executor.gid, pack(rows)
