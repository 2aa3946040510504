"""A corrupt checkpoint never costs state silently (issue 30, failure 2).

A stateful count (``StatefulBolt``) on Spark local mode with real executor processes keeps
its last two committed checkpoints (``topology.checkpoint.keep``, default 2):

- its newest one corrupt, a rollback (an executor killed, or the driver restarted on them)
  falls back to the one before and the counts still end exact;
- every kept one corrupt, a restarted driver stops with ``CHECKPOINT_UNUSABLE`` and leaves
  them for the operator; with ``topology.checkpoint.start.empty`` it starts from empty state
  (and, the spout starting from its start too, the counts end exact again);
- what the executors and the driver write is 0700 folders and 0600 files.
"""

from __future__ import annotations

import logging
import os
import signal
import stat
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.checkpoint import CheckpointError, CheckpointStore
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.config import load_config
from sparkstorm.engine.driver.checkpoints import WindowCheckpoints
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, part_name
from sparkstorm.testing.local_cluster import topology_spec_of
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.checkpoint_components import CheckpointedCount, PositionSpout
from tests.integration.spark.components import KEYS, read_events
from tests.integration.spark.conftest import TEST_CONF

COUNT = 1500
EXPECTED = dict(Counter(f"k{n % KEYS}" for n in range(COUNT)))
TOPOLOGY_ID = "fallback-1-1"


class CountTopology(Topology):
    numbers = PositionSpout.spec()
    count = CheckpointedCount.spec(inputs={numbers: Grouping.fields("key")}, par=2)


@pytest.fixture
def drivers(spark: Any, tmp_path: Path) -> Iterator[Any]:
    """Start drivers of ``CountTopology`` under one topology id; stop them all at the end."""
    started: list[TopologyDriver] = []

    def start(**conf: Any) -> TopologyDriver:
        spec = topology_spec_of(CountTopology)
        merged = load_config(cli=dict(TEST_CONF), topology={
            **spec.config, "topology.name": "fallback", "test.dir": str(tmp_path),
            "test.count": COUNT, "topology.checkpoint.windows": 2,
            "topology.checkpoint.dir": str(tmp_path / "checkpoints"),
            # few trees at a time: the first checkpoints hold a part of the ids
            "topology.max.spout.pending": 40, **conf})
        driver = TopologyDriver("fallback", spec, merged, TOPOLOGY_ID)  # kept, as a worker's
        started.append(driver)
        driver.start(spark)
        return driver
    yield start
    for driver in started:
        driver.stop(60)
    assert all(d.stopped.is_set() for d in started)


def _store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(str(tmp_path / "checkpoints"), TOPOLOGY_ID)


def _read(store: CheckpointStore, driver: TopologyDriver, window: int
          ) -> tuple[set[int], dict[str, int]]:
    """The spout's acked ids and the counts in checkpoint ``window`` (read verified)."""
    acked: set[int] = set()
    counts: dict[str, int] = {}
    for executor in driver.plan.executors:
        part = ExecutorPart.decode(store.read_part(window, part_name(executor.gid)))
        for blob in part.tasks.values():
            data = read_snapshot(blob)["data"]
            if executor.component == "numbers":
                acked |= data["acked"]
            else:
                for key, n in data.items():
                    counts[key] = counts.get(key, 0) + n
    return acked, counts


def _finish_exactly(store: CheckpointStore, driver: TopologyDriver) -> None:
    """A committed checkpoint acks every id, with exact counts."""
    def complete() -> tuple[set[int], dict[str, int]] | None:
        assert driver.failure is None, driver.failure
        window = store.latest_committed()
        try:
            found = _read(store, driver, window) if window is not None else None
        except CheckpointError:  # purged under our feet by a newer commit
            return None
        return found if found is not None and len(found[0]) == COUNT else None
    acked, counts = wait_for(complete, 120, message="a checkpoint with every id acked")
    assert acked == set(range(COUNT)) and counts == EXPECTED


def _no_ack_twice(tmp_path: Path) -> None:
    again = [e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "ack"
             and e["again"]]
    assert again == []


