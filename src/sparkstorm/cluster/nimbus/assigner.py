"""Assignments and the monitor.

Which slot runs each topology's worker, and reassigning workers whose heartbeats stopped or whose
supervisor went away.

As in JStorm's ``TopologyAssign``, every (re)assignment is an event in one FIFO queue,
taken by one assignment thread: submissions, rebalances and the monitor's reassignments
never interleave, and they run in the order they were asked for. A submission waits for
its event (JStorm's ``waitFinish``), so ``submit`` answers with the topology placed.

A topology's executors are spread over ``topology.workers`` slots (the scheduler's order);
the worker of the slot that holds the lowest executor also runs the topology's driver (its
Spark driver), the others host their executors for it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.cluster.nimbus.scheduler import Scheduler
from sparkstorm.cluster.nimbus.staying import Kept, keep_in_place, keep_staying
from sparkstorm.cluster.nimbus.stormdist import StormDist
from sparkstorm.cluster.nimbus.topologies import storms
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import (
    Assignment,
    ExecutorId,
    StormBase,
    SupervisorInfo,
    TopologyStatus,
    WorkerSlot,
)
from sparkstorm.config import conf_float
from sparkstorm.engine import number_tasks, split_tasks
from sparkstorm.periodic import PeriodicThread

logger = logging.getLogger(__name__)

UNASSIGNED = "unassigned"
"""The monitor's reason for a topology that has no assignment yet."""

SUBMITTED, REBALANCED = "submitted", "rebalanced"

FRESH_REASONS = frozenset({SUBMITTED})
"""Assign events that place every executor afresh. A rebalance keeps the workers that stay
(:mod:`~sparkstorm.cluster.nimbus.staying`); any other event (the monitor's reassignment of
dead workers) keeps the live workers where they are."""


def topology_executors(spec: dict[str, Any], conf: dict[str, Any]) -> list[ExecutorId]:
    """Storm's executor ids of a topology spec.

    Each user component's tasks (numbered by :func:`~sparkstorm.engine.plan.execution.number_tasks`,
    after the ackers' ids) split into ``par`` contiguous ranges. The ackers have task ids but
    no executor here: they run inside the topology's Spark driver, as the engine's plan has it.
    """
    executors: list[ExecutorId] = []
    for component in spec["components"]:
        tasks = number_tasks(_user_tasks(spec), conf)[str(component["name"])]
        par = min(max(1, int(component.get("par", 1))), len(tasks))
        executors += [(group[0], group[-1]) for group in split_tasks(tasks, par) if group]
    return sorted(executors)


def topology_tasks(spec: dict[str, Any], conf: dict[str, Any]) -> dict[int, str]:
    """Each task id's component id.

    Numbered by :func:`~sparkstorm.engine.plan.execution.number_tasks` as the engine numbers them;
    Nimbus stores it at submit as the task infos.
    """
    return {task: name for name, tasks in number_tasks(_user_tasks(spec), conf).items()
            for task in tasks}


def _user_tasks(spec: dict[str, Any]) -> dict[str, int]:
    return {str(c["name"]): int(c.get("num_tasks", 1)) for c in spec["components"]}


@dataclass
class AssignEvent:
    """One request to (re)assign a topology, queued for the assignment thread."""

    topology_id: str
    reason: str
    done: threading.Event = field(default_factory=threading.Event)
    result: Assignment | None = None
    """The new assignment; None when no slot was free or the assignment failed."""


ASSIGN_WAIT_SECS = 60.0
"""How long a caller waits for its assign event before giving up waiting (the event
stays queued and still runs)."""


MIN_PERIOD_SECS = 0.1
"""The monitor's shortest period: a configured 0 must not spin a core."""


@dataclass(frozen=True)
class MonitorTimes:
    """The monitor's timings, in seconds.

    Attributes:
        period: how often the monitor runs (``nimbus.monitor.freq.secs``).
        task_timeout: a worker silent this long moves (``nimbus.task.timeout.secs``).
        launch_timeout: a new worker's time to its first heartbeat
            (``nimbus.task.launch.secs``).
    """

    period: float
    task_timeout: float
    launch_timeout: float

    @classmethod
    def from_conf(cls, conf: Mapping[str, object]) -> MonitorTimes:
        """The timings Nimbus's conf sets (the declared defaults where unset)."""
        return cls(conf_float(conf, "nimbus.monitor.freq.secs"),
                   conf_float(conf, "nimbus.task.timeout.secs"),
                   conf_float(conf, "nimbus.task.launch.secs"))


