"""The typed cluster state on top of the raw store, once for both backends.

Storm's ``IStormClusterState`` over ``IStateStorage``: Nimbus, supervisors, workers and the UI
read and write storms, assignments, task infos, supervisors, worker heartbeats, errors and
committed windows through :class:`ClusterState`, and never see paths or bytes. Records are JSON
(:mod:`~sparkstorm.cluster.store.records`) at the paths of
:mod:`~sparkstorm.cluster.store.layout`.

A node that does not decode raises :class:`~sparkstorm.cluster.store.errors.CorruptStateError`
naming the path; the node is never deleted or rewritten by a reader. Listing methods
(:meth:`ClusterState.get_worker_heartbeats`, :meth:`ClusterState.all_supervisor_info`) and
watch helpers log such a node and skip it, so one bad node cannot stop a daemon's loop.

Example:
    >>> import tempfile
    >>> from sparkstorm.cluster.store.embedded import EmbeddedStore
    >>> with EmbeddedStore(tempfile.mkdtemp() + "/store.sqlite") as store:
    ...     state = ClusterState(store)
    ...     state.set_storm("wc-1-17", StormBase("wc", TopologyStatus.ACTIVE, 17, 1))
    ...     state.active_storms(), state.get_storm("wc-1-17").status
    (['wc-1-17'], <TopologyStatus.ACTIVE: 'ACTIVE'>)
"""

from __future__ import annotations

import contextlib
import json
import logging
import zlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from sparkstorm.cluster.store import layout
from sparkstorm.cluster.store.base import StateStore, Watch
from sparkstorm.cluster.store.errors import (
    BadVersionError,
    CorruptStateError,
    NodeExistsError,
    NoNodeError,
)
from sparkstorm.cluster.store.records import (
    Assignment,
    ErrorInfo,
    ExecutorId,
    RecordError,
    StormBase,
    SupervisorInfo,
    TaskInfo,
    TopologyStatus,
    WorkerHeartbeat,
    WorkerSlot,
)

logger = logging.getLogger(__name__)

MAX_ERRORS_PER_COMPONENT = 10
"""Errors kept per component, as Storm keeps (the oldest go first)."""


class _Record(Protocol):
    def to_json(self) -> dict[str, Any]: ...


R = TypeVar("R")


def encode(record: _Record) -> bytes:
    """Return a record's bytes: compact JSON with sorted keys (stable for diffs and tests)."""
    return json.dumps(record.to_json(), sort_keys=True, separators=(",", ":")).encode()


ZLIB_MAGIC = b"x"
"""First byte of a zlib stream (deflate, 32 KiB window), never the first of our JSON."""


def encode_compressed(record: _Record) -> bytes:
    """A record's JSON, zlib-compressed.

    For heartbeats, which carry statistics over several windows every second (about 10x smaller;
    ZooKeeper nodes hold at most 1 MiB).
    """
    return zlib.compress(encode(record), 1)


def decode(path: str, raw: bytes, parse: Callable[[object], R], kind: str) -> R:
    """Decode a node's bytes with ``parse``.

    Raises:
        CorruptStateError: the bytes are not UTF-8 JSON or do not fit the record; the
            message names the path, the problem and the first bytes.
    """
    try:
        if raw[:1] == ZLIB_MAGIC:  # compressed (heartbeats); JSON never starts with "x"
            raw = zlib.decompress(raw)
        return parse(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError, RecordError, zlib.error) as exc:
        msg = (
            f"state store node {path!r} does not hold a valid {kind}: {exc}; it starts with "
            f"{raw[:80]!r}; it was left untouched: fix or delete the node (zkCli.sh, or "
            "sqlite3 on <storm.local.dir>/state/store.sqlite), then let its writer rewrite it"
        )
        raise CorruptStateError(msg, code=CorruptStateError.default_code) from exc


