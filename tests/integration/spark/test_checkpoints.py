"""Checkpoints and rollback on Spark local mode (issue 11).

A stateful word count must end with exact counts and every id acked whatever single
failure hits it: kill -9 of the count bolt's or the spout's executor, a component that
raises, a window's Spark job that fails for good. The check reads the newest committed
checkpoint, where the spout's acked ids and the bolt's counts were cut at the same window.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.checkpoint import CheckpointError
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.engine.driver.checkpoints import WindowCheckpoints
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, part_name
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.redis.conftest import redis_config, redis_server  # noqa: F401
from tests.integration.spark.checkpoint_components import (
    CheckpointedCount,
    PositionBatchSpout,
    PositionSpout,
    TenSums,
    WindowRecords,
)
from tests.integration.spark.components import KEYS, RecordingBolt, read_events

COUNT = 2000
EXPECTED = dict(Counter(f"k{n % KEYS}" for n in range(COUNT)))


class CountTopology(Topology):
    numbers = PositionSpout.spec()
    count = CheckpointedCount.spec(inputs={numbers: Grouping.fields("key")}, par=2)


def _committed(runner: TopologyDriver) -> tuple[int | None, set[int], dict[str, int]]:
    """The newest committed checkpoint: its window, the spout's acked ids, the counts.

    An older one may be purged while it is read: then the one after it.
    """
    for _ in range(10):
        try:
            return _read_committed(runner)
        except CheckpointError:  # purged under our feet by a newer commit
            continue
    return _read_committed(runner)


def _read_committed(runner: TopologyDriver) -> tuple[int | None, set[int], dict[str, int]]:
    assert isinstance(runner.checkpointing, WindowCheckpoints)
    store = runner.checkpointing.store
    window = store.latest_committed()
    acked: set[int] = set()
    counts: dict[str, int] = {}
    if window is None:
        return None, acked, counts
    for executor in runner.plan.executors:
        part = ExecutorPart.decode(store.read_part(window, part_name(executor.gid)))
        for blob in part.tasks.values():
            data = read_snapshot(blob)["data"]
            if executor.component == "numbers":
                acked |= data["acked"]
            elif executor.component == "count" and data is not None:  # None: kept in Redis
                for key, n in data.items():
                    counts[key] = counts.get(key, 0) + n
    return window, acked, counts


class BatchCountTopology(Topology):
    numbers = PositionBatchSpout.spec()
    count = CheckpointedCount.spec(inputs={numbers: Grouping.fields("key")}, par=2)


def _run(cluster: LocalCluster, tmp_path: Path, conf: dict[str, Any] | None = None,
         topology: type[Topology] = CountTopology) -> TopologyDriver:
    return cluster.submit_topology("checkpointed", topology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT, "topology.checkpoint.windows": 3,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints"),
        "topology.max.spout.pending": 200, **(conf or {})})


def _wait_for_first_commit(runner: TopologyDriver) -> int:
    window: int = wait_for(lambda: _committed(runner)[0], 60,
                           message="a checkpoint is committed")
    return window


def _finish_exactly(runner: TopologyDriver) -> tuple[set[int], dict[str, int]]:
    """Wait for a committed checkpoint in which every id is acked; its counts."""
    def complete() -> tuple[set[int], dict[str, int]] | None:
        _, acked, counts = _committed(runner)
        return (acked, counts) if len(acked) == COUNT else None
    acked, counts = wait_for(complete, 120, message="a checkpoint with every id acked")
    return acked, counts


def _no_ack_twice(tmp_path: Path) -> None:
    """The spout never heard ``ack`` for an id its (restored) state had seen acked.

    After a rollback it hears it again only for the ids whose trees were rolled back.
    """
    again = [e["n"] for e in read_events(tmp_path, "numbers")
             if e["event"] == "ack" and e["again"]]
    assert again == []


def _kill(runner: TopologyDriver, component: str) -> None:
    gid = next(e.gid for e in runner.plan.executors if e.component == component)
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)


def test_without_failures_the_committed_counts_are_exact(cluster: LocalCluster,
                                                         tmp_path: Path) -> None:
    runner = _run(cluster, tmp_path)
    acked, counts = _finish_exactly(runner)
    assert acked == set(range(COUNT)) and counts == EXPECTED
    committed = runner.stats.summary()["committed_window"]
    assert committed is not None
    assert runner.stats.rollbacks == 0
    _no_ack_twice(tmp_path)
    # a plain spout hears Storm's checkpoint hooks too: each cut, then its commit
    events = read_events(tmp_path, "numbers")
    prepared = [e["txid"] for e in events if e["event"] == "pre_prepare"]
    heard = wait_for(lambda: [e["txid"] for e in read_events(tmp_path, "numbers")
                              if e["event"] == "pre_commit"] or None, 30,
                     message="the spout heard pre_commit")
    steps = {b - a for a, b in zip(prepared, prepared[1:], strict=False)}
    assert prepared and steps <= {3}  # a cut every 3rd window
    assert set(heard) <= set(prepared) and heard == sorted(heard)
    cluster.kill_topology("checkpointed")
    assert not (tmp_path / "checkpoints" / runner.checkpoint_id).exists(), \
        "a one-off run's checkpoints go when it stops"


@pytest.mark.parametrize("component", ["count", "numbers"])
def test_kill_9_of_an_executor_rolls_back_to_exact_counts(cluster: LocalCluster,
                                                          tmp_path: Path,
                                                          component: str) -> None:
    runner = _run(cluster, tmp_path)
    _wait_for_first_commit(runner)
    _kill(runner, component)
    acked, counts = _finish_exactly(runner)
    assert runner.stats.rollbacks >= 1
    # what made it, as the UI's troubles say it: the pool restarted it, or it went silent
    assert re.fullmatch(r"\d executor process\(es\) died and restarted|executor \d+ "
                        r"\(\w+\) did not answer window \d+", runner.stats.rollback_cause)
    assert acked == set(range(COUNT)) and counts == EXPECTED
    _no_ack_twice(tmp_path)
    if component == "count":  # the spout's process lived on: it heard the rollback
        assert any(e["event"] == "pre_rollback" for e in read_events(tmp_path, "numbers"))


CHECKPOINT_MODE = {"topology.reliability": "checkpoint"}


def _acks_only_after_a_commit(tmp_path: Path) -> None:
    """Checkpoint reliability: the spout heard no ``ack`` before a checkpoint committed.

    Its first ``ack`` follows its first ``pre_commit``, or the rollback to the committed
    checkpoint the test waited for: a spout hears a commit with the next window, and when
    that window is the one rolled back, the restore acks what the checkpoint held (seen
    when every tuple fitted in the windows before the cut: the acks came right after
    ``pre_rollback``, then ``pre_commit`` of the next checkpoint).
    """
    events = [e["event"] for e in read_events(tmp_path, "numbers")]
    assert "ack" in events
    heard = [n for n, event in enumerate(events) if event in ("pre_commit", "pre_rollback")]
    assert heard and heard[0] < events.index("ack"), events[:10]


# the per-tuple acking tests above cover the same rollback; this mode's own semantics
# (ack at commit, fail on a rollback, ack on restore) are tests/unit/engine/
# test_checkpoint_reliability.py; the spout kill and a failed Spark job are slow here
@pytest.mark.parametrize("component", ["count", pytest.param("numbers", marks=pytest.mark.slow)])
def test_checkpoint_reliability_ends_exact_after_a_kill_9(cluster: LocalCluster,
                                                          tmp_path: Path,
                                                          component: str) -> None:
    runner = _run(cluster, tmp_path, CHECKPOINT_MODE)
    assert runner.plan.acker_tasks_count == 0
    _wait_for_first_commit(runner)
    _kill(runner, component)
    acked, counts = _finish_exactly(runner)
    assert runner.stats.rollbacks >= 1
    assert acked == set(range(COUNT)) and counts == EXPECTED
    _no_ack_twice(tmp_path)
    _acks_only_after_a_commit(tmp_path)
    spout = runner.stats.summary()["components"]["numbers"]
    assert spout["complete_latency_ms"] > 0, spout  # emit to the end of the tuple's window


@pytest.mark.slow
def test_checkpoint_reliability_ends_exact_after_a_raise(cluster: LocalCluster,
                                                         tmp_path: Path) -> None:
    runner = _run(cluster, tmp_path, {**CHECKPOINT_MODE, "test.raise_at": COUNT // 2})
    acked, counts = _finish_exactly(runner)
    assert runner.stats.rollbacks >= 1
    assert acked == set(range(COUNT)) and counts == EXPECTED
    _no_ack_twice(tmp_path)


def test_in_checkpoint_reliability_a_failed_tuple_rolls_back_to_exact_counts(
        cluster: LocalCluster, tmp_path: Path) -> None:
    # a bolt's explicit fail has no tree to replay in this mode: it was dropped, and its
    # spout heard ack for it at the next commit; a rollback replays it now
    runner = _run(cluster, tmp_path, {**CHECKPOINT_MODE, "test.fail_at": COUNT // 2})
    acked, counts = _finish_exactly(runner)
    assert (tmp_path / "raised").exists(), "the bolt failed the tuple"
    assert runner.stats.rollbacks >= 1 and runner.pool.restarts == 0
    assert re.search(r"count failed 1 \(checkpoint reliability replays by rolling back\)",
                     runner.stats.rollback_cause), runner.stats.rollback_cause
    assert acked == set(range(COUNT)) and counts == EXPECTED
    _no_ack_twice(tmp_path)


def test_a_tuple_failing_every_replay_backs_off_and_ends_exact(cluster: LocalCluster,
                                                               tmp_path: Path) -> None:
    # the first tuple fails six times, each replay failing it again at once: from the third
    # rollback in a row on, each replay waits first (0.1 s, doubling)
    runner = _run(cluster, tmp_path, {**CHECKPOINT_MODE, "test.fail_at": 0,
                                      "test.fail_times": 6,
                                      "topology.rollback.backoff.initial.secs": 0.1})
    acked, counts = _finish_exactly(runner)
    assert len((tmp_path / "raised").read_text().split()) == 6, "failed six times"
    assert runner.stats.rollbacks >= 6 and runner.pool.restarts == 0
    assert runner.rollback_backoff.held >= 1, "no replay waited"
    assert "rollbacks in a row, the replay held" in runner.stats.rollback_cause, \
        runner.stats.rollback_cause
    assert acked == set(range(COUNT)) and counts == EXPECTED
    _no_ack_twice(tmp_path)


def test_a_batch_spout_rolls_back_with_its_batches_to_exact_counts(cluster: LocalCluster,
                                                                   tmp_path: Path) -> None:
    # one message id per batch of 25 rows: the checkpoint keeps the spout's batches in
    # flight and its acked numbers; a rolled-back batch is replayed whole, counted once
    runner = _run(cluster, tmp_path, topology=BatchCountTopology)
    _wait_for_first_commit(runner)
    _kill(runner, "count")
    acked, counts = _finish_exactly(runner)
    assert runner.stats.rollbacks >= 1
    assert acked == set(range(COUNT)) and counts == EXPECTED
    _no_ack_twice(tmp_path)


def test_a_raising_component_rolls_back_to_exact_counts(cluster: LocalCluster,
                                                        tmp_path: Path) -> None:
    runner = _run(cluster, tmp_path, {"test.raise_at": COUNT // 2})
    acked, counts = _finish_exactly(runner)
    assert (tmp_path / "raised").exists()
    assert runner.stats.rollbacks >= 1
    assert acked == set(range(COUNT)) and counts == EXPECTED
    assert "raising once" in runner.stats.last_errors["count"]["error"]
    _no_ack_twice(tmp_path)


def test_an_unpicklable_attribute_is_a_clear_error_at_the_first_checkpoint(
        cluster: LocalCluster, tmp_path: Path) -> None:
    class Unpicklable(Topology):
        numbers = PositionSpout.spec()
        sink = RecordingBolt.spec(inputs=[numbers])  # keeps an open file in `record`

    runner = cluster.submit_topology("unpicklable", Unpicklable, conf={
        "test.dir": str(tmp_path), "test.count": 10, "topology.checkpoint.windows": 2,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints")})
    error = wait_for(lambda: runner.stats.last_errors.get("sink"), 60,
                     message="the sink's checkpoint error")["error"]
    assert "CHECKPOINT_UNPICKLABLE" in error and "'record'" in error, error
    assert "sink" in error and "Recorder" in error, error
    assert isinstance(runner.checkpointing, WindowCheckpoints)
    assert runner.checkpointing.store.latest_committed() is None


def _spark_python_workers() -> list[psutil.Process]:
    """This test process's Spark Python workers (``pyspark.daemon`` and its forks)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "pyspark.daemon" in " ".join(process.cmdline()):
                found.append(process)
    return found


