"""The executor of a :class:`~sparkstorm.topology.batch_spout.BatchSpout`.

It is a spout executor whose producing thread calls ``next_batch(max_rows)`` once per
burst instead of ``next_tuple`` up to ``PRODUCE_BURST`` times, and whose bounds count
rows: the window's limit counts deliveries as for any spout, and the in-flight bounds
(``topology.max.spout.pending``, the sizer's pending bound) count the rows of the batches
in flight instead of their trees.

A batch with an id is one tuple tree. Its rows are emitted as the rows of a ``BatchBolt``
anchored to a whole input batch of one tuple, the batch's root (``TaskBatchSink`` with a
one-row anchoring): to ``BatchBolt`` consumers one Arrow run per target task, one edge each;
to per-tuple consumers one edge per delivered row. The XOR of those edges is the root's
init value (``WindowOutput.xor``), so the acker completes the tree when every run and row
was acked. Acking costs the spout one dictionary entry per batch, not per row.
"""

from __future__ import annotations

import time
from typing import Any

from sparkstorm.config import conf_bool
from sparkstorm.engine.columnar.arrow_anchoring import ArrowAnchoring
from sparkstorm.engine.columnar.arrow_batch import RunAnchors
from sparkstorm.engine.columnar.arrow_emit import ArrowEmitter
from sparkstorm.engine.columnar.arrow_rows import is_batch_component
from sparkstorm.engine.columnar.batch_anchoring import BatchAnchoring
from sparkstorm.engine.executor.batch_bolt import TaskBatchSink, refuse_direct
from sparkstorm.engine.executor.checkpoint_part import RestorePoint
from sparkstorm.engine.executor.collector import TaskCollector, mark_failed, new_id
from sparkstorm.engine.executor.spout import UNKNOWN_FAILURE, SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.failures import FAIL_ERROR, FAIL_TIMEOUT, Failure
from sparkstorm.errors import TopologyError
from sparkstorm.topology.batch_columns import columns_to_rows, load_pyarrow


