"""Faults: a raising component, a killed executor, contract violations, cycles, shutdown."""

from __future__ import annotations

import os
import signal
import tempfile
from collections import Counter
from pathlib import Path

import psutil
import pytest

from sparkstorm import Topology
from sparkstorm.engine.executor.workdirs import WORKDIR_PREFIX
from sparkstorm.errors import EngineError
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    BrokenStartBolt,
    EchoBolt,
    HopBolt,
    NumberSpout,
    PassBolt,
    RaiseOnceBolt,
    RaiseOnceNoAutoFailBolt,
    RecordingBolt,
    WrongArityBolt,
    read_events,
)


def _acked(directory: Path) -> Counter[int]:
    return Counter(e["n"] for e in read_events(directory, "numbers") if e["event"] == "ack")


class RaisingTopology(Topology):
    numbers = NumberSpout.spec()
    raiser = RaiseOnceBolt.spec(inputs=[numbers])
    sink = RecordingBolt.spec(inputs=[raiser])


def test_a_raising_bolt_fails_its_tuple_restarts_and_the_topology_goes_on(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    runner = cluster.submit_topology("raising", RaisingTopology, conf={
        "test.dir": str(tmp_path), "test.count": 100, "test.raise_on": 42})
    wait_for(lambda: len(_acked(tmp_path)) == 100, timeout=90, message="all acked")
    errors = wait_for(lambda: runner.stats.summary()["last_errors"], timeout=30,
                      message="error reported")
    cluster.kill_topology("raising")

    assert "ValueError: boom on 42" in errors["raiser"]["error"]
    reasons = runner.stats.summary()["components"]["numbers"]["failure_reasons"]
    # the tuple that raised and the rest of its window: one kind of reason, its latest text
    errors_kind = [r for r in reasons if r["cause"] == "error"]
    assert [(r["reason"], r["example"]) for r in errors_kind] == \
        [("raiser: ValueError: boom on <n>", "raiser: ValueError: boom on 42")]
    assert errors_kind[0]["count"] >= 1
    assert not [r for r in reasons if r["cause"] == "crash"], reasons
    assert errors["raiser"]["task"] == runner.plan.component_tasks["raiser"][0]
    fails = [e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "fail"]
    assert 42 in fails, "the tuple that raised must fail back to the spout"
    starts = [e for e in read_events(tmp_path, "raiser") if e["event"] == "initialize"]
    assert len({e["pid"] for e in starts}) == 2, "the executor process must be restarted"
    assert runner.stats.restarts >= 1
    assert max(_acked(tmp_path).values()) == 1
    sink = Counter(e["values"][0] for e in read_events(tmp_path, "sink") if e["event"] == "tuple")
    assert set(sink) == set(range(100))


class NoAutoFailTopology(Topology):
    numbers = NumberSpout.spec()
    raiser = RaiseOnceNoAutoFailBolt.spec(inputs=[numbers])


def test_without_auto_fail_the_raising_tuple_times_out_instead(cluster: LocalCluster,
                                                                tmp_path: Path) -> None:
    runner = cluster.submit_topology("no-auto-fail", NoAutoFailTopology, conf={
        "test.dir": str(tmp_path), "test.count": 20, "test.raise_on": 5,
        "topology.message.timeout.secs": 2})
    wait_for(lambda: len(_acked(tmp_path)) == 20, timeout=90, message="all acked")

    def causes() -> dict[str, int]:
        return dict(runner.stats.summary()["components"]["numbers"]["failures_by_cause"])

    # auto_fail = False: the raising tuple is not failed by the bolt, so its tree times out
    # (the rest of its window still fails at once, with the error as cause: issue 15)
    wait_for(lambda: causes()["timeout"] >= 1, timeout=30, message="the timeout counted")
    cluster.kill_topology("no-auto-fail")
    assert causes()["crash"] == 0
    fails = [e for e in read_events(tmp_path, "numbers") if e["event"] == "fail"]
    assert 5 in {e["n"] for e in fails}
    assert max(_acked(tmp_path).values()) == 1


class KillTopology(Topology):
    numbers = NumberSpout.spec()
    passing = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[passing])


