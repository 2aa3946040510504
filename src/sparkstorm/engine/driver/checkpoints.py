"""The driver's checkpoints and rollbacks (``topology.checkpoint.windows``), as a strategy.

At a window boundary the executors write their parts of a checkpoint and the driver the
engine's (acker ledger, verdicts, cycle deliveries); a checkpoint commits once every part is
durable (``engine.driver.checkpoint_coordinator``). When an executor restarts, is lost or a
window's job
fails for good, the whole topology rolls back to the last committed checkpoint before its
next window. The window loop holds one :class:`Checkpointing`: :class:`WindowCheckpoints`
when checkpoints are on, :class:`NoCheckpoints` (which does nothing and never rolls back)
when they are off, so the loop asks without testing which.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from sparkstorm.checkpoint import CheckpointStore, checkpoint_root
from sparkstorm.config import conf_bool, conf_float, conf_int, conf_str
from sparkstorm.config.reliability import checkpoint_every
from sparkstorm.engine.driver.acker import Acker, Verdicts
from sparkstorm.engine.driver.checkpoint_coordinator import (
    CheckpointCoordinator,
    EngineState,
    part_info,
)
from sparkstorm.engine.driver.rollback_calls import restore_executor
from sparkstorm.engine.executor.checkpoint_part import part_name
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import PartLayouts
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import WindowFlags

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Committed:
    """A checkpoint that committed: its window and how long it took from being taken."""

    window: int
    milliseconds: float


@dataclass(frozen=True)
class Rollback:
    """What a rollback put back, for the window loop to take.

    Attributes:
        target: the checkpoint rolled back to (None: the topology's start).
        verdicts: the verdicts the spouts get with the next window.
        deliveries: the cycle deliveries of the next window, filed under today's executors.
        window: the next window's id (ids stay monotonic after a rollback).
        cause: what made the topology roll back, for operators (the UI's troubles).
    """

    target: int | None
    verdicts: Verdicts
    deliveries: dict[int, list[bytes]]
    window: int
    cause: str = ""


class Checkpointing(Protocol):
    """What the window loop asks of checkpoints (see the module docstring)."""

    enabled: bool
    """Whether checkpoints are on (verdicts are then not pushed: a checkpoint keeps them)."""

    def flags(self, window: int) -> WindowFlags:
        """What every executor's request of ``window`` carries about checkpoints."""

    def take(self, window: int, state: EngineState, plan: ExecutionPlan) -> None:
        """Write the engine's part of checkpoint ``window`` (the executors took theirs)."""

    def abandon(self, window: int) -> None:
        """``window`` was to take a checkpoint but ended without (failed, or rolled back)."""

    def parts_arrived(self, metas: list[WindowMeta]) -> Committed | None:
        """Note the executors' durable parts; the checkpoint committed now, if any."""

    def request_rollback(self, cause: str = "") -> bool:
        """Roll back before the next window (an executor lost, a job failed for good).

        ``cause`` says why, for operators.

        Returns:
            Whether a rollback will put the topology back (else its trees must fail).
        """

    def rollback_due(self) -> bool:
        """Whether the topology must roll back before its next window."""

    def roll_back(self, acker: Acker, window: int) -> Rollback | None:
        """Restore every executor and ``acker``; None when an executor could not restore."""

    def replanned(self, plan: ExecutionPlan) -> None:
        """The executors were regrouped into ``plan``: parts and a rollback follow it."""

    def take_next(self) -> None:
        """Take a checkpoint at the next window that can (the last one, at a drain)."""

    def committed(self) -> int | None:
        """The window of the newest committed checkpoint (None: none yet)."""

    def close(self, one_off: bool) -> None:
        """The topology stops; a one-off run's checkpoints are removed (nobody resumes)."""


class NoCheckpoints:
    """Checkpoints off: nothing is taken, nothing rolls back."""

    enabled = False

    def flags(self, window: int) -> WindowFlags:
        """No checkpoint flags."""
        return WindowFlags()

    def take(self, window: int, state: EngineState, plan: ExecutionPlan) -> None:
        """Nothing to take."""

    def abandon(self, window: int) -> None:
        """Nothing was asked."""

    def parts_arrived(self, metas: list[WindowMeta]) -> Committed | None:
        """Nothing commits."""
        return None

    def request_rollback(self, cause: str = "") -> bool:
        """Nothing to roll back to: the trees a failure touched fail and replay instead."""
        return False

    def rollback_due(self) -> bool:
        """Never."""
        return False

    def roll_back(self, acker: Acker, window: int) -> Rollback | None:
        """Never called (:meth:`rollback_due` is False)."""
        return None

    def replanned(self, plan: ExecutionPlan) -> None:
        """Nothing follows."""

    def take_next(self) -> None:
        """Nothing to take."""

    def committed(self) -> int | None:
        """Never any."""
        return None

    def close(self, one_off: bool) -> None:
        """Nothing to remove."""


class WindowCheckpoints:
    """Checkpoints every ``topology.checkpoint.windows`` windows, and rollbacks to them.

    Args:
    coordinator: takes, commits and finds checkpoints (``engine.driver.checkpoint_coordinator``).
    pool: the executors to restore on a rollback, whose restarts call for one.
    conf: the topology's conf (``topology.executor.start.timeout.secs``).
    name: the topology's name, for the log.
    resume: a driver restarted on a cluster resumes from the committed checkpoint.
    """

    enabled = True

    def __init__(self, coordinator: CheckpointCoordinator, pool: ExecutorPool,
                 conf: dict[str, Any], name: str, *, resume: bool) -> None:
        self.coordinator = coordinator
        self.store: CheckpointStore = coordinator.store
        self.pool = pool
        self.conf = conf
        self.name = name
        self.part_layouts = PartLayouts()
        """Which executor held each task at each checkpoint taken (``engine.plan.regroup``)."""
        self._needs_rollback = resume
        self._cause = "the driver started again and resumed from its committed checkpoint"
        self._seen_restarts = 0

    @classmethod
    def from_conf(cls, conf: dict[str, Any], plan: ExecutionPlan, checkpoint_id: str,
                  pool_of: Any, name: str) -> Checkpointing:
        """Checkpoints as ``topology.checkpoint.windows`` says (0: :class:`NoCheckpoints`).

        ``pool_of`` makes the executor pool once it is known whether checkpoints are on
        (an argument, so the pool's executors know where parts go).
        """
        every = checkpoint_every(conf)
        if every <= 0:
            pool_of(None)
            return NoCheckpoints()
        store = CheckpointStore(checkpoint_root(conf), checkpoint_id)
        coordinator = CheckpointCoordinator(
            every, store, [part_name(e.gid) for e in plan.executors],
            keep=conf_int(conf, "topology.checkpoint.keep"),
            start_empty=conf_bool(conf, "topology.checkpoint.start.empty"),
            outside_state=outside_state(conf))
        # a committed checkpoint, usable or not: the first rollback finds which (or stops
        # the topology with CHECKPOINT_UNUSABLE when none is)
        return cls(coordinator, pool_of(checkpoint_id), conf, name,
                   resume=bool(store.committed_windows()))

    def flags(self, window: int) -> WindowFlags:
        """Whether ``window`` takes a part; the commit to announce first, if any.

        The commit is announced first: executors commit it before taking the next part.
        """
        committed = self.coordinator.take_announcement()
        checkpoint = self.coordinator.due(window)
        if checkpoint:  # none in the next window while this one runs (windows overlap)
            self.coordinator.flagged(window)
        return WindowFlags(checkpoint=checkpoint, committed=committed)

    def take(self, window: int, state: EngineState, plan: ExecutionPlan) -> None:
        """Write the engine's part of checkpoint ``window`` (the executors took theirs)."""
        self.part_layouts.taken(window, plan)
        try:
            self.coordinator.begin(window, state.encode())
        except Exception as exc:  # noqa: BLE001 - no checkpoint this time; the next may do
            self.coordinator.abandon(window)
            logger.error("topology %s: checkpoint %d not taken: %s", self.name, window, exc)

    def abandon(self, window: int) -> None:
        """No checkpoint at ``window``: the next window may take one."""
        self.coordinator.abandon(window)

    def parts_arrived(self, metas: list[WindowMeta]) -> Committed | None:
        """Note the executors' durable parts; commit what is complete."""
        for meta in metas:
            for wire in meta.parts:
                self.coordinator.arrived(*part_info(wire))
        try:
            committed = self.coordinator.commit_ready()
        except Exception as exc:  # noqa: BLE001 - an unwritable store: said, and retried
            logger.error("topology %s: checkpoint not committed: %s", self.name, exc)
            return None
        if committed is None:
            return None
        self.part_layouts.forget_before(self.coordinator.kept[0])  # a fallback needs them
        logger.info("topology %s: checkpoint %d committed", self.name, committed)
        return Committed(committed, self.coordinator.last_commit_ms)

    def request_rollback(self, cause: str = "") -> bool:
        """Roll back before the next window."""
        self._needs_rollback, self._cause = True, cause or "requested"
        return True

    def rollback_due(self) -> bool:
        """When an executor restarted (its tasks' state is gone), was lost, or a job failed."""
        return self._needs_rollback or self.pool.restarts != self._seen_restarts

    def roll_back(self, acker: Acker, window: int) -> Rollback | None:
        """Roll every executor and ``acker`` back to the newest usable committed checkpoint.

        Returns:
            What the window loop takes back; None when an executor could not restore (the
            rollback is tried again before the next window).

        Raises:
            CheckpointError: ``CHECKPOINT_UNUSABLE`` when committed checkpoints exist but
                none is usable (and ``topology.checkpoint.start.empty`` is off): the window
                loop stops the topology with it.
        """
        self._needs_rollback = True
        restarts = self.pool.restarts
        target = self.coordinator.rollback_target()
        timeout = conf_float(self.conf, "topology.executor.start.timeout.secs")
        resume = window if target is None else max(window, target + 1)
        plan = self.pool.plan
        for executor in plan.executors:
            try:
                restore_executor(partial(self.pool.endpoints.__getitem__, executor.gid),
                                 self.pool.token, target, timeout, resume=resume,
                                 parts=self.part_layouts.parts_for(target, executor.tasks))
            except Exception as exc:  # noqa: BLE001 - it restarts; the rollback is retried
                logger.error("topology %s: executor %d could not restore checkpoint %s: %s",
                             self.name, executor.gid, target, exc)
                return None
        state = EngineState() if target is None else self.coordinator.engine_state(target)
        state.restore_ledger(acker)
        deliveries = self.part_layouts.deliveries(target, state.deliveries, plan)
        cause = (f"{restarts - self._seen_restarts} executor process(es) died and restarted"
                 if restarts != self._seen_restarts else self._cause)
        self._seen_restarts, self._needs_rollback = restarts, False
        logger.warning("topology %s: rolled back to checkpoint %s (%s)", self.name,
                       "start" if target is None else target, cause)
        return Rollback(target, state.verdicts, deliveries, resume, cause)

    def replanned(self, plan: ExecutionPlan) -> None:
        """Parts are written under the new executors; the topology rolls back under them."""
        self.coordinator.replace_parts([part_name(e.gid) for e in plan.executors])
        self._needs_rollback, self._cause = True, "rebalance -e regrouped the executors"

    def take_next(self) -> None:
        """Take a checkpoint at the next window that can (the last one, at a drain)."""
        self.coordinator.take_next()

    def committed(self) -> int | None:
        """The window of the newest committed checkpoint (None: none yet)."""
        return self.coordinator.committed

    def close(self, one_off: bool) -> None:
        """Remove a one-off run's checkpoints (nobody resumes it)."""
        if one_off:
            with contextlib.suppress(OSError):
                self.store.fs.rm(self.store.base, recursive=True)


def outside_state(conf: dict[str, Any]) -> str | None:
    """Where the topology keeps state outside its checkpoints, or None.

    A Redis state provider holds its stateful bolts' state at the newest committed
    checkpoint (``state.redis_state``): an older checkpoint cannot be restored under it.
    """
    from sparkstorm.state.providers import ALIASES

    provider = conf_str(conf, "topology.state.provider")
    if ALIASES.get(provider) == "memory":
        return None
    return f"{provider} (topology.state.provider)"


__all__ = ["Checkpointing", "Committed", "NoCheckpoints", "Rollback", "WindowCheckpoints"]
