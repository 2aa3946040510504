"""Nimbus's collaborators built alone, from the parts they use (no Nimbus object).

The cleaner, the monitor's due kills and rebalances, the umbilical, and the monitor's timings.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkstorm.cluster.nimbus.assigner import Assigner, MonitorTimes
from sparkstorm.cluster.nimbus.cleaner import Cleaner
from sparkstorm.cluster.nimbus.inbox import Inbox
from sparkstorm.cluster.nimbus.scheduler import EvenScheduler
from sparkstorm.cluster.nimbus.stormdist import StormDist
from sparkstorm.cluster.nimbus.umbilical import Umbilical
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.embedded import EmbeddedStore
from sparkstorm.cluster.store.records import StormBase, TopologyStatus
from tests.fakes import FakeClock


@pytest.fixture
def state(tmp_path: Path) -> Iterator[ClusterState]:
    with EmbeddedStore(tmp_path / "store.sqlite", background=False) as store:
        yield ClusterState(store)


@pytest.fixture
def stormdist(tmp_path: Path) -> StormDist:
    return StormDist(tmp_path / "nimbus" / "stormdist")


def test_monitor_times_come_from_the_conf_with_declared_defaults() -> None:
    assert MonitorTimes.from_conf({}) == MonitorTimes(10.0, 30.0, 120.0)
    assert MonitorTimes.from_conf({"nimbus.task.timeout.secs": 0}).task_timeout == 0.0


def test_the_cleaner_alone_drops_expired_uploads_and_leftover_topologies(
        tmp_path: Path, state: ClusterState, stormdist: StormDist) -> None:
    inbox = Inbox(tmp_path / "nimbus" / "inbox", 1 << 20)
    old, fresh = inbox.begin(), inbox.begin()
    now = os.stat(inbox.folder / f"{fresh}.part").st_mtime
    os.utime(inbox.folder / f"{old}.part", (now - 100, now - 100))
    (stormdist.root / "gone-1-1").mkdir()
    state.setup_heartbeats("gone-1-1")
    cleaner = Cleaner(state, inbox, stormdist, threading.RLock(), expiration_secs=50,
                      period_secs=600, clock=FakeClock(now))
    assert cleaner.clean_inbox() == [f"{old}.part"]
    assert cleaner.clean_dead_topologies() == ["gone-1-1"]
    assert stormdist.topology_ids() == [] and state.heartbeat_storms() == []


def test_the_monitor_alone_hands_due_kills_and_rebalances_to_its_callbacks(
        state: ClusterState, stormdist: StormDist) -> None:
    clock = FakeClock(1000.0)
    removed: list[str] = []
    rebalanced: list[str] = []
    assigner = Assigner(state, stormdist, EvenScheduler(), threading.RLock(),
                        MonitorTimes(10, 30, 120), clock=clock,
                        on_kill_due=removed.append, on_rebalance_due=rebalanced.append)
    state.set_storm("k-1-1", StormBase("k", TopologyStatus.KILLED, 1, 1,
                                       action_options={"kill_at": 1005}))
    state.set_storm("r-2-1", StormBase("r", TopologyStatus.REBALANCING, 1, 1,
                                       action_options={"rebalance_at": 1010}))
    assigner.check_all()
    assert (removed, rebalanced) == ([], []), "neither is due yet"
    clock.advance(5)
    assigner.check_all()
    assert (removed, rebalanced) == (["k-1-1"], [])
    clock.advance(5)
    assigner.check_all()
    assert rebalanced == ["r-2-1"]


def test_the_umbilical_alone_tells_an_unassigned_worker_to_shut_down(
        state: ClusterState, stormdist: StormDist) -> None:
    umbilical = Umbilical(state, stormdist, FakeClock())
    answer = umbilical.heartbeat("nobody", {"topology_id": "t-1-1"})
    assert answer["shutdown"] is True and answer["active"] is False
    assert state.heartbeat_storms() == [], "nothing stored for a stranger"
