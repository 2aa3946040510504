"""A fused window (``topology.window.fuse``): one Spark task calls a level's executors at once.

Counts and stage shape are checked with the chaining tests (``test_chaining.py``); here, that
the one task does not call the executors of a level one after another, which would leave
counts exact and halve a level's throughput.
"""

from __future__ import annotations

from pathlib import Path

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, TimedSlowBolt, read_events

COUNT = 40
DELAY = 0.05


class TwoSlowExecutorsTopology(Topology):
    """numbers (1) -fields-> slow (2): each executor of ``slow`` takes 50 ms a tuple."""

    numbers = NumberSpout.spec(par=1)
    slow = TimedSlowBolt.spec(inputs={numbers: Grouping.fields("key")}, par=2)


def test_a_fused_window_calls_the_executors_of_a_level_at_once(
        cluster: LocalCluster, tmp_path: Path) -> None:
    runner = cluster.submit_topology("fused-level", TwoSlowExecutorsTopology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT, "test.delay": DELAY,
        # windows one after another: only the one task may run both executors at once
        "topology.window.overlap": False, "topology.window.fuse": True})
    try:
        assert runner.placement.fused
        wait_for(lambda: len({e["n"] for e in read_events(tmp_path, "slow")}) == COUNT,
                 timeout=120, message="every number processed")
    finally:
        cluster.kill_topology("fused-level")

    executor_of = {t: e.gid for e in runner.plan.executors for t in e.tasks}
    spans: dict[int, list[tuple[float, float]]] = {}
    for event in read_events(tmp_path, "slow"):
        spans.setdefault(executor_of[event["task"]], []).append(
            (event["began"], event["time"]))
    assert len(spans) == 2, f"both executors got numbers: {spans.keys()}"
    first, second = spans.values()
    assert any(a_began < b_ended and b_began < a_ended
               for a_began, a_ended in first for b_began, b_ended in second), \
        "the two executors of one level never processed at the same time"
