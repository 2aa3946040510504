"""The Kafka → parse → stateful count → files example, with kill -9 mid-run (issue 33 §4).

``examples/kafka_sales_to_files.py`` on Spark local mode against a real broker (tansu), with
checkpoints every 2 windows: the spout's executor and then a counting bolt's executor are
killed with -9 while records flow. In the end the published files hold every sale exactly
once, each product's counts in them are exactly 1..n, the counts in the newest committed
checkpoint are the sales produced, every offset is committed in Kafka, and the records that
are bad data were skipped with their codes shown as the components' errors.
"""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sparkstorm.checkpoint import CheckpointError
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.engine.driver.checkpoints import WindowCheckpoints
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, part_name
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.kafka_broker import committed, create_topic, produce, tansu_broker

pytestmark = [pytest.mark.spark, pytest.mark.timeout(200)]

TOPIC = "sales"
GROUP = "sales-counts"  # the example's default consumer group
PARTITIONS = 3
PRODUCTS = ("apple", "pear", "plum", "fig", "kiwi")
SALES = 600
BAD_VALUES = ["not json {", '{"sale": "no product"}', "[1, 2]"]


@pytest.fixture
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with tansu_broker(tmp_path_factory.mktemp("tansu")) as servers:
        yield servers


def _sales() -> list[tuple[int, str, str]]:
    """``(partition, key, value)`` of every sale, the bad values spread among them."""
    records = [(i % PARTITIONS, f"s-{i}",
                json.dumps({"sale": f"s-{i}", "product": PRODUCTS[(i * 7) % len(PRODUCTS)]}))
               for i in range(SALES)]
    for n, bad in enumerate(BAD_VALUES):
        records.insert((n + 1) * SALES // 4, (n % PARTITIONS, f"bad-{n}", bad))
    return records


def _published(folder: Path) -> list[dict[str, object]]:
    """The records of the published JSON-lines files (pending ones are hidden)."""
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def _pending(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*.pending"))


class _Cut:
    """The newest committed checkpoint: the spout's next offsets and the bolt's counts."""

    def __init__(self, window: int | None, points: dict[int, int],
                 counts: dict[str, int]) -> None:
        self.window, self.points, self.counts = window, points, counts


def _read_cut(runner: TopologyDriver) -> _Cut:
    assert isinstance(runner.checkpointing, WindowCheckpoints)
    store = runner.checkpointing.store
    window = store.latest_committed()
    points: dict[int, int] = {}
    counts: Counter[str] = Counter()
    if window is None:
        return _Cut(None, points, counts)
    for executor in runner.plan.executors:
        if executor.component not in ("sales", "count"):
            continue
        part = ExecutorPart.decode(store.read_part(window, part_name(executor.gid)))
        for blob in part.tasks.values():
            data = read_snapshot(blob)["data"]
            if executor.component == "sales":
                for (_, partition), offsets in data["parts"].items():
                    points[partition] = offsets.commit_point()
            else:
                counts.update(data)
    return _Cut(window, points, dict(counts))


class _Watch:
    """Polls the run; each poll checks Kafka's offsets against the committed checkpoint."""

    def __init__(self, kafka: str, runner: TopologyDriver) -> None:
        self.kafka, self.runner = kafka, runner

    def cut(self) -> _Cut:
        # Kafka first: an offset committed then was covered by a checkpoint committed then
        in_kafka = committed(self.kafka, GROUP, TOPIC, PARTITIONS)
        for attempt in range(10):
            try:
                cut = _read_cut(self.runner)
                break
            except CheckpointError:  # purged under our feet by a newer commit
                if attempt == 9:
                    raise
        for partition, offset in enumerate(in_kafka):
            if offset >= 0:
                assert offset <= cut.points.get(partition, -1), \
                    f"partition {partition}: Kafka at {offset}, checkpoint at {cut.points}"
        return cut

    def until(self, condition: Callable[[_Cut], bool], message: str,
              timeout: float = 90) -> _Cut:
        def met() -> _Cut | None:
            cut = self.cut()
            return cut if condition(cut) else None
        found: _Cut = wait_for(met, timeout, message=message, interval=0.3)
        return found


def _kill(runner: TopologyDriver, component: str) -> None:
    gid = next(e.gid for e in runner.plan.executors if e.component == component)
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)


def test_killed_spout_and_bolt_leave_every_sale_once_in_files_and_state(
        cluster: LocalCluster, kafka: str, tmp_path: Path) -> None:
    from kafka_sales_to_files import sales_counts

    create_topic(kafka, TOPIC, PARTITIONS)
    records = _sales()
    produce(kafka, TOPIC, records)
    expected = Counter(PRODUCTS[(i * 7) % len(PRODUCTS)] for i in range(SALES))
    out = tmp_path / "out"
    runner = cluster.submit_topology(TOPIC, sales_counts(kafka, TOPIC, str(out), par=1), conf={
        "topology.checkpoint.dir": str(tmp_path / "checkpoints"),
        "topology.max.spout.pending": 50})

    watch = _Watch(kafka, runner)
    first = watch.until(lambda c: 0 < sum(c.counts.values()) < SALES, "a checkpoint mid-run")
    _kill(runner, "sales")
    watch.until(lambda c: (c.window or 0) > (first.window or 0) and runner.stats.rollbacks >= 1
                and sum(c.counts.values()) < SALES, "a checkpoint after the rollback, mid-run")
    _kill(runner, "count")
    watch.until(lambda c: c.counts == dict(expected), "every sale counted once in the state",
                120)
    wait_for(lambda: len(_published(out)) >= SALES and not _pending(out), 30,
             message="every sale published, nothing pending")
    assert runner.stats.rollbacks >= 2
    rows = _published(out)
    twice = [sale for sale, n in Counter(r["sale"] for r in rows).items() if n > 1]
    assert not twice, f"sales written twice: {twice[:20]}"
    assert {r["sale"] for r in rows} == {f"s-{i}" for i in range(SALES)}
    for product, n in expected.items():  # the files and the state agree, count by count
        assert sorted(r["count"] for r in rows if r["product"] == product) == \
            list(range(1, n + 1)), product
    per_partition = Counter(partition for partition, _, _ in records)
    wait_for(lambda: committed(kafka, GROUP, TOPIC, PARTITIONS) ==
             [per_partition[p] for p in range(PARTITIONS)], 30,
             message="every offset committed in Kafka, the bad records' too")
    # bad data: skipped, shown with its code as the component's error, never stalling
    errors = runner.stats.last_errors
    assert "KAFKA_RECORD_UNTRANSLATABLE" in errors["sales"]["error"], errors.get("sales")
    assert "SALE_UNPARSABLE" in errors["parse"]["error"], errors.get("parse")
    cluster.kill_topology(TOPIC)
