"""A batch bolt's ``emit_batch`` to batch consumers: Arrow pieces, routed and anchored by column.

For every subscription of the stream whose consumer is a ``BatchBolt``, the emitted columns
are cut by the grouping (``engine.columnar.arrow_routing``) into one :class:`~sparkstorm.engine.
arrow_batch.ArrowPiece` per target task, anchored by runs (``engine.columnar.arrow_anchoring``), and
kept in the window output's ``arrow`` pieces; no Python object is made per row. The
subscriptions of per-tuple consumers get rows, one edge per row, as before
(``engine.executor.batch_bolt``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sparkstorm.engine.columnar.arrow_anchoring import ArrowAnchoring
from sparkstorm.engine.columnar.arrow_batch import ArrowPiece, RunAnchors
from sparkstorm.engine.columnar.arrow_routing import BatchRouter, select
from sparkstorm.engine.executor.collector import TaskCollector
from sparkstorm.engine.executor.routing import Chooser, StreamRoute
from sparkstorm.errors import TopologyError
from sparkstorm.topology.batch_columns import lists_to_record_batch, positional_fields

StreamPlan = tuple[list[BatchRouter], Chooser | None]
"""A stream's routers for batch consumers, and the chooser of its per-tuple consumers."""


class ArrowEmitter:
    """Emits Arrow pieces for one task of a batch bolt.

    Args:
        pa: the pyarrow module.
        collector: the task's collector.
        is_batch: whether a component is a ``BatchBolt`` (its executors read Arrow pieces).
    """

    def __init__(self, pa: Any, collector: TaskCollector,
                 is_batch: Callable[[str], bool]) -> None:
        self.pa, self.pc = pa, pa.compute
        self.collector = collector
        self.is_batch = is_batch
        self.plans: dict[str, StreamPlan] = {}

    def plan(self, route: StreamRoute) -> StreamPlan:
        """The routers and per-tuple chooser of ``route`` (made once per stream)."""
        found = self.plans.get(route.stream.name)
        if found is None:
            routers, choosers = [], []
            for sub, chooser in zip(route.subs, route.choosers, strict=True):
                if self.is_batch(sub.target):
                    routers.append(BatchRouter(self.pa, sub, route.stream.fields, chooser))
                else:
                    choosers.append(chooser)
            found = self.plans[route.stream.name] = routers, _combined(choosers)
        return found

    def record_batch(self, columns: Any, fields: tuple[str, ...], where: str) -> Any:
        """``columns`` (RecordBatch, Table or mapping) as a RecordBatch in ``fields`` order.

        Raises:
            TopologyError: the codes of ``batch_columns.columns_to_rows`` and
                ``BATCH_COLUMN_NOT_ARROW``.
        """
        from sparkstorm.topology.batch_columns import _columns_in_order, as_list

        pa = self.pa
        ordered = _columns_in_order(columns, fields, where)
        arrays = []
        for name, column in zip(fields, ordered, strict=True):
            if isinstance(column, pa.ChunkedArray):
                column = column.combine_chunks()
            if not isinstance(column, pa.Array):
                column = lists_to_record_batch(pa, {name: as_list(column)}, where).column(0)
            arrays.append(column)
        lengths = {len(a) for a in arrays}
        if len(lengths) > 1:
            msg = (
                f"emit_batch on {where!r}: columns differ in length "
                f"{dict(zip(fields, map(len, arrays), strict=True))}; give every field one "
                "value per emitted tuple"
            )
            raise TopologyError(msg, code="BATCH_COLUMN_LENGTHS")
        return pa.RecordBatch.from_arrays(arrays, names=list(positional_fields(fields, 0)))

    def parents(self, parents: Any, rows: int, size: int, stream: str) -> Any:
        """``parents`` as an int32 array, checked: one input row index per emitted row.

        Raises:
            TopologyError: ``BATCH_PARENTS_MISMATCH``.
        """
        pa, pc = self.pa, self.pc
        if not isinstance(parents, (pa.Array, pa.ChunkedArray)):
            parents = pa.array(parents, pa.int64())
        low_high = pc.min_max(parents).as_py()
        low, high = low_high["min"], low_high["max"]
        if (len(parents) != rows or parents.null_count
                or (low is not None and (low < 0 or high >= size))):
            msg = (
                f"component {self.collector.component!r} emitted {rows} rows on {stream!r} "
                f"with {len(parents)} parents (range {low!r}..{high!r}); give one input row "
                f"index in 0..{size - 1} per emitted row, e.g. "
                "pyarrow.compute.list_parent_indices of a split"
            )
            raise TopologyError(msg, code="BATCH_PARENTS_MISMATCH")
        if isinstance(parents, pa.ChunkedArray):
            parents = parents.combine_chunks()
        return pc.cast(parents, pa.int32())

    def emit(self, routers: list[BatchRouter], values: Any, stream: str,
             anchoring: ArrowAnchoring | None, parents: Any) -> int:
        """Route ``values`` to the batch consumers; returns the deliveries."""
        collector = self.collector
        arrow_out = collector.output.arrow
        task_executor, src = collector.task_executor, collector.task
        deliveries = 0
        for router in routers:
            for task, rows in router.split(values):
                piece = select(values, rows)
                count = piece.num_rows
                anchors = self._anchors(anchoring, parents, rows, count)
                arrow_out.setdefault(task_executor[task], []).append(
                    ArrowPiece(task, src, stream, piece, anchors))
                deliveries += count
        return deliveries

    def _anchors(self, anchoring: ArrowAnchoring | None, parents: Any, rows: Any,
                 count: int) -> RunAnchors:
        pa = self.pa
        if anchoring is None:
            return RunAnchors(pa.array([count], pa.int32()), pa.nulls(1, pa.uint64()),
                              pa.nulls(1, pa.uint64()), {})
        if parents is None:
            return anchoring.whole_batch_anchors(count)
        return anchoring.emit_anchors(*anchoring.child_runs(select(parents, rows)))


def _combined(choosers: list[Chooser]) -> Chooser | None:
    if not choosers:
        return None
    if len(choosers) == 1:
        return choosers[0]
    return lambda values: [task for choose in choosers for task in choose(values)]


__all__ = ["ArrowEmitter"]