class Assigner:
    """Assigns topologies to slots (one FIFO queue, one thread) and runs the monitor loop.

    Args:
        state: the cluster state (StormBases, assignments, supervisors, heartbeats).
        stormdist: the submitted specs, read at each assignment.
        scheduler: where executors go.
        lock: Nimbus's lock, held while an assignment reads and writes the state.
        times: the monitor's period and timeouts.
        clock: epoch seconds.
        on_kill_due: removes a killed topology whose wait is over (Nimbus's ``remove``).
        on_rebalance_due: applies a rebalance whose wait is over (Nimbus's
            ``do_rebalance``).
    """

    def __init__(self, state: ClusterState, stormdist: StormDist, scheduler: Scheduler,
                 lock: threading.RLock, times: MonitorTimes, *,
                 clock: Callable[[], float] = time.time,
                 on_kill_due: Callable[[str], object],
                 on_rebalance_due: Callable[[str], object]) -> None:
        self.state = state
        self.stormdist = stormdist
        self.scheduler = scheduler
        self.lock = lock
        self.times = times
        self.clock = clock
        self.started = clock()
        """A restarted Nimbus gives every worker a full timeout from here (see
        :meth:`_dead_reason`)."""
        self.on_kill_due = on_kill_due
        self.on_rebalance_due = on_rebalance_due
        self.events: queue.Queue[AssignEvent | None] = queue.Queue()
        self._monitor = PeriodicThread("nimbus-monitor", max(MIN_PERIOD_SECS, times.period),
                                       self.check_all, first_now=False)
        self._assign_thread: threading.Thread | None = None

    def request(self, topology_id: str, reason: str) -> Assignment | None:
        """Queue an assign event and wait until the assignment thread ran it.

        Without a running assignment thread (Nimbus used as a library, unit tests) the
        event runs in the caller. Must not be called with ``lock`` held: the assignment
        thread takes it.
        """
        event = AssignEvent(topology_id, reason)
        thread = self._assign_thread
        if thread is None or not thread.is_alive():
            self._run(event)
            return event.result
        self.events.put(event)
        if not event.done.wait(ASSIGN_WAIT_SECS):
            logger.warning("assign event for %s (%s) still queued after %.0f s", topology_id,
                           reason, ASSIGN_WAIT_SECS)
        return event.result

    def _assign_loop(self) -> None:
        while True:
            event = self.events.get()
            if event is None:
                return
            self._run(event)

    def _run(self, event: AssignEvent) -> None:
        try:
            current = self.state.get_assignment(event.topology_id)
            if event.reason == UNASSIGNED and current is not None:
                # the monitor saw the topology before its submit's assignment was written:
                # assigning again would replace the worker just launched
                event.result = current
                return
            event.result = self.assign(event.topology_id,
                                       keep_live=event.reason not in FRESH_REASONS,
                                       rebalanced=event.reason == REBALANCED)
        except Exception:  # one bad event must not stop the queue
            logger.exception("assigning %s (%s) failed", event.topology_id, event.reason)
        finally:
            event.done.set()

    def assign(self, topology_id: str, *, keep_live: bool = False,
               rebalanced: bool = False) -> Assignment | None:
        """(Re)assign a topology to free slots with new worker ids; None when no slot is free.

        The topology's own slots count as free: a reassigned worker may land in the same
        slot, where the supervisor replaces the old worker (its id changed). With
        ``keep_live`` (a reassignment of dead workers), the workers that still run keep
        their slot, id and executors, as Storm's scheduler keeps healthy slots: only the
        dead ones' executors move, and the driver's worker goes on with its Spark
        application and spouts (it calls the moved executors at their new address).
        With ``rebalanced`` (``rebalance -n``), the staying workers keep their slot, id and
        the executors their share allows (:func:`~sparkstorm.cluster.nimbus.staying.\
keep_staying`); only the others move.
        """
        with self.lock:
            supervisors = self.state.all_supervisor_info()
            free = self._free_slots(topology_id, supervisors)
            spec = self.stormdist.spec(topology_id)
            executors = topology_executors(spec, self.stormdist.conf(topology_id))
            base = self.state.get_storm(topology_id)
            num_workers = base.num_workers if base else 1
            old = self.state.get_assignment(topology_id)
            kept = (self._live_part(old, supervisors, executors, num_workers)
                    if keep_live and not rebalanced and old is not None else None)
            staying = (self._staying_part(old, supervisors, executors, num_workers, free)
                       if rebalanced and old is not None else None)
            if staying is not None:
                placed, workers, started = staying.placed, staying.workers, staying.started
            elif kept is not None:
                placed, workers, started = kept
                moved = [e for e in executors if e not in placed]
                fresh = self.scheduler.schedule(moved, num_workers - len(workers),
                                                [s for s in free if s not in workers])
                placed = {**placed, **fresh} if fresh else {}
            else:
                placed = self.scheduler.schedule(executors, num_workers, free)
                workers, started = {}, {}
            if not placed:
                logger.warning("no free slot for topology %s (supervisors: %s)", topology_id,
                               sorted(supervisors) or "none")
                return None
            now = int(self.clock())
            workers = {slot: workers.get(slot) or str(uuid.uuid4())
                       for slot in set(placed.values())}
            assignment = Assignment(topology_id, placed,
                                    {e: started.get(e, now) for e in placed}, workers,
                                    {s.node: supervisors[s.node].hostname for s in workers})
            self._forget_old_workers(topology_id, set(workers.values()))
            self.state.set_assignment(topology_id, assignment)
            logger.info("assigned %s to %s", topology_id, sorted(workers.items()))
            return assignment

    def _live_part(self, old: Assignment, supervisors: Mapping[str, SupervisorInfo],
                   executors: list[ExecutorId], num_workers: int
                   ) -> tuple[dict[ExecutorId, WorkerSlot], dict[WorkerSlot, str],
                              dict[ExecutorId, int]] | None:
        """What stays of ``old``: the executors, worker ids and start times of live workers.

        None when nothing can stay: no worker is live, or every one is (nothing to move),
        or the executors or the worker count changed since (a fresh placement then).
        """
        if set(old.executor_slots) != set(executors) or len(old.worker_ids) != num_workers:
            return None
        dead = self._dead_slots(old, set(supervisors))
        live = {slot: wid for slot, wid in old.worker_ids.items() if slot not in dead}
        if not live or len(live) == len(old.worker_ids):
            return None
        placed = {e: s for e, s in old.executor_slots.items() if s in live}
        started = {e: old.executor_start_time_secs.get(e, 0) for e in placed}
        return placed, live, started

    def _staying_part(self, old: Assignment, supervisors: Mapping[str, SupervisorInfo],
                      executors: list[ExecutorId], num_workers: int,
                      free: list[WorkerSlot]) -> Kept | None:
        """A rebalance's placement keeping the staying workers; None: place afresh.

        With new executor counts (``rebalance -e``) every worker stays with the executors
        that stay (:func:`~sparkstorm.cluster.nimbus.staying.keep_in_place`): the driver
        and the workers regroup them in place between two windows (``engine.plan.regroup``).
        Afresh when the worker count changes too (``-e`` with ``-n``) or a worker is dead.
        """
        dead = self._dead_slots(old, set(supervisors))
        if set(old.executor_slots) == set(executors):
            return keep_staying(old, executors, num_workers, free, set(dead),
                                schedule=self.scheduler.schedule)
        kept = (keep_in_place(old, executors, free, set(dead))
                if num_workers == len(old.worker_ids) else None)
        if kept is None:
            logger.warning("topology %s: new executor counts on %d workers (were %d) with "
                           "dead slots %s are not taken in place: every worker is replaced "
                           "and the spouts restart from their sources; change the counts "
                           "and the worker count in two rebalances to keep them",
                           old.topology_id, num_workers, len(old.worker_ids),
                           sorted(dead) or "none")
        return kept

    def _forget_old_workers(self, topology_id: str, staying: set[str]) -> None:
        # the replaced workers' heartbeats would otherwise linger in the UI's statistics
        old = self.state.get_assignment(topology_id)
        for worker_id in old.worker_ids.values() if old else ():
            if worker_id not in staying:
                self.state.remove_worker_heartbeat(topology_id, worker_id)

    def _free_slots(self, topology_id: str,
                    supervisors: dict[str, SupervisorInfo]) -> list[WorkerSlot]:
        used: set[WorkerSlot] = set()
        for other in self.state.assignments():
            if other != topology_id:
                assignment = self.state.get_assignment(other)
                used |= assignment.slots() if assignment else set()
        return [WorkerSlot(sid, port) for sid, info in supervisors.items()
                for port in info.ports if WorkerSlot(sid, port) not in used]

    # --- monitor ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the assignment thread and the monitor thread.

        The monitor runs :meth:`check_all` every ``times.period`` seconds, the first round after one
        period.
        """
        self._assign_thread = threading.Thread(target=self._assign_loop, name="nimbus-assign",
                                               daemon=True)
        self._assign_thread.start()
        self._monitor.start()

    def stop(self) -> None:
        """Stop the monitor, then the assignment thread once the queued events ran."""
        self._monitor.stop(10)
        if self._assign_thread is not None:
            self.events.put(None)
            self._assign_thread.join(10)

    def check_all(self) -> None:
        """Run one monitor round.

        Finish due kills and rebalances, assign the unassigned, reassign the dead.
        """
        supervisors = set(self.state.supervisors())
        for topology_id, base in storms(self.state).items():
            if base.status == TopologyStatus.KILLED:
                self._maybe_remove(topology_id, base)
                continue
            if base.status == TopologyStatus.REBALANCING:
                if self.clock() >= float(base.action_options.get("rebalance_at", 0)):
                    self.on_rebalance_due(topology_id)
                continue
            if base.application is not None:
                continue  # a Spark application of its own: nothing to (re)assign
            assignment = self.state.get_assignment(topology_id)
            reason = UNASSIGNED if assignment is None else \
                self._dead_reason(assignment, supervisors)
            if reason is not None:
                if assignment is not None:
                    logger.warning("reassigning %s: %s", topology_id, reason)
                self.request(topology_id, reason)

    def _maybe_remove(self, topology_id: str, base: StormBase) -> None:
        kill_at = float(base.action_options.get("kill_at", 0))
        if self.clock() >= kill_at:
            self.on_kill_due(topology_id)

    def _dead_reason(self, assignment: Assignment, supervisors: set[str]) -> str | None:
        """Why one of the assignment's workers must move, or None when all are fine."""
        dead = self._dead_slots(assignment, supervisors)
        return next(iter(dead.values()), None)

    def _dead_slots(self, assignment: Assignment,
                    supervisors: set[str]) -> dict[WorkerSlot, str]:
        """The slots whose worker must move, each with why.

        A worker whose supervisor is gone moves only once its heartbeats stopped too (or
        when it never sent one): a worker that still heartbeats outlived its supervisor's
        process (a crash or a restart, whose new process adopts it; a restart also leaves a
        gap between the old session's expiry and the new registration), while a lost node
        takes its worker with it.
        """
        now = self.clock()
        # a restarted Nimbus gives every worker a full timeout from its own start: the
        # heartbeats that arrived while no Nimbus was up were lost, not missing (Storm's
        # heartbeat cache starts empty for the same reason)
        since_start = self.started
        timeout = self.times.task_timeout
        dead = {}
        for slot, worker_id in assignment.worker_ids.items():
            beat = self.state.get_worker_heartbeat(assignment.topology_id, worker_id)
            silent = beat is not None and now - max(since_start, beat.time_secs) > timeout
            if slot.node not in supervisors:
                if beat is None or silent:
                    dead[slot] = f"supervisor {slot.node} of slot {slot.port} is gone"
            elif beat is None:
                # this slot's executors' start: a worker moved here after a loss gets its own
                # launch time, not the topology's (it was reassigned every round otherwise)
                started = assignment.executor_start_time_secs
                launched = max(since_start, min((started.get(e, now) for e in
                                                 assignment.executors_in(slot)), default=now))
                limit = self.times.launch_timeout
                if now - launched > limit:
                    dead[slot] = (f"worker {worker_id} sent no heartbeat within {limit:.0f} s "
                                  "of launch")
            elif silent and not isinstance(beat.executor_stats.get("start_failure"), dict):
                # (a worker that failed to start is not moved: its supervisor restarts it
                # with a back-off, and the topology keeps showing FAILING meanwhile)
                dead[slot] = f"worker {worker_id} is silent since {now - beat.time_secs:.0f} s"
        return dead