def test_an_executor_killed_from_outside_is_restarted(cluster: LocalCluster,
                                                      tmp_path: Path) -> None:
    runner = cluster.submit_topology("killed", KillTopology, conf={
        "test.dir": str(tmp_path), "test.count": 3000, "topology.message.timeout.secs": 5,
        "topology.max.spout.pending": 200})
    wait_for(lambda: len(_acked(tmp_path)) > 100, timeout=60, message="some progress")
    victim = runner.plan.component_tasks["passing"][0]
    gid = runner.plan.task_executor[victim]
    old_pid = runner.pool.pids()[gid]
    os.kill(old_pid, signal.SIGKILL)
    wait_for(lambda: runner.pool.pids()[gid] != old_pid, timeout=30, message="restarted")
    wait_for(lambda: len(_acked(tmp_path)) == 3000, timeout=120, message="all acked")
    cluster.kill_topology("killed")
    assert max(_acked(tmp_path).values()) == 1
    assert runner.stats.restarts >= 1


class ArityTopology(Topology):
    numbers = NumberSpout.spec()
    wrong = WrongArityBolt.spec(inputs=[numbers])


def test_emitting_the_wrong_number_of_values_is_reported(cluster: LocalCluster,
                                                         tmp_path: Path) -> None:
    runner = cluster.submit_topology("arity", ArityTopology, conf={
        "test.dir": str(tmp_path), "test.count": 3})
    errors = wait_for(lambda: runner.stats.summary()["last_errors"], timeout=60,
                      message="error reported")
    wait_for(lambda: any(e["event"] == "fail" for e in read_events(tmp_path, "numbers")),
             timeout=60, message="the tuple failed")
    cluster.kill_topology("arity")
    assert "TUPLE_ARITY_MISMATCH" in errors["wrong"]["error"]
    assert "'only'" in errors["wrong"]["error"]


class CycleTopology(Topology):
    numbers = NumberSpout.spec()
    hop = HopBolt.spec(inputs=[numbers, "echo"])
    echo = EchoBolt.spec(inputs=[hop])


def test_an_edge_closing_a_cycle_delivers_in_a_later_window(cluster: LocalCluster,
                                                            tmp_path: Path) -> None:
    cluster.submit_topology("cycle", CycleTopology, conf={
        "test.dir": str(tmp_path), "test.count": 20, "test.hops": 3})
    wait_for(lambda: len(_acked(tmp_path)) == 20, timeout=90, message="all acked")
    cluster.kill_topology("cycle")
    hops = Counter((e["n"], e["hops"]) for e in read_events(tmp_path, "hop"))
    assert hops == {(n, h): 1 for n in range(20) for h in range(3)}


def test_clean_shutdown_closes_spouts_and_leaves_no_process(cluster: LocalCluster,
                                                           tmp_path: Path) -> None:
    runner = cluster.submit_topology("shutdown", KillTopology, conf={
        "test.dir": str(tmp_path), "test.count": 10**9, "topology.max.spout.pending": 50})
    wait_for(lambda: len(_acked(tmp_path)) > 50, timeout=60, message="some progress")
    pids = list(runner.pool.pids().values())
    cluster.kill_topology("shutdown")
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                   for p in pids)
    events = read_events(tmp_path, "numbers")
    in_flight = {e["n"] for e in events if e["event"] == "emit"} - {
        e["n"] for e in events if e["event"] in ("ack", "fail")}
    assert not in_flight, "in-flight trees must finish before close"
    assert not runner.workdir.exists()


class LateBreakTopology(Topology):
    numbers = NumberSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


def test_a_component_failing_in_initialize_is_reported_and_retried_with_backoff(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """The executor dies in initialize() on restart: the worker reports it and backs off."""
    runner = cluster.submit_topology("late-break", LateBreakTopology, conf={
        "test.dir": str(tmp_path), "test.count": 10,
        "topology.executor.start.timeout.secs": 5, "topology.shutdown.timeout.secs": 2})
    wait_for(lambda: len(_acked(tmp_path)) == 10, timeout=60, message="running")
    gid = runner.plan.task_executor[runner.plan.component_tasks["sink"][0]]
    broken = BrokenStartBolt.spec(name="sink", inputs=["numbers"])
    runner.pool.plan_file.write_text(runner.pool.plan_file.read_text().replace(
        LateBreakTopology.topology_spec.component("sink").component, broken.component))
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)
    error = wait_for(lambda: "cannot reach the database" in runner.stats.summary()[
        "last_errors"].get("sink", {}).get("error", ""), timeout=60, message="reported")
    assert error
    wait_for(lambda: runner.pool.backoff.get(gid, 0) >= 1.0, timeout=60,
             message="restart delay grows")
    assert runner.pool.restarts < 10, "a broken initialize must not restart in a tight loop"
    cluster.kill_topology("late-break")


