"""A tiny in-process stand-in for the engine's collector, enough for one windowed-bolt task.

It records emits (with their anchors) and acks, and builds input tuples; :class:`Recorder` is a
windowed bolt that records every window it gets.
"""

from __future__ import annotations

from typing import Any

from sparkstorm.topology.tuple import SYSTEM_COMPONENT, TICK_STREAM, Tuple
from sparkstorm.topology.windowed_bolts import TupleWindow, WindowedBolt


class FakeCollector:
    """Records what a task emits, acks and fails, in order."""

    def __init__(self) -> None:
        self.emitted: list[tuple[str | None, list[Any], list[Tuple]]] = []
        self.acked: list[Tuple] = []
        self.failed: list[Tuple] = []
        self.log: list[tuple[str, Any]] = []

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: int | None,
             need_task_ids: bool, tup_id: Any) -> list[int] | None:
        anchor_list = [anchors] if isinstance(anchors, Tuple) else list(anchors or [])
        self.emitted.append((stream, list(values), anchor_list))
        self.log.append(("emit", list(values)))
        return None

    def ack(self, tup: Tuple) -> None:
        assert not tup.done, f"{tup!r} acked twice"
        tup.done = True
        self.acked.append(tup)
        self.log.append(("ack", tup))

    def fail(self, tup: Tuple, reason: str | None = None, cause: str = "explicit") -> None:
        tup.done = True
        self.failed.append(tup)

    def reset_timeout(self, tup: Tuple) -> None:
        pass


def attach(bolt: Any, conf: dict[str, Any], name: str = "windowed") -> FakeCollector:
    """Set what the engine sets on a task before ``initialize``; return its collector."""
    collector = FakeCollector()
    bolt._collector = collector
    bolt.storm_conf = conf
    bolt.component_name = name
    bolt.initialize(conf, {})
    return collector


class Source:
    """Makes input tuples of one stream, numbered in order."""

    def __init__(self, component: str = "spout", stream: str = "default",
                 fields: tuple[str, ...] = ("value",)) -> None:
        self.component, self.stream, self.fields, self.next_id = component, stream, fields, 0

    def tuple(self, *values: Any) -> Tuple:
        self.next_id += 1
        return Tuple(self.next_id, self.component, self.stream, 1, list(values), self.fields,
                     {self.next_id: 1})


def tick() -> Tuple:
    """A tick tuple, as the engine delivers it."""
    return Tuple(0, SYSTEM_COMPONENT, TICK_STREAM, -1, [1])


class Recorder(WindowedBolt):
    """Records every window as plain values and emits its size."""

    outputs = ["size"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.windows: list[dict[str, Any]] = []
        self.clock = 0

    def now_ms(self) -> int:
        return self.clock

    def process_window(self, window: TupleWindow) -> None:
        collector: FakeCollector = self._collector
        acked = {id(t) for t in collector.acked}
        assert not any(id(t) in acked for t in window.get()), "a window tuple was acked early"
        self.windows.append({
            "get": [t.values[0] for t in window.get()],
            "new": [t.values[0] for t in window.new()],
            "expired": [t.values[0] for t in window.expired()],
            "start_ts": window.start_ts, "end_ts": window.end_ts,
        })
        self.emit([len(window)])
