"""``topology.workers``: Nimbus spreads the executors over that many slots.

It names the one worker that runs the driver and passes the other workers' endpoints to it.
"""

from __future__ import annotations

import pytest

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import register, submit

pytestmark = pytest.mark.usefixtures("two_components")  # a spout and a bolt executor


def test_two_workers_split_the_executors_and_one_runs_the_driver(
        nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    register(state, "s2", 6700)
    topology_id = submit(nimbus, conf={"topology.workers": 2})
    assignment = state.get_assignment(topology_id)
    assert assignment is not None and len(assignment.worker_ids) == 2
    assert {s.node for s in assignment.worker_ids} == {"s1", "s2"}, "one per supervisor"
    contexts = [nimbus.umbilical.init_context(w, topology_id)
                for w in assignment.worker_ids.values()]
    assert sorted(c["driver"] for c in contexts) == [False, True]
    hosted = sorted(tuple(e) for c in contexts for e in c["executors"])
    assert hosted == sorted(assignment.executor_slots), "each executor in exactly one worker"
    assert all(c["executors"] for c in contexts)
    tokens = {c["token"] for c in contexts}
    assert len(tokens) == 1 and len(tokens.pop()) >= 32, "one secret token per topology"
    driver = next(c for c in contexts if c["driver"])
    assert (driver["node"], driver["port"]) == (assignment.driver_slot().node,
                                                 assignment.driver_slot().port)


def test_the_driver_hears_where_the_other_workers_executors_answer(
        nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    register(state, "s2", 6700)
    topology_id = submit(nimbus, conf={"topology.workers": 2})
    assignment = state.get_assignment(topology_id)
    assert assignment is not None
    driver_slot = assignment.driver_slot()
    driver = assignment.worker_ids[driver_slot]  # type: ignore[index]
    (host,) = [w for s, w in assignment.worker_ids.items() if s != driver_slot]
    where = {"1": ["/tmp/x/e1.sock", "127.0.0.1", 40001, 4242]}
    umbilical = nimbus.umbilical
    answer = umbilical.heartbeat(host, {"topology_id": topology_id,
                                        "stats": {"endpoints": where}})
    assert "endpoints" not in answer, "only the driver needs them"
    answer = umbilical.heartbeat(driver, {"topology_id": topology_id, "stats": {}})
    assert answer["endpoints"] == where


def test_one_worker_runs_everything_and_hears_of_no_endpoints(
        nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700, 6701)
    topology_id = submit(nimbus)
    assignment = state.get_assignment(topology_id)
    assert assignment is not None
    (worker,) = assignment.worker_ids.values()
    context = nimbus.umbilical.init_context(worker, topology_id)
    assert context["driver"] is True
    assert sorted(tuple(e) for e in context["executors"]) == sorted(assignment.executor_slots)
    answer = nimbus.umbilical.heartbeat(worker, {"topology_id": topology_id, "stats": {}})
    assert "endpoints" not in answer


def test_a_lost_supervisor_s_worker_moves_and_the_live_worker_stays(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700, 6701)
    register(state, "s2", 6700, 6701)
    topology_id = submit(nimbus, conf={"topology.workers": 2})
    first = state.get_assignment(topology_id)
    assert first is not None and {s.node for s in first.worker_ids} == {"s1", "s2"}
    for worker_id in first.worker_ids.values():
        nimbus.umbilical.heartbeat(worker_id, {"topology_id": topology_id, "stats": {}})
    (staying_slot,) = [s for s in first.worker_ids if s.node == "s1"]
    staying = first.worker_ids[staying_slot]
    state.store.delete("/supervisors/s2")  # host s2 is gone, its worker with it
    clock.now += 31  # past nimbus.task.timeout.secs; the worker on s1 heartbeats on
    nimbus.umbilical.heartbeat(staying, {"topology_id": topology_id, "stats": {}})
    nimbus.assigner.check_all()
    second = state.get_assignment(topology_id)
    assert second is not None and {s.node for s in second.worker_ids} == {"s1"}
    assert len(second.worker_ids) == 2 and second.worker_ids[staying_slot] == staying
    assert second.executors_in(staying_slot) == first.executors_in(staying_slot)
    assert state.get_worker_heartbeat(topology_id, staying) is not None, "kept for the UI"
    assert nimbus.umbilical.heartbeat(staying, {"topology_id": topology_id})["shutdown"] is False


def test_a_moved_worker_gets_a_launch_timeout_of_its_own(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700, 6701)
    register(state, "s2", 6700, 6701)
    topology_id = submit(nimbus, conf={"topology.workers": 2})
    first = state.get_assignment(topology_id)
    assert first is not None
    for worker_id in first.worker_ids.values():
        nimbus.umbilical.heartbeat(worker_id, {"topology_id": topology_id, "stats": {}})
    (staying_slot,) = [s for s in first.worker_ids if s.node == "s1"]
    staying = first.worker_ids[staying_slot]
    state.store.delete("/supervisors/s2")
    clock.now += 31
    nimbus.umbilical.heartbeat(staying, {"topology_id": topology_id, "stats": {}})
    nimbus.assigner.check_all()
    moved = state.get_assignment(topology_id)
    assert moved is not None
    # past nimbus.task.launch.secs (120) since the topology started, not since the move
    clock.now += 100
    nimbus.umbilical.heartbeat(staying, {"topology_id": topology_id, "stats": {}})
    nimbus.assigner.check_all()
    after = state.get_assignment(topology_id)
    assert after is not None and after.worker_ids == moved.worker_ids, (
        "the moved worker, still starting, kept its slot")


def test_a_rebalance_keeps_the_staying_worker_and_moves_only_the_others(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700, 6701)
    register(state, "s2", 6700, 6701)
    topology_id = submit(nimbus, conf={"topology.workers": 2})
    first = state.get_assignment(topology_id)
    assert first is not None
    driver_slot = first.driver_slot()
    assert driver_slot is not None
    driver = first.worker_ids[driver_slot]
    nimbus.rebalance(topology_id, 0, 1, {})
    second = state.get_assignment(topology_id)
    assert second is not None and second.worker_ids == {driver_slot: driver}
    assert sorted(second.executor_slots) == sorted(first.executor_slots)
    answer = nimbus.umbilical.heartbeat(driver, {"topology_id": topology_id, "stats": {}})
    assert sorted(map(tuple, answer["executors"])) == sorted(first.executor_slots), \
        "the staying worker hears of the executors it takes over"
    (gone,) = set(first.worker_ids.values()) - {driver}
    assert nimbus.umbilical.heartbeat(gone, {"topology_id": topology_id})["shutdown"]

    nimbus.rebalance(topology_id, 0, 2, {})
    third = state.get_assignment(topology_id)
    assert third is not None and len(third.worker_ids) == 2
    assert third.worker_ids[driver_slot] == driver
    assert third.driver_slot() == driver_slot
    assert third.executors_in(driver_slot) == [min(first.executor_slots)]


def test_a_rebalance_with_new_executor_counts_keeps_every_worker_and_staying_executor(
        nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700, 6701)
    register(state, "s2", 6700, 6701)
    topology_id = submit(nimbus, conf={"topology.workers": 2})
    first = state.get_assignment(topology_id)
    assert first is not None
    nimbus.rebalance(topology_id, 0, None, {"split": 2})
    second = state.get_assignment(topology_id)
    assert second is not None and len(second.executor_slots) == 3
    assert second.worker_ids == first.worker_ids, "every worker stays (engine.plan.regroup)"
    stayed = set(first.executor_slots) & set(second.executor_slots)
    assert stayed and all(second.executor_slots[e] == first.executor_slots[e] for e in stayed)
    assert second.driver_slot() == first.driver_slot()


def test_new_executor_counts_with_a_new_worker_count_place_every_executor_afresh(
        nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700, 6701)
    register(state, "s2", 6700, 6701)
    topology_id = submit(nimbus, conf={"topology.workers": 2})
    first = state.get_assignment(topology_id)
    assert first is not None
    nimbus.rebalance(topology_id, 0, 1, {"split": 2})
    second = state.get_assignment(topology_id)
    assert second is not None and len(second.worker_ids) == 1
    assert not set(second.worker_ids.values()) & set(first.worker_ids.values())


def test_a_new_worker_next_to_a_kept_one_gets_its_full_launch_time(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700, 6701)
    register(state, "s2", 6700, 6701)
    topology_id = submit(nimbus, conf={"topology.workers": 1})
    (driver,) = state.get_assignment(topology_id).worker_ids.values()  # type: ignore[union-attr]
    clock.now += 200  # the kept worker's executors started long ago
    nimbus.umbilical.heartbeat(driver, {"topology_id": topology_id, "stats": {}})
    nimbus.rebalance(topology_id, 0, 2, {})
    second = state.get_assignment(topology_id)
    assert second is not None and len(second.worker_ids) == 2
    clock.now += 1
    nimbus.umbilical.heartbeat(driver, {"topology_id": topology_id, "stats": {}})
    nimbus.assigner.check_all()
    assert state.get_assignment(topology_id) == second, \
        "the new worker is not moved for its older neighbour's launch time"
