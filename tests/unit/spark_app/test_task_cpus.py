"""How many CPUs a hosting task holds (``SparkHosting.task_cpus``), without Spark."""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.config import load_config
from sparkstorm.errors import EngineError
from sparkstorm.spark_app.hosting import DriverSide, SparkHosting
from tests.unit.spark_app.test_hosting_link import Relay


def _hosting(**conf: Any) -> SparkHosting:
    merged = load_config(topology={"topology.workers": 2, **conf})
    return SparkHosting("relay", Relay.topology_spec, merged, "k",
                        DriverSide(lambda reported, tags: None))


def test_a_task_holds_one_cpu_per_executor_process_of_the_largest_share() -> None:
    assert _hosting().task_cpus({"b": 8, "c": 8}, 1, local=False) == 3  # shares of 3 and 2


def test_the_configured_count_wins() -> None:
    hosting = _hosting(**{"topology.executor.hosting.cpus": 2})
    assert hosting.task_cpus({"b": 8}, 1, local=False) == 2


def test_windows_keep_a_slot_on_the_smallest_executor() -> None:
    assert _hosting().task_cpus({"b": 8, "c": 3}, 1, local=False) == 2
    assert _hosting().task_cpus({"b": 4}, 2, local=False) == 2


def test_executors_too_small_for_a_hosting_task_and_a_window_are_an_error() -> None:
    with pytest.raises(EngineError) as caught:
        _hosting().task_cpus({"b": 1}, 1, local=False)
    assert caught.value.code == "HOSTING_NO_WINDOW_SLOTS"


def test_a_local_master_reserves_one_slot_and_unknown_cores_keep_the_wish() -> None:
    assert _hosting().task_cpus({}, 1, local=True) == 1
    assert _hosting().task_cpus({}, 1, local=False) == 3


def test_a_local_master_keeps_a_slot_for_windows() -> None:
    _hosting().check_local_slots(3)  # two shares, one slot left
    with pytest.raises(EngineError) as caught:
        _hosting().check_local_slots(2)
    assert caught.value.code == "HOSTING_NO_WINDOW_SLOTS"
