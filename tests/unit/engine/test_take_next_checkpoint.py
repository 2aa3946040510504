"""A drain's last checkpoint: ``CheckpointCoordinator.take_next``, one at a time still."""

from __future__ import annotations

from sparkstorm.checkpoint import CheckpointStore
from sparkstorm.engine.driver.checkpoint_coordinator import CheckpointCoordinator, EngineState


def _coordinator(name: str) -> tuple[CheckpointCoordinator, CheckpointStore]:
    store = CheckpointStore("memory://take-next", name)
    return CheckpointCoordinator(1000, store, ["executor-0"]), store


def test_take_next_makes_the_next_window_take_a_checkpoint() -> None:
    coordinator, store = _coordinator("next")
    assert not coordinator.due(5), "every 1000 windows: not before window 999"
    coordinator.take_next()
    assert coordinator.due(5)
    coordinator.begin(5, EngineState().encode())
    coordinator.arrived(5, store.write_part(5, "executor-0", b"tasks"))
    assert coordinator.commit_ready() == 5 and coordinator.committed == 5
    assert not coordinator.due(6), "and then every 1000 windows again"


def test_take_next_waits_for_the_checkpoint_in_flight_and_its_announcement() -> None:
    coordinator, store = _coordinator("in-flight")
    coordinator.take_next()
    coordinator.begin(1, EngineState().encode())  # in flight, its part not there yet
    coordinator.take_next()
    assert not coordinator.due(2), "one checkpoint at a time"
    coordinator.arrived(1, store.write_part(1, "executor-0", b"tasks"))
    assert coordinator.commit_ready() == 1
    assert not coordinator.due(3), "its commit is announced first"
    assert coordinator.take_announcement() == 1
    assert coordinator.due(3)
