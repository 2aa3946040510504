"""The Kafka connector's batch form, for the columnar path (docs/batch-api.md).

``KafkaBatchSpout`` is ``KafkaSpout`` as a ``BatchSpout``: each ``next_batch`` polls up to
``min(max_rows, max_poll_records)`` records and emits them as columns, one ``emit_batch``
per stream, whose message id stands for all of its records. It keeps everything else of
``KafkaSpout``: partitions per task, first-poll strategies, guarantees, commits of the
finished prefix, ``max_uncommitted_offsets``, checkpoints and the lag metrics. A failed batch
is emitted again whole after its back-off (``retry``); given up, all its records are.

``KafkaBatchBolt`` is ``KafkaBolt`` as a ``BatchBolt`` (a sink for ``BatchBolt`` producers
and batch spouts): each batch's rows are handed to the producer and the batch waits, up to
``BATCH_DELIVERY_SECONDS``, for Kafka to confirm all of them; if one is not confirmed the
whole batch fails with ``KAFKA_DELIVERY_FAILED`` and is replayed: under acking through
``ReportedFailedException`` (the error is reported, the bolt goes on without a restart),
under checkpoint reliability by raising it (a rollback replays). With
``fire_and_forget=True`` it returns at once. While the producer says its brokers are down
it waits only ``OUTAGE_DELIVERY_SECONDS``, so that an outage does not hold each window for
the full wait. Its settings, outage reports and metrics are ``KafkaBolt``'s.

Usage::

    from sparkstorm.connectors.kafka import KafkaBatchBolt, KafkaBatchSpout, KafkaSpoutConfig

    class PassThrough(Topology):
        source = KafkaBatchSpout.spec(kafka=KafkaSpoutConfig("broker:9092", topics=["in"]))
        sink = KafkaBatchBolt.spec(inputs=[source], bootstrap_servers="broker:9092",
                                   topic="out", message_field="value")
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, ClassVar

from sparkstorm.connectors.kafka.bolt import KafkaBolt, encode_value
from sparkstorm.connectors.kafka.config import ProcessingGuarantee
from sparkstorm.connectors.kafka.errors import KafkaConnectorError
from sparkstorm.connectors.kafka.partitions import TopicPartitionKey
from sparkstorm.connectors.kafka.spout import KafkaSpout
from sparkstorm.connectors.kafka.translator import KafkaRecord
from sparkstorm.topology.batch_bolt import BatchBolt
from sparkstorm.topology.batch_spout import BatchSpout
from sparkstorm.topology.failed import ReportedFailedException

BATCH_DELIVERY_SECONDS = 30.0
"""How long a ``KafkaBatchBolt`` batch waits for its records' delivery before it fails."""
OUTAGE_DELIVERY_SECONDS = 1.0
"""How long it waits instead while the producer says its brokers are down."""
FLUSH_SLICE_SECONDS = 0.25
"""The wait is made of polls this long, so that an outage heard meanwhile cuts it short."""


@dataclass
class _Batch:
    """A batch emitted under AT_LEAST_ONCE, kept until acked or given up."""

    stream: str
    columns: dict[str, list[Any]]
    offsets: dict[TopicPartitionKey, list[int]] = field(default_factory=dict)
    """Its records' offsets by partition (a list of pairs in checkpoints made before)."""
    fails: int = 0

    def by_partition(self) -> dict[TopicPartitionKey, list[int]]:
        """:attr:`offsets`, also from a checkpoint that kept them as (partition, offset)."""
        if isinstance(self.offsets, dict):
            return self.offsets
        grouped: dict[TopicPartitionKey, list[int]] = {}
        for key, offset in self.offsets:
            grouped.setdefault(key, []).append(offset)
        return grouped

    @property
    def records(self) -> int:
        """How many records it holds."""
        return sum(len(offsets) for offsets in self.by_partition().values())


