"""All-time statistics that survive a restart of a topology's worker, kept by Nimbus.

A worker that starts again (its process died, or its supervisor restarted it) runs a new driver
whose counts start from zero. Nimbus sees it in the heartbeats (fewer windows than the last
heartbeat of the same worker said, or none while it starts) and keeps the last all-time
component totals of the worker before the restart in ``carried_all_time`` of the stored
heartbeat, added to every later all-time figure
(:meth:`sparkstorm.cluster.nimbus.ui_stats.WorkerBeat.window`). What it does not keep, and why:
the 10-minute, 3-hour and 1-day windows (their history is the old driver's, gone: they start
from the restart, which the UI's troubles say), executor rows (a restarted executor's process
is another one: its counts start at 0), latencies and capacity (the new driver's own).

Example:
    >>> before = {"windows": 50, "started": 10.0, "components": {"split": {"emitted": 7}}}
    >>> carried = carry_all_time(before, {"windows": 2}, now=100.0)
    >>> carried["components"]["split"]["emitted"], carried["since"], carried["resets"]
    (7, 10.0, 1)
    >>> carry_all_time({"windows": 3, CARRIED: carried}, {"windows": 4}, now=101.0) == carried
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkstorm.cluster.nimbus.ui_progress import driver_restarted
from sparkstorm.cluster.nimbus.ui_stats import ALL_TIME, merge, top_reasons

CARRIED = "carried_all_time"
"""The stored heartbeat's key of the totals kept from before the worker's restarts."""
_NOT_CARRIED = ("capacity", "buffered_max", "buffer_bound", "metrics",
                "complete_latency_ms", "execute_latency_ms", "process_latency_ms")
"""Figures of the moment (gauges, ratios over the driver's own time), not totals."""


def carry_all_time(previous: Mapping[str, Any], stats: Mapping[str, Any],
                   now: float) -> dict[str, Any] | None:
    """What the heartbeat ``stats`` carries, ``previous`` being the same worker's last one.

    The previous carried totals; after a restart (fewer windows than before) plus the previous
    driver's own all-time totals. Returns ``{"components", "since", "resets", "reset_at"}``
    (``since``: when the first driver started), or None when the worker never restarted.
    """
    carried = previous.get(CARRIED)
    carried = dict(carried) if isinstance(carried, Mapping) else None
    if not driver_restarted(previous, stats):
        return carried
    totals: dict[str, dict[str, Any]] = {}
    for source in ((carried or {}).get("components") or {}, _all_time(previous)):
        for name, figures in source.items():
            if isinstance(figures, Mapping):
                merge(totals.setdefault(name, {}), dict(figures))
    for figures in totals.values():
        for key in _NOT_CARRIED:
            figures.pop(key, None)
        figures["failure_reasons"] = top_reasons(figures.get("failure_reasons") or [])
    since = (carried or {}).get("since", previous.get("started"))
    return {"components": totals, "since": since,
            "resets": int((carried or {}).get("resets") or 0) + 1, "reset_at": now}


def _all_time(stats: Mapping[str, Any]) -> Mapping[str, Any]:
    """A heartbeat's own all-time component totals."""
    windowed = stats.get("windowed") or {}
    found = (windowed.get(ALL_TIME) or {}).get("components") if ALL_TIME in windowed else \
        stats.get("components")
    return found if isinstance(found, Mapping) else {}
