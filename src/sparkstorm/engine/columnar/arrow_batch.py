"""Arrow IPC batches between executors: what a ``BatchBolt`` sends to a ``BatchBolt``.

A batch emitted to a batch consumer travels as columns, not as one msgpack list per tuple.
Its tuples are grouped into **runs**: consecutive rows with the same anchors (one
emitter's rows anchored to the same input, for the same target task), which a batch
consumer always acks or fails together. A run is one tuple of Storm's ledger: it gets one
fresh 64-bit edge per delivery, XORed into its parent's ack value when emitted and into the
window's XOR once when the consumer acks its batch; so a tree completes exactly when every
row of every run was processed, as with an edge per row. The anchor columns are per run:

- ``run_end`` (int32): the row after the run's last (Arrow's run-end encoding);
- ``root`` (uint64): the run's tree, null when it belongs to several trees or to none;
- ``edge`` (uint64): its edge, null when it is not tracked or belongs to several trees;
- several trees (a row anchored to a whole batch, an input anchored to several): a side
  table ``run`` (int32), ``root``, ``edge`` (uint64) with one entry per (run, root).

A blob for one target executor that carries any such batch is::

    MAGIC + msgpack([rows_blob or None, [[task, src, stream, values_ipc, runs_ipc,
                                           trees_ipc or None], ...]])

``rows_blob`` being the usual msgpack rows for that executor (``engine.wire.row_encoding``),
each ``*_ipc`` an Arrow IPC stream of one record batch: the stream's declared fields
(``values_ipc``) or the anchor columns above. ``MAGIC`` starts with ``0xc1``, a byte msgpack
never writes, so a blob says what it is. pyarrow is needed only where such blobs are made
or read (``sparkstorm[arrow]``); without it batch bolts exchange msgpack rows.

Example:
    >>> import pyarrow as pa
    >>> piece = rows_piece(pa, [3, 10, "default", [["a"], ["b"]], [7, None], [5, None]],
    ...                    ("word",))
    >>> blob = encode_blob(None, [piece])
    >>> rows, (back,) = decode_blob(blob)
    >>> rows, back.values.column(0).to_pylist(), sorted(blob_roots(blob))
    ([], ['a', 'b'], [7])
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from sparkstorm.engine.wire.anchor_columns import batch_roots
from sparkstorm.engine.wire.frames import pack, unpack
from sparkstorm.engine.wire.row_wire import unpack_rows
from sparkstorm.topology.batch_columns import (
    lists_to_record_batch,
    load_pyarrow,
    positional_fields,
    rows_to_lists,
)

MAGIC = b"\xc1SSA1"
"""First bytes of a blob with Arrow batches (``0xc1`` is never used by msgpack)."""


class RunAnchors(NamedTuple):
    """The anchors of a batch's runs (see the module docs); pyarrow arrays, one per run.

    ``run_end`` None means every row is a run of its own (tuples from per-tuple emitters).
    """

    run_end: Any
    root: Any
    edge: Any
    trees: dict[int, dict[int, int]]
    """Run -> its anchor map, for runs that belong to several trees (root and edge null)."""

    @property
    def runs(self) -> int:
        """How many runs."""
        return len(self.root)


class ArrowPiece(NamedTuple):
    """One emitter task's rows for one target task and stream, as Arrow columns."""

    task: int
    src: int
    stream: str
    values: Any
    """A ``pyarrow.RecordBatch`` with the stream's declared fields, in order."""
    anchors: RunAnchors


def is_arrow_blob(blob: bytes) -> bool:
    """Whether ``blob`` was made by :func:`encode_blob` (else it is msgpack rows)."""
    return blob[:len(MAGIC)] == MAGIC


def arange(pa: Any, start: int, stop: int) -> Any:
    """``start .. stop - 1`` as an int32 array, without a Python int per element."""
    if stop <= start:
        return pa.array([], pa.int32())
    ones = pa.repeat(pa.scalar(1, pa.int32()), stop - start)
    return pa.compute.add(pa.compute.cumulative_sum(ones), pa.scalar(start - 1, pa.int32()))


def run_ends(pa: Any, anchors: RunAnchors, rows: int) -> Any:
    """``anchors.run_end``, made when every row is its own run."""
    return anchors.run_end if anchors.run_end is not None else arange(pa, 1, rows + 1)


def rows_piece(pa: Any, batch: list[Any], fields: tuple[str, ...]) -> ArrowPiece:
    """A msgpack rows batch (``engine.wire.anchor_columns``) as an :class:`ArrowPiece`.

    Every tuple is its own run. Raises ``BATCH_COLUMN_NOT_ARROW`` (``TopologyError``) when
    a field's values have no common Arrow type.
    """
    task, src, stream, values_list, roots, edges = batch
    names = positional_fields(fields, len(values_list[0]) if values_list else 0)
    where = f"{src}/{stream}"
    values = lists_to_record_batch(pa, rows_to_lists(values_list, names), where)
    return ArrowPiece(task, src, stream, values, lists_anchors(pa, roots, edges))


