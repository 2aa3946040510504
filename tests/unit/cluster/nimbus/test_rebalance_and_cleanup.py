"""Rebalance, the restart grace of the monitor and the cleaner.

On an embedded store with a fake clock. No HTTP, no Spark.
"""

from __future__ import annotations

import os

import pytest

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import TopologyStatus
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import only_worker, register, submit


@pytest.mark.usefixtures("two_components")
def test_rebalance_waits_deactivated_then_reassigns_with_the_new_counts(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    first = only_worker(state, topology_id)
    nimbus.rebalance(topology_id, 10, None, {"split": 3})
    base = state.get_storm(topology_id)
    assert base is not None and base.status == TopologyStatus.REBALANCING
    answer = nimbus.umbilical.heartbeat(first, {"topology_id": topology_id})
    assert answer["active"] is False and answer["rebalance"]["num_executors"] == {"split": 3}
    with pytest.raises(NimbusError) as caught:
        nimbus.rebalance(topology_id, 0, None, {"split": 2})
    assert caught.value.code == "TOPOLOGY_BEING_REBALANCED"
    nimbus.assigner.check_all()
    assert only_worker(state, topology_id) == first, "not before the wait is over"
    clock.now += 11
    nimbus.assigner.check_all()
    base = state.get_storm(topology_id)
    assert base is not None and base.status == TopologyStatus.ACTIVE
    assert base.component_executors["split"] == 3 and base.action_options == {}
    # one worker: it stays, and its driver regroups the executors in place
    assert only_worker(state, topology_id) == first
    context = nimbus.umbilical.init_context(first, topology_id)
    assert {c["name"]: c["par"] for c in context["spec"]["components"]} == {"word": 1,
                                                                           "split": 3}
    answer = nimbus.umbilical.heartbeat(first, {"topology_id": topology_id})
    assert not answer["shutdown"]
    assert answer["executor_counts"] == {"word": 1, "split": 3}
    assignment = state.get_assignment(topology_id)
    assert assignment is not None
    assert sorted(map(tuple, answer["executors"])) == sorted(assignment.executor_slots)
    assert len(assignment.executor_slots) == 4, "one word, three split"


@pytest.mark.usefixtures("two_components")
def test_new_counts_on_two_workers_keep_the_workers_and_relay_the_driver_s_plan(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700, 6701)
    topology_id = submit(nimbus)
    nimbus.rebalance(topology_id, 0, 2, None)
    before = state.get_assignment(topology_id)
    assert before is not None and len(before.worker_ids) == 2
    nimbus.rebalance(topology_id, 0, None, {"split": 2})
    after = state.get_assignment(topology_id)
    assert after is not None
    assert after.worker_ids == before.worker_ids, "regrouped in place (engine.plan.regroup)"
    driver_slot = after.driver_slot()
    assert driver_slot is not None
    driver = after.worker_ids[driver_slot]
    (host,) = set(after.worker_ids.values()) - {driver}
    answer = nimbus.umbilical.heartbeat(host, {"topology_id": topology_id, "stats": {}})
    assert answer["driver_plan"] is None, "the driver has not said what it runs yet"
    nimbus.umbilical.heartbeat(driver, {"topology_id": topology_id, "stats": {
        "executor_counts": {"word": 1, "split": 2}, "plan_tag": "split=2,word=1"}})
    answer = nimbus.umbilical.heartbeat(host, {"topology_id": topology_id, "stats": {}})
    assert answer["driver_plan"] == {"executor_counts": {"word": 1, "split": 2},
                                     "plan_tag": "split=2,word=1"}
    assert answer["executor_counts"] == {"word": 1, "split": 2}
    assert "driver_plan" not in nimbus.umbilical.heartbeat(driver, {"topology_id": topology_id})


@pytest.mark.usefixtures("two_components")
@pytest.mark.parametrize(("executors", "workers", "code"), [
    ({"split": 5}, None, "PARALLELISM_ABOVE_TASKS"),
    ({"nope": 1}, None, "REBALANCE_UNKNOWN_COMPONENT"),
    ({"split": 0}, None, "REBALANCE_INVALID"),
    ({}, 0, "REBALANCE_INVALID"),
])
def test_bad_rebalances_are_refused_and_change_nothing(
        nimbus: Nimbus, state: ClusterState, executors: dict[str, int], workers: int | None,
        code: str) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    before = (state.get_storm(topology_id), state.get_assignment(topology_id),
              nimbus.topology_spec(topology_id))
    with pytest.raises(NimbusError) as caught:
        nimbus.rebalance(topology_id, 0, workers, executors)
    assert caught.value.code == code
    assert before == (state.get_storm(topology_id), state.get_assignment(topology_id),
                      nimbus.topology_spec(topology_id))


def test_a_restarted_nimbus_gives_workers_a_full_timeout(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    worker_id = only_worker(state, topology_id)
    nimbus.umbilical.heartbeat(worker_id, {"topology_id": topology_id})
    clock.now += 100  # Nimbus was down for 100 s; the worker's beats went nowhere
    restarted = Nimbus(nimbus.conf, state, clock=clock)
    restarted.assigner.check_all()
    assert only_worker(state, topology_id) == worker_id
    clock.now += 31
    restarted.assigner.check_all()
    assert only_worker(state, topology_id) != worker_id, "still silent after a full timeout"


def test_cleaner_drops_expired_uploads_and_dead_topologies(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700)
    alive = submit(nimbus)
    dead = submit(nimbus, "dead")
    state.teardown_topology(dead)  # as if Nimbus died before deleting the files
    (nimbus.stormdist.root / ".x-1-1.tmp").mkdir()
    old, fresh = nimbus.inbox.begin(), nimbus.inbox.begin()
    os.utime(nimbus.inbox.folder / f"{old}.part", (0, clock.now - 3601))
    os.utime(nimbus.inbox.folder / f"{fresh}.part", (0, clock.now - 10))
    assert nimbus.cleaner.clean_inbox() == [f"{old}.part"]
    assert nimbus.cleaner.clean_dead_topologies() == [dead]
    assert nimbus.stormdist.topology_ids() == [alive]
    assert not (nimbus.stormdist.root / ".x-1-1.tmp").exists()
    with pytest.raises(NimbusError) as caught:
        nimbus.inbox.chunk(old, b"x")
    assert caught.value.code == "NO_SUCH_UPLOAD"
    nimbus.inbox.chunk(fresh, b"x")
