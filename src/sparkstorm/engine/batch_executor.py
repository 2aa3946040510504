"""The executor of a :class:`~sparkstorm.topology.batch_bolt.BatchBolt`.

Per window it merges each task's input batches by source (component, stream), hands each
merged batch to ``process_batch`` as columns, and acks or fails it as a whole (see
``engine.batch_anchoring``). Tick tuples take the per-tuple path (``process_tick``). The
rows a batch bolt emits go straight into the window's output batches, routed per row by the
stream's groupings: no ``Tuple`` is made on either side.
"""

from __future__ import annotations

import time
from itertools import chain
from typing import Any

from sparkstorm.engine.batch_anchoring import BatchAnchoring
from sparkstorm.engine.collector import TaskCollector, new_id
from sparkstorm.engine.executor import BoltExecutor, ComponentFailure
from sparkstorm.engine.executor_checkpoint import RestorePoint
from sparkstorm.engine.plan import ExecutionPlan
from sparkstorm.engine.routing import Chooser
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
from sparkstorm.topology.tuple import SYSTEM_COMPONENT, is_tick


class TaskBatchSink:
    """Emits the rows of one batch bolt task into its window output (``BatchSink``).

    Args:
        collector: the task's collector (routes, output batches, counters).
    """

    def __init__(self, collector: TaskCollector) -> None:
        self.collector = collector
        self.anchoring: BatchAnchoring | None = None
        """The batch being processed; set by the executor around ``process_batch``."""

    def emit_batch(self, columns: Any, stream: str | None, parents: Any,
                   anchored: bool) -> int:
        """See :meth:`~sparkstorm.topology.batch_bolt.BatchBolt.emit_batch`."""
        route = self.collector.route(stream)
        where = f"{self.collector.component}/{route.stream.name}"
        return self.emit_rows(columns_to_rows(columns, route.stream.fields, where), stream,
                              parents, anchored)

    def emit_rows(self, rows: list[list[Any]], stream: str | None, parents: Any,
                  anchored: bool) -> int:
        """Route and buffer ``rows``; called once per ``emit_batch`` (the hot path)."""
        collector = self.collector
        route = collector.route(stream)
        name = route.stream.name
        if route.stream.direct:
            msg = (
                f"component {collector.component!r} emitted a batch on direct stream "
                f"{name!r}; batches are routed by groupings only: emit(values, "
                "direct_task=...) per tuple instead"
            )
            raise TopologyError(msg, code="BATCH_DIRECT_STREAM")
        if rows and len(rows[0]) != route.arity:  # emit_batch's rows always fit
            route.tasks_for(rows[0], None)  # raises TUPLE_ARITY_MISMATCH
        anchoring = self.anchoring if anchored else None
        choose = route.single or (lambda values: route.tasks_for(values, None))
        target = _TaskColumns(collector, name)
        if anchoring is None:
            deliveries = _append_unanchored(rows, choose, target)
        elif parents is None:
            deliveries = _append_whole_batch(rows, choose, target, anchoring)
        else:
            deliveries = _append_by_parent(rows, self._parents(parents, len(rows), name),
                                           choose, target, anchoring)
        collector.output.count += deliveries
        route.emitted += len(rows)
        route.transferred += deliveries
        return len(rows)

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


class _TaskColumns(dict[int, tuple[list[Any], list[Any], list[Any]]]):
    """Target task -> its (values, roots, edges) columns in the window output, looked up once."""

    def __init__(self, collector: TaskCollector, stream: str) -> None:
        super().__init__()
        self.collector = collector
        self.stream = stream

    def __missing__(self, task: int) -> tuple[list[Any], list[Any], list[Any]]:
        batch = self.collector.columns_for(task, self.stream)
        found = self[task] = (batch[3], batch[4], batch[5])
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
                        anchoring: BatchAnchoring) -> int:
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
                      target: _TaskColumns, anchoring: BatchAnchoring) -> int:
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
        self.sinks = {task: TaskBatchSink(collector)
                      for task, collector in self.collectors.items()}
        wants_arrow = all(type(i).batch_format == "arrow" for i in self.instances.values())
        self.pyarrow = load_pyarrow() if wants_arrow else None

    def _process_batches(self, batches: list[list[Any]]) -> None:
        """Merge the window's batches per (task, source component, stream) and run them."""
        groups: dict[tuple[int, str, str], list[list[Any]]] = {}
        task_component = self.plan.task_component
        for batch in batches:
            component = task_component.get(batch[1], SYSTEM_COMPONENT)
            groups.setdefault((batch[0], component, batch[2]), []).append(batch)
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
        if len(batches) == 1:
            rows, roots, edges = batches[0][3], batches[0][4], batches[0][5]
        else:
            rows = list(chain.from_iterable(batch[3] for batch in batches))
            roots = list(chain.from_iterable(batch[4] for batch in batches))
            edges = list(chain.from_iterable(batch[5] for batch in batches))
        if not rows:
            return
        key = (component, stream)
        instance, sink, stats = self.instances[task], self.sinks[task], self.stats
        anchoring = sink.anchoring = BatchAnchoring(roots, edges)
        instance.source = BatchSource(component, stream)
        instance._batch_sink = sink
        started = time.perf_counter()
        try:
            instance.process_batch(self._columns(rows, component, stream))
        except Exception as exc:
            self.record_error(task, exc)
            self.must_restart = True
            reason = f"{type(exc).__name__}: {exc}"
            anchoring.fail_into(self.output, f"{self.info.component}: {reason}")
            stats.count(stats.failed, key, len(rows))
            raise ComponentFailure(reason) from exc
        finally:
            instance._batch_sink = sink.anchoring = None
            spent_ms = (time.perf_counter() - started) * 1000.0
            stats.count(stats.executed, key, len(rows))
            stats.add_ms(stats.execute_ms, key, spent_ms)
        anchoring.ack_into(self.output.xor)
        stats.count(stats.acked, key, len(rows))
        # each input waited for the whole batch: that is its process latency
        stats.add_ms(stats.process_ms, key, spent_ms * len(rows))

    def _columns(self, rows: list[list[Any]], component: str, stream: str) -> Any:
        fields = positional_fields(self.plan.fields_of(component, stream), len(rows[0]))
        columns = rows_to_lists(rows, fields)
        if self.pyarrow is None:
            return columns
        return lists_to_record_batch(self.pyarrow, columns, f"{component}/{stream}")


def is_batch_bolt(cls: Any) -> bool:
    """Whether the engine must run ``cls`` batch by batch."""
    return bool(getattr(cls, "batch_api", False))


__all__ = ["BatchBoltExecutor", "TaskBatchSink", "is_batch_bolt"]
