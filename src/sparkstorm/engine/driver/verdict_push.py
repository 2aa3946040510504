"""The acker's verdicts sent to the spout executors as soon as a window is absorbed.

A window's acks and fails are known when the driver absorbs its result. Riding the next
window's spout stage, they reached the spouts one period later (with overlapping windows
the window after next: the next one had started already), and a tuple's complete latency
is the time until its spout's ``ack``. Measured at 80 % of the word count's maximum that
wait was a fifth of the complete latency (``benchmarks/RESULTS.md``, 2026-11-27 08:00,
verdict wait 288 of 1,376 ms). So the driver sends each spout executor its share of the
verdicts right after the absorb (``{"cmd": "verdicts"}``, ``engine.executor.main``), and
the spout applies them under its lock between two of its windows.

What could not be delivered (the executor restarts, moved, or did not answer within
``PUSH_TIMEOUT_SECONDS``) stays with the driver and rides the next window's control, as
before. A verdict that was applied although its answer was lost is heard twice; the second
time its root is no longer pending and it is ignored, as Storm ignores a late verdict.

Off with ``topology.window.verdicts.push: false`` and while checkpoints are on under acking: a
checkpoint holds the verdicts its spouts have not heard yet
(``engine.driver.checkpoint_coordinator``), and a restore must be able to give them again.

Under checkpoint reliability there are no verdicts, but a tuple's tree ends with its window:
the driver pushes that the window ended (:func:`push_window_end`), so that the spout's
in-flight bounds count its tuples until then and not a window longer.

Example:
    >>> from sparkstorm.engine.driver.acker import Verdicts
    >>> verdicts = Verdicts()
    >>> verdicts.ack[3].extend([11, 12]); verdicts.ack[4].append(13)
    >>> verdict_control(verdicts, [3]).ack
    [11, 12]
    >>> kept = held_back(verdicts, {4})
    >>> dict(kept.ack)
    {4: [13]}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from typing import Any

from sparkstorm.engine.driver.acker import Verdicts
from sparkstorm.engine.driver.window_counts import joined_roots
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.engine.wire.protocol import Request, VerdictsRequest

logger = logging.getLogger(__name__)

PUSH_TIMEOUT_SECONDS = 2.0
"""Bound on one spout executor's answer to a push. It answers once its lock is free: after
at most one produce burst or the window it is serving, which normally takes milliseconds."""

Call = Callable[[int, Request, float], Any]
"""``ExecutorPool.call``: one request to executor ``gid`` with a timeout."""


def verdict_control(verdicts: Verdicts, tasks: Iterable[int], **rest: Any) -> SpoutControl:
    """The share of ``verdicts`` for a spout executor of ``tasks`` (``rest``: its other fields)."""
    tasks = list(tasks)
    failed = joined_roots(verdicts.fail, tasks)
    reasons = verdicts.reasons
    return SpoutControl(ack=joined_roots(verdicts.ack, tasks), fail=failed,
                        fail_reasons={r: reasons[r] for r in failed if r in reasons},
                        reset=joined_roots(verdicts.reset, tasks), **rest)


def held_back(verdicts: Verdicts, tasks: Collection[int]) -> Verdicts:
    """The part of ``verdicts`` for ``tasks`` (a copy), to be given with the next window."""
    kept = Verdicts()
    for mine, theirs in ((kept.ack, verdicts.ack), (kept.fail, verdicts.fail),
                         (kept.reset, verdicts.reset)):
        for task, roots in theirs.items():
            if task in tasks and roots:
                mine[task].extend(roots)
    kept.reasons = {root: why for task in kept.fail for root in kept.fail[task]
                    if (why := verdicts.reasons.get(root)) is not None}
    return kept


def push_verdicts(call: Call, plan: ExecutionPlan, spout_gids: Iterable[int],
                  verdicts: Verdicts, timeout: float = PUSH_TIMEOUT_SECONDS) -> Verdicts:
    """Send each spout executor in ``spout_gids`` its share; return what was not delivered."""
    undelivered: set[int] = set()
    covered: set[int] = set()
    for gid in spout_gids:
        tasks = plan.executors[gid].tasks
        covered.update(tasks)
        control = verdict_control(verdicts, tasks)
        if not (control.ack or control.fail or control.reset):
            continue
        try:
            call(gid, VerdictsRequest(control.to_wire()), timeout)
        except Exception as exc:  # noqa: BLE001 - the next window's control carries them
            logger.info("spout executor %d did not take its verdicts now (%s); they go with "
                        "the next window", gid, exc)
            undelivered.update(tasks)
    for kind in (verdicts.ack, verdicts.fail, verdicts.reset):
        undelivered.update(task for task in kind if task not in covered)
    return held_back(verdicts, undelivered)


def push_window_end(call: Call, spout_gids: Iterable[int], window: int,
                    timeout: float = PUSH_TIMEOUT_SECONDS) -> None:
    """Tell each spout executor that ``window`` ended (checkpoint reliability).

    Its tuples' trees ended with it, so they count in flight no more
    (``engine.executor.commit_acks``). One not told now hears it with the next window's
    control (``SpoutControl.ended``).
    """
    control = SpoutControl(ended=window).to_wire()
    for gid in spout_gids:
        try:
            call(gid, VerdictsRequest(control), timeout)
        except Exception as exc:  # noqa: BLE001 - the next window's control says it
            logger.info("spout executor %d did not hear that window %d ended (%s); the "
                        "next window tells it", gid, window, exc)


__all__ = ["PUSH_TIMEOUT_SECONDS", "held_back", "push_verdicts", "push_window_end",
           "verdict_control"]
