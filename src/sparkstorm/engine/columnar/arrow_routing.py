"""Vectorised routing of an Arrow batch: which rows go to which task, per subscription.

The same groupings as ``engine.executor.routing``, over whole columns:

- ``fields`` on one field: the key column is dictionary-encoded (in C) and each *distinct*
  value is hashed in Python exactly as the per-tuple chooser hashes it (``hash`` of a str
  under the executors' fixed ``PYTHONHASHSEED``, else ``stable_hash``), so a key goes to
  the same task whichever path emitted it; several fields, or a column type that cannot be
  dictionary-encoded, hash row by row with the per-tuple chooser;
- ``shuffle``, ``none``, ``local_or_shuffle``: the batch is cut into contiguous, equal
  slices (zero-copy), one per task, the first task rotating from batch to batch: every
  task gets an equal share as Storm's shuffle promises, without a random draw per row;
- ``all``: every task gets every row; ``global``: the lowest task gets every row;
- ``partial_key``: row by row with the per-tuple chooser (its load balance is sequential).

Example:
    >>> import pyarrow as pa
    >>> from sparkstorm.topology.grouping import Grouping
    >>> from sparkstorm.engine.plan.execution import Subscription
    >>> sub = Subscription("count", Grouping.fields("word"), (4, 5))
    >>> router = BatchRouter(pa, sub, ("word",), None)
    >>> batch = pa.RecordBatch.from_arrays([pa.array(["a", "b", "a"])], ["word"])
    >>> sorted(task for task, rows in router.split(batch))  # doctest: +SKIP
    [4, 5]
"""

from __future__ import annotations

from typing import Any

from sparkstorm.engine.executor.routing import Chooser, stable_hash
from sparkstorm.engine.plan.execution import Subscription

Selection = Any
"""The rows of a batch one task gets: an int array of row indices, or a (start, length)
slice."""

_KEYED = frozenset({"FIELDS", "PARTIAL_KEY"})


class BatchRouter:
    """Routes Arrow batches for one (non-direct) subscription of one stream.

    Args:
        pa: the pyarrow module.
        sub: the subscription.
        fields: the stream's declared fields.
        chooser: the per-tuple chooser of the subscription (for the per-row fallbacks).
    """

    def __init__(self, pa: Any, sub: Subscription, fields: tuple[str, ...],
                 chooser: Chooser | None) -> None:
        self.pa, self.pc = pa, pa.compute
        self.kind = sub.grouping.type
        self.tasks = tuple(sub.tasks)
        self.indexes = [fields.index(f) for f in sub.grouping.field_names] \
            if self.kind in ("FIELDS", "PARTIAL_KEY") else []
        self.chooser = chooser
        self.turn = 0

    def split(self, batch: Any) -> list[tuple[int, Selection]]:
        """``(task, rows)`` for every task that gets rows of ``batch``, by task order."""
        n, tasks, kind = batch.num_rows, self.tasks, self.kind
        if n == 0:
            return []
        whole: tuple[int, ...] = ()
        if kind == "ALL":
            whole = tasks
        elif kind == "GLOBAL" or (kind == "FIELDS" and len(tasks) == 1):
            whole = (min(tasks),)
        if whole:
            return [(task, (0, n)) for task in whole]
        if kind not in _KEYED:
            return self._slices(n)
        targets = None
        if kind == "FIELDS" and len(self.indexes) == 1:
            targets = self._hashed(batch.column(self.indexes[0]))
        return self._by_target(targets) if targets is not None else self._per_row(batch)

    def _slices(self, n: int) -> list[tuple[int, Selection]]:
        tasks = self.tasks
        k = len(tasks)
        first, self.turn = self.turn, (self.turn + 1) % k
        out = []
        for i in range(k):
            start, stop = i * n // k, (i + 1) * n // k
            if stop > start:
                out.append((tasks[(first + i) % k], (start, stop - start)))
        return out

    def _hashed(self, column: Any) -> Any:
        """Each row's task index, hashing each distinct value once; None: cannot."""
        pa, pc = self.pa, self.pc
        try:
            encoded = pc.dictionary_encode(column, null_encoding="encode")
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        k = len(self.tasks)
        index = [(hash(value) if type(value) is str else stable_hash(value)) % k
                 for value in encoded.dictionary.to_pylist()]
        return pc.take(pa.array(index, pa.int32()), encoded.indices)

    def _per_row(self, batch: Any) -> list[tuple[int, Selection]]:
        assert self.chooser is not None
        columns = [column.to_pylist() for column in batch.columns]
        choose, position = self.chooser, {task: i for i, task in enumerate(self.tasks)}
        index = [position[choose(list(values))[0]] for values in zip(*columns, strict=True)]
        return self._by_target(self.pa.array(index, self.pa.int32()))

    def _by_target(self, targets: Any) -> list[tuple[int, Selection]]:
        pc = self.pc
        out = []
        for i, task in enumerate(self.tasks):
            rows = pc.indices_nonzero(pc.equal(targets, i))
            if len(rows):
                out.append((task, rows))
        return out


def select(batch: Any, rows: Selection) -> Any:
    """The rows ``rows`` of ``batch`` (a RecordBatch or an array)."""
    if isinstance(rows, tuple):
        return batch.slice(*rows)
    return batch.take(rows)


__all__ = ["BatchRouter", "Selection", "select"]
