"""The scheduler's slot order, executor ids and the error code table."""

from __future__ import annotations

from sparkstorm.cluster.nimbus.assigner import topology_executors
from sparkstorm.cluster.nimbus.errors import CODES, NimbusError
from sparkstorm.cluster.nimbus.scheduler import EvenScheduler, sort_slots
from sparkstorm.cluster.state.records import WorkerSlot


def test_slots_interleave_across_supervisors_most_free_first() -> None:
    free = [WorkerSlot("b", 6701), WorkerSlot("a", 6702), WorkerSlot("b", 6700),
            WorkerSlot("a", 6700), WorkerSlot("a", 6701), WorkerSlot("c", 6700)]
    assert sort_slots(free) == [
        WorkerSlot("a", 6700), WorkerSlot("b", 6700), WorkerSlot("c", 6700),
        WorkerSlot("a", 6701), WorkerSlot("b", 6701), WorkerSlot("a", 6702)]


def test_even_scheduler_uses_num_workers_slots_and_nothing_when_none_is_free() -> None:
    executors = [(1, 1), (2, 3), (4, 4)]
    free = [WorkerSlot("a", 6700), WorkerSlot("b", 6700)]
    assert set(EvenScheduler().schedule(executors, 1, free).values()) == {free[0]}
    assert len(set(EvenScheduler().schedule(executors, 2, free).values())) == 2
    assert EvenScheduler().schedule(executors, 1, []) == {}


def test_executor_ids_split_tasks_per_component_sorted_by_id_after_the_ackers() -> None:
    spec = {"components": [{"name": "spout", "par": 1, "num_tasks": 1},
                           {"name": "bolt", "par": 2, "num_tasks": 5}]}
    assert topology_executors(spec, {"topology.acker.executors": 2}) == \
        [(3, 5), (6, 7), (8, 8)]
    assert topology_executors(spec, {"topology.acker.executors": 0}) == \
        [(1, 3), (4, 5), (6, 6)]


def test_error_codes_are_sorted_unique_upper_snake_with_statuses() -> None:
    codes = list(CODES)
    assert codes == sorted(codes) and len(codes) == len(set(codes))
    assert all(c.replace("_", "").isalpha() and c.isupper() for c in codes)
    assert NimbusError("x", code="UPLOAD_TOO_LARGE").status == 413
