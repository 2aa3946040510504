"""The executor of a :class:`~sparkstorm.topology.batch_bolt.BatchBolt`.

Per window it merges each task's input batches by source (component, stream), hands each
merged batch to ``process_batch`` as columns, and acks or fails it as a whole (see
``engine.columnar.batch_anchoring``). Tick tuples take the per-tuple path (``process_tick``). The
rows a batch bolt emits go straight into the window's output batches, routed per row by the
stream's groupings: no ``Tuple`` is made on either side.
"""

from __future__ import annotations

import time
from itertools import chain
from typing import Any

from sparkstorm.config import conf_bool
from sparkstorm.engine.columnar.arrow_anchoring import ArrowAnchoring, concat_anchors
from sparkstorm.engine.columnar.arrow_batch import (
    ArrowPiece,
    anchors_roots,
    decode_blob,
    lists_anchors,
)
from sparkstorm.engine.columnar.arrow_emit import ArrowEmitter
from sparkstorm.engine.columnar.arrow_rows import is_batch_component
from sparkstorm.engine.columnar.batch_anchoring import BatchAnchoring
from sparkstorm.engine.executor.checkpoint_part import RestorePoint
from sparkstorm.engine.executor.collector import TaskCollector, mark_failed, new_id
from sparkstorm.engine.executor.host import BoltExecutor, ComponentFailure
from sparkstorm.engine.executor.routing import Chooser, StreamRoute
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.batch_columns import EDGES, ROOTS, SOURCE, STREAM, TARGET, VALUES
from sparkstorm.engine.wire.failures import FAIL_ERROR, FAIL_EXPLICIT
from sparkstorm.errors import TopologyError
from sparkstorm.topology.batch_bolt import BatchSource
from sparkstorm.topology.batch_columns import (
    as_list,
    columns_to_rows,
    lists_to_record_batch,
    load_pyarrow,
    positional_fields,
    rows_to_lists,
)
from sparkstorm.topology.failed import FailedException, ReportedFailedException
from sparkstorm.topology.tuple import SYSTEM_COMPONENT, is_tick


class TaskBatchSink:
    """Emits the rows of one batch bolt task into its window output (``BatchSink``).

    Args:
        collector: the task's collector (routes, output batches, counters).
    """

    def __init__(self, collector: TaskCollector, arrow: ArrowEmitter | None = None) -> None:
        self.collector = collector
        self.arrow = arrow
        """Emits Arrow pieces to batch consumers (None: rows to every consumer)."""
        self.anchoring: BatchAnchoring | ArrowAnchoring | None = None
        """The batch being processed; set by the executor around ``process_batch``."""

    def emit_batch(self, columns: Any, stream: str | None, parents: Any,
                   anchored: bool) -> int:
        """See :meth:`~sparkstorm.topology.batch_bolt.BatchBolt.emit_batch`."""
        route = self.collector.route(stream)
        where = f"{self.collector.component}/{route.stream.name}"
        if self.arrow is not None:
            routers, choose = self.arrow.plan(route)
            if routers:
                try:
                    return self._emit_arrow(columns, route, routers, choose, parents,
                                            anchored, where)
                except TopologyError as exc:  # mixed types in a list: rows, as before
                    if exc.code != "BATCH_COLUMN_NOT_ARROW":
                        raise
        return self.emit_rows(columns_to_rows(columns, route.stream.fields, where), stream,
                              parents, anchored)

    def _emit_arrow(self, columns: Any, route: StreamRoute, routers: Any,
                    choose: Chooser | None, parents: Any, anchored: bool, where: str) -> int:
        """``emit_batch`` to a stream with batch consumers: Arrow pieces (and rows)."""
        arrow, name = self.arrow, route.stream.name
        assert arrow is not None
        refuse_direct(self.collector.component, route)
        values = arrow.record_batch(columns, route.stream.fields, where)
        rows: int = values.num_rows
        anchoring = self.anchoring if anchored else None
        assert anchoring is None or isinstance(anchoring, ArrowAnchoring)
        if anchoring is not None and parents is not None:
            parents = arrow.parents(parents, rows, len(anchoring), name)
        deliveries = arrow.emit(routers, values, name, anchoring, parents)
        if choose is not None and rows:  # per-tuple consumers of the stream: rows
            deliveries += self._append(
                columns_to_rows(values, route.stream.fields, where), choose, name,
                anchoring, None if parents is None else as_list(parents))
        self.collector.output.count += deliveries
        route.emitted += rows
        route.transferred += deliveries
        return rows

    def emit_rows(self, rows: list[list[Any]], stream: str | None, parents: Any,
                  anchored: bool) -> int:
        """Route and buffer ``rows``; called once per ``emit_batch`` (the hot path)."""
        collector = self.collector
        route = collector.route(stream)
        name = route.stream.name
        refuse_direct(collector.component, route)
        if rows and len(rows[0]) != route.arity:  # emit_batch's rows always fit
            route.tasks_for(rows[0], None)  # raises TUPLE_ARITY_MISMATCH
        anchoring = self.anchoring if anchored else None
        choose = route.single or (lambda values: route.tasks_for(values, None))
        if anchoring is not None and parents is not None:
            parents = self._parents(parents, len(rows), name)
        deliveries = self._append(rows, choose, name, anchoring, parents)
        collector.output.count += deliveries
        route.emitted += len(rows)
        route.transferred += deliveries
        return len(rows)

    def _append(self, rows: list[list[Any]], choose: Chooser, stream: str,
                anchoring: BatchAnchoring | ArrowAnchoring | None,
                parents: list[int] | None) -> int:
        """Rows into the window's output batches, an edge per row; returns the deliveries."""
        target = _TaskColumns(self.collector, stream)
        if anchoring is None:
            return _append_unanchored(rows, choose, target)
        if parents is None:
            return _append_whole_batch(rows, choose, target, anchoring)
        return _append_by_parent(rows, parents, choose, target, anchoring)

    def _parents(self, parents: Any, rows: int, stream: str) -> list[int]:
        indexes = as_list(parents)
        size = len(self.anchoring) if self.anchoring else 0
        if len(indexes) != rows or (indexes and (min(indexes) < 0 or max(indexes) >= size)):
            msg = (
                f"component {self.collector.component!r} emitted {rows} rows on {stream!r} "
                f"with {len(indexes)} parents (range {min(indexes, default=None)!r}.."
                f"{max(indexes, default=None)!r}); give one input row index in 0..{size - 1} "
                "per emitted row, e.g. pyarrow.compute.list_parent_indices of a split"
            )
            raise TopologyError(msg, code="BATCH_PARENTS_MISMATCH")
        return indexes


