"""When the driver starts each window's job: one after another, or two at once.

The window loop holds one :class:`WindowScheduler` and calls :meth:`~WindowScheduler.step`
once per window:

- :class:`SequentialWindows`: run a window's job, absorb it, wait out the rest of the
  window's period (``topology.window.ms`` or the sizer's).
- :class:`OverlappingWindows` (``topology.window.overlap``, on by default): window
  ``w+1``'s job starts once window ``w``'s spout stage is done and the minimum window length
  has passed, so two windows run at once; results are still absorbed in window order, and
  every executor serves its windows in order (``engine.executor.window_turns``).

Both run windows through a :class:`WindowRunner`, which the driver is.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

from sparkstorm.config import conf_bool
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.spark.stage import StageInfo
from sparkstorm.engine.spark.window_job import (
    FIRST_STAGE_POLL_SECONDS,
    WindowJob,
    first_stage_done,
    wait_for_job,
)
from sparkstorm.engine.wire.protocol import SkipRequest

logger = logging.getLogger(__name__)

STOP_POLL_SECONDS = 0.1
"""How often the driver, waiting out a period for a job to end, looks at a stop request."""
SKIP_TIMEOUT_SECONDS = 5.0
"""Bound on telling one executor that a window's job failed (``skip_failed``)."""


class WindowRunner(Protocol):
    """What a scheduler needs of the driver: start and absorb windows, and their pace."""

    stop_requested: threading.Event

    @property
    def pushes_verdicts(self) -> bool:
        """Whether spouts hear a window's verdicts as soon as it is absorbed."""

    @property
    def period_seconds(self) -> float:
        """The minimum length of the next window."""

    def overlap_wait(self, elapsed: float) -> float:
        """How long to wait for a job ``elapsed`` seconds old that may end soon."""

    def start_window(self, overlapped: bool = False) -> WindowJob:
        """Submit the next window's job (``overlapped``: it waits for the one before)."""

    def end_window(self, job: WindowJob) -> None:
        """Wait for ``job``'s result and absorb it."""


class WindowScheduler(Protocol):
    """Runs the windows of the loop (see the module docstring)."""

    overlapping: bool
    overlapped_windows: int
    """Windows whose job started while the previous window's job still ran."""

    def step(self, runner: WindowRunner) -> None:
        """Run (or start) one window, and wait until the next may start."""

    def finish_in_flight(self, runner: WindowRunner) -> None:
        """Absorb the window still running, if any (before a drain, a rollback, a replan)."""

    def waited_for(self, window: int) -> bool:
        """Whether the window in flight was sent to wait for ``window`` (``after``)."""


class SequentialWindows:
    """One window at a time: its job, its absorb, the rest of its period."""

    overlapping = False
    overlapped_windows = 0

    def step(self, runner: WindowRunner) -> None:
        """Run one window and wait out the rest of its period."""
        started = time.monotonic()
        runner.end_window(runner.start_window())
        runner.stop_requested.wait(runner.period_seconds - (time.monotonic() - started))

    def finish_in_flight(self, runner: WindowRunner) -> None:
        """No window is in flight between steps."""

    def waited_for(self, window: int) -> bool:
        """No window waits for another."""
        return False


