"""Assignments and the monitor: which slot runs each topology's worker, and reassigning
workers whose heartbeats stopped or whose supervisor went away.

As in JStorm's ``TopologyAssign``, every (re)assignment is an event in one FIFO queue,
taken by one assignment thread: submissions, rebalances and the monitor's reassignments
never interleave, and they run in the order they were asked for. A submission waits for
its event (JStorm's ``waitFinish``), so ``submit`` answers with the topology placed.

One worker per topology in this version: the worker is the topology's Spark driver, and
Spark spreads the executors; ``topology.workers`` is recorded but not honoured yet.
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparkstorm.cluster.nimbus.scheduler import Scheduler
from sparkstorm.cluster.state.records import (
    Assignment,
    ExecutorId,
    StormBase,
    SupervisorInfo,
    TopologyStatus,
    WorkerSlot,
)

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.service import Nimbus

logger = logging.getLogger(__name__)


def topology_executors(spec: dict[str, Any]) -> list[ExecutorId]:
    """Storm's executor ids: tasks numbered from 1 over the components sorted by id, each
    component's tasks split into ``par`` contiguous ranges."""
    executors: list[ExecutorId] = []
    next_task = 1
    for component in sorted(spec["components"], key=lambda c: str(c["name"])):
        tasks, par = int(component.get("num_tasks", 1)), max(1, int(component.get("par", 1)))
        par = min(par, tasks) or 1
        for index in range(par):
            size = tasks // par + (1 if index < tasks % par else 0)
            if size:
                executors.append((next_task, next_task + size - 1))
                next_task += size
    return executors


def topology_tasks(spec: dict[str, Any]) -> dict[int, str]:
    """Each task id's component id, numbered as :func:`topology_executors` numbers them
    (from 1 over the components sorted by id); Nimbus stores it at submit as the task
    infos."""
    tasks: dict[int, str] = {}
    for component in sorted(spec["components"], key=lambda c: str(c["name"])):
        for _ in range(int(component.get("num_tasks", 1))):
            tasks[len(tasks) + 1] = str(component["name"])
    return tasks


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


