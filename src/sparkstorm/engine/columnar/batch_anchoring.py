"""Anchoring and acking of one :class:`~sparkstorm.topology.batch_bolt.BatchBolt` batch.

Storm's XOR algorithm without a ``Tuple`` per input. A tuple emitted with anchors gets a
fresh 64-bit edge per delivery, XORed into its anchor map and into the anchor's ``ack_val``;
acking an input contributes ``edge ^ ack_val`` for each of its roots (see
``engine.executor.collector``). Here the batch keeps the ``ack_val`` sums:

- a row anchored to input ``p`` (``parents``): edge ``e`` goes to ``row_vals[p]`` and the
  row's map is ``{root: e}`` for every root of ``p``, as ``emit(anchors=[tup])`` does;
- a row anchored to the whole batch: treating the batch as one anchor whose roots are the
  union of its inputs' roots, edge ``e`` goes to ``batch_val`` and the row's map is
  ``{root: e}`` for every root of the batch. Acking the batch adds ``batch_val`` once per
  root. (Anchoring the row to each input separately with one edge would cancel out for a
  root that two inputs share; one batch-wide value per root cannot.)

So acking a batch adds, per root, the inputs' edges and ack values, then ``batch_val``:
exactly the ledger a per-tuple bolt anchoring each row to all inputs would leave.

The inputs' anchors come as a batch's two anchor columns (``engine.wire.anchor_columns``) and
the emitted rows' anchors go out the same way.

Example:
    >>> batch = BatchAnchoring([7, 8, None], [5, 6, None])
    >>> root, edge = batch.parent_edge(1)
    >>> root == 8 and batch.row_vals == [0, edge, 0]
    True
    >>> xor = {}
    >>> batch.ack_into(xor)
    >>> xor[7] == 5 and xor[8] == 6 ^ edge
    True
"""

from __future__ import annotations

from sparkstorm.engine.executor.collector import WindowOutput, mark_failed, new_id
from sparkstorm.engine.wire.anchor_columns import Edge, column_roots
from sparkstorm.engine.wire.failures import FAIL_ERROR


class BatchEdges:
    """Hands out the batch-wide edge: one delivery of a row anchored to a whole batch.

    Shared by :class:`BatchAnchoring` (msgpack rows) and ``engine.columnar.arrow_anchoring``'s
    ``ArrowAnchoring`` (Arrow runs); each keeps ``batch_val`` and knows its batch's roots.
    """

    __slots__ = ("batch_val",)
    batch_val: int

    def roots(self) -> list[int]:
        """The batch's distinct roots."""
        raise NotImplementedError

    def batch_edge(self) -> tuple[int | None, Edge]:
        """Fresh anchor columns (root, edge) for one delivery of a row anchored to the batch."""
        roots = self.roots()
        if not roots:
            return None, None
        edge = new_id(64)
        self.batch_val ^= edge
        if len(roots) == 1:
            return roots[0], edge
        return None, dict.fromkeys(roots, edge)


class BatchAnchoring(BatchEdges):
    """The anchors of one input batch and the ack values its emits accumulated.

    Args:
        roots: each input tuple's root column entry (see ``engine.wire.anchor_columns``).
        edges: each input tuple's edge column entry.
    """

    __slots__ = ("roots_column", "edges_column", "row_vals", "_roots")

    def __init__(self, roots: list[int | None], edges: list[Edge]) -> None:
        self.roots_column = roots
        self.edges_column = edges
        self.row_vals: list[int] = []
        """Per input row, XOR of the edges of the rows anchored to it alone (made by
        :meth:`parent_vals` on first use)."""
        self.batch_val = 0
        """XOR of the edges of the rows anchored to the whole batch."""
        self._roots: list[int] | None = None

    def __len__(self) -> int:
        return len(self.roots_column)

    def roots(self) -> list[int]:
        """Every root id the batch's inputs belong to (computed once)."""
        if self._roots is None:
            self._roots = list(set(column_roots(self.roots_column, self.edges_column)))
        return self._roots

    def parent_vals(self) -> list[int]:
        """:attr:`row_vals`, made on first use, for emits that anchor rows to parents."""
        if not self.row_vals:
            self.row_vals = [0] * len(self.roots_column)
        return self.row_vals

    def parent_edge(self, parent: int) -> tuple[int | None, Edge]:
        """Fresh anchor columns (root, edge) for one delivery of a row anchored to ``parent``."""
        root, edges = self.roots_column[parent], self.edges_column[parent]
        if root is None and not edges:
            return None, None
        edge = new_id(64)
        self.parent_vals()[parent] ^= edge
        if root is not None:
            return root, edge
        return None, dict.fromkeys(edges, edge)  # type: ignore[arg-type]

    def ack_into(self, xor: dict[int, int]) -> None:
        """Ack every input of the batch: add its contributions to the window's ``xor``.

        Called once, when ``process_batch`` returned; one pass over the inputs.
        """
        vals = self.row_vals or [0] * len(self.roots_column)
        for root, edge, val in zip(self.roots_column, self.edges_column, vals, strict=True):
            if root is not None:
                xor[root] = xor.get(root, 0) ^ edge ^ val  # type: ignore[operator]
            elif edge:
                for many_root, many_edge in edge.items():  # type: ignore[union-attr]
                    xor[many_root] = xor.get(many_root, 0) ^ many_edge ^ val
        if self._roots is not None:  # some rows were anchored to the whole batch
            batch_val = self.batch_val
            for root in self._roots:
                xor[root] = xor.get(root, 0) ^ batch_val

    def fail_into(self, output: WindowOutput, reason: str, cause: str = FAIL_ERROR) -> None:
        """Fail every root of the batch in ``output`` (``cause``, ``reason``)."""
        mark_failed(output, column_roots(self.roots_column, self.edges_column), cause, reason)


__all__ = ["BatchAnchoring"]
