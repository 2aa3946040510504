"""Shares: the executors a topology's ``topology.workers`` hosts split between them.

Where no supervisor runs, the topology's Spark application hosts its executors in
``topology.workers`` long-running hosting tasks, one per share; the test harness
``sparkstorm.testing.spread`` deals them over hosts the same way. Each component's executors
are dealt round robin over the shares, so every share holds a part of every stage and the
stages' Spark tasks spread over the hosts as the executors do.

Example:
    >>> deal([("ids", 0), ("relay", 1), ("relay", 2), ("sink", 3), ("sink", 4)], 2)
    [{0, 1, 3}, {2, 4}]
"""

from __future__ import annotations

from collections.abc import Iterable

from sparkstorm.engine.plan.execution import ExecutionPlan


def deal(executors: Iterable[tuple[str, int]], shares: int) -> list[set[int]]:
    """``(component, gid)`` pairs, in plan order, dealt over ``shares`` shares.

    A component's ``n``-th executor goes to share ``n % shares``; with more shares than a
    component has executors the first shares get them, so a share may be empty.
    """
    seen: dict[str, int] = {}
    dealt: list[set[int]] = [set() for _ in range(max(1, shares))]
    for component, gid in executors:
        n = seen.get(component, 0)
        seen[component] = n + 1
        dealt[n % len(dealt)].add(gid)
    return dealt


def plan_shares(plan: ExecutionPlan, shares: int) -> list[set[int]]:
    """The gids of each of ``shares`` shares of ``plan``'s executors (see :func:`deal`)."""
    return deal(((e.component, e.gid) for e in plan.executors), shares)


def share_of(plan: ExecutionPlan, index: int, shares: int) -> set[int]:
    """The executors of share ``index`` of ``shares``."""
    return plan_shares(plan, shares)[index]


__all__ = ["deal", "plan_shares", "share_of"]
