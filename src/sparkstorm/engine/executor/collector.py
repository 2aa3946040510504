"""Per-task emit, ack and fail inside an executor process.

Storm's anchoring, unchanged in meaning: every delivery of an anchored tuple gets a fresh
random 64-bit edge id per root; the edge is XORed into the new tuple's anchor map and into
the anchor's ``ack_val``; acking a tuple contributes ``edge ^ ack_val`` for each root. The
contributions are pre-aggregated per window (one XOR value per root) before they leave the
executor, which is what keeps the acker's traffic small.

The anchor map travels as two flat columns per batch (``engine.wire.anchor_columns``): a tuple of
one tree, the common case, is a root and an edge, two integers, with no map per tuple.
"""

from __future__ import annotations

import random
import time
from typing import Any

from sparkstorm.engine.executor.deferred_emits import Group, route_deferred
from sparkstorm.engine.executor.routing import StreamRoute, stable_hash
from sparkstorm.engine.wire.anchor_columns import Edge, roots_of, split_map
from sparkstorm.engine.wire.batch_columns import EDGES, ROOTS, SOURCE, STREAM, TARGET, VALUES
from sparkstorm.engine.wire.failures import (
    FAIL_CAUSES,
    FAIL_CRASH,
    FAIL_ERROR,
    FAIL_EXPLICIT,
    FAIL_TIMEOUT,
    Failure,
)
from sparkstorm.errors import TopologyError
from sparkstorm.topology.stream import DEFAULT_STREAM
from sparkstorm.topology.tuple import Tuple

_random = random.SystemRandom()
_rng = random.Random(_random.getrandbits(64))
new_id = _rng.getrandbits
random_bytes = _rng.randbytes


class WindowOutput:
    """What an executor produced since the last window.

    Tuples per target executor and acker contributions. One per executor, shared by its tasks.

    Tuples travel in batches, one per (target task, source task, stream), column-wise::

        [target_task, source_task, stream, [values, ...], [root, ...], [edge, ...]]

    so the wire carries one header per batch instead of one per tuple (the anchor columns
    are described in ``engine.wire.anchor_columns``).
    """

    # slots, and a take() that moves them: attribute reads and writes on an instance whose
    # __dict__ was swapped (the old take) cost 2-3 times more, and emits touch it per tuple
    __slots__ = ("arrow", "batches", "count", "failed", "flushers", "generation", "inits",
                 "resets", "rows", "xor")

    def __init__(self) -> None:
        self.generation = 0
        self.flushers: list[Any] = []
        """Called first by :meth:`take`: the collectors' routing of their waiting emits
        (``engine.executor.deferred_emits``)."""
        self._start()

    def _start(self) -> None:
        """Empty containers and counts for the next window (the generation is kept)."""
        self.rows: dict[int, list[list[Any]]] = {}
        self.batches: dict[tuple[int, int, str], list[Any]] = {}
        self.arrow: dict[int, list[Any]] = {}
        """Target executor -> the Arrow pieces for its batch bolts
        (``engine.columnar.arrow_emit``)."""
        self.count = 0
        """Deliveries buffered since the last take, which a spout's buffer bound reads.

        Only spouts read it, so a bolt's commonest emit (:meth:`TaskCollector.bolt_emit` on a
        one-field fields grouping) does not add to it: the add was 4 % of a splitting bolt's
        instructions (its counts for the statistics are in ``FieldsEmit.emitted``)."""
        self.xor: dict[int, int] = {}
        self.inits: dict[int, int] = {}
        self.failed: dict[int, Failure] = {}
        """Failed roots, each with why (the first failure of a root wins)."""
        self.resets: set[int] = set()

    def batch(self, gid: int, task: int, src: int, stream: str) -> list[Any]:
        """The open batch for ``task`` from ``src`` on ``stream`` (made on first use)."""
        key = (task, src, stream)
        found = self.batches.get(key)
        if found is None:
            found = self.batches[key] = [task, src, stream, [], [], []]
            self.rows.setdefault(gid, []).append(found)
        return found

    def take(self) -> WindowOutput:
        """Hand over everything collected so far and start afresh."""
        for flush in self.flushers:
            flush()
        taken = WindowOutput.__new__(WindowOutput)
        for name in WindowOutput.__slots__:
            setattr(taken, name, getattr(self, name))
        self._start()
        self.generation = taken.generation + 1  # collectors drop their batch caches
        return taken


    def absorb(self, other: WindowOutput) -> None:
        """Add the tuples and acker contributions of ``other`` (a taken output) to these.

        A spout's producer emits into an output of its own and moves it here after each
        burst of calls (``engine.executor.spout``): a batch for the same target, source and
        stream gets the other's columns appended, in emit order.
        """
        batches, rows = self.batches, self.rows
        for gid, gid_batches in other.rows.items():
            for batch in gid_batches:
                key = (batch[TARGET], batch[SOURCE], batch[STREAM])
                mine = batches.get(key)
                if mine is None:
                    batches[key] = batch
                    rows.setdefault(gid, []).append(batch)
                else:
                    for column in range(VALUES, len(batch)):
                        mine[column].extend(batch[column])
        for gid, pieces in other.arrow.items():
            self.arrow.setdefault(gid, []).extend(pieces)
        self.count += other.count
        xor = self.xor
        for root, value in other.xor.items():
            xor[root] = xor.get(root, 0) ^ value
        self.inits.update(other.inits)
        for root, why in other.failed.items():
            self.failed.setdefault(root, why)
        self.resets |= other.resets


