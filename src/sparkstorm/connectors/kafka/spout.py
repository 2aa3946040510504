"""``KafkaSpout``: storm-kafka-client's spout on confluent-kafka (librdkafka).

Each task assigns itself its share of the partitions (:mod:`.partitions`; no consumer-group
rebalance), lists them again every ``partition_refresh_period_ms`` and follows what changed.
It emits one record per ``next_tuple`` call, polling (without blocking) only when the records
of the last poll are all emitted. Under AT_LEAST_ONCE a tuple's message id is
``(topic, partition, offset)``; a failed one is emitted again after its back-off, from the
values kept in memory (no seek), and every ``offset_commit_period_ms`` the smallest offset not
yet finished of each partition is committed (:mod:`.offsets`). A partition with
``max_uncommitted_offsets`` polled and not committed is paused until commits catch up.

With checkpoints on (``topology.checkpoint.windows`` > 0, or ``topology.reliability:
checkpoint``) the offsets are part of the
spout's checkpoint: at each cut (``pre_prepare``) the spout notes each partition's commit
point, and commits it to Kafka only when that checkpoint commits (``pre_commit``), never on
its own timer; a rollback restores the offsets and seeks the consumer back to them (records
polled and not emitted at the cut are polled again). So Kafka's committed offsets are never
ahead of the newest committed checkpoint, and a stateful bolt counts each record once.

Usage::

    from sparkstorm.connectors.kafka import KafkaSpout, KafkaSpoutConfig

    class Pipeline(Topology):
        events = KafkaSpout.spec(par=2, kafka=KafkaSpoutConfig(
            "broker:9092", topics=["events"], offset_commit_period_ms=5_000))
        parse = ParseBolt.spec(inputs=[events])
"""

from __future__ import annotations

import heapq
import json
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from sparkstorm.config.reliability import checkpoint_every
from sparkstorm.connectors.kafka.config import (
    FirstPollOffsetStrategy,
    KafkaSpoutConfig,
    ProcessingGuarantee,
)
from sparkstorm.connectors.kafka.errors import KafkaConnectorError
from sparkstorm.connectors.kafka.offsets import PartitionOffsets
from sparkstorm.connectors.kafka.partitions import (
    TopicPartitionKey,
    list_partitions,
    task_position,
    task_share,
)
from sparkstorm.connectors.kafka.translator import KafkaRecord
from sparkstorm.errors import TopologyError
from sparkstorm.topology.component import Spout
from sparkstorm.topology.spec import ComponentSpec
from sparkstorm.topology.spec_args import resolve_config, resolve_par
from sparkstorm.topology.stream import Stream

METADATA_TIMEOUT_SECONDS = 10.0
"""How long listing partitions or reading committed offsets may take."""
OUTAGE_TIMEOUT_SECONDS = 0.5
"""The same while the last such call failed: ``next_tuple`` must not block a checkpoint's
window for long each time it tries again (it waits for the call in progress)."""
FLUX_KEY = "topology.connector"
"""The component config key a Flux file gives a connector's settings under."""
METRICS_SECONDS = 1.0
"""How often the offsets and lag per partition (``component_metrics``) are refreshed."""
ERROR_REPORT_SECONDS = 30.0
"""A broker error is reported as the component's error at most this often (logged always)."""
_UNCOMMITTED = {FirstPollOffsetStrategy.UNCOMMITTED_EARLIEST,
                FirstPollOffsetStrategy.UNCOMMITTED_LATEST}
_FROM_START = {FirstPollOffsetStrategy.EARLIEST, FirstPollOffsetStrategy.UNCOMMITTED_EARLIEST}


@dataclass
class _Emitted:
    """A tuple emitted under AT_LEAST_ONCE, kept until acked or given up."""

    stream: str
    values: list[Any]
    fails: int = 0


