"""KafkaSpout with checkpoints on, on real Spark local mode against a real broker (tansu).

The spout's offsets are part of its checkpoint and go to Kafka only when that checkpoint
commits: after kill -9 of the spout's executor and of a stateful bolt's, the bolt's counts in
the newest committed checkpoint hold every record exactly once, and the offsets committed in
Kafka are never ahead of what that checkpoint's spout snapshot would read next. Both tests
are slow: the end-to-end example's test does the same in make test
(tests/integration/examples/test_kafka_sales_pipeline.py).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.checkpoint import CheckpointError
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.connectors.kafka import KafkaSpout, KafkaSpoutConfig
from sparkstorm.engine.driver.checkpoints import WindowCheckpoints
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, part_name
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.kafka_broker import committed, create_topic, produce, tansu_broker
from tests.integration.spark.kafka_components import KafkaValueCount

pytestmark = pytest.mark.timeout(200)

PARTITIONS = 3


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with tansu_broker(tmp_path_factory.mktemp("tansu")) as servers:
        yield servers


class _Cut:
    """The newest committed checkpoint: the spout's next offsets and the bolt's counts."""

    def __init__(self, window: int | None, points: dict[int, int],
                 counts: dict[str, int]) -> None:
        self.window, self.points, self.counts = window, points, counts


def _newest_cut(runner: TopologyDriver) -> _Cut:
    for _ in range(10):
        try:
            return _read_cut(runner)
        except CheckpointError:  # purged under our feet by a newer commit
            continue
    return _read_cut(runner)


def _read_cut(runner: TopologyDriver) -> _Cut:
    assert isinstance(runner.checkpointing, WindowCheckpoints)
    store = runner.checkpointing.store
    window = store.latest_committed()
    points: dict[int, int] = {}
    counts: dict[str, int] = {}
    if window is None:
        return _Cut(None, points, counts)
    for executor in runner.plan.executors:
        part = ExecutorPart.decode(store.read_part(window, part_name(executor.gid)))
        for blob in part.tasks.values():
            data = read_snapshot(blob)["data"]
            if executor.component == "events":
                for (_, partition), offsets in data["parts"].items():
                    points[partition] = offsets.commit_point()
            elif executor.component == "count":
                for value, n in data.items():
                    counts[value] = counts.get(value, 0) + n
    return _Cut(window, points, counts)


class _Watch:
    """Polls the run; each poll checks Kafka's offsets against the committed checkpoint."""

    def __init__(self, kafka: str, runner: TopologyDriver, topic: str) -> None:
        self.kafka, self.runner, self.topic = kafka, runner, topic
        self.checks = 0

    def cut(self) -> _Cut:
        # Kafka first: an offset committed then was covered by a checkpoint committed then
        in_kafka = committed(self.kafka, self.topic, self.topic, PARTITIONS)
        cut = _newest_cut(self.runner)
        for partition, offset in enumerate(in_kafka):
            if offset >= 0:
                assert offset <= cut.points.get(partition, -1), \
                    f"partition {partition}: Kafka at {offset}, checkpoint at {cut.points}"
        self.checks += 1
        return cut

    def until(self, condition: Any, message: str, timeout: float = 90) -> _Cut:
        def met() -> _Cut | None:
            cut = self.cut()
            return cut if condition(cut) else None
        found: _Cut = wait_for(met, timeout, message=message, interval=0.3)
        return found


def _kill(runner: TopologyDriver, component: str) -> None:
    gid = next(e.gid for e in runner.plan.executors if e.component == component)
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)


def _run(cluster: LocalCluster, kafka: str, tmp_path: Path, topic: str,
         per_partition: int) -> tuple[TopologyDriver, _Watch, set[str]]:
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
    return runner, _Watch(kafka, runner, topic), values


def _exactly_once(watch: _Watch, values: set[str], per_partition: int) -> None:
    cut = watch.until(lambda c: len(c.counts) == len(values), "every record counted")
    assert cut.counts == dict.fromkeys(values, 1), "a record lost or counted twice"
    # Kafka hears of the offsets when the checkpoint that covers them commits
    wait_for(lambda: committed(watch.kafka, watch.topic, watch.topic, PARTITIONS)
             == [per_partition] * PARTITIONS, 30, message="every offset committed in Kafka")


# slow (about 22 s): tests/integration/examples/test_kafka_sales_pipeline.py kills the spout's
# executor (then a bolt's) under the same checks, Kafka's offsets never ahead included
@pytest.mark.slow
def test_kill_9_of_the_spout_executor_counts_every_record_once(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    runner, watch, values = _run(cluster, kafka, tmp_path, "ckpt-spout", 400)
    watch.until(lambda c: 0 < len(c.counts) < len(values), "a checkpoint mid-run")
    _kill(runner, "events")
    _exactly_once(watch, values, 400)
    assert runner.stats.rollbacks >= 1
    cluster.kill_topology("ckpt-spout")


@pytest.mark.slow  # test_kafka_sales_pipeline.py covers both kills in make test
def test_kill_9_of_the_spout_then_of_a_bolt_counts_every_record_once(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    runner, watch, values = _run(cluster, kafka, tmp_path, "ckpt-both", 1000)
    first = watch.until(lambda c: 0 < len(c.counts) < len(values) // 3,
                        "a checkpoint early in the run")
    _kill(runner, "events")
    watch.until(lambda c: (c.window or 0) > (first.window or 0) and
                len(c.counts) < 2 * len(values) // 3, "a checkpoint after the rollback")
    _kill(runner, "count")
    _exactly_once(watch, values, 1000)
    assert runner.stats.rollbacks >= 2
    assert watch.checks > 10
    cluster.kill_topology("ckpt-both")
