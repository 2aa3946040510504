"""Shell components in real topologies on Spark local mode.

pystorm, node, our runtime, and a crashing child that is restarted without disturbing the rest.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sparkstorm import Grouping, Topology
from sparkstorm.multilang import ShellBolt, ShellSpout, python_command
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.multilang.components import AckCountingSpout, UpperBolt, WordSink
from tests.integration.spark.components import NumberSpout, RecordingBolt, read_events

RESOURCES = Path(__file__).resolve().parents[3] / "examples" / "multilang" / "resources"
sys.path.insert(0, str(RESOURCES))
from words import SENTENCES, expected_counts  # noqa: E402

NODE_SENTENCES = [*SENTENCES, "crème brûlée für alle"]
ROOT = str(Path(__file__).resolve().parents[3])


def _stats(cluster: LocalCluster, name: str, component: str) -> dict[str, Any]:
    components: dict[str, Any] = cluster.get_topology_stats(name)["components"]
    return components.get(component, {"acked": 0, "failed": 0, "emitted": 0, "executed": 0})


def _sink_counts(directory: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for event in read_events(directory, "sink"):
        counts[event["word"]] += event["count"]
    return counts


class PystormWordCount(Topology):
    config = {"topology.multilang.resources.dir": str(RESOURCES)}
    sentences = ShellSpout.spec(command=[sys.executable, "words.py", "sentences"],
                                outputs=["n", "sentence"])
    split = ShellBolt.spec(command=[sys.executable, "words.py", "split", "msgpack"],
                           serializer="msgpack", inputs=[sentences], outputs=["word"], par=2)
    count = ShellBolt.spec(command=[sys.executable, "words.py", "count"],
                           inputs={split: Grouping.fields("word")}, outputs=["word", "count"],
                           par=2, config={"topology.tick.tuple.freq.secs": 1})
    sink = WordSink.spec(inputs=[count])


def test_pystorm_spout_bolt_and_batching_bolt_count_exactly(cluster: LocalCluster,
                                                            tmp_path: Path) -> None:
    total = 300
    cluster.submit_topology("pystorm-wc", PystormWordCount, conf={
        "test.dir": str(tmp_path), "sentences.count": total})
    wait_for(lambda: _stats(cluster, "pystorm-wc", "sentences")["acked"] == total, timeout=120,
             message=f"{total} sentences acked")
    expected = expected_counts(total)
    wait_for(lambda: _sink_counts(tmp_path) == expected, timeout=30, message="exact counts")
    summary = cluster.get_topology_stats("pystorm-wc")
    cluster.kill_topology("pystorm-wc")
    assert summary["components"]["sentences"]["failed"] == 0
    assert not summary["last_errors"]


def _node_expected(total: int) -> Counter[str]:
    return Counter(word.upper() for n in range(total)
                   for word in NODE_SENTENCES[n % len(NODE_SENTENCES)].split())


class NodeTopology(Topology):
    config = {"topology.multilang.resources.dir": str(RESOURCES)}
    sentences = ShellSpout.spec(command=["node", "sentences.js"], outputs=["n", "sentence"])
    split = ShellBolt.spec(command=["node", "split.js"], inputs=[sentences], outputs=["word"],
                           par=2)
    upper = ShellBolt.spec(command=[*python_command(UpperBolt, serializer="msgpack"),
                                    "--path", ROOT],
                           serializer="msgpack", inputs=[split], outputs=["word"])
    sink = WordSink.spec(inputs=[upper])


def test_node_components_and_a_python_runtime_bolt(cluster: LocalCluster,
                                                   tmp_path: Path) -> None:
    total = 240
    cluster.submit_topology("node", NodeTopology, conf={
        "test.dir": str(tmp_path), "sentences.count": total})
    wait_for(lambda: _stats(cluster, "node", "sentences")["acked"] == total, timeout=120,
             message=f"{total} sentences acked")
    summary = cluster.get_topology_stats("node")
    cluster.kill_topology("node")
    assert _sink_counts(tmp_path) == _node_expected(total)
    assert summary["components"]["sentences"]["failed"] == 0
    assert not summary["last_errors"]


def test_a_crashing_node_bolt_is_reported_restarted_and_replayed(cluster: LocalCluster,
                                                                 tmp_path: Path) -> None:
    total = 120
    runner = cluster.submit_topology("crash", NodeTopology, conf={
        "test.dir": str(tmp_path), "sentences.count": total, "test.crash_on_sentence": 42,
        "test.crash_marker": str(tmp_path / "crashed.marker"),
        "topology.message.timeout.secs": 10})
    spout_gid = runner.plan.task_executor[runner.plan.component_tasks["sentences"][0]]
    spout_pid = runner.pool.pids()[spout_gid]
    wait_for(lambda: _stats(cluster, "crash", "sentences")["acked"] == total, timeout=120,
             message=f"{total} sentences acked")
    summary = cluster.get_topology_stats("crash")
    pids = runner.pool.pids()
    cluster.kill_topology("crash")

    error = summary["last_errors"]["split"]
    assert "MULTILANG_SUBPROCESS_EXITED" in error["error"]
    assert "split.js crashing on sentence 42" in error["error"], "stderr tail in the report"
    assert error["task"] in runner.plan.component_tasks["split"]
    assert (tmp_path / "crashed.marker").exists()
    assert summary["components"]["sentences"]["failed"] >= 1, "in-flight tuples failed"
    assert runner.stats.restarts >= 1
    assert pids[spout_gid] == spout_pid, "the rest of the topology is untouched"
    counts, expected = _sink_counts(tmp_path), _node_expected(total)
    assert all(counts[word] >= n for word, n in expected.items()), "every word got through"
    assert set(counts) == set(expected)


PROBE = str(Path(__file__).resolve().parents[2] / "unit" / "multilang" / "probes" / "probe.py")


HANG_SECS = 8


class HangingSpoutTopology(Topology):
    hanging = ShellSpout.spec(command=[sys.executable, PROBE, "spout_hang_once"],
                              outputs=["n", "v"],
                              config={"topology.subprocess.timeout.secs": HANG_SECS})
    numbers = NumberSpout.spec(config={"topology.max.spout.pending": 2})
    sink = RecordingBolt.spec(inputs=[numbers, hanging])


def _acks_between(directory: Path, start: float, end: float) -> int:
    return sum(1 for e in read_events(directory, "numbers")
               if e["event"] == "ack" and start <= e["time"] < end)


def test_a_spout_hanging_in_next_does_not_stall_the_topology(cluster: LocalCluster,
                                                             tmp_path: Path) -> None:
    # max.spout.pending 2 keeps the healthy spout acking in every window, so a stalled
    # window (the hanging executor holding its lock) shows as a gap in its acks
    runner = cluster.submit_topology("hang", HangingSpoutTopology, conf={
        "test.dir": str(tmp_path), "test.count": 10**6, "probe.count": 5})
    error = wait_for(lambda: runner.stats.summary()["last_errors"].get("hanging"),
                     timeout=90, message="the hang reported")
    wait_for(lambda: _stats(cluster, "hang", "hanging")["acked"] == 5, timeout=60,
             message="the restarted child's tuples acked")
    numbers_acked = _stats(cluster, "hang", "numbers")["acked"]
    wait_for(lambda: _stats(cluster, "hang", "numbers")["acked"] > numbers_acked,
             timeout=30, message="the healthy spout still acking after the restart")
    restarts = runner.stats.restarts
    cluster.kill_topology("hang")

    assert "MULTILANG_SYNC_TIMEOUT" in error["error"] and "'next'" in error["error"]
    assert error["task"] == runner.plan.component_tasks["hanging"][0]
    assert restarts >= 1
    assert (tmp_path / "hang.marker").exists(), "the first child did hang"
    # the hang began HANG_SECS before the report (the timeout counts from the 'next');
    # the healthy path acked in every 2 seconds of it (a stall would leave all of them
    # empty; 2 s rather than 1 leaves room for a slow window on a busy machine)
    hang_end = error["time"]
    per_two = [_acks_between(tmp_path, hang_end - s - 2, hang_end - s)
               for s in range(1, HANG_SECS - 2, 2)]
    assert all(per_two), f"acks per 2 seconds while the child hung: {per_two}"


class AckCounting(Topology):
    sentences = ShellSpout.spec(command=[*python_command(AckCountingSpout), "--path", ROOT],
                                outputs=["n"])
    sink = WordSink.spec(inputs=[sentences])


def test_a_shell_spout_hears_every_ack_before_it_is_closed(cluster: LocalCluster,
                                                           tmp_path: Path) -> None:
    acks = tmp_path / "acks.txt"
    runner = cluster.submit_topology("ack-counting", AckCounting, conf={
        "test.dir": str(tmp_path), "test.acks.file": str(acks)})
    wait_for(lambda: _stats(cluster, "ack-counting", "sentences")["acked"] >= 40, timeout=120,
             message="40 acked")
    cluster.kill_topology("ack-counting")  # drains: the last acks are sent before close
    acked = runner.stats.summary()["components"]["sentences"]["acked"]
    heard = acks.read_text().split()
    assert len(heard) == len(set(heard)) == acked, "the child heard every ack, once"
