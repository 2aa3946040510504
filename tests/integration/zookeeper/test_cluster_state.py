"""The typed cluster state over both backends.

Records round-trip, ephemeral supervisors, error trimming, teardown, watches, and corrupt nodes that
never crash a reader.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

import pytest

from sparkstorm.cluster.store import CorruptStateError, NoNodeError, StateStore, layout
from sparkstorm.cluster.store.cluster_state import (
    MAX_ERRORS_PER_COMPONENT,
    ZLIB_MAGIC,
    Assignment,
    ClusterState,
    ErrorInfo,
    StormBase,
    SupervisorInfo,
    TaskInfo,
    TopologyStatus,
    WorkerHeartbeat,
    WorkerSlot,
    encode,
)
from sparkstorm.testing.polling import wait_for
from tests.integration.zookeeper.backends import BACKENDS, Backend

pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)

TID = "wordcount-1-1700000000"
BASE = StormBase("wordcount", TopologyStatus.ACTIVE, 1700000000, 2,
                 {"spout": 1, "split": 2, "count": 2}, owner="alice")
SLOT_A, SLOT_B = WorkerSlot("sup-1", 6700), WorkerSlot("sup-2", 6701)
ASSIGNMENT = Assignment(
    TID,
    {(1, 1): SLOT_A, (2, 3): SLOT_A, (4, 5): SLOT_B},
    {(1, 1): 1700000001, (2, 3): 1700000001, (4, 5): 1700000002},
    {SLOT_A: "worker-a", SLOT_B: "worker-b"},
    {"sup-1": "host1", "sup-2": "host2"},
)


@pytest.fixture
def state(store: StateStore) -> ClusterState:
    return ClusterState(store)


def _supervisor(sid: str = "sup-1", used: tuple[int, ...] = ()) -> SupervisorInfo:
    return SupervisorInfo(sid, "host1", (6700, 6701), used, 12.5, "0.1.0", 1700000000.5)


def test_storm_base_round_trips_and_updates(state: ClusterState) -> None:
    assert state.get_storm(TID) is None
    state.set_storm(TID, BASE)
    assert state.get_storm(TID) == BASE
    assert state.active_storms() == [TID]
    updated = state.update_storm(TID, status=TopologyStatus.KILLED,
                                 prev_status=TopologyStatus.ACTIVE,
                                 action_options={"wait_secs": 30})
    assert state.get_storm(TID) == updated
    assert updated.status is TopologyStatus.KILLED and updated.num_workers == 2
    with pytest.raises(NoNodeError):
        state.update_storm("missing-1-1", status=TopologyStatus.ACTIVE)


def test_concurrent_updates_of_a_storm_all_apply(backend: Backend, state: ClusterState) -> None:
    other = ClusterState(backend.open())
    state.set_storm(TID, BASE)

    def add_executor(base: StormBase, component: str) -> StormBase:
        executors = base.component_executors | {
            component: base.component_executors[component] + 1}
        return replace(base, component_executors=executors)

    def bump(client: ClusterState, component: str) -> None:
        for _ in range(10):
            client.update_storm(TID, lambda base: add_executor(base, component))

    threads = [threading.Thread(target=bump, args=(client, component))
               for client, component in ((state, "spout"), (other, "split"), (state, "split"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    final = state.get_storm(TID)
    assert final is not None
    assert final.component_executors == {"spout": 11, "split": 22, "count": 2}


def test_assignment_round_trips(state: ClusterState) -> None:
    state.set_assignment(TID, ASSIGNMENT)
    got = state.get_assignment(TID)
    assert got == ASSIGNMENT
    assert got.slots() == {SLOT_A, SLOT_B}
    assert got.executors_in(SLOT_A) == [(1, 1), (2, 3)]
    assert state.assignments() == [TID]


def test_remove_storm_takes_the_assignment_but_keeps_errors(state: ClusterState) -> None:
    state.set_storm(TID, BASE)
    state.set_assignment(TID, ASSIGNMENT)
    state.report_error(TID, ErrorInfo("split", "boom", 1.0))
    state.remove_storm(TID)
    state.remove_storm(TID)  # idempotent
    assert state.get_storm(TID) is None and state.get_assignment(TID) is None
    assert state.active_storms() == [] and state.assignments() == []
    assert state.last_error(TID, "split") == ErrorInfo("split", "boom", 1.0)


def test_supervisors_are_ephemeral(backend: Backend, state: ClusterState) -> None:
    observer = ClusterState(backend.open())
    state.register_supervisor(_supervisor())
    state.register_supervisor(_supervisor(used=(6700,)))  # heartbeat: same node, new data
    assert observer.supervisors() == ["sup-1"]
    assert observer.supervisor_info("sup-1") == _supervisor(used=(6700,))
    assert observer.all_supervisor_info() == {"sup-1": _supervisor(used=(6700,))}
    state.store.close()
    wait_for(lambda: observer.supervisors() == [], 15,
             message="supervisor gone with its session")
    assert observer.supervisor_info("sup-1") is None


def test_supervisor_re_registers_after_its_session_expired(backend: Backend,
                                                           state: ClusterState) -> None:
    observer = ClusterState(backend.open())
    state.register_supervisor(_supervisor())
    backend.expire_session(state.store)
    wait_for(lambda: observer.supervisors() == [], 15, message="expired supervisor gone")
    state.register_supervisor(_supervisor(used=(6701,)))
    assert observer.supervisor_info("sup-1") == _supervisor(used=(6701,))


def test_worker_heartbeats(state: ClusterState) -> None:
    stats = {"[2-3]": {"window": 41, "emitted": {"default": 120}, "state": "ACTIVE"}}
    beat_a = WorkerHeartbeat(TID, "worker-a", 1700000100.25, stats, 99.0, "sup-1", 6700)
    beat_b = WorkerHeartbeat(TID, "worker-b", 1700000101.0)
    state.worker_heartbeat(beat_a)
    state.worker_heartbeat(beat_b)
    newer = WorkerHeartbeat(TID, "worker-b", 1700000102.0, {}, 2.0)
    state.worker_heartbeat(newer)
    assert state.get_worker_heartbeats(TID) == {"worker-a": beat_a, "worker-b": newer}
    assert state.get_worker_heartbeat(TID, "worker-a") == beat_a
    assert state.heartbeat_storms() == [TID]
    state.remove_worker_heartbeat(TID, "worker-a")
    state.remove_worker_heartbeat(TID, "worker-a")
    assert list(state.get_worker_heartbeats(TID)) == ["worker-b"]
    assert state.get_worker_heartbeats("other-1-1") == {}


def test_big_heartbeats_are_stored_compressed(state: ClusterState) -> None:
    """Statistics over many windows and components stay far below ZooKeeper's 1 MiB."""
    windows = [{"window": w, "started": 1700000000.0 + w / 2, "components": {
        f"bolt-{c}": {"emitted": 1000 + w, "transferred": 2000, "executed": 1000,
                      "acked": 1000, "inputs": {f"bolt-{c - 1}:default": 1000}}
        for c in range(80)}} for w in range(120)]
    beat = WorkerHeartbeat(TID, "worker-a", 1700000100.0, {"recent_windows": windows})
    state.worker_heartbeat(beat)
    raw, _ = state.store.get(layout.worker_beat_path(TID, "worker-a"))
    plain = len(encode(beat))
    assert plain > 1 << 20, "the plain JSON alone would not fit a ZooKeeper node"
    assert len(raw) < plain / 10 and raw[:1] == ZLIB_MAGIC
    assert state.get_worker_heartbeat(TID, "worker-a") == beat


