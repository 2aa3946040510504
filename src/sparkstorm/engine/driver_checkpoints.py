"""The driver's checkpoints and rollbacks (``topology.checkpoint.windows``).

At a window boundary the executors write their parts of a checkpoint and the driver the
engine's (acker ledger, verdicts, cycle deliveries); it commits the checkpoint once every
part is durable (``engine.checkpointing``). When an executor restarts, is lost or a window's
job fails for good, the whole topology rolls back to the last committed checkpoint before
its next window. Mixed into ``engine.driver.TopologyDriver``; without checkpoints every
method here does nothing.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from sparkstorm.checkpoint import CheckpointStore, checkpoint_root
from sparkstorm.config import conf_float, conf_int
from sparkstorm.engine.acking import Acker, Verdicts
from sparkstorm.engine.checkpointing import CheckpointCoordinator, EngineState, part_info
from sparkstorm.engine.executor_checkpoint import part_name
from sparkstorm.engine.messages import WindowMeta
from sparkstorm.engine.plan import ExecutionPlan
from sparkstorm.engine.pool import ExecutorPool
from sparkstorm.engine.protocol import WindowFlags
from sparkstorm.engine.replan import PartLayouts
from sparkstorm.engine.rollback_calls import restore_executor
from sparkstorm.engine.topology_stats import TopologyStats

logger = logging.getLogger(__name__)


class DriverCheckpoints:
    """Checkpoints at window boundaries and rollbacks to them (mixed into the driver)."""

    name: str
    conf: dict[str, Any]
    plan: ExecutionPlan
    pool: ExecutorPool
    acker: Acker
    stats: TopologyStats
    checkpoint_id: str
    checkpoints: CheckpointCoordinator | None
    part_layouts: PartLayouts
    window: int
    _verdicts: Verdicts
    _deliveries: dict[int, list[bytes]]
    _fail_all: bool
    _needs_rollback: bool
    _seen_restarts: int

    def _coordinator(self) -> CheckpointCoordinator | None:
        every = conf_int(self.conf, "topology.checkpoint.windows")
        if every <= 0:
            return None
        store = CheckpointStore(checkpoint_root(self.conf), self.checkpoint_id)
        return CheckpointCoordinator(every, store, [part_name(e.gid)
                                                    for e in self.plan.executors])

    def _window_flags(self, window: int) -> WindowFlags:
        """What every executor's request of ``window`` carries about checkpoints."""
        if self.checkpoints is None:
            return WindowFlags()
        # the commit is announced first: executors commit it before taking the next part
        committed = self.checkpoints.take_announcement()
        return WindowFlags(checkpoint=self.checkpoints.due(window), committed=committed)

    def _take_checkpoint(self, window: int) -> None:
        """Write the engine's part of checkpoint ``window`` (the executors took theirs)."""
        assert self.checkpoints is not None
        state = EngineState.of(self.acker, self._verdicts, self._deliveries)
        self.part_layouts.taken(window, self.plan)
        try:
            self.checkpoints.begin(window, state.encode())
        except Exception as exc:  # noqa: BLE001 - no checkpoint this time; the next may do
            logger.error("topology %s: checkpoint %d not taken: %s", self.name, window, exc)

    def _parts_arrived(self, metas: list[WindowMeta]) -> None:
        """Note the executors' durable parts; commit what is complete."""
        checkpoints = self.checkpoints
        if checkpoints is None:
            return
        for meta in metas:
            for wire in meta.parts:
                checkpoints.arrived(*part_info(wire))
        try:
            committed = checkpoints.commit_ready()
        except Exception as exc:  # noqa: BLE001 - an unwritable store: said, and retried
            logger.error("topology %s: checkpoint not committed: %s", self.name, exc)
            return
        if committed is not None:
            self.part_layouts.forget_before(committed)
            self.stats.committed_window = committed
            self.stats.checkpoint_ms = checkpoints.last_commit_ms
            logger.info("topology %s: checkpoint %d committed", self.name, committed)

    def _rollback_due(self) -> bool:
        """Whether the topology must roll back before its next window.

        It must when an executor restarted (its tasks' state is gone), was lost, or a window's
        job failed.
        """
        if self.checkpoints is None:
            return False
        return self._needs_rollback or self.pool.restarts != self._seen_restarts

    def _roll_back(self) -> bool:
        """Roll every executor and the engine back to the newest committed checkpoint.

        Returns:
            False when an executor could not restore (tried again before the next window).
        """
        assert self.checkpoints is not None
        self._needs_rollback = True
        restarts = self.pool.restarts
        target = self.checkpoints.rollback_target()
        timeout = conf_float(self.conf, "topology.executor.start.timeout.secs")
        resume = self.window if target is None else max(self.window, target + 1)
        for executor in self.plan.executors:
            try:
                restore_executor(partial(self.pool.endpoints.__getitem__, executor.gid),
                                 self.pool.token, target, timeout, resume=resume,
                                 parts=self.part_layouts.parts_for(target, executor.tasks))
            except Exception as exc:  # noqa: BLE001 - it restarts; the rollback is retried
                logger.error("topology %s: executor %d could not restore checkpoint %s: %s",
                             self.name, executor.gid, target, exc)
                return False
        state = EngineState() if target is None else self.checkpoints.engine_state(target)
        state.restore_ledger(self.acker)
        deliveries = self.part_layouts.deliveries(target, state.deliveries, self.plan)
        self._verdicts, self._deliveries, self._fail_all = state.verdicts, deliveries, False
        if target is not None:
            self.window = max(self.window, target + 1)
        self._seen_restarts, self._needs_rollback = restarts, False
        self.stats.committed_window = target
        self.stats.rollbacks += 1
        logger.warning("topology %s: rolled back to checkpoint %s", self.name,
                       "start" if target is None else target)
        return True


__all__ = ["DriverCheckpoints"]
