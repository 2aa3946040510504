"""A Kafka outage under a running topology, on real Spark local mode and a real broker (tansu).

The broker becomes unreachable mid-run and comes back on the same address (see
``TcpRelay``: tansu keeps its topics in memory, so its process stays up). The topology
keeps running its windows, the spout reports the outage as its component error, and every
record produced before and after it is counted exactly once, its offset committed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.connectors.kafka import KafkaSpout, KafkaSpoutConfig
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.kafka_broker import (
    TcpRelay,
    committed,
    create_topic,
    produce,
    relayed_broker,
)
from tests.integration.spark.kafka_components import KafkaValueCount
from tests.integration.spark.kafka_cuts import Cut, read_cut

pytestmark = pytest.mark.timeout(150)

PARTITIONS = 2
TOPIC = "outage"


@pytest.fixture
def relayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, TcpRelay]]:
    with relayed_broker(tmp_path_factory.mktemp("tansu")) as found:
        yield found


def _values(first: int, count: int) -> list[tuple[int, str, str]]:
    return [(p, f"{p}-{i}", f"{p}-{i}") for p in range(PARTITIONS)
            for i in range(first, first + count)]


def _newest_cut(runner: TopologyDriver) -> Cut:
    return read_cut(runner, spout="events", counter="count")


def _complete(runner: TopologyDriver, count: int) -> Cut | None:
    cut = _newest_cut(runner)
    return cut if len(cut.counts) == count else None


# slow (about 35 s): tests/integration/examples/test_kafka_sales_pipeline.py covers the
# spout's recovery, test_kafka_bolt.py's test without a broker the reporting of an
# unreachable one
@pytest.mark.slow
def test_the_topology_rides_out_a_broker_outage_and_loses_nothing(
        cluster: LocalCluster, relayed: tuple[str, TcpRelay], tmp_path: Path) -> None:
    kafka, relay = relayed
    create_topic(kafka, TOPIC, PARTITIONS)
    produce(kafka, TOPIC, _values(0, 100))

    class Counted(Topology):
        # short reconnect back-offs: the spout sees the broker again within a second
        events = KafkaSpout.spec(kafka=KafkaSpoutConfig(
            kafka, topics=[TOPIC], group_id=TOPIC, partition_refresh_period_ms=1000,
            consumer_properties={"reconnect.backoff.max.ms": 500, "socket.timeout.ms": 3000}))
        count = KafkaValueCount.spec(inputs={events: Grouping.fields("value")})

    runner = cluster.submit_topology(TOPIC, Counted, conf={
        "topology.checkpoint.windows": 2,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints")})
    wait_for(lambda: len(_newest_cut(runner).counts) == 200, 60,
             message="the first records counted")

    relay.stop()
    during = runner.window
    error = wait_for(lambda: runner.stats.last_errors.get("events"), 30,
                     message="the outage reported as the spout's error")["error"]
    assert "KAFKA_BROKER_ERROR" in error or "KAFKA_COMMIT_FAILED" in error, error
    wait_for(lambda: runner.window >= during + 20, 30, message="windows go on in the outage")

    relay.start()
    produce(kafka, TOPIC, _values(100, 100))
    cut = wait_for(lambda: _complete(runner, 400), 60,
                   message="the records after the outage counted")
    assert cut.counts == {value: 1 for _, value, _ in _values(0, 200)}
    wait_for(lambda: committed(kafka, TOPIC, TOPIC, PARTITIONS) == [200] * PARTITIONS, 30,
             message="every offset committed after the outage")
    cluster.kill_topology(TOPIC)