def refuse_direct(component: str, route: StreamRoute) -> None:
    """Refuse a batch on a direct stream (``BATCH_DIRECT_STREAM``): batches follow groupings.

    Raises:
        TopologyError: ``BATCH_DIRECT_STREAM`` when ``route``'s stream is direct.
    """
    if route.stream.direct:
        msg = (
            f"component {component!r} emitted a batch on direct stream "
            f"{route.stream.name!r}; batches are routed by groupings only: emit(values, "
            "direct_task=...) per tuple instead"
        )
        raise TopologyError(msg, code="BATCH_DIRECT_STREAM")


class _TaskColumns(dict[int, tuple[list[Any], list[Any], list[Any]]]):
    """Target task -> its (values, roots, edges) columns in the window output, looked up once."""

    def __init__(self, collector: TaskCollector, stream: str) -> None:
        super().__init__()
        self.collector = collector
        self.stream = stream

    def __missing__(self, task: int) -> tuple[list[Any], list[Any], list[Any]]:
        batch = self.collector.columns_for(task, self.stream)
        found = self[task] = (batch[VALUES], batch[ROOTS], batch[EDGES])
        return found


# The three loops below run once per emitted row and delivery: everything is a local.

def _append_unanchored(rows: list[list[Any]], choose: Chooser, target: _TaskColumns) -> int:
    deliveries = 0
    for values in rows:
        tasks = choose(values)
        for task in tasks:
            values_out, roots_out, edges_out = target[task]
            values_out.append(values)
            roots_out.append(None)
            edges_out.append(None)
        deliveries += len(tasks)
    return deliveries


def _append_whole_batch(rows: list[list[Any]], choose: Chooser, target: _TaskColumns,
                        anchoring: BatchAnchoring | ArrowAnchoring) -> int:
    roots = anchoring.roots()
    if not roots:
        return _append_unanchored(rows, choose, target)
    single = roots[0] if len(roots) == 1 else None
    deliveries, batch_val, fromkeys = 0, anchoring.batch_val, dict.fromkeys
    for values in rows:
        tasks = choose(values)
        for task in tasks:
            values_out, roots_out, edges_out = target[task]
            values_out.append(values)
            edge = new_id(64)
            batch_val ^= edge
            roots_out.append(single)
            edges_out.append(edge if single is not None else fromkeys(roots, edge))
        deliveries += len(tasks)
    anchoring.batch_val = batch_val
    return deliveries


