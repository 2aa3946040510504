"""KafkaSpout with checkpoints on, on real Spark local mode against a real broker (tansu).

The spout's offsets are part of its checkpoint and go to Kafka only when that checkpoint
commits: after kill -9 of the spout's executor and of a stateful bolt's, the bolt's counts in
the newest committed checkpoint hold every record exactly once, and the offsets committed in
Kafka are never ahead of what that checkpoint's spout snapshot would read next. Both tests
are slow: the end-to-end example's test does the same in make test
(tests/integration/examples/test_kafka_sales_pipeline.py).
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
from tests.integration.spark.kafka_broker import create_topic, produce, tansu_broker
from tests.integration.spark.kafka_components import KafkaValueCount
from tests.integration.spark.kafka_cuts import CutWatch, kill_executor

pytestmark = pytest.mark.timeout(200)

PARTITIONS = 3


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with tansu_broker(tmp_path_factory.mktemp("tansu")) as servers:
        yield servers


def _run(cluster: LocalCluster, kafka: str, tmp_path: Path, topic: str,
         per_partition: int) -> tuple[TopologyDriver, CutWatch, set[str]]:
    create_topic(kafka, topic, PARTITIONS)
    values = {f"{topic}-{p}-{i}" for p in range(PARTITIONS) for i in range(per_partition)}
    produce(kafka, topic, [(int(v.split("-")[-2]), v, v) for v in sorted(values)])

    class Counted(Topology):
        events = KafkaSpout.spec(par=2, kafka=KafkaSpoutConfig(
            kafka, topics=[topic], group_id=topic, max_poll_records=50))
        count = KafkaValueCount.spec(inputs={events: Grouping.fields("value")}, par=2)

    runner = cluster.submit_topology(topic, Counted, conf={
        "topology.checkpoint.windows": 2, "topology.max.spout.pending": 100,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints")})
    return runner, CutWatch(kafka, runner, topic, topic, PARTITIONS, spout="events",
                            counter="count"), values


def _exactly_once(watch: CutWatch, values: set[str], per_partition: int) -> None:
    cut = watch.until(lambda c: len(c.counts) == len(values), "every record counted")
    assert cut.counts == dict.fromkeys(values, 1), "a record lost or counted twice"
    # Kafka hears of the offsets when the checkpoint that covers them commits
    wait_for(lambda: watch.committed_offsets() == [per_partition] * PARTITIONS, 30,
             message="every offset committed in Kafka")


# slow (about 22 s): tests/integration/examples/test_kafka_sales_pipeline.py kills the spout's
# executor (then a bolt's) under the same checks, Kafka's offsets never ahead included
@pytest.mark.slow
def test_kill_9_of_the_spout_executor_counts_every_record_once(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    runner, watch, values = _run(cluster, kafka, tmp_path, "ckpt-spout", 400)
    watch.until(lambda c: 0 < len(c.counts) < len(values), "a checkpoint mid-run")
    kill_executor(runner, "events")
    _exactly_once(watch, values, 400)
    assert runner.stats.rollbacks >= 1
    cluster.kill_topology("ckpt-spout")


@pytest.mark.slow  # test_kafka_sales_pipeline.py covers both kills in make test
def test_kill_9_of_the_spout_then_of_a_bolt_counts_every_record_once(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    runner, watch, values = _run(cluster, kafka, tmp_path, "ckpt-both", 1000)
    first = watch.until(lambda c: 0 < len(c.counts) < len(values) // 3,
                        "a checkpoint early in the run")
    kill_executor(runner, "events")
    watch.until(lambda c: (c.window or 0) > (first.window or 0) and
                len(c.counts) < 2 * len(values) // 3, "a checkpoint after the rollback")
    kill_executor(runner, "count")
    _exactly_once(watch, values, 1000)
    assert runner.stats.rollbacks >= 2
    assert watch.checks > 10
    cluster.kill_topology("ckpt-both")