class KafkaSpout(Spout):
    """Reads Kafka topics; see the module docstring and docs/connectors.md."""

    outputs: ClassVar[list[Any]] = []
    transient = ("consumer",)

    @classmethod
    def spec(  # type: ignore[override]
        cls, name: str | None = None, par: int | dict[str, int] | None = None,
        num_tasks: int | None = None, config: dict[str, Any] | None = None, *,
        kafka: KafkaSpoutConfig,
    ) -> ComponentSpec:
        """Declare a Kafka spout reading what ``kafka`` says.

        Its streams are the translator's, each with the translator's fields.

        Raises:
            TopologyError: ``KAFKA_CONFIG_INVALID`` when ``kafka`` is not a KafkaSpoutConfig.
        """
        if not isinstance(kafka, KafkaSpoutConfig):
            msg = (f"KafkaSpout.spec(kafka=...) takes a KafkaSpoutConfig, got "
                   f"{type(kafka).__name__}; build one with KafkaSpoutConfig(bootstrap_servers, "
                   "topics=[...])")
            raise TopologyError(msg, code="KAFKA_CONFIG_INVALID")
        translator = kafka.translator
        outputs = [Stream(fields=translator.fields, name=stream)
                   for stream in translator.output_streams()]
        base = ComponentSpec.declare(
            cls, "spout", name=name, inputs=None, par=resolve_par(cls, par, name),
            num_tasks=num_tasks, config=resolve_config(cls, config, name), outputs=outputs)
        return replace(base, extra={"kafka": kafka.to_dict()})

    @classmethod
    def flux_spec(cls, *, name: str, par: int, num_tasks: int | None,
                  config: dict[str, Any]) -> ComponentSpec:
        """Declared from a Flux file, from the config's ``topology.connector`` mapping.

        Its keys are ``KafkaSpoutConfig``'s (enums by name, ``retry`` and ``translator``
        as mappings).

        Raises:
            TopologyError: ``KAFKA_CONFIG_INVALID`` for a missing or bad setting.
        """
        settings = dict(config.get(FLUX_KEY) or {})
        rest = {k: v for k, v in config.items() if k != FLUX_KEY}
        try:
            kafka = KafkaSpoutConfig.from_dict(settings)
        except TypeError as exc:  # a required setting is missing
            msg = (f"{cls.__name__} {name!r}: {FLUX_KEY} is incomplete ({exc}); give at "
                   "least bootstrap_servers and topics (or topic_pattern)")
            raise TopologyError(msg, code="KAFKA_CONFIG_INVALID") from exc
        return cls.spec(name=name, par=par, num_tasks=num_tasks, config=rest, kafka=kafka)

    # -- the spout's life ----------------------------------------------------------------------
    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Make the consumer and assign this task's partitions."""
        from confluent_kafka import Consumer

        extra = getattr(getattr(self, "component_spec", None), "extra", None) or {}
        topology = str(storm_conf.get("topology.name") or "sparkstorm")
        self.kafka = KafkaSpoutConfig.from_dict(extra["kafka"]).with_group(
            f"{topology}-{context['componentid']}")
        self.topology_id = str(storm_conf.get("storm.id") or topology)
        settings: dict[str, Any] = {"auto.offset.reset": "earliest",
                                    "enable.partition.eof": False}
        settings |= self.kafka.consumer_properties
        settings |= {"bootstrap.servers": self.kafka.bootstrap_servers,
                     "group.id": self.kafka.group_id, "enable.auto.commit": False,
                     "enable.auto.offset.store": False}
        self.checkpointed = checkpoint_every(storm_conf) > 0
        if self.checkpointed:
            settings["on_commit"] = self._on_commit
        self.consumer: Any = Consumer(settings)
        """Offsets are committed on checkpoint commits only (see the module docstring)."""
        self.cuts: dict[int, dict[TopicPartitionKey, int]] = {}
        """The commit point of each partition at each checkpoint's cut, until it commits."""
        self.index, self.count = task_position(context)
        self.parts: dict[TopicPartitionKey, PartitionOffsets] = {}
        self.paused: set[TopicPartitionKey] = set()
        self.waiting: deque[KafkaRecord] = deque()
        self.emitted: dict[tuple[str, int, int], _Emitted] = {}
        self.retries: list[tuple[float, int, tuple[str, int, int]]] = []
        self.retry_seq = 0
        self.given_up = 0
        self.last_report = 0.0
        self.broker_down = False
        """The last metadata call failed: the next ones wait briefly."""
        now = time.monotonic()
        self.next_refresh = now
        self.next_metrics = now
        self.last_emitted: dict[TopicPartitionKey, int] = {}
        self.next_commit = now + self.kafka.offset_commit_period_ms / 1000

    def next_tuple(self) -> None:
        """Emit one record: a retry that is due, else the next one polled."""
        now = time.monotonic()
        self.housekeeping(now)
        if self._emit_retry(now):
            return
        if not self.waiting:
            self._poll()
        while self.waiting:
            if self._emit(self.waiting.popleft()):
                return

    def housekeeping(self, now: float) -> None:
        """What is due: listing partitions, committing, publishing the offset metrics."""
        if now >= self.next_refresh:
            self.next_refresh = now + self.kafka.partition_refresh_period_ms / 1000
            self.refresh_partitions()
        if now >= self.next_commit:
            self.next_commit = now + self.kafka.offset_commit_period_ms / 1000
            if self.kafka.processing_guarantee is not ProcessingGuarantee.AT_MOST_ONCE:
                self.commit()
        if now >= self.next_metrics:
            self.next_metrics = now + METRICS_SECONDS
            self.component_metrics = {"kafkaOffset": self.offset_metrics()}

    def ack(self, tup_id: Any) -> None:
        """The record's tuple tree completed: its offset is finished."""
        if self.kafka.processing_guarantee is ProcessingGuarantee.AT_LEAST_ONCE:
            self.emitted.pop(tup_id, None)
            self._finish(tup_id)

    def fail(self, tup_id: Any) -> None:
        """Schedule the record again after its back-off, or give it up after its retries."""
        if self.kafka.processing_guarantee is not ProcessingGuarantee.AT_LEAST_ONCE:
            return
        emitted = self.emitted.get(tup_id)
        if emitted is None or (tup_id[0], tup_id[1]) not in self.parts:
            return  # a partition given to another task meanwhile
        emitted.fails += 1
        retry = self.kafka.retry
        if retry.gives_up(emitted.fails):
            self.logger.warning("record %s/%s@%s failed %d times; given up (retry.max_retries)",
                                *tup_id, emitted.fails)
            self.given_up += 1
            self.ack(tup_id)
            return
        self.retry_seq += 1
        ready = time.monotonic() + retry.delay_ms(emitted.fails) / 1000
        heapq.heappush(self.retries, (ready, self.retry_seq, tup_id))

    def deactivate(self) -> None:
        """Commit what is finished, as Storm's spout does when deactivated."""
        if self.kafka.processing_guarantee is not ProcessingGuarantee.AT_MOST_ONCE:
            self.commit()

    def close(self) -> None:
        """Commit what is finished and close the consumer."""
        consumer = getattr(self, "consumer", None)
        if consumer is None:
            return
        try:
            self.deactivate()
        finally:
            consumer.close()
            self.consumer = None

    def offset_metrics(self) -> dict[str, dict[str, int | None]]:
        """Storm's ``kafkaOffset`` metrics of each partition this task reads.

        ``latestOffset`` is the broker's next offset as of the last fetch (no request is
        made), ``spoutLag`` that minus ``committedOffset``; ``latestEmittedOffset`` and
        ``latestCompletedOffset`` (every offset up to it finished) are the spout's own.
        """
        from confluent_kafka import KafkaException, TopicPartition

        metrics: dict[str, dict[str, int | None]] = {}
        for (topic, partition), part in sorted(self.parts.items()):
            try:
                _, high = self.consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), cached=True)
            except KafkaException:
                high = -1
            latest = int(high) if high is not None and high >= 0 else None
            point = part.commit_point()
            metrics[f"{topic}/partition_{partition}"] = {
                "latestOffset": latest, "committedOffset": part.committed,
                "spoutLag": (latest - part.committed
                             if latest is not None and part.committed is not None else None),
                "latestEmittedOffset": self.last_emitted.get((topic, partition)),
                "latestCompletedOffset": point - 1 if point else None}
        return metrics

    # -- checkpoints (Storm's IStatefulComponent hooks; see the module docstring) ------------
    def pre_prepare(self, txid: int) -> None:
        """The cut of checkpoint ``txid``: note each partition's commit point."""
        self.cuts[txid] = {key: point for key, part in self.parts.items()
                           if (point := part.commit_point()) is not None}

    def pre_commit(self, txid: int) -> None:
        """Checkpoint ``txid`` committed: commit the offsets of its cut to Kafka."""
        points = self.cuts.pop(txid, None)
        self.cuts = {cut: offsets for cut, offsets in self.cuts.items() if cut > txid}
        if points:
            self._commit_points(points)

    def __getstate__(self) -> dict[str, Any]:
        """What a checkpoint keeps: the partitions' offsets and the records in flight.

        Records polled and not yet emitted are left out (their partition is rewound to the
        first of them), and retries are due at once after a restore.
        """
        parts = {}
        for key, part in self.parts.items():
            unsent = [r.offset for r in self.waiting if (r.topic, r.partition) == key]
            parts[key] = part.rewound(unsent)
        return {"parts": parts, "emitted": dict(self.emitted),
                "retries": [(0.0, seq, message_id) for _, seq, message_id in self.retries],
                "retry_seq": self.retry_seq, "given_up": self.given_up}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a checkpoint (after ``initialize``): seek each partition back to it."""
        from confluent_kafka import TopicPartition

        parts: dict[TopicPartitionKey, PartitionOffsets] = state.pop("parts", {})
        self.__dict__.update(state)
        heapq.heapify(self.retries)
        # a partition whose start is not known is assigned afresh by the next refresh
        starts = {key: part.position for key, part in parts.items()
                  if part.position is not None}
        self.parts = {key: parts[key] for key in starts}
        consumer = getattr(self, "consumer", None)
        if consumer is not None and starts:
            consumer.incremental_assign([TopicPartition(t, p, start)
                                         for (t, p), start in sorted(starts.items())])

    # -- partitions ----------------------------------------------------------------------------
    def refresh_partitions(self) -> None:
        """List the partitions again and follow what changed in this task's share."""
        from confluent_kafka import KafkaException, TopicPartition

        try:
            share = set(task_share(list_partitions(self.consumer, self.kafka.wanted,
                                                   self._timeout()),
                                   self.index, self.count))
        except KafkaException as exc:
            self._report("KAFKA_BROKER_ERROR", f"listing partitions failed: {exc}")
            return
        self.broker_down = False
        revoked = sorted(set(self.parts) - share)
        added = sorted(share - set(self.parts))
        if revoked:
            if self.kafka.processing_guarantee is not ProcessingGuarantee.AT_MOST_ONCE:
                self.commit(revoked)
            self.consumer.incremental_unassign([TopicPartition(t, p) for t, p in revoked])
            for key in revoked:
                del self.parts[key]
                self.paused.discard(key)
            self.waiting = deque(r for r in self.waiting if (r.topic, r.partition) in share)
            self.emitted = {k: v for k, v in self.emitted.items() if (k[0], k[1]) in share}
            self.logger.info("task %s gave up partitions %s", self.context.get("taskid"),
                             revoked)
        if added:
            try:
                committed = self.consumer.committed(
                    [TopicPartition(t, p) for t, p in added], timeout=self._timeout())
            except KafkaException as exc:
                self._report("KAFKA_BROKER_ERROR", f"reading committed offsets failed: {exc}")
                return
            starts = [self._start(tp) for tp in committed]
            self.consumer.incremental_assign(starts)
            self.logger.info("task %s reads partitions %s from %s", self.context.get("taskid"),
                             added, [tp.offset for tp in starts])

    def _start(self, committed: Any) -> Any:
        """Where a newly assigned partition is read from (Storm's first-poll strategy)."""
        from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, TopicPartition

        offset = committed.offset if committed.offset >= 0 else None
        strategy = self.kafka.first_poll_offset_strategy
        key = (committed.topic, committed.partition)
        if offset is not None and (strategy in _UNCOMMITTED or self._ours(committed)):
            start = offset
            self.parts[key] = PartitionOffsets(committed=offset)
        else:
            start = self._first_offset(key, strategy in _FROM_START)
            self.parts[key] = PartitionOffsets(start)
            self.parts[key].committed = offset
            if start is None:
                start = OFFSET_BEGINNING if strategy in _FROM_START else OFFSET_END
        return TopicPartition(committed.topic, committed.partition, start)

    def _first_offset(self, key: TopicPartitionKey, from_start: bool) -> int | None:
        """The partition's first or next offset now (None if the brokers cannot say).

        A known start is what a checkpoint taken before the first record restores to.
        """
        from confluent_kafka import KafkaException, TopicPartition

        try:
            low, high = self.consumer.get_watermark_offsets(
                TopicPartition(*key), timeout=self._timeout(), cached=False)
        except KafkaException as exc:
            self._report("KAFKA_BROKER_ERROR", f"reading {key}'s offsets failed: {exc}")
            return None
        return int(low if from_start else high)

    def _ours(self, committed: Any) -> bool:
        """Whether this topology committed ``committed`` (its metadata says so)."""
        try:
            return bool(json.loads(committed.metadata or "{}").get("topologyId")
                        == self.topology_id)
        except (ValueError, AttributeError):
            return False

    # -- polling and emitting ------------------------------------------------------------------
    def _poll(self) -> None:
        self._pause_full()
        messages = self.consumer.consume(num_messages=self.kafka.max_poll_records, timeout=0)
        tracked = self.kafka.processing_guarantee is ProcessingGuarantee.AT_LEAST_ONCE
        polled = False
        for message in messages:
            error = message.error()
            if error is not None:
                self._report("KAFKA_BROKER_ERROR", f"consumer error: {error}")
                continue
            key = (message.topic(), message.partition())
            part = self.parts.get(key)
            offset = message.offset()
            if part is None or part.seen(offset):
                continue
            part.polled(offset)
            if not tracked:
                part.done(offset)
            polled = True
            self.waiting.append(KafkaRecord.of_message(message))
        if polled and not tracked and \
                self.kafka.processing_guarantee is ProcessingGuarantee.AT_MOST_ONCE:
            self.commit()

    def _pause_full(self) -> None:
        """Pause partitions at ``max_uncommitted_offsets``; resume those below it."""
        from confluent_kafka import TopicPartition

        limit = self.kafka.max_uncommitted_offsets
        full = {key for key, part in self.parts.items() if part.uncommitted() >= limit}
        pause, resume = full - self.paused, self.paused - full
        if pause:
            self.consumer.pause([TopicPartition(t, p) for t, p in sorted(pause)])
        if resume:
            self.consumer.resume([TopicPartition(t, p) for t, p in sorted(resume)])
        self.paused = full

    def _emit(self, record: KafkaRecord) -> bool:
        """Emit ``record``; False when it was skipped (untranslatable or translated to None)."""
        message_id = (record.topic, record.partition, record.offset)
        try:
            stream, values = self.kafka.translator.translate(record)
        except KafkaConnectorError as exc:
            self.raise_exception(exc)
            self._finish(message_id)
            return False
        if values is None:
            if not self.kafka.emit_null_tuples:
                self._finish(message_id)
                return False
            values = [None] * len(self.kafka.translator.fields)
        if self.kafka.processing_guarantee is ProcessingGuarantee.AT_LEAST_ONCE:
            self.emitted[message_id] = _Emitted(stream, values)
        self.last_emitted[(record.topic, record.partition)] = record.offset
        self.emit(values, tup_id=message_id if self.kafka.tracked else None, stream=stream)
        return True

    def _emit_retry(self, now: float) -> bool:
        while self.retries and self.retries[0][0] <= now:
            _, _, message_id = heapq.heappop(self.retries)
            emitted = self.emitted.get(message_id)
            if emitted is not None:
                self.emit(emitted.values, tup_id=message_id, stream=emitted.stream)
                return True
        return False

    def _finish(self, message_id: tuple[str, int, int]) -> None:
        part = self.parts.get((message_id[0], message_id[1]))
        if part is not None:
            part.done(message_id[2])

    # -- commits -------------------------------------------------------------------------------
    def commit(self, only: list[TopicPartitionKey] | None = None) -> None:
        """Commit each partition's finished prefix (of ``only``'s partitions, if given).

        With checkpoints on, only a checkpoint's commit commits (:meth:`pre_commit`).
        """
        if self.checkpointed:
            return
        points = {}
        for key in sorted(self.parts) if only is None else only:
            point = self.parts[key].commit_point()
            if point is not None:
                points[key] = point
        self._commit_points(points)

    def _commit_points(self, points: dict[TopicPartitionKey, int]) -> None:
        """Commit ``points`` of the partitions still read here, where they moved forward."""
        from confluent_kafka import KafkaException, TopicPartition

        metadata = json.dumps({"topologyId": self.topology_id})
        offsets = []
        for key, point in sorted(points.items()):
            part = self.parts.get(key)
            if part is not None and (part.committed is None or point > part.committed):
                offsets.append(TopicPartition(key[0], key[1], point, metadata=metadata))
        if not offsets:
            return
        # with checkpoints this is pre_commit, on the window's path: it never waits for the
        # broker; the outcome comes to _on_commit from a later poll
        asynchronous = self.checkpointed or \
            self.kafka.processing_guarantee is ProcessingGuarantee.NO_GUARANTEE
        try:
            self.consumer.commit(offsets=offsets, asynchronous=asynchronous)
        except KafkaException as exc:
            self._report("KAFKA_COMMIT_FAILED",
                         f"committing {[(o.topic, o.partition, o.offset) for o in offsets]} "
                         f"failed ({exc}); retried at the next commit")
            return
        if self.checkpointed:
            return  # _on_commit marks them committed once the broker confirms
        for tp in offsets:
            self.parts[(tp.topic, tp.partition)].committed_to(tp.offset)

    def _on_commit(self, error: Any, offsets: list[Any]) -> None:
        """The outcome of an asynchronous commit under checkpoints (librdkafka's callback)."""
        if error is not None:
            self._report("KAFKA_COMMIT_FAILED",
                         f"committing {[(o.topic, o.partition, o.offset) for o in offsets]} "
                         f"failed ({error}); retried at the next checkpoint's commit")
            return
        for tp in offsets:
            part = self.parts.get((tp.topic, tp.partition))
            if part is not None and tp.error is None and \
                    (part.committed is None or tp.offset > part.committed):
                part.committed_to(tp.offset)

    def _timeout(self) -> float:
        return OUTAGE_TIMEOUT_SECONDS if self.broker_down else METADATA_TIMEOUT_SECONDS

    def _report(self, code: str, problem: str) -> None:
        """Log a broker problem; report it as the component's error at most every 30 s."""
        self.broker_down = self.broker_down or code == "KAFKA_BROKER_ERROR"
        self.logger.warning("%s: %s", code, problem)
        now = time.monotonic()
        if now - self.last_report >= ERROR_REPORT_SECONDS:
            self.last_report = now
            message = (f"KafkaSpout {self.context.get('componentid')!r} task "
                       f"{self.context.get('taskid')}: {problem}; the spout goes on and "
                       "retries; check the brokers at "
                       f"{self.kafka.bootstrap_servers!r}")
            error = KafkaConnectorError(
                message, code="KAFKA_COMMIT_FAILED" if code == "KAFKA_COMMIT_FAILED"
                else "KAFKA_BROKER_ERROR")
            self.raise_exception(error)
