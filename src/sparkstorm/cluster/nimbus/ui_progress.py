"""Whether a topology makes progress, and what it went through: the UI's trouble fields.

The workers' heartbeats carry counts (windows run, executor restarts, rollbacks, the
committed window); :func:`progress_marks` notes, as each heartbeat is stored, when each
count last changed, so that the UI can say *when*, not only how many. From them,
:func:`trouble_fields` gives the topology's fields (Storm has none of these; documented in
docs/cluster.md) and the lines an operator reads first:

- ``executorRestarts``, ``lastExecutorRestartSecs``: executor processes that died and were
  started again, and how long ago the last one was;
- ``rollbacks``, ``lastRollbackSecs``, ``lastRollbackCause``: rollbacks to the committed
  checkpoint, and what made the last one (an executor process died, one did not answer, a
  window's job failed for good, ``rebalance -e``, the driver resumed after a restart);
- ``windowsIdleSecs``: seconds since the driver last completed a window (a running topology
  completes several a second, even inactive);
- ``checkpointAgeSecs``, ``windowsSinceCommit``: how old the committed checkpoint is;
- ``statisticsResetSecs``: when the counts started again from zero (a new driver: a
  restarted worker); Nimbus keeps the all-time totals from before (``nimbus.carried_stats``),
  not the 10-minute, 3-hour and 1-day windows;
- ``statisticsResets``, ``allTimeSinceSecs``: how many restarts the all-time totals were kept
  across, and since when (epoch seconds; None without a restart);
- ``watchdogRemedies``: remedies the drivers' watchdogs tried (``engine.driver.watchdog``);
- ``troubles``: one sentence per current trouble (stalled, checkpoints not committing,
  executors restarting, rolled back, the watchdog's last step, workers failing to start).

Example:
    >>> marks = progress_marks({}, {"windows": 3, "executor_restarts": 0}, now=100.0)
    >>> marks["windows_at"], "restarts_at" in marks
    (100.0, False)
    >>> progress_marks({"windows": 3, "progress": marks}, {"windows": 3}, now=130.0)["windows_at"]
    100.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

STALL_SECS = 30.0
"""A running topology that completed no window for this long is stalled."""
RECENT_SECS = 600.0
"""Restarts and rollbacks this recent count as trouble (the health window)."""
STALE_CHECKPOINTS = 3
"""Checkpoints are stale after this many intervals of windows without a commit."""
_MARKS = (("windows", "windows_at"), ("executor_restarts", "restarts_at"),
          ("rollbacks", "rollbacks_at"), ("committed_window", "committed_at"))


def progress_marks(previous: Mapping[str, Any], stats: Mapping[str, Any],
                   now: float) -> dict[str, float]:
    """When each count of ``stats`` last changed, carried over from ``previous`` stats.

    A count seen for the first time marks now, but restarts and rollbacks only when above
    zero (none happened); the committed window marks ``committed_windows`` too (the
    windows run then).
    """
    marks = dict(previous.get("progress") or {})
    if driver_restarted(previous, stats):
        marks["reset_at"] = now  # a new driver: its counts start again from zero
    for count, mark in _MARKS:
        value = stats.get(count)
        if value is None or value == previous.get(count):
            continue
        if count in ("executor_restarts", "rollbacks") and not value:
            continue
        marks[mark] = now
        if count == "committed_window":
            marks["committed_windows"] = float(stats.get("windows") or 0)
    return marks


def driver_restarted(previous: Mapping[str, Any], stats: Mapping[str, Any]) -> bool:
    """Whether the worker's driver started again between two of its heartbeats.

    Fewer windows than before (a new driver counts from zero), or none at all after some (the
    worker restarted: it reports no windows until its new driver runs).

    Example:
        >>> [driver_restarted({"windows": 9}, s) for s in ({"windows": 3}, {}, {"windows": 10})]
        [True, True, False]
    """
    before, windows = previous.get("windows"), stats.get("windows")
    return isinstance(before, int) and (
        windows is None or (isinstance(windows, int) and windows < before))


def trouble_fields(beats: Iterable[Mapping[str, Any]], now: float, *, running: bool,
                   checkpoint_windows: int) -> dict[str, Any]:
    """The topology's progress fields and ``troubles`` from its workers' latest stats.

    ``running``: its workers run (``workerStatus`` RUNNING): only then can it stall.
    """
    stats = [b for b in beats if b]
    marks = [b.get("progress") or {} for b in stats]
    restarts = sum(int(b.get("executor_restarts") or 0) for b in stats)
    rollbacks = sum(int(b.get("rollbacks") or 0) for b in stats)
    fields: dict[str, Any] = {
        "executorRestarts": restarts,
        "lastExecutorRestartSecs": _ago(now, marks, "restarts_at"),
        "rollbacks": rollbacks, "lastRollbackSecs": _ago(now, marks, "rollbacks_at"),
        "lastRollbackCause": _last_rollback_cause(stats),
        "windowsIdleSecs": _ago(now, marks, "windows_at"),
        **reset_fields(stats, now),
        "checkpointAgeSecs": None, "windowsSinceCommit": None,
        "watchdogRemedies": sum(int((b.get("watchdog") or {}).get("remedies") or 0)
                                for b in stats)}
    windows = max((int(b.get("windows") or 0) for b in stats), default=0)
    if checkpoint_windows > 0:
        fields["checkpointAgeSecs"] = _ago(now, marks, "committed_at")
        committed_at = max((float(m.get("committed_windows") or 0) for m in marks), default=0)
        fields["windowsSinceCommit"] = max(0, windows - int(committed_at))
    fields["troubles"] = [*_troubles(fields, running, checkpoint_windows),
                          *_watchdog_troubles(stats, now)]
    return fields


def _last_rollback_cause(stats: list[Mapping[str, Any]]) -> str | None:
    """What made the newest rollback of any worker's driver (None: none, or not said)."""
    rolled = [b for b in stats if b.get("rollbacks") and b.get("rollback_cause")]
    newest = max(rolled, key=lambda b: float((b.get("progress") or {}).get("rollbacks_at")
                                             or 0), default=None)
    return str(newest["rollback_cause"]) if newest else None


