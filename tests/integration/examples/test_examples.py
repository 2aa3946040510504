"""Every example runs on Spark local mode and computes what it says."""

from __future__ import annotations

import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster, SpoutHarness
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import FailSentenceOnceBolt, read_events


def _component(cluster: LocalCluster, name: str, component: str) -> dict[str, Any]:
    components: dict[str, Any] = cluster.get_topology_stats(name)["components"]
    return components.get(component, {"acked": 0, "emitted": 0, "executed": 0, "failed": 0})


def test_wordcount_counts_every_word_exactly_once(cluster: LocalCluster) -> None:
    from wordcount import WordCount

    cluster.submit_topology("wordcount", WordCount, conf={"wordcount.sentences": 500})
    wait_for(lambda: _component(cluster, "wordcount", "sentences")["acked"] == 500,
             timeout=90, message="500 sentences acked")
    stats = cluster.get_topology_stats("wordcount")["components"]
    cluster.kill_topology("wordcount")
    words = stats["split"]["emitted"]
    assert stats["split"]["executed"] == 500
    assert stats["count"]["executed"] == words
    assert 500 * 5 <= words <= 500 * 12
    assert stats["sentences"]["failed"] == 0


def _new_sentences_in(conf: dict[str, Any], seconds: float) -> tuple[int, float]:
    """Sentences the word count spout emitted in ``seconds`` of calls, and the time taken."""
    from wordcount import SentenceSpout

    with SpoutHarness(SentenceSpout, conf=conf) as spout:
        emitted, started = 0, time.monotonic()
        while time.monotonic() - started < seconds:
            emitted += len(spout.next_tuple().emits)
        return emitted, time.monotonic() - started


def test_wordcount_spout_offers_new_sentences_at_its_rate() -> None:
    rate = 200.0
    paced, seconds = _new_sentences_in({"wordcount.rate": rate}, 0.3)
    unpaced, _ = _new_sentences_in({}, 0.3)

    # sentence k goes out once k - 1 < elapsed * rate + 1 (the first at once): at most
    # rate * seconds + 2, reached when the last call comes just after a due time (seen: 62
    # in 0.3001 s at 200/s)
    assert 0.5 * rate * 0.3 <= paced < rate * seconds + 2
    assert unpaced > 10 * paced  # without a rate it emits as fast as it is called


