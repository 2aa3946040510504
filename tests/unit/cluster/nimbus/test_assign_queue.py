"""The assign queue (JStorm's TopologyAssign).

One FIFO queue, one thread, submitters wait for their event.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from sparkstorm.cluster.nimbus.assigner import Assigner
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import Assignment
from tests.unit.cluster.nimbus.helpers import register, submit


@pytest.fixture
def running(nimbus: Nimbus) -> Iterator[Nimbus]:
    """The Nimbus with its assignment and monitor threads running (as ``build_server``)."""
    nimbus.assigner.start()
    yield nimbus
    nimbus.assigner.stop()


def _recording(assigner: Assigner) -> list[tuple[str, str]]:
    """Record (topology, thread name) of every assignment the assigner makes."""
    seen: list[tuple[str, str]] = []
    original = assigner.assign

    def assign(topology_id: str, **how: bool) -> Assignment | None:
        seen.append((topology_id, threading.current_thread().name))
        return original(topology_id, **how)

    assigner.assign = assign  # type: ignore[method-assign]
    return seen


def test_a_submit_is_assigned_by_the_assign_thread_before_it_returns(
        running: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    seen = _recording(running.assigner)
    topology_id = submit(running)
    assert seen == [(topology_id, "nimbus-assign")]
    assert state.get_assignment(topology_id) is not None, "submit waits for its event"


def test_events_run_one_at_a_time_in_the_order_they_were_queued(
        running: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700, 6701, 6702)
    ids = [submit(running, name) for name in ("a", "b", "c")]
    seen = _recording(running.assigner)
    gate = threading.Event()
    # hold the assign thread on the Nimbus lock, queue three events, then let it go
    with running.lock:
        callers = [threading.Thread(target=running.assigner.request, args=(t, "test"))
                   for t in reversed(ids)]
        for caller in callers:
            caller.start()
            while running.assigner.events.qsize() + len(seen) < callers.index(caller) + 1:
                gate.wait(0.001)  # each request is queued before the next one starts
    for caller in callers:
        caller.join(10)
    assert seen == [(t, "nimbus-assign") for t in reversed(ids)]


def test_a_rebalance_without_wait_reassigns_at_once(running: Nimbus,
                                                   state: ClusterState) -> None:
    register(state, "s1", 6700)
    topology_id = submit(running)
    first = state.get_assignment(topology_id)
    assert first is not None
    seen = _recording(running.assigner)
    running.rebalance(topology_id, 0, None, {})
    assert seen == [(topology_id, "nimbus-assign")], "assigned before rebalance returned"
    second = state.get_assignment(topology_id)
    # nothing changed, so the staying worker keeps its executors (staying.py)
    assert second is not None and second.worker_ids == first.worker_ids


def test_without_the_thread_the_caller_assigns(nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    seen = _recording(nimbus.assigner)
    topology_id = submit(nimbus)
    assert seen == [(topology_id, threading.current_thread().name)]
