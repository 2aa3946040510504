"""Figures at a glance for the UI API.

A topology's health over the last 10 minutes, and Storm's per-owner resource summary
(``/api/v1/owner-resources``).

Example:
    >>> health({"word": {"acked": 3, "failed": 1, "errors": 0}}, {"word"})["failedShare"]
    0.25
    >>> health({}, set())["state"]
    'idle'
"""

from __future__ import annotations

from typing import Any

HEALTH_WINDOW = "600"
"""Health looks at the last 10 minutes (Storm's shortest window)."""
FAILING_SHARE = 0.05
"""A topology failing more than this share of its trees is shown as failing."""

_OWNER_ZEROS = ("totalMemoryUsage", "totalCpuUsage", "memoryGuarantee", "cpuGuarantee",
                "memoryGuaranteeRemaining", "cpuGuaranteeRemaining", "totalReqOnHeapMem",
                "totalReqOffHeapMem", "totalReqMem", "totalReqCpu", "totalAssignedOnHeapMem",
                "totalAssignedOffHeapMem")


def health(components: dict[str, dict[str, Any]], spouts: set[str]) -> dict[str, Any]:
    """Trees acked and failed by the spouts, the failed share and every component's errors.

    Read from the 10-minute window's ``components``. ``state`` is ``failing`` (more than
    :data:`FAILING_SHARE` failed), ``erroring`` (errors, few failures), ``ok`` or ``idle`` (nothing
    completed).
    """
    acked = sum(int(c.get("acked") or 0) for n, c in components.items() if n in spouts)
    failed = sum(int(c.get("failed") or 0) for n, c in components.items() if n in spouts)
    errors = sum(int(c.get("errors") or 0) for c in components.values())
    share = failed / (acked + failed) if acked + failed else None
    if share is not None and share > FAILING_SHARE:
        state = "failing"
    elif errors:
        state = "erroring"
    else:
        state = "ok" if share is not None else "idle"
    return {"window": HEALTH_WINDOW, "acked": acked, "failed": failed,
            "failedShare": round(share, 4) if share is not None else None,
            "errors": errors, "state": state}


def owner_summaries(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Storm's owner resource summaries from topology summary rows, one per owner.

    The rows have ``owner``, ``workersTotal``, ``executorsTotal``, ``tasksTotal``, ``memoryMb`` and
    ``cpuPercent``; the summaries are sorted by owner. Guarantees are 0: there is no resource-aware
    scheduler.

    Example:
        >>> owner_summaries([{"owner": "ann", "workersTotal": 1, "executorsTotal": 4,
        ...                   "tasksTotal": 5, "memoryMb": 10.5, "cpuPercent": 3.0}])[0][
        ...     "totalMemoryUsage"]
        10.5
    """
    owners: dict[str, dict[str, Any]] = {}
    for row in rows:
        owner = str(row.get("owner") or "")
        mine = owners.setdefault(owner, {
            "owner": owner, "totalTopologies": 0, "totalExecutors": 0, "totalWorkers": 0,
            "totalTasks": 0, "isolatedNodes": 0, **dict.fromkeys(_OWNER_ZEROS, 0.0)})
        mine["totalTopologies"] += 1
        mine["totalExecutors"] += int(row.get("executorsTotal") or 0)
        mine["totalWorkers"] += int(row.get("workersTotal") or 0)
        mine["totalTasks"] += int(row.get("tasksTotal") or 0)
        mine["totalMemoryUsage"] += float(row.get("memoryMb") or 0.0)
        mine["totalCpuUsage"] += float(row.get("cpuPercent") or 0.0)
    return [owners[name] for name in sorted(owners)]
