"""The typed records of the cluster state and their JSON form.

Frozen dataclasses named after Storm's (``StormBase``, ``Assignment``, ``TaskInfo``,
``SupervisorInfo``, ``ClusterWorkerHeartbeat``, ``ErrorInfo``). Each has ``to_json()`` (a
JSON-ready dict) and ``from_json(obj)``, which checks every field and raises
:class:`RecordError` naming the bad one. Unknown fields are ignored, so a newer writer does
not break an older reader.

Example:
    >>> slot = WorkerSlot("node1", 6700)
    >>> a = Assignment("wc-1-17", {(1, 2): slot}, worker_ids={slot: "w-1"})
    >>> Assignment.from_json(a.to_json()) == a
    True
    >>> sorted(a.slots()), a.executors_in(slot)
    ([WorkerSlot(node='node1', port=6700)], [(1, 2)])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

ExecutorId = tuple[int, int]
"""An executor as Storm names it: (first task id, last task id)."""

_MISSING = object()


class RecordError(ValueError):
    """A JSON object that does not fit a record.

    :class:`ClusterState` turns it into a
    :class:`~sparkstorm.cluster.store.errors.CorruptStateError` naming the node.
    """


class TopologyStatus(StrEnum):
    """Storm's topology statuses."""

    ACTIVE = "ACTIVE"
    INACTIVE = "INACTIVE"
    KILLED = "KILLED"
    REBALANCING = "REBALANCING"


class _Fields:
    """Typed access to the fields of a decoded JSON object, with messages naming the field."""

    def __init__(self, obj: object, record: str) -> None:
        if not isinstance(obj, dict):
            msg = f"a {record} must be a JSON object, got {type(obj).__name__}"
            raise RecordError(msg)
        self._obj = obj
        self._record = record

    def get(self, name: str, kinds: type | tuple[type, ...], default: object = _MISSING) -> Any:
        value = self._obj.get(name, default)
        if value is _MISSING:
            msg = f"{self._record} has no field {name!r}"
            raise RecordError(msg)
        if value is not default and (isinstance(value, bool) and bool not in _tuple(kinds)
                                     or not isinstance(value, kinds)):
            msg = f"{self._record} field {name!r} is {value!r}, of the wrong type"
            raise RecordError(msg)
        return value

    def status(self, name: str, default: object = _MISSING) -> TopologyStatus | None:
        value = self.get(name, (str, type(None)), default)
        if value is None:
            return None
        try:
            return TopologyStatus(value)
        except ValueError:
            msg = f"{self._record} field {name!r} is {value!r}, not a topology status"
            raise RecordError(msg) from None


def _tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{what} is {value!r}, not an int"
        raise RecordError(msg)
    return value


_EXECUTOR_ID_PARTS = 2
"""An executor id is ``[first task, last task]``."""


def _executor(value: object, what: str) -> ExecutorId:
    if not isinstance(value, list) or len(value) != _EXECUTOR_ID_PARTS:
        msg = f"{what} is {value!r}, not [first task, last task]"
        raise RecordError(msg)
    return _int(value[0], what), _int(value[1], what)


@dataclass(frozen=True, order=True)
class WorkerSlot:
    """A supervisor port that can host one worker: Storm's ``WorkerSlot`` (node, port)."""

    node: str
    port: int


@dataclass(frozen=True)
class StormBase:
    """A submitted topology as Nimbus sees it (``/storms/<id>``).

    Attributes:
        name: the topology's name (its id is ``<name>-<counter>-<epoch secs>``).
        status: ACTIVE, INACTIVE, KILLED or REBALANCING.
        launch_time_secs: epoch seconds of the submission.
        num_workers: workers requested (``topology.workers``).
        component_executors: executors per component id.
        owner: the submitting user.
        prev_status: the status before the current KILLED/REBALANCING transition.
        action_options: options of that transition, e.g. ``{"wait_secs": 30}`` for a kill,
            ``{"num_workers": 2, "num_executors": {"split": 4}}`` for a rebalance.
        application: for a topology that runs as a Spark application of its own
            (``spark-submit``) and registered itself, where it runs:
            ``{"host": ..., "rest_url": ..., "ui_url": ..., "spark_ui_url": ...}``; Nimbus
            never assigns such a topology to supervisors. None for a submitted one.
    """

    name: str
    status: TopologyStatus
    launch_time_secs: int
    num_workers: int
    component_executors: dict[str, int] = field(default_factory=dict)
    owner: str = ""
    prev_status: TopologyStatus | None = None
    action_options: dict[str, Any] = field(default_factory=dict)
    application: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "name": self.name,
            "status": str(self.status),
            "launch_time_secs": self.launch_time_secs,
            "num_workers": self.num_workers,
            "component_executors": dict(self.component_executors),
            "owner": self.owner,
            "prev_status": None if self.prev_status is None else str(self.prev_status),
            "action_options": dict(self.action_options),
            **({"application": dict(self.application)} if self.application else {}),
        }

    @classmethod
    def from_json(cls, obj: object) -> StormBase:
        """Build from the JSON form; raises :class:`RecordError` if it does not fit."""
        f = _Fields(obj, "StormBase")
        executors = f.get("component_executors", dict, {})
        return cls(
            name=f.get("name", str),
            status=f.status("status") or TopologyStatus.INACTIVE,
            launch_time_secs=f.get("launch_time_secs", int),
            num_workers=f.get("num_workers", int),
            component_executors={str(k): _int(v, f"executors of {k!r}")
                                 for k, v in executors.items()},
            owner=f.get("owner", str, ""),
            prev_status=f.status("prev_status", None),
            action_options=f.get("action_options", dict, {}),
            application=f.get("application", dict, None),
        )


