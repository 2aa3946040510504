"""A spout executor buffers at most the limit the driver's control sets for the next window."""

from __future__ import annotations

from typing import Any

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.testing.polling import wait_for


class Endless(Spout):
    """Emits as fast as it may: only the executor's limit stops it."""

    outputs = ["n"]

    def next_tuple(self) -> None:
        self.emit([1])


class Sink(Bolt):
    outputs: list[Any] = []


def test_the_buffer_stops_at_the_limit_the_buffer_was_filled_under() -> None:
    class Endlessly(Topology):
        numbers = Endless.spec()
        sink = Sink.spec(inputs=[numbers])

    plan = ExecutionPlan(Endlessly.topology_spec, {"topology.spout.buffer.size": 1000,
                                                   "topology.spout.buffer.max.size": 2000})
    gid = next(e.gid for e in plan.executors if e.component == "numbers")
    host = SpoutExecutor(plan, gid, "t")
    try:
        host.run_window(SpoutControl(limit=50))  # activates; fills up to 50
        wait_for(lambda: host.output.count >= 50, timeout=10, message="50 buffered")
        first = host.run_window(SpoutControl(limit=80)).count
        stats = host.take_stats()
        wait_for(lambda: host.output.count >= 80, timeout=10, message="80 buffered")
        second = host.run_window(SpoutControl(limit=None)).count  # None: the buffer size
        wait_for(lambda: host.output.count >= 1000, timeout=10, message="the buffer size")
        third = host.run_window(SpoutControl(limit=5000)).count  # at most the max size
        wait_for(lambda: host.output.count >= 2000, timeout=10, message="the max size")
        fourth = host.run_window(SpoutControl(limit=1500)).count
    finally:
        host.close()
    # a saturated spout's window may grow past the buffer size, never past the max size
    assert (first, second, third, fourth) == (50, 80, 1000, 2000)
    assert (stats.buffered, stats.buffer_bound) == (50, 50)  # full: the spout waited


class Reliable(Spout):
    """Emits with message ids as fast as it may: acks, the limit or pending stop it."""

    outputs = ["n"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.n = 0

    def next_tuple(self) -> None:
        self.n += 1
        self.emit([self.n], tup_id=self.n)


def test_the_automatic_pending_bound_stops_the_spout_until_acks_come() -> None:
    class Reliably(Topology):
        numbers = Reliable.spec()
        sink = Sink.spec(inputs=[numbers])

    plan = ExecutionPlan(Reliably.topology_spec, {"topology.spout.buffer.size": 1000})
    gid = next(e.gid for e in plan.executors if e.component == "numbers")
    host = SpoutExecutor(plan, gid, "t")
    try:
        host.run_window(SpoutControl(pending=30))  # activates; 30 un-acked at most
        wait_for(lambda: host.output.count >= 30, timeout=10, message="30 in flight")
        first = host.run_window(SpoutControl(pending=30)).count
        in_flight = [r for c in host.collectors.values() for r in c.pending_roots]
        second = host.run_window(SpoutControl(pending=30)).count  # nothing acked: none
        host.run_window(SpoutControl(ack=in_flight, pending=30))  # 30 acked: 30 more
        wait_for(lambda: host.output.count >= 30, timeout=10, message="30 more")
        third = host.run_window(SpoutControl(pending=None)).count  # None: no auto bound
        wait_for(lambda: host.output.count >= 1000, timeout=10, message="the buffer size")
    finally:
        host.close()
    assert (first, second, third, len(in_flight)) == (30, 0, 30, 30)


def test_under_checkpoint_reliability_the_bound_counts_tuples_until_their_window_ends() -> None:
    class Reliably(Topology):
        numbers = Reliable.spec()
        sink = Sink.spec(inputs=[numbers])

    plan = ExecutionPlan(Reliably.topology_spec, {"topology.spout.buffer.size": 1000,
                                                  "topology.reliability": "checkpoint"})
    gid = next(e.gid for e in plan.executors if e.component == "numbers")
    host = SpoutExecutor(plan, gid, "t")
    try:
        host.run_window(SpoutControl(pending=30), None, 0)  # activates; 30 in flight at most
        wait_for(lambda: host.output.count >= 30, timeout=10, message="30 in flight")
        first = host.run_window(SpoutControl(pending=30), None, 1).count
        # window 1 runs: its 30 tuples are still in flight, so the spout emits nothing
        second = host.run_window(SpoutControl(pending=30), None, 2).count
        host.apply_verdicts(SpoutControl(ended=1))  # the driver's push: window 1 ended
        wait_for(lambda: host.output.count >= 30, timeout=10, message="30 more")
        third = host.run_window(SpoutControl(pending=30, ended=1), None, 3).count
        host.apply_verdicts(SpoutControl(ended=3))
        wait_for(lambda: host.output.count >= 30, timeout=10, message="30 more again")
        fourth = host.run_window(SpoutControl(pending=None), None, 4).count  # no bound
        wait_for(lambda: host.output.count >= 1000, timeout=10, message="the buffer size")
    finally:
        host.close()
    assert (first, second, third, fourth) == (30, 0, 30, 30)