def test_a_failed_spark_job_rolls_back_to_exact_counts(cluster: LocalCluster,
                                                       tmp_path: Path) -> None:
    runner = _run(cluster, tmp_path)
    _wait_for_first_commit(runner)
    failed_before = runner.failed_jobs
    # local mode does not retry a task: a killed Python worker fails its window's job
    while runner.failed_jobs == failed_before:
        for process in wait_for(_spark_python_workers, 30, message="Spark Python workers"):
            with contextlib.suppress(psutil.Error):
                process.kill()
        wait_for(lambda: runner.failed_jobs > failed_before or _spark_python_workers(), 30,
                 message="a window's job failed, or the workers came back")
    acked, counts = _finish_exactly(runner)
    assert runner.stats.rollbacks >= 1
    assert acked == set(range(COUNT)) and counts == EXPECTED
    _no_ack_twice(tmp_path)


def test_redis_state_ends_exact_after_a_kill_9(
        cluster: LocalCluster, tmp_path: Path,
        redis_config: dict[str, Any]) -> None:  # noqa: F811 - the imported fixture
    import pickle

    import redis

    runner = _run(cluster, tmp_path, {"topology.state.provider": "redis",
                                      "topology.state.provider.config": redis_config})
    _wait_for_first_commit(runner)
    _kill(runner, "count")
    acked, _ = _finish_exactly(runner)  # a Redis state's snapshot holds no counts
    assert acked == set(range(COUNT))
    pool = redis_config["jedisPoolConfig"]
    client = redis.Redis(port=pool["port"], db=pool["database"])
    tasks = runner.plan.component_tasks["count"]

    def stored() -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in tasks:
            for key, value in client.hgetall(f"count-{task}").items():
                counts[pickle.loads(key)] = pickle.loads(value)
        return counts
    try:  # the checkpoint's commit reaches Redis with the window after it
        wait_for(lambda: stored() == EXPECTED, 30, message="Redis holds exact counts")
    finally:
        client.close()
    assert runner.stats.rollbacks >= 1


