"""A Kafka outage on the bolt side, on real Spark local mode and a real broker (tansu).

The bolt's broker becomes unreachable mid-run and comes back on the same address (a
``TcpRelay`` in front of tansu, which keeps its topics in memory). The topology keeps running
its windows, the bolt shows the outage as its error (``KAFKA_BROKER_ERROR``) and in its
``kafkaProducer`` metrics, and once the broker is back every tuple is acked and its record is
in the topic (at least once): per tuple (``KafkaBolt``) and per batch (``KafkaBatchBolt``).
Under ``topology.reliability: checkpoint`` the outage rolls the topology back, and a stateful
bolt beside the sink counts every tuple exactly once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Topology
from sparkstorm.checkpoint import CheckpointError
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.connectors.kafka import KafkaBatchBolt, KafkaBolt
from sparkstorm.engine.driver.checkpoints import WindowCheckpoints
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, part_name
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.checkpoint_components import CheckpointedCount, PacedPositionSpout
from tests.integration.spark.components import KEYS, read_events
from tests.integration.spark.connector_components import ValueSpout
from tests.integration.spark.kafka_broker import (
    TcpRelay,
    create_topic,
    read_topic,
    relayed_broker,
)
from tests.integration.spark.kafka_components import GatedValueBatchSpout

pytestmark = pytest.mark.timeout(200)

COUNT = 120
GATE_AT = 40
"""Numbers from here on wait for the outage (the gate file), so they surely meet it."""
PRODUCER = {"reconnect.backoff.max.ms": 500, "socket.timeout.ms": 3000}
"""Short reconnect back-offs: the producer sees the broker again within a second."""


@pytest.fixture
def relayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, TcpRelay]]:
    with relayed_broker(tmp_path_factory.mktemp("tansu")) as found:
        yield found


def _acked(directory: Path, component: str) -> Counter[int]:
    return Counter(e["n"] for e in read_events(directory, component) if e["event"] == "ack")


def _producer_metrics(runner: TopologyDriver, component: str) -> dict[str, Any] | None:
    by_task = runner.stats.summary()["components"][component].get("metrics") or {}
    return next((m["kafkaProducer"] for m in by_task.values() if "kafkaProducer" in m), None)


def _error(runner: TopologyDriver, component: str) -> str:
    return str((runner.stats.last_errors.get(component) or {}).get("error", ""))


# slow (40 s and more): tests/unit/connectors/kafka/test_kafka_bolt_outage.py covers the
# reports, the metrics, the failures and the rollbacks against a port where no broker listens
@pytest.mark.slow
@pytest.mark.parametrize("form", ["tuple", "batch"])
def test_the_sink_rides_out_a_broker_outage_and_delivers_everything(
        cluster: LocalCluster, relayed: tuple[str, TcpRelay], tmp_path: Path,
        form: str, caplog: pytest.LogCaptureFixture) -> None:
    kafka, relay = relayed
    topic = f"bolt-outage-{form}"
    create_topic(kafka, topic, 1)
    settings: dict[str, Any] = {"bootstrap_servers": kafka, "topic": topic, "key_field": "n",
                                "message_field": "value", "producer_properties": PRODUCER}
    if form == "tuple":
        class Out(Topology):
            numbers = ValueSpout.spec()
            out = KafkaBolt.spec(inputs=[numbers], **settings)
    else:
        class Out(Topology):  # type: ignore[no-redef]
            numbers = GatedValueBatchSpout.spec()
            out = KafkaBatchBolt.spec(inputs=[numbers], **settings)

    # message timeouts of 6 s: the producer's follows the topology's (the bolt's default)
    runner = cluster.submit_topology(topic, Out, conf={
        "test.dir": str(tmp_path), "test.count": COUNT, "test.rate": 40,
        "test.gate_at": GATE_AT, "topology.message.timeout.secs": 6})
    wait_for(lambda: len(_acked(tmp_path, "numbers")) == GATE_AT, 60,
             message="the numbers before the gate acked")

    relay.stop()
    # reported as the bolt's error; a batch failing meanwhile (KAFKA_DELIVERY_FAILED) may be
    # the last error by the time this looks, so the driver's log of errors is read too
    wait_for(lambda: "KAFKA_BROKER_ERROR" in _error(runner, "out") or any(
        "KAFKA_BROKER_ERROR" in r.getMessage() and "component out" in r.getMessage()
        for r in caplog.records), 30, message="the outage reported as the bolt's error")
    wait_for(lambda: (_producer_metrics(runner, "out") or {}).get("brokersDown") == 1, 30,
             message="the outage in the bolt's kafkaProducer metrics")
    (tmp_path / "gate").touch()
    during = runner.window
    wait_for(lambda: any(e["event"] == "fail" for e in read_events(tmp_path, "numbers")), 60,
             message="tuples failed in the outage")
    wait_for(lambda: runner.window >= during + 5, 30, message="windows go on in the outage")
    assert len(_acked(tmp_path, "numbers")) < COUNT

    relay.start()
    wait_for(lambda: len(_acked(tmp_path, "numbers")) == COUNT, 90,
             message="every tuple acked once the broker is back")
    metrics = wait_for(lambda: (m := _producer_metrics(runner, "out")) and
                       m["brokersDown"] == 0 and m, 30, message="the brokers back in metrics")
    # counted by the executor process: a failed batch is a ReportedFailedException, which
    # fails it for a replay without restarting the batch bolt's executor, so its counts
    # cover the whole run (records of failed batches delivered late included)
    assert runner.pool.restarts == 0, "no executor restarted through the outage"
    assert metrics["delivered"] >= COUNT, metrics
    cluster.kill_topology(topic)
    keys = {int(r.key()) for r in read_topic(kafka, topic, 1, 2 * COUNT, timeout=10)}
    assert keys == set(range(COUNT)), "a record lost"


def _committed_counts(runner: TopologyDriver) -> dict[str, int]:
    """The counts of the ``count`` tasks in the newest committed checkpoint."""
    assert isinstance(runner.checkpointing, WindowCheckpoints)
    store = runner.checkpointing.store
    for _ in range(10):
        window = store.latest_committed()
        if window is None:
            return {}
        counts: Counter[str] = Counter()
        try:
            for executor in runner.plan.executors:
                if executor.component == "count":
                    part = ExecutorPart.decode(store.read_part(window, part_name(executor.gid)))
                    for blob in part.tasks.values():
                        counts.update(read_snapshot(blob)["data"])
        except CheckpointError:  # purged under our feet by a newer commit
            continue
        return dict(counts)
    return {}


# slow (about 40 s): tests/unit/connectors/kafka/test_kafka_bolt_outage.py covers the bolt's
# rollbacks under checkpoint reliability, test_checkpoints.py the exact counts after them
@pytest.mark.slow
def test_under_checkpoint_reliability_an_outage_rolls_back_and_counts_stay_exact(
        cluster: LocalCluster, relayed: tuple[str, TcpRelay], tmp_path: Path) -> None:
    kafka, relay = relayed
    topic = "bolt-outage-checkpoint"
    create_topic(kafka, topic, 1)
    count = 200

    class Beside(Topology):
        numbers = PacedPositionSpout.spec()
        count = CheckpointedCount.spec(inputs=[numbers])
        out = KafkaBolt.spec(inputs=[numbers], bootstrap_servers=kafka, topic=topic,
                             key_field="n", message_field="key",
                             producer_properties=PRODUCER | {"message.timeout.ms": 4000})

    runner = cluster.submit_topology(topic, Beside, conf={
        "test.dir": str(tmp_path), "test.count": count, "test.rate": 20,
        "topology.reliability": "checkpoint", "topology.checkpoint.windows": 2,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints")})
    wait_for(lambda: sum(_committed_counts(runner).values()) > 20, 60,
             message="counts in a committed checkpoint")

    relay.stop()
    wait_for(lambda: "KAFKA_" in _error(runner, "out"), 30,
             message="the outage reported as the bolt's error")
    wait_for(lambda: runner.stats.rollbacks >= 1, 60, message="the outage rolls back")
    assert sum(_committed_counts(runner).values()) < count

    relay.start()
    expected = Counter(f"k{n % KEYS}" for n in range(count))
    wait_for(lambda: _committed_counts(runner) == dict(expected), 120,
             message="every number counted exactly once after the outage")
    cluster.kill_topology(topic)
    keys = {int(r.key()) for r in read_topic(kafka, topic, 1, 3 * count, timeout=10)}
    assert keys == set(range(count)), "a record lost"