def lists_anchors(pa: Any, roots: list[int | None], edges: list[Any]) -> RunAnchors:
    """Per-tuple anchor columns as :class:`RunAnchors` (one run per tuple)."""
    trees: dict[int, dict[int, int]] = {}
    try:  # the common case, one tree per tuple: no scan for maps first (a pass per window)
        edge_array = pa.array(edges, pa.uint64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # anchor maps: tuples of several trees
        trees = {i: edge for i, edge in enumerate(edges) if type(edge) is dict}
        edge_array = pa.array([None if type(edge) is dict else edge for edge in edges],
                              pa.uint64())
    return RunAnchors(None, pa.array(roots, pa.uint64()), edge_array, trees)


def _ipc(pa: Any, batch: Any) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def _read(pa: Any, data: bytes) -> Any:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_next_batch()


def encode_piece(pa: Any, piece: ArrowPiece) -> list[Any]:
    """One piece as ``[task, src, stream, values_ipc, runs_ipc, trees_ipc or None]``."""
    anchors = piece.anchors
    runs = pa.RecordBatch.from_arrays(
        [run_ends(pa, anchors, piece.values.num_rows), anchors.root, anchors.edge],
        names=["run_end", "root", "edge"])
    trees = None
    if anchors.trees:
        run: list[int] = []
        root: list[int] = []
        edge: list[int] = []
        for index, amap in anchors.trees.items():
            run.extend([index] * len(amap))
            root.extend(amap)
            edge.extend(amap.values())
        trees = _ipc(pa, pa.RecordBatch.from_arrays(
            [pa.array(run, pa.int32()), pa.array(root, pa.uint64()),
             pa.array(edge, pa.uint64())], names=["run", "root", "edge"]))
    return [piece.task, piece.src, piece.stream, _ipc(pa, piece.values), _ipc(pa, runs), trees]


def decode_piece(pa: Any, entry: list[Any]) -> ArrowPiece:
    """Inverse of :func:`encode_piece` (zero-copy on the blob's bytes)."""
    task, src, stream, values_ipc, runs_ipc, trees_ipc = entry
    runs = _read(pa, runs_ipc)
    trees: dict[int, dict[int, int]] = {}
    if trees_ipc is not None:
        side = _read(pa, trees_ipc)
        for run, root, edge in zip(*(side.column(i).to_pylist() for i in range(3)),
                                   strict=True):
            trees.setdefault(run, {})[root] = edge
    anchors = RunAnchors(runs.column(0), runs.column(1), runs.column(2), trees)
    return ArrowPiece(task, src, stream, _read(pa, values_ipc), anchors)


def encode_blob(rows_blob: bytes | None, pieces: list[ArrowPiece]) -> bytes:
    """One target executor's blob: its msgpack rows (if any) and its Arrow pieces."""
    pa = load_pyarrow()
    return MAGIC + pack([rows_blob, [encode_piece(pa, piece) for piece in pieces]])


def decode_blob(blob: bytes) -> tuple[list[list[Any]], list[ArrowPiece]]:
    """A blob's msgpack rows batches and Arrow pieces (any blob, msgpack rows too)."""
    if not is_arrow_blob(blob):
        return unpack_rows(blob), []
    rows_blob, entries = unpack(blob[len(MAGIC):])
    pa = load_pyarrow()
    rows = unpack_rows(rows_blob) if rows_blob is not None else []
    return rows, [decode_piece(pa, entry) for entry in entries]


def anchors_roots(anchors: RunAnchors) -> Iterator[int]:
    """Every root of ``anchors`` (repeated as often as runs share it)."""
    for root in anchors.root.to_pylist():
        if root is not None:
            yield root
    for amap in anchors.trees.values():
        yield from amap


def blob_roots(blob: bytes) -> Iterator[int]:
    """Every root of every tuple in ``blob``, rows or Arrow (for failing a lost window)."""
    rows, pieces = decode_blob(blob)
    for batch in rows:
        yield from batch_roots(batch)
    for piece in pieces:
        yield from anchors_roots(piece.anchors)


__all__ = ["MAGIC", "ArrowPiece", "RunAnchors", "anchors_roots", "arange", "blob_roots",
           "decode_blob", "decode_piece", "encode_blob", "encode_piece", "is_arrow_blob",
           "lists_anchors", "rows_piece", "run_ends"]