def test_errors_keep_the_last_ten_newest_first(state: ClusterState) -> None:
    assert state.last_error(TID, "split") is None and state.errors(TID, "split") == []
    for i in range(MAX_ERRORS_PER_COMPONENT + 3):
        state.report_error(TID, ErrorInfo("split", f"error {i}", 100.0 + i, "host1", 6700))
    state.report_error(TID, ErrorInfo("count/odd%name", "other", 5.0))
    kept = state.errors(TID, "split")
    assert [e.error for e in kept] == [f"error {i}" for i in range(12, 2, -1)]
    assert state.last_error(TID, "split") == ErrorInfo("split", "error 12", 112.0, "host1", 6700)
    assert state.error_components(TID) == ["count/odd%name", "split"]
    assert state.last_error(TID, "count/odd%name") == ErrorInfo("count/odd%name", "other", 5.0)


def test_task_infos_and_the_heartbeat_dir(state: ClusterState) -> None:
    """What Nimbus writes at submit (Storm's ``set-task!``, ``setup-heartbeats!``)."""
    assert state.task_infos(TID) == {} and state.task_info(TID, 1) is None
    for task in range(1, 13):  # 12 tasks: ids order as numbers, not as strings
        state.set_task_info(TID, task, TaskInfo("spout" if task == 12 else "split/words"))
    state.set_task_info(TID, 12, TaskInfo("count"))  # replaced
    assert list(state.task_infos(TID)) == list(range(1, 13))
    assert state.task_info(TID, 12) == TaskInfo("count")
    assert state.task_info(TID, 2) == TaskInfo("split/words")
    assert state.task_storms() == [TID]
    state.setup_heartbeats(TID)
    state.setup_heartbeats(TID)  # idempotent
    assert state.heartbeat_storms() == [TID] and state.get_worker_heartbeats(TID) == {}
    state.store.create(f"/tasks/{TID}/13", b"[]")  # corrupt: logged and skipped
    assert len(state.task_infos(TID)) == 12
    state.remove_storm(TID)
    assert state.task_storms() == [] and state.task_infos(TID) == {}
    assert state.heartbeat_storms() == [TID], "heartbeats stay until teardown"


