"""A bolt's commonest emits, routed for many tuples at once.

The commonest emit is ``self.emit(values)`` inside ``process`` of an auto-acking bolt, on
the default stream, whose one subscriber groups by one field (``collector.FieldsEmit``).
While the input loop (``engine.input_loop``) runs such a bolt, ``TaskCollector.bolt_emit``
only appends the values of those emits to the list of the tuple being processed, and the
loop keeps each tuple's list together with that tuple's anchors (a *group*). Every
:data:`GROUPS_PER_ROUTE` groups, at the end of the window (``WindowOutput.take``), and before
an emit that must keep its place behind them, :func:`route_deferred` does for all waiting
groups at once what ``bolt_emit`` did for each emit: the
fields grouping's choice of task, a fresh random 64-bit edge per delivery, the XOR of every
edge into its anchor's trees, and the batch columns per target task. Done per emit in Python
this was three quarters of a splitting bolt's instructions; done so, a splitting bolt's
window takes a fifth less CPU (``benchmarks/RESULTS.md``, "a bolt's commonest emits routed
together").

The meaning is that of emitting one by one:

- the rows reach each target task in the order they were emitted (Storm keeps order per
  pair of tasks, and so does this: an emit that does not wait routes the waiting ones first);
- an anchor's edges go straight into its roots' XOR for the window instead of through the
  anchor's ``ack_val`` into its ack. The acker sees the same XOR, because the loop acks an
  auto-acked tuple in the same window, and a tuple the bolt failed fails its trees anyway.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Any

from sparkstorm.engine.routing import stable_hash

if TYPE_CHECKING:
    from sparkstorm.engine.collector import FieldsEmit, TaskCollector

Group = tuple[list[Any], Any, Any]
"""The values one tuple emitted, with that tuple's root and edge (``engine.anchor_columns``;
both None: the emits are not anchored)."""

GROUPS_PER_ROUTE = 512
"""The input loop routes the waiting emits once this many tuples emitted: a window's worth
at once (hundreds of thousands of rows) went through numpy's passes after it had left the
CPU's caches, and gained little over routing each emit at once."""

VECTOR_MIN_ROWS = 256
"""From this many waiting rows numpy routes them; fewer (a flush forced mid-window, a light
window) go row by row, where numpy's fixed cost per call would be most of the work."""


def route_deferred(collector: TaskCollector) -> None:
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
    fields = collector._default_fields  # the collector's own routing
    assert fields is not None, "emits wait only on a stream routed by FieldsEmit"
    rows = sum(len(group[0]) for group in taken)
    if rows >= VECTOR_MIN_ROWS and all(root is not None for _, root, _ in taken):
        _route_one_tree_groups(collector, fields, taken, rows)
    else:
        _route_row_by_row(collector, fields, taken)
    fields.emitted += rows


def _route_row_by_row(collector: TaskCollector, fields: FieldsEmit,
                      groups: list[Group]) -> None:
    """``bolt_emit``'s routing and anchoring, one row at a time."""
    from sparkstorm.engine.collector import new_id  # here: collector imports this module

    xor, name = collector.output.xor, fields.route.stream.name
    choose = fields.route.single  # the fields grouping's own choice (routing._fields)
    assert choose is not None, "a FieldsEmit route has one non-direct subscription"
    for rows, root, edge in groups:
        for values in rows:
            (task,) = choose(values)
            columns = collector.columns_for(task, name)
            columns[3].append(values)
            if root is not None:  # one tree
                child = new_id(64)
                xor[root] = xor.get(root, 0) ^ child
                columns[4].append(root)
                columns[5].append(child)
            elif edge:  # several trees: one edge for all of them
                child = new_id(64)
                for each in edge:
                    xor[each] = xor.get(each, 0) ^ child
                columns[4].append(None)
                columns[5].append(dict.fromkeys(edge, child))
            else:
                columns[4].append(None)
                columns[5].append(None)


def _route_one_tree_groups(collector: TaskCollector, fields: FieldsEmit,
                           groups: list[Group], rows: int) -> None:
    """:func:`_route_row_by_row` for groups whose tuples each belong to one tree, in arrays."""
    import numpy as np  # here: only a bolt that emits many tuples per window needs it

    from sparkstorm.engine.collector import random_bytes

    values = list(chain.from_iterable(group[0] for group in groups))
    lengths = [len(group[0]) for group in groups]
    roots = [group[1] for group in groups]
    edges = np.frombuffer(random_bytes(8 * rows), dtype=np.uint64)
    # each tuple's children's edges, XORed, go into its tree's XOR for the window
    starts = np.zeros(len(lengths), dtype=np.intp)
    np.cumsum(lengths[:-1], out=starts[1:])
    xor = collector.output.xor
    for root, children in zip(roots, np.bitwise_xor.reduceat(edges, starts).tolist(),
                              strict=True):
        xor[root] = xor.get(root, 0) ^ children
    row_roots = np.repeat(np.array(roots, dtype=np.uint64), lengths)
    name, tasks, n = fields.route.stream.name, fields.tasks, fields.count
    if n == 1:
        columns = collector.columns_for(tasks[0], name)
        columns[3].extend(values)
        columns[4].extend(row_roots.tolist())
        columns[5].extend(edges.tolist())
        return
    key_index = fields.key_index
    keys = [row[key_index] for row in values]
    if set(map(type, keys)) == {str}:
        positions = np.fromiter(map(hash, keys), dtype=np.int64, count=rows) % n
    else:
        positions = np.fromiter((stable_hash(key) % n for key in keys), dtype=np.int64,
                                count=rows)
    order = np.argsort(positions, kind="stable")  # stable: each target's rows in emit order
    ends = np.cumsum(np.bincount(positions, minlength=n)).tolist()
    start = 0
    for position, end in enumerate(ends):
        if end == start:
            continue
        chosen = order[start:end]
        columns = collector.columns_for(tasks[position], name)
        columns[3].extend(map(values.__getitem__, chosen.tolist()))
        columns[4].extend(row_roots[chosen].tolist())
        columns[5].extend(edges[chosen].tolist())
        start = end


__all__ = ["GROUPS_PER_ROUTE", "VECTOR_MIN_ROWS", "Group", "route_deferred"]
