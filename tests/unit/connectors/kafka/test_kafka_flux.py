"""The Kafka connectors declared in Flux files by their Python class names (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkstorm.connectors.kafka import KafkaSpoutConfig
from sparkstorm.errors import SparkstormError
from sparkstorm.flux import load_flux_file

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "flux" / "kafka_pipeline.yaml"


def test_the_example_declares_the_spout_and_the_bolt_from_their_config(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_SERVERS", "broker:9092")
    spec = load_flux_file(EXAMPLE, env_filter=True).spec
    events, copy = spec.component("events"), spec.component("copy")
    assert events.outputs[0].fields == ("key", "value")  # the translator's fields
    assert events.par == 2 and events.component.endswith("KafkaSpout")
    kafka = KafkaSpoutConfig.from_dict(events.extra["kafka"])
    assert (kafka.bootstrap_servers, kafka.topics, kafka.max_poll_records) == \
        ("broker:9092", ["events"], 1000)
    assert kafka.first_poll_offset_strategy.value == "EARLIEST"
    assert copy.extra["kafka"]["topic"] == "events-copy"
    assert copy.extra["kafka"]["producer_properties"] == {"linger.ms": 20}
    assert "topology.connector" not in events.config


@pytest.mark.parametrize(("old", "new"), [
    ('first_poll_offset_strategy: "EARLIEST"', 'first_poll_offset_strategy: "SOMETIME"'),
    ('bootstrap_servers: "${ENV-KAFKA_SERVERS}"\n        topics',
     'brokers: "${ENV-KAFKA_SERVERS}"\n        topics'),
    ('topic: "events-copy"', 'topic_name: "events-copy"'),
])
def test_a_flux_file_with_a_wrong_setting_is_refused_at_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    monkeypatch.setenv("KAFKA_SERVERS", "broker:9092")
    bad = tmp_path / "bad.yaml"
    text = EXAMPLE.read_text()
    assert old in text
    bad.write_text(text.replace(old, new))
    with pytest.raises(SparkstormError) as caught:
        load_flux_file(bad, env_filter=True)
    assert caught.value.code == "KAFKA_CONFIG_INVALID"
    assert "bad.yaml:" in str(caught.value)