def _two_commits(store: CheckpointStore) -> list[int]:
    def two() -> list[int] | None:
        committed = store.committed_windows()
        return committed[-2:] if len(committed) >= 2 else None
    found: list[int] = wait_for(two, 60, message="two committed checkpoints")
    return found


def _corrupt(store: CheckpointStore, window: int, name: str) -> None:
    """Flip one byte of a part, as a bad disk would."""
    path = Path(store.base) / f"{window:012d}" / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _count_part(driver: TopologyDriver) -> str:
    return part_name(next(e.gid for e in driver.plan.executors if e.component == "count"))


def _modes(folder: Path) -> tuple[set[int], set[int]]:
    """The permission bits of every folder and every file under ``folder`` (itself too)."""
    folders, files = {stat.S_IMODE(folder.stat().st_mode)}, set()
    for path in folder.rglob("*"):
        (folders if path.is_dir() else files).add(stat.S_IMODE(path.stat().st_mode))
    return folders, files


def test_a_corrupt_newest_checkpoint_falls_back_to_the_one_before(
        drivers: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = _store(tmp_path)
    running = drivers()
    older, newest = _two_commits(store)
    # a rollback must meet this pair: no commit from now on until the executor is killed
    coordinator = running.checkpointing.coordinator
    coordinator.commit_ready = lambda: None
    after = running.window + 2  # a commit under way when it was replaced has ended then
    wait_for(lambda: running.window >= after, 30, message="two more windows")
    older, newest = store.committed_windows()[-2:]
    assert len(_read(store, running, older)[0]) < COUNT, "the ids after it must replay"
    assert _modes(tmp_path / "checkpoints") == ({0o700}, {0o600})
    _corrupt(store, newest, _count_part(running))
    caplog.set_level(logging.INFO, logger="sparkstorm.engine.driver")
    count_gid = next(e.gid for e in running.plan.executors if e.component == "count")
    os.kill(running.pool.pids()[count_gid], signal.SIGKILL)
    wait_for(lambda: running.stats.rollbacks >= 1, 60, message="a rollback")
    del coordinator.commit_ready  # commits go on
    assert f"rolled back to checkpoint {older}" in caplog.text, caplog.text
    _finish_exactly(store, running)
    assert newest not in store.windows() or store.problem(newest) is None, \
        "the corrupt one is deleted (a new one may take its window)"
    _no_ack_twice(tmp_path)


def test_a_restarted_driver_falls_back_past_a_corrupt_newest_checkpoint(
        drivers: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = _store(tmp_path)
    first = drivers()
    _two_commits(store)
    first.stop(60)  # the worker's driver stopped: its checkpoints are kept
    older, newest = store.committed_windows()[-2:]
    assert len(_read(store, first, older)[0]) < COUNT, "the ids after it must replay"
    _corrupt(store, newest, _count_part(first))
    caplog.set_level(logging.INFO, logger="sparkstorm.engine.driver")
    second = drivers()
    _finish_exactly(store, second)
    assert f"rolled back to checkpoint {older}" in caplog.text, caplog.text
    _no_ack_twice(tmp_path)


def test_every_kept_checkpoint_corrupt_stops_the_topology_unless_told_to_start_empty(
        drivers: Any, tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = drivers()
    _two_commits(store)
    first.stop(60)
    kept = store.committed_windows()
    assert len(kept) == 2, "topology.checkpoint.keep: 2"
    for window in kept:
        _corrupt(store, window, _count_part(first))
    refused = drivers()
    wait_for(refused.stopped.is_set, 60, message="the topology stops")
    assert isinstance(refused.failure, CheckpointError), refused.failure
    assert refused.failure.code == "CHECKPOINT_UNUSABLE"
    assert all(f"window {w}" in str(refused.failure) for w in kept), refused.failure
    assert refused.pool.pids() == {} or not any(
        _alive(pid) for pid in refused.pool.pids().values()), "its executors stopped"
    assert store.committed_windows() == kept, "left for the operator"
    empty = drivers(**{"topology.checkpoint.start.empty": True})
    _finish_exactly(store, empty)  # the spout started over too: every id once
    assert isinstance(empty.checkpointing, WindowCheckpoints)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
