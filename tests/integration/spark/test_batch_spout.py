"""BatchSpout on real Spark local mode: a columnar spout feeding batch and per-tuple bolts.

Every batch id is acked exactly once, so is every sentence in them; a batch that a bolt
fails is failed once, replayed with the same id, and counted once; the word counts are exact.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.batch_components import (
    ArrowCount,
    ArrowSplit,
    SentenceBatchSpout,
    TupleCount,
    expected_counts,
)
from tests.integration.spark.components import read_events


class ColumnarWordCount(Topology):
    sentences = SentenceBatchSpout.spec()
    split = ArrowSplit.spec(inputs=[sentences], par=2)
    count = ArrowCount.spec(inputs={split: Grouping.fields("word")}, par=2)


class ColumnarOneSplit(Topology):
    """One split task: a batch that fails there failed before any of its rows was counted.

    (With two, the other task's half of a failed batch is counted, and again on replay: a
    batch is replayed whole, at least once, as a Storm tuple tree is.)
    """

    sentences = SentenceBatchSpout.spec()
    split = ArrowSplit.spec(inputs=[sentences])
    count = ArrowCount.spec(inputs={split: Grouping.fields("word")}, par=2)


class ColumnarToPerTuple(Topology):
    """The spout feeds a per-tuple consumer too: its rows get an edge each."""

    sentences = SentenceBatchSpout.spec()
    split = ArrowSplit.spec(inputs=[sentences], par=2)
    count = ArrowCount.spec(inputs={split: Grouping.fields("word")}, par=2)
    sentence_words = TupleCount.spec(inputs=[sentences])


def _events(directory: Path, kind: str) -> list[dict[str, object]]:
    return [e for e in read_events(directory, "sentences") if e["event"] == kind]


def _acked_numbers(directory: Path) -> Counter[int]:
    return Counter(n for e in _events(directory, "batch_ack") for n in e["ns"])  # type: ignore[attr-defined]


def _counted(directory: Path, component: str = "count") -> Counter[str]:
    total: Counter[str] = Counter()
    for event in read_events(directory, component):
        total.update(event["delta"])
    return total


def _run_to_the_end(cluster: LocalCluster, name: str, topology: type[Topology],
                    directory: Path, count: int, **conf: object) -> dict[str, object]:
    runner = cluster.submit_topology(name, topology, conf={
        "test.dir": str(directory), "test.count": count, **conf})
    wait_for(lambda: len(_acked_numbers(directory)) == count, timeout=120,
             message="every sentence acked")
    # the statistics count rows, not batches; they reach the driver with the window
    wait_for(lambda: runner.stats.summary()["components"]["sentences"].get("acked") == count,
             timeout=60, message="the spout's acked statistic")
    summary: dict[str, object] = runner.stats.summary()
    cluster.kill_topology(name)
    return summary


def test_every_batch_and_sentence_is_acked_once_and_the_counts_are_exact(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 500
    summary = _run_to_the_end(cluster, "colspout-wc", ColumnarWordCount, tmp_path, count)

    batches = Counter(e["batch"] for e in _events(tmp_path, "batch_ack"))
    assert max(batches.values()) == 1 and len(batches) >= count // 40
    acked = _acked_numbers(tmp_path)
    assert set(acked) == set(range(count)) and max(acked.values()) == 1
    assert not _events(tmp_path, "batch_fail")
    assert _counted(tmp_path) == expected_counts(count)
    assert summary["last_errors"] == {}
    components = summary["components"]
    assert isinstance(components, dict)
    assert components["sentences"]["emitted"] == count


def test_a_failed_batch_is_replayed_with_its_id_and_counted_once(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 300
    _run_to_the_end(cluster, "colspout-raise", ColumnarOneSplit, tmp_path, count,
                    **{"test.raise_on": 150})

    (raised,) = [e for e in read_events(tmp_path, "split") if e["event"] == "raised"]
    failed = _events(tmp_path, "batch_fail")
    failed_numbers = {n for e in failed for n in e["ns"]}  # type: ignore[attr-defined]
    assert 150 in failed_numbers and set(raised["ns"]) <= failed_numbers
    acked_batches = Counter(e["batch"] for e in _events(tmp_path, "batch_ack"))
    assert {e["batch"] for e in failed} <= set(acked_batches), "replayed with the same id"
    assert max(acked_batches.values()) == 1
    acked = _acked_numbers(tmp_path)
    assert set(acked) == set(range(count)) and max(acked.values()) == 1
    assert _counted(tmp_path) == expected_counts(count)  # raised before emitting


def test_per_tuple_consumers_of_a_batch_spout_ack_row_by_row(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    count = 200
    _run_to_the_end(cluster, "colspout-mixed", ColumnarToPerTuple, tmp_path, count)

    assert not _events(tmp_path, "batch_fail")
    assert _counted(tmp_path) == expected_counts(count)
    sentences = _counted(tmp_path, "sentence_words")
    assert sum(sentences.values()) == count  # one tuple per sentence row
