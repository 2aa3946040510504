"""Every example runs on Spark local mode and computes what it says."""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for


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
