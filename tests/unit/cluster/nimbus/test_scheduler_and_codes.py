"""The scheduler's slot order, executor ids and the error code table."""

from __future__ import annotations

import re
from pathlib import Path

import sparkstorm.cluster.nimbus as nimbus_package
from sparkstorm.cluster.nimbus.assigner import topology_executors
from sparkstorm.cluster.nimbus.errors import CODES, DEFAULT_STATUS, NimbusError, status_of
from sparkstorm.cluster.nimbus.scheduler import EvenScheduler, sort_slots
from sparkstorm.cluster.store.records import WorkerSlot
from sparkstorm.errors import ConfigError


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


def test_every_code_nimbus_raises_has_its_own_status() -> None:
    """Every code Nimbus raises has its own HTTP status.

    A code missing from CODES would silently answer 400: every ``NimbusError(..., code="X")`` in the
    nimbus package must name a declared code.
    """
    raised: set[str] = set()
    for path in Path(nimbus_package.__file__).parent.glob("*.py"):
        raised |= set(re.findall(r'NimbusError\([^()]*?code="([A-Z_]+)"', path.read_text()))
    assert {"UPLOAD_TOO_LARGE", "TOPOLOGY_NOT_FOUND"} <= raised, "the scan finds the raises"
    assert sorted(raised - set(CODES)) == []
    assert list(CODES) == sorted(CODES), "kept sorted, so a reader finds a code"


def test_statuses_of_nimbus_and_validation_errors() -> None:
    assert NimbusError("x", code="UPLOAD_TOO_LARGE").status == 413
    assert NimbusError("x", code="TOPOLOGY_ALREADY_ALIVE").status == 409
    assert status_of(ConfigError("x", code="CONFIG_WRONG_TYPE")) == DEFAULT_STATUS == 400
