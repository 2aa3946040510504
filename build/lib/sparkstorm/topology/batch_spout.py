"""``BatchSpout``: a spout that emits columns, many tuples per call, one message id per batch.

A ``Spout`` costs a Python call per tuple (``next_tuple``), a routed emit per tuple and a
tracked message id per tuple; for a source that already holds its data in columns (a file
chunk, a Kafka fetch, a generated array) that is most of the work. A ``BatchSpout`` is asked
for a batch instead, as Trident's ``IBatchSpout.emitBatch(batchId, collector)`` is:

- the engine calls ``next_batch(max_rows)`` between windows while the spout is active and
  may produce; ``max_rows`` is the room left: the window's tuple limit (the window sizer's
  ``SpoutControl.limit``, ``topology.spout.buffer.size``) minus what is buffered, the
  in-flight bounds (``topology.max.spout.pending``, the sizer's pending bound, counted in
  *rows*) minus the rows in flight, and at most :attr:`BatchSpout.max_batch_rows`;
- inside it the spout calls ``self.emit_batch(columns, batch_id=...)`` zero or more times,
  with a ``pyarrow.RecordBatch`` (or Table) or a dict of field name -> list, one column per
  declared field of the stream; each row becomes one tuple, routed by the stream's
  groupings exactly as a per-tuple emit would be. A batch may exceed ``max_rows`` (nothing
  is dropped), which overshoots the bounds by that batch.

Reliability is per batch, as in Trident: the rows of one ``emit_batch`` call with a
``batch_id`` form one tuple tree (one root id, tracked by the XOR acker; each delivery of a
row, or each run of rows sent to a ``BatchBolt``, is an edge of it). ``ack(batch_id)`` is
called once when every tuple of the batch and everything anchored to them was processed;
``fail(batch_id)`` once when any of them failed or the tree timed out
(``topology.message.timeout.secs``). Replaying is the spout's business, as in Storm: emit
the same rows again (with the same or a new id) from a later ``next_batch``. Without a
``batch_id`` the rows are unreliable; without ackers (``topology.acker.executors: 0``) a
batch with an id is acked right after it is emitted. The spout's statistics count rows
(emitted, acked, failed); its complete latency is sampled once per batch.

Bad batches are refused before any of their rows is buffered, so nothing accepted before
is lost and the spout may catch the error and go on: ``BATCH_COLUMNS_TYPE`` (not columns),
``BATCH_COLUMNS_MISMATCH`` (columns are not the declared fields),
``BATCH_COLUMN_LENGTHS``, ``BATCH_COLUMN_NOT_ARROW`` (values without one Arrow type, for a
stream with ``BatchBolt`` consumers), ``BATCH_SPOUT_SCHEMA_CHANGED`` (a field's Arrow type
differs from the stream's first batch and cannot be cast safely), ``BATCH_DIRECT_STREAM``,
``UNDECLARED_STREAM``. An error it does not catch is that of a raising ``next_tuple``: it
is reported and the executor restarts. An error raised while routing a checked batch (a
grouping refusing a value) may leave some of its rows buffered: that batch is failed
(``fail(batch_id)`` follows), so it is replayed whole.

A per-tuple ``self.emit(values, tup_id=...)`` still works inside ``next_batch``. Only the
engine's executors run batch spouts: a per-tuple host (``ComponentHarness``, the multilang
child) calling ``next_tuple`` gets ``BATCH_SPOUT_PER_TUPLE_HOST``.

Example:
    >>> class Numbers(BatchSpout):
    ...     outputs = ["n"]
    ...     def initialize(self, conf, context):
    ...         self.next_n = 0
    ...     def next_batch(self, max_rows):
    ...         rows = list(range(self.next_n, self.next_n + min(max_rows, 100)))
    ...         self.emit_batch({"n": rows}, batch_id=self.next_n)
    ...         self.next_n += len(rows)
    >>> Numbers.max_batch_rows
    10000
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from sparkstorm.errors import TopologyError
from sparkstorm.topology.component import Spout


class SpoutBatchSink(Protocol):
    """What the engine gives a batch spout task to emit its batches through."""

    def emit_batch(self, columns: Any, batch_id: Any, stream: str | None) -> int:
        """Check, route and buffer the rows of ``columns``; see :meth:`BatchSpout.emit_batch`."""


class BatchSpout(Spout):
    """A spout that emits columnar batches, one message id per batch (see the module docs).

    Attributes:
        max_batch_rows: the most rows one ``next_batch`` call is asked for; bounds how long
            one call holds the executor (a window request waits for it).
    """

    batch_api: ClassVar[bool] = True
    """Marks the class for the engine, which then calls ``next_batch`` instead of
    ``next_tuple``."""
    max_batch_rows: ClassVar[int] = 10_000
    _batch_sink: SpoutBatchSink | None = None

    def next_batch(self, max_rows: int) -> None:
        """Emit zero or more batches with :meth:`emit_batch`. Must not block for long.

        Called by the engine's spout executor between windows, on its producing thread,
        while the spout is active and has room; never concurrently with ``ack``/``fail``.

        Args:
            max_rows: how many rows fit now (at least 1; see the module docs).
        """

    def next_tuple(self) -> None:
        """Refused: a batch spout is asked for batches, never for single tuples.

        Raises:
            TopologyError: ``BATCH_SPOUT_PER_TUPLE_HOST``.
        """
        msg = (
            f"{type(self).__name__} is a BatchSpout, which only the engine's executors run "
            "(LocalCluster or a submitted topology); this host called next_tuple(); run the "
            "topology on the engine, or subclass Spout for a per-tuple host"
        )
        raise TopologyError(msg, code="BATCH_SPOUT_PER_TUPLE_HOST")

    def emit_batch(self, columns: Any, batch_id: Any = None, stream: str | None = None) -> int:
        """Emit one tuple per row of ``columns``; with a ``batch_id`` they are one tree.

        Args:
            columns: a ``pyarrow.RecordBatch`` or ``pyarrow.Table``, or a dict of field
                name -> sequence; exactly the stream's declared fields.
            batch_id: the message id ``ack``/``fail`` get back for the whole batch (any
                picklable value, as a tuple's message id); None: unreliable rows.
            stream: the output stream (default ``"default"``).

        Returns:
            How many tuples were emitted (rows, not deliveries).

        Raises:
            TopologyError: ``BATCH_SPOUT_PER_TUPLE_HOST`` outside the engine, and the codes
                listed in the module docs; nothing of a refused batch is emitted.
        """
        sink = self._batch_sink
        if sink is None:
            msg = (
                f"{type(self).__name__}.emit_batch() was called on a host that does not "
                "run batch spouts (only the engine's executors do: LocalCluster or a "
                "submitted topology); emit per tuple with emit(values, tup_id=...) there"
            )
            raise TopologyError(msg, code="BATCH_SPOUT_PER_TUPLE_HOST")
        return sink.emit_batch(columns, batch_id, stream)


def is_batch_spout(cls: Any) -> bool:
    """Whether the engine must run the spout class ``cls`` batch by batch."""
    return isinstance(cls, type) and issubclass(cls, Spout) and bool(
        getattr(cls, "batch_api", False))


__all__ = ["BatchSpout", "SpoutBatchSink", "is_batch_spout"]
