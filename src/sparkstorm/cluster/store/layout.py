"""Where the cluster state lives in the store.

Storm's paths (``ClusterUtils``), plus ``/committed``.

::

    /storms/<topology id>                     StormBase         (persistent)
    /assignments/<topology id>                Assignment        (persistent)
    /tasks/<topology id>/<task id>            TaskInfo          (persistent)
    /supervisors/<supervisor id>              SupervisorInfo    (ephemeral)
    /workerbeats/<topology id>/<worker id>    WorkerHeartbeat   (persistent)
    /errors/<topology id>/<component>/e<seq>  ErrorInfo         (persistent, sequence)
    /committed/<topology id>                  committed window  (persistent)

Every id becomes one path segment, percent-encoded (as Storm URL-encodes component ids), so
an id holding ``/`` or ``%`` cannot escape its directory. All paths are relative to the
store's root, ``storm.zookeeper.root``.

Example:
    >>> worker_beat_path("wc-1-17", "node1-6700")
    '/workerbeats/wc-1-17/node1-6700'
    >>> error_dir("wc-1-17", "split/words")
    '/errors/wc-1-17/split%2Fwords'
    >>> task_path("wc-1-17", 3)
    '/tasks/wc-1-17/3'
"""

from __future__ import annotations

from urllib.parse import quote, unquote

from sparkstorm.cluster.store.errors import InvalidPathError

STORMS = "/storms"
ASSIGNMENTS = "/assignments"
SUPERVISORS = "/supervisors"
TASKS = "/tasks"
WORKERBEATS = "/workerbeats"
ERRORS = "/errors"
COMMITTED = "/committed"

ROOTS = (ASSIGNMENTS, COMMITTED, ERRORS, STORMS, SUPERVISORS, TASKS, WORKERBEATS)
"""The top-level directories, created when the cluster state opens."""

ERROR_PREFIX = "e"
"""Prefix of the sequence nodes that hold reported errors."""


def encode(identifier: str, what: str = "id") -> str:
    """Turn an id into one safe path segment.

    Raises:
        InvalidPathError: the id is empty, ``.``/``..``, or not a string.
    """
    if not isinstance(identifier, str) or identifier in ("", ".", ".."):
        msg = (
            f"{what} {identifier!r} cannot name a state store node; use a non-empty string "
            "other than '.' and '..'"
        )
        raise InvalidPathError(msg, code=InvalidPathError.default_code)
    return quote(identifier, safe="")


def decode(segment: str) -> str:
    """Turn a path segment back into the id (inverse of :func:`encode`)."""
    return unquote(segment)


def storm_path(topology_id: str) -> str:
    """Path of a topology's :class:`StormBase`."""
    return f"{STORMS}/{encode(topology_id, 'topology id')}"


def assignment_path(topology_id: str) -> str:
    """Path of a topology's :class:`Assignment`."""
    return f"{ASSIGNMENTS}/{encode(topology_id, 'topology id')}"


def tasks_dir(topology_id: str) -> str:
    """Directory of a topology's task infos, one node per task id (written at submit)."""
    return f"{TASKS}/{encode(topology_id, 'topology id')}"


def task_path(topology_id: str, task_id: int) -> str:
    """Path of one task's :class:`TaskInfo`."""
    return f"{tasks_dir(topology_id)}/{int(task_id)}"


def supervisor_path(supervisor_id: str) -> str:
    """Path of a supervisor's ephemeral :class:`SupervisorInfo`."""
    return f"{SUPERVISORS}/{encode(supervisor_id, 'supervisor id')}"


def worker_beats_dir(topology_id: str) -> str:
    """Directory of a topology's worker heartbeats.

    Created at submit, as Storm's ``setup-heartbeats!`` does.
    """
    return f"{WORKERBEATS}/{encode(topology_id, 'topology id')}"


def worker_beat_path(topology_id: str, worker_id: str) -> str:
    """Path of one worker's latest heartbeat."""
    return f"{worker_beats_dir(topology_id)}/{encode(worker_id, 'worker id')}"


def errors_dir(topology_id: str) -> str:
    """Directory of a topology's errors, one sub-directory per component."""
    return f"{ERRORS}/{encode(topology_id, 'topology id')}"


def error_dir(topology_id: str, component: str) -> str:
    """Directory of a component's last errors."""
    return f"{errors_dir(topology_id)}/{encode(component, 'component id')}"


def committed_path(topology_id: str) -> str:
    """Path of a topology's committed window."""
    return f"{COMMITTED}/{encode(topology_id, 'topology id')}"
