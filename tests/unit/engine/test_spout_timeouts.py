"""A spout executor's message timeouts, on a real ``SpoutExecutor`` with a shifted clock.

A tree's timeout runs from the window that took it, not from its emit: a tuple a stall held
in the spout's buffer cannot have failed downstream, and timing it out would replay it
beside the original the next window takes (counted twice, even by checkpointed state).

``SpoutExecutor._expire`` reads ``pending_roots`` from its front only, so their order must
hold: a reset moves its tree to the end, a restored executor puts its trees oldest first.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from sparkstorm.engine.executor import collector as collector_module
from sparkstorm.engine.executor import host as host_module
from sparkstorm.engine.executor import spout as spout_module
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, RestorePoint
from sparkstorm.engine.executor.factory import make_executor
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.testing.polling import wait_for
from tests.unit.engine.helpers import Numbers, Queued

TIMEOUT_SECS = 30


class Clock:
    """``time.monotonic`` of the spout executor's modules, ``ahead`` seconds in the future."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.ahead

    def advance(self, seconds: float) -> None:
        self.ahead += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    shifted = Clock()
    shim = SimpleNamespace(monotonic=shifted.monotonic, perf_counter=time.perf_counter)
    for module in (spout_module, collector_module, host_module):
        monkeypatch.setattr(module, "time", shim)
    return shifted


@pytest.fixture
def spout(clock: Clock) -> Iterator[Any]:
    started: list[SpoutExecutor] = []

    def make(restore: RestorePoint | None = None) -> tuple[SpoutExecutor, Queued]:
        plan = ExecutionPlan(Numbers.topology_spec, {
            "topology.acker.executors": 1, "topology.message.timeout.secs": TIMEOUT_SECS})
        gid = next(e.gid for e in plan.executors if e.component == "numbers")
        host = make_executor(plan, gid, "t", restore)
        assert isinstance(host, SpoutExecutor)
        started.append(host)
        (instance,) = host.instances.values()
        with host.calls:  # active from the start: it emits as soon as it has ids
            host.run_window(SpoutControl())
        return host, instance
    yield make
    for host in started:
        host.close()


def emit(host: SpoutExecutor, instance: Queued, ids: list[int]) -> None:
    """Let the spout emit ``ids`` into its buffer (no window takes them yet)."""
    with host.calls:
        instance.todo.extend(ids)
    wait_for(lambda: host.output.count >= len(ids) and not instance.todo, timeout=10,
             message=f"{ids} emitted and moved into the window's buffer")


def window(host: SpoutExecutor, control: SpoutControl | None = None) -> Any:
    """A window: its control applied now (calls held, so not left to the producer)."""
    with host.calls:
        return host.run_window(control or SpoutControl())


def roots(taken: Any) -> list[int]:
    return list(taken.inits)


def test_a_tuple_a_stall_held_in_the_buffer_past_the_timeout_is_not_timed_out(
        spout: Any, clock: Clock) -> None:
    host, instance = spout()
    emit(host, instance, [1, 2, 3])
    clock.advance(TIMEOUT_SECS + 50)  # no window for longer than the timeout: a stall
    taken = window(host)  # the first window after it takes the originals ...
    assert instance.fails == [] and host.take_stats().timed_out == 0  # ... and no replay
    assert taken.count == 3 and len(roots(taken)) == 3
    window(host, SpoutControl(ack=roots(taken)))  # their trees completed in that window
    assert sorted(instance.acks) == [1, 2, 3] and instance.fails == []
    assert host.output.count == 0, "nothing was emitted again"


def test_a_tree_times_out_a_timeout_after_the_window_took_it(spout: Any,
                                                             clock: Clock) -> None:
    host, instance = spout()
    emit(host, instance, [1])
    clock.advance(TIMEOUT_SECS - 5)  # in the buffer most of a timeout
    window(host)  # taken now
    clock.advance(TIMEOUT_SECS - 5)  # emitted 50 s ago, taken 25 s ago
    window(host)
    assert instance.fails == []
    clock.advance(10)  # taken 35 s ago
    (collector,) = host.collectors.values()
    (root,) = collector.pending_roots
    window(host)
    assert instance.fails == [1]
    window(host, SpoutControl(ack=[root]))  # its tree completes, too late: ignored
    stats = host.take_stats()
    assert stats.timed_out == 1 and stats.fail_causes == {
        ("timeout", "message timed out (topology.message.timeout.secs)"): 1}
    assert instance.acks == []


def test_a_reset_tree_outlives_the_trees_taken_with_it(spout: Any, clock: Clock) -> None:
    host, instance = spout()
    emit(host, instance, [1, 2, 3])
    first = roots(window(host))[0]
    clock.advance(TIMEOUT_SECS + 10)
    window(host, SpoutControl(reset=[first]))  # resets come before the expiry
    assert sorted(instance.fails) == [2, 3]
    (collector,) = host.collectors.values()
    assert [entry[0] for entry in collector.pending_roots.values()] == [1]
    clock.advance(TIMEOUT_SECS - 5)  # reset 25 s ago, windows since with nothing new
    window(host)
    assert sorted(instance.fails) == [2, 3]
    clock.advance(10)  # a reset tree still times out, without new emits to carry it
    window(host)
    assert sorted(instance.fails) == [1, 2, 3]
    assert host.take_stats().timed_out == 3


def test_a_restored_spout_times_out_its_oldest_trees_whatever_order_they_were_saved_in(
        spout: Any) -> None:
    plan = ExecutionPlan(Numbers.topology_spec, {
        "topology.acker.executors": 1, "topology.message.timeout.secs": TIMEOUT_SECS})
    (task,) = next(e for e in plan.executors if e.component == "numbers").tasks
    young, old = 11, 22
    saved = {task: {young: (7, 1.0, "default"), old: (8, TIMEOUT_SECS + 5.0, "default")}}
    host, instance = spout(RestorePoint(3, ExecutorPart({}, saved)))
    window(host)
    assert instance.fails == [8]
    assert host.take_stats().timed_out == 1
    assert list(host.collectors[task].pending_roots) == [young]