class WindowTopology(Topology):
    numbers = PositionSpout.spec()
    tens = TenSums.declared(numbers)
    records = WindowRecords.spec(inputs=[tens])


def test_windowed_bolt_contents_survive_a_rollback(cluster: LocalCluster,
                                                   tmp_path: Path) -> None:
    count = 600
    runner = cluster.submit_topology("windows", WindowTopology, conf={
        "test.dir": str(tmp_path), "test.count": count, "topology.checkpoint.windows": 3,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints"),
        "topology.max.spout.pending": 95})  # windows hold tuples that are not yet acked
    _wait_for_first_commit(runner)
    _kill(runner, "records")

    def windows() -> list[list[int]] | None:
        try:
            store = runner.checkpointing.store  # type: ignore[attr-defined]
            window = store.latest_committed()
            if window is None:
                return None
            spout_acked: set[int] = set()
            found: list[list[int]] = []
            for executor in runner.plan.executors:
                part = ExecutorPart.decode(store.read_part(window, part_name(executor.gid)))
                for blob in part.tasks.values():
                    data = read_snapshot(blob)["data"]
                    if executor.component == "numbers":
                        spout_acked |= data["acked"]
                    elif executor.component == "records":
                        found.extend(data.values())
        except CheckpointError:
            return None
        return found if len(spout_acked) == count else None

    found = wait_for(windows, 120, message="a checkpoint with every id acked")
    assert runner.stats.rollbacks >= 1
    assert all(len(w) == 10 for w in found), found
    assert sorted(n for w in found for n in w) == list(range(count))
    # nothing waited for its timeout: the restored windows held their tuples and acked them
    assert [e for e in read_events(tmp_path, "numbers") if e["event"] == "fail"] == []
    _no_ack_twice(tmp_path)
