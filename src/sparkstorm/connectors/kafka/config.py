"""``KafkaSpoutConfig``: storm-kafka-client's spout settings with Python names.

The config travels in the component's spec (``extra["kafka"]``) as JSON, so every value is
plain data: enums by name, the translator as fields, streams and an optional import path.

Example:
    >>> config = KafkaSpoutConfig("127.0.0.1:9092", topics=["events"], group_id="g")
    >>> config.first_poll_offset_strategy, config.processing_guarantee
    (<FirstPollOffsetStrategy.UNCOMMITTED_EARLIEST: 'UNCOMMITTED_EARLIEST'>, \
<ProcessingGuarantee.AT_LEAST_ONCE: 'AT_LEAST_ONCE'>)
    >>> KafkaSpoutConfig.from_dict(config.to_dict()) == config
    True
    >>> RetryBackoff(initial_delay_ms=0, delay_period_ms=2, max_delay_ms=10).delays(5)
    [0, 4, 8, 10, 10]
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from typing import Any

from sparkstorm.connectors.kafka.translator import RecordTranslator
from sparkstorm.errors import TopologyError


class FirstPollOffsetStrategy(str, Enum):
    """Where a partition is first read from (Storm's ``FirstPollOffsetStrategy``).

    EARLIEST and LATEST ignore offsets committed by another topology (they take effect when
    the topology is first deployed); offsets this topology committed are always resumed from.
    The UNCOMMITTED ones resume from any committed offset, and start at the beginning (or the
    end) of a partition that has none.
    """

    EARLIEST = "EARLIEST"
    LATEST = "LATEST"
    UNCOMMITTED_EARLIEST = "UNCOMMITTED_EARLIEST"
    UNCOMMITTED_LATEST = "UNCOMMITTED_LATEST"


class ProcessingGuarantee(str, Enum):
    """When an offset may be committed (Storm's ``ProcessingGuarantee``).

    AT_LEAST_ONCE: once its tuple tree is acked and every offset before it too (failed ones
    are retried); AT_MOST_ONCE: right after the poll, before the tuple is emitted (never
    retried); NO_GUARANTEE: once polled, committed every ``offset_commit_period_ms``.
    """

    AT_LEAST_ONCE = "AT_LEAST_ONCE"
    AT_MOST_ONCE = "AT_MOST_ONCE"
    NO_GUARANTEE = "NO_GUARANTEE"


@dataclass(frozen=True)
class RetryBackoff:
    """Storm's ``KafkaSpoutRetryExponentialBackoff``: when a failed offset is emitted again.

    The first retry waits ``initial_delay_ms``, retry n > 1 waits ``delay_period_ms * 2**(n-1)``,
    never more than ``max_delay_ms``. After ``max_retries`` retries (None: forever) a failed
    offset is given up: counted as processed and committed, as Storm does.
    """

    initial_delay_ms: int = 0
    delay_period_ms: int = 2
    max_retries: int | None = None
    max_delay_ms: int = 10_000

    def delay_ms(self, fails: int) -> int:
        """The wait before the retry that follows failure number ``fails`` (1, 2, ...)."""
        if fails <= 1:
            return min(self.initial_delay_ms, self.max_delay_ms)
        return int(min(self.delay_period_ms * 2 ** min(fails - 1, 62), self.max_delay_ms))

    def delays(self, count: int) -> list[int]:
        """The waits before the first ``count`` retries."""
        return [self.delay_ms(n) for n in range(1, count + 1)]

    def gives_up(self, fails: int) -> bool:
        """Whether an offset that failed ``fails`` times is not retried again."""
        return self.max_retries is not None and fails > self.max_retries


@dataclass(frozen=True)
class KafkaSpoutConfig:
    """What a :class:`~sparkstorm.connectors.kafka.spout.KafkaSpout` reads and how.

    Args:
        bootstrap_servers: ``host:port,...`` of the brokers.
        topics: topic names to read; or
        topic_pattern: a regular expression the whole topic name must match.
        group_id: the consumer group offsets are committed under (default: the
            topology's name plus the component's).
        consumer_properties: more librdkafka consumer settings (``security.protocol``...).
        first_poll_offset_strategy: see :class:`FirstPollOffsetStrategy`.
        processing_guarantee: see :class:`ProcessingGuarantee`.
        offset_commit_period_ms: how often acked offsets are committed.
        partition_refresh_period_ms: how often partitions are listed again and reassigned.
        max_uncommitted_offsets: per partition, the offsets emitted and not committed past
            which the partition is not polled (its retries still go on).
        max_poll_records: records fetched per poll.
        retry: the back-off of failed offsets (AT_LEAST_ONCE).
        translator: which fields a record becomes and on which stream.
        tuple_tracking_enforced: emit with message ids under AT_MOST_ONCE and NO_GUARANTEE
            too (so ``topology.max.spout.pending`` and complete latency apply).
        emit_null_tuples: emit a record whose translator returned None as a tuple of
            Nones instead of skipping it (skipped records count as processed).
    """

    bootstrap_servers: str
    topics: list[str] | None = None
    topic_pattern: str | None = None
    group_id: str | None = None
    consumer_properties: dict[str, Any] = field(default_factory=dict)
    first_poll_offset_strategy: FirstPollOffsetStrategy = \
        FirstPollOffsetStrategy.UNCOMMITTED_EARLIEST
    processing_guarantee: ProcessingGuarantee = ProcessingGuarantee.AT_LEAST_ONCE
    offset_commit_period_ms: int = 30_000
    partition_refresh_period_ms: int = 2_000
    max_uncommitted_offsets: int = 10_000_000
    max_poll_records: int = 500
    retry: RetryBackoff = field(default_factory=RetryBackoff)
    translator: RecordTranslator = field(default_factory=RecordTranslator)
    tuple_tracking_enforced: bool = False
    emit_null_tuples: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "first_poll_offset_strategy", _enum(
            FirstPollOffsetStrategy, self.first_poll_offset_strategy,
            "first_poll_offset_strategy"))
        object.__setattr__(self, "processing_guarantee", _enum(
            ProcessingGuarantee, self.processing_guarantee, "processing_guarantee"))
        if isinstance(self.topics, str):
            object.__setattr__(self, "topics", [self.topics])
        if (self.topics is None) == (self.topic_pattern is None):
            _invalid("give exactly one of topics=[names] and topic_pattern='regex', got "
                     f"topics={self.topics!r} topic_pattern={self.topic_pattern!r}")
        if self.topic_pattern is not None:
            try:
                re.compile(self.topic_pattern)
            except re.error as exc:
                _invalid(f"topic_pattern {self.topic_pattern!r} is not a regular expression "
                         f"({exc})")
        if not self.bootstrap_servers:
            _invalid("bootstrap_servers is empty; give 'host:port' of a broker")
        for name in ("offset_commit_period_ms", "partition_refresh_period_ms",
                     "max_uncommitted_offsets", "max_poll_records"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                _invalid(f"{name} must be a positive integer, got {value!r}")
        if "group.id" in self.consumer_properties or "enable.auto.commit" in \
                self.consumer_properties:
            _invalid("consumer_properties may not set group.id (give group_id=) or "
                     "enable.auto.commit (the spout commits itself)")

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form kept in the spout's spec."""
        data = asdict(self)
        data["first_poll_offset_strategy"] = self.first_poll_offset_strategy.value
        data["processing_guarantee"] = self.processing_guarantee.value
        data["translator"] = self.translator.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KafkaSpoutConfig:
        """Inverse of :meth:`to_dict`.

        Raises:
            TopologyError: ``KAFKA_CONFIG_INVALID`` for an unknown or bad setting.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            _invalid(f"unknown settings {unknown}; known: {sorted(known)}")
        values = dict(data)
        if isinstance(values.get("retry"), dict):
            values["retry"] = RetryBackoff(**values["retry"])
        if isinstance(values.get("translator"), dict):
            values["translator"] = RecordTranslator.from_dict(values["translator"])
        return cls(**values)

    def with_group(self, group_id: str) -> KafkaSpoutConfig:
        """This config with ``group_id`` set (when it is unset)."""
        return self if self.group_id else replace(self, group_id=group_id)

    @property
    def tracked(self) -> bool:
        """Whether tuples are emitted with message ids."""
        return (self.processing_guarantee is ProcessingGuarantee.AT_LEAST_ONCE
                or self.tuple_tracking_enforced)

    def wanted(self, topic: str) -> bool:
        """Whether ``topic`` is one this spout reads."""
        if self.topics is not None:
            return topic in self.topics
        return re.fullmatch(self.topic_pattern or "", topic) is not None


def _enum(kind: Any, value: Any, name: str) -> Any:
    try:
        return kind(value.value if isinstance(value, Enum) else value)
    except ValueError:
        _invalid(f"{name} must be one of {[m.value for m in kind]}, got {value!r}")
        raise  # unreachable: _invalid raises


def _invalid(problem: str) -> None:
    msg = f"KafkaSpoutConfig: {problem}"
    raise TopologyError(msg, code="KAFKA_CONFIG_INVALID")
