"""A rebalance keeps what stays: the decision of ``cluster.nimbus.staying``."""

from __future__ import annotations

from sparkstorm.cluster.nimbus.scheduler import EvenScheduler
from sparkstorm.cluster.nimbus.staying import keep_staying
from sparkstorm.cluster.state.records import Assignment, ExecutorId, WorkerSlot

A, B, C = WorkerSlot("s1", 6700), WorkerSlot("s2", 6700), WorkerSlot("s3", 6700)
EXECUTORS: list[ExecutorId] = [(n, n) for n in range(2, 7)]
"""The chaos topology's: spout (2, 2), relays 3-4, sinks 5-6."""


def _two_workers() -> Assignment:
    slots = {(2, 2): A, (4, 4): A, (6, 6): A, (3, 3): B, (5, 5): B}
    return Assignment("t", slots, dict.fromkeys(slots, 100), {A: "driver", B: "host"})


def _on(placed: dict[ExecutorId, WorkerSlot], slot: WorkerSlot) -> list[ExecutorId]:
    return sorted(e for e, s in placed.items() if s == slot)


def test_down_to_one_worker_keeps_the_driver_s_worker_and_takes_the_others_executors() -> None:
    kept = keep_staying(_two_workers(), EXECUTORS, 1, [A, B, C], set())
    assert kept is not None
    assert kept.workers == {A: "driver"}
    assert _on(kept.placed, A) == EXECUTORS
    assert kept.started == {(2, 2): 100, (4, 4): 100, (6, 6): 100}, "only the stayers' times"


def test_back_up_to_two_keeps_the_lowest_executors_and_moves_the_rest_to_a_new_slot() -> None:
    one = Assignment("t", dict.fromkeys(EXECUTORS, A), dict.fromkeys(EXECUTORS, 100),
                     {A: "driver"})
    kept = keep_staying(one, EXECUTORS, 2, [A, B, C], set(),
                        schedule=EvenScheduler().schedule)
    assert kept is not None and kept.workers == {A: "driver"}
    assert _on(kept.placed, A) == [(2, 2), (3, 3), (4, 4)], "the spout does not move"
    (new_slot,) = set(kept.placed.values()) - {A}
    assert new_slot in (B, C) and _on(kept.placed, new_slot) == [(5, 5), (6, 6)]


def test_an_unchanged_worker_count_changes_nothing() -> None:
    old = _two_workers()
    kept = keep_staying(old, EXECUTORS, 2, [A, B, C], set())
    assert kept is not None
    assert kept.placed == old.executor_slots and kept.workers == old.worker_ids


def test_a_dead_worker_does_not_stay_and_its_executors_move() -> None:
    kept = keep_staying(_two_workers(), EXECUTORS, 2, [A, C], {B})  # B's host is gone
    assert kept is not None and kept.workers == {A: "driver"}
    assert _on(kept.placed, A) == [(2, 2), (4, 4), (6, 6)]
    assert _on(kept.placed, C) == [(3, 3), (5, 5)]
    silent = keep_staying(_two_workers(), EXECUTORS, 2, [A, B, C], {B})  # B's worker hung
    assert silent is not None and silent.workers == {A: "driver"}, "B gets a new worker id"


def test_a_dead_driver_worker_means_a_fresh_placement() -> None:
    assert keep_staying(_two_workers(), EXECUTORS, 1, [A, B, C], {A}) is None
    assert keep_staying(_two_workers(), EXECUTORS, 1, [B, C], set()) is None, "slot taken"


def test_without_a_free_slot_the_staying_workers_take_the_moved_executors() -> None:
    one = Assignment("t", dict.fromkeys(EXECUTORS, A), {}, {A: "driver"})
    kept = keep_staying(one, EXECUTORS, 3, [A], set())
    assert kept is not None and set(kept.placed.values()) == {A}
    assert sorted(kept.placed) == EXECUTORS


def test_the_driver_keeps_the_lowest_executor_even_when_it_lived_elsewhere() -> None:
    slots = {(2, 2): B, (3, 3): A, (4, 4): A, (5, 5): B, (6, 6): A}
    # driver_slot() is the lowest executor's: B here
    old = Assignment("t", slots, {}, {A: "host", B: "driver"})
    kept = keep_staying(old, EXECUTORS, 1, [A, B], set())
    assert kept is not None and kept.workers == {B: "driver"}
    assert _on(kept.placed, B) == EXECUTORS
