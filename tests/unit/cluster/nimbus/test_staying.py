"""A rebalance keeps what stays: the decision of ``cluster.nimbus.staying``."""

from __future__ import annotations

from sparkstorm.cluster.nimbus.scheduler import EvenScheduler
from sparkstorm.cluster.nimbus.staying import keep_in_place, keep_staying
from sparkstorm.cluster.store.records import Assignment, ExecutorId, WorkerSlot

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


# --- rebalance -e: keep_in_place --------------------------------------------------------


def test_new_counts_keep_every_worker_and_each_staying_executor_in_its_slot() -> None:
    old = _two_workers()
    relays_as_one: list[ExecutorId] = [(2, 2), (3, 4), (5, 5), (6, 6)]
    kept = keep_in_place(old, relays_as_one, [A, B, C], set())
    assert kept is not None and kept.workers == old.worker_ids
    assert {e: kept.placed[e] for e in ((2, 2), (5, 5), (6, 6))} == \
        {(2, 2): A, (5, 5): B, (6, 6): A}, "the staying executors do not move"
    assert kept.placed[(3, 4)] == B, "the new one goes to the least loaded worker"
    assert kept.started == {(2, 2): 100, (5, 5): 100, (6, 6): 100}


def test_arriving_executors_spread_over_the_least_loaded_workers() -> None:
    one_relay = Assignment("t", {(2, 2): A, (3, 4): B, (5, 5): B, (6, 6): A},
                           dict.fromkeys([(2, 2), (3, 4), (5, 5), (6, 6)], 100),
                           {A: "driver", B: "host"})
    kept = keep_in_place(one_relay, EXECUTORS, [A, B], set())
    assert kept is not None
    assert {kept.placed[(3, 3)], kept.placed[(4, 4)]} == {A, B}, "one each: 3 and 3"
    assert kept.placed[(5, 5)] == B and kept.placed[(2, 2)] == A


def test_a_new_lowest_executor_goes_to_the_driver_s_worker() -> None:
    old = Assignment("t", {(2, 3): B, (4, 4): A, (5, 5): A}, dict.fromkeys([(2, 3)], 1),
                     {A: "host", B: "driver"})
    assert old.driver_slot() == B
    kept = keep_in_place(old, [(2, 2), (3, 3), (4, 4), (5, 5)], [A, B], set())
    assert kept is not None and kept.placed[(2, 2)] == B
    assert kept.workers == old.worker_ids


def test_new_counts_are_not_taken_in_place_with_a_dead_or_missing_worker() -> None:
    old = _two_workers()
    fewer: list[ExecutorId] = [(2, 2), (3, 4), (5, 5), (6, 6)]
    assert keep_in_place(old, fewer, [A, B, C], {B}) is None, "B's host is gone"
    assert keep_in_place(old, fewer, [A, C], set()) is None, "B's slot is not usable"
