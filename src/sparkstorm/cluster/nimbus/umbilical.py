"""The worker umbilical (docs/ARCHITECTURE.md): init context, heartbeats and errors.

A heartbeat from a worker that is no longer assigned is not stored (a killed topology's
state stays gone) and is answered with ``shutdown``.

Heartbeat request (JSON)::

    {"topology_id": "wc-1-17", "uptime_secs": 12.5, "stats": {<TopologyStats.summary()>}}

Heartbeat response::

    {"shutdown": false, "active": true, "rebalance": null, "committed_window": null,
     "stack_trace": false}

``stack_trace`` is true once after a stack trace request
(``POST /api/v1/topology/{id}/stacktrace``); the worker answers with
``POST /api/v1/worker/{id}/stacktrace`` and ``GET /api/v1/topology/{id}/stacktrace`` shows it.
``rebalance`` is ``{"num_executors": {...}, "num_workers": n, "rebalance_at": secs}`` while the
topology is REBALANCING (its spouts are paused; at the due time the workers that stay get
their new executors, the others are replaced). ``executors`` lists the executor ids (first
and last task) the worker's slot hosts now, so that a staying worker follows a rebalance
(``[[2, 2], [4, 4]]``), and ``executor_counts`` the executors per component as last
rebalanced (``{"split": 1}``), which a staying driver takes in place (``engine.plan.regroup``);
the driver's worker also gets ``endpoints``, where the other workers'
executors answer (``{"3": [path, host, port, pid, plan tag]}``). The other workers get
``driver_plan``, the executor counts the driver's latest heartbeat says it runs
(``{"executor_counts": {"split": 1, ...}, "plan_tag": "split=1,..."}``): a driver that took
new counts has switched between windows and waits for them to regroup their executors
alike (``engine.plan.regroup``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from sparkstorm.cluster.heartbeat_size import TrimLog, bound_stats
from sparkstorm.cluster.nimbus.carried_stats import CARRIED, carry_all_time
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.stormdist import StormDist
from sparkstorm.cluster.nimbus.topologies import require_storm
from sparkstorm.cluster.nimbus.ui_progress import progress_marks
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import (
    Assignment,
    ErrorInfo,
    TopologyStatus,
    WorkerHeartbeat,
    WorkerSlot,
)
from sparkstorm.config import KEYS, conf_float, conf_int
from sparkstorm.errors import shorten_error_text

worker_log = logging.getLogger("sparkstorm.nimbus.workers")
"""Where workers' ``log`` calls go, in Nimbus's own log."""
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}


class Umbilical:
    """Answers the worker calls of one Nimbus.

    Args:
        state: the cluster state (StormBases, assignments; heartbeats and errors go there).
        stormdist: the submitted specs and confs a starting worker gets.
        clock: epoch seconds (heartbeat and error times).
        heartbeat_max_bytes: ``worker.heartbeat.max.bytes``: a heartbeat's statistics are
            trimmed to this size before they are stored.
    """

    def __init__(self, state: ClusterState, stormdist: StormDist,
                 clock: Callable[[], float] = time.time,
                 heartbeat_max_bytes: int = int(
                     str(KEYS["worker.heartbeat.max.bytes"].default))) -> None:
        self.state = state
        self.stormdist = stormdist
        self.clock = clock
        self.stack_requests: set[str] = set()
        """Workers whose next heartbeat answer asks for their stack traces."""
        self.stacks: dict[str, dict[str, dict[str, Any]]] = {}
        """Per topology, the latest stack traces each worker sent (kept in memory: they
        are a debugging aid, not state a restarted Nimbus needs)."""
        self.heartbeat_max_bytes = heartbeat_max_bytes
        self._trims = TrimLog("nimbus")
        self._committed: dict[str, int] = {}
        """Each topology's committed window as last recorded (saves a read per beat)."""

    def request_stack_traces(self, topology_id: str) -> int:
        """Ask every worker of ``topology_id`` for its stack traces; returns how many."""
        require_storm(self.state, topology_id)
        assignment = self.state.get_assignment(topology_id)
        workers = set(assignment.worker_ids.values()) if assignment else set()
        self.stack_requests |= workers
        return len(workers)

    def store_stack_traces(self, worker_id: str, body: dict[str, Any]) -> None:
        """Keep what a worker sent in answer to a stack trace request."""
        assignment, slot = self._find(worker_id, body.get("topology_id"))
        self.stacks.setdefault(assignment.topology_id, {})[worker_id] = {
            "workerId": worker_id, "host": assignment.node_host.get(slot.node, slot.node),
            "port": slot.port, "timeSecs": self.clock(),
            "stacks": str(body.get("stacks") or "")}

    def stack_traces(self, topology_id: str) -> dict[str, Any]:
        """The latest stack traces of ``topology_id``'s workers (oldest request first)."""
        require_storm(self.state, topology_id)
        workers = sorted(self.stacks.get(topology_id, {}).values(),
                         key=lambda w: float(w["timeSecs"]))
        return {"topologyId": topology_id, "workers": workers,
                "pending": sorted(self.stack_requests & set(
                    self._worker_ids(topology_id)))}

    def _worker_ids(self, topology_id: str) -> list[str]:
        assignment = self.state.get_assignment(topology_id)
        return list(assignment.worker_ids.values()) if assignment else []

    def _find(self, worker_id: str, topology_id: str | None) -> tuple[Assignment, WorkerSlot]:
        """The assignment and slot of a worker.

        Raises:
            NimbusError: ``WORKER_NOT_ASSIGNED``.
        """
        state = self.state
        candidates = [topology_id] if topology_id else state.assignments()
        for candidate in candidates:
            assignment = state.get_assignment(candidate)
            for slot, wid in (assignment.worker_ids.items() if assignment else ()):
                if wid == worker_id:
                    assert assignment is not None
                    return assignment, slot
        msg = (f"worker {worker_id!r} is not assigned (topology {topology_id!r}); it was "
               "killed or reassigned, and should shut down")
        raise NimbusError(msg, code="WORKER_NOT_ASSIGNED")

    def init_context(self, worker_id: str, topology_id: str | None) -> dict[str, Any]:
        """What a starting worker needs: its topology, spec, conf and timings."""
        assignment, slot = self._find(worker_id, topology_id)
        tid = assignment.topology_id
        base = require_storm(self.state, tid)
        conf = self.stormdist.conf(tid)
        return {
            "topology_id": tid, "topology_name": base.name, "worker_id": worker_id,
            "node": slot.node, "port": slot.port,
            # the worker of the lowest executor's slot is the driver; each hosts its slot's
            "driver": slot == assignment.driver_slot(),
            "executors": [list(e) for e in assignment.executors_in(slot)],
            "token": self.stormdist.executor_token(tid),
            "spec": self.stormdist.spec(tid), "conf": conf,
            "active": base.status == TopologyStatus.ACTIVE,
            "heartbeat_interval_secs": conf_float(conf, "worker.heartbeat.frequency.secs"),
            "window_ms": conf_int(conf, "topology.window.ms"),
        }

    def heartbeat(self, worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Store the heartbeat and tell the worker what to do."""
        topology_id = body.get("topology_id")
        try:
            assignment, slot = self._find(worker_id, topology_id if isinstance(
                topology_id, str) else None)
            base = require_storm(self.state, assignment.topology_id)
        except NimbusError:
            return _response(shutdown=True, active=False)
        stats = body.get("stats")
        stats = stats if isinstance(stats, dict) else {}
        previous = self.state.get_worker_heartbeat(assignment.topology_id, worker_id)
        carried = carry_all_time(  # all-time totals from before the worker's restarts
            previous.executor_stats if previous is not None else {}, stats, self.clock())
        if carried is not None:
            stats = {**stats, CARRIED: carried}
        # whatever a worker sends, what is stored fits a ZooKeeper node
        bounded, trimmed = bound_stats(stats, self.heartbeat_max_bytes)
        self._trims.note(worker_id, self.heartbeat_max_bytes, trimmed)
        self._keep_start_failure(assignment.topology_id, worker_id, bounded)
        bounded["progress"] = progress_marks(  # when each count last changed, for the UI
            previous.executor_stats if previous is not None else {}, bounded, self.clock())
        self.state.worker_heartbeat(WorkerHeartbeat(
            assignment.topology_id, worker_id, self.clock(), bounded,
            float(body.get("uptime_secs") or 0.0), slot.node, slot.port))
        response = _response(shutdown=False, active=base.status == TopologyStatus.ACTIVE)
        response["committed_window"] = self._committed_window(assignment.topology_id, bounded)
        if slot == assignment.driver_slot() and len(assignment.worker_ids) > 1:
            response["endpoints"] = self._endpoints(assignment, worker_id)
        elif len(assignment.worker_ids) > 1:
            response["driver_plan"] = self._driver_plan(assignment)
        # a rebalance may change a staying worker's executors: it starts and stops them
        response["executors"] = [list(e) for e in assignment.executors_in(slot)]
        if base.component_executors:  # rebalance -e: a staying driver regroups in place
            response["executor_counts"] = dict(base.component_executors)
        if worker_id in self.stack_requests:
            self.stack_requests.discard(worker_id)
            response["stack_trace"] = True
        if base.status == TopologyStatus.REBALANCING:
            # the worker's spouts pause now; at the due time Nimbus reassigns the topology
            # with the new counts and this worker is replaced by one that runs them
            options = base.action_options
            response["rebalance"] = {"num_executors": options.get("num_executors") or {},
                                     "num_workers": options.get("num_workers"),
                                     "rebalance_at": options.get("rebalance_at")}
        return response

    def _endpoints(self, assignment: Assignment, driver_worker: str) -> dict[str, Any]:
        """Where the executors of the topology's other workers answer, for its driver.

        As their latest heartbeats say: ``{gid: [path, host, port, pid]}``.
        """
        current = set(assignment.worker_ids.values()) - {driver_worker}
        merged: dict[str, Any] = {}
        beats = self.state.get_worker_heartbeats(assignment.topology_id)
        for worker_id, beat in beats.items():
            if worker_id in current:
                reported = beat.executor_stats.get("endpoints")
                merged.update(reported if isinstance(reported, dict) else {})
        return merged

    def _driver_plan(self, assignment: Assignment) -> dict[str, Any] | None:
        """What the driver's latest heartbeat says it runs (None: not said yet)."""
        driver = assignment.driver_slot()
        worker_id = assignment.worker_ids.get(driver) if driver is not None else None
        beat = (self.state.get_worker_heartbeat(assignment.topology_id, worker_id)
                if worker_id is not None else None)
        counts = beat.executor_stats.get("executor_counts") if beat is not None else None
        if not isinstance(counts, dict):
            return None
        return {"executor_counts": counts,
                "plan_tag": beat.executor_stats.get("plan_tag") if beat is not None else None}

    def _committed_window(self, topology_id: str, stats: dict[str, Any]) -> int | None:
        """Record the committed window the driver reports; answer the one on record.

        Apex's umbilical carries it both ways; a restarted driver resumes from it.
        """
        reported = stats.get("committed_window")
        recorded = self._committed.get(topology_id)
        if recorded is None:
            recorded = self.state.committed_window(topology_id)
        if isinstance(reported, int) and not isinstance(reported, bool) and \
                reported != recorded:
            self.state.set_committed_window(topology_id, reported)
            recorded = reported
        if recorded is not None:
            self._committed[topology_id] = recorded
        return recorded

    def _keep_start_failure(self, topology_id: str, worker_id: str,
                            stats: dict[str, Any]) -> None:
        """Carry a worker's ``start_failure`` over while its next incarnation starts.

        So the worker stays FAILING until a start runs windows; failures are counted.
        """
        if stats.get("windows"):
            return  # it runs: whatever failed before is over
        previous = self.state.get_worker_heartbeat(topology_id, worker_id)
        before = previous.executor_stats.get("start_failure") if previous is not None else None
        if not isinstance(before, dict):
            return
        failure = stats.get("start_failure")
        if isinstance(failure, dict):  # one more failed start
            stats["start_failure"] = {**failure,
                                      "failures": int(before.get("failures") or 1) + 1}
        else:
            stats["start_failure"] = before

    def log(self, worker_id: str, body: dict[str, Any]) -> None:
        """Apex's ``log(workerId, msg)``: a worker's message in Nimbus's log, with its slot.

        Raises:
            NimbusError: ``WORKER_NOT_ASSIGNED``.
        """
        assignment, slot = self._find(worker_id, body.get("topology_id"))
        level = _LEVELS.get(str(body.get("level") or "info").lower(), logging.INFO)
        worker_log.log(level, "worker %s (%s %s:%d): %s", worker_id, assignment.topology_id,
                       assignment.node_host.get(slot.node, slot.node), slot.port,
                       str(body.get("message") or "")[:4000])

    def report_error(self, worker_id: str, body: dict[str, Any]) -> None:
        """Record a component's (or the worker's) error, its text shortened.

        See :func:`~sparkstorm.errors.shorten_error_text`.
        """
        assignment, slot = self._find(worker_id, body.get("topology_id"))
        host = assignment.node_host.get(slot.node, slot.node)
        self.state.report_error(assignment.topology_id, ErrorInfo(
            str(body.get("component") or "__worker")[:200],
            shorten_error_text(str(body.get("error") or "")),
            float(body.get("time_secs") or self.clock()), host, slot.port))


def _response(*, shutdown: bool, active: bool) -> dict[str, Any]:
    return {"shutdown": shutdown, "active": active, "rebalance": None,
            "committed_window": None, "stack_trace": False}