def _append_by_parent(rows: list[list[Any]], parents: list[int], choose: Chooser,
                      target: _TaskColumns, anchoring: BatchAnchoring | ArrowAnchoring) -> int:
    roots_in, edges_in, row_vals = (anchoring.roots_column, anchoring.edges_column,
                                    anchoring.parent_vals())
    deliveries, fromkeys = 0, dict.fromkeys
    for values, parent in zip(rows, parents, strict=True):
        root, many = roots_in[parent], edges_in[parent]
        tasks = choose(values)
        for task in tasks:
            values_out, roots_out, edges_out = target[task]
            values_out.append(values)
            roots_out.append(root)
            if root is not None:
                edge = new_id(64)
                row_vals[parent] ^= edge
                edges_out.append(edge)
            elif many:
                edge = new_id(64)
                row_vals[parent] ^= edge
                edges_out.append(fromkeys(many, edge))  # type: ignore[arg-type]
            else:
                edges_out.append(None)
        deliveries += len(tasks)
    return deliveries


class BatchBoltExecutor(BoltExecutor):
    """Executor of a batch bolt: one ``process_batch`` per task, input stream and window."""

    def __init__(self, plan: ExecutionPlan, gid: int, topology_name: str,
                 restore: RestorePoint | None = None) -> None:
        super().__init__(plan, gid, topology_name, restore)
        wants_arrow = all(type(i).batch_format == "arrow" for i in self.instances.values())
        self.pyarrow = load_pyarrow() if wants_arrow else None
        self.wire_pa = load_pyarrow() if conf_bool(self.conf, "topology.batch.arrow.wire") \
            else None
        """pyarrow when this executor sends batch consumers Arrow pieces (else None)."""
        kinds: dict[str, bool] = {}

        def is_batch(component: str) -> bool:
            if component not in kinds:
                kinds[component] = is_batch_component(plan, component)
            return kinds[component]
        self.sinks = {
            task: TaskBatchSink(collector, None if self.wire_pa is None
                                else ArrowEmitter(self.wire_pa, collector, is_batch))
            for task, collector in self.collectors.items()}

    def _decode(self, blobs: list[bytes]) -> list[Any]:
        """The window's batches: msgpack rows batches and :class:`ArrowPiece` objects."""
        batches: list[Any] = []
        for blob in blobs:
            rows, pieces = decode_blob(blob)
            batches.extend(rows)
            batches.extend(pieces)
        return batches

    def _fail_rest(self, batches: list[Any], reason: str) -> None:
        """Fail the window's batches after the one that raised (Arrow pieces too)."""
        why = f"{self.info.component}: {reason}"
        rows = [batch for batch in batches if not isinstance(batch, ArrowPiece)]
        super()._fail_rest(rows, reason)
        for piece in batches:
            if isinstance(piece, ArrowPiece):
                mark_failed(self.output, anchors_roots(piece.anchors), FAIL_ERROR, why)

    def _process_batches(self, batches: list[list[Any]]) -> None:
        """Merge the window's batches per (task, source component, stream) and run them."""
        groups: dict[tuple[int, str, str], list[list[Any]]] = {}
        task_component = self.plan.task_component
        for batch in batches:
            component = task_component.get(batch[SOURCE], SYSTEM_COMPONENT)
            groups.setdefault((batch[TARGET], component, batch[STREAM]), []).append(batch)
        keys = list(groups)
        for position, key in enumerate(keys):
            try:
                if is_tick(key[1], key[2]):
                    for batch in groups[key]:
                        self._process_batch(*batch)  # per tuple: process_tick
                else:
                    self._run_batch(*key, groups[key])
            except ComponentFailure as failure:
                rest = [batch for later in keys[position + 1:] for batch in groups[later]]
                self._fail_rest(rest, str(failure))
                raise

    def _run_batch(self, task: int, component: str, stream: str,
                   batches: list[list[Any]]) -> None:
        """One ``process_batch`` call over the merged ``batches``, then ack or fail them."""
        found = self._arrow_input(batches, component, stream) \
            if self.wire_pa is not None or any(isinstance(b, ArrowPiece) for b in batches) \
            else self._rows_input(batches, component, stream)
        if found is None:
            return
        columns, anchoring, count = found
        key = (component, stream)
        instance, sink, stats = self.instances[task], self.sinks[task], self.stats
        sink.anchoring = anchoring
        instance.source = BatchSource(component, stream)
        instance._batch_sink = sink
        started = time.perf_counter()
        try:
            instance.process_batch(columns)
        except FailedException as exc:  # the batch fails, the bolt goes on (Storm's meaning)
            reason = f"{type(exc).__name__}: {exc}"
            anchoring.fail_into(self.output, f"{self.info.component}: {reason}", FAIL_EXPLICIT)
            stats.count(stats.failed, key, count)
            if isinstance(exc, ReportedFailedException):
                instance.raise_exception(exc)
            return
        except Exception as exc:
            self.record_error(task, exc)
            self.must_restart = True
            reason = f"{type(exc).__name__}: {exc}"
            anchoring.fail_into(self.output, f"{self.info.component}: {reason}")
            stats.count(stats.failed, key, count)
            raise ComponentFailure(reason) from exc
        finally:
            instance._batch_sink = sink.anchoring = None
            spent_ms = (time.perf_counter() - started) * 1000.0
            stats.count(stats.executed, key, count)
            stats.add_ms(stats.execute_ms, key, spent_ms)
        anchoring.ack_into(self.output.xor)
        stats.count(stats.acked, key, count)
        # each input waited for the whole batch: that is its process latency
        stats.add_ms(stats.process_ms, key, spent_ms * count)

    def _rows_input(self, batches: list[list[Any]], component: str, stream: str
                    ) -> tuple[Any, BatchAnchoring, int] | None:
        """Columns and anchoring of msgpack rows batches (no Arrow on the wire)."""
        if len(batches) == 1:
            rows, roots, edges = batches[0][3], batches[0][4], batches[0][5]
        else:
            rows = list(chain.from_iterable(batch[VALUES] for batch in batches))
            roots = list(chain.from_iterable(batch[ROOTS] for batch in batches))
            edges = list(chain.from_iterable(batch[EDGES] for batch in batches))
        if not rows:
            return None
        return self._columns(rows, component, stream), BatchAnchoring(roots, edges), len(rows)

    def _arrow_input(self, batches: list[Any], component: str, stream: str
                     ) -> tuple[Any, ArrowAnchoring, int] | None:
        """Columns and run anchoring of Arrow pieces and rows batches, merged in order."""
        pa = self.wire_pa or load_pyarrow()
        values: list[Any] = []
        anchors = []
        for batch in batches:
            if isinstance(batch, ArrowPiece):
                values.append(batch.values)
                anchors.append((batch.anchors, batch.values.num_rows))
            elif batch[VALUES]:
                values.append(batch[VALUES])
                anchors.append((lists_anchors(pa, batch[ROOTS], batch[EDGES]), len(batch[VALUES])))
        count = sum(rows for _, rows in anchors)
        if not count:
            return None
        anchoring = ArrowAnchoring(pa, concat_anchors(pa, anchors), count)
        return self._merged_columns(values, component, stream), anchoring, count

    def _merged_columns(self, parts: list[Any], component: str, stream: str) -> Any:
        """One batch of columns from RecordBatches and rows, in the bolt's format."""
        first = parts[0]
        width = len(first[0]) if isinstance(first, list) else first.num_columns
        fields = positional_fields(self.plan.fields_of(component, stream), width)
        where = f"{component}/{stream}"
        pa = self.pyarrow
        if pa is None:  # lists
            merged: dict[str, list[Any]] = {name: [] for name in fields}
            for part in parts:
                columns = rows_to_lists(part, fields) if isinstance(part, list) else \
                    {name: column.to_pylist() for name, column in zip(
                        fields, part.columns, strict=True)}
                for name in fields:
                    merged[name].extend(columns[name])
            return merged
        batches = [lists_to_record_batch(pa, rows_to_lists(part, fields), where)
                   if isinstance(part, list) else part for part in parts]
        if len(batches) == 1:
            return batches[0]
        try:
            return pa.concat_batches(batches)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # types differ: let Arrow promote
            table = pa.concat_tables([pa.Table.from_batches([b]) for b in batches],
                                     promote_options="permissive")
            return table.combine_chunks().to_batches()[0]

    def _columns(self, rows: list[list[Any]], component: str, stream: str) -> Any:
        fields = positional_fields(self.plan.fields_of(component, stream), len(rows[0]))
        columns = rows_to_lists(rows, fields)
        if self.pyarrow is None:
            return columns
        return lists_to_record_batch(self.pyarrow, columns, f"{component}/{stream}")


def is_batch_bolt(cls: Any) -> bool:
    """Whether the engine must run ``cls`` batch by batch."""
    return bool(getattr(cls, "batch_api", False))


__all__ = ["BatchBoltExecutor", "TaskBatchSink", "is_batch_bolt", "refuse_direct"]
