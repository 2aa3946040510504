"""Anchoring and acking of one ``BatchBolt`` batch whose anchors are Arrow runs.

The same XOR algorithm as ``engine.columnar.batch_anchoring``, with a run
(``engine.columnar.arrow_batch``)
where that module has a tuple: each input run has an ``ack_val`` (:attr:`run_vals`), each
emitted run gets a fresh edge XORed into its parent run's value, and acking the batch adds,
per input run and root, ``edge ^ ack_val``. The per-run work is vectorised with
pyarrow.compute; Python touches each input run once when the batch is acked (one XOR
value per root for the window, as per-tuple bolts pre-aggregate).

Rows emitted to per-tuple consumers keep an edge per row (a per-tuple bolt acks its tuples
one by one): :attr:`roots_column`, :attr:`edges_column` and :meth:`parent_vals` give the
per-row view ``engine.executor.batch_bolt`` emits through, folded into the runs when acked.

Example:
    >>> import pyarrow as pa
    >>> import pyarrow.compute  # the class takes the module with its compute functions loaded
    >>> from sparkstorm.engine.columnar.arrow_batch import lists_anchors
    >>> batch = ArrowAnchoring(pa, lists_anchors(pa, [7, 8], [5, 6]), 2)
    >>> run_end, in_runs = batch.child_runs(pa.array([1, 1, 0], pa.int32()))
    >>> run_end.to_pylist(), in_runs.to_pylist()
    ([2, 3], [1, 0])
    >>> anchors = batch.emit_anchors(run_end, in_runs)
    >>> anchors.root.to_pylist()
    [8, 7]
    >>> xor = {}
    >>> batch.ack_into(xor)
    >>> xor[7] == 5 ^ anchors.edge[1].as_py() and xor[8] == 6 ^ anchors.edge[0].as_py()
    True
"""

from __future__ import annotations

from typing import Any

from sparkstorm.engine.columnar.arrow_batch import RunAnchors, anchors_roots, arange, run_ends
from sparkstorm.engine.columnar.batch_anchoring import BatchEdges
from sparkstorm.engine.executor.collector import WindowOutput, mark_failed, new_id
from sparkstorm.engine.wire.failures import FAIL_ERROR


def fresh_edges(pa: Any, count: int) -> Any:
    """``count`` random 64-bit edges as a uint64 array (one C call, no int per edge)."""
    data = new_id(64 * count).to_bytes(8 * count, "little") if count else b""
    return pa.Array.from_buffers(pa.uint64(), count, [None, pa.py_buffer(data)])


def merge_xor(xor: dict[int, int], roots: list[int | None], values: list[int | None]) -> None:
    """XOR ``values[i]`` into ``xor[roots[i]]`` (None roots skipped)."""
    if None not in roots and len(set(roots)) == len(roots) and xor.keys().isdisjoint(roots):
        xor.update(zip(roots, values, strict=True))  # type: ignore[arg-type]  # common, in C
        return
    get = xor.get
    for root, value in zip(roots, values, strict=True):
        if root is not None:
            xor[root] = get(root, 0) ^ value  # type: ignore[operator]