class _Emits:
    """Stands in for the collector: keeps what a spout emits, with its message ids."""

    def __init__(self) -> None:
        self.tuples: list[tuple[list[Any], Any]] = []

    def emit(self, values: Any, stream: Any, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> None:
        self.tuples.append((list(values), tup_id))


def test_wordcount_spout_replays_failed_sentences_until_each_is_acked_once(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    from wordcount import SentenceSpout, SplitBolt

    class FailingWordCount(Topology):
        sentences = SentenceSpout.spec()
        gate = FailSentenceOnceBolt.spec(inputs={sentences: Grouping.fields("sentence")},
                                         par=2)
        split = SplitBolt.spec(inputs=[gate], par=2)

    limit, modulus = 200, 4
    runner = cluster.submit_topology("wordcount-replay", FailingWordCount, conf={
        "wordcount.sentences": limit, "test.dir": str(tmp_path), "test.modulus": modulus})
    # the spout's sentences are a function of its task id: replay them here to map ids
    task = runner.plan.component_tasks["sentences"][0]
    shadow, emits = SentenceSpout(), _Emits()
    shadow._collector = emits
    shadow.initialize({"wordcount.sentences": limit}, {"taskid": task})
    for _ in range(limit + 1):
        shadow.next_tuple()
    sentence_of = {tup_id: values[0] for values, tup_id in emits.tuples}
    assert sorted(sentence_of) == list(range(1, limit + 1))
    assert len(set(sentence_of.values())) == limit, "sentences must be distinct to map ids"
    doomed = {i for i, s in sentence_of.items() if zlib.crc32(s.encode()) % modulus == 0}
    assert doomed, "choose a modulus that fails some sentences"

    def spout() -> dict[str, Any]:
        return _component(cluster, "wordcount-replay", "sentences")

    wait_for(lambda: spout()["acked"] == limit, timeout=60, message="every sentence acked")
    later = runner.window + 5  # a double ack would show up within a few more windows
    wait_for(lambda: runner.window >= later, timeout=30, message="five more windows")
    stats = cluster.get_topology_stats("wordcount-replay")["components"]
    cluster.kill_topology("wordcount-replay")

    events = read_events(tmp_path, "gate")
    failed = Counter(e["sentence"] for e in events if e["event"] == "failed")
    passed = Counter(e["sentence"] for e in events if e["event"] == "passed")
    failed_ids = {i for i, s in sentence_of.items() if s in failed}
    assert failed_ids == doomed and max(failed.values()) == 1
    # each failed id came back from the spout's fail(), and every id got through once
    assert passed == Counter(sentence_of.values()), "each sentence must pass exactly once"
    sentences = stats["sentences"]
    assert sentences["acked"] == limit, "an id was acked twice (or never)"
    assert sentences["failed"] == len(doomed) > 0
    assert sentences["failures_by_cause"] == {"explicit": len(doomed), "error": 0,
                                              "timeout": 0, "crash": 0}
    assert sentences["emitted"] == limit + len(doomed), "exactly the failed ids replayed"
    assert stats["gate"]["executed"] == limit + len(doomed)
    assert stats["split"]["executed"] == limit
    assert stats["split"]["emitted"] == sum(len(s.split()) for s in sentence_of.values())


def test_exclamation_passes_every_word_through_both_bolts(cluster: LocalCluster) -> None:
    from exclamation import ExclamationTopology

    cluster.submit_topology("exclamation", ExclamationTopology,
                            conf={"exclamation.count": 100})
    wait_for(lambda: _component(cluster, "exclamation", "word")["acked"] == 100,
             timeout=90, message="100 words acked")
    stats = cluster.get_topology_stats("exclamation")["components"]
    cluster.kill_topology("exclamation")
    assert stats["exclaim1"]["executed"] == stats["exclaim2"]["executed"] == 100
    assert stats["exclaim2"]["emitted"] == 100


def test_rolling_top_words_ranks_the_most_frequent_word_first(cluster: LocalCluster) -> None:
    from rolling_top_words import RollingTopWords

    runner = cluster.submit_topology("rolling", RollingTopWords, conf={
        "topology.tick.tuple.freq.secs": 1, "topology.max.spout.pending": 500})
    gid = runner.plan.executors[runner.plan.task_executor[
        runner.plan.component_tasks["total"][0]]].gid

    def ranked() -> bool:
        return "top words: [('storm'" in runner.pool.log_tail(gid, lines=200)

    wait_for(ranked, timeout=90, message="a ranking with 'storm' first")
    wait_for(lambda: _component(cluster, "rolling", "total")["emitted"] >= 1, timeout=30,
             message="statistics caught up")
    cluster.kill_topology("rolling")
    assert not cluster.runners


@pytest.mark.parametrize("jobs", [100])
def test_direct_and_all_groupings_deliver_as_declared(cluster: LocalCluster, jobs: int) -> None:
    from direct_and_all import DirectAndAll

    runner = cluster.submit_topology("direct", DirectAndAll, conf={"jobs.count": jobs})
    wait_for(lambda: _component(cluster, "direct", "jobs")["acked"] == jobs,
             timeout=90, message="all jobs acked")
    summary = cluster.get_topology_stats("direct")
    cluster.kill_topology("direct")
    stats = summary["components"]
    workers = len(runner.plan.component_tasks["worker"])
    assert stats["worker"]["executed"] == jobs + (jobs // 10) * workers
    assert stats["worker"]["emitted"] == jobs
    assert not summary["last_errors"], "a job reached the wrong task"
