"""Topologies that run as Spark applications of their own and register with a Nimbus.

A topology deployed with ``spark-submit`` (:mod:`sparkstorm.spark_app`) is one Spark
application: its driver runs the window loop and Spark hosts its executors, with no
supervisor. It still speaks the worker umbilical, to a Nimbus inside its own driver (which
serves its REST API and UI) or, with ``nimbus.host`` set, to a cluster's Nimbus as well, so
that the UI lists it beside supervisor-run topologies. Registering writes what a submit
writes (the spec and conf, the task infos, the StormBase, marked with where the
application runs) and an assignment of every executor to one slot, the application's
driver, which Nimbus never moves: there is no supervisor to move it to. Actions reach the
driver in its heartbeat answers, as they reach a worker's: deactivate, activate, debug
sampling, log levels, stack traces, ``rebalance -e`` (the driver regroups in place) and
kill (the answer says ``shutdown`` once the kill is due: the application drains and ends).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sparkstorm.cluster.nimbus.assigner import topology_executors
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.store.records import Assignment, StormBase, WorkerSlot
from sparkstorm.topology.validate import (
    validate_topology,
    validate_topology_name,
    validate_windowed_bolts,
)

if TYPE_CHECKING:
    from sparkstorm.topology.spec import TopologySpec

APPLICATION_FIELDS = ("host", "rest_url", "ui_url", "spark_ui_url", "spark_app_id")
"""What an application says about where it runs (shown in the UI and REST)."""


def register_application(nimbus: Any, name: str, spec: TopologySpec,
                         overrides: Mapping[str, object], application: Mapping[str, Any],
                         *, active: bool = True, owner: str = "") -> dict[str, str]:
    """Register a running application topology; return its ``topology_id`` and ``worker_id``.

    ``nimbus`` is the :class:`~sparkstorm.cluster.nimbus.service.Nimbus` (it calls this).
    The worker id is the driver's: it heartbeats under it. Checked as a submit is.

    Raises:
        TopologyError, ConfigError: what a submit raises for the same spec and conf.
        NimbusError: ``TOPOLOGY_ALREADY_ALIVE`` (the name is taken), ``BAD_REQUEST`` (no
            ``host`` in ``application``).
    """
    host = str(application.get("host") or "")
    if not host:
        msg = "an application registers with the host its driver runs on ('host')"
        raise NimbusError(msg, code="BAD_REQUEST")
    where = {key: str(application[key]) for key in APPLICATION_FIELDS
             if application.get(key)}
    validate_topology_name(name)
    validate_topology(spec, topology_name=name)
    conf = nimbus._topology_conf(spec, overrides, name)  # the checks of a submit
    validate_windowed_bolts(spec, conf)
    with nimbus.lock:
        topology_id, now = nimbus._store_topology(name, spec, conf, None)  # no code: its own
        worker_id = str(uuid.uuid4())
        nimbus.state.set_assignment(topology_id, _assignment(
            topology_id, topology_executors(spec.to_dict(), conf), host, worker_id, now))
        nimbus.state.set_storm(topology_id, replace(
            nimbus._storm_base(name, spec, conf, now, active, owner), application=where))
    return {"topology_id": topology_id, "worker_id": worker_id}


def reassign_in_place(nimbus: Any, topology_id: str) -> None:
    """After a ``rebalance -e`` of an application: its executors, all on its one slot.

    The driver takes the new counts from its next heartbeat answer and regroups them in
    place (``engine.plan.regroup``); nothing moves between hosts through Nimbus.
    """
    with nimbus.lock:
        old = nimbus.state.get_assignment(topology_id)
        if old is None or not old.worker_ids:
            return
        slot, worker_id = next(iter(old.worker_ids.items()))
        executors = topology_executors(nimbus.topology_spec(topology_id),
                                       nimbus.topology_conf(topology_id))
        now = int(nimbus.clock())
        nimbus.state.set_assignment(topology_id, Assignment(
            topology_id, dict.fromkeys(executors, slot), dict.fromkeys(executors, now),
            {slot: worker_id}, dict(old.node_host)))


def _assignment(topology_id: str, executors: list[Any], host: str, worker_id: str,
                now: int) -> Assignment:
    # the slot's node is the application, not a supervisor; its port is a placeholder
    slot = WorkerSlot(f"application:{host}", 0)
    return Assignment(topology_id, dict.fromkeys(executors, slot), dict.fromkeys(executors, now),
                      {slot: worker_id}, {slot.node: host})


def is_application(base: StormBase | None) -> bool:
    """Whether ``base`` is a registered application's (never assigned to supervisors)."""
    return base is not None and base.application is not None


def application_view(base: StormBase, conf: Mapping[str, Any]) -> dict[str, Any] | None:
    """The topology page's ``application``: where an application runs, None for the others.

    Its addresses, and where its executors' logs are: executors hosted by Spark tasks write
    them on the Spark executor's host, which no logviewer serves (there is no supervisor),
    so the page says where instead (``spark_app.share.share_conf`` puts them there).

    Example:
        >>> from sparkstorm.cluster.store.records import TopologyStatus
        >>> base = StormBase("app", TopologyStatus.ACTIVE, 0, 1,
        ...                  application={"host": "h", "spark_ui_url": "http://h:4040"})
        >>> view = application_view(base, {"topology.executor.log.dir": "/var/log/app"})
        >>> view["sparkUiUrl"], view["executorLogDir"]
        ('http://h:4040', '/var/log/app')
    """
    if base.application is None:
        return None
    where = base.application
    log_dir = conf.get("topology.executor.log.dir")
    folder = (f"{log_dir}/executor-<id>.log on the host of the Spark executor that hosts them"
              if log_dir else "executor-<id>.log in sparkstorm-logs/ of their Spark executor's "
              "working folder, beside its stdout and stderr (with a local master: a temporary "
              "folder removed when they stop; set topology.executor.log.dir to keep them)")
    return {"host": where.get("host"), "restUrl": where.get("rest_url"),
            "uiUrl": where.get("ui_url") or None,
            "sparkUiUrl": where.get("spark_ui_url") or None,
            "sparkAppId": where.get("spark_app_id") or None,
            "executorLogDir": log_dir or None,
            "executorLogs": "the log viewer serves the driver's log; executors hosted by "
                            f"Spark write theirs as {folder}; the Spark UI's Executors tab "
                            "lists each Spark executor with links to its stdout and stderr"}


__all__ = ["application_view", "is_application", "reassign_in_place",
           "register_application"]