class KafkaBatchSpout(BatchSpout, KafkaSpout):
    """Reads Kafka topics in columnar batches; see the module docstring."""

    max_batch_rows: ClassVar[int] = 10_000

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """As ``KafkaSpout``; batches in flight are kept by id."""
        super().initialize(storm_conf, context)
        self.batches: dict[int, _Batch] = {}
        self.next_batch_id = 0

    def next_batch(self, max_rows: int) -> None:
        """Emit a failed batch that is due, else the records of one poll, as columns."""
        now = time.monotonic()
        self.housekeeping(now)
        if self._emit_retry(now):
            return
        self._pause_full()
        limit = max(1, min(max_rows, self.kafka.max_poll_records))
        tracked = self.kafka.processing_guarantee is ProcessingGuarantee.AT_LEAST_ONCE
        groups = self._poll_batches(limit, tracked)
        for group in groups.values():
            batch_id = None
            if tracked:
                batch_id = self.next_batch_id
                self.next_batch_id += 1
                self.batches[batch_id] = group
            self.emit_batch(group.columns, batch_id=batch_id, stream=group.stream)
        if groups and self.kafka.processing_guarantee is ProcessingGuarantee.AT_MOST_ONCE:
            self.commit()

    def _poll_batches(self, limit: int, tracked: bool) -> dict[str, _Batch]:
        """Up to ``limit`` records polled and translated, as columns per stream.

        The engine's batch path is columnar, and so is this where it can be: a poll's
        messages are grouped by partition and each field is read by one list comprehension
        per partition (:meth:`_read_partition`). A poll with a broker error, a translator
        ``func``, or a partition with a record that does not translate is read one message at
        a time (:meth:`_read_messages`), which reports the error and skips the bad record.
        """
        messages = self.consumer.consume(num_messages=limit, timeout=0)
        if not messages:
            return {}
        translator = self.kafka.translator
        getters = translator.column_getters()
        if getters is None or any(message.error() is not None for message in messages):
            return self._read_messages(messages, tracked)
        by_partition: dict[TopicPartitionKey, list[Any]] = {}
        for message in messages:
            key = (message.topic(), message.partition())
            found = by_partition.get(key)
            if found is None:
                found = by_partition[key] = []
            found.append(message)
        batches: dict[str, _Batch] = {}
        for key, polled in by_partition.items():
            part = self.parts.get(key)
            if part is None:
                continue
            if part.position is not None and polled[0].offset() < part.position:
                polled = [m for m in polled if m.offset() >= part.position]  # a fetch again
                if not polled:
                    continue
            try:
                batch = self._read_partition(key, part, polled, getters, tracked)
            except Exception:  # noqa: BLE001 - a record that does not translate: one by one
                for stream, one_by_one in self._read_messages(polled, tracked).items():
                    _merge_into(batches, stream, one_by_one)
                continue
            _merge_into(batches, translator.streams.get(key[0], translator.default_stream),
                        batch)
        return batches

    def _read_partition(self, key: TopicPartitionKey, part: Any, polled: list[Any],
                        getters: list[Any], tracked: bool) -> _Batch:
        """The messages of one partition (ascending, not seen before) as one batch's columns.

        Raises what a getter raises, before any offset is marked polled.
        """
        fields = self.kafka.translator.fields
        columns = {name: [get(message) for message in polled]
                   for name, get in zip(fields, getters, strict=True)}
        offsets = [message.offset() for message in polled]
        part.polled_all(offsets)
        if not tracked:
            part.done_all(offsets)
        self.last_emitted[key] = offsets[-1]
        return _Batch("", columns, {key: offsets})

    def _read_messages(self, messages: list[Any], tracked: bool) -> dict[str, _Batch]:
        """``messages`` translated one at a time, as columns per stream.

        The general path (broker errors, a translator ``func``, a record that does not
        translate): it reads each message straight into a row
        (``RecordTranslator.message_reader``) and turns the rows into columns once per batch.
        """
        fields = self.kafka.translator.fields
        read = self._message_reader()
        rows: dict[str, list[list[Any]]] = {}
        offsets: dict[str, dict[TopicPartitionKey, list[int]]] = {}
        parts, last_emitted = self.parts, self.last_emitted
        for message in messages:
            error = message.error()
            if error is not None:
                self._report("KAFKA_BROKER_ERROR", f"consumer error: {error}")
                continue
            key = (message.topic(), message.partition())
            part = parts.get(key)
            offset = message.offset()
            if part is None or part.seen(offset):
                continue
            part.polled(offset)
            try:
                stream, values = read(message)
            except KafkaConnectorError as exc:
                self.raise_exception(exc)
                part.done(offset)
                continue
            if values is None:
                if not self.kafka.emit_null_tuples:
                    part.done(offset)
                    continue
                values = [None] * len(fields)
            if not tracked:
                part.done(offset)
            found = rows.get(stream)
            if found is None:
                found = rows[stream] = []
                offsets[stream] = {}
            found.append(values)
            taken = offsets[stream].get(key)
            if taken is None:
                taken = offsets[stream][key] = []
            taken.append(offset)
            last_emitted[key] = offset
        return {stream: _Batch(stream, {name: list(column) for name, column in
                                        zip(fields, zip(*found, strict=True), strict=True)},
                               offsets[stream])
                for stream, found in rows.items()}

    def _message_reader(self) -> Any:
        """``(stream, values)`` of a polled message (``RecordTranslator.message_reader``).

        Made once per spout task; with a translator ``func``, through a ``KafkaRecord``.
        """
        reader = self.__dict__.get("_reader")
        if reader is None:
            translator = self.kafka.translator
            reader = translator.message_reader()
            if reader is None:
                def reader(message: Any) -> tuple[str, list[Any] | None]:
                    return translator.translate(KafkaRecord.of_message(message))
            self._reader = reader
        return reader

    def ack(self, tup_id: Any) -> None:
        """The batch's trees completed: its offsets are finished."""
        batch = self.batches.pop(tup_id, None)
        if batch is None:
            return
        for key, offsets in batch.by_partition().items():
            part = self.parts.get(key)
            if part is not None:
                part.done_all(offsets)

    def fail(self, tup_id: Any) -> None:
        """Emit the batch again after its back-off, or give it up after its retries."""
        batch = self.batches.get(tup_id)
        if batch is None:
            return
        batch.fails += 1
        if self.kafka.retry.gives_up(batch.fails):
            self.logger.warning("batch of %d records failed %d times; given up "
                                "(retry.max_retries)", batch.records, batch.fails)
            self.given_up += batch.records
            self.ack(tup_id)
            return
        self.retry_seq += 1
        ready = time.monotonic() + self.kafka.retry.delay_ms(batch.fails) / 1000
        heapq.heappush(self.retries, (ready, self.retry_seq, tup_id))

    def _emit_retry(self, now: float) -> bool:
        while self.retries and self.retries[0][0] <= now:
            batch_id: Any = heapq.heappop(self.retries)[2]  # an int here, not a record's id
            batch = self.batches.get(batch_id)
            if batch is not None:
                self.emit_batch(batch.columns, batch_id=batch_id, stream=batch.stream)
                return True
        return False

    def __getstate__(self) -> dict[str, Any]:
        """``KafkaSpout``'s checkpoint, with the batches in flight instead of records."""
        state = super().__getstate__()
        state["batches"] = dict(self.batches)
        state["next_batch_id"] = self.next_batch_id
        return state

    def refresh_partitions(self) -> None:
        """As ``KafkaSpout``; a batch of a partition given up here is forgotten."""
        super().refresh_partitions()
        self.batches = {bid: batch for bid, batch in self.batches.items()
                        if all(key in self.parts for key in batch.by_partition())}


