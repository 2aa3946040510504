"""Anchoring and acking of one :class:`~sparkstorm.topology.batch_bolt.BatchBolt` batch.

Storm's XOR algorithm without a ``Tuple`` per input. A tuple emitted with anchors gets a
fresh 64-bit edge per delivery, XORed into its anchor map and into the anchor's ``ack_val``;
acking an input contributes ``edge ^ ack_val`` for each of its roots (see
``engine.collector``). Here the batch keeps the ``ack_val`` sums:

- a row anchored to input ``p`` (``parents``): edge ``e`` goes to ``row_vals[p]`` and the
  row's map is ``{root: e}`` for every root of ``p``, as ``emit(anchors=[tup])`` does;
- a row anchored to the whole batch: treating the batch as one anchor whose roots are the
  union of its inputs' roots, edge ``e`` goes to ``batch_val`` and the row's map is
  ``{root: e}`` for every root of the batch. Acking the batch adds ``batch_val`` once per
  root. (Anchoring the row to each input separately with one edge would cancel out for a
  root that two inputs share; one batch-wide value per root cannot.)

So acking a batch adds, per root, the inputs' edges and ack values, then ``batch_val``:
exactly the ledger a per-tuple bolt anchoring each row to all inputs would leave.

Example:
    >>> batch = BatchAnchoring([{7: 5}, {8: 6}, None])
    >>> edge_map = batch.parent_edge(1)
    >>> list(edge_map) == [8] and batch.row_vals == [0, edge_map[8], 0]
    True
    >>> xor = {}
    >>> batch.ack_into(xor)
    >>> xor[7] == 5 and xor[8] == 6 ^ edge_map[8]
    True
"""

from __future__ import annotations

from sparkstorm.engine.collector import WindowOutput, mark_failed, new_id
from sparkstorm.engine.failures import FAIL_ERROR


class BatchAnchoring:
    """The anchors of one input batch and the ack values its emits accumulated.

    Args:
        anchors_list: each input tuple's anchor map (root -> edge), None if untracked.
    """

    __slots__ = ("anchors_list", "row_vals", "batch_val", "_roots")

    def __init__(self, anchors_list: list[dict[int, int] | None]) -> None:
        self.anchors_list = anchors_list
        self.row_vals: list[int] = []
        """Per input row, XOR of the edges of the rows anchored to it alone (made by
        :meth:`parent_vals` on first use)."""
        self.batch_val = 0
        """XOR of the edges of the rows anchored to the whole batch."""
        self._roots: list[int] | None = None

    def roots(self) -> list[int]:
        """Every root id the batch's inputs belong to (computed once)."""
        if self._roots is None:
            self._roots = list(set().union(*filter(None, self.anchors_list)))
        return self._roots

    def parent_vals(self) -> list[int]:
        """:attr:`row_vals`, made on first use, for emits that anchor rows to parents."""
        if not self.row_vals:
            self.row_vals = [0] * len(self.anchors_list)
        return self.row_vals

    def batch_edge(self) -> dict[int, int] | None:
        """A fresh anchor map for one delivery of a row anchored to the whole batch."""
        roots = self.roots()
        if not roots:
            return None
        edge = new_id(64)
        self.batch_val ^= edge
        return dict.fromkeys(roots, edge)

    def parent_edge(self, parent: int) -> dict[int, int] | None:
        """A fresh anchor map for one delivery of a row anchored to input ``parent``."""
        anchors = self.anchors_list[parent]
        if not anchors:
            return None
        edge = new_id(64)
        self.parent_vals()[parent] ^= edge
        return dict.fromkeys(anchors, edge)

    def ack_into(self, xor: dict[int, int]) -> None:
        """Ack every input of the batch: add its contributions to the window's ``xor``.

        Called once, when ``process_batch`` returned; one pass over the inputs.
        """
        row_vals = self.row_vals
        if row_vals:
            for anchors, val in zip(self.anchors_list, row_vals, strict=True):
                if anchors:
                    for root, edge in anchors.items():
                        xor[root] = xor.get(root, 0) ^ edge ^ val
        else:
            for anchors in self.anchors_list:
                if anchors:
                    for root, edge in anchors.items():
                        xor[root] = xor.get(root, 0) ^ edge
        if self._roots is not None:  # some rows were anchored to the whole batch
            batch_val = self.batch_val
            for root in self._roots:
                xor[root] = xor.get(root, 0) ^ batch_val

    def fail_into(self, output: WindowOutput, reason: str) -> None:
        """Fail every root of the batch in ``output`` (cause ``error``, ``reason``)."""
        for anchors in self.anchors_list:
            if anchors:
                mark_failed(output, anchors, FAIL_ERROR, reason)


__all__ = ["BatchAnchoring"]