def test_committed_window(state: ClusterState) -> None:
    assert state.committed_window(TID) is None
    state.set_committed_window(TID, 40)
    state.set_committed_window(TID, 50)
    assert state.committed_window(TID) == 50


def test_teardown_removes_everything_of_one_topology(state: ClusterState) -> None:
    other = "other-2-1700000000"
    for tid in (TID, other):
        state.set_storm(tid, BASE)
        state.set_assignment(tid, ASSIGNMENT)
        state.worker_heartbeat(WorkerHeartbeat(tid, "w", 1.0))
        state.report_error(tid, ErrorInfo("split", "boom", 1.0))
        state.set_committed_window(tid, 7)
        state.set_task_info(tid, 1, TaskInfo("split"))
    state.teardown_topology(TID)
    state.teardown_topology(TID)
    assert state.active_storms() == [other] and state.assignments() == [other]
    assert state.heartbeat_storms() == [other] and state.task_storms() == [other]
    assert state.error_components(TID) == [] and state.committed_window(TID) is None
    assert state.committed_window(other) == 7


def test_corrupt_nodes_raise_a_clear_error_and_stay(state: ClusterState) -> None:
    store = state.store
    store.create(f"/storms/{TID}", b"{not json")
    store.create(f"/assignments/{TID}", b'{"topology_id": 7}')
    for read, path in ((lambda: state.get_storm(TID), f"/storms/{TID}"),
                       (lambda: state.get_assignment(TID), f"/assignments/{TID}")):
        with pytest.raises(CorruptStateError) as caught:
            read()
        assert caught.value.code == "STATE_CORRUPT_NODE"
        assert repr(path) in str(caught.value)
    assert store.get(f"/storms/{TID}") == (b"{not json", 0)  # left untouched
    assert state.active_storms() == [TID]


def test_listings_skip_corrupt_nodes(state: ClusterState,
                                     caplog: pytest.LogCaptureFixture) -> None:
    good = WorkerHeartbeat(TID, "good", 1.0)
    state.worker_heartbeat(good)
    state.store.create(f"/workerbeats/{TID}/bad", b"\xff\xfe")
    state.store.create("/supervisors/bad", b"[]", ephemeral=True)
    with caplog.at_level(logging.ERROR):
        assert state.get_worker_heartbeats(TID) == {"good": good}
        assert state.all_supervisor_info() == {}
    assert f"/workerbeats/{TID}/bad" in caplog.text and "/supervisors/bad" in caplog.text


def test_watch_helpers_deliver_typed_values(backend: Backend, state: ClusterState) -> None:
    writer = ClusterState(backend.open())
    ids: list[list[str]] = []
    got: list[Assignment | None] = []
    state.on_assignments_change(ids.append)
    state.on_assignment_change(TID, got.append)
    assert ids == [[]] and got == [None]
    writer.set_assignment(TID, ASSIGNMENT)
    wait_for(lambda: ids[-1] == [TID] and got[-1] == ASSIGNMENT, 15,
             message="assignment watches fired")
    writer.store.set(f"/assignments/{TID}", b"garbage")  # not delivered: logged instead
    writer.remove_assignment(TID)
    wait_for(lambda: ids[-1] == [] and got[-1] is None, 15, message="assignment removed")
    assert "garbage" not in repr(got)


def test_supervisor_and_committed_window_watches(backend: Backend, state: ClusterState) -> None:
    writer = ClusterState(backend.open())
    supervisors: list[list[str]] = []
    windows: list[int | None] = []
    storms: list[StormBase | None] = []
    state.on_supervisors_change(supervisors.append)
    state.on_committed_window_change(TID, windows.append)
    state.on_storm_change(TID, storms.append)
    writer.register_supervisor(_supervisor("sup-9"))
    writer.set_committed_window(TID, 3)
    writer.set_storm(TID, BASE)
    wait_for(lambda: supervisors[-1] == ["sup-9"] and windows[-1] == 3 and storms[-1] == BASE,
             15, message="supervisor, window and storm watches fired")
