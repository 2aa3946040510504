"""KafkaBolt on real Spark local mode against a real broker (tansu), and against none.

A tuple is acked once Kafka confirmed its record, failed when the producer gives up on it
(and so replayed by its spout), and acked at once with fire_and_forget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Topology
from sparkstorm.connectors.kafka import (
    KafkaBatchBolt,
    KafkaBatchSpout,
    KafkaBolt,
    KafkaSpout,
    KafkaSpoutConfig,
)
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import free_port
from tests.integration.spark.components import NoReplaySpout, NumberSpout, read_events
from tests.integration.spark.kafka_broker import (
    committed,
    create_topic,
    produce,
    read_topic,
    tansu_broker,
)

pytestmark = pytest.mark.timeout(150)


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with tansu_broker(tmp_path_factory.mktemp("tansu")) as servers:
        yield servers


class TopicNumberSpout(NumberSpout):
    """NumberSpout whose tuples name their topic: odd numbers to ``odd``, even to ``even``."""

    outputs = ["n", "key", "topic"]

    def values(self, n: int) -> list[Any]:
        return [n, f"k{n}", "odd" if n % 2 else None]


class UnsentSpout(NoReplaySpout):
    """NoReplaySpout with the fields a KafkaBolt reads by default."""

    outputs = ["message", "key"]


def _spout_events(directory: Path, event: str) -> Counter[int]:
    return Counter(e["n"] for e in read_events(directory, "numbers") if e["event"] == event)


def test_the_bolt_writes_every_tuple_and_acks_it_once_delivered(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    create_topic(kafka, "even", 1)
    create_topic(kafka, "odd", 1)
    count = 40

    class ToKafka(Topology):
        numbers = TopicNumberSpout.spec()
        out = KafkaBolt.spec(inputs=[numbers], bootstrap_servers=kafka, topic="even",
                             topic_field="topic", message_field="n",
                             producer_properties={"linger.ms": 5})

    cluster.submit_topology("kafka-out", ToKafka, conf={
        "test.dir": str(tmp_path), "test.count": count})
    wait_for(lambda: len(_spout_events(tmp_path, "ack")) == count, timeout=90,
             message="every tuple acked")
    cluster.kill_topology("kafka-out")
    assert max(_spout_events(tmp_path, "ack").values()) == 1
    assert not _spout_events(tmp_path, "fail")
    for topic, rest in (("even", 0), ("odd", 1)):
        records = read_topic(kafka, topic, 1, count // 2)
        assert sorted(int(r.value()) for r in records) == list(range(rest, count, 2))
        assert {r.key() for r in records} == {f"k{n}".encode() for n in range(rest, count, 2)}


def test_kafka_to_kafka_passes_every_record_on(cluster: LocalCluster, kafka: str,
                                               tmp_path: Path) -> None:
    create_topic(kafka, "source", 2)
    create_topic(kafka, "sink", 1)  # made on first use otherwise, with the broker's default
    produce(kafka, "source", [(n % 2, f"k{n}", f"v{n}") for n in range(30)])
    config = KafkaSpoutConfig(kafka, topics=["source"], group_id="pipe",
                              offset_commit_period_ms=300)

    class Pipe(Topology):
        events = KafkaSpout.spec(kafka=config)
        out = KafkaBolt.spec(inputs=[events], bootstrap_servers=kafka, topic="sink",
                             message_field="value")

    cluster.submit_topology("kafka-pipe", Pipe, conf={"test.dir": str(tmp_path)})
    wait_for(lambda: committed(kafka, "pipe", "source", 2) == [15, 15], timeout=90,
             message="every record acked by the bolt and committed")
    cluster.kill_topology("kafka-pipe")
    records = read_topic(kafka, "sink", 1, 30)
    assert sorted((r.key(), r.value()) for r in records) == \
        sorted((f"k{n}".encode(), f"v{n}".encode()) for n in range(30))


def test_the_batch_forms_pass_every_record_on_as_columns(cluster: LocalCluster, kafka: str,
                                                        tmp_path: Path) -> None:
    """Every good record reaches the sink once; one that does not decode is skipped.

    The batch spout reads a partition's fetch field by field; a record that is not UTF-8
    (the value format here) sends that fetch down the one-by-one path, which reports it
    (``KAFKA_RECORD_UNTRANSLATABLE``) and passes the others on.
    """
    create_topic(kafka, "batch-source", 2)
    create_topic(kafka, "batch-sink", 1)
    records: list[tuple[int, str, str | bytes]] = [
        (n % 2, f"k{n}", f"v{n}") for n in range(200)]
    records[50:50] = [(0, "bad-0", b"\xff\xfe not UTF-8"), (1, "bad-1", b"\xc3")]
    produce(kafka, "batch-source", records)
    config = KafkaSpoutConfig(kafka, topics=["batch-source"], group_id="batch-pipe",
                              offset_commit_period_ms=300, max_poll_records=40)

    class BatchPipe(Topology):
        events = KafkaBatchSpout.spec(kafka=config)
        out = KafkaBatchBolt.spec(inputs=[events], bootstrap_servers=kafka, topic="batch-sink",
                                  message_field="value")

    runner = cluster.submit_topology("kafka-batch-pipe", BatchPipe,
                                     conf={"test.dir": str(tmp_path)})
    wait_for(lambda: committed(kafka, "batch-pipe", "batch-source", 2) == [101, 101],
             timeout=90, message="every batch delivered by the bolt and committed, and the "
                                 "bad records' offsets too")
    spout = wait_for(lambda: (c := runner.stats.summary()["components"]["events"])["acked"]
                     == 200 and c, timeout=30, message="the spout's statistics")
    cluster.kill_topology("kafka-batch-pipe")
    records = read_topic(kafka, "batch-sink", 1, 200)
    assert sorted((r.key(), r.value()) for r in records) == \
        sorted((f"k{n}".encode(), f"v{n}".encode()) for n in range(200))
    assert spout["acked"] == 200 and spout["failed"] == 0  # rows, in batches of <= 40
    assert "KAFKA_RECORD_UNTRANSLATABLE" in runner.stats.last_errors["events"]["error"]


@pytest.mark.parametrize("fire_and_forget", [False, True])
def test_undelivered_records_fail_their_tuples_unless_fire_and_forget(
        cluster: LocalCluster, tmp_path: Path, fire_and_forget: bool) -> None:
    """No broker listens on the bolt's port: librdkafka gives up after message.timeout.ms."""
    count = 5
    nowhere = f"127.0.0.1:{free_port()}"

    class Unsent(Topology):
        numbers = UnsentSpout.spec()
        out = KafkaBolt.spec(inputs=[numbers], bootstrap_servers=nowhere, topic="lost",
                             fire_and_forget=fire_and_forget,
                             producer_properties={"message.timeout.ms": 1500})

    name = f"kafka-unsent-{int(fire_and_forget)}"
    runner = cluster.submit_topology(name, Unsent, conf={
        "test.dir": str(tmp_path), "test.count": count})
    verdict = "ack" if fire_and_forget else "fail"
    wait_for(lambda: len(_spout_events(tmp_path, verdict)) == count, timeout=60,
             message=f"every tuple's {verdict}")
    if not fire_and_forget:
        wait_for(lambda: runner.stats.summary()["components"]["numbers"]["failed"] == count,
                 timeout=30, message="failures counted")
        reasons = runner.stats.summary()["components"]["numbers"]["failure_reasons"]
        assert [r["reason"].split(":")[:2] for r in reasons] == [["out", " KAFKA_DELIVERY_FAILED"]]
    cluster.kill_topology(name)
    other = "fail" if fire_and_forget else "ack"
    assert not _spout_events(tmp_path, other)
