"""Task snapshots: instance state minus transient and engine attributes.

__getstate__ and __setstate__ honoured, stateful bolts by their state, CHECKPOINT_UNPICKLABLE named.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from sparkstorm import Bolt, StatefulBolt
from sparkstorm.checkpoint import CheckpointError, restore_task, task_snapshot
from sparkstorm.checkpoint.snapshot import instance_state
from sparkstorm.state.lifecycle import StatefulTask
from sparkstorm.state.memory import InMemoryStateProvider
from sparkstorm.topology.windowed_bolts import Count, window_conf
from tests.unit.topology.windowed_bolts.fakes import Recorder, Source, attach


class Connected(Bolt):
    transient = ("connection",)

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.connection = threading.Lock()  # stands for a socket: cannot pickle
        self.counts: dict[str, int] = {}
        self.seen = 0


class MoreConnected(Connected):
    transient = ("cursor",)

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        super().initialize(conf, context)
        self.cursor = threading.Lock()


def started(cls: type) -> Any:
    bolt = cls()
    attach(bolt, {})
    return bolt


def test_instance_state_round_trips_without_transient_and_engine_attributes() -> None:
    bolt = started(MoreConnected)
    bolt.counts, bolt.seen = {"storm": 3, "spark": 1}, 4
    assert set(instance_state(bolt)) == {"counts", "seen"}
    blob = task_snapshot(bolt, component="count", task=7)

    fresh = started(MoreConnected)  # as after a restart: set up, initialized, then restored
    connection = fresh.connection
    restore_task(fresh, blob, component="count", task=7)
    assert fresh.counts == {"storm": 3, "spark": 1} and fresh.seen == 4
    assert fresh.connection is connection  # transient: kept from initialize()
    assert fresh._collector is not bolt._collector  # engine attributes are never restored


class Custom(Bolt):
    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.total = 0
        self.lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"total": self.total}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.total = state["total"] * 1  # proves it was called: see the marker below
        self.restored_by_setstate = True


def test_getstate_and_setstate_are_honoured() -> None:
    bolt = started(Custom)
    bolt.total = 42
    blob = task_snapshot(bolt, component="sum", task=1)
    fresh = started(Custom)
    restore_task(fresh, blob, component="sum", task=1)
    assert fresh.total == 42 and fresh.restored_by_setstate


class Leaky(Bolt):
    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.counts = {"a": 1}
        self.handle = threading.Lock()


def test_unpicklable_attribute_names_component_task_attribute_and_type() -> None:
    with pytest.raises(CheckpointError) as caught:
        task_snapshot(started(Leaky), component="leaky", task=5)
    err = caught.value
    assert err.code == "CHECKPOINT_UNPICKLABLE"
    text = str(err)
    assert "'leaky'" in text and "task 5" in text and "'handle'" in text and "lock" in text
    assert "transient" in text


class WordCount(StatefulBolt):
    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.lock = threading.Lock()  # not state: not in a stateful bolt's snapshot

    def init_state(self, state: Any) -> None:
        self.counts = state


def test_stateful_bolt_snapshot_is_its_state() -> None:
    bolt = started(WordCount)
    task = StatefulTask.start(bolt, InMemoryStateProvider(), "count-2")
    bolt.counts.put("storm", 2)
    blob = task_snapshot(bolt, component="count", task=2, stateful=True,
                         state_snapshot=task.prepare(9))
    task.commit(9)

    fresh = started(WordCount)
    data = restore_task(fresh, blob, component="count", task=2)
    StatefulTask.start(fresh, InMemoryStateProvider(), "count-2", data, committed_txid=9)
    assert dict(fresh.counts) == {"storm": 2}


def test_windowed_bolt_resumes_from_its_snapshot() -> None:
    conf = window_conf(Count(4), Count(2))
    bolt, twin = Recorder(), Recorder()
    attach(bolt, conf)
    attach(twin, conf)
    source = Source()
    for i in range(5):
        bolt.process(source.tuple(i))
    blob = task_snapshot(bolt, component="windowed", task=1)
    restore_task(twin, blob, component="windowed", task=1)
    for target in (bolt, twin):
        for i in range(5, 9):
            target.process(source.tuple(i))
    assert twin.windows == bolt.windows
    assert [w["get"] for w in twin.windows] == [[0, 1], [0, 1, 2, 3], [2, 3, 4, 5],
                                                [4, 5, 6, 7]]


def test_snapshot_of_another_task_is_refused() -> None:
    blob = task_snapshot(started(Connected), component="count", task=1)
    with pytest.raises(CheckpointError) as caught:
        restore_task(started(Connected), blob, component="count", task=2)
    assert caught.value.code == "CHECKPOINT_CORRUPT"