class OverlappingWindows:
    """Two windows in flight at once, absorbed in order."""

    overlapping = True

    def __init__(self) -> None:
        self.in_flight: WindowJob | None = None
        self.overlapped_windows = 0

    def step(self, runner: WindowRunner) -> None:
        """Submit the next window, absorb the one before it, wait until the next may start.

        The next may start once this one's spout stage is done (its executors are free for
        the next window's spout stage) and the minimum window length has passed. So at most
        two windows are in flight, and results are absorbed in window order. The spouts
        hear the verdicts of window ``w`` as soon as it is absorbed
        (``engine.driver.verdict_push``),
        which is when its job ends (also when that is while the next window waits for its
        start). Without the push they hear them in window ``w+2``, or in ``w+1`` when
        ``w``'s job had already ended (a light load: windows shorter than the period do not
        overlap), and a job the window sizer expects to end within half a period is waited
        for (``WindowSizer.overlap_wait``), so that its verdicts are not held back a window.
        """
        previous = self.in_flight
        if previous is not None and previous.future.done():
            self.finish_in_flight(runner)
            previous = None
        job = runner.start_window(overlapped=previous is not None)
        self.in_flight = job
        if previous is not None:
            self.overlapped_windows += not previous.future.done()
            runner.end_window(previous)
        stop = runner.stop_requested
        while not (stop.is_set() or job.future.done() or job.first_stage.is_set()
                   or first_stage_done(job.spout_tasks, job.spout_partitions)):
            job.first_stage.wait(FIRST_STAGE_POLL_SECONDS)  # woken by the stage's last task
        period_end = job.began + runner.period_seconds
        if runner.pushes_verdicts:
            # a job that ends before the next window may start is absorbed then: its spouts
            # hear its verdicts at once (engine.driver.verdict_push), not at the next window's start
            while not (stop.is_set() or job.future.done() or time.monotonic() >= period_end):
                wait_for_job(job, min(period_end - time.monotonic(), STOP_POLL_SECONDS))
            if job.future.done():
                self.finish_in_flight(runner)
        stop.wait(period_end - time.monotonic())
        if not runner.pushes_verdicts:
            # a job about to end is waited for: the next window then carries its verdicts
            wait_for_job(job, runner.overlap_wait(time.monotonic() - job.began))

    def finish_in_flight(self, runner: WindowRunner) -> None:
        """Absorb the window still running, if any."""
        job, self.in_flight = self.in_flight, None
        if job is not None:
            runner.end_window(job)

    def waited_for(self, window: int) -> bool:
        """Whether the window in flight was sent to wait for ``window``.

        Its executors would otherwise wait the whole bound (``WindowTurns``) for a window whose
        job died before reaching some of them. It is the next window's flag that counts, not
        the failed one's: a window started once the one before had ended has none, yet the
        next may already be running after it.
        """
        job = self.in_flight
        return job is not None and job.window != window and job.flags.after == window


def choose_scheduler(conf: dict[str, Any], acked_checkpoints: bool, slots: int,
                     stages: list[StageInfo], name: str) -> WindowScheduler:
    """Overlapping windows when ``topology.window.overlap`` is on and they can overlap.

    With checkpoints under checkpoint reliability too: every executor serves its windows
    in order, so its part taken in window ``w`` is at ``w``'s cut, and the driver's part
    keeps what window ``w+1`` carried past it (``engine.driver.cut_state``). Not with
    checkpoints under per-tuple acking (``acked_checkpoints``): window ``w+1`` would take
    the spouts' tuples while ``w`` stalls, their message timeouts would start, and their
    replays be counted twice, once by ``w+1`` (``tests/integration/spark/
    test_stall_timeouts.py``); a tuple under checkpoint reliability has no timeout.
    Not when Spark has no more task slots
    (``slots``) than the widest stage has partitions: window ``w+1``'s tasks, each waiting for
    its executor to finish window ``w``, could hold every slot that window ``w``'s tasks need
    (``engine.spark.session.overlap_master`` doubles a local master's slots).
    """
    if not conf_bool(conf, "topology.window.overlap") or acked_checkpoints:
        return SequentialWindows()
    widest = max(len(stage.gids) for stage in stages)
    if slots > widest:
        return OverlappingWindows()
    logger.warning("topology %s: windows do not overlap: Spark has %d task slots and the "
                   "widest stage %d partitions; give Spark more slots than that (for local "
                   "mode, spark.master local[N] with N > %d)", name, slots, widest, widest)
    return SequentialWindows()


def skip_failed(pool: ExecutorPool, window: int, name: str) -> None:
    """Tell every executor that ``window`` failed, so that the next one waits not for it."""
    for executor in pool.plan.executors:
        try:
            pool.call(executor.gid, SkipRequest(window), SKIP_TIMEOUT_SECONDS)
        except Exception as exc:  # noqa: BLE001 - its next window waits bounded instead
            logger.warning("topology %s: executor %d did not hear that window %d failed: %s",
                           name, executor.gid, window, exc)


__all__ = ["SKIP_TIMEOUT_SECONDS", "STOP_POLL_SECONDS", "OverlappingWindows",
           "SequentialWindows", "WindowRunner", "WindowScheduler", "choose_scheduler",
           "skip_failed"]