def test_a_kill_that_times_out_says_so_and_a_second_kill_finishes_it(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    runner = cluster.submit_topology("slow-kill", KillTopology, conf={
        "test.dir": str(tmp_path), "test.count": 10**9, "topology.max.spout.pending": 50})
    wait_for(lambda: len(_acked(tmp_path)) > 10, timeout=60, message="running")
    with pytest.raises(EngineError) as caught:
        cluster.kill_topology("slow-kill", timeout=0.001)
    assert caught.value.code == "TOPOLOGY_SHUTDOWN_TIMEOUT"
    assert cluster.runners["slow-kill"] is runner, "still listed while it shuts down"
    cluster.kill_topology("slow-kill")
    assert "slow-kill" not in cluster.runners and runner.stopped.is_set()


class NeverStartsTopology(Topology):
    numbers = NumberSpout.spec()
    sink = BrokenStartBolt.spec(inputs=[numbers])


def test_a_topology_that_cannot_start_is_refused_and_leaves_nothing_behind(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    before = set(psutil.Process().children(recursive=True))
    with pytest.raises(EngineError) as caught:
        cluster.submit_topology("never", NeverStartsTopology, conf={
            "test.dir": str(tmp_path), "test.count": 1})
    assert caught.value.code == "EXECUTOR_START_FAILED"
    assert "cannot reach the database" in str(caught.value), "the executor's log is shown"
    assert "never" not in cluster.runners
    left = [p for p in set(psutil.Process().children(recursive=True)) - before
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE
            and "sparkstorm.engine.executor.main" in " ".join(p.cmdline())]
    assert not left, "no executor process may outlive a failed start"
    prefix = f"{WORKDIR_PREFIX}{os.getpid()}-"
    assert not [p for p in Path(tempfile.gettempdir()).glob(prefix + "*")
                if (p / "plan.json").exists() and "never" in (p / "plan.json").read_text()]


def test_a_window_whose_job_fails_fails_its_open_trees_and_they_replay(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """An executor that cannot come back makes the window's Spark job fail for good.

    Every open tree fails at once (not after the message timeout) and replays once it is back.
    """
    runner = cluster.submit_topology("job-fails", KillTopology, conf={
        "test.dir": str(tmp_path), "test.count": 400, "topology.max.spout.pending": 20,
        "topology.executor.start.timeout.secs": 3, "topology.message.timeout.secs": 60})
    wait_for(lambda: len(_acked(tmp_path)) > 20, timeout=60, message="some progress")
    gid = runner.plan.task_executor[runner.plan.component_tasks["passing"][0]]
    original = runner.pool.plan_file.read_text()
    broken = BrokenStartBolt.spec(name="passing", inputs=["numbers"])
    runner.pool.plan_file.write_text(original.replace(
        KillTopology.topology_spec.component("passing").component, broken.component))
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)

    def failed() -> list[dict]:
        return [e for e in read_events(tmp_path, "numbers") if e["event"] == "fail"]

    wait_for(failed, timeout=60, message="open trees failed")
    runner.pool.plan_file.write_text(original)
    wait_for(lambda: runner.stats.summary()["components"]["numbers"]["failures_by_cause"][
        "crash"] > 0, timeout=30, message="the lost window's trees counted as crashed")
    wait_for(lambda: len(_acked(tmp_path)) == 400, timeout=120, message="all acked")
    cluster.kill_topology("job-fails")
    assert max(_acked(tmp_path).values()) == 1
    events = read_events(tmp_path, "numbers")
    first_emit = {e["n"]: e["time"] for e in reversed(events) if e["event"] == "emit"}
    assert all(e["time"] - first_emit[e["n"]] < 60 for e in failed()), \
        "trees must fail with the job, long before the message timeout"