@dataclass(frozen=True)
class Assignment:
    """Where a topology's executors run (``/assignments/<id>``).

    Attributes:
        topology_id: the topology.
        executor_slots: each executor's worker slot.
        executor_start_time_secs: when each executor was (re)assigned, epoch seconds; Nimbus
            uses it for ``nimbus.task.launch.secs``.
        worker_ids: the id of the worker Nimbus wants in each slot.
        node_host: host name of each supervisor (node) id.
    """

    topology_id: str
    executor_slots: dict[ExecutorId, WorkerSlot]
    executor_start_time_secs: dict[ExecutorId, int] = field(default_factory=dict)
    worker_ids: dict[WorkerSlot, str] = field(default_factory=dict)
    node_host: dict[str, str] = field(default_factory=dict)

    def slots(self) -> set[WorkerSlot]:
        """Return the slots in use."""
        return set(self.executor_slots.values())

    def executors_in(self, slot: WorkerSlot) -> list[ExecutorId]:
        """Return the executors assigned to ``slot``, sorted."""
        return sorted(e for e, s in self.executor_slots.items() if s == slot)

    def driver_slot(self) -> WorkerSlot | None:
        """Return the slot whose worker runs the topology's driver.

        It is the slot of the lowest executor, so every reader of the assignment agrees
        without another field.
        """
        if not self.executor_slots:
            return None
        return self.executor_slots[min(self.executor_slots)]

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (executors and slots as lists: JSON keys are strings)."""
        return {
            "topology_id": self.topology_id,
            "executors": [
                {"executor": list(e), "node": s.node, "port": s.port,
                 "start_time_secs": self.executor_start_time_secs.get(e)}
                for e, s in sorted(self.executor_slots.items())
            ],
            "workers": [{"node": s.node, "port": s.port, "worker_id": w}
                        for s, w in sorted(self.worker_ids.items())],
            "node_host": dict(self.node_host),
        }

    @classmethod
    def from_json(cls, obj: object) -> Assignment:
        """Build from the JSON form; raises :class:`RecordError` if it does not fit."""
        f = _Fields(obj, "Assignment")
        slots: dict[ExecutorId, WorkerSlot] = {}
        starts: dict[ExecutorId, int] = {}
        for item in f.get("executors", list):
            g = _Fields(item, "Assignment executor")
            executor = _executor(g.get("executor", list), "Assignment executor")
            slots[executor] = WorkerSlot(g.get("node", str), g.get("port", int))
            start = g.get("start_time_secs", (int, type(None)), None)
            if start is not None:
                starts[executor] = start
        workers = {}
        for item in f.get("workers", list, []):
            g = _Fields(item, "Assignment worker")
            workers[WorkerSlot(g.get("node", str), g.get("port", int))] = g.get("worker_id", str)
        return cls(f.get("topology_id", str), slots, starts, workers,
                   {str(k): str(v) for k, v in f.get("node_host", dict, {}).items()})


@dataclass(frozen=True)
class TaskInfo:
    """Which component a task belongs to (``/tasks/<id>/<task id>``).

    As Storm 0.7's ``TaskInfo``; written once at submit (tasks are fixed for the topology's life).

    Attributes:
        component_id: the component's id.
    """

    component_id: str

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {"component_id": self.component_id}

    @classmethod
    def from_json(cls, obj: object) -> TaskInfo:
        """Build from the JSON form; raises :class:`RecordError` if it does not fit."""
        return cls(_Fields(obj, "TaskInfo").get("component_id", str))


@dataclass(frozen=True)
class SupervisorInfo:
    """A live supervisor (``/supervisors/<id>``, ephemeral).

    Attributes:
        supervisor_id: the supervisor's id (its node id in assignments).
        hostname: the host it runs on.
        ports: all its slots' ports (``supervisor.slots.ports``).
        used_ports: the ports running a worker now.
        uptime_secs: seconds since the supervisor started.
        version: the sparkstorm version it runs.
        time_secs: registration time, epoch seconds: when the supervisor wrote this record
            (it re-registers on each heartbeat, so this is also its latest heartbeat).
        logviewer_url: where its logviewer answers (``http://host:port``), "" when none.
    """

    supervisor_id: str
    hostname: str
    ports: tuple[int, ...]
    used_ports: tuple[int, ...] = ()
    uptime_secs: float = 0.0
    version: str = ""
    time_secs: float = 0.0
    logviewer_url: str = ""

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "supervisor_id": self.supervisor_id,
            "hostname": self.hostname,
            "ports": list(self.ports),
            "used_ports": list(self.used_ports),
            "uptime_secs": self.uptime_secs,
            "version": self.version,
            "time_secs": self.time_secs,
            "logviewer_url": self.logviewer_url,
        }

    @classmethod
    def from_json(cls, obj: object) -> SupervisorInfo:
        """Build from the JSON form; raises :class:`RecordError` if it does not fit."""
        f = _Fields(obj, "SupervisorInfo")
        return cls(
            supervisor_id=f.get("supervisor_id", str),
            hostname=f.get("hostname", str),
            ports=tuple(_int(p, "SupervisorInfo port") for p in f.get("ports", list)),
            used_ports=tuple(_int(p, "SupervisorInfo used port")
                             for p in f.get("used_ports", list, [])),
            uptime_secs=float(f.get("uptime_secs", (int, float), 0.0)),
            version=f.get("version", str, ""),
            time_secs=float(f.get("time_secs", (int, float), 0.0)),
            logviewer_url=f.get("logviewer_url", str, ""),
        )


@dataclass(frozen=True)
class WorkerHeartbeat:
    """A worker's latest heartbeat as Nimbus stores it (``/workerbeats/<id>/<worker>``).

    Attributes:
        topology_id: the topology.
        worker_id: the worker.
        time_secs: when the worker sent it, epoch seconds.
        executor_stats: per-executor statistics of the windows since the last heartbeat,
            JSON-ready, keyed by executor (docs/ARCHITECTURE.md, "The umbilical").
        uptime_secs: seconds since the worker started.
        node: the supervisor id of its slot.
        port: the port of its slot.
    """

    topology_id: str
    worker_id: str
    time_secs: float
    executor_stats: dict[str, Any] = field(default_factory=dict)
    uptime_secs: float = 0.0
    node: str = ""
    port: int = 0

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {
            "topology_id": self.topology_id,
            "worker_id": self.worker_id,
            "time_secs": self.time_secs,
            "executor_stats": self.executor_stats,
            "uptime_secs": self.uptime_secs,
            "node": self.node,
            "port": self.port,
        }

    @classmethod
    def from_json(cls, obj: object) -> WorkerHeartbeat:
        """Build from the JSON form; raises :class:`RecordError` if it does not fit."""
        f = _Fields(obj, "WorkerHeartbeat")
        return cls(
            topology_id=f.get("topology_id", str),
            worker_id=f.get("worker_id", str),
            time_secs=float(f.get("time_secs", (int, float))),
            executor_stats=f.get("executor_stats", dict, {}),
            uptime_secs=float(f.get("uptime_secs", (int, float), 0.0)),
            node=f.get("node", str, ""),
            port=f.get("port", int, 0),
        )


@dataclass(frozen=True)
class ErrorInfo:
    """An error a component reported (``/errors/<id>/<component>/e<seq>``).

    Attributes:
        component: the component id.
        error: the error text (message and stack trace).
        time_secs: when it happened, epoch seconds.
        host: the host of the worker that reported it.
        port: the port of that worker's slot.
    """

    component: str
    error: str
    time_secs: float
    host: str = ""
    port: int = 0

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form."""
        return {"component": self.component, "error": self.error,
                "time_secs": self.time_secs, "host": self.host, "port": self.port}

    @classmethod
    def from_json(cls, obj: object) -> ErrorInfo:
        """Build from the JSON form; raises :class:`RecordError` if it does not fit."""
        f = _Fields(obj, "ErrorInfo")
        return cls(f.get("component", str), f.get("error", str),
                   float(f.get("time_secs", (int, float))), f.get("host", str, ""),
                   f.get("port", int, 0))