class SpoutBatchEmitter:
    """Emits one batch spout task's batches (``SpoutBatchSink``).

    Args:
        collector: the task's collector (routes, window output, pending roots).
        arrow: emits Arrow pieces to ``BatchBolt`` consumers (None: rows to everyone).
        in_flight: called with (root, rows) for every tracked batch emitted.
    """

    def __init__(self, collector: TaskCollector, arrow: ArrowEmitter | None,
                 in_flight: Any) -> None:
        self.collector = collector
        self.arrow = arrow
        self.rows_sink = TaskBatchSink(collector, arrow)
        self.in_flight = in_flight
        self.routes_seen = collector.routes
        """The routes :attr:`arrow`'s routers were planned with."""
        self.types: dict[str, Any] = {}
        """Stream -> the Arrow schema of its first batch (later batches are cast to it)."""

    def emit_batch(self, columns: Any, batch_id: Any, stream: str | None) -> int:
        """See :meth:`~sparkstorm.topology.batch_spout.BatchSpout.emit_batch`."""
        collector = self.collector
        if self.arrow is not None and self.routes_seen is not collector.routes:
            self.arrow.plans.clear()  # a replan gave new routes: route by them from now on
            self.routes_seen = collector.routes
        route = collector.route(stream)  # UNDECLARED_STREAM before anything else
        name = route.stream.name
        columns = self._checked(columns, route)
        tracked = batch_id is not None and collector.tracking
        root = new_id(64) if tracked else None
        anchoring = self._anchoring(root) if root is not None else None
        sink, out = self.rows_sink, collector.output
        sink.anchoring = anchoring
        try:
            if isinstance(columns, list):  # checked rows: the stream has no BatchBolt consumer
                rows = sink.emit_rows(columns, name, None, anchoring is not None)
            else:
                rows = sink.emit_batch(columns, name, None, anchoring is not None)
        except Exception as exc:
            if root is not None:
                # every check passed, so routing raised half-way (a grouping refusing a
                # value): rows may be buffered with this root, so the tree is registered and
                # failed (a failed root never completes, whatever its XOR): the spout hears
                # fail(batch_id) and replays the whole batch
                self._register(root, batch_id, name, anchoring, len(columns)
                               if isinstance(columns, list) else columns.num_rows)
                mark_failed(out, [root], FAIL_ERROR,
                            f"{collector.component}: {type(exc).__name__}: {exc}")
            raise
        finally:
            sink.anchoring = None
        if root is not None:
            self._register(root, batch_id, name, anchoring, rows)
        elif batch_id is not None:  # no ackers: acked once emitted, as Storm does
            collector.immediate_acks.append((batch_id, name, rows))
        return rows

    def _register(self, root: int, batch_id: Any, stream: str, anchoring: Any,
                  rows: int) -> None:
        """Open tree ``root`` for the acker (its edges' XOR) and the spout (in flight)."""
        collector = self.collector
        out = collector.output
        out.inits[root] = collector.task
        out.xor[root] = out.xor.get(root, 0) ^ anchoring.batch_val
        collector.pending_roots[root] = (batch_id, time.monotonic(), stream)
        self.in_flight(root, rows)

    def _anchoring(self, root: int) -> ArrowAnchoring | BatchAnchoring:
        """The batch as one input tuple of tree ``root`` (edge 0) that rows anchor to."""
        if self.arrow is None:
            return BatchAnchoring([root], [0])
        pa = self.arrow.pa
        anchors = RunAnchors(None, pa.array([root], pa.uint64()), pa.array([0], pa.uint64()),
                             {})
        return ArrowAnchoring(pa, anchors, 1)

    def _checked(self, columns: Any, route: Any) -> Any:
        """``columns`` checked against the stream before any row is buffered.

        For a stream with ``BatchBolt`` consumers: a RecordBatch of the declared fields
        with the stream's first types. Otherwise: the rows, checked.

        Raises:
            TopologyError: the codes listed in ``topology.batch_spout``.
        """
        where = f"{self.collector.component}/{route.stream.name}"
        fields = route.stream.fields
        refuse_direct(self.collector.component, route)
        if self.arrow is None or not self.arrow.plan(route)[0]:
            return columns_to_rows(columns, fields, where)
        batch = self.arrow.record_batch(columns, fields, where)
        first = self.types.get(route.stream.name)
        if first is None:
            # an empty or all-null column says nothing of the stream's type: wait for one
            if batch.num_rows and not any(f.type == self.arrow.pa.null() for f in batch.schema):
                self.types[route.stream.name] = batch.schema
            return batch
        if batch.schema.equals(first) or not batch.num_rows:
            return batch
        return self._cast(batch, first, where)

    def _cast(self, batch: Any, schema: Any, where: str) -> Any:
        pa = self.arrow.pa  # type: ignore[union-attr]
        try:
            return batch.cast(schema, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            got = ", ".join(f"{f.name}: {f.type}" for f in batch.schema)
            want = ", ".join(f"{f.name}: {f.type}" for f in schema)
            msg = (
                f"emit_batch on {where!r}: columns ({got}) do not fit the stream's types "
                f"({want}), which its first batch set, and cannot be cast safely "
                f"({type(exc).__name__}: {exc}); emit one type per field on a stream "
                "(cast the columns before emitting)"
            )
            raise TopologyError(msg, code="BATCH_SPOUT_SCHEMA_CHANGED") from exc


class BatchSpoutExecutor(SpoutExecutor):
    """Executor of a batch spout: ``next_batch`` between windows, bounds counted in rows."""

    def __init__(self, plan: ExecutionPlan, gid: int, topology_name: str,
                 restore: RestorePoint | None = None) -> None:
        self.batch_rows: dict[int, int] = {}
        """Root -> rows of each tracked batch in flight (a restored tree counts one)."""
        self.pending_rows: dict[int, int] = {}
        """Task -> rows of its batches in flight."""
        self.pending_batches: dict[int, int] = {}
        """Task -> how many of its roots in flight are batches (the others, per-tuple emits
        and restored trees, count one row each)."""
        super().__init__(plan, gid, topology_name, restore)
        pa = load_pyarrow() if conf_bool(self.conf, "topology.batch.arrow.wire") else None
        kinds: dict[str, bool] = {}

        def is_batch(component: str) -> bool:
            if component not in kinds:
                kinds[component] = is_batch_component(plan, component)
            return kinds[component]
        with self.lock:
            for task, instance in self.instances.items():
                collector = self.collectors[task]
                arrow = None if pa is None else ArrowEmitter(pa, collector, is_batch)
                instance._batch_sink = SpoutBatchEmitter(
                    collector, arrow, lambda root, rows, task=task: self._in_flight(
                        task, root, rows))

    def _in_flight(self, task: int, root: int, rows: int) -> None:
        self.batch_rows[root] = rows
        self.pending_rows[task] = self.pending_rows.get(task, 0) + rows
        self.pending_batches[task] = self.pending_batches.get(task, 0) + 1

    def _room(self, collector: TaskCollector) -> int:
        """How many rows ``collector``'s task may emit now (0: none)."""
        room = self.limit - self._buffered()
        task = collector.task
        in_flight = (self.pending_rows.get(task, 0) + len(collector.pending_roots)
                     - self.pending_batches.get(task, 0) + self._window_rows(collector))
        for bound in (self.max_pending, self.auto_pending):
            if bound is not None:
                room = min(room, bound - in_flight)
        return room

    def _can_produce(self, collector: TaskCollector) -> bool:
        return self._room(collector) > 0

    def _produce_burst(self, task: int, instance: Any) -> bool:
        """One ``next_batch`` call of ``task`` (under ``calls``); whether it emitted."""
        collector, output = self.collectors[task], self.staging
        room = min(self._room(collector), instance.max_batch_rows)
        if self.must_restart or room <= 0:
            return False
        before = output.count
        self._call(task, instance.next_batch, room)
        return output.count != before or bool(collector.immediate_acks)

    def _rows_of(self, task: int, root: int) -> int:
        """Forget root ``root`` of ``task`` as in flight; its rows (1 if unknown)."""
        rows = self.batch_rows.pop(root, None)
        if rows is None:
            return 1
        self.pending_rows[task] -= rows
        self.pending_batches[task] -= 1
        return rows

    def _ack_all(self, roots: list[int]) -> None:
        """The acker's acks of a window, one verdict per batch (see ``SpoutExecutor``)."""
        for root in roots:
            self._finish(root, acked=True)

    def _finish(self, root: int, *, acked: bool, why: Failure = UNKNOWN_FAILURE) -> None:
        """A batch's verdict: ``ack``/``fail`` once with its id, statistics in rows."""
        collector = self._owner(root)
        if collector is None:
            return  # already timed out or failed: Storm ignores late verdicts too
        batch_id, emitted_at, stream = collector.pending_roots.pop(root)
        task = collector.task
        rows = self._rows_of(task, root)
        instance = self.instances[task]
        if acked:
            complete_ms = (self._now() - emitted_at) * 1000.0
            self.latency.add(complete_ms)  # one sample per batch: its rows completed at once
            self.acked[stream] = self.acked.get(stream, 0) + rows
            self.complete_ms[stream] = self.complete_ms.get(stream, 0.0) + complete_ms * rows
            self._call(task, instance.ack, batch_id)
        else:
            self.failed[stream] = self.failed.get(stream, 0) + rows
            key = (why.cause, why.reason)
            self.fail_causes[key] = self.fail_causes.get(key, 0) + rows
            if why.cause == FAIL_TIMEOUT:
                self.timed_out += rows - 1  # _expire counted the tree once
            self._call(task, instance.fail, batch_id)


__all__ = ["BatchSpoutExecutor", "SpoutBatchEmitter"]
