"""BatchBolt on real Spark local mode: a columnar word count, acking, failure and replay."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.batch_components import (
    ArrowCount,
    ArrowSplit,
    ListsSplit,
    SentenceSpout,
    TupleCount,
    expected_counts,
)
from tests.integration.spark.components import read_events


class ArrowWordCount(Topology):
    sentences = SentenceSpout.spec()
    split = ArrowSplit.spec(inputs=[sentences], par=2)
    count = ArrowCount.spec(inputs={split: Grouping.fields("word")}, par=2)


class ListsWordCount(Topology):
    sentences = SentenceSpout.spec()
    split = ListsSplit.spec(inputs=[sentences])
    count = ArrowCount.spec(inputs={split: Grouping.fields("word")}, par=2)


class MixedConsumers(Topology):
    """One batch bolt feeding a batch consumer (Arrow pieces) and a per-tuple one (rows)."""

    sentences = SentenceSpout.spec()
    split = ArrowSplit.spec(inputs=[sentences], par=2)
    count = ArrowCount.spec(inputs={split: Grouping.fields("word")}, par=2)
    tcount = TupleCount.spec(inputs={split: Grouping.fields("word")}, par=2)


def _acked(directory: Path) -> Counter[int]:
    return Counter(e["n"] for e in read_events(directory, "sentences") if e["event"] == "ack")


def _counted(directory: Path, component: str = "count") -> Counter[str]:
    total: Counter[str] = Counter()
    for event in read_events(directory, component):
        total.update(event["delta"])
    return total


def _run_to_the_end(cluster: LocalCluster, name: str, topology: type[Topology],
                    directory: Path, count: int, **conf: object) -> dict[str, object]:
    runner = cluster.submit_topology(name, topology, conf={
        "test.dir": str(directory), "test.count": count, **conf})
    wait_for(lambda: len(_acked(directory)) == count, timeout=120, message="all acked")
    summary: dict[str, object] = runner.stats.summary()
    cluster.kill_topology(name)
    return summary


def test_batch_word_count_is_exact_and_every_id_is_acked_once(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 500
    summary = _run_to_the_end(cluster, "batch-wc", ArrowWordCount, tmp_path, count)

    acked = _acked(tmp_path)
    assert set(acked) == set(range(count)) and max(acked.values()) == 1
    assert not [e for e in read_events(tmp_path, "sentences") if e["event"] == "fail"]
    assert _counted(tmp_path) == expected_counts(count)
    # each count task saw whole words only: a word is counted by one task (fields grouping)
    tasks_of: dict[str, set[int]] = {}
    for event in read_events(tmp_path, "count"):
        for word in event["delta"]:
            tasks_of.setdefault(word, set()).add(event["task"])
    assert all(len(tasks) == 1 for tasks in tasks_of.values())
    assert summary["last_errors"] == {}


def test_a_raising_process_batch_fails_its_trees_and_they_replay(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 300
    summary = _run_to_the_end(cluster, "batch-raise", ArrowWordCount, tmp_path, count,
                              **{"test.raise_on": 150})

    (raised,) = [e for e in read_events(tmp_path, "split") if e["event"] == "raised"]
    failed = [e["n"] for e in read_events(tmp_path, "sentences") if e["event"] == "fail"]
    assert set(raised["ns"]) <= set(failed), "every tree of the raising batch must fail"
    acked = _acked(tmp_path)
    assert set(acked) == set(range(count)) and max(acked.values()) == 1
    # it raised before emitting, so the replayed sentences are counted once
    assert _counted(tmp_path) == expected_counts(count)
    errors = summary["last_errors"]
    assert isinstance(errors, dict)
    assert "ValueError: boom in a batch of" in errors["split"]["error"]
    components = summary["components"]
    assert isinstance(components, dict)
    causes = components["sentences"]["failures_by_cause"]
    assert causes["error"] == len(failed) and causes["timeout"] == 0


def test_the_lists_format_counts_the_same(cluster: LocalCluster, tmp_path: Path) -> None:
    count = 200
    _run_to_the_end(cluster, "batch-lists", ListsWordCount, tmp_path, count)

    formats = {e["type"] for e in read_events(tmp_path, "split") if e["event"] == "format"}
    assert formats == {"dict"}
    assert _counted(tmp_path) == expected_counts(count)
    assert max(_acked(tmp_path).values()) == 1


def test_a_batch_bolt_feeds_batch_and_per_tuple_consumers_alike(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 400
    _run_to_the_end(cluster, "batch-mixed", MixedConsumers, tmp_path, count)

    acked = _acked(tmp_path)
    assert set(acked) == set(range(count)) and max(acked.values()) == 1
    assert not [e for e in read_events(tmp_path, "sentences") if e["event"] == "fail"]
    assert _counted(tmp_path, "count") == expected_counts(count)
    assert _counted(tmp_path, "tcount") == expected_counts(count)
    # fields grouping: the same word at the same task index on both paths
    for component in ("count", "tcount"):
        tasks_of: dict[str, set[int]] = {}
        for event in read_events(tmp_path, component):
            for word in event["delta"]:
                tasks_of.setdefault(word, set()).add(event["task"])
        assert all(len(tasks) == 1 for tasks in tasks_of.values())
