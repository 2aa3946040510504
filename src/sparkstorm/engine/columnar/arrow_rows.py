"""Rows emitted one by one, sent to batch bolts as Arrow pieces: converted where they are made.

A spout or a per-tuple bolt emits through the collector into msgpack-shaped batches
(``engine.wire.anchor_columns``). When a batch's target task belongs to a ``BatchBolt`` and
``topology.batch.arrow.wire`` is on, the emitting executor turns the batch into an
:class:`~sparkstorm.engine.columnar.arrow_batch.ArrowPiece` (one run per tuple: each keeps its own
edge) before the window's reply is encoded, so the batch bolt reads its columns from the
IPC bytes instead of unpacking msgpack and building the columns itself. A batch whose values
Arrow cannot type (mixed types in a field) stays msgpack rows, which the batch bolt
converts, or refuses, as before.
"""

from __future__ import annotations

from typing import Any

from sparkstorm.config import conf_bool
from sparkstorm.engine.columnar.arrow_batch import rows_piece
from sparkstorm.engine.executor.collector import WindowOutput
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.batch_columns import STREAM
from sparkstorm.errors import TopologyError
from sparkstorm.topology.batch_columns import load_pyarrow
from sparkstorm.topology.spec import load_class


def is_batch_component(plan: ExecutionPlan, component: str) -> bool:
    """Whether ``component``'s executors are batch executors (read Arrow pieces)."""
    spec = plan.components.get(component)
    if spec is None or spec.kind == "spout":
        return False
    try:
        cls = load_class(spec.component, component=component)
    except Exception:  # noqa: BLE001 - not loadable here (another language): per tuple
        return False
    return bool(getattr(cls, "batch_api", False))


class RowsToArrow:
    """Converts one executor's rows for batch bolts into Arrow pieces, once per window.

    Args:
        pa: the pyarrow module.
        plan: the topology's plan.
        component: the emitting component.
        targets: the gids of the batch executors this component's streams feed.
    """

    def __init__(self, pa: Any, plan: ExecutionPlan, component: str, targets: set[int]
                 ) -> None:
        self.pa = pa
        self.plan = plan
        self.component = component
        self.targets = targets

    @classmethod
    def for_executor(cls, plan: ExecutionPlan, component: str, conf: dict[str, Any]
                     ) -> RowsToArrow | None:
        """The converter of ``component``'s executors; None when nothing needs it."""
        if not conf_bool(conf, "topology.batch.arrow.wire"):
            return None
        consumers = {sub.target for (source, _), subs in plan.subscriptions.items()
                     if source == component for sub in subs}
        batch = {name for name in consumers if is_batch_component(plan, name)}
        targets = {info.gid for info in plan.executors if info.component in batch}
        pa = load_pyarrow() if targets else None
        return cls(pa, plan, component, targets) if pa is not None else None

    def move(self, output: WindowOutput) -> None:
        """Move ``output``'s rows for batch executors into ``output.arrow`` as pieces."""
        for gid in self.targets & output.rows.keys():
            kept = []
            pieces = output.arrow.setdefault(gid, [])
            for batch in output.rows[gid]:
                try:
                    pieces.append(rows_piece(
                        self.pa, batch, self.plan.fields_of(self.component, batch[STREAM])))
                except TopologyError:  # BATCH_COLUMN_NOT_ARROW: the receiver decides
                    kept.append(batch)
            if kept:
                output.rows[gid] = kept
            else:
                del output.rows[gid]


__all__ = ["RowsToArrow", "is_batch_component"]
