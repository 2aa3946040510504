"""Overlapping windows on real Spark local mode (issue 12 §3).

Window ``w+1``'s job starts while window ``w``'s later stages run; acking stays exact.
``topology.window.overlap`` off, or checkpoints under per-tuple acking, runs one window at a
time; checkpoint reliability keeps the overlap with its checkpoints.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    CheckpointedNumberSpout,
    CheckpointedRecordingBolt,
    NumberSpout,
    PacedNumberSpout,
    PassBolt,
    RecordingBolt,
    SlowPassBolt,
    read_events,
)

COUNT = 300
EARLY_SECONDS = 0.2
"""How much sooner than the window before it ends a window must start to count as overlapped
(far more than the time between a Spark task's end and its job's result in the driver)."""


class ChainTopology(Topology):
    numbers = NumberSpout.spec()
    passing = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs={passing: Grouping.fields("key")}, par=2)


class CheckpointedChainTopology(Topology):
    """ChainTopology whose every task a checkpoint can keep."""

    numbers = CheckpointedNumberSpout.spec()
    passing = PassBolt.spec(inputs=[numbers], par=2)
    sink = CheckpointedRecordingBolt.spec(inputs={passing: Grouping.fields("key")}, par=2)


class OneStageTopology(Topology):
    """Every bolt chained to the spout (``engine.plan.chaining``): one Spark stage."""

    numbers = PacedNumberSpout.spec()
    passing = SlowPassBolt.spec(inputs=[numbers])
    sink = RecordingBolt.spec(inputs=[passing])


def _run(cluster: LocalCluster, tmp_path: Path, name: str, topology: Any = ChainTopology,
         count: int = COUNT, **conf: Any) -> Any:
    """Run ``topology`` until ``count`` numbers are acked; return its driver after the kill."""
    cluster.submit_topology(name, topology,
                            conf={"test.dir": str(tmp_path), "test.count": count, **conf})
    driver = cluster.runners[name]

    def acked() -> int:
        return sum(1 for e in read_events(tmp_path, "numbers") if e["event"] == "ack")

    wait_for(lambda: acked() == count, timeout=90, message="every number acked")
    # a few more windows, so that the windows overlap at least once even on a slow machine
    windows = driver.window
    wait_for(lambda: driver.window > windows + 5, timeout=60, message="five more windows")
    cluster.kill_topology(name)
    events = read_events(tmp_path)
    assert Counter(e["n"] for e in events if e["event"] == "ack") == dict.fromkeys(
        range(count), 1)
    assert not [e for e in events if e["event"] == "fail"]
    sink = Counter(e["values"][0] for e in events if e["event"] == "tuple")
    assert sink == dict.fromkeys(range(count), 1)
    return driver


@pytest.mark.parametrize("fuse", [False, True], ids=["stages", "fused"])
def test_windows_overlap_and_every_tuple_is_acked_once(cluster: LocalCluster,
                                                       tmp_path: Path, fuse: bool) -> None:
    # a period (50 ms) shorter than any job: a window that ended before the next one
    # starts is absorbed first, so only jobs longer than the period overlap
    driver = _run(cluster, tmp_path, f"overlap-{fuse}", **{
        "topology.window.ms": 50, "topology.window.fuse": fuse})
    assert driver.overlapping
    assert driver.placement.fused == fuse
    # stages: its spout stage chains nothing; fused: the spouts say when they handed over
    assert driver.window_size.chained_overlap == fuse
    assert driver.overlapped_windows > 0
    windows = driver.stats.summary()["recent_windows"]
    assert [w["window"] for w in windows] == sorted(w["window"] for w in windows)
    assert all(w["jobs"] for w in windows)  # each chart point still links its Spark job


def test_a_chained_spout_stage_overlaps_once_its_spout_handed_over(
        cluster: LocalCluster, tmp_path: Path) -> None:
    """The whole topology is one stage, whose Spark tasks end with their (slow) chains.

    Window ``w+1`` starts when the spout executor says it served ``w``
    (``engine.driver.hand_over_wait``), while ``w``'s chained bolts still run: without that,
    the next window waited for the task, so it never started before ``w``'s job ended.
    """
    # the chain takes 50 ms a tuple, so a window's chain outlasts its hand-over by far
    driver = _run(cluster, tmp_path, "one-stage", OneStageTopology, count=60, **{
        "topology.window.ms": 20, "test.rate": 100, "test.delay": 0.05})
    assert len(driver._stages) == 1 and driver._stages[0].chained
    assert driver.window_size.chained_overlap  # its cost fit leaves out the wait
    windows = driver.stats.summary()["recent_windows"]
    early = [(w["window"], round(w["started"] + w["seconds"] - after["started"], 3))
             for w, after in zip(windows, windows[1:], strict=False)
             if after["started"] < w["started"] + w["seconds"] - EARLY_SECONDS]
    assert early, f"no window started {EARLY_SECONDS} s before the one before it ended"


def test_with_overlap_off_one_window_runs_at_a_time(cluster: LocalCluster,
                                                    tmp_path: Path) -> None:
    driver = _run(cluster, tmp_path, "serial", **{"topology.window.overlap": False})
    assert not driver.overlapping
    assert driver.overlapped_windows == 0


@pytest.mark.parametrize("reliability", ["acking", "checkpoint"])
def test_checkpoint_reliability_keeps_the_overlap(cluster: LocalCluster, tmp_path: Path,
                                                  reliability: str) -> None:
    """Under checkpoint reliability windows overlap with checkpoints on, exact and committed.

    Each executor serves its windows in order, so its part taken in window ``w`` is at
    ``w``'s cut; the driver's part keeps what window ``w+1`` carried past it
    (``engine.driver.cut_state``). Checkpoints under per-tuple acking run one window at a
    time: a window taking tuples while the one before stalls would start their timeouts
    (``test_stall_timeouts.py``).
    """
    driver = _run(cluster, tmp_path, f"checkpointed-{reliability}", CheckpointedChainTopology,
                  **{"topology.window.ms": 50, "topology.reliability": reliability,
                     "topology.checkpoint.windows": 1,
                     "topology.checkpoint.dir": str(tmp_path / "cp")})
    overlap = reliability == "checkpoint"
    assert driver.overlapping == overlap
    assert (driver.overlapped_windows > 0) == overlap
    assert driver.checkpointing.committed() is not None
    # a checkpoint under acking keeps the verdicts not heard yet; checkpoint reliability
    # has none, and pushes the windows' ends
    assert driver.pushes_verdicts == overlap


def test_under_checkpoint_reliability_max_spout_pending_bounds_the_windows(
        cluster: LocalCluster, tmp_path: Path) -> None:
    """``topology.max.spout.pending`` counts a tuple until the window that took it ends.

    Under checkpoint reliability a spout holds no tuple trees, and the bound counted
    nothing: the first window took all 300 numbers. The driver tells the spouts when each
    window ended (``verdict_push.push_window_end``), so the bound frees room then.
    """
    driver = _run(cluster, tmp_path, "bounded-checkpoint", CheckpointedChainTopology,
                  **{"topology.window.ms": 50, "topology.reliability": "checkpoint",
                     "topology.max.spout.pending": 20,
                     "topology.checkpoint.dir": str(tmp_path / "cp")})
    carried = [w["components"].get("numbers", {}).get("buffered", 0)
               for w in driver.stats.summary()["recent_windows"]]
    assert max(carried) == 20, carried
