"""Chained stages on real Spark local mode (issue 12 §2), and fused windows.

A bolt chained to its upstream runs in the upstream's Spark task: the window's job has one
stage fewer, counts stay exact with acking, and an executor of a chained pair that stops
answering still has its trees failed and replayed. A fused window (``topology.window.fuse``,
on by default on a local master) is one stage of one task, with the same counts.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    NumberSpout,
    PassBolt,
    RecordingBolt,
    StopOnceBolt,
    read_events,
)

COUNT = 300


class ChainedTopology(Topology):
    """numbers (2) -shuffle-> passing (2) -local_or_shuffle-> again (2) -fields-> sink (2).

    And numbers -shuffle-> watch (2): the spouts' executors feed two chained bolts each.
    """

    numbers = NumberSpout.spec(par=2)
    watch = RecordingBolt.spec(inputs=[numbers], par=2)
    passing = PassBolt.spec(inputs=[numbers], par=2)
    again = PassBolt.spec(inputs={passing: Grouping.LOCAL_OR_SHUFFLE}, par=2)
    sink = RecordingBolt.spec(inputs={again: Grouping.fields("key")}, par=2)


class StopInChainTopology(Topology):
    """The middle of a chain stops itself once (SIGSTOP): numbers -> passing -> after."""

    numbers = NumberSpout.spec(par=2)
    passing = StopOnceBolt.spec(inputs=[numbers], par=2)
    after = PassBolt.spec(inputs=[passing], par=2)
    sink = RecordingBolt.spec(inputs={after: Grouping.fields("key")}, par=2)


def _acked(directory: Path) -> Counter[tuple[int, int]]:
    """(spout task, number) of every ack: each spout task emits every number."""
    return Counter((e["task"], e["n"]) for e in read_events(directory, "numbers")
                   if e["event"] == "ack")


def _window_jobs(spark: Any, runner: Any) -> list[Any]:
    """Spark's job info of each recorded window's job (the status tracker's)."""
    tracker = spark.sparkContext.statusTracker()
    infos = (tracker.getJobInfo(job) for record in runner.stats.summary()["recent_windows"]
             for job in record["jobs"])
    return [info for info in infos if info is not None]


def _stages_per_window(spark: Any, runner: Any) -> list[int]:
    """How many Spark stages each recorded window's job had."""
    return [len(info.stageIds) for info in _window_jobs(spark, runner)]


def _tasks_per_stage(spark: Any, runner: Any) -> list[int]:
    """How many tasks each stage of the recorded windows' jobs had."""
    tracker = spark.sparkContext.statusTracker()
    stages = (tracker.getStageInfo(stage) for info in _window_jobs(spark, runner)
              for stage in info.stageIds)
    return [stage.numTasks for stage in stages if stage is not None]


@pytest.mark.parametrize(("chain", "fuse"), [(True, False), (False, False), (True, True)],
                         ids=["chained", "unchained", "fused"])
def test_chained_counts_are_exact_and_the_window_has_fewer_stages(
        cluster: LocalCluster, spark: Any, tmp_path: Path, chain: bool, fuse: bool) -> None:
    name = f"chain-{chain}-{fuse}"
    runner = cluster.submit_topology(name, ChainedTopology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT, "topology.window.chain": chain,
        "topology.window.fuse": fuse, "topology.max.spout.pending": 50})
    try:
        wait_for(lambda: len(_acked(tmp_path)) == 2 * COUNT, timeout=120, message="all acked")
        stages = _stages_per_window(spark, runner)
        tasks = _tasks_per_stage(spark, runner)
    finally:
        cluster.kill_topology(name)

    assert max(_acked(tmp_path).values()) == 1, "every tuple acked exactly once"
    received = Counter(e["values"][0] for e in read_events(tmp_path, "sink")
                       if e["event"] == "tuple")
    assert received == Counter({n: 2 for n in range(COUNT)}), "each number once per spout"
    assert stages, "the windows' jobs were seen"
    # chained: spouts, passing, watch, again in one stage, sink in the next; else one per
    # level; fused: the whole window in one task
    assert set(stages) == ({1} if fuse else {2} if chain else {4}), stages
    if fuse:
        assert set(tasks) == {1}, f"a fused window is one task: {tasks}"
    # watch heard every number from each spout task; chained, executor i only from spout i
    index_of = {t: e.index for e in runner.plan.executors for t in e.tasks}
    watched = [(index_of[e["task"]], index_of[e["source_task"]])
               for e in read_events(tmp_path, "watch") if e["event"] == "tuple"]
    assert len(watched) >= 2 * COUNT
    pairs = Counter(watched)
    if chain:
        assert set(pairs) == {(0, 0), (1, 1)}, pairs
    else:
        assert len(pairs) == 4, f"a plain shuffle mixes executors: {pairs}"


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_stopped_executor_in_a_chain_fails_its_trees_and_they_replay(
        cluster: LocalCluster, tmp_path: Path) -> None:
    runner = cluster.submit_topology("chain-stop", StopInChainTopology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT, "topology.max.spout.pending": 50,
        "test.stop_on": 100, "topology.executor.answer.timeout.secs": 2,
        "topology.message.timeout.secs": 300})
    plan = runner.plan
    assert plan.chain_parents == {"passing": "numbers", "after": "passing"}
    (stopping,) = wait_for(lambda: [e for e in read_events(tmp_path, "passing")
                                    if e["event"] == "stopping"],
                           timeout=60, message="an executor stopped itself")
    old_pid = stopping["pid"]
    gid = plan.task_executor[stopping["task"]]
    try:
        wait_for(lambda: runner.pool.pids()[gid] != old_pid, timeout=60,
                 message="the stopped executor replaced")
        # the message timeout is 300 s: only failing and replaying its trees acks all so soon
        wait_for(lambda: len(_acked(tmp_path)) == 2 * COUNT, timeout=150, message="all acked")
        summary = runner.stats.summary()
    finally:
        if not _gone(old_pid):
            os.kill(old_pid, signal.SIGKILL)  # never leave a stopped process behind
        cluster.kill_topology("chain-stop")

    assert max(_acked(tmp_path).values()) == 1, "every tuple acked exactly once"
    assert f"executor {gid} (passing) did not answer window" in \
        summary["last_errors"]["passing"]["error"]
    received = {e["values"][0] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"}
    assert received == set(range(COUNT)), "the replayed numbers went through the chain"


class TickedChainTopology(Topology):
    """Ticks for a chained bolt are injected into the spout stage: they must reach it there.

    ``before``'s ticks come first in the window's injected records, so a plain spread over
    the spout partitions would hand each ``ticked`` executor's tick to the other's task.
    """

    numbers = NumberSpout.spec(par=2)
    before = RecordingBolt.spec(inputs={numbers: Grouping.fields("key")},
                                config={"topology.tick.tuple.freq.secs": 1})
    ticked = RecordingBolt.spec(inputs=[numbers], par=2,
                                config={"topology.tick.tuple.freq.secs": 1})


def test_ticks_reach_a_chained_bolt_in_the_spout_stage(cluster: LocalCluster,
                                                       tmp_path: Path) -> None:
    runner = cluster.submit_topology("chain-ticks", TickedChainTopology, conf={
        "test.dir": str(tmp_path), "test.count": 10})
    assert runner.plan.chain_parents == {"ticked": "numbers"}
    tasks = set(runner.plan.component_tasks["ticked"])

    def ticked_tasks() -> Counter[int]:
        return Counter(e["task"] for e in read_events(tmp_path, "ticked")
                       if e["event"] == "tick")

    try:
        wait_for(lambda: set(ticked_tasks()) == tasks and min(ticked_tasks().values()) >= 3,
                 timeout=90, message="three ticks at each chained task")
    finally:
        cluster.kill_topology("chain-ticks")
    before = [e for e in read_events(tmp_path, "before") if e["event"] == "tick"]
    assert before, "the other component's ticks still arrive"