def reset_fields(beats: Iterable[Mapping[str, Any]], now: float) -> dict[str, Any]:
    """The statistics-reset fields of the workers' latest stats, for both pages' window hints.

    ``statisticsResetSecs``, ``statisticsResets`` and ``allTimeSinceSecs``
    (:func:`window_note` makes the hints from them).

    Example:
        >>> beat = {"progress": {"reset_at": 70.0},
        ...         "carried_all_time": {"resets": 1, "since": 10.0}}
        >>> reset_fields([beat, {}], now=100.0)
        {'statisticsResetSecs': 30.0, 'statisticsResets': 1, 'allTimeSinceSecs': 10.0}
    """
    stats = [b for b in beats if b]
    marks = [b.get("progress") or {} for b in stats]
    carried = [c for b in stats if isinstance(c := b.get("carried_all_time"), Mapping)]
    return {"statisticsResetSecs": _ago(now, marks, "reset_at"),
            "statisticsResets": sum(int(c.get("resets") or 0) for c in carried),
            "allTimeSinceSecs": min((float(c["since"]) for c in carried
                                     if isinstance(c.get("since"), int | float)),
                                    default=None)}


def _watchdog_troubles(stats: list[Mapping[str, Any]], now: float) -> list[str]:
    """The newest step of each driver's watchdog, while recent: healing, or healed."""
    found = []
    for beat in stats:
        steps = (beat.get("watchdog") or {}).get("steps") or []
        if not steps or now - float(steps[-1]["time_secs"]) > RECENT_SECS:
            continue
        step, ago = steps[-1], max(0.0, now - float(steps[-1]["time_secs"]))
        if step["action"] == "healed":
            found.append(f"healed {ago:.0f} s ago: {step['reason']}")
        else:
            found.append(f"healing: the watchdog's remedy {step['action']!r} {ago:.0f} s ago "
                         f"({step['reason']})")
    return found


def _troubles(fields: Mapping[str, Any], running: bool, checkpoint_windows: int) -> list[str]:
    found = []
    idle = fields["windowsIdleSecs"]
    if running and idle is not None and idle > STALL_SECS:
        found.append(f"stalled: no window completed for {idle:.0f} s")
    since = fields["windowsSinceCommit"]
    if since is not None and since > STALE_CHECKPOINTS * checkpoint_windows + 2:
        found.append(f"checkpoints not committing: {since} windows since the last commit "
                     f"(every {checkpoint_windows})")
    last = fields["lastExecutorRestartSecs"]
    if last is not None and last <= RECENT_SECS:
        found.append(f"executors restarting: {fields['executorRestarts']} restart(s), the "
                     f"last {last:.0f} s ago")
    last = fields["statisticsResetSecs"]
    if last is not None and last <= RECENT_SECS:
        kept = ("all-time counts include those before it (kept by Nimbus); the 10m, 3h and "
                "1d windows start from there") if fields["statisticsResets"] else \
            "and its counts (all-time ones too) start from there"
        found.append(f"statistics reset {last:.0f} s ago: the driver's worker started again, "
                     + kept)
    last = fields["lastRollbackSecs"]
    if last is not None and last <= RECENT_SECS:
        cause = fields.get("lastRollbackCause")
        found.append(f"rolled back: {fields['rollbacks']} rollback(s) to the committed "
                     f"checkpoint, the last {last:.0f} s ago" + (f" ({cause})" if cause else ""))
    return found


def health_with_troubles(health: dict[str, Any], troubles: list[str]) -> dict[str, Any]:
    """The health at a glance, worsened by current troubles.

    ``stalled`` above everything (nothing moves); ``recovering`` (restarts, rollbacks,
    checkpoints not committing) over ``ok`` and ``idle``.
    """
    if any(t.startswith("stalled") for t in troubles):
        return {**health, "state": "stalled", "troubles": troubles}
    if troubles and health.get("state") in ("ok", "idle"):
        return {**health, "state": "recovering", "troubles": troubles}
    return {**health, "troubles": troubles}


def _ago(now: float, marks: list[Mapping[str, Any]], mark: str) -> float | None:
    times = [float(m[mark]) for m in marks if m.get(mark) is not None]
    return round(max(0.0, now - max(times)), 1) if times else None


__all__ = ["health_with_troubles", "progress_marks", "reset_fields", "trouble_fields"]


def window_note(window: str, fields: Mapping[str, Any]) -> str:
    """What a window's figures cover after a worker restart, for the window hint ("" if all).

    Example:
        >>> window_note(":all-time", {"statisticsResets": 1, "statisticsResetSecs": 30.0})
        ' (kept across 1 worker restart)'
        >>> window_note("600", {"statisticsResets": 1, "statisticsResetSecs": 30.0})
        ' (since the worker restart 30 s ago)'
        >>> window_note("600", {"statisticsResets": 1, "statisticsResetSecs": 900.0})
        ''
    """
    reset = fields.get("statisticsResetSecs")
    if window == ":all-time":
        resets = int(fields.get("statisticsResets") or 0)
        return f" (kept across {resets} worker restart{'s' if resets > 1 else ''})" \
            if resets else ""
    if reset is not None and float(reset) < float(window):
        return f" (since the worker restart {float(reset):.0f} s ago)"
    return ""
