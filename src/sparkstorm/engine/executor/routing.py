"""Emit-time routing: which tasks receive a tuple, for every grouping (Storm's semantics).

Fields groupings hash with Python's ``hash``; executor processes are started with a fixed
``PYTHONHASHSEED`` so every process sends a key to the same task. Values whose ``hash`` is
not stable across processes (``None`` before Python 3.12) or that are unhashable (lists and
dicts decoded from JSON) are first turned into a stable, hashable form.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import cycle
from typing import Any

from sparkstorm.engine.plan.execution import ExecutionPlan, Subscription
from sparkstorm.errors import TopologyError
from sparkstorm.topology.stream import Stream

Chooser = Callable[[list[Any]], list[int]]


def _shuffle(tasks: tuple[int, ...], rng: random.Random) -> Chooser:
    """Round robin from a random first task: each call the next task's one-item list.

    The lists are made once and shared, as ``ALL``'s and ``GLOBAL``'s are (no caller
    changes a choice), and taken from a ``cycle`` in C: one per emitted spout tuple.
    """
    order = list(tasks)
    rng.shuffle(order)
    turns = cycle([[task] for task in order]).__next__
    return lambda values: turns()


_NONE_HASH = 0x5EED_0000_0000_0001
_PLAIN = (str, int, float, bytes, bool)


def stable_hash(value: Any) -> int:
    """``hash(value)`` that is equal in every executor process and defined for any value."""
    if type(value) in _PLAIN:
        return hash(value)
    return hash(_freeze(value))


def _freeze(value: Any) -> Any:
    if value is None:
        return _NONE_HASH
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return ("{}",) + tuple(sorted((_freeze(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, _PLAIN):
        return value
    return repr(value)  # anything else: its text, which every process agrees on


def _fields(tasks: tuple[int, ...], indexes: list[int]) -> Chooser:
    n = len(tasks)
    if len(indexes) == 1:
        (index,) = indexes

        def choose_one(values: list[Any]) -> list[int]:
            value = values[index]
            return [tasks[(hash(value) if type(value) is str else stable_hash(value)) % n]]

        return choose_one
    return lambda values: [tasks[stable_hash([values[i] for i in indexes]) % n]]


def _partial_key(tasks: tuple[int, ...], indexes: list[int]) -> Chooser:
    n = len(tasks)
    load = dict.fromkeys(tasks, 0)

    def choose(values: list[Any]) -> list[int]:
        key = stable_hash([values[i] for i in indexes])
        first_index = key % n
        # the second choice always differs from the first, so a hot key is split in two
        second_index = (first_index + 1 + stable_hash((key, 2)) % (n - 1)) % n if n > 1 \
            else first_index
        first, second = tasks[first_index], tasks[second_index]
        pick = first if load[first] <= load[second] else second
        load[pick] += 1
        return [pick]

    return choose


def make_chooser(sub: Subscription, fields: tuple[str, ...], rng: random.Random) -> Chooser:
    """The chooser for one subscription; DIRECT subscriptions are handled by the router."""
    kind, tasks = sub.grouping.type, sub.tasks
    if kind in ("SHUFFLE", "NONE", "LOCAL_OR_SHUFFLE"):
        return _shuffle(tasks, rng)
    indexes = [fields.index(f) for f in sub.grouping.field_names]
    if kind == "FIELDS":
        return _fields(tasks, indexes)
    if kind == "PARTIAL_KEY":
        return _partial_key(tasks, indexes)
    if kind == "ALL":
        every = list(tasks)
        return lambda values: every
    if kind == "GLOBAL":
        lowest = [min(tasks)]
        return lambda values: lowest
    msg = f"grouping {kind!r} has no chooser"
    raise TopologyError(msg, code="INVALID_GROUPING")


class StreamRoute:
    """Routing of one output stream of one component."""

    def __init__(self, component: str, stream: Stream, subs: list[Subscription],
                 rng: random.Random) -> None:
        self.component = component
        self.stream = stream
        self.arity = len(stream.fields)
        self.emitted = 0  # per-window counters, taken by TaskCollector.take_counts
        self.transferred = 0
        self.direct_tasks = {t for s in subs if s.grouping.type == "DIRECT" for t in s.tasks}
        self.subs = [s for s in subs if s.grouping.type != "DIRECT"]
        """The non-direct subscriptions, in the order of :attr:`choosers`."""
        self.choosers = [make_chooser(s, stream.fields, rng) for s in self.subs]
        self.single: Chooser | None = self.choosers[0] \
            if len(self.choosers) == 1 and not stream.direct else None
        """The only chooser of a non-direct stream with one subscription (the common case),
        which the collector's fast path calls directly; None otherwise."""
        self.fields_key_index: int | None = None
        """With :attr:`single` a fields grouping on one field: that field's index, so the
        collector can compute ``_fields``' choice inline (``collector.FieldsEmit``)."""
        if self.single is not None and self.subs[0].grouping.type == "FIELDS" and len(
                self.subs[0].grouping.field_names) == 1:
            self.fields_key_index = stream.fields.index(self.subs[0].grouping.field_names[0])

    def tasks_for(self, values: list[Any], direct_task: int | None) -> list[int]:
        """The target tasks of ``values``; validates arity and direct emits.

        Raises:
            TopologyError: TUPLE_ARITY_MISMATCH, DIRECT_EMIT_ON_NON_DIRECT_STREAM,
                DIRECT_EMIT_TO_NON_SUBSCRIBER or NON_DIRECT_EMIT_ON_DIRECT_STREAM.
        """
        if len(values) != self.arity:
            msg = (
                f"component {self.component!r} emitted {len(values)} values {values!r} on "
                f"stream {self.stream.name!r}, which declares {self.arity} fields "
                f"{list(self.stream.fields)!r}; emit one value per declared field"
            )
            raise TopologyError(msg, code="TUPLE_ARITY_MISMATCH")
        if direct_task is not None:
            return self._direct(direct_task)
        if self.stream.direct:
            msg = (
                f"component {self.component!r} emitted on direct stream {self.stream.name!r} "
                "without direct_task; pass direct_task=<task id> to emit()"
            )
            raise TopologyError(msg, code="NON_DIRECT_EMIT_ON_DIRECT_STREAM")
        choosers = self.choosers
        if len(choosers) == 1:
            return choosers[0](values)
        out: list[int] = []
        for choose in choosers:
            out.extend(choose(values))
        return out

    def _direct(self, task: int) -> list[int]:
        if not self.stream.direct:
            msg = (
                f"component {self.component!r} emitted directly to task {task} on stream "
                f"{self.stream.name!r}, which is not direct; declare it "
                f"Stream(..., name={self.stream.name!r}, direct=True)"
            )
            raise TopologyError(msg, code="DIRECT_EMIT_ON_NON_DIRECT_STREAM")
        if task not in self.direct_tasks:
            msg = (
                f"component {self.component!r} emitted directly to task {task} on stream "
                f"{self.stream.name!r}, but that task does not subscribe to it with a direct "
                f"grouping; subscribing tasks: {sorted(self.direct_tasks)}"
            )
            raise TopologyError(msg, code="DIRECT_EMIT_TO_NON_SUBSCRIBER")
        return [task]


def build_routes(plan: ExecutionPlan, component: str, seed: int,
                 executor_index: int | None = None) -> dict[str, StreamRoute]:
    """Routes for every output stream of ``component`` (one set per task).

    With ``executor_index`` (the task's executor), a bolt chained to ``component``
    (``engine.plan.chaining``) gets the tuples only at the tasks of its executor of that index:
    the one the Spark task calls next.
    """
    rng = random.Random(seed)
    spec = plan.components[component]
    return {
        stream.name: StreamRoute(component, stream,
                                 _subscriptions(plan, component, stream.name, executor_index),
                                 rng)
        for stream in spec.outputs
    }


def _subscriptions(plan: ExecutionPlan, component: str, stream: str,
                   executor_index: int | None) -> list[Subscription]:
    subs = plan.subscriptions.get((component, stream), [])
    if executor_index is None:
        return subs
    out = []
    for sub in subs:
        partner = plan.chained_tasks(sub.target, component, executor_index)
        out.append(sub if partner is None else Subscription(sub.target, sub.grouping, partner))
    return out
