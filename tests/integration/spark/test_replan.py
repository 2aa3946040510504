"""``rebalance -e`` in place on Spark local mode (``engine.plan.regroup``), through LocalCluster.

With checkpoints, the stateful word count of ``test_checkpoints`` is regrouped down and up
and still ends with exact counts in its committed checkpoint.

A paced spout feeds a relay (two executors) chained to a sink (two executors). The relay
goes to one executor and back to two while the stream runs. The spout's and the sink's
executor processes go on throughout (their pids in the recorded events and the pool do not
change); the relay's tasks are regrouped; every id is acked exactly once and the sinks saw
every one; the statistics show the new executor counts.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Topology
from sparkstorm.checkpoint import CheckpointError
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.engine.driver.checkpoints import WindowCheckpoints
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, part_name
from sparkstorm.engine.plan.regroup import executor_counts
from sparkstorm.errors import EngineError
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    PacedNumberSpout,
    PassBolt,
    RecordingBolt,
    read_events,
)
from tests.integration.spark.test_checkpoints import COUNT as CHECKPOINTED_COUNT
from tests.integration.spark.test_checkpoints import EXPECTED as CHECKPOINTED_EXPECTED
from tests.integration.spark.test_checkpoints import (
    _no_ack_twice,
    _wait_for_first_commit,
)
from tests.integration.spark.test_checkpoints import _run as _run_checkpointed

pytestmark = pytest.mark.timeout(480)

COUNT = 1500
RATE = 150.0
"""Ids per second: ten seconds of stream, so both rebalances happen mid-stream."""


class RelayTopology(Topology):
    numbers = PacedNumberSpout.spec()
    relay = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[relay], par=2)


def _acked(folder: Path) -> Counter[int]:
    return Counter(e["n"] for e in read_events(folder, "numbers") if e["event"] == "ack")


def _pids(runner: TopologyDriver, component: str) -> dict[tuple[int, ...], int]:
    """Each executor of ``component``: its tasks -> its process id."""
    pids = runner.pool.pids()
    return {e.tasks: pids[e.gid] for e in runner.plan.executors if e.component == component}


def _counts_in_stats(runner: TopologyDriver) -> dict[str, int]:
    counts: dict[str, int] = {}
    for where in runner.stats.executor_ranges.values():
        counts[where.component] = counts.get(where.component, 0) + 1
    return counts


def _rebalance(cluster: LocalCluster, runner: TopologyDriver, relay: int,
               folder: Path) -> float:
    """Rebalance the relay; returns seconds until its new executors served a window."""
    replans, began = runner.replans, time.monotonic()
    cluster.rebalance("relay", {"relay": relay})
    wait_for(lambda: runner.replans > replans, 120, message="the replan was applied")
    before = len(_acked(folder))
    wait_for(lambda: len(_acked(folder)) > before + 20 or len(_acked(folder)) == COUNT, 120,
             message="ids acked after the replan")
    return time.monotonic() - began


def test_rebalance_e_keeps_unchanged_executors_and_every_id_is_acked_once(
        cluster: LocalCluster, tmp_path: Path) -> None:
    runner = cluster.submit_topology("relay", RelayTopology, {
        "test.dir": str(tmp_path), "test.count": COUNT, "test.rate": RATE,
        "topology.message.timeout.secs": 10})
    assert executor_counts(runner.plan) == {"numbers": 1, "relay": 2, "sink": 2}
    assert runner.plan.chain_parents == {"sink": "relay"}
    wait_for(lambda: len(_acked(tmp_path)) >= 100, 180, message="ids acked before")
    spout, sinks = _pids(runner, "numbers"), _pids(runner, "sink")

    down = _rebalance(cluster, runner, 1, tmp_path)
    assert executor_counts(runner.plan) == {"numbers": 1, "relay": 1, "sink": 2}
    assert _counts_in_stats(runner) == {"numbers": 1, "relay": 1, "sink": 2}
    assert _pids(runner, "numbers") == spout, "the spout's executor kept its process"
    assert _pids(runner, "sink") == sinks, "the sinks' executors kept their processes"
    assert runner.plan.chain_parents == {"relay": "numbers"}, "chained anew: one relay"

    up = _rebalance(cluster, runner, 2, tmp_path)
    assert executor_counts(runner.plan) == {"numbers": 1, "relay": 2, "sink": 2}
    assert _pids(runner, "numbers") == spout and _pids(runner, "sink") == sinks
    assert runner.plan.chain_parents == {"sink": "relay"}, "chained as before"

    wait_for(lambda: len(_acked(tmp_path)) == COUNT, 180, message="every id acked")
    acked = _acked(tmp_path)
    assert [n for n, times in acked.items() if times > 1] == [], "ids acked twice"
    assert set(acked) == set(range(COUNT))
    seen = {e["values"][0] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"}
    assert seen >= set(range(COUNT)), "ids the sinks never saw"
    assert {e["pid"] for e in read_events(tmp_path, "numbers")} == set(spout.values())
    assert runner.pool.restarts == 0
    print(f"replan to the first acks: down {down:.2f} s, up {up:.2f} s")


def test_a_bad_rebalance_is_refused_and_changes_nothing(cluster: LocalCluster,
                                                        tmp_path: Path) -> None:
    runner = cluster.submit_topology("refused", RelayTopology, {
        "test.dir": str(tmp_path), "test.count": 0, "test.rate": RATE})
    cases: list[tuple[dict[str, Any], str]] = [
        ({"nope": 1}, "REBALANCE_UNKNOWN_COMPONENT"),
        ({"relay": 0}, "REBALANCE_INVALID"),
        ({"relay": 3}, "PARALLELISM_ABOVE_TASKS"),
    ]
    for counts, code in cases:
        with pytest.raises(EngineError) as excinfo:
            cluster.rebalance("refused", counts)
        assert excinfo.value.code == code
    assert runner.replan_requests.wanted is None
    assert executor_counts(runner.plan) == {"numbers": 1, "relay": 2, "sink": 2}


def _complete(runner: TopologyDriver) -> tuple[set[int], dict[str, int]] | None:
    """The committed checkpoint's acked ids and counts once every id is acked there.

    Its parts are read as the driver's rollback reads them: the ones that held each
    executor's tasks when it was taken (a replan regroups them).
    """
    assert isinstance(runner.checkpointing, WindowCheckpoints)
    store = runner.checkpointing.store
    try:
        window = store.latest_committed()
        if window is None:
            return None
        acked: set[int] = set()
        counts: dict[str, int] = {}
        for executor in runner.plan.executors:
            names = (runner.checkpointing.part_layouts.parts_for(window, executor.tasks)
                     or [part_name(executor.gid)])
            for name in names:
                part = ExecutorPart.decode(store.read_part(window, name))
                for task, blob in part.tasks.items():
                    data = read_snapshot(blob)["data"] if task in executor.tasks else None
                    if data is not None and executor.component == "numbers":
                        acked |= data["acked"]
                    elif data is not None:
                        for key, n in data.items():
                            counts[key] = counts.get(key, 0) + n
    except CheckpointError:  # purged under our feet by a newer commit: look again
        return None
    return (acked, counts) if len(acked) == CHECKPOINTED_COUNT else None


def test_with_checkpoints_a_rebalance_rolls_back_under_the_new_layout_to_exact_counts(
        cluster: LocalCluster, tmp_path: Path) -> None:
    """The regrouped count tasks restore from the parts that held them: counts stay exact."""
    runner = _run_checkpointed(cluster, tmp_path)
    _wait_for_first_commit(runner)
    spout = _pids(runner, "numbers")
    rollbacks = runner.stats.rollbacks

    cluster.rebalance("checkpointed", {"count": 1})
    wait_for(lambda: runner.replans == 1 and runner.stats.rollbacks > rollbacks, 60,
             message="regrouped and rolled back")
    assert executor_counts(runner.plan) == {"numbers": 1, "count": 1}
    committed = runner.stats.committed_window
    wait_for(lambda: (runner.stats.committed_window or -1) > (committed or -1), 60,
             message="a checkpoint under the new layout")
    cluster.rebalance("checkpointed", {"count": 2})
    wait_for(lambda: runner.replans == 2, 60, message="regrouped again")

    acked, counts = wait_for(lambda: _complete(runner), 120,
                             message="a checkpoint with every id acked")
    assert acked == set(range(CHECKPOINTED_COUNT)) and counts == CHECKPOINTED_EXPECTED
    assert _pids(runner, "numbers") == spout, "the spout's executor kept its process"
    assert runner.pool.restarts == 0
    _no_ack_twice(tmp_path)