class ArrowAnchoring(BatchEdges):
    """The anchor runs of one input batch and the ack values its emits accumulated.

    Args:
        pa: the pyarrow module.
        anchors: the batch's runs (``engine.columnar.arrow_batch``).
        rows: the batch's row count.
    """

    def __init__(self, pa: Any, anchors: RunAnchors, rows: int) -> None:
        self.pa, self.pc = pa, pa.compute
        self.anchors = anchors
        self.rows = rows
        self.runs = anchors.runs
        self.run_vals: Any = None
        """Per input run, XOR of the edges of the runs emitted anchored to it (uint64
        array, made on first use)."""
        self.extra_vals: dict[int, int] = {}
        """More of the same, per run, from emits that were not vectorised."""
        self.row_vals: list[int] = []
        """Per input row, from rows emitted one by one (:meth:`parent_vals`)."""
        self.batch_val = 0
        """XOR of the edges of the rows anchored to the whole batch."""
        self._roots: list[int] | None = None
        self._row_run: Any = None
        self._columns: tuple[list[Any], list[Any]] | None = None

    def __len__(self) -> int:
        return self.rows

    def roots(self) -> list[int]:
        """Every root id the batch's inputs belong to (computed once)."""
        if self._roots is None:
            self._roots = list(set(anchors_roots(self.anchors)))
        return self._roots

    def row_runs(self) -> Any:
        """Each input row's run index (int32 array), or None when every row is a run."""
        if self.anchors.run_end is None or self.runs == self.rows:
            return None
        if self._row_run is None:
            pa = self.pa
            encoded = pa.RunEndEncodedArray.from_arrays(
                self.anchors.run_end, arange(pa, 0, self.runs))
            self._row_run = self.pc.run_end_decode(encoded)
        return self._row_run

    # -- vectorised emits (to batch consumers) -------------------------------------------
    def child_runs(self, parents: Any) -> tuple[Any, Any]:
        """Runs of rows emitted to one target task, anchored to input rows ``parents``.

        Returns:
            The new runs' ``run_end`` (int32) and each new run's input run (int32): a new
            run is a maximal stretch of rows whose parents are in the same input run.
        """
        pa, pc = self.pa, self.pc
        row_run = self.row_runs()
        in_runs = pc.cast(parents if row_run is None else pc.take(row_run, parents),
                          pa.int32())
        n = len(in_runs)
        if n == 0:
            return pa.array([], pa.int32()), in_runs
        changed = pc.not_equal(in_runs.slice(1), in_runs.slice(0, n - 1))
        after = pc.cast(pc.add(pc.indices_nonzero(changed), 1), pa.int32())
        run_end = pa.concat_arrays([after, pa.array([n], pa.int32())])
        starts = pa.concat_arrays([pa.array([0], pa.int32()), after])
        return run_end, pc.take(in_runs, starts)

    def emit_anchors(self, run_end: Any, in_runs: Any) -> RunAnchors:
        """Anchors of new runs (one fresh edge each), their edges added to their parents."""
        pa, pc = self.pa, self.pc
        edges = fresh_edges(pa, len(in_runs))
        self._add_vals(in_runs, edges)
        anchors = self.anchors
        roots = pc.take(anchors.root, in_runs)
        tracked = pc.is_valid(pc.take(anchors.edge, in_runs))
        out_edges = pc.if_else(tracked, edges, pa.scalar(None, pa.uint64()))
        trees: dict[int, dict[int, int]] = {}
        if anchors.trees:
            many = anchors.trees
            edge_list = edges.to_pylist()
            for index, run in enumerate(in_runs.to_pylist()):
                amap = many.get(run)
                if amap:
                    trees[index] = dict.fromkeys(amap, edge_list[index])
        return RunAnchors(run_end, roots, out_edges, trees)

    def _add_vals(self, in_runs: Any, edges: Any) -> None:
        """XOR ``edges[k]`` into the value of input run ``in_runs[k]``."""
        pa, pc = self.pa, self.pc
        n = len(in_runs)
        if n == 0:
            return
        if n > 1 and not pc.all(pc.greater(in_runs.slice(1), in_runs.slice(0, n - 1))).as_py():
            extra = self.extra_vals  # a run fed twice: no vectorised XOR-by-index in Arrow
            for run, edge in zip(in_runs.to_pylist(), edges.to_pylist(), strict=True):
                extra[run] = extra.get(run, 0) ^ edge
            return
        spread = pc.fill_null(pc.scatter(edges, in_runs, max_index=self.runs - 1),
                              pa.scalar(0, pa.uint64()))
        self.run_vals = spread if self.run_vals is None else pc.bit_wise_xor(self.run_vals,
                                                                              spread)

    def whole_batch_anchors(self, rows: int) -> RunAnchors:
        """Anchors of ``rows`` rows sent to one task anchored to the whole batch: one run."""
        pa = self.pa
        roots = self.roots()
        end = pa.array([rows], pa.int32())
        if not roots:
            return RunAnchors(end, pa.nulls(1, pa.uint64()), pa.nulls(1, pa.uint64()), {})
        edge = new_id(64)
        self.batch_val ^= edge
        if len(roots) == 1:
            return RunAnchors(end, pa.array(roots, pa.uint64()), pa.array([edge], pa.uint64()),
                              {})
        return RunAnchors(end, pa.nulls(1, pa.uint64()), pa.nulls(1, pa.uint64()),
                          {0: dict.fromkeys(roots, edge)})

    # -- the per-row view (emits to per-tuple consumers) ---------------------------------
    def _row_columns(self) -> tuple[list[Any], list[Any]]:
        if self._columns is None:
            pc, anchors = self.pc, self.anchors
            row_run = self.row_runs()
            roots, edges = anchors.root, anchors.edge
            if row_run is not None:
                roots, edges = pc.take(roots, row_run), pc.take(edges, row_run)
            edge_list = edges.to_pylist()
            if anchors.trees:
                runs = row_run.to_pylist() if row_run is not None else range(self.rows)
                for index, run in enumerate(runs):
                    if run in anchors.trees:
                        edge_list[index] = anchors.trees[run]
            self._columns = roots.to_pylist(), edge_list
        return self._columns

    @property
    def roots_column(self) -> list[int | None]:
        """Each input row's root (None: several trees, or none)."""
        return self._row_columns()[0]

    @property
    def edges_column(self) -> list[Any]:
        """Each input row's edge, or its anchor map when it belongs to several trees."""
        return self._row_columns()[1]

    def parent_vals(self) -> list[int]:
        """:attr:`row_vals`, made on first use, for rows emitted one by one."""
        if not self.row_vals:
            self.row_vals = [0] * self.rows
        return self.row_vals

    # -- acking ----------------------------------------------------------------------------
    def _run_extras(self) -> dict[int, int]:
        """:attr:`extra_vals` with :attr:`row_vals` folded into their runs."""
        extra = self.extra_vals
        if self.row_vals:
            row_run = self.row_runs()
            runs = row_run.to_pylist() if row_run is not None else range(self.rows)
            for run, val in zip(runs, self.row_vals, strict=True):
                if val:
                    extra[run] = extra.get(run, 0) ^ val
        return extra

    def ack_into(self, xor: dict[int, int]) -> None:
        """Ack every input of the batch: add its contributions to the window's ``xor``.

        Called once, when ``process_batch`` returned.
        """
        pc, anchors = self.pc, self.anchors
        vals = self.run_vals
        contrib = anchors.edge if vals is None else pc.bit_wise_xor(anchors.edge, vals)
        roots, values = anchors.root.to_pylist(), contrib.to_pylist()
        extra = self._run_extras()
        for run, val in extra.items():
            if values[run] is not None:
                values[run] ^= val
        merge_xor(xor, roots, values)
        if anchors.trees:
            get = xor.get
            for run, amap in anchors.trees.items():
                val = extra.get(run, 0) ^ (vals[run].as_py() if vals is not None else 0)
                for root, edge in amap.items():
                    xor[root] = get(root, 0) ^ edge ^ val
        if self.batch_val:
            for root in self.roots():
                xor[root] = xor.get(root, 0) ^ self.batch_val

    def fail_into(self, output: WindowOutput, reason: str, cause: str = FAIL_ERROR) -> None:
        """Fail every root of the batch in ``output`` (``cause``, ``reason``)."""
        mark_failed(output, anchors_roots(self.anchors), cause, reason)


def concat_anchors(pa: Any, parts: list[tuple[RunAnchors, int]]) -> RunAnchors:
    """The runs of several pieces (anchors, rows) as those of their concatenated rows."""
    if len(parts) == 1:
        return parts[0][0]
    pc = pa.compute
    ends, trees, rows, runs = [], {}, 0, 0
    for anchors, count in parts:
        ends.append(pc.add(pc.cast(run_ends(pa, anchors, count), pa.int32()),
                           pa.scalar(rows, pa.int32())))
        for run, amap in anchors.trees.items():
            trees[run + runs] = amap
        rows += count
        runs += anchors.runs
    return RunAnchors(pa.concat_arrays(ends),
                      pa.concat_arrays([pc.cast(a.root, pa.uint64()) for a, _ in parts]),
                      pa.concat_arrays([pc.cast(a.edge, pa.uint64()) for a, _ in parts]),
                      trees)


__all__ = ["ArrowAnchoring", "concat_anchors", "fresh_edges", "merge_xor"]
