"""Nimbus's logic, without HTTP: submit, kill, activate, deactivate, and what they read.

Nimbus keeps nothing of its own in memory: topologies live in the cluster state (StormBase,
assignments, heartbeats) and on disk (inbox, stormdist, the submission counter), so a
restarted Nimbus resumes where the previous one stopped. Mutations take one lock because
the REST API serves requests on several threads and the monitor runs on another.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sparkstorm.cluster.nimbus.applications import (
    is_application,
    reassign_in_place,
    register_application,
)
from sparkstorm.cluster.nimbus.assigner import Assigner, MonitorTimes, topology_tasks
from sparkstorm.cluster.nimbus.cleaner import Cleaner
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.inbox import Inbox, UnpackLimits
from sparkstorm.cluster.nimbus.scheduler import EvenScheduler, Scheduler
from sparkstorm.cluster.nimbus.stormdist import SPEC, StormDist
from sparkstorm.cluster.nimbus.topologies import require_storm
from sparkstorm.cluster.nimbus.topologies import storms as all_storms
from sparkstorm.cluster.nimbus.umbilical import Umbilical
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import StormBase, TaskInfo, TopologyStatus
from sparkstorm.config import component_conf, conf_float, conf_int, local_dir, validate_conf
from sparkstorm.errors import SparkstormError, TopologyError
from sparkstorm.topology.spec import TopologySpec
from sparkstorm.topology.validate import (
    check_topology_size,
    check_worker_share,
    executor_count_problem,
    validate_topology,
    validate_topology_name,
    validate_windowed_bolts,
)

logger = logging.getLogger(__name__)

HOSTING_KEY = "topology.executor.hosting"
SECRET_KEYS = ("storm.cluster.token",)
"""Keys never stored with a topology's conf (the conf is served to workers and the UI)."""