def mark_failed(output: WindowOutput, roots: Any, cause: str, reason: str) -> None:
    """Record ``roots`` as failed in ``output`` with their cause, unless already failed."""
    failed, why = output.failed, Failure.of(cause, reason)
    for root in roots:
        if root not in failed:
            failed[root] = why


class TaskCollector:
    """The collector one task instance emits, acks and fails through."""

    def __init__(self, task: int, component: str, routes: dict[str, StreamRoute],
                 task_executor: dict[int, int], output: WindowOutput, tracking: bool,
                 auto_anchor: bool) -> None:
        self.task = task
        self.component = component
        self._fields_emits: dict[str | None, FieldsEmit] = {}
        self.deferred: list[Any] | None = None
        """While the input loop runs this bolt: the values :meth:`bolt_emit` was given by
        the tuple being processed, waiting to be routed (``engine.executor.deferred_emits``)."""
        self.deferred_groups: list[Group] = []
        """The waiting emits of the tuples processed before it, with their anchors."""
        output.flushers.append(self.route_waiting)
        self.output = output
        self.routes = routes  # also sets _fields_emits
        self.task_executor = task_executor
        self.tracking = tracking
        self.auto_anchor = auto_anchor
        self.current: Tuple | None = None
        self.pending_roots: dict[int, tuple[Any, float, str]] = {}
        """A spout task's tuple trees in flight: root id -> (message id, emit time, stream)."""
        self.immediate_acks: list[tuple[Any, str, int]] = []
        """Untracked spout tuples (no ackers): (message id, stream, rows), acked after emit
        (rows: 1 for a tuple, the batch's rows for a batch spout's batch)."""
        self._columns: dict[tuple[int, str], list[Any]] = {}
        self._generation = -1
        self.error_sink: Any = None  # set by the executor: (task, text) -> None
        self.failed_count: dict[tuple[str, str], int] = {}
        """Inputs failed through this collector, by (source component, stream)."""
        self.acked_count: dict[tuple[str, str], int] = {}
        """Inputs acked explicitly through this collector (auto acks are counted by the
        executor's loop), by (source component, stream)."""
        self.acked_ms: dict[tuple[str, str], float] = {}
        """Their process latencies (receipt to ack), summed, by the same keys."""

    @property
    def routes(self) -> dict[str, StreamRoute]:
        """The route of each output stream, by name (their emit counters up to date)."""
        self._fold_fields_counts()
        return self._routes

    @routes.setter
    def routes(self, routes: dict[str, StreamRoute]) -> None:
        # a replan gives new routes: the fields emits route with them from now on
        self.route_waiting()  # by the routes they were emitted under
        self._fold_fields_counts()
        self._routes = routes
        self._fields_emits = FieldsEmit.for_routes(routes)
        # the default stream's, for bolt_emit without a dict lookup (most emits name none)
        self._default_fields = self._fields_emits.get(None)
        self.defers_emits = self._default_fields is not None
        """Whether the input loop lets :meth:`bolt_emit` wait
        (``engine.executor.deferred_emits``)."""
        self._deferred_arity = -1 if self._default_fields is None else \
            self._default_fields.arity

    @property
    def waiting_fields(self) -> FieldsEmit | None:
        """The default stream's routing, which the waiting emits take (``deferred_emits``)."""
        return self._default_fields

    def route_waiting(self) -> None:
        """Route the emits waiting in this collector (``engine.executor.deferred_emits``)."""
        if self.deferred_groups or self.deferred:
            route_deferred(self, new_id)

    def report_error(self, text: str) -> None:
        """Report an error the component survives (a shell child's ``error`` command).

        It becomes the component's last error without failing anything.
        """
        if self.error_sink is not None:
            self.error_sink(self.task, text)

    def route(self, stream: str | None) -> StreamRoute:
        """The route of ``stream`` (None: the default stream).

        Raises:
            TopologyError: ``UNDECLARED_STREAM`` for a stream the component does not declare.
        """
        return self._routes.get(stream or DEFAULT_STREAM) or self._route(stream)

    def _route(self, stream: str | None) -> StreamRoute:
        route = self._routes.get(stream or DEFAULT_STREAM)
        if route is None:
            msg = (
                f"component {self.component!r} emitted on stream {stream or DEFAULT_STREAM!r}, "
                f"which it does not declare (declared: {sorted(self.routes)}); add it to the "
                "component's outputs"
            )
            raise TopologyError(msg, code="UNDECLARED_STREAM")
        return route

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: int | None,
             need_task_ids: bool, tup_id: Any) -> list[int] | None:
        """Route and buffer one tuple; see ``Spout.emit`` and ``Bolt.emit``."""
        if self.deferred or self.deferred_groups:  # they were emitted first
            route_deferred(self, new_id)
        if type(values) is not list:
            values = list(values)
        route = self._routes.get(stream or DEFAULT_STREAM) or self._route(stream)
        stream_id = route.stream.name
        single = route.single
        if single is not None and direct_task is None and len(values) == route.arity:
            tasks = single(values)  # what tasks_for would choose, its checks passed
        else:
            tasks = route.tasks_for(values, direct_task)
        if tup_id is not None:
            self._emit_spout_tuple(tasks, stream_id, values, tup_id)
        else:
            anchor_tuples = self._anchor_tuples(anchors)
            for task in tasks:
                columns = self.columns_for(task, stream_id)
                columns[VALUES].append(values)
                root, edge = _edges(anchor_tuples) if anchor_tuples else (None, None)
                columns[ROOTS].append(root)
                columns[EDGES].append(edge)
        self.output.count += len(tasks)
        route.emitted += 1
        route.transferred += len(tasks)
        return list(tasks) if need_task_ids else None

    def bolt_emit(self, values: Any, stream: str | None = None, anchors: Any = None,
                  direct_task: int | None = None, need_task_ids: bool = False
                  ) -> list[int] | None:
        """``Bolt.emit`` itself, for bolts that do not override it.

        The executor binds it to the instance. It does the commonest emit (a list, no
        explicit anchors, on a stream whose one subscriber groups by one field, anchored to
        the current tuple) with the fields grouping's hash and the batch lookup written
        inline (:class:`FieldsEmit`); other emits go to :meth:`_single_emit` or :meth:`emit`,
        which behave the same (but for ``WindowOutput.count``, which only spouts read).

        Inside the input loop (``deferred`` set) that commonest emit only waits, to be
        routed with the others of the window (``engine.executor.deferred_emits``); any other emit
        routes the waiting ones first, so that rows keep their order per target task.

        Called once per emitted tuple: this is the hottest code of a bolt that emits.
        """
        deferred = self.deferred
        if (deferred is not None and stream is None and anchors is None and direct_task is None
                and not need_task_ids and type(values) is list
                and len(values) == self._deferred_arity):
            deferred.append(values)
            return None
        if deferred or self.deferred_groups:
            route_deferred(self, new_id)
        fields = self._default_fields if stream is None else self._fields_emits.get(stream)
        if (fields is None or anchors is not None or direct_task is not None or need_task_ids
                or type(values) is not list or len(values) != fields.arity):
            return self._single_emit(values, stream, anchors, direct_task, need_task_ids)
        out = self.output
        if out.generation != fields.generation:
            fields.open_window(out.generation)
        key = values[fields.key_index]
        position = (hash(key) if type(key) is str else stable_hash(key)) % fields.count
        appends = fields.batches[position] or self._open_fields_batch(fields, position)
        appends[0](values)
        current = self.current
        if current is None or not self.auto_anchor:
            appends[1](None)
            appends[2](None)
        elif current.root is not None:  # one tree: a root and an edge, no map
            appends[1](current.root)
            edge = new_id(64)
            current.ack_val ^= edge
            appends[2](edge)
        elif current.edge:  # several trees: one edge for all of them
            appends[1](None)
            edge = new_id(64)
            current.ack_val ^= edge
            appends[2](dict.fromkeys(current.edge, edge))  # type: ignore[arg-type]
        else:
            appends[1](None)
            appends[2](None)
        # not out.count (read for spouts only, see WindowOutput.count)
        fields.emitted += 1  # a slot: the route's counters get it in _fold_fields_counts
        return None

    def _open_fields_batch(self, fields: FieldsEmit, position: int) -> tuple[Any, Any, Any]:
        """The column appends of this window's batch for ``fields``' task at ``position``."""
        columns = self.columns_for(fields.tasks[position], fields.route.stream.name)
        appends = columns[VALUES].append, columns[ROOTS].append, columns[EDGES].append
        fields.batches[position] = appends
        return appends

    def _single_emit(self, values: Any, stream: str | None = None, anchors: Any = None,
                     direct_task: int | None = None, need_task_ids: bool = False
                     ) -> list[int] | None:
        """:meth:`bolt_emit` on a stream with one subscription of any grouping."""
        if self.deferred or self.deferred_groups:
            route_deferred(self, new_id)
        route = self._routes.get(stream or DEFAULT_STREAM)
        if (route is None or route.single is None or anchors is not None
                or direct_task is not None or need_task_ids or type(values) is not list
                or len(values) != route.arity):
            return self.emit(values, stream, anchors, direct_task, need_task_ids, None)
        tasks = route.single(values)
        out, name = self.output, route.stream.name
        if out.generation != self._generation:
            self._columns, self._generation = {}, out.generation
        cache, current = self._columns, self.current
        if current is None or not self.auto_anchor:
            root = edges = None
        else:
            root, edges = current.root, current.edge
        if root is not None:  # one tree: a root and an edge per delivery, no map
            for task in tasks:
                columns = cache.get((task, name)) or self.columns_for(task, name)
                columns[VALUES].append(values)
                columns[ROOTS].append(root)
                edge = new_id(64)
                current.ack_val ^= edge  # type: ignore[union-attr]
                columns[EDGES].append(edge)
        elif edges:  # several trees: one edge for all of them
            for task in tasks:
                columns = cache.get((task, name)) or self.columns_for(task, name)
                columns[VALUES].append(values)
                columns[ROOTS].append(None)
                edge = new_id(64)
                current.ack_val ^= edge  # type: ignore[union-attr]
                columns[EDGES].append(dict.fromkeys(edges, edge))  # type: ignore[arg-type]
        else:
            for task in tasks:
                columns = cache.get((task, name)) or self.columns_for(task, name)
                columns[VALUES].append(values)
                columns[ROOTS].append(None)
                columns[EDGES].append(None)
        n = len(tasks)
        out.count += n
        route.emitted += 1
        route.transferred += n
        return None

    def spout_emit(self, values: Any, tup_id: Any = None, stream: str | None = None,
                   direct_task: int | None = None, need_task_ids: bool = False
                   ) -> list[int] | None:
        """``Spout.emit`` itself, for spouts that do not override it.

        The executor binds it to the instance. It does the common emit (a list with a
        message id, tracked or not, on a stream with one non-direct subscription) in one
        call; anything else goes to :meth:`emit`, which behaves the same. Called once per
        emitted spout tuple.
        """
        route = self._routes.get(stream or DEFAULT_STREAM)
        if (tup_id is None or route is None or route.single is None
                or direct_task is not None or need_task_ids or type(values) is not list
                or len(values) != route.arity):
            return self.emit(values, stream, None, direct_task, need_task_ids, tup_id)
        tasks = route.single(values)
        self._emit_spout_tuple(tasks, route.stream.name, values, tup_id)
        n = len(tasks)
        self.output.count += n
        route.emitted += 1
        route.transferred += n
        return None

    def columns_for(self, task: int, stream: str) -> list[Any]:
        """This window's batch for ``task`` on ``stream``, cached per collector."""
        out = self.output
        if out.generation != self._generation:
            self._columns, self._generation = {}, out.generation
        columns = self._columns.get((task, stream))
        if columns is None:
            columns = self._columns[(task, stream)] = out.batch(
                self.task_executor[task], task, self.task, stream)
        return columns

    def _fold_fields_counts(self) -> None:
        """Add the fields emits' counts to their routes' emitted and transferred counts."""
        for name, fields in self._fields_emits.items():
            if name is not None and fields.emitted:
                fields.route.emitted += fields.emitted
                fields.route.transferred += fields.emitted  # one target each
                fields.emitted = 0

    def take_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """Tuples emitted and transferred per stream since the last call.

        Read after the window's output was taken, which routed the waiting emits and counted
        them (``WindowOutput.take``).
        """
        self._fold_fields_counts()
        emitted, transferred = {}, {}
        for name, route in self._routes.items():
            if route.emitted:
                emitted[name], transferred[name] = route.emitted, route.transferred
                route.emitted = route.transferred = 0
        return emitted, transferred

    def _anchor_tuples(self, anchors: Any) -> list[Tuple] | None:
        if anchors is None:
            current = self.current
            return [current] if self.auto_anchor and current is not None and (
                current.root is not None or current.edge) else None
        tuples = [anchors] if isinstance(anchors, Tuple) else list(anchors)
        return [a for a in tuples if a.root is not None or a.edge] or None

    def _emit_spout_tuple(self, tasks: list[int], stream: str, values: list[Any],
                          tup_id: Any) -> None:
        out, src = self.output, self.task
        if out.generation != self._generation:
            self._columns, self._generation = {}, out.generation
        cache = self._columns
        if not self.tracking:
            for task in tasks:
                columns = cache.get((task, stream)) or self.columns_for(task, stream)
                columns[VALUES].append(values)
                columns[ROOTS].append(None)
                columns[EDGES].append(None)
            self.immediate_acks.append((tup_id, stream, 1))
            return
        root, xor = new_id(64), 0
        for task in tasks:
            edge = new_id(64)
            xor ^= edge
            columns = cache.get((task, stream)) or self.columns_for(task, stream)
            columns[VALUES].append(values)
            columns[ROOTS].append(root)
            columns[EDGES].append(edge)
        out.inits[root] = src
        out.xor[root] = out.xor.get(root, 0) ^ xor
        self.pending_roots[root] = (tup_id, time.monotonic(), stream)

    def ack(self, tup: Tuple) -> None:
        """Ack ``tup``: one XOR contribution per root it belongs to. Repeats are ignored."""
        if tup.done:
            return
        tup.done = True
        key = (tup.component, tup.stream)
        self.acked_count[key] = self.acked_count.get(key, 0) + 1
        received = getattr(tup, "received", None)  # set for bolts that ack themselves
        if received is not None:
            self.acked_ms[key] = self.acked_ms.get(key, 0.0) + \
                (time.perf_counter() - received) * 1000.0
        root = tup.root
        if root is not None:
            xor = self.output.xor
            xor[root] = xor.get(root, 0) ^ tup.edge ^ tup.ack_val  # type: ignore[operator]
        elif tup.edge:
            xor, val = self.output.xor, tup.ack_val
            for root, edge in tup.edge.items():  # type: ignore[union-attr]
                xor[root] = xor.get(root, 0) ^ edge ^ val

    def fail(self, tup: Tuple, reason: str | None = None, cause: str = FAIL_EXPLICIT) -> None:
        """Fail ``tup``: every root it belongs to fails at once. Repeats are ignored.

        ``cause`` (one of :data:`~sparkstorm.engine.wire.failures.FAIL_CAUSES`) and ``reason``
        travel with the roots to the spout's statistics, so the UI can say what failed them.
        """
        if tup.done:
            return
        tup.done = True
        self.failed_count[(tup.component, tup.stream)] = \
            self.failed_count.get((tup.component, tup.stream), 0) + 1
        if tup.root is not None or tup.edge:
            mark_failed(self.output, roots_of(tup.root, tup.edge), cause,
                        f"{self.component}: {reason or 'fail() called'}")

    def auto_ack(self, tup: Tuple) -> None:
        """The bolt loop's ack (``auto_ack``): :meth:`ack`'s XOR without its counting.

        The loop does the counting per batch. Called once per auto-acked tuple: keep it lean.
        """
        tup.done = True
        root = tup.root
        if root is not None:
            xor = self.output.xor
            xor[root] = xor.get(root, 0) ^ tup.edge ^ tup.ack_val  # type: ignore[operator]
        elif tup.edge:
            xor, val = self.output.xor, tup.ack_val
            for root, edge in tup.edge.items():  # type: ignore[union-attr]
                xor[root] = xor.get(root, 0) ^ edge ^ val

    def reset_timeout(self, tup: Tuple) -> None:
        """Ask the spouts of ``tup``'s roots to restart their message timeouts."""
        self.output.resets.update(roots_of(tup.root, tup.edge))


