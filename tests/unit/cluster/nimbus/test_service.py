"""Nimbus's logic on an embedded store with a fake clock.

Submit, kill with a wait, the monitor's reassignments and the umbilical's answers. No HTTP, no
Spark.
"""

from __future__ import annotations

import pytest

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import TaskInfo, TopologyStatus
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import register, submit


def test_submit_writes_stormdist_storm_base_and_assignment(nimbus: Nimbus,
                                                           state: ClusterState) -> None:
    register(state, "s1", 6701, 6700)
    topology_id = submit(nimbus)
    assert topology_id == "t-1-1000000"
    base = state.get_storm(topology_id)
    assert base is not None and base.status == TopologyStatus.ACTIVE
    assignment = state.get_assignment(topology_id)
    assert assignment is not None and [s.port for s in assignment.slots()] == [6700]
    conf = nimbus.topology_conf(topology_id)
    assert conf["storm.id"] == topology_id and "storm.cluster.token" not in conf
    with pytest.raises(NimbusError) as caught:
        submit(nimbus)
    assert caught.value.code == "TOPOLOGY_ALREADY_ALIVE"


def test_kill_waits_then_the_monitor_removes_everything(nimbus: Nimbus, state: ClusterState,
                                                        clock: FakeClock) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    nimbus.kill(topology_id, 10)
    base = state.get_storm(topology_id)
    assert base is not None and base.status == TopologyStatus.KILLED
    assert base.prev_status == TopologyStatus.ACTIVE
    nimbus.assigner.check_all()
    assert state.get_storm(topology_id) is not None, "not before the wait is over"
    clock.now += 11
    nimbus.assigner.check_all()
    assert state.get_storm(topology_id) is None and state.get_assignment(topology_id) is None
    assert not nimbus.stormdist.folder(topology_id).exists()


def test_monitor_reassigns_silent_workers_and_vanished_supervisors(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    umbilical = nimbus.umbilical
    first = state.get_assignment(topology_id)
    assert first is not None
    (worker_id,) = first.worker_ids.values()
    clock.now += 100  # within nimbus.task.launch.secs
    nimbus.assigner.check_all()
    assert state.get_assignment(topology_id) == first
    answer = umbilical.heartbeat(worker_id, {"topology_id": topology_id, "stats": {}})
    assert answer["shutdown"] is False and answer["active"] is True
    clock.now += 31  # past nimbus.task.timeout.secs
    nimbus.assigner.check_all()
    second = state.get_assignment(topology_id)
    assert second is not None and second.worker_ids != first.worker_ids
    assert umbilical.heartbeat(worker_id, {"topology_id": topology_id})["shutdown"] is True
    state.store.delete("/supervisors/s1")  # the supervisor's session ended
    register(state, "s2", 6700)
    nimbus.assigner.check_all()
    third = state.get_assignment(topology_id)
    assert third is not None and {s.node for s in third.slots()} == {"s2"}


def test_a_heartbeating_worker_outlives_its_supervisor_s_session(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    """A restarting supervisor keeps its worker's assignment; a lost node does not.

    A supervisor restarting (its old session expired, the new one not registered yet) must not cost
    its running worker the assignment; a lost node (no heartbeats) does.
    """
    register(state, "s1", 6700)
    register(state, "s2", 6700)
    topology_id = submit(nimbus)
    first = state.get_assignment(topology_id)
    assert first is not None
    ((slot, worker_id),) = first.worker_ids.items()
    umbilical = nimbus.umbilical
    umbilical.heartbeat(worker_id, {"topology_id": topology_id, "stats": {}})
    state.store.delete(f"/supervisors/{slot.node}")
    clock.now += 20  # heartbeats keep coming, within nimbus.task.timeout.secs
    umbilical.heartbeat(worker_id, {"topology_id": topology_id, "stats": {}})
    nimbus.assigner.check_all()
    assert state.get_assignment(topology_id) == first, "the worker stays where it runs"
    clock.now += 31  # and now they stopped: the node is lost
    nimbus.assigner.check_all()
    moved = state.get_assignment(topology_id)
    assert moved is not None and {s.node for s in moved.slots()} != {slot.node}


def test_deactivate_reaches_the_worker_and_init_context_has_the_spec(
        nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    assignment = state.get_assignment(topology_id)
    assert assignment is not None
    (worker_id,) = assignment.worker_ids.values()
    umbilical = nimbus.umbilical
    context = umbilical.init_context(worker_id, None)
    assert context["topology_id"] == topology_id and context["spec"]["components"]
    nimbus.set_active(topology_id, False)
    assert umbilical.heartbeat(worker_id, {"topology_id": topology_id})["active"] is False
    with pytest.raises(NimbusError) as caught:
        umbilical.init_context("nobody", None)
    assert caught.value.code == "WORKER_NOT_ASSIGNED"


@pytest.mark.usefixtures("two_components")
def test_submit_writes_task_infos_and_the_heartbeat_dir_and_removal_takes_them(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    """Storm's ``set-task!`` for every task and ``setup-heartbeats!`` at submit.

    Tasks are numbered from 1 over the components sorted by id, the acker included, as the
    engine numbers them.
    """
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    assert state.task_infos(topology_id) == {
        1: TaskInfo("__acker"), 2: TaskInfo("split"), 3: TaskInfo("split"),
        4: TaskInfo("split"), 5: TaskInfo("split"), 6: TaskInfo("word")}
    assert state.store.get(f"/tasks/{topology_id}/6")[0] == b'{"component_id":"word"}'
    assignment = state.get_assignment(topology_id)
    assert assignment is not None
    for first, last in assignment.executor_slots:
        assert len({state.task_info(topology_id, t) for t in range(first, last + 1)}) == 1
    assert state.store.exists(f"/workerbeats/{topology_id}")
    assert state.heartbeat_storms() == [topology_id]
    assert state.get_worker_heartbeats(topology_id) == {}
    nimbus.rebalance(topology_id, 0, None, {"split": 2})
    assert len(state.task_infos(topology_id)) == 6, "tasks are fixed for the topology's life"

    nimbus.kill(topology_id, 10)
    assert state.task_storms() == [topology_id], "kept while the kill waits"
    clock.now += 11
    nimbus.assigner.check_all()
    assert state.task_storms() == [] and state.task_infos(topology_id) == {}
    assert state.heartbeat_storms() == []
    assert not state.store.exists(f"/tasks/{topology_id}")
    assert not state.store.exists(f"/workerbeats/{topology_id}")


def test_the_cleaner_removes_task_infos_left_without_a_storm_base(
        nimbus: Nimbus, state: ClusterState) -> None:
    """A Nimbus that died between the task infos and the StormBase of a submit."""
    state.set_task_info("gone-1-1", 1, TaskInfo("word"))
    state.setup_heartbeats("gone-1-1")
    assert nimbus.cleaner.clean_dead_topologies() == ["gone-1-1"]
    assert state.task_storms() == [] and state.heartbeat_storms() == []