class ClusterState:
    """The cluster state, typed.

    Storms, assignments, task infos, supervisors, worker heartbeats, errors and committed windows.

    Thread-safe as the store is. Creates the top-level directories on construction.

    Args:
        store: an open state store; the caller keeps ownership and closes it.

    Raises:
        StoreUnavailableError: the store cannot be reached.
    """

    def __init__(self, store: StateStore) -> None:
        self.store = store
        for directory in layout.ROOTS:
            store.ensure_path(directory)

    # --- helpers ------------------------------------------------------------------------------

    def _put(self, path: str, data: bytes) -> None:
        """Create or overwrite a persistent node."""
        for _ in range(10):  # a concurrent delete or create makes us switch once or twice
            try:
                self.store.set(path, data)
                return
            except NoNodeError:
                pass
            try:
                self.store.create(path, data)
                return
            except NodeExistsError:
                pass
        self.store.set(path, data)

    def _read(self, path: str, parse: Callable[[object], R], kind: str) -> R | None:
        try:
            raw, _ = self.store.get(path)
        except NoNodeError:
            return None
        return decode(path, raw, parse, kind)

    def _delete(self, path: str, *, recursive: bool = False) -> None:
        with contextlib.suppress(NoNodeError):  # already gone: deleting is idempotent here
            self.store.delete(path, recursive=recursive)

    def _children(self, path: str) -> list[str]:
        try:
            return [layout.decode(name) for name in self.store.children(path)]
        except NoNodeError:
            return []

    # --- storms -------------------------------------------------------------------------------

    def set_storm(self, topology_id: str, base: StormBase) -> None:
        """Write a topology's :class:`StormBase` (creating or replacing it)."""
        self._put(layout.storm_path(topology_id), encode(base))

    def get_storm(self, topology_id: str) -> StormBase | None:
        """Read a topology's :class:`StormBase`; None when it has none.

        Raises:
            CorruptStateError: the node does not decode.
        """
        return self._read(layout.storm_path(topology_id), StormBase.from_json, "StormBase")

    def update_storm(
        self,
        topology_id: str,
        change: Callable[[StormBase], StormBase] | None = None,
        **fields: Any,
    ) -> StormBase:
        """Change a :class:`StormBase` atomically.

        Compare-and-set: re-read and re-applied when another writer got in between.

        Examples: ``state.update_storm(tid, status=TopologyStatus.INACTIVE)``;
        ``state.update_storm(tid, lambda b: replace(b, num_workers=b.num_workers + 1))``.

        Args:
            topology_id: the topology.
            change: a function from the current StormBase to the new one; it may run more
                than once, so it must not have side effects.
            fields: fields to set (after ``change``, if both are given).

        Returns:
            The new :class:`StormBase`.

        Raises:
            NoNodeError: the topology has no StormBase.
            CorruptStateError: the node does not decode.
        """
        path = layout.storm_path(topology_id)
        while True:
            raw, version = self.store.get(path)
            base = decode(path, raw, StormBase.from_json, "StormBase")
            base = replace(change(base) if change else base, **fields)
            try:
                self.store.set(path, encode(base), version)
                return base
            except BadVersionError:
                continue  # someone else updated it in between: re-read and re-apply

    def active_storms(self) -> list[str]:
        """Return the ids of the topologies that have a StormBase (any status), sorted."""
        return self._children(layout.STORMS)

    def remove_storm(self, topology_id: str) -> None:
        """Remove a topology's task infos, assignment and StormBase (Storm's ``remove-storm!``).

        Its worker heartbeats, errors and committed window stay until :meth:`teardown_topology`.
        """
        self._delete(layout.tasks_dir(topology_id), recursive=True)
        self._delete(layout.assignment_path(topology_id))
        self._delete(layout.storm_path(topology_id))

    # --- assignments --------------------------------------------------------------------------

    def set_assignment(self, topology_id: str, assignment: Assignment) -> None:
        """Write a topology's :class:`Assignment`."""
        self._put(layout.assignment_path(topology_id), encode(assignment))

    def get_assignment(self, topology_id: str) -> Assignment | None:
        """Read a topology's :class:`Assignment`; None when it has none.

        Raises:
            CorruptStateError: the node does not decode.
        """
        return self._read(layout.assignment_path(topology_id), Assignment.from_json,
                          "Assignment")

    def assignments(self) -> list[str]:
        """Return the ids of the topologies that have an assignment, sorted."""
        return self._children(layout.ASSIGNMENTS)

    def remove_assignment(self, topology_id: str) -> None:
        """Delete a topology's assignment, if any."""
        self._delete(layout.assignment_path(topology_id))

    # --- task infos ---------------------------------------------------------------------------

    def set_task_info(self, topology_id: str, task_id: int, info: TaskInfo) -> None:
        """Write which component a task belongs to (Storm's ``set-task!``).

        Nimbus writes every task's at submit, before the StormBase.
        """
        self._put(layout.task_path(topology_id, task_id), encode(info))

    def task_info(self, topology_id: str, task_id: int) -> TaskInfo | None:
        """Read one task's :class:`TaskInfo`; None when it has none.

        Raises:
            CorruptStateError: the node does not decode.
        """
        return self._read(layout.task_path(topology_id, task_id), TaskInfo.from_json,
                          "TaskInfo")

    def task_infos(self, topology_id: str) -> dict[int, TaskInfo]:
        """Return every task's :class:`TaskInfo` by task id, ascending.

        Storm's ``task-ids`` with their infos; corrupt nodes are logged and skipped.
        """
        directory = layout.tasks_dir(topology_id)
        found = self._read_all(directory, lambda name: self._read(
            f"{directory}/{layout.encode(name)}", TaskInfo.from_json, "TaskInfo"))
        # only our own nodes, named by the task id: anything else is not a task
        return {task: found[str(task)] for task in sorted(
            int(name) for name in found if name.isdigit())}

    def task_storms(self) -> list[str]:
        """Return the ids of the topologies that have task infos, sorted."""
        return self._children(layout.TASKS)

    # --- supervisors --------------------------------------------------------------------------

    def register_supervisor(self, info: SupervisorInfo) -> None:
        """Publish a supervisor as an ephemeral node; call it on every supervisor heartbeat.

        If the node exists (this session's, or a previous session's not yet expired) its data
        is replaced, as Storm does; when a previous session's node then expires, the next
        call creates it again, now owned by this session.
        """
        path = layout.supervisor_path(info.supervisor_id)
        data = encode(info)
        for _ in range(10):
            try:
                self.store.create(path, data, ephemeral=True)
                return
            except NodeExistsError:
                pass
            try:
                self.store.set(path, data)
                return
            except NoNodeError:
                pass  # it expired between our two calls: create it
        self.store.create(path, data, ephemeral=True)

    def supervisors(self) -> list[str]:
        """Return the ids of the live supervisors, sorted."""
        return self._children(layout.SUPERVISORS)

    def supervisor_info(self, supervisor_id: str) -> SupervisorInfo | None:
        """Read a live supervisor's :class:`SupervisorInfo`; None when it is not registered.

        Raises:
            CorruptStateError: the node does not decode.
        """
        return self._read(layout.supervisor_path(supervisor_id), SupervisorInfo.from_json,
                          "SupervisorInfo")

    def all_supervisor_info(self) -> dict[str, SupervisorInfo]:
        """Return every live supervisor's info by id; corrupt nodes are logged and skipped."""
        return self._read_all(layout.SUPERVISORS, self.supervisor_info)

    def _read_all(self, directory: str, read: Callable[[str], R | None]) -> dict[str, R]:
        found: dict[str, R] = {}
        for name in self._children(directory):
            try:
                value = read(name)
            except CorruptStateError as exc:
                logger.error("skipping unreadable cluster state node: %s", exc)
                continue
            if value is not None:
                found[name] = value
        return found

    # --- worker heartbeats --------------------------------------------------------------------

    def setup_heartbeats(self, topology_id: str) -> None:
        """Create the topology's (empty) heartbeat directory; idempotent.

        As Storm's ``setup-heartbeats!`` does at submit.
        """
        self.store.ensure_path(layout.worker_beats_dir(topology_id))

    def worker_heartbeat(self, heartbeat: WorkerHeartbeat) -> None:
        """Store a worker's latest heartbeat (replacing the previous one)."""
        path = layout.worker_beat_path(heartbeat.topology_id, heartbeat.worker_id)
        self._put(path, encode_compressed(heartbeat))

    def get_worker_heartbeat(self, topology_id: str, worker_id: str) -> WorkerHeartbeat | None:
        """Read one worker's latest heartbeat; None when it has none.

        Raises:
            CorruptStateError: the node does not decode.
        """
        return self._read(layout.worker_beat_path(topology_id, worker_id),
                          WorkerHeartbeat.from_json, "WorkerHeartbeat")

    def get_worker_heartbeats(self, topology_id: str) -> dict[str, WorkerHeartbeat]:
        """Return the latest heartbeat of each worker of a topology, by worker id.

        Corrupt nodes are logged and skipped.
        """
        return self._read_all(layout.worker_beats_dir(topology_id),
                              lambda worker: self.get_worker_heartbeat(topology_id, worker))

    def remove_worker_heartbeat(self, topology_id: str, worker_id: str) -> None:
        """Delete a worker's heartbeat, if any."""
        self._delete(layout.worker_beat_path(topology_id, worker_id))

    def heartbeat_storms(self) -> list[str]:
        """Return the ids of the topologies that have worker heartbeats, sorted."""
        return self._children(layout.WORKERBEATS)

    # --- errors -------------------------------------------------------------------------------

    def report_error(self, topology_id: str, error: ErrorInfo) -> None:
        """Record a component's error, keeping its last :data:`MAX_ERRORS_PER_COMPONENT`."""
        directory = layout.error_dir(topology_id, error.component)
        self.store.create(f"{directory}/{layout.ERROR_PREFIX}", encode(error), sequence=True)
        names = self._error_nodes(directory)
        for name in names[:-MAX_ERRORS_PER_COMPONENT]:
            self._delete(f"{directory}/{name}")  # a concurrent reporter may delete it first

    def _error_nodes(self, directory: str) -> list[str]:
        try:
            names = self.store.children(directory)
        except NoNodeError:
            return []
        # the 10-digit sequence suffix makes name order the reporting order
        return sorted(n for n in names if n.startswith(layout.ERROR_PREFIX))

    def errors(self, topology_id: str, component: str) -> list[ErrorInfo]:
        """Return a component's kept errors, newest first (as Storm's UI shows them).

        Raises:
            CorruptStateError: an error node does not decode.
        """
        directory = layout.error_dir(topology_id, component)
        found = []
        for name in reversed(self._error_nodes(directory)):
            info = self._read(f"{directory}/{name}", ErrorInfo.from_json, "ErrorInfo")
            if info is not None:
                found.append(info)
        return found

    def last_error(self, topology_id: str, component: str) -> ErrorInfo | None:
        """Return a component's newest error; None when it has none.

        Raises:
            CorruptStateError: the newest error node does not decode.
        """
        directory = layout.error_dir(topology_id, component)
        for name in reversed(self._error_nodes(directory)):
            info = self._read(f"{directory}/{name}", ErrorInfo.from_json, "ErrorInfo")
            if info is not None:
                return info
        return None

    def error_components(self, topology_id: str) -> list[str]:
        """Return the ids of a topology's components that reported errors, sorted."""
        return self._children(layout.errors_dir(topology_id))

    # --- committed windows ----------------------------------------------------------------------

    def set_committed_window(self, topology_id: str, window_id: int) -> None:
        """Record the topology's committed window (the last fully checkpointed one)."""
        self._put(layout.committed_path(topology_id), _encode_window(window_id))

    def committed_window(self, topology_id: str) -> int | None:
        """Return the topology's committed window; None when none was committed.

        Raises:
            CorruptStateError: the node does not decode.
        """
        return self._read(layout.committed_path(topology_id), _parse_window, "committed window")

    # --- teardown -----------------------------------------------------------------------------

    def teardown_topology(self, topology_id: str) -> None:
        """Delete everything of a topology. Idempotent.

        Its StormBase, assignment, task infos, worker heartbeats, errors and committed window.
        """
        self.remove_storm(topology_id)
        self._delete(layout.worker_beats_dir(topology_id), recursive=True)
        self._delete(layout.errors_dir(topology_id), recursive=True)
        self._delete(layout.committed_path(topology_id))

    # --- watches ------------------------------------------------------------------------------

    def on_storms_change(self, callback: Callable[[list[str]], object]) -> Watch:
        """Call ``callback(topology ids)`` now and whenever a StormBase appears or goes."""
        return self._watch_ids(layout.STORMS, callback)

    def on_assignments_change(self, callback: Callable[[list[str]], object]) -> Watch:
        """Call ``callback(topology ids)`` now and whenever an assignment appears or goes."""
        return self._watch_ids(layout.ASSIGNMENTS, callback)

    def on_supervisors_change(self, callback: Callable[[list[str]], object]) -> Watch:
        """Call ``callback(supervisor ids)`` now and whenever a supervisor comes or goes."""
        return self._watch_ids(layout.SUPERVISORS, callback)

    def on_storm_change(self, topology_id: str,
                        callback: Callable[[StormBase | None], object]) -> Watch:
        """Call ``callback(StormBase or None)`` now and whenever the topology's changes."""
        return self._watch_record(layout.storm_path(topology_id), StormBase.from_json,
                                  "StormBase", callback)

    def on_assignment_change(self, topology_id: str,
                             callback: Callable[[Assignment | None], object]) -> Watch:
        """Call ``callback(Assignment or None)`` now and whenever the topology's changes."""
        return self._watch_record(layout.assignment_path(topology_id), Assignment.from_json,
                                  "Assignment", callback)

    def on_committed_window_change(self, topology_id: str,
                                   callback: Callable[[int | None], object]) -> Watch:
        """Call ``callback(window id or None)`` now and whenever the committed window moves."""
        return self._watch_record(layout.committed_path(topology_id), _parse_window,
                                  "committed window", callback)

    def _watch_ids(self, directory: str, callback: Callable[[list[str]], object]) -> Watch:
        return self.store.watch_children(
            directory, lambda names: callback([layout.decode(n) for n in names]))

    def _watch_record(self, path: str, parse: Callable[[object], R], kind: str,
                      callback: Callable[[R | None], object]) -> Watch:
        def on_data(raw: bytes | None, _version: int) -> None:
            if raw is None:
                callback(None)
                return
            try:
                record = decode(path, raw, parse, kind)
            except CorruptStateError as exc:
                logger.error("not delivering unreadable cluster state node: %s", exc)
                return
            callback(record)

        return self.store.watch_data(path, on_data)


def _encode_window(window_id: int) -> bytes:
    return json.dumps({"window_id": int(window_id)}, separators=(",", ":")).encode()


def _parse_window(obj: object) -> int:
    if not isinstance(obj, dict) or isinstance(obj.get("window_id"), bool) or not isinstance(
            obj.get("window_id"), int):
        msg = f"a committed window must be {{'window_id': <int>}}, got {obj!r}"
        raise RecordError(msg)
    return int(obj["window_id"])


__all__ = [
    "MAX_ERRORS_PER_COMPONENT",
    "Assignment",
    "ClusterState",
    "ErrorInfo",
    "ExecutorId",
    "StormBase",
    "SupervisorInfo",
    "TaskInfo",
    "TopologyStatus",
    "WorkerHeartbeat",
    "WorkerSlot",
]
