"""Issue 14 §4: a stopped executor (SIGSTOP) is killed and restarted.

The trees it held fail and replay and the rest of the topology goes on. Before, every window
waited for it.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path

import psutil

from sparkstorm import Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    NumberSpout,
    RecordingBolt,
    StopOnceBolt,
    read_events,
)

COUNT = 1500


def _acked(directory: Path) -> Counter[int]:
    return Counter(e["n"] for e in read_events(directory, "numbers") if e["event"] == "ack")


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


class StopTopology(Topology):
    numbers = NumberSpout.spec()
    passing = StopOnceBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[passing])


def test_a_stopped_executor_is_killed_restarted_and_its_trees_replay(
        cluster: LocalCluster, tmp_path: Path) -> None:
    runner = cluster.submit_topology("stopped", StopTopology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT, "topology.max.spout.pending": 100,
        "test.stop_on": 300, "topology.executor.answer.timeout.secs": 2,
        "topology.message.timeout.secs": 300})
    (stopping,) = wait_for(lambda: [e for e in read_events(tmp_path, "passing")
                                    if e["event"] == "stopping"],
                           timeout=60, message="an executor stopped itself")
    old_pid = stopping["pid"]
    gid = runner.plan.task_executor[stopping["task"]]
    try:
        wait_for(lambda: runner.pool.pids()[gid] != old_pid, timeout=60,
                 message="the stopped executor replaced")
        assert _gone(old_pid), "the stopped process must be killed, not left behind"
        # the message timeout is 300 s: ids can only all be acked this soon if the trees
        # the stopped executor held were failed and replayed
        wait_for(lambda: len(_acked(tmp_path)) == COUNT, timeout=150, message="all acked")
        summary = runner.stats.summary()
    finally:
        if not _gone(old_pid):
            os.kill(old_pid, signal.SIGKILL)  # never leave a stopped process behind
        cluster.kill_topology("stopped")

    assert max(_acked(tmp_path).values()) == 1, "every id acked exactly once"
    error = summary["last_errors"]["passing"]["error"]
    assert f"executor {gid} (passing) did not answer window" in error
    reasons = summary["components"]["numbers"]["failure_reasons"]
    # the trees of the input it held failed as crashes; once in a CI run (loaded machine) the
    # window it was given up on held none ("the 0 tuple trees"), though every id was still
    # acked exactly once: then there is no reason to show (left for the next session)
    if "and the 0 tuple trees" not in error:
        assert any(r["cause"] == "crash" and "did not answer window" in r["reason"]
                   for r in reasons), reasons
    sink = {e["values"][0] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"}
    assert sink == set(range(COUNT))
