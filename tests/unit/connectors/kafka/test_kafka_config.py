"""The Kafka connector's settings, translator, offsets and partition shares (no broker)."""

from __future__ import annotations

import pytest

from sparkstorm import Topology
from sparkstorm.connectors.kafka import (
    KafkaBolt,
    KafkaSpout,
    KafkaSpoutConfig,
    RecordTranslator,
    RetryBackoff,
)
from sparkstorm.connectors.kafka.offsets import PartitionOffsets
from sparkstorm.connectors.kafka.partitions import task_share
from sparkstorm.connectors.kafka.translator import KafkaRecord
from sparkstorm.errors import SparkstormError, TopologyError
from sparkstorm.topology.spec import TopologySpec


def upper_value(record: KafkaRecord) -> list[str] | None:
    """A translator function: skips records without a value."""
    return None if record.value is None else [record.value.upper()]


@pytest.mark.parametrize("settings", [
    {},                                              # neither topics nor a pattern
    {"topics": ["a"], "topic_pattern": "a.*"},       # both
    {"topic_pattern": "(unclosed"},
    {"topics": ["a"], "processing_guarantee": "EXACTLY_ONCE"},
    {"topics": ["a"], "first_poll_offset_strategy": "TIMESTAMP"},
    {"topics": ["a"], "offset_commit_period_ms": 0},
    {"topics": ["a"], "consumer_properties": {"group.id": "mine"}},
])
def test_bad_spout_settings_are_refused(settings: dict[str, object]) -> None:
    with pytest.raises(TopologyError) as caught:
        KafkaSpoutConfig("127.0.0.1:9092", **settings)  # type: ignore[arg-type]
    assert caught.value.code == "KAFKA_CONFIG_INVALID"


def test_unknown_settings_in_a_spec_are_refused() -> None:
    data = KafkaSpoutConfig("b:9092", topics=["a"]).to_dict() | {"pol_timeout": 5}
    with pytest.raises(TopologyError) as caught:
        KafkaSpoutConfig.from_dict(data)
    assert caught.value.code == "KAFKA_CONFIG_INVALID"


def test_the_spout_declares_the_translators_streams_and_keeps_its_config() -> None:
    translator = RecordTranslator(fields=["key", "value", "timestamp"],
                                  streams={"clicks": "click", "views": "view"})
    config = KafkaSpoutConfig("b:9092", topic_pattern="clicks|views", translator=translator,
                              retry=RetryBackoff(max_retries=4))

    class Pipeline(Topology):
        events = KafkaSpout.spec(par=2, kafka=config)
        out = KafkaBolt.spec(inputs=[events], bootstrap_servers="b:9092", topic="out",
                             key_field="key", message_field="value")

    sent = TopologySpec.from_json(Pipeline.to_json())  # as submit sends it
    spec = next(c for c in sent.components if c.name == "events")
    assert {s.name: s.fields for s in spec.outputs} == {
        "default": ("key", "value", "timestamp"), "click": ("key", "value", "timestamp"),
        "view": ("key", "value", "timestamp")}
    assert KafkaSpoutConfig.from_dict(spec.extra["kafka"]) == config
    assert config.wanted("clicks") and not config.wanted("clicks2")


def test_spec_takes_only_a_kafka_spout_config() -> None:
    with pytest.raises(TopologyError) as caught:
        KafkaSpout.spec(kafka={"bootstrap_servers": "b:9092"})  # type: ignore[arg-type]
    assert caught.value.code == "KAFKA_CONFIG_INVALID"


def test_a_bolt_needs_a_topic_or_a_topic_field() -> None:
    with pytest.raises(TopologyError) as caught:
        KafkaBolt.spec(bootstrap_servers="b:9092")
    assert caught.value.code == "KAFKA_CONFIG_INVALID"


def test_translator_formats_streams_and_functions() -> None:
    record = KafkaRecord("clicks", 1, 5, b"k", b'{"x": 1}', None, [["h", b"v"]])
    json_values = RecordTranslator(fields=["value", "headers"], value_format="json",
                                   key_format="bytes")
    assert json_values.translate(record) == ("default", [{"x": 1}, [["h", b"v"]]])
    own = RecordTranslator(fields=["shout"], streams={"clicks": "c"},
                           func=f"{__name__}:upper_value")
    assert own.translate(record) == ("c", ['{"X": 1}'])
    assert own.translate(KafkaRecord("a", 0, 1, None, None, None, [])) == ("default", None)


def test_an_undecodable_record_is_reported_with_its_code() -> None:
    record = KafkaRecord("a", 0, 9, None, b"\xff not json", None, [])
    for translator in (RecordTranslator(value_format="json"), RecordTranslator()):
        with pytest.raises(SparkstormError) as caught:
            translator.translate(record)
        assert caught.value.code == "KAFKA_RECORD_UNTRANSLATABLE"


