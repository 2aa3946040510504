"""``BatchBolt``: a bolt that reads and emits columns, one batch per input stream and window.

Storm has Trident, pystorm has ``BatchingBolt`` (which still makes a tuple object per
input). A ``BatchBolt`` never sees a tuple: for every task, window and input stream (source
component and stream) the engine calls ``process_batch(batch)`` once with all the tuples
that arrived, as columns:

- a ``pyarrow.RecordBatch`` with one column per declared field of the input stream, in
  declared order (``batch_format = "arrow"``, the default, when pyarrow is installed);
- a ``dict`` of field name -> list (``batch_format = "lists"``, or pyarrow absent).

Which input it is: ``self.source`` (:class:`BatchSource`, component and stream) during the
call; a bolt with several inputs dispatches on it. The batches of one window reach the bolt
in the order their streams first arrived.

Emitting: ``self.emit_batch(columns, stream=None, parents=None)`` with a RecordBatch, a
Table or a dict of lists, one column per declared output field; every row is routed by the
stream's groupings as a per-tuple ``emit`` is. Anchoring, in Storm's meaning:

- ``parents=None``: every emitted tuple is anchored to every tuple of the input batch. Right
  for aggregates; each emitted tuple carries one anchor entry per spout tuple of the batch,
  so a 1-to-N transform should name its parents instead;
- ``parents=[i, ...]`` (or a pyarrow array, e.g. ``pc.list_parent_indices``): emitted row
  ``k`` is anchored to input row ``parents[k]`` only, as ``emit(..., anchors=[tup])`` would;
- ``anchored=False``: unanchored.

A plain ``self.emit(values)`` inside ``process_batch`` is anchored to the whole batch.

Acking is per batch: when ``process_batch`` returns, every input tuple of the batch is
acked, which the engine adds to its per-window XOR (one ledger value per spout tuple, as for
per-tuple bolts). When it raises, every input tuple of the batch is failed (cause
``error``, the exception as the reason), the error is reported, the window's remaining
input fails and the executor restarts, exactly as for a raising ``process``.
Turning ``auto_ack``, ``auto_fail`` or ``auto_anchor`` off is refused
(``BATCH_BOLT_AUTO_DISABLED``): batches are always acked this way.

Tick tuples (``topology.tick.tuple.freq.secs``) go to ``process_tick(tup)``, one ``Tuple``
each (they are few), and are acked when it returns. Every other input, system streams
included, is a batch.

A ``BatchBolt`` runs in the engine's executors (``LocalCluster``, submitted topologies); a
host that hands bolts one tuple at a time (the multilang child, ``ComponentHarness``)
refuses it with ``BATCH_BOLT_PER_TUPLE_HOST``.

Example:
    >>> class Upper(BatchBolt):
    ...     outputs = ["word"]
    ...     batch_format = "lists"
    ...     def process_batch(self, batch):
    ...         self.emit_batch({"word": [w.upper() for w in batch["word"]]})
    >>> Upper.batch_format
    'lists'
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple, Protocol

from sparkstorm.errors import TopologyError
from sparkstorm.topology.component import Bolt
from sparkstorm.topology.tuple import Tuple

BATCH_FORMATS = ("arrow", "lists")


class BatchSource(NamedTuple):
    """Where the batch being processed comes from."""

    component: str
    stream: str


class BatchSink(Protocol):
    """What the engine gives a batch bolt to emit through while a batch is processed."""

    def emit_batch(self, columns: Any, stream: str | None, parents: Any,
                   anchored: bool) -> int:
        """Route and buffer the rows of ``columns``; see :meth:`BatchBolt.emit_batch`."""

    def emit_rows(self, rows: list[list[Any]], stream: str | None, parents: Any,
                  anchored: bool) -> int:
        """The same with rows already made (values in declared field order)."""


class BatchBolt(Bolt):
    """A bolt fed one columnar batch per input stream and window (see the module docs).

    Attributes:
        batch_format: ``"arrow"`` (a ``pyarrow.RecordBatch``; lists when pyarrow is not
            installed) or ``"lists"`` (a dict of field name -> list).
        source: the (component, stream) of the batch being processed.
    """

    batch_format: ClassVar[str] = "arrow"
    batch_api: ClassVar[bool] = True
    """Marks the class for the engine, which then runs it batch by batch."""
    source: BatchSource
    _batch_sink: BatchSink | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.batch_format not in BATCH_FORMATS:
            msg = (
                f"{cls.__module__}.{cls.__qualname__}.batch_format is "
                f"{cls.batch_format!r}; use one of {list(BATCH_FORMATS)!r}"
            )
            raise TopologyError(msg, code="BATCH_FORMAT_INVALID")
        turned_off = [name for name in ("auto_anchor", "auto_ack", "auto_fail")
                      if not getattr(cls, name)]
        if turned_off:
            msg = (
                f"{cls.__module__}.{cls.__qualname__} is a BatchBolt but sets "
                f"{', '.join(f'{name} = False' for name in turned_off)}; a BatchBolt's "
                "batch is always acked when process_batch returns and failed when it raises "
                "(emit_batch(anchored=False) emits unanchored rows); subclass Bolt to ack "
                "tuples yourself"
            )
            raise TopologyError(msg, code="BATCH_BOLT_AUTO_DISABLED")

    def process_batch(self, batch: Any) -> None:
        """Handle one window's input from one stream, as columns.

        Called by the engine once per task, window and input stream that brought tuples,
        on the executor's thread. Its input tuples are acked when it returns and failed if
        it raises.

        Args:
            batch: a ``pyarrow.RecordBatch``, or a dict of field name -> list.
        """

    def process(self, tup: Tuple) -> None:
        """Refused: a batch bolt is handed batches, never single tuples.

        Raises:
            TopologyError: ``BATCH_BOLT_PER_TUPLE_HOST``.
        """
        msg = (
            f"{type(self).__name__} is a BatchBolt, which only the engine's executors run "
            f"(LocalCluster or a submitted topology); this host called process() with a "
            f"tuple from {tup.component!r}/{tup.stream!r}; run the topology on the engine, "
            "or subclass Bolt for a per-tuple host"
        )
        raise TopologyError(msg, code="BATCH_BOLT_PER_TUPLE_HOST")

    def emit_batch(self, columns: Any, stream: str | None = None, parents: Any = None,
                   anchored: bool = True) -> int:
        """Emit one tuple per row of ``columns``, routed by ``stream``'s groupings.

        Args:
            columns: a ``pyarrow.RecordBatch`` or ``pyarrow.Table``, or a dict of field
                name -> sequence; exactly the stream's declared fields.
            stream: the output stream (default ``"default"``).
            parents: None to anchor every row to the whole input batch, or one input row
                index per emitted row (a list or a pyarrow integer array).
            anchored: False to emit unanchored rows (``parents`` is then ignored).

        Returns:
            How many tuples were emitted (rows, not deliveries).

        Raises:
            TopologyError: ``BATCH_EMIT_OUTSIDE_BATCH`` outside ``process_batch``, and the
                column errors of :func:`~sparkstorm.topology.batch_columns.columns_to_rows`,
                ``BATCH_PARENTS_MISMATCH`` or ``UNDECLARED_STREAM``.
        """
        sink = self._batch_sink
        if sink is None:
            msg = (
                f"{type(self).__name__}.emit_batch() called outside process_batch(); "
                "emitted rows are anchored to the batch being processed, so emit them "
                "from process_batch() (use emit() in process_tick())"
            )
            raise TopologyError(msg, code="BATCH_EMIT_OUTSIDE_BATCH")
        return sink.emit_batch(columns, stream, parents, anchored)

    def emit(
        self,
        values: Any,
        stream: str | None = None,
        anchors: Any = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit one tuple; inside ``process_batch`` it is anchored to the whole batch.

        Outside a batch (``process_tick``), or with explicit anchors, a direct task or
        ``need_task_ids``, this is :meth:`Bolt.emit`.
        """
        sink = self._batch_sink
        if sink is None or anchors is not None or direct_task is not None or need_task_ids:
            return super().emit(values, stream, anchors, direct_task, need_task_ids)
        sink.emit_rows([list(values)], stream, None, True)
        return None


__all__ = ["BATCH_FORMATS", "BatchBolt", "BatchSink", "BatchSource"]
