"""The driver's overlapping windows (``topology.window.overlap``, on by default).

Window ``w+1``'s job starts once window ``w``'s spout stage is done and the minimum window
length has passed, so two windows run at once; results are still absorbed in window order,
and every executor serves its windows in order (``engine.window_turns``). Mixed into
``engine.driver.TopologyDriver``, whose window loop calls :meth:`_run_overlapped` once per
window when :meth:`_may_overlap` allowed it at start.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from sparkstorm.config import conf_bool
from sparkstorm.engine.checkpointing import CheckpointCoordinator
from sparkstorm.engine.plan import ExecutionPlan
from sparkstorm.engine.pool import ExecutorPool
from sparkstorm.engine.protocol import SkipRequest
from sparkstorm.engine.stage import StageInfo
from sparkstorm.engine.window_job import (
    FIRST_STAGE_POLL_SECONDS,
    WindowJob,
    first_stage_done,
    wait_for_job,
)
from sparkstorm.engine.window_size import WindowSizer

logger = logging.getLogger(__name__)

STOP_POLL_SECONDS = 0.1
"""How often the driver, waiting out a period for a job to end, looks at a stop request."""

SKIP_TIMEOUT_SECONDS = 5.0
"""Bound on telling one executor that a window's job failed (``_skip_failed``)."""


class OverlappingWindows:
    """Two windows in flight at once, absorbed in order (mixed into the driver)."""

    name: str
    conf: dict[str, Any]
    plan: ExecutionPlan
    pool: ExecutorPool
    checkpoints: CheckpointCoordinator | None
    window_size: WindowSizer
    stop_requested: threading.Event
    overlapped_windows: int
    _spark: Any
    _stages: list[StageInfo]
    _in_flight_job: WindowJob | None

    if TYPE_CHECKING:  # the driver's own, declared for the type checker only
        @property
        def pushes_verdicts(self) -> bool:
            """Whether spouts hear a window's verdicts right after it."""
        def _start_window(self, overlapped: bool = False) -> WindowJob: ...
        def _end_window(self, job: WindowJob) -> None: ...

    def _may_overlap(self) -> bool:
        """Whether this topology's windows overlap (``topology.window.overlap``).

        Not while checkpoints are on: a checkpoint at cut ``w`` would have to hold the
        verdicts and deliveries already riding window ``w+1``. Not when Spark has no more
        task slots than the widest stage has partitions: window ``w+1``'s tasks, each waiting
        for its executor to finish window ``w``, could hold every slot that window ``w``'s
        tasks need (``engine.session.overlap_master`` doubles a local master's slots).
        """
        if not conf_bool(self.conf, "topology.window.overlap") or self.checkpoints is not None:
            return False
        slots = int(self._spark.sparkContext.defaultParallelism)
        widest = max(len(stage.gids) for stage in self._stages)
        if slots > widest:
            return True
        logger.warning("topology %s: windows do not overlap: Spark has %d task slots and the "
                       "widest stage %d partitions; give Spark more slots than that (for "
                       "local mode, spark.master local[N] with N > %d)", self.name, slots,
                       widest, widest)
        return False

    def _run_overlapped(self) -> None:
        """Submit the next window, absorb the one before it, wait until the next may start.

        The next may start once this one's spout stage is done (its executors are free for
        the next window's spout stage) and the minimum window length has passed. So at most
        two windows are in flight, and results are absorbed in window order. The spouts
        hear the verdicts of window ``w`` as soon as it is absorbed (``engine.verdict_push``),
        which is when its job ends (also when that is while the next window waits for its
        start). Without the push they hear them in window ``w+2``, or in ``w+1`` when
        ``w``'s job had already ended (a light load: windows shorter than the period do not
        overlap), and a job the window sizer expects to end within half a period is waited
        for (``WindowSizer.overlap_wait``), so that its verdicts are not held back a window.
        """
        previous = self._in_flight_job
        if previous is not None and previous.future.done():
            self._finish_in_flight()
            previous = None
        job = self._start_window(overlapped=previous is not None)
        self._in_flight_job = job
        if previous is not None:
            self.overlapped_windows += not previous.future.done()
            self._end_window(previous)
        while not (self.stop_requested.is_set() or job.future.done()
                   or first_stage_done(job.spout_tasks, job.spout_partitions)):
            job.first_stage.wait(FIRST_STAGE_POLL_SECONDS)  # woken by the stage's last task
        period_end = job.began + self.window_size.period_seconds
        if self.pushes_verdicts:
            # a job that ends before the next window may start is absorbed then: its spouts
            # hear its verdicts at once (engine.verdict_push), not at the next window's start
            while not (self.stop_requested.is_set() or job.future.done()
                       or time.monotonic() >= period_end):
                wait_for_job(job, min(period_end - time.monotonic(), STOP_POLL_SECONDS))
            if job.future.done():
                self._finish_in_flight()
        self.stop_requested.wait(period_end - time.monotonic())
        if not self.pushes_verdicts:
            # a job about to end is waited for: the next window then carries its verdicts
            wait_for_job(job, self.window_size.overlap_wait(time.monotonic() - job.began))

    def _finish_in_flight(self) -> None:
        """Absorb the window still running, if any (before a drain or a rollback)."""
        job, self._in_flight_job = self._in_flight_job, None
        if job is not None:
            self._end_window(job)

    def _waited_for(self, window: int) -> bool:
        """Whether the window in flight was sent to wait for ``window`` (``"after"``).

        Its executors would otherwise wait the whole bound (``WindowTurns``) for a window whose
        job died before reaching some of them. It is the next window's flag that counts, not
        the failed one's: a window started once the one before had ended has none, yet the
        next may already be running after it.
        """
        job = self._in_flight_job
        return job is not None and job.window != window and job.flags.after == window

    def _skip_failed(self, window: int) -> None:
        """Tell every executor that ``window`` failed, so that the next one waits not for it."""
        for executor in self.plan.executors:
            try:
                self.pool.call(executor.gid, SkipRequest(window), SKIP_TIMEOUT_SECONDS)
            except Exception as exc:  # noqa: BLE001 - its next window waits bounded instead
                logger.warning("topology %s: executor %d did not hear that window %d failed: "
                               "%s", self.name, executor.gid, window, exc)


__all__ = ["SKIP_TIMEOUT_SECONDS", "STOP_POLL_SECONDS", "OverlappingWindows"]