class _Message:
    """What a confluent-kafka ``Message`` offers the readers (it cannot be made in Python)."""

    def __init__(self, record: KafkaRecord, kind: int = 1) -> None:
        self.record, self.kind = record, kind

    def topic(self) -> str:
        return self.record.topic

    def partition(self) -> int:
        return self.record.partition

    def offset(self) -> int:
        return self.record.offset

    def key(self) -> bytes | None:
        return self.record.key

    def value(self) -> bytes | None:
        return self.record.value

    def timestamp(self) -> tuple[int, int]:
        return (self.kind, self.record.timestamp or 0) if self.kind else (0, -1)

    def headers(self) -> list[tuple[str, bytes]] | None:
        return [tuple(h) for h in self.record.headers] or None  # type: ignore[misc]


@pytest.mark.parametrize(("fields", "key_format", "value_format"), [
    (["topic", "partition", "offset", "key", "value", "timestamp", "headers"], "str", "str"),
    (["key", "value"], "bytes", "bytes"),
    (["value", "offset"], "bytes", "json"),
    (["timestamp", "key"], "json", "str"),
])
def test_the_message_reader_gives_what_translate_gives(
        fields: list[str], key_format: str, value_format: str) -> None:
    translator = RecordTranslator(fields=fields, key_format=key_format,
                                  value_format=value_format, streams={"views": "v"})
    read = translator.message_reader()
    assert read is not None
    for record in (KafkaRecord("clicks", 1, 5, b'"k"', b'{"x": 1}', 1700, [["h", b"v"]]),
                   KafkaRecord("views", 0, 7, None, None, 1701, []),
                   KafkaRecord("clicks", 2, 9, b'"k2"', b"[2]", None, [])):
        kind = 0 if record.timestamp is None else 1
        assert read(_Message(record, kind)) == translator.translate(record)
        assert KafkaRecord.of_message(_Message(record, kind)) == record
    bad = KafkaRecord("clicks", 0, 3, b"\xff", b"\xff not json", None, [])
    if "str" in (key_format, value_format) or "json" in (key_format, value_format):
        with pytest.raises(SparkstormError) as caught:
            read(_Message(bad, 0))
        assert caught.value.code == "KAFKA_RECORD_UNTRANSLATABLE"
        assert "clicks/0@3" in str(caught.value)


def test_a_translator_function_has_no_message_reader() -> None:
    assert RecordTranslator(fields=["x"], func=f"{__name__}:upper_value").message_reader() \
        is None


def test_a_batch_finishes_its_offsets_as_done_would_one_by_one() -> None:
    one, many = PartitionOffsets(10), PartitionOffsets(10)
    for part in (one, many):
        for offset in range(10, 20):
            part.polled(offset)
    for offset in (12, 13, 15, 99):  # 99 was never polled: ignored
        one.done(offset)
    many.done_all([12, 13, 15, 99])
    assert (many.open, many.finished) == (one.open, one.finished)
    assert many.commit_point() == one.commit_point() == 10


def test_a_batch_from_an_older_checkpoint_keeps_its_offsets_by_partition() -> None:
    from sparkstorm.connectors.kafka.batch import _Batch

    old = _Batch("default", {}, [(("t", 0), 5), (("t", 1), 7), (("t", 0), 6)])  # type: ignore[arg-type]
    assert old.by_partition() == {("t", 0): [5, 6], ("t", 1): [7]} and old.records == 3
    new = _Batch("default", {}, {("t", 0): [5, 6]})
    assert new.by_partition() == {("t", 0): [5, 6]} and new.records == 2


def test_retry_backoff_doubles_up_to_its_maximum_then_gives_up() -> None:
    retry = RetryBackoff(initial_delay_ms=50, delay_period_ms=100, max_retries=3,
                         max_delay_ms=500)
    assert retry.delays(5) == [50, 200, 400, 500, 500]
    assert [retry.gives_up(n) for n in (1, 3, 4)] == [False, False, True]
    assert not RetryBackoff().gives_up(10**9)


def test_only_the_finished_prefix_is_committed_across_gaps() -> None:
    part = PartitionOffsets(committed=0)
    for offset in (0, 1, 5, 6):  # 2-4 were compacted away: never polled
        part.polled(offset)
    part.done(1)
    part.done(5)
    assert part.commit_point() == 0
    part.done(0)
    assert part.commit_point() == 6
    part.done(6)
    assert part.commit_point() == 7
    part.committed_to(7)
    assert part.uncommitted() == 0 and part.seen(6) and not part.seen(7)


def test_partitions_are_shared_round_robin_and_each_read_once() -> None:
    parts = [(t, p) for t in ("b", "a") for p in range(3)]
    shares = [task_share(parts, i, 4) for i in range(4)]
    assert sorted(x for share in shares for x in share) == sorted(parts)
    assert shares[0] == [("a", 0), ("b", 1)]


def test_a_fetch_marks_its_offsets_polled_as_polled_would_one_by_one() -> None:
    one, many = PartitionOffsets(10), PartitionOffsets(10)
    for offset in (10, 11, 13):  # 12 never handed out (compaction)
        one.polled(offset)
    many.polled_all([10, 11, 13])
    assert (many.open, many.position) == (one.open, one.position) == ({10, 11, 13}, 14)
    assert many.seen(13) and not many.seen(14)
