"""KafkaSpout on real Spark local mode against a real broker (tansu).

Guarantees, retries, commits and restarts; each test uses its own topics and consumer group.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Topology
from sparkstorm.connectors.kafka import KafkaSpout, KafkaSpoutConfig, RetryBackoff
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import read_events
from tests.integration.spark.kafka_broker import committed, create_topic, produce, tansu_broker
from tests.integration.spark.kafka_components import KafkaRecordingBolt

pytestmark = pytest.mark.timeout(150)


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with tansu_broker(tmp_path_factory.mktemp("tansu")) as servers:
        yield servers


def _fill(servers: str, topic: str, partitions: int, per_partition: int,
          first: int = 0) -> None:
    produce(servers, topic, [(p, f"k{p}-{i}", f"v{p}-{i}") for p in range(partitions)
                             for i in range(first, first + per_partition)])


def _topology(config: KafkaSpoutConfig, spouts: int = 2) -> type[Topology]:
    class KafkaTopology(Topology):
        events = KafkaSpout.spec(par=spouts, kafka=config)
        sink = KafkaRecordingBolt.spec(inputs=[events])

    return KafkaTopology


def _seen(directory: Path) -> list[dict[str, Any]]:
    return [e for e in read_events(directory, "sink") if e["event"] == "tuple"]


def _counts(directory: Path) -> Counter[tuple[int, int]]:
    return Counter((e["partition"], e["offset"]) for e in _seen(directory))


def _offset_metrics(runner: Any, wanted: Any, partitions: int
                    ) -> dict[str, dict[str, Any]] | None:
    """Every partition's kafkaOffset metrics once ``wanted`` holds for all of them."""
    by_task = runner.stats.summary()["components"]["events"]["metrics"]
    merged = {name: values for task in by_task.values()
              for name, values in task["kafkaOffset"].items()}
    if len(merged) == partitions and all(wanted(m) for m in merged.values()):
        return merged
    return None


