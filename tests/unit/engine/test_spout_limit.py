"""A spout executor buffers at most the limit the driver's control sets for the next window."""

from __future__ import annotations

from typing import Any

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor import SpoutExecutor
from sparkstorm.engine.messages import SpoutControl
from sparkstorm.engine.plan import ExecutionPlan
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

    plan = ExecutionPlan(Endlessly.topology_spec, {"topology.spout.buffer.size": 1000})
    gid = next(e.gid for e in plan.executors if e.component == "numbers")
    host = SpoutExecutor(plan, gid, "t")
    try:
        host.run_window(SpoutControl(limit=50))  # activates; fills up to 50
        wait_for(lambda: host.output.count >= 50, timeout=10, message="50 buffered")
        first = host.run_window(SpoutControl(limit=80)).count
        stats = host.take_stats()
        wait_for(lambda: host.output.count >= 80, timeout=10, message="80 buffered")
        second = host.run_window(SpoutControl(limit=None)).count  # None: the bound
        wait_for(lambda: host.output.count >= 1000, timeout=10, message="the bound")
        third = host.run_window(SpoutControl(limit=5000)).count  # never above the bound
    finally:
        host.close()
    assert (first, second, third) == (50, 80, 1000)
    assert (stats.buffered, stats.buffer_bound) == (50, 50)  # full: the spout waited