def _merge_into(batches: dict[str, _Batch], stream: str, batch: _Batch) -> None:
    """Add ``batch``'s rows and offsets to ``batches[stream]`` (made on its first rows)."""
    found = batches.get(stream)
    if found is None:
        batches[stream] = _Batch(stream, batch.columns, dict(batch.offsets))
        return
    for name, column in batch.columns.items():
        found.columns[name].extend(column)
    for key, offsets in batch.by_partition().items():
        found.offsets.setdefault(key, []).extend(offsets)


@dataclass
class _BatchDeliveries:
    """What Kafka answered for the records of one batch so far."""

    rows: int
    confirmed: int = 0
    problems: list[Any] = field(default_factory=list)

    @property
    def open(self) -> int:
        """Records Kafka has not answered for yet."""
        return self.rows - self.confirmed - len(self.problems)


class KafkaBatchBolt(BatchBolt, KafkaBolt):
    """Writes each row of its batches to Kafka; see the module docstring."""

    auto_ack: ClassVar[bool] = True  # a BatchBolt's batch is acked when process_batch returns
    batch_format: ClassVar[str] = "lists"

    def process_batch(self, batch: Any) -> None:
        """Produce every row; wait for their delivery (unless fire and forget).

        Raises:
            KafkaConnectorError: ``KAFKA_TUPLE_UNMAPPABLE`` when a field it reads is not in
                the batch; ``KAFKA_DELIVERY_FAILED`` when a record was not confirmed under
                checkpoint reliability (a rollback replays the batch).
            ReportedFailedException: ``KAFKA_DELIVERY_FAILED`` when a record was not
                confirmed under acking: the batch fails and is replayed by its spouts, the
                bolt goes on in the same process.
        """
        columns: dict[str, list[Any]] = batch
        rows = len(next(iter(columns.values()), []))
        wanted = [name for name in (self.topic_field, self.key_field, self.message_field)
                  if name is not None and (name != self.topic_field or self.topic is None)]
        missing = [name for name in wanted if name not in columns]
        if missing:
            msg = (f"KafkaBatchBolt {self.context.get('componentid')!r}: the batch from "
                   f"{self.source} has no field(s) {missing} (it has {sorted(columns)}); "
                   "set key_field/message_field/topic_field to fields of its input")
            raise KafkaConnectorError(msg, code="KAFKA_TUPLE_UNMAPPABLE")
        topics = columns.get(self.topic_field) if self.topic_field else None
        keys = columns[self.key_field] if self.key_field is not None else None
        values = columns[self.message_field]
        deliveries = _BatchDeliveries(rows)

        def delivered(error: Any, _message: Any) -> None:
            # also called for a record of an earlier, failed batch that reaches Kafka late
            # (librdkafka retries it): each record counts once, when Kafka answers for it
            if error is not None:
                deliveries.problems.append(error)
                self.undelivered += 1
            else:
                deliveries.confirmed += 1
                self.delivered += 1
                self.brokers_down = False  # the brokers are back

        callback = None if self.fire_and_forget else delivered
        produce = self.producer.produce
        # one pass over the rows, the per-row work kept to the produce call: this loop is
        # the sink's share of a pass-through's CPU (bytes, the common case, pass unencoded)
        for topic, key, value in zip(topics if topics is not None else repeat(self.topic),
                                     keys if keys is not None else repeat(None), values,
                                     strict=False):  # repeat() is endless: values end it
            topic = topic or self.topic
            if key is not None and key.__class__ is not bytes:
                key = encode_value(key)
            if value is not None and value.__class__ is not bytes:
                value = encode_value(value)
            try:
                produce(topic, value=value, key=key, on_delivery=callback)
            except BufferError:  # the producer's queue is full: let it drain, then again
                self.producer.poll(1.0)
                produce(topic, value=value, key=key, on_delivery=callback)
        if self.fire_and_forget:
            self.producer.poll(0)
            return
        started = time.monotonic()
        self._wait_for(deliveries, started)
        if deliveries.open or deliveries.problems:
            problems = deliveries.problems
            msg = (f"KafkaBatchBolt {self.context.get('componentid')!r}: {len(problems)} of "
                   f"{rows} records failed ({problems[:3]}) and {deliveries.open} unconfirmed "
                   f"after {time.monotonic() - started:.1f} s; the batch fails so that it is "
                   f"replayed; check the brokers at {self.servers!r}")
            error = KafkaConnectorError(msg, code="KAFKA_DELIVERY_FAILED")
            if self.rolls_back:  # checkpoint reliability: a rollback is what replays it
                raise error
            # acking: the batch fails and its spouts replay it, the bolt goes on (no restart)
            raise ReportedFailedException(str(error)) from error

    def _wait_for(self, deliveries: _BatchDeliveries, started: float) -> None:
        """Serve delivery reports until Kafka answered for the batch or the wait is over.

        Only this batch's records are waited for: records of earlier failed batches may
        still sit in the producer's queue while the brokers are down.
        """
        self.producer.poll(0)
        while deliveries.open:
            limit = OUTAGE_DELIVERY_SECONDS if self.brokers_down else BATCH_DELIVERY_SECONDS
            remaining = started + limit - time.monotonic()
            if remaining <= 0:
                return
            self.producer.poll(min(FLUSH_SLICE_SECONDS, remaining))

    def end_window(self) -> None:
        """Deliveries were waited for in ``process_batch``; serve what is left."""
        self.producer.poll(0)
        self.component_metrics = {"kafkaProducer": {
            "inFlight": len(self.producer), "delivered": self.delivered,
            "failed": self.undelivered, "brokersDown": int(self.brokers_down)}}