def test_at_least_once_replays_failed_records_and_commits_every_offset(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    create_topic(kafka, "alo", 3)
    _fill(kafka, "alo", 3, 20)
    config = KafkaSpoutConfig(kafka, topics=["alo"], group_id="alo-group",
                              offset_commit_period_ms=300)
    failing = [[0, 3], [1, 5], [2, 0], [2, 19]]
    runner = cluster.submit_topology("kafka-alo", _topology(config), conf={
        "test.dir": str(tmp_path), "test.fail_first": failing})
    everything = {(p, o) for p in range(3) for o in range(20)}
    wait_for(lambda: set(_counts(tmp_path)) == everything, timeout=90,
             message="every record reached the bolt")
    wait_for(lambda: committed(kafka, "alo-group", "alo", 3) == [20, 20, 20], timeout=30,
             message="every offset committed")
    wait_for(lambda: runner.stats.summary()["components"]["events"]["acked"] == 60,
             timeout=30, message="the spout's statistics")
    spout = runner.stats.summary()["components"]["events"]
    # Storm's kafkaOffset metrics per partition, from each task (refreshed every second)
    offsets = wait_for(lambda: _offset_metrics(runner, lambda m: m["spoutLag"] == 0, 3),
                       timeout=30, message="every partition's lag at 0")
    assert offsets == {f"alo/partition_{p}": {
        "latestOffset": 20, "committedOffset": 20, "spoutLag": 0, "latestEmittedOffset": 19,
        "latestCompletedOffset": 19} for p in range(3)}
    cluster.kill_topology("kafka-alo")

    counts = _counts(tmp_path)
    assert {where for where, n in counts.items() if n == 2} == {tuple(f) for f in failing}
    assert max(counts.values()) == 2, "a record was delivered more often than its failures"
    assert spout["failed"] == len(failing)
    record = next(e for e in _seen(tmp_path) if (e["partition"], e["offset"]) == (1, 7))
    assert (record["topic"], record["key"], record["value"], record["stream"]) == \
        ("alo", "k1-7", "v1-7", "default")
    # two spout tasks share the three partitions (round robin), each read by one task
    readers: dict[int, set[int]] = {}
    for event in _seen(tmp_path):
        readers.setdefault(event["partition"], set()).add(event["source_task"])
    assert all(len(tasks) == 1 for tasks in readers.values()), readers
    assert sorted(len([p for p, t in readers.items() if t == {task}])
                  for task in set().union(*readers.values())) == [1, 2]


def test_a_failing_record_holds_back_its_partition_until_its_retries_run_out(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    """Only the acked prefix is committed, and max_uncommitted_offsets pauses the partition.

    After max_retries retries (with back-off) the record is given up and committed.
    """
    create_topic(kafka, "poison", 2)
    _fill(kafka, "poison", 2, 12)
    config = KafkaSpoutConfig(
        kafka, topics=["poison"], group_id="poison-group", offset_commit_period_ms=200,
        max_uncommitted_offsets=4, max_poll_records=1,
        retry=RetryBackoff(initial_delay_ms=0, delay_period_ms=600, max_retries=3,
                           max_delay_ms=1500))
    runner = cluster.submit_topology("kafka-poison", _topology(config, spouts=1), conf={
        "test.dir": str(tmp_path), "test.fail_always": [[0, 4]]})
    held = wait_for(lambda: committed(kafka, "poison-group", "poison", 2) == [4, 12],
                    timeout=60, message="partition 1 committed, partition 0 held at 4")
    assert held
    lagging = wait_for(lambda: _offset_metrics(
        runner, lambda m: m["committedOffset"] == 4 or m["spoutLag"] == 0, 2), timeout=30,
        message="the held partition's lag in the metrics")
    assert (lagging["poison/partition_0"]["spoutLag"],
            lagging["poison/partition_0"]["latestCompletedOffset"]) == (8, 3)
    assert _counts(tmp_path)[(0, 4)] < 4, "given up before the hold was seen"
    wait_for(lambda: committed(kafka, "poison-group", "poison", 2) == [12, 12], timeout=60,
             message="the poison record given up, then everything committed")
    cluster.kill_topology("kafka-poison")

    seen = _seen(tmp_path)
    poison = [e for e in seen if (e["partition"], e["offset"]) == (0, 4)]
    assert len(poison) == 4, "delivered once and retried max_retries (3) times"
    # back-off: retry 1 at once, then 2 * 600 ms and 4 * 600 ms capped at 1.5 s
    gaps = [b["time"] - a["time"] for a, b in zip(poison, poison[1:], strict=False)]
    assert gaps[1] >= 1.1 and gaps[2] >= 1.4, gaps
    # partition 0 paused at 4 uncommitted offsets (4..7) until the poison record was given up
    last_poison = poison[-1]["time"]
    assert all(e["time"] > last_poison for e in seen
               if e["partition"] == 0 and e["offset"] > 7)
    counts = _counts(tmp_path)
    assert all(counts[(p, o)] == 1 for p in range(2) for o in range(12) if (p, o) != (0, 4))


def test_a_restarted_topology_resumes_from_the_committed_offsets(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    create_topic(kafka, "resume", 2)
    _fill(kafka, "resume", 2, 10)
    config = KafkaSpoutConfig(kafka, topics=["resume"], group_id="resume-group",
                              offset_commit_period_ms=300)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    cluster.submit_topology("kafka-resume", _topology(config), conf={"test.dir": str(first)})
    wait_for(lambda: committed(kafka, "resume-group", "resume", 2) == [10, 10], timeout=90,
             message="first run committed")
    cluster.kill_topology("kafka-resume")
    _fill(kafka, "resume", 2, 5, first=10)

    cluster.submit_topology("kafka-resume-2", _topology(config),
                            conf={"test.dir": str(second)})
    wait_for(lambda: committed(kafka, "resume-group", "resume", 2) == [15, 15], timeout=90,
             message="second run committed")
    cluster.kill_topology("kafka-resume-2")
    assert _counts(first) == {(p, o): 1 for p in range(2) for o in range(10)}
    assert _counts(second) == {(p, o): 1 for p in range(2) for o in range(10, 15)}, \
        "the second run must start at the committed offsets"


@pytest.mark.parametrize("guarantee", ["AT_MOST_ONCE", "NO_GUARANTEE"])
def test_without_at_least_once_failed_records_are_not_replayed(
        cluster: LocalCluster, kafka: str, tmp_path: Path, guarantee: str) -> None:
    topic = f"amo-{guarantee.lower()}"
    create_topic(kafka, topic, 2)
    _fill(kafka, topic, 2, 10)
    config = KafkaSpoutConfig(kafka, topics=[topic], group_id=topic,
                              processing_guarantee=guarantee, offset_commit_period_ms=300)
    runner = cluster.submit_topology(topic, _topology(config), conf={
        "test.dir": str(tmp_path), "test.fail_first": [[0, 1], [1, 8]]})
    everything = {(p, o) for p in range(2) for o in range(10)}
    wait_for(lambda: set(_counts(tmp_path)) == everything, timeout=90,
             message="every record reached the bolt")
    wait_for(lambda: committed(kafka, topic, topic, 2) == [10, 10], timeout=30,
             message="every offset committed")
    later = runner.window + 10  # a replay (retries start at once) would come meanwhile
    wait_for(lambda: runner.window >= later, timeout=30, message="ten more windows")
    cluster.kill_topology(topic)
    assert _counts(tmp_path) == dict.fromkeys(everything, 1), "nothing is replayed"
