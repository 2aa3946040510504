"""Rollback targets: the last K committed checkpoints kept, a corrupt newest one skipped.

``CheckpointCoordinator`` on an in-memory store; the same on real Spark and executors is
``tests/integration/spark/test_checkpoint_fallback.py``.
"""

from __future__ import annotations

import uuid

import pytest

from sparkstorm.checkpoint import CheckpointError, CheckpointStore
from sparkstorm.engine.driver.checkpoint_coordinator import CheckpointCoordinator, EngineState
from sparkstorm.engine.driver.checkpoints import outside_state


def _coordinator(**options: object) -> tuple[CheckpointCoordinator, CheckpointStore]:
    store = CheckpointStore(f"memory://fallback-{uuid.uuid4().hex}", "wc-1-1")
    return CheckpointCoordinator(1, store, ["executor-0"], **options), store  # type: ignore[arg-type]


def _commit(coordinator: CheckpointCoordinator, store: CheckpointStore, window: int) -> None:
    coordinator.take_announcement()
    assert coordinator.due(window)
    coordinator.begin(window, EngineState().encode())
    coordinator.arrived(window, store.write_part(window, "executor-0", b"tasks"))
    assert coordinator.commit_ready() == window


def _corrupt(store: CheckpointStore, window: int) -> None:
    with store.fs.open(f"{store.base}/{window:012d}/executor-0", "wb") as handle:
        handle.write(b"rotten")


def test_commits_keep_the_newest_k_and_a_rollback_falls_back_past_a_corrupt_one() -> None:
    coordinator, store = _coordinator(keep=2)
    for window in (1, 2, 3):
        _commit(coordinator, store, window)
    assert store.committed_windows() == [2, 3] and coordinator.kept == [2, 3]
    _corrupt(store, 3)
    assert coordinator.rollback_target() == 2
    assert store.windows() == [2], "the corrupt one is deleted: windows after 2 write anew"
    assert coordinator.committed == 2 and coordinator.kept == [2]


def test_with_every_kept_checkpoint_corrupt_the_rollback_raises_and_deletes_nothing() -> None:
    coordinator, store = _coordinator(keep=2)
    for window in (1, 2):
        _commit(coordinator, store, window)
    _corrupt(store, 1)
    _corrupt(store, 2)
    with pytest.raises(CheckpointError) as caught:
        coordinator.rollback_target()
    assert caught.value.code == "CHECKPOINT_UNUSABLE"
    assert store.committed_windows() == [1, 2], "left for the operator to look at"


def test_start_empty_deletes_the_unusable_checkpoints_and_starts_from_scratch() -> None:
    coordinator, store = _coordinator(keep=2, start_empty=True)
    for window in (1, 2):
        _commit(coordinator, store, window)
    _corrupt(store, 1)
    _corrupt(store, 2)
    assert coordinator.rollback_target() is None
    assert store.windows() == [], "new checkpoints must not sort below the unusable ones"


def test_state_kept_outside_the_checkpoints_cannot_fall_back() -> None:
    coordinator, store = _coordinator(keep=2, outside_state="redis (topology.state.provider)")
    for window in (1, 2):
        _commit(coordinator, store, window)
    assert coordinator.rollback_target() == 2, "the newest one is fine with Redis"
    _commit(coordinator, store, 3)
    _corrupt(store, 3)
    with pytest.raises(CheckpointError) as caught:
        coordinator.rollback_target()
    assert caught.value.code == "CHECKPOINT_UNUSABLE"
    assert "redis" in str(caught.value)


def test_only_a_state_provider_other_than_memory_keeps_state_outside() -> None:
    assert outside_state({}) is None
    assert outside_state({"topology.state.provider":
                          "org.apache.storm.state.InMemoryKeyValueStateProvider"}) is None
    assert outside_state({"topology.state.provider": "redis"}) == \
        "redis (topology.state.provider)"
