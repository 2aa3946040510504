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
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.kafka_broker import create_topic, produce, tansu_broker
from tests.integration.spark.kafka_cuts import CutWatch, kill_executor

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


def _watch(kafka: str, runner: TopologyDriver) -> CutWatch:
    return CutWatch(kafka, runner, GROUP, TOPIC, PARTITIONS, spout="sales", counter="count")


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

    watch = _watch(kafka, runner)
    first = watch.until(lambda c: 0 < sum(c.counts.values()) < SALES, "a checkpoint mid-run")
    kill_executor(runner, "sales")
    watch.until(lambda c: (c.window or 0) > (first.window or 0) and runner.stats.rollbacks >= 1
                and sum(c.counts.values()) < SALES, "a checkpoint after the rollback, mid-run")
    kill_executor(runner, "count")
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
    wait_for(lambda: watch.committed_offsets() ==
             [per_partition[p] for p in range(PARTITIONS)], 30,
             message="every offset committed in Kafka, the bad records' too")
    # bad data: skipped, shown with its code as the component's error, never stalling
    errors = runner.stats.last_errors
    assert "KAFKA_RECORD_UNTRANSLATABLE" in errors["sales"]["error"], errors.get("sales")
    assert "SALE_UNPARSABLE" in errors["parse"]["error"], errors.get("parse")
    cluster.kill_topology(TOPIC)
