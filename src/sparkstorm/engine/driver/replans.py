"""The driver's side of ``rebalance -e`` in place (the protocol: ``engine.plan.regroup``).

A rebalance asks for new executor counts from any thread (:meth:`Replans.ask`, checked at
once); the window loop takes them between windows and works out the switch
(:func:`plan_switch`, a value), which the loop applies to what it owns.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import (
    Regrouping,
    check_counts,
    executor_counts,
    hosted_gids,
    regroup,
    with_counts,
)
from sparkstorm.errors import EngineError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlanSwitch:
    """A topology's move to new executor counts, for the window loop to apply.

    Attributes:
        plan: the new plan.
        regrouping: which executors stay (old gid -> new gid), leave and arrive.
        hosted: the executors the driver's process runs under it (None: all).
    """

    plan: ExecutionPlan
    regrouping: Regrouping
    hosted: set[int] | None


def plan_switch(old: ExecutionPlan, conf: dict[str, Any], counts: Mapping[str, int],
                executors: list[Any] | None, name: str) -> PlanSwitch | None:
    """The switch from ``old`` to ``counts`` (component -> executors).

    Args:
        old: the plan the topology runs.
        conf: its conf.
        counts: the new counts of the components that change.
        executors: the executor ids the driver's process hosts under the new counts
            (:meth:`Replans.ask`); None: all of them.
        name: the topology's name, for the log.

    Returns:
        None when the counts change nothing, or the executor ids are not those of the new
        counts yet (logged; the worker passes the next heartbeat's).
    """
    merged = {**executor_counts(old), **counts}
    if merged == executor_counts(old):
        return None
    new = ExecutionPlan(with_counts(old.spec, merged), conf)
    hosted = hosted_gids(new, executors) if executors is not None else None
    if executors is not None and hosted is None:
        logger.warning("topology %s: the assignment's executors %s are not those of the new "
                       "counts %s yet; waiting for the next heartbeat", name, executors, merged)
        return None
    return PlanSwitch(new, regroup(old, new), hosted)


class Replans:
    """New executor counts a rebalance asked for, until the window loop takes them."""

    def __init__(self) -> None:
        self.wanted: dict[str, int] | None = None
        """Component -> executors, for the components that change (None: nothing asked)."""
        self.executors: list[Any] | None = None
        """The executor ids this driver's worker hosts under the wanted counts (None: all)."""

    @property
    def pending(self) -> bool:
        """Whether new executor counts wait for the window loop."""
        return self.wanted is not None

    def ask(self, plan: ExecutionPlan, runs_all: bool, counts: dict[str, int],
            executors: list[Any] | None, name: str) -> None:
        """Check new counts and keep them for the loop (see ``TopologyDriver.replan``).

        Raises:
            EngineError: ``REBALANCE_UNKNOWN_COMPONENT``, ``REBALANCE_INVALID`` or
                ``PARALLELISM_ABOVE_TASKS``; ``REBALANCE_NOT_IN_PLACE`` when other workers
                run some executors (``runs_all`` False) and ``executors`` does not say which
                ones this process runs under the new counts. Nothing changes then.
        """
        checked = check_counts(plan, counts, name)
        if executors is None and not runs_all:
            msg = (f"topology {name} runs executors in other workers, and the new "
                   f"counts {checked} came without the executors this worker hosts under "
                   "them; rebalance it through Nimbus (sparkstorm rebalance NAME -e "
                   "component=N), whose assignment says where every executor runs")
            raise EngineError(msg, code="REBALANCE_NOT_IN_PLACE")
        self.wanted = {**(self.wanted or {}), **checked}
        self.executors = executors

    def take(self) -> tuple[dict[str, int], list[Any] | None] | None:
        """The wanted counts and executors, now taken (None: nothing asked)."""
        wanted, self.wanted = self.wanted, None
        return None if wanted is None else (wanted, self.executors)


__all__ = ["PlanSwitch", "Replans", "plan_switch"]
