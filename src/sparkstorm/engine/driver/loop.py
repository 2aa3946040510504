"""The driver: a topology's Spark driver, running one Spark job per window over the DAG.

Window ``w`` is one job: the spout stage (one partition per spout executor, its input the
acker's verdicts from window ``w-1``), then one stage per DAG level (one partition per bolt
executor), each fed through Spark's shuffle with an identity partitioner on the target
executor. The job's result (each executor's :class:`~sparkstorm.engine.wire.messages.WindowMeta`:
acker traffic, statistics, errors; deliveries on edges that close a cycle) is collected here
and feeds window ``w+1``; the verdicts are also sent to the spout executors as soon as the
result is absorbed (``engine.driver.verdict_push``), so a spout hears them before window ``w+1``'s
spout stage when it can. The driver also hosts the acker and the executor pool.

The loop owns its state and composes three parts, each chosen once:

- when windows start (:mod:`~sparkstorm.engine.driver.scheduling`): one after another, or,
  with ``topology.window.overlap`` (the default), window ``w+1``'s job once window ``w``'s
  spout stage is done, results still absorbed in window order;
- checkpoints (:mod:`~sparkstorm.engine.driver.checkpoints`): with
  ``topology.checkpoint.windows`` set, taken at window boundaries, and the whole topology
  rolled back to the last committed one when an executor restarts, is lost or a window's
  job fails for good; without (a null object), a failure fails the trees it touched and the
  spouts replay them (at least once);
- ``rebalance -e`` in place (:mod:`~sparkstorm.engine.driver.replans`): new executor counts
  taken between windows, as a switch the loop applies.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Any

from sparkstorm.config import conf_bool, conf_float, conf_int
from sparkstorm.config.reliability import CHECKPOINT, reliability_mode
from sparkstorm.engine.driver.acker import Acker, Verdicts
from sparkstorm.engine.driver.checkpoints import Checkpointing, WindowCheckpoints
from sparkstorm.engine.driver.cut_state import CarriedAhead
from sparkstorm.engine.driver.endpoint_lookup import EndpointLookup
from sparkstorm.engine.driver.errors import ErrorReports
from sparkstorm.engine.driver.hand_over_wait import watch_hand_over
from sparkstorm.engine.driver.healing import renew_session, watchdog_for
from sparkstorm.engine.driver.replans import PlanSwitch, Replans, plan_switch
from sparkstorm.engine.driver.rollback_backoff import RollbackBackoff
from sparkstorm.engine.driver.rollback_calls import await_window
from sparkstorm.engine.driver.scheduling import (
    SequentialWindows,
    WindowScheduler,
    choose_scheduler,
    skip_failed,
)
from sparkstorm.engine.driver.stages import stage_infos
from sparkstorm.engine.driver.ticks import TickSchedule
from sparkstorm.engine.driver.topology_stats import ExecutorRange, TopologyStats, WindowRecord
from sparkstorm.engine.driver.verdict_push import (
    push_verdicts,
    push_window_end,
    verdict_control,
)
from sparkstorm.engine.driver.watchdog import Watchdog
from sparkstorm.engine.driver.window_counts import window_counters
from sparkstorm.engine.driver.window_sizer import WindowSizer
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.executor.stacks import executor_stacks, own_stacks
from sparkstorm.engine.executor.workdirs import new_workdir
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import executor_counts
from sparkstorm.engine.spark.locality import CallLocality
from sparkstorm.engine.spark.placement import Placement
from sparkstorm.engine.spark.session import cache_jvm_lookups, get_spark
from sparkstorm.engine.spark.stage import DRIVER, StageInfo
from sparkstorm.engine.spark.window_job import (
    WINDOW_JOB_TAG,
    WindowJob,
    counting_tasks,
    release_on_end,
    spout_stage_counter,
    submit_window_job,
)
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.messages import ComponentError, SpoutControl, WindowMeta
from sparkstorm.engine.wire.stats import ComponentCounters
from sparkstorm.errors import EngineError
from sparkstorm.topology.spec import TopologySpec

logger = logging.getLogger(__name__)


MOVED_WARN_SECONDS = 30.0
"""How often the driver says it still waits for moved executors' new endpoints."""
MISSING_WARN_SECONDS = 30.0
"""How often the driver says it still waits for other workers to follow a replan."""
HEARTBEAT_NOW_SECONDS = 0.25
"""While it waits for them, how often the driver's worker heartbeats (not once a period)."""