class FieldsEmit:
    """A stream that :meth:`TaskCollector.bolt_emit` routes itself.

    It has one subscriber, which groups by one field. The target is
    ``tasks[hash(value) % count]``, the fields grouping's own choice (``routing._fields``),
    and the target's batch is found by that position in :attr:`batches`, the column
    appends of this window's batches (emptied each window).
    """

    __slots__ = ("arity", "batches", "count", "emitted", "generation", "key_index", "route",
                 "tasks")

    def __init__(self, route: StreamRoute, key_index: int) -> None:
        self.route = route
        self.arity = route.arity
        self.key_index = key_index
        self.tasks = route.subs[0].tasks
        self.count = len(self.tasks)
        self.generation = -1
        self.batches: list[tuple[Any, Any, Any] | None] = []
        self.emitted = 0
        """Emits since the route's counters last got them (one delivery each)."""

    def open_window(self, generation: int) -> None:
        """Forget the batches of the window before (its output was taken)."""
        self.generation = generation
        self.batches = [None] * self.count

    @classmethod
    def for_routes(cls, routes: dict[str, StreamRoute]) -> dict[str | None, FieldsEmit]:
        """The fields emits of ``routes``, by stream name (the default stream also by None)."""
        found: dict[str | None, FieldsEmit] = {}
        for name, route in routes.items():
            key_index = route.fields_key_index
            if key_index is not None:
                found[name] = cls(route, key_index)
        if DEFAULT_STREAM in found:
            found[None] = found[DEFAULT_STREAM]
        return found


def _edges(anchor_tuples: list[Tuple]) -> tuple[int | None, Edge]:
    """One delivery's (root, edge) columns; XORs the fresh edge into each anchor's ack_val.

    Every anchor gets one fresh edge for all its roots; a root two anchors share gets
    the XOR of their edges, as Storm's anchor map does.
    """
    if len(anchor_tuples) == 1:  # the common case: one anchor
        anchor = anchor_tuples[0]
        edge = new_id(64)
        anchor.ack_val ^= edge
        if anchor.root is not None:
            return anchor.root, edge
        return None, dict.fromkeys(anchor.edge, edge)  # type: ignore[arg-type]
    edges: dict[int, int] = {}
    for anchor in anchor_tuples:
        edge = new_id(64)
        anchor.ack_val ^= edge
        for root in roots_of(anchor.root, anchor.edge):
            edges[root] = edges.get(root, 0) ^ edge
    return split_map(edges)


__all__ = ["FAIL_CAUSES", "FAIL_CRASH", "FAIL_ERROR", "FAIL_EXPLICIT", "FAIL_TIMEOUT",
           "TaskCollector", "WindowOutput", "mark_failed", "new_id"]
