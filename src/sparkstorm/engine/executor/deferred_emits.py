"""A bolt's commonest emits, routed for many tuples at once.

The commonest emit is ``self.emit(values)`` inside ``process`` of an auto-acking bolt, on
the default stream, whose one subscriber groups by one field (``collector.FieldsEmit``).
While the input loop (``engine.executor.input_loop``) runs such a bolt, ``TaskCollector.bolt_emit``
only appends the values of those emits to the list of the tuple being processed, and the
loop keeps each tuple's list together with that tuple's anchors (a *group*). Every
:data:`GROUPS_PER_ROUTE` groups, at the end of the window (``WindowOutput.take``), and before
an emit that must keep its place behind them, :func:`route_deferred` does for all waiting
groups at once what ``bolt_emit`` did for each emit: the
fields grouping's choice of task, a fresh random 64-bit edge per delivery, the XOR of every
edge into its anchor's trees, and the batch columns per target task. Done per emit,
through ``bolt_emit``'s checks and lookups, this was three quarters of a splitting bolt's
instructions; done so, in one loop with each target's column appends at hand, a splitting
bolt's window takes a fifth less CPU (``benchmarks/RESULTS.md``, "a bolt's commonest emits
routed together").

The meaning is that of emitting one by one:

- the rows reach each target task in the order they were emitted (Storm keeps order per
  pair of tasks, and so does this: an emit that does not wait routes the waiting ones first);
- an anchor's edges go straight into its roots' XOR for the window instead of through the
  anchor's ``ack_val`` into its ack. The acker sees the same XOR, because the loop acks an
  auto-acked tuple in the same window, and a tuple the bolt failed fails its trees anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any, Protocol

from sparkstorm.engine.executor.routing import StreamRoute, stable_hash
from sparkstorm.engine.wire.batch_columns import EDGES, ROOTS, VALUES

Group = tuple[list[Any], Any, Any]
"""The values one tuple emitted, with that tuple's root and edge (``engine.wire.anchor_columns``;
both None: the emits are not anchored)."""

NewId = Callable[[int], int]
"""Draws a random id of that many bits (the collector's, so a test can seed both paths)."""


class WaitingFields(Protocol):
    """The default stream's routing, which a collector's ``bolt_emit`` does itself.

    ``collector.FieldsEmit``: the stream's one subscriber groups by one field.
    """

    emitted: int

    @property
    def route(self) -> StreamRoute:
        """The stream's route."""

    @property
    def tasks(self) -> Sequence[int]:
        """The subscriber's tasks, in the fields grouping's order."""

    @property
    def key_index(self) -> int:
        """The position of the grouping's field in the values."""

    @property
    def count(self) -> int:
        """How many tasks."""


class DeferringCollector(Protocol):
    """What routing the waiting emits needs of a task's collector (``collector``)."""

    deferred: list[Any] | None
    deferred_groups: list[Group]
    current: Any
    auto_anchor: bool
    output: Any

    @property
    def waiting_fields(self) -> WaitingFields | None:
        """The routing the waiting emits take (None: this collector lets none wait)."""

    def columns_for(self, task: int, stream: str) -> list[Any]:
        """This window's batch for ``task`` on ``stream``."""


GROUPS_PER_ROUTE = 512
"""The input loop routes the waiting emits once this many tuples emitted, while their rows
are still in the CPU's caches (a window's worth at once, hundreds of thousands of rows, is
not)."""


def route_deferred(collector: DeferringCollector, new_id: NewId) -> None:
    """Route every emit waiting in ``collector`` into its window's batches.

    The rows of the tuple being processed, if any, are anchored to ``collector.current``.
    """
    groups = collector.deferred_groups
    open_rows = collector.deferred
    if open_rows:  # forced while process() runs: what it emitted so far, in order
        current = collector.current
        if current is None or not collector.auto_anchor:
            groups.append((open_rows[:], None, None))
        else:
            groups.append((open_rows[:], current.root, current.edge))
        open_rows.clear()
    if not groups:
        return
    taken = groups[:]
    groups.clear()
    fields = collector.waiting_fields  # the collector's own routing
    assert fields is not None, "emits wait only on a stream routed by FieldsEmit"
    fields.emitted += _route_groups(collector, fields, taken, new_id)


def _route_groups(collector: DeferringCollector, fields: WaitingFields, groups: list[Group],
                  new_id: NewId) -> int:
    """``bolt_emit``'s routing and anchoring for ``groups``' rows; returns how many.

    One loop over the rows with each target's three column appends at hand. It replaced a
    numpy path (a sort by target, arrays of roots and edges made Python ints again) and a
    slower row-by-row one for small or several-tree groups: the splitting bolt's CPU is the
    same within the noise, in half the code (``benchmarks/RESULTS.md``, "the per-tuple
    floor").
    """
    if all(root is None and not edge for _, root, edge in groups):
        return _route_unanchored(collector, fields, groups)
    xor, name, tasks = collector.output.xor, fields.route.stream.name, fields.tasks
    key_index, n = fields.key_index, fields.count
    targets: list[tuple[Any, Any, Any] | None] = [None] * n

    def open_target(position: int) -> tuple[Any, Any, Any]:
        columns = collector.columns_for(tasks[position], name)
        appends = targets[position] = (columns[VALUES].append, columns[ROOTS].append,
                                       columns[EDGES].append)
        return appends

    routed = 0
    for rows, root, edge in groups:
        routed += len(rows)
        children = 0
        for values in rows:
            key = values[key_index]
            position = (hash(key) if type(key) is str else stable_hash(key)) % n
            append_values, append_root, append_edge = targets[position] or \
                open_target(position)
            append_values(values)
            if root is not None:  # one tree: a root and an edge, no map
                child = new_id(64)
                children ^= child
                append_root(root)
                append_edge(child)
            elif edge:  # several trees: one edge for all of them
                child = new_id(64)
                for each in edge:
                    xor[each] = xor.get(each, 0) ^ child
                append_root(None)
                append_edge(dict.fromkeys(edge, child))
            else:
                append_root(None)
                append_edge(None)
        if root is not None:  # the tuple's children's edges, into its tree's XOR at once
            xor[root] = xor.get(root, 0) ^ children
    return routed


class _ValueColumns:
    """One stream's batches for unanchored rows, each target's opened as its first row comes.

    A row's values go into its batch's values column alone; :meth:`align` fills each opened
    batch's roots and edges columns with None after, two appends a row fewer.
    """

    __slots__ = ("_collector", "_name", "_opened", "_tasks", "appends")

    def __init__(self, collector: DeferringCollector, fields: WaitingFields) -> None:
        self._collector = collector
        self._name = fields.route.stream.name
        self._tasks = fields.tasks
        self._opened: list[list[Any]] = []
        self.appends: list[Callable[[Any], None] | None] = [None] * fields.count
        """By target position: the values column's append (None: not opened yet)."""

    def open(self, position: int) -> Callable[[Any], None]:
        """The values column's append of the target at ``position``, opened now."""
        columns = self._collector.columns_for(self._tasks[position], self._name)
        self._opened.append(columns)
        append: Callable[[Any], None] = columns[VALUES].append
        self.appends[position] = append
        return append

    def align(self) -> int:
        """A None root and edge for each row appended so far; returns how many rows."""
        aligned = 0
        for columns in self._opened:
            missing = len(columns[VALUES]) - len(columns[ROOTS])
            if missing:
                columns[ROOTS].extend(repeat(None, missing))
                columns[EDGES].extend(repeat(None, missing))
                aligned += missing
        return aligned


def _route_unanchored(collector: DeferringCollector, fields: WaitingFields,
                      groups: list[Group]) -> int:
    """:func:`_route_groups` for groups none of which is anchored; returns how many rows.

    Under checkpoint reliability no tuple is (nor from a bolt that emits unanchored): each
    row's values are appended alone, and each target's roots and edges columns filled
    with None after, two appends a row fewer (``benchmarks/RESULTS.md``, "checkpoint
    reliability's per-tuple path").
    """
    key_index, n = fields.key_index, fields.count
    targets = _ValueColumns(collector, fields)
    appends, open_target = targets.appends, targets.open
    routed = 0
    for rows, _, _ in groups:
        routed += len(rows)
        for values in rows:
            key = values[key_index]
            position = (hash(key) if type(key) is str else stable_hash(key)) % n
            (appends[position] or open_target(position))(values)
    targets.align()  # the columns stay aligned: a None root and edge for each row
    return routed


def unanchored_emit(collector: DeferringCollector, general: Callable[..., Any]
                    ) -> tuple[Callable[..., Any], Callable[[], None]]:
    """A bolt's ``emit`` while its input belongs to no tree: the commonest emit routed at once.

    Under checkpoint reliability (or behind an unreliable spout) no input tuple has a root
    or an edge, so a bolt's emits anchor to nothing and need not wait to be anchored
    together: the commonest emit (the one ``TaskCollector.bolt_emit`` lets wait) goes
    straight into its target's values column, with the grouping's choice and the column's
    append at hand, and nothing else per emit. Every other emit goes to ``general`` (the
    collector's ``bolt_emit``) after ``settle``, so rows keep their order per target. The
    input loop binds ``emit`` as the instance's ``emit`` for a batch and calls ``settle`` at
    its end (``benchmarks/RESULTS.md``, "checkpoint reliability: in-flight bounds, emits
    routed as they come, lean parts").

    Returns:
        ``emit``, and ``settle``: fills the roots and edges columns with None for the rows
        routed so far and counts them in the stream's emits.
    """
    fields = collector.waiting_fields
    assert fields is not None, "only a stream routed by FieldsEmit is routed here"
    key_index, n, arity = fields.key_index, fields.count, fields.route.arity
    targets = _ValueColumns(collector, fields)
    appends, open_target = targets.appends, targets.open

    def settle() -> None:
        fields.emitted += targets.align()

    def emit(values: Any, stream: str | None = None, anchors: Any = None,
             direct_task: int | None = None, need_task_ids: bool = False) -> Any:
        if (stream is None and anchors is None and direct_task is None
                and not need_task_ids and type(values) is list and len(values) == arity):
            key = values[key_index]
            position = (hash(key) if type(key) is str else stable_hash(key)) % n
            (appends[position] or open_target(position))(values)
            return None
        settle()
        return general(values, stream, anchors, direct_task, need_task_ids)
    return emit, settle


__all__ = ["GROUPS_PER_ROUTE", "DeferringCollector", "Group", "NewId", "WaitingFields",
           "route_deferred", "unanchored_emit"]