class TopologyDriver:
    """Runs one topology: executor processes, the window loop and its statistics.

    Args:
        name: the topology's name.
        spec: what it runs.
        conf: its effective conf.
        topology_id: the id its checkpoints are kept under, so that a restarted driver
            resumes from them (a cluster worker passes Nimbus's topology id); None: a
            one-off run whose checkpoints are removed when it stops.
        hosted: the executors this driver's process runs (None: all of them); the others
            run in other workers, whose endpoints come through :meth:`set_remote_endpoints`.
        token: the topology's token, shared with those workers (None: a new one).
    """

    _pushed = False
    """Whether the last window's verdict push carried acks or fails (see ``_drain``)."""
    _ended: int | None = None
    """Checkpoint reliability: the newest window absorbed, whose tuples' trees ended with
    it (``SpoutControl.ended``)."""
    completed_windows = 0
    """Windows whose Spark job succeeded (what the watchdog watches)."""
    watchdog: Watchdog | None = None
    """Notices windows not completing and tries remedies (``engine.driver.watchdog``)."""
    _renew_wanted: str | None = None
    """Why the watchdog wants a new Spark application (``engine.driver.healing``)."""
    _given_up: EngineError | None = None
    """The watchdog's last remedy: the loop stops with it."""

    @functools.cached_property
    def trees_end_with_windows(self) -> bool:
        """Whether a spout tuple's tree is done with its window (checkpoint reliability).

        Then the driver adds each window's time to the spouts' latencies.
        """
        return reliability_mode(self.conf) == CHECKPOINT

    def __init__(self, name: str, spec: TopologySpec, conf: dict[str, Any],
                 topology_id: str | None = None, *, hosted: set[int] | None = None,
                 token: str | None = None) -> None:
        self.name = name
        self.conf = conf
        self.plan = ExecutionPlan(spec, conf)
        self.workdir = new_workdir()
        self._one_off = topology_id is None
        self.checkpoint_id = topology_id or f"{name}-{time.time_ns()}"

        def pool_of(checkpoint_id: str | None) -> ExecutorPool:
            self.pool = ExecutorPool(self.plan, name, self.workdir, checkpoint_id,
                                     hosted=hosted, token=token)
            return self.pool
        self.checkpointing: Checkpointing = WindowCheckpoints.from_conf(
            conf, self.plan, self.checkpoint_id, pool_of, name)
        self.acker = Acker(self.plan.acker_tasks,
                           conf_float(conf, "topology.message.timeout.secs"))
        self.ticks = TickSchedule(self.plan)
        self.window = 0
        self.active = True
        self.window_size = WindowSizer.for_topology(self.plan, self.conf)
        self.window_seconds = self.window_size.period_seconds
        self.stats = TopologyStats(
            conf_int(conf, "topology.stats.window.count"),
            {e.gid: ExecutorRange(e.component, min(e.tasks), max(e.tasks))
             for e in self.plan.executors},
            self.window_seconds)
        self.stop_requested, self.stopped = threading.Event(), threading.Event()
        self.rollback_backoff = RollbackBackoff.from_conf(self.conf)
        self.failure: BaseException | None = None
        self._fail_all = False
        self._deliveries: dict[int, list[bytes]] = {}
        # the verdicts for the next window; what each window in flight carried (a
        # checkpoint at the cut before that window keeps it: engine.driver.cut_state)
        self._verdicts, self._carried = Verdicts(), CarriedAhead()
        self._thread: threading.Thread | None = None
        # four: with overlap, a window's job and the next one's run at once, each with a
        # thread that waits for its chained spout stage to hand over (hand_over_wait)
        self._job_threads = ThreadPoolExecutor(4, thread_name_prefix=f"window-{name}")
        self.scheduler: WindowScheduler = SequentialWindows()
        """When windows start (chosen at :meth:`start`, again after a replan)."""
        self._spark: Any = None
        self._owns_spark = False
        self.lookup: EndpointLookup | None = None
        """Where Spark tasks ask for a moved executor's address (when other workers run
        executors; started with the driver)."""
        self._stages = self._stage_infos()
        self._stages_version = self._endpoints_state()
        self.placement = self.new_placement(str(conf.get("spark.master") or "local"))
        """Where each window's Spark tasks should run (set again from the session at start)."""
        self._rehost_wanted: set[int] | None = None
        """Executors a rebalance wants this process to run (:meth:`rehost`)."""
        self._rehost_cancelled: set[int] | None = None
        """The rehost whose windows in flight were cancelled already."""
        self.replan_requests = Replans()
        """New executor counts the window loop takes before its next window."""
        self.heartbeat_now: Callable[[], object] | None = None
        """Sends the worker's next heartbeat now (set by the cluster worker): the other
        workers learn a new plan, and the driver their endpoints, a heartbeat period sooner."""
        self.failed_jobs = 0
        """Windows whose Spark job failed for good."""
        self.reserved_slots = 0
        """Spark task slots that windows cannot have: held for the topology's life by the
        tasks that host executor processes (``topology.executor.hosting: spark``)."""
        self.final_checkpoint = False
        """Whether the drain ends with a last committed checkpoint (with checkpoints on):
        an application that resumes from its checkpoints then starts where it stopped."""
        self.errors = ErrorReports(name, self.stats.last_errors)
        self.pool.on_startup_error = self.errors.startup  # reported now, not with a window

    @property
    def pushes_verdicts(self) -> bool:
        """Whether spouts hear a window's verdicts right after it (``driver.verdict_push``).

        Under checkpoint reliability there are none, but they hear that the window ended
        (``push_window_end``): so the scheduler absorbs a window as soon as its job ends.
        With checkpoints under acking, no: a checkpoint keeps the verdicts not heard yet.
        """
        return (conf_bool(self.conf, "topology.window.verdicts.push")
                and (self.trees_end_with_windows or not self.checkpointing.enabled))

    @property
    def overlapping(self) -> bool:
        """Whether windows overlap (``topology.window.overlap``, decided at start)."""
        return self.scheduler.overlapping

    @property
    def overlapped_windows(self) -> int:
        """Windows whose job started while the previous window's job still ran."""
        return self.scheduler.overlapped_windows

    @property
    def period_seconds(self) -> float:
        """The minimum length of the next window (the window sizer's)."""
        return self.window_size.period_seconds

    def overlap_wait(self, elapsed: float) -> float:
        """How long to wait for a job ``elapsed`` seconds old (``WindowSizer``)."""
        return self.window_size.overlap_wait(elapsed)

    def _choose_scheduler(self) -> None:
        """Overlapping windows where they can overlap (``scheduling.choose_scheduler``)."""
        slots = int(self._spark.sparkContext.defaultParallelism) - self.reserved_slots
        finishing = self.scheduler
        acked_checkpoints = self.checkpointing.enabled and not self.trees_end_with_windows
        self.scheduler = choose_scheduler(self.conf, acked_checkpoints, slots, self._stages,
                                          self.name)
        self.scheduler.overlapped_windows += finishing.overlapped_windows
        self.window_size.overlapping = self.scheduler.overlapping
        self.window_size.chained_overlap = self.scheduler.overlapping and (
            bool(self._stages[0].chained) or self.placement.fused)

    def _size_next_windows(self, started: float, job_seconds: float,
                           metas: list[WindowMeta]) -> None:
        """Tell the window sizer what the spout executors handed over to this window."""
        spouts = [m for m in metas if m.gid in self.window_size.spouts and not m.lost]
        self.window_size.observe(
            job_seconds, {m.gid: m.stats.buffered for m in spouts},
            {m.gid for m in spouts if m.stats.buffered >= m.stats.buffer_bound > 0}, started,
            {m.gid: m.stats.buffered_bytes for m in spouts}, finished=started + job_seconds)

    @property
    def reported_errors(self) -> deque[dict[str, Any]]:
        """Errors not yet taken by a reporter, oldest first (``ErrorReports.queued``)."""
        return self.errors.queued

    def stack_traces(self) -> str:
        """The driver's threads and every executor's, as text (Apex's stack trace request)."""
        parts = [f"=== driver (pid {os.getpid()}) ===\n{own_stacks()}"]
        pids = self.pool.pids()
        for gid, text in sorted(executor_stacks(pids, self.pool.sockets).items()):
            component = self.plan.executors[gid].component
            parts.append(f"=== executor {gid} ({component}, pid {pids[gid]}) ===\n{text}")
        return "\n".join(parts)

    @property
    def spark_ui_url(self) -> str | None:
        """The Spark UI of this topology's Spark application (None when disabled)."""
        sc = None if self._spark is None else self._spark.sparkContext
        if sc is None or sc._jsc is None:  # not started, or stopped (a new one is coming)
            return None
        return sc.uiWebUrl  # type: ignore[no-any-return]

    def _stage_infos(self) -> list[StageInfo]:
        return stage_infos(self.plan, self.conf, self.pool.endpoints, self.pool.token,
                           dict(self.pool.remote_pids),
                           self.lookup.address if self.lookup is not None else None)

    def _endpoints_state(self) -> tuple[int, tuple[tuple[int, int], ...]]:
        """What the stages hold of the endpoint map: rebuilt when it changes."""
        return self.pool.endpoints_version, tuple(sorted(self.pool.remote_pids.items()))

    def _start_lookup(self) -> None:
        """Answer the Spark tasks' "where is executor G now" when other workers run some."""
        if len(self.pool.sockets) < len(self.plan.executors):
            self.lookup = EndpointLookup(
                self.pool.host, self.pool.token, self.pool.where,
                (conf_float(self.conf, "topology.tcp.handshake.timeout.secs"),
                 conf_int(self.conf, "topology.tcp.max.connections")))
            self._stages = self._stage_infos()

    def _note_refreshed(self, window: int, gid: int, call: Any) -> None:
        """Log a call of window ``window`` that followed executor ``gid`` to a new address."""
        refreshed = call.refreshed if call is not None else None
        if refreshed:
            logger.warning("topology %s: window %d: executor %d was not at the window's "
                           "address; its call was retried at the refreshed one (%s)",
                           self.name, window, gid, ", ".join(refreshed))

    def new_placement(self, master: str) -> Placement:
        """Where windows run on ``master`` (one Spark task each on a local one, if fused)."""
        return Placement(master, conf_bool(self.conf, "topology.window.fuse"))

    # -- life cycle -------------------------------------------------------------------
    def start(self, spark: Any = None) -> None:
        """Start the executors and the window loop in a background thread."""
        if spark is None:
            spark, self._owns_spark = get_spark(self.conf, f"sparkstorm-{self.name}")
        self._spark = spark
        cache_jvm_lookups()  # each window's RDD asks the JVM for the same classes
        self.placement = self.new_placement(str(spark.sparkContext.master))
        try:
            self.pool.start()
            self._wait_for_endpoints()
            self._start_lookup()
        except BaseException:
            self._close()  # the pool stopped its executors; the folder and Spark go too
            raise
        self._choose_scheduler()
        self._thread = threading.Thread(target=self._loop, name=f"driver-{self.name}",
                                        daemon=True)
        self._thread.start()
        self.watchdog = watchdog_for(self)
        if self.watchdog is not None:
            self.stats.watchdog = self.watchdog
            self.watchdog.start()

    def request_new_session(self, reason: str) -> bool:
        """Have the loop start a new Spark application between windows (the watchdog).

        The loop cancels the window it waits for itself (``_job_result``): no Spark call from
        the watchdog's thread while the loop stops the application.
        """
        self._renew_wanted = reason
        return True

    def give_up(self, reason: str) -> None:
        """Stop the driver with ``TOPOLOGY_STALLED`` (the watchdog's last remedy)."""
        self._given_up = EngineError(
            f"topology {self.name}: {reason} after the watchdog's remedies; stopping the "
            "driver so that its worker starts again (topology.watchdog.stall.secs)",
            code="TOPOLOGY_STALLED")

    def set_remote_endpoints(self, reported: dict[int, tuple[Endpoint, int]],
                             tags: dict[int, str] | None = None) -> None:
        """Where other workers' executors answer now, and their pids (``tags``: plans).

        The stages of the next window call them there; a window already running finds a
        moved executor through the endpoint lookup (connection refresh, ``engine.spark.stage``).
        """
        self.pool.set_remote(reported, tags)

    def rehost(self, hosted: set[int]) -> None:
        """Run exactly the executors ``hosted`` in this process from the next window on.

        A rebalance that keeps this driver's worker moved executors to or from it. The
        window loop applies it between windows (:meth:`_follow_rehost`); the executors
        that stay, spouts included, keep running.

        Executors that arrive here come from a worker the rebalance took away: the windows
        in flight that call them at their old address would wait for it until
        ``topology.executor.start.timeout.secs``, on every retry of their Spark tasks. So
        those windows are cancelled now: they fail, and their trees replay (Storm's
        meaning of tuples in flight to an executor that went away).
        """
        wanted = set(hosted)
        self._rehost_wanted = wanted
        arriving = wanted - set(self.pool.sockets)
        # the worker repeats the order at each heartbeat until the loop applied it: once
        if arriving and self._spark is not None and wanted != self._rehost_cancelled:
            self._rehost_cancelled = wanted
            logger.warning("topology %s: executors %s move here from a worker that is going "
                           "away; cancelling the windows in flight (their trees replay)",
                           self.name, sorted(arriving))
            self._spark.sparkContext.cancelJobsWithTag(WINDOW_JOB_TAG)

    def cancel_windows_in_flight(self, reason: str) -> None:
        """End the Spark jobs of the windows in flight now: they fail, their trees replay.

        For a host that went silent: its Spark executor runs tasks of those windows that
        Spark would wait for until its own network timeout (120 s) declares it lost, and the
        next windows would wait behind them. Only windows' jobs are cancelled (their tag).
        """
        if self._spark is None:
            return
        logger.warning("topology %s: %s; cancelling the windows in flight (their trees "
                       "replay)", self.name, reason)
        self._spark.sparkContext.cancelJobsWithTag(WINDOW_JOB_TAG)

    def _follow_rehost(self) -> None:
        """Apply a wanted rehost: end the window in flight, move executors, await them.

        Called by the window loop before it starts a window. The executors that left are
        closed here and started by their new worker; the next window waits until that
        worker reported where they answer (through Nimbus's heartbeat answers).
        """
        wanted, self._rehost_wanted = self._rehost_wanted, None
        if wanted is None or wanted == set(self.pool.sockets):
            return
        self.scheduler.finish_in_flight(self)
        self.pool.rehost(wanted)
        waited, warned = time.monotonic(), 0.0
        while self.pool.missing() and not self.stop_requested.wait(0.1):
            if time.monotonic() - waited - warned > MOVED_WARN_SECONDS:
                warned = time.monotonic() - waited
                logger.warning("topology %s: executors %s moved to other workers and have "
                               "not reported where they answer for %.0f s", self.name,
                               self.pool.missing(), warned)

    def _wait_for_endpoints(self) -> None:
        """Wait until every executor run by another worker has reported where it answers.

        Raises:
            EngineError: ``EXECUTOR_START_FAILED`` when some did not within
                ``topology.executor.start.timeout.secs``.
        """
        deadline = time.monotonic() + conf_float(self.conf,
                                                 "topology.executor.start.timeout.secs")
        while self.pool.missing():
            if time.monotonic() > deadline:
                missing = ", ".join(f"{gid} ({self.plan.executors[gid].component})"
                                    for gid in self.pool.missing())
                msg = (f"topology {self.name}: executors {missing} run in other workers and "
                       "did not report where they answer within "
                       "topology.executor.start.timeout.secs; see those workers' logs")
                raise EngineError(msg, code="EXECUTOR_START_FAILED")
            self.stop_requested.wait(0.1)

    def _loop(self) -> None:
        try:
            while not self.stop_requested.is_set():
                if self._given_up is not None:
                    raise self._given_up
                if self._renew_wanted is not None:
                    reason, self._renew_wanted = self._renew_wanted, None
                    renew_session(self, reason)
                if self.checkpointing.rollback_due() and not self._roll_back():
                    self.stop_requested.wait(1.0)  # an executor could not restore: again
                    continue
                self._follow_rehost()
                self._follow_replan()
                if self.checkpointing.rollback_due():  # a replan with checkpoints rolls back
                    continue
                self.scheduler.step(self)
            self.scheduler.finish_in_flight(self)
            self._drain()
        except BaseException as exc:
            self.failure = exc
            logger.exception("topology %s: window loop stopped", self.name)
        finally:
            self._close()

    def _drain(self) -> None:
        """Clean shutdown: deactivate spouts, let in-flight trees finish up to a bound."""
        self.active = False
        deadline = time.monotonic() + conf_float(self.conf, "topology.shutdown.timeout.secs")
        self.run_window()
        while self._in_flight() and time.monotonic() < deadline:
            self.run_window()
        if self.pushes_verdicts and not self.trees_end_with_windows:
            # the spouts acked the last window's trees when its verdicts were pushed: one
            # more window brings their counts to the statistics (none would follow); again
            # while that window completed trees too (a shell spout's emits that came in
            # after it was deactivated), whose verdicts were pushed after it
            self.run_window()
            while self._pushed and time.monotonic() < deadline:
                self.run_window()
        if self.final_checkpoint and self.checkpointing.enabled:
            self._last_checkpoint(deadline)

    def _last_checkpoint(self, deadline: float) -> None:
        """Take a checkpoint of the drained topology and commit it, up to ``deadline``.

        A window takes it (``take_next``: once the one in flight has committed), the
        executors' parts arrive with the windows after it, and one more window announces
        the commit to them (stateful bolts commit their state then).
        """
        cut = self.window
        self.checkpointing.take_next()
        while (self.checkpointing.committed() or -1) < cut and time.monotonic() < deadline:
            self.run_window()
        committed = self.checkpointing.committed()
        if committed is None or committed < cut:
            logger.warning("topology %s: no last checkpoint committed within "
                           "topology.shutdown.timeout.secs; a restart resumes from %s",
                           self.name, "the start" if committed is None else committed)
            return
        self.run_window()
        logger.info("topology %s: last checkpoint %d committed", self.name, committed)

    def _in_flight(self) -> bool:
        """Whether trees are open or verdicts and deliveries still wait for a window."""
        verdicts = self._verdicts
        return bool(self.acker.open_trees or self._deliveries or verdicts.ack or verdicts.fail
                    or verdicts.reset)

    def _close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.stop()
        self._job_threads.shutdown(wait=False, cancel_futures=True)
        if self.lookup is not None:
            self.lookup.close()
        self.pool.stop()
        if self._owns_spark and self._spark is not None:
            self._spark.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.checkpointing.close(self._one_off)
        self.stopped.set()

    def stop(self, timeout: float | None = None) -> None:
        """Shut down cleanly and wait until every process is gone.

        A driver that was never started releases what it made (its folder, a one-off
        run's checkpoint folder).
        """
        self.stop_requested.set()
        if self._thread is not None:
            self._thread.join(timeout)
        elif not self.stopped.is_set():
            self._close()

    def set_active(self, active: bool) -> None:
        """Activate or deactivate the spouts from the next window on."""
        self.active = active

    # -- one window -------------------------------------------------------------------
    def run_window(self) -> None:
        """Run window ``self.window`` as one Spark job and absorb its result."""
        self.end_window(self.start_window())

    def start_window(self, overlapped: bool = False) -> WindowJob:
        """Submit window ``self.window``'s Spark job; it runs in one of the job threads.

        Args:
            overlapped: the previous window may still run: every request names it
                (``after``), so that each executor serves the two in order.
        """
        window, started = self.window, time.time()
        self.window += 1
        sc = self._spark.sparkContext
        group = f"{self.name}-{window}"
        if self._stages_version != self._endpoints_state():  # an executor moved
            self._stages_version = self._endpoints_state()
            self._stages = self._stage_infos()
        flags = self.checkpointing.flags(window)
        if overlapped:
            flags = replace(flags, after=window - 1)
        first = self._stages[0]
        tasks = self.placement.spout_tasks(self._stages)
        spout_tasks, first_stage = spout_stage_counter(sc, tasks)
        rdd = self.placement.window_rdd(sc, self._stages, self._spout_payloads(first, window),
                                        window, flags, partial(_counted, spout_tasks))
        future = submit_window_job(self._job_threads, sc, rdd, group,
                                   f"sparkstorm {self.name} window {window}")
        release_on_end(future, spout_tasks, first_stage)
        if self.scheduler.overlapping and (first.chained or self.placement.fused):
            # its tasks end with their chains (or the window): the spouts say when they
            # handed over
            watch_hand_over(self._job_threads, self.pool.call, first.gids, window,
                            first_stage, first.answer_timeout, future)
        return WindowJob(window, started, time.monotonic(), group, flags, spout_tasks,
                         tasks, future, first_stage)

    def end_window(self, job: WindowJob) -> None:
        """Wait for ``job``'s result and absorb it (windows end in the order they started)."""
        window = job.window
        try:
            results, finished = self._job_result(job)
        except Exception as exc:  # noqa: BLE001 - a failed job fails its trees, we go on
            self._job_failed(window, exc)
            if self.scheduler.waited_for(window):
                skip_failed(self.pool, window, self.name)
            results, finished = [], time.time()
        # the window's Spark job(s), so that the UI links each chart point to its job
        sc = self._spark.sparkContext
        jobs = [int(j) for j in sc.statusTracker().getJobIdsForGroup(job.group)]
        self._absorb(window, job.started, results, jobs, finished)
        self.completed_windows += bool(results)
        self._carried.ended(window)
        # not when an executor restarted meanwhile: it answered this window from scratch
        if job.flags.checkpoint and results and not self.checkpointing.rollback_due():
            self.checkpointing.take(window, self._carried.state_at_cut(
                window, self.acker, self._verdicts, self._deliveries), self.plan)
        elif job.flags.checkpoint:
            self.checkpointing.abandon(window)
        if self.trees_end_with_windows:  # its tuples are in flight no more
            self._ended = window
            if self.pushes_verdicts:
                push_window_end(self.pool.call, self._stages[0].gids, window)
        elif self.pushes_verdicts:  # now, not with the next window (engine.driver.verdict_push)
            verdicts = self._verdicts
            self._pushed = bool(verdicts.ack or verdicts.fail)
            self._verdicts = push_verdicts(self.pool.call, self.plan, self._stages[0].gids,
                                           verdicts)

    def _job_result(self, job: WindowJob) -> tuple[list[Any], float]:
        """``job``'s records and end time; with checkpoints, cancelled once a rollback is due.

        Its result would be thrown away by the rollback, and its tasks may still be calling
        an executor of a lost host (``engine.driver.rollback_calls``). Without checkpoints
        such tasks find the executor's new address themselves (connection refresh,
        ``engine.spark.stage``).
        """
        def cancel() -> None:
            why = ("an executor's state is gone" if self._renew_wanted is None
                   and self._given_up is None else "the watchdog's remedy")
            logger.warning("topology %s: %s; cancelling window %d", self.name, why,
                           job.window)
            self._spark.sparkContext.cancelJobGroup(job.group)
        def doomed() -> bool:
            return (self.checkpointing.rollback_due() or self._renew_wanted is not None
                    or self._given_up is not None)
        return await_window(job.future, doomed, cancel)

    def _spout_payloads(self, stage: StageInfo, window: int
                        ) -> list[tuple[list[Any], list[tuple[int, bytes]]]]:
        """One item per spout partition of ``window``: its executor's control and records.

        The records are injected for later stages (cycle deliveries and ticks, spread over the
        partitions).
        """
        verdicts, self._verdicts = self._verdicts, Verdicts()
        if self.checkpointing.enabled:
            self._carried.carried(window, verdicts, self._deliveries)
        payloads: list[tuple[list[Any], list[tuple[int, bytes]]]] = [
            (self._control(verdicts, gid).to_wire(), []) for gid in stage.gids]
        self._fail_all = False
        injected = [(gid, blob) for gid, blobs in self._deliveries.items() for blob in blobs]
        injected.extend(self.ticks.due(time.monotonic()))
        self._deliveries = {}
        for n, record in enumerate(injected):  # a chained executor's to its caller's partition
            gid = record[0]
            into = stage.partition_of(gid) if gid in stage.roots else n % len(payloads)
            payloads[into][1].append(record)
        return payloads

    def _control(self, verdicts: Verdicts, gid: int) -> SpoutControl:
        """What spout executor ``gid`` learns this window."""
        return verdict_control(verdicts, self.plan.executors[gid].tasks, active=self.active,
                               fail_all=self._fail_all, limit=self.window_size.limit(gid),
                               pending=self.window_size.pending(gid), ended=self._ended)

    def _job_failed(self, window: int, exc: BaseException) -> None:
        self.failed_jobs += 1
        if self.checkpointing.request_rollback(f"window {window} failed for good"):
            logger.error("topology %s: window %d failed for good; rolling back: %s",
                         self.name, window, exc)
            return
        logger.error("topology %s: window %d failed for good; failing its open tuple trees: %s",
                     self.name, window, exc)
        self.acker.forget_all()
        self._fail_all = True
        self._deliveries = {}

    def _absorb(self, window: int, started: float, results: list[Any],
                jobs: list[int] | None = None, finished: float | None = None) -> None:
        metas = []
        locality = CallLocality()
        for key, (meta_blob, deliveries, call) in results:
            if key != DRIVER:
                continue
            locality.add(call)
            meta = WindowMeta.decode(meta_blob)
            self._note_refreshed(window, meta.gid, call)
            if meta.lost:
                self._executor_lost(window, meta)
            metas.append(meta)
            for gid, blob in deliveries.items():
                self._deliveries.setdefault(gid, []).append(blob)
        # merged: two windows may end before the next takes them (windows that overlap)
        self._verdicts.merge(self.acker.process_window(metas))
        committed = self.checkpointing.parts_arrived(metas)
        if committed is not None:
            self.stats.committed_window = committed.window
            self.stats.checkpoint_ms = committed.milliseconds
        duration = (finished or time.time()) - started
        if self.trees_end_with_windows:
            for meta in metas:  # the spouts timed the wait until the window took them
                meta.stats.end_trees_after(duration * 1000.0)
        components, executors = self._counters(metas)
        if self.trees_end_with_windows:
            self._roll_back_bolt_fails(window, components)
        locality.tuples = sum(sum(c.transferred.values()) for c in components.values())
        self._size_next_windows(started, duration, metas)
        self.stats.record(WindowRecord(window, started, duration, components,
                                       executors, jobs or [], locality))
        self.stats.restarts = self.pool.restarts

    def _roll_back_bolt_fails(self, window: int,
                              components: dict[str, ComponentCounters]) -> None:
        """Checkpoint reliability: a bolt's failed tuples are replayed by a rollback.

        There are no trees to fail and replay one by one; without this the tuple a bolt
        failed (``fail``, ``FailedException``) was dropped, and its spout heard ``ack`` for
        it at the next commit.
        """
        specs = self.plan.components
        failing = {name: n for name, counters in components.items()
                   if (spec := specs.get(name)) is not None and spec.kind == "bolt"
                   and (n := sum(counters.failed.values()))}
        if not failing:
            return
        what = ", ".join(f"{name} failed {n}" for name, n in sorted(failing.items()))
        cause = f"window {window}: {what} (checkpoint reliability replays by rolling back)"
        if self.checkpointing.request_rollback(cause):
            logger.warning("topology %s: %s", self.name, cause)

    def _executor_lost(self, window: int, meta: WindowMeta) -> None:
        """An executor did not answer window ``window``: kill it (the pool restarts it).

        Fail what it held and say so as its component's error.
        """
        info = self.plan.executors[meta.gid]
        self.pool.kill(meta.gid)
        self.checkpointing.request_rollback(
            f"executor {meta.gid} ({info.component}) did not answer window {window}")
        if self.plan.components[info.component].kind == "spout":
            self.acker.forget_spout_tasks(set(info.tasks))
        fate = ("it was killed and is restarted" if meta.gid in self.pool.sockets
                else "its worker runs elsewhere and restarts it")
        text = (f"executor {meta.gid} ({info.component}) did not answer window {window} "
                f"within topology.executor.answer.timeout.secs; {fate}, and the "
                f"{len(meta.failed)} tuple trees of its input failed")
        logger.error("topology %s: %s", self.name, text)
        self.errors.add(ComponentError.now(info.component, None, text))

    def _counters(self, metas: list[WindowMeta]
                  ) -> tuple[dict[str, ComponentCounters], dict[int, ComponentCounters]]:
        """This window's counters per component and per executor; keeps the errors."""
        counters, executors = window_counters(metas)
        self.errors.of_window(metas)
        if self.acker.tasks:
            executed = sum(t.executed for t in self.acker.tasks)
            counters["__acker"] = ComponentCounters(executed={"*": executed})
            for task in self.acker.tasks:
                task.executed = 0
        return counters, executors


    # -- checkpoints and rebalances, applied between windows -----------------------------
    def _roll_back(self) -> bool:
        """Roll every executor and the engine back to the newest committed checkpoint.

        Returns:
            False when an executor could not restore (tried again before the next window).
        """
        self.scheduler.finish_in_flight(self)  # cancelled: its results would be discarded
        rollback = self.checkpointing.roll_back(self.acker, self.window)
        if rollback is None:
            return False
        self._carried.clear()
        self._verdicts, self._deliveries = rollback.verdicts, rollback.deliveries
        self._fail_all = False
        self.window = max(self.window, rollback.window)
        self.stats.committed_window = rollback.target
        self.stats.rollbacks += 1
        self.stats.rollback_cause = rollback.cause
        backoff = self.rollback_backoff
        wait = backoff.after_rollback()
        if wait > 0:  # the failure keeps coming back: back off (engine.driver.rollback_backoff)
            held = (f"{backoff.in_a_row} rollbacks in a row, the replay held {wait:g} s "
                    "(topology.rollback.backoff.*)")
            self.stats.rollback_cause = f"{rollback.cause}; {held}" if rollback.cause else held
            logger.warning("topology %s: %s", self.name, held)
            backoff.hold(wait, self.stop_requested)
        return True

    def replan(self, counts: dict[str, int], executors: list[Any] | None = None) -> None:
        """Take new executor counts in place from the next window on (``rebalance -e``).

        Checked now; the window loop applies them between windows (``engine.plan.regroup``): the
        executors of unchanged components keep their processes, the rebalanced components'
        tasks are regrouped into the new count of executors.

        Args:
            counts: component id -> executors, for the components that change.
            executors: the executor ids (``[first, last]`` task) the new assignment gives
                this driver's worker, when other workers run some executors (they follow
                the driver's plan); None: this process runs them all.

        Raises:
            EngineError: see :meth:`~sparkstorm.engine.driver.replans.Replans.ask`.
        """
        self.replan_requests.ask(self.plan,
                                 len(self.pool.sockets) == len(self.plan.executors),
                                 counts, executors, self.name)

    @property
    def replan_pending(self) -> bool:
        """Whether new executor counts wait for the window loop."""
        return self.replan_requests.pending

    @property
    def replans(self) -> int:
        """New executor counts taken in place so far."""
        return self.pool.replans

    def _follow_replan(self) -> None:
        """Apply wanted executor counts: end the window in flight, regroup, await endpoints.

        With other workers, the next window waits until each has replanned its executors
        and reported their endpoints under the new plan (``engine.plan.regroup``); it stops
        waiting for newer counts (replanned again at once) or a stop.
        """
        taken = self.replan_requests.take()
        if taken is None:
            return
        self.scheduler.finish_in_flight(self)
        began = time.monotonic()
        switch = plan_switch(self.plan, self.conf, taken[0], taken[1], self.name)
        if switch is None:
            return
        self._apply_switch(switch)
        logger.warning("topology %s: executors per component now %s (in place: %d stay, %d "
                       "left, %d started, in %.2f s)", self.name, executor_counts(switch.plan),
                       len(switch.regrouping.staying), len(switch.regrouping.leaving),
                       len(switch.regrouping.arriving), time.monotonic() - began)
        self._await_other_workers()

    def _apply_switch(self, switch: PlanSwitch) -> None:
        """Run ``switch``'s plan: the pool regroups, and what follows the gids follows.

        The driver's stages, tick schedule, window sizer, statistics and cycle deliveries
        follow the new gids. With checkpoints on, the topology then rolls back to its
        committed checkpoint under the new layout (the regrouped tasks restore from the
        parts that held them); without, the staying executors go on and the trees held by
        the leaving ones time out and replay.
        """
        old, new, regrouping = self.plan, switch.plan, switch.regrouping
        self.pool.replan(new, regrouping.staying, regrouping.leaving, regrouping.arriving,
                         hosted=switch.hosted)
        # the trees of regrouped spout tasks: their new instances know nothing of them
        self.acker.forget_spout_tasks({
            t for g in regrouping.leaving for t in old.executors[g].tasks
            if old.components[old.executors[g].component].kind == "spout"})
        self.plan = new
        self.ticks.plan = new
        self.window_size = WindowSizer.for_topology(self.plan, self.conf)
        self.window_seconds = self.window_size.period_seconds
        self.stats.executor_ranges = {e.gid: ExecutorRange(e.component, min(e.tasks),
                                                           max(e.tasks))
                                      for e in new.executors}
        self._deliveries = {regrouping.staying[g]: blobs for g, blobs
                            in self._deliveries.items() if g in regrouping.staying}
        self.checkpointing.replanned(new)
        self._stages = self._stage_infos()
        self._stages_version = self._endpoints_state()
        self._choose_scheduler()

    def _await_other_workers(self) -> None:
        """Wait until every executor of the new plan has reported where it answers."""
        began = warned = time.monotonic()
        while (self.pool.missing() and not self.replan_requests.pending
               and not self.stop_requested.wait(HEARTBEAT_NOW_SECONDS)):
            if self.heartbeat_now is not None:
                self.heartbeat_now()
            if time.monotonic() - warned > MISSING_WARN_SECONDS:
                warned = time.monotonic()
                logger.warning("topology %s: executors %s of the new plan (%s) have not "
                               "reported where they answer for %.0f s; see their workers' "
                               "logs", self.name, self.pool.missing(), self.pool.plan_tag,
                               warned - began)
        if not self.pool.missing():
            logger.info("topology %s: every worker runs the new plan (%s) %.2f s after the "
                        "switch", self.name, self.pool.plan_tag, time.monotonic() - began)


def _counted(accumulator: Any, function: Any) -> Any:
    """``function`` (a spout stage's partition function) counting its finished tasks."""
    return partial(counting_tasks, accumulator, function)