class Nimbus:
    """The master's operations; :mod:`.api` exposes them over HTTP.

    It builds its collaborators from its parts: :attr:`assigner` (assignments and the
    monitor; due kills and rebalances call back :meth:`remove` and :meth:`do_rebalance`),
    :attr:`cleaner` and :attr:`umbilical` (the worker calls).

    Args:
        conf: Nimbus's effective configuration.
        state: the cluster state (the caller owns and closes its store).
        scheduler: where executors go; JStorm's order by default.
        clock: epoch seconds; tests pass a fake one.
    """

    def __init__(self, conf: Mapping[str, object], state: ClusterState,
                 scheduler: Scheduler | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.conf = dict(conf)
        self.state = state
        self.clock = clock
        self.lock = threading.RLock()
        root = local_dir(conf) / "nimbus"
        max_bytes = conf_int(conf, "nimbus.upload.max.bytes")
        self.inbox = Inbox(root / "inbox", max_bytes, UnpackLimits.from_conf(conf))
        self.stormdist = StormDist(root / "stormdist")
        self.assigner = Assigner(state, self.stormdist, scheduler or EvenScheduler(), self.lock,
                                 MonitorTimes.from_conf(conf), clock=clock,
                                 on_kill_due=self.remove, on_rebalance_due=self.do_rebalance)
        self.cleaner = Cleaner(
            state, self.inbox, self.stormdist, self.lock, clock=clock,
            expiration_secs=conf_float(conf, "nimbus.inbox.jar.expiration.secs"),
            period_secs=conf_float(conf, "nimbus.cleanup.inbox.freq.secs"))
        self.umbilical = Umbilical(state, self.stormdist, clock,
                                   conf_int(conf, "worker.heartbeat.max.bytes"))
        self.started = self.assigner.started

    # --- submit -------------------------------------------------------------------------------

    def submit(self, name: str, upload_id: str, spec_data: object,
               overrides: Mapping[str, object], *, active: bool = True,
               owner: str = "") -> str:
        """Validate and submit a topology; return its id ``<name>-<counter>-<epoch secs>``.

        Nothing is written unless every check passes, and a refused submission deletes the
        upload it names (finished or partial): a refusal leaves the disk as it was before
        the upload, and the client uploads again to retry.

        Raises:
            TopologyError: an invalid name, a spec of the wrong shape
                (``INVALID_TOPOLOGY_SPEC``, see :func:`parse_spec`) or an invalid topology
                (its validation code).
            ConfigError: a bad conf value.
            NimbusError: ``INVALID_TOPOLOGY_SPEC``, ``NO_SUCH_UPLOAD``,
                ``TOPOLOGY_ALREADY_ALIVE``.
        """
        try:
            return self._submit(name, upload_id, spec_data, overrides, active, owner)
        except SparkstormError:
            self._discard_upload(upload_id)
            raise

    def _discard_upload(self, upload_id: str) -> None:
        # under the lock: a concurrent submit of the same upload may be copying it right now
        with self.lock:
            removed = self.inbox.discard(upload_id)
        if removed:
            logger.info("submission refused; removed its upload %s", removed)

    def _submit(self, name: str, upload_id: str, spec_data: object,
                overrides: Mapping[str, object], active: bool, owner: str) -> str:
        validate_topology_name(name)
        spec = parse_spec(spec_data)
        validate_topology(spec, topology_name=name)
        conf = self._topology_conf(spec, overrides, name)
        validate_windowed_bolts(spec, conf)  # issue 11: windows against the effective conf
        # issue 30: the size limits are the operator's, which a submitter's conf cannot raise
        nimbus_limits = {**self.conf, "topology.name": name}
        check_topology_size(spec, nimbus_limits, where="Nimbus's conf")
        check_worker_share(spec, conf_int(conf, "topology.workers"), nimbus_limits)
        if conf.get(HOSTING_KEY) == "spark":
            msg = (f"topology {name!r}: {HOSTING_KEY} is 'spark', which only a topology "
                   "deployed with spark-submit has (its Spark executors host the executor "
                   "processes); deploy it with 'sparkstorm spark-submit', or leave the key "
                   "unset for Nimbus's supervisors")
            raise TopologyError(msg, code="HOSTING_NEEDS_SPARK_SUBMIT")
        code = self.inbox.finished(upload_id)
        with self.lock:
            topology_id, now = self._store_topology(name, spec, conf, code)
            self.state.set_storm(topology_id, self._storm_base(name, spec, conf, now, active,
                                                               owner))
            logger.info("submitted topology %s", topology_id)
        self.assigner.request(topology_id, "submitted")  # outside the lock: it takes it
        return topology_id

    def register_application(self, name: str, spec_data: object,
                             overrides: Mapping[str, object], application: Mapping[str, Any],
                             *, active: bool = True, owner: str = "") -> dict[str, str]:
        """Register a topology running as a Spark application of its own.

        See :mod:`~sparkstorm.cluster.nimbus.applications`; returns its ``topology_id`` and
        the ``worker_id`` its driver heartbeats under.
        """
        result = register_application(self, name, parse_spec(spec_data), overrides,
                                      application, active=active, owner=owner)
        logger.info("registered application topology %s (driver on %s)",
                    result["topology_id"], application.get("host"))
        return result

    def _store_topology(self, name: str, spec: TopologySpec, conf: dict[str, Any],
                        code: Path | None) -> tuple[str, int]:
        """Name a checked topology and write its files and task infos; its id and time.

        The caller holds :attr:`lock` and writes the StormBase next (submit and an
        application's registration alike). The counter moves only once every check passed:
        a refusal changes nothing.
        """
        self._check_name_free(name)
        now = int(self.clock())
        topology_id = f"{name}-{self.stormdist.next_counter()}-{now}"
        conf["storm.id"] = topology_id
        self.stormdist.write(topology_id, code, spec.to_dict(), conf)
        self._setup_state(topology_id, spec.to_dict(), conf)
        return topology_id, now

    def _setup_state(self, topology_id: str, spec: dict[str, Any],
                     conf: dict[str, Any]) -> None:
        """Storm's ``setup-heartbeats!`` and ``set-task!`` for every task.

        Written before the StormBase, so a topology in the store always has them (if the submit
        dies in between, the cleaner removes them with the topology's folder).
        """
        self.state.setup_heartbeats(topology_id)
        for task_id, component_id in topology_tasks(spec, conf).items():
            self.state.set_task_info(topology_id, task_id, TaskInfo(component_id))

    def name_refusal(self, name: str) -> SparkstormError | None:
        """Storm's ``isTopologyNameAllowed``: why ``name`` cannot be submitted now.

        An invalid name (``INVALID_TOPOLOGY_NAME``) or a live topology of that name, killed ones
        included until removed (``TOPOLOGY_ALREADY_ALIVE``); None when it can.
        """
        try:
            validate_topology_name(name)
            self._check_name_free(name)
        except SparkstormError as exc:
            return exc
        return None

    def _check_name_free(self, name: str) -> None:
        for topology_id, base in self.storms().items():
            if base.name == name:
                msg = (f"topology {name!r} is already alive as {topology_id} "
                       f"({base.status}); kill it first or submit under another --name")
                raise NimbusError(msg, code="TOPOLOGY_ALREADY_ALIVE")

    def _topology_conf(self, spec: TopologySpec, overrides: Mapping[str, object],
                       name: str) -> dict[str, Any]:
        """Nimbus's conf < the spec's conf < the submitter's overrides, validated."""
        own = {**spec.config, **overrides, "topology.name": name}
        conf = self.conf | validate_conf(own, where=f"topology {name!r} conf")
        for component in spec.components:  # fail now on a bad component config value
            component_conf(conf, component.config, component.name or "?")
        return {k: v for k, v in conf.items() if k not in SECRET_KEYS}

    @staticmethod
    def _storm_base(name: str, spec: TopologySpec, conf: Mapping[str, object], now: int,
                    active: bool, owner: str) -> StormBase:
        workers = max(1, conf_int(conf, "topology.workers"))
        return StormBase(name, TopologyStatus.ACTIVE if active else TopologyStatus.INACTIVE,
                         now, workers, {c.name or "?": c.par for c in spec.components}, owner)

    # --- actions ------------------------------------------------------------------------------

    def kill(self, topology_id: str, wait_secs: int | None = None) -> None:
        """Deactivate now, remove after ``wait_secs`` (default: its message timeout).

        The removal time is stored in the StormBase, so a restarted Nimbus still does it.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``.
        """
        with self.lock:
            base = self.storm(topology_id)
            if wait_secs is None:
                wait_secs = conf_int(self.topology_conf(topology_id),
                                     "topology.message.timeout.secs")
            prev = base.prev_status if base.status == TopologyStatus.KILLED else base.status
            self.state.update_storm(topology_id, status=TopologyStatus.KILLED, prev_status=prev,
                                    action_options={"wait_secs": wait_secs,
                                                    "kill_at": self.clock() + wait_secs})
            logger.info("killing topology %s in %s s", topology_id, wait_secs)
            if wait_secs <= 0:
                self.remove(topology_id)

    def remove(self, topology_id: str) -> None:
        """Forget a killed topology: state first (supervisors stop its worker), then disk."""
        with self.lock:
            self.state.teardown_topology(topology_id)
            self.cleaner.topology_removed(topology_id)  # its checkpoints go after retention
            self.stormdist.remove(topology_id)
            logger.info("removed topology %s", topology_id)

    def rebalance(self, topology_id: str, wait_secs: int | None = None,
                  num_workers: int | None = None,
                  executors: Mapping[str, int] | None = None) -> None:
        """Storm's rebalance: deactivate now, change the executor counts later.

        After ``wait_secs`` (default: the message timeout) the new executor counts are set and
        the topology is reassigned: with the executors unchanged (``num_workers`` only) the
        workers that stay keep running with the executors their share allows and only the
        others move (Storm's rebalance); new executor counts start new workers.

        The new counts and the due time are kept in the StormBase (status REBALANCING), so a
        restarted Nimbus finishes the rebalance. Executors change up to the component's task
        count (tasks are fixed for the topology's life); ``num_workers`` changes how many
        worker processes the executors are spread over.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``, ``TOPOLOGY_BEING_KILLED``,
                ``TOPOLOGY_BEING_REBALANCED``, ``REBALANCE_UNKNOWN_COMPONENT``,
                ``REBALANCE_INVALID`` or ``PARALLELISM_ABOVE_TASKS``; nothing changes then.
        """
        with self.lock:
            base = self.storm(topology_id)
            if base.status in (TopologyStatus.KILLED, TopologyStatus.REBALANCING):
                code = ("TOPOLOGY_BEING_KILLED" if base.status == TopologyStatus.KILLED
                        else "TOPOLOGY_BEING_REBALANCED")
                msg = (f"topology {topology_id} is {str(base.status).lower()}; it cannot be "
                       "rebalanced now")
                raise NimbusError(msg, code=code)
            if is_application(base) and num_workers is not None:
                msg = (f"topology {topology_id} is a Spark application of its own: its "
                       "workers are its hosting shares (topology.workers), fixed for its "
                       "life; rebalance its executors with -e, or deploy it again with "
                       "another topology.workers")
                raise NimbusError(msg, code="REBALANCE_INVALID")
            counts = self._checked_executors(topology_id, executors or {})
            if num_workers is not None and (isinstance(num_workers, bool)
                                            or not isinstance(num_workers, int)
                                            or num_workers < 1):
                msg = f"numWorkers must be a positive integer, got {num_workers!r}"
                raise NimbusError(msg, code="REBALANCE_INVALID")
            if wait_secs is None:
                wait_secs = conf_int(self.topology_conf(topology_id),
                                     "topology.message.timeout.secs")
            wait_secs = max(0, int(wait_secs))
            options: dict[str, Any] = {"wait_secs": wait_secs,
                                       "rebalance_at": self.clock() + wait_secs,
                                       "num_executors": counts}
            if num_workers is not None:
                options["num_workers"] = num_workers
            self.state.update_storm(topology_id, status=TopologyStatus.REBALANCING,
                                    prev_status=base.status, action_options=options)
            logger.info("rebalancing topology %s in %s s: %s", topology_id, wait_secs, options)
        if wait_secs == 0:  # outside the lock: the assignment thread takes it
            self.do_rebalance(topology_id)

    def _checked_executors(self, topology_id: str,
                           executors: Mapping[str, int]) -> dict[str, int]:
        spec = self.topology_spec(topology_id)
        tasks = {str(c["name"]): int(c.get("num_tasks", 1)) for c in spec["components"]}
        counts: dict[str, int] = {}
        for name, count in executors.items():
            problem = executor_count_problem(topology_id, name, count, tasks)
            if problem is not None:
                code, msg = problem
                raise NimbusError(msg, code=code)
            counts[name] = count
        return counts

    def do_rebalance(self, topology_id: str) -> None:
        """Apply a due rebalance.

        New executor counts go into the spec, the previous status comes back, and a new assignment
        follows: with new counts, new worker ids (the supervisors replace the workers, and the
        new ones start with the new counts); with the same counts the staying workers keep their
        ids and follow their new executors (see :meth:`rebalance`).
        """
        with self.lock:
            base = self.storm(topology_id)
            if base.status != TopologyStatus.REBALANCING:
                return
            counts = {str(k): int(v) for k, v in
                      (base.action_options.get("num_executors") or {}).items()}
            if counts:
                spec = self.topology_spec(topology_id)
                for component in spec["components"]:
                    if component["name"] in counts:
                        component["par"] = counts[component["name"]]
                self.stormdist.write_json(topology_id, SPEC, spec)
            executors = {**base.component_executors, **counts}
            workers = int(base.action_options.get("num_workers") or base.num_workers)
            self.state.update_storm(topology_id, status=base.prev_status
                                    or TopologyStatus.ACTIVE, prev_status=None,
                                    action_options={}, component_executors=executors,
                                    num_workers=workers)
            logger.info("rebalanced topology %s: executors %s", topology_id, executors)
        if is_application(base):  # no supervisor: its driver regroups in place
            reassign_in_place(self, topology_id)
            return
        self.assigner.request(topology_id, "rebalanced")  # outside the lock: it takes it

    def set_active(self, topology_id: str, active: bool) -> None:
        """Activate or deactivate a topology's spouts.

        The worker learns it at its next heartbeat.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``; ``TOPOLOGY_BEING_KILLED`` for a killed one.
        """
        with self.lock:
            base = self.storm(topology_id)
            if base.status in (TopologyStatus.KILLED, TopologyStatus.REBALANCING):
                being = "killed" if base.status == TopologyStatus.KILLED else "rebalanced"
                msg = (f"topology {topology_id} is being {being}; it cannot be "
                       f"{'activated' if active else 'deactivated'}")
                raise NimbusError(msg, code=f"TOPOLOGY_BEING_{being.upper()}")
            status = TopologyStatus.ACTIVE if active else TopologyStatus.INACTIVE
            self.state.update_storm(topology_id, status=status)

    # --- reads --------------------------------------------------------------------------------

    def storms(self) -> dict[str, StormBase]:
        """Every topology's StormBase by id."""
        return all_storms(self.state)

    def storm(self, topology_id: str) -> StormBase:
        """One topology's StormBase.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``.
        """
        return require_storm(self.state, topology_id)

    def topology_spec(self, topology_id: str) -> dict[str, Any]:
        """The submitted spec (JSON form)."""
        return self.stormdist.spec(topology_id)

    def topology_conf(self, topology_id: str) -> dict[str, Any]:
        """The effective conf the topology runs with."""
        return self.stormdist.conf(topology_id)


def parse_spec(data: object) -> TopologySpec:
    """Build a :class:`TopologySpec` from its JSON form, checking its shape and types first.

    Raises:
        TopologyError: ``INVALID_TOPOLOGY_SPEC`` naming the path of the first value that does
            not have the spec's shape (``components[2].outputs[0].fields[1]``), or
            ``PARALLELISM_BELOW_ONE`` / ``TASKS_BELOW_ONE`` for a non-integer ``par`` /
            ``num_tasks`` (see :func:`~sparkstorm.topology.spec.check_spec_dict`).
        NimbusError: ``INVALID_TOPOLOGY_SPEC`` if building it fails in a way the shape check
            missed (a bug, logged with its traceback; the client still gets a 400).
    """
    try:
        return TopologySpec.from_dict(data)
    except SparkstormError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        logger.exception("a topology spec passed the shape check but could not be read")
        msg = (f"the topology spec does not have the shape of TopologySpec.to_dict() "
               f"({type(exc).__name__}: {exc}); submit with 'sparkstorm submit FILE.py'")
        raise NimbusError(msg, code="INVALID_TOPOLOGY_SPEC") from exc