class Assigner:
    """Assigns topologies to slots (one FIFO queue, one thread) and runs the monitor loop.

    Args:
        nimbus: the Nimbus whose state, conf, clock and lock it uses.
        scheduler: where executors go.
    """

    def __init__(self, nimbus: Nimbus, scheduler: Scheduler) -> None:
        self.nimbus = nimbus
        self.scheduler = scheduler
        self.events: queue.Queue[AssignEvent | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._assign_thread: threading.Thread | None = None

    def request(self, topology_id: str, reason: str) -> Assignment | None:
        """Queue an assign event and wait until the assignment thread ran it.

        Without a running assignment thread (Nimbus used as a library, unit tests) the
        event runs in the caller. Must not be called with ``nimbus.lock`` held: the
        assignment thread takes it.
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
            event.result = self.assign(event.topology_id)
        except Exception:  # noqa: BLE001 - one bad event must not stop the queue
            logger.exception("assigning %s (%s) failed", event.topology_id, event.reason)
        finally:
            event.done.set()

    def assign(self, topology_id: str) -> Assignment | None:
        """(Re)assign a topology to free slots with new worker ids; None when no slot is free.

        The topology's own slots count as free: a reassigned worker may land in the same
        slot, where the supervisor replaces the old worker (its id changed).
        """
        nimbus = self.nimbus
        with nimbus.lock:
            supervisors = nimbus.state.all_supervisor_info()
            free = self._free_slots(topology_id, supervisors)
            spec = nimbus.topology_spec(topology_id)
            placed = self.scheduler.schedule(topology_executors(spec), 1, free)
            if not placed:
                logger.warning("no free slot for topology %s (supervisors: %s)", topology_id,
                               sorted(supervisors) or "none")
                return None
            now = int(nimbus.clock())
            workers = {slot: str(uuid.uuid4()) for slot in set(placed.values())}
            assignment = Assignment(topology_id, placed, dict.fromkeys(placed, now), workers,
                                    {s.node: supervisors[s.node].hostname for s in workers})
            self._forget_old_workers(topology_id)
            nimbus.state.set_assignment(topology_id, assignment)
            logger.info("assigned %s to %s", topology_id, sorted(workers.items()))
            return assignment

    def _forget_old_workers(self, topology_id: str) -> None:
        # the replaced workers' heartbeats would otherwise linger in the UI's statistics
        old = self.nimbus.state.get_assignment(topology_id)
        for worker_id in old.worker_ids.values() if old else ():
            self.nimbus.state.remove_worker_heartbeat(topology_id, worker_id)

    def _free_slots(self, topology_id: str,
                    supervisors: dict[str, SupervisorInfo]) -> list[WorkerSlot]:
        used: set[WorkerSlot] = set()
        for other in self.nimbus.state.assignments():
            if other != topology_id:
                assignment = self.nimbus.state.get_assignment(other)
                used |= assignment.slots() if assignment else set()
        return [WorkerSlot(sid, port) for sid, info in supervisors.items()
                for port in info.ports if WorkerSlot(sid, port) not in used]

    # --- monitor ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the assignment thread, and :meth:`check_all` every
        ``nimbus.monitor.freq.secs`` on the monitor thread."""
        self._assign_thread = threading.Thread(target=self._assign_loop, name="nimbus-assign",
                                               daemon=True)
        self._assign_thread.start()
        self._thread = threading.Thread(target=self._loop, name="nimbus-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the monitor, then the assignment thread once the queued events ran."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        if self._assign_thread is not None:
            self.events.put(None)
            self._assign_thread.join(10)

    def _loop(self) -> None:
        period = float(str(self.nimbus.conf.get("nimbus.monitor.freq.secs") or 10))
        while not self._stop.wait(period):
            try:
                self.check_all()
            except Exception:  # noqa: BLE001 - the monitor must outlive one bad round
                logger.exception("nimbus monitor round failed; trying again next round")

    def check_all(self) -> None:
        """One monitor round: finish due kills and rebalances, assign the unassigned,
        reassign the dead."""
        nimbus = self.nimbus
        supervisors = set(nimbus.state.supervisors())
        for topology_id, base in nimbus.storms().items():
            if base.status == TopologyStatus.KILLED:
                self._maybe_remove(topology_id, base)
                continue
            if base.status == TopologyStatus.REBALANCING:
                if nimbus.clock() >= float(base.action_options.get("rebalance_at", 0)):
                    nimbus.do_rebalance(topology_id)
                continue
            assignment = nimbus.state.get_assignment(topology_id)
            reason = "unassigned" if assignment is None else \
                self._dead_reason(assignment, supervisors)
            if reason is not None:
                if assignment is not None:
                    logger.warning("reassigning %s: %s", topology_id, reason)
                self.request(topology_id, reason)

    def _maybe_remove(self, topology_id: str, base: StormBase) -> None:
        kill_at = float(base.action_options.get("kill_at", 0))
        if self.nimbus.clock() >= kill_at:
            self.nimbus.remove(topology_id)

    def _dead_reason(self, assignment: Assignment, supervisors: set[str]) -> str | None:
        """Why the assignment's worker must move, or None when it is fine.

        A worker whose supervisor is gone moves only once its heartbeats stopped too (or
        when it never sent one): a worker that still heartbeats outlived its supervisor's
        process (a crash or a restart, whose new process adopts it; a restart also leaves a
        gap between the old session's expiry and the new registration), while a lost node
        takes its worker with it.
        """
        conf, now = self.nimbus.conf, self.nimbus.clock()
        # a restarted Nimbus gives every worker a full timeout from its own start: the
        # heartbeats that arrived while no Nimbus was up were lost, not missing (Storm's
        # heartbeat cache starts empty for the same reason)
        since_start = self.nimbus.started
        timeout = float(str(conf.get("nimbus.task.timeout.secs") or 30))
        for slot, worker_id in assignment.worker_ids.items():
            beat = self.nimbus.state.get_worker_heartbeat(assignment.topology_id, worker_id)
            silent = beat is not None and now - max(since_start, beat.time_secs) > timeout
            if slot.node not in supervisors:
                if beat is None or silent:
                    return f"supervisor {slot.node} of slot {slot.port} is gone"
            elif beat is None:
                launched = max(since_start, min(assignment.executor_start_time_secs.values(),
                                                default=now))
                limit = float(str(conf.get("nimbus.task.launch.secs") or 120))
                if now - launched > limit:
                    return f"worker {worker_id} sent no heartbeat within {limit:.0f} s of launch"
            elif silent and not isinstance(beat.executor_stats.get("start_failure"), dict):
                # (a worker that failed to start is not moved: its supervisor restarts it
                # with a back-off, and the topology keeps showing FAILING meanwhile)
                return f"worker {worker_id} is silent since {now - beat.time_secs:.0f} s"
        return None
