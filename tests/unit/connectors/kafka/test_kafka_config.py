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
