"""A task's snapshot, as Apex takes an operator's: what a checkpoint keeps of one task.

- A :class:`~sparkstorm.topology.stateful.StatefulBolt`: its ``KeyValueState`` only (what
  ``state.snapshot()`` returns after ``prepare_commit``; None for a state kept in Redis).
- Any other component: its instance state, the ``__dict__`` minus the attributes its classes
  list in ``transient`` and minus what the engine sets on every task (collector, logger,
  conf, context), or what its own ``__getstate__`` returns. A windowed bolt's windows are
  ordinary attributes, so they are in it.

Restoring happens on a fresh instance after the engine set it up and called
``initialize()``: the snapshot then overwrites the attributes it holds (or goes to the
class's ``__setstate__``), so connections opened in ``initialize`` and listed in
``transient`` stay, and counters come back. Shell components snapshot only their host-side
attributes: their child process's memory is not ours.

A value that cannot be pickled is reported at the first checkpoint, naming the component,
task, attribute and type (``CHECKPOINT_UNPICKLABLE``), instead of failing at recovery.

Example:
    >>> class Counter:
    ...     transient = ("db",)
    ...     def __init__(self):
    ...         self.counts, self.db, self.logger = {"storm": 3}, object(), None
    >>> blob = task_snapshot(Counter(), component="count", task=4)
    >>> fresh = Counter(); fresh.counts = {}
    >>> restore_task(fresh, blob, component="count", task=4); fresh.counts
    {'storm': 3}
"""

from __future__ import annotations

import io
import pickle
from typing import Any

from sparkstorm.checkpoint.errors import CheckpointError

FORMAT = 1
ENGINE_ATTRIBUTES = frozenset({
    "_collector", "logger", "storm_conf", "context", "component_name", "component_spec", "emit",
    "_stateful_task", "_state_provider", "_batch_sink",
})
"""Set by the engine on every task before ``initialize`` (``emit`` when it binds the fast
path; ``_batch_sink`` by batch executors): never checkpointed, always set afresh on restore."""


def transient_attributes(cls: type) -> frozenset[str]:
    """Every attribute named in ``transient`` by ``cls`` or any class it derives from."""
    names: set[str] = set()
    for klass in cls.__mro__:
        declared = klass.__dict__.get("transient", ())
        names.update((declared,) if isinstance(declared, str) else declared)
    return frozenset(names)


def _custom(instance: Any, method: str) -> bool:
    return getattr(type(instance), method, None) is not getattr(object, method, None)


def instance_state(instance: Any) -> Any:
    """What a component's snapshot keeps.

    ``__getstate__()`` when its class defines one, else its ``__dict__`` minus transient
    and engine attributes.
    """
    if _custom(instance, "__getstate__"):
        return instance.__getstate__()
    skipped = transient_attributes(type(instance)) | ENGINE_ATTRIBUTES
    return {name: value for name, value in vars(instance).items() if name not in skipped}


def task_snapshot(instance: Any, *, component: str, task: int,
                  state_snapshot: Any = None, stateful: bool = False) -> bytes:
    """Pickle one task's snapshot (see the module docstring).

    Args:
        instance: the task's component instance.
        component: its component id, for messages.
        task: its task id, for messages.
        state_snapshot: for a stateful bolt, what its state's ``snapshot()`` returned.
        stateful: the task is a StatefulBolt; only ``state_snapshot`` is kept.

    Raises:
        CheckpointError: ``CHECKPOINT_UNPICKLABLE`` naming the attribute and its type.
    """
    data = state_snapshot if stateful else instance_state(instance)
    record = {"format": FORMAT, "component": component, "task": task,
              "kind": "state" if stateful else "instance", "data": data}
    try:
        return pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise _unpicklable(data, component, task, stateful, exc) from exc


def _unpicklable(data: Any, component: str, task: int, stateful: bool,
                 exc: Exception) -> CheckpointError:
    where, value = ("its KeyValueState", data) if stateful else ("__getstate__()", data)
    if isinstance(data, dict):
        for name, item in data.items():
            try:
                pickle.dump(item, io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - this one is the culprit
                where, value = (f"state key {name!r}" if stateful else f"attribute {name!r}",
                                item)
                break
    msg = (
        f"cannot checkpoint component {component!r} task {task}: {where} holds a "
        f"{type(value).__module__}.{type(value).__qualname__}, which cannot be pickled "
        f"({type(exc).__name__}: {exc}); list the attribute in the class's `transient` "
        "tuple and re-create it in initialize(), or give the class __getstate__/__setstate__"
    )
    return CheckpointError(msg, code="CHECKPOINT_UNPICKLABLE")


def read_snapshot(blob: bytes) -> dict[str, Any]:
    """The record :func:`task_snapshot` pickled.

    Raises:
        CheckpointError: ``CHECKPOINT_CORRUPT`` when the blob is not such a record.
    """
    try:
        record = pickle.loads(blob)
    except Exception as exc:
        msg = f"a task snapshot cannot be read ({type(exc).__name__}: {exc})"
        raise CheckpointError(msg, code="CHECKPOINT_CORRUPT") from exc
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        msg = f"a task snapshot has an unknown format: {type(record).__name__}"
        raise CheckpointError(msg, code="CHECKPOINT_CORRUPT")
    return record


def restore_task(instance: Any, blob: bytes, *, component: str, task: int) -> Any:
    """Put a snapshot back into a fresh, initialized ``instance``.

    Returns:
        For a stateful bolt, the state snapshot to hand to its state's ``restore``;
        None otherwise (the instance's attributes were restored).

    Raises:
        CheckpointError: ``CHECKPOINT_CORRUPT`` for a snapshot of another task or format.
    """
    record = read_snapshot(blob)
    if (record["component"], record["task"]) != (component, task):
        msg = (f"snapshot of component {record['component']!r} task {record['task']} offered "
               f"to component {component!r} task {task}; the checkpoint is mixed up")
        raise CheckpointError(msg, code="CHECKPOINT_CORRUPT")
    if record["kind"] == "state":
        return record["data"]
    if _custom(instance, "__setstate__"):
        instance.__setstate__(record["data"])
    else:
        vars(instance).update(record["data"])
    return None
