"""Window placement's RDDs on a real Spark session (``engine.spark.placement``).

Local mode has one host, so placement is off there; these tests switch it on against
the local session (its one host stands for an executor host) to run the located spout
stage and the anchor unions through real executor processes: every id acked once, the
anchors never reach a bolt, the RDDs are built once, and every call is counted host-local.
The across-hosts placement itself is tested on the test hosts (``integration/hosts``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.engine.spark import placement
from sparkstorm.engine.spark.placement import Placement, located_rdd
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, PassBolt, RecordingBolt, read_events

COUNT = 300


class TwoLevels(Topology):
    numbers = NumberSpout.spec(par=2)  # two tasks: each emits every number
    first = PassBolt.spec(inputs={numbers: Grouping.fields("key")}, par=2)
    second = RecordingBolt.spec(inputs=[first], par=3)


def test_a_located_rdd_prefers_each_partitions_host(spark: Any) -> None:
    sc = spark.sparkContext
    rdd = located_rdd(sc, ["a", "b", "c"], ("10.0.0.2", None, "10.0.0.3"))
    jrdd = rdd._jrdd.rdd()
    preferred = [str(jrdd.preferredLocations(p)) for p in jrdd.partitions()]
    assert preferred == ["List(10.0.0.2)", "List()", "List(10.0.0.3)"]
    assert rdd.glom().collect() == [["a"], ["b"], ["c"]]


def test_local_mode_places_nothing(spark: Any) -> None:
    assert Placement(spark.sparkContext.master).for_window(spark.sparkContext, []) is None


def test_placed_windows_deliver_everything_once_with_rdds_built_once(
        spark: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # the executors advertise loopback in local mode: let it stand for a live Spark host
    monkeypatch.setattr(placement, "live_executor_hosts", lambda sc: {"127.0.0.1"})
    from tests.integration.spark.conftest import TEST_CONF

    with LocalCluster(conf=dict(TEST_CONF), spark=spark) as cluster:
        runner = cluster.submit_topology("placed", TwoLevels, conf={
            "test.dir": str(tmp_path), "test.count": COUNT})
        runner.placement.enabled = True
        wait_for(lambda: sum(e["event"] == "ack" for e in read_events(tmp_path, "numbers"))
                 >= 2 * COUNT, timeout=120, message="every id acked")
        stats = cluster.get_topology_stats("placed")
        builds = runner.placement.builds
        cluster.kill_topology("placed")
    acked = Counter(e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "ack")
    assert acked == dict.fromkeys(range(COUNT), 2)
    received = Counter(e["values"][0] for e in read_events(tmp_path, "second")
                       if e["event"] == "tuple")
    assert received == dict.fromkeys(range(COUNT), 2), "anchors or duplicates reached a bolt"
    assert builds == 1, "the located RDDs are built once per placement"
    locality = stats["locality"]
    assert locality["calls"] == 7 * stats["windows"]  # 2 spouts and 5 bolts a window
    assert locality["host_local_share"] == 1.0
    assert locality["crossed_bytes"] == 0
