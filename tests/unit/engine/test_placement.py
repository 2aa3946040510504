"""Which hosts a window's partitions prefer, and when the placement is built again.

No JVM here: the live Spark executor hosts and the RDD building are stand-ins; the RDDs
themselves run in ``tests/integration/spark/test_placement.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.engine.driver.topology_stats import TopologyStats, WindowRecord
from sparkstorm.engine.spark import placement
from sparkstorm.engine.spark.locality import CallLocality
from sparkstorm.engine.spark.placement import Placement
from sparkstorm.engine.spark.stage import StageInfo
from sparkstorm.engine.wire.endpoint import Endpoint


def _stages(hosts: dict[int, str]) -> list[StageInfo]:
    endpoints = {gid: Endpoint(f"/nowhere/e{gid}.sock", host, 7000 + gid)
                 for gid, host in hosts.items()}
    levels = {0: 0, 1: 1, 2: 1}
    return [StageInfo(level, tuple(g for g in hosts if levels[g] == level), levels, endpoints,
                      "token", 1.0, 1.0, {}) for level in (0, 1)]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> None:
    """A placement is its host key; live Spark executors on hosts B and C."""
    monkeypatch.setattr(placement, "_build", lambda sc, stages, key: key)
    monkeypatch.setattr(placement, "live_executor_hosts",
                        lambda sc: {"10.0.0.2", "10.0.0.3"})


def test_partitions_prefer_their_executors_live_host(built: None) -> None:
    stages = _stages({0: "10.0.0.2", 1: "10.0.0.2", 2: "10.0.0.3"})
    chosen = Placement("spark://10.0.0.1:7077").for_window(None, stages)
    assert chosen == (("10.0.0.2",), ("10.0.0.2", "10.0.0.3"))


def test_a_placement_is_reused_until_a_host_vanishes(built: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    stages = _stages({0: "10.0.0.2", 1: "10.0.0.2", 2: "10.0.0.3"})
    placer = Placement("spark://10.0.0.1:7077")
    for _ in range(3):
        placer.for_window(None, stages)
    assert placer.builds == 1
    monkeypatch.setattr(placement, "live_executor_hosts", lambda sc: {"10.0.0.2"})
    chosen = placer.for_window(None, stages)
    assert chosen == (("10.0.0.2",), ("10.0.0.2", None)), "no preference for a dead host"
    assert placer.builds == 2


def test_no_live_host_of_any_executor_places_nothing(built: None) -> None:
    stages = _stages({0: "10.0.0.9", 1: "10.0.0.9", 2: "10.0.0.9"})
    assert Placement("spark://10.0.0.1:7077").for_window(None, stages) is None


def test_local_master_places_nothing_and_asks_spark_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def never(sc: Any) -> set[str]:
        msg = "local mode must not ask for executors"
        raise AssertionError(msg)

    monkeypatch.setattr(placement, "live_executor_hosts", never)
    assert Placement("local[2]").for_window(None, _stages({0: "127.0.0.1"})) is None


def test_topology_stats_carry_locality_per_window_and_in_total() -> None:
    stats = TopologyStats(10)
    for local, crossed in ((True, 0), (False, 400)):
        calls = CallLocality(tuples=100)
        calls.add((True, 0))
        calls.add((local, crossed))
        stats.record(WindowRecord(len(stats.recent), 0.0, 0.1, {}, locality=calls))
    summary = stats.summary()
    assert summary["locality"] == {"calls": 4, "host_local_calls": 3, "host_local_share": 0.75,
                                   "crossed_bytes": 400, "tuples": 200,
                                   "crossed_bytes_per_tuple": 2.0, "refreshed_calls": 0,
                                   "replaced_calls": 0}
    shares = [w["locality"]["host_local_share"] for w in summary["recent_windows"]]
    assert shares == [1.0, 0.5]


def test_a_host_name_matches_the_address_spark_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placement, "_build", lambda sc, stages, key: key)
    monkeypatch.setattr(placement, "live_executor_hosts", lambda sc: {"127.0.0.1"})
    chosen = Placement("spark://10.0.0.1:7077").for_window(None, _stages({0: "localhost"}))
    assert chosen == (("127.0.0.1",), ())


def test_a_placement_is_built_again_when_the_stages_change_under_the_same_hosts(
        built: None) -> None:
    placer = Placement("spark://10.0.0.1:7077")
    placer.for_window(None, _stages({0: "10.0.0.2", 1: "10.0.0.2", 2: "10.0.0.3"}))
    endpoints = {gid: Endpoint(f"/nowhere/e{gid}.sock", host, 7000 + gid)
                 for gid, host in {0: "10.0.0.2", 2: "10.0.0.2", 3: "10.0.0.3"}.items()}
    levels = {0: 0, 2: 1, 3: 1}  # a replan renumbered the second stage's executors
    regrouped = [StageInfo(level, tuple(g for g in levels if levels[g] == level), levels,
                           endpoints, "token", 1.0, 1.0, {}) for level in (0, 1)]
    chosen = placer.for_window(None, regrouped)
    assert chosen == (("10.0.0.2",), ("10.0.0.2", "10.0.0.3")), "the same hosts"
    assert placer.builds == 2, "anchors of the old gids would feed the new stages"
