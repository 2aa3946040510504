"""Per-task emit, ack and fail inside an executor process.

Storm's anchoring, unchanged in meaning: every delivery of an anchored tuple gets a fresh
random 64-bit edge id per root; the edge is XORed into the new tuple's anchor map and into
the anchor's ``ack_val``; acking a tuple contributes ``edge ^ ack_val`` for each root. The
contributions are pre-aggregated per window (one XOR value per root) before they leave the
executor, which is what keeps the acker's traffic small.
"""

from __future__ import annotations

import random
import time
from typing import Any

from sparkstorm.engine.routing import StreamRoute
from sparkstorm.errors import TopologyError
from sparkstorm.topology.stream import DEFAULT_STREAM
from sparkstorm.topology.tuple import Tuple

_random = random.SystemRandom()
_rng = random.Random(_random.getrandbits(64))
new_id = _rng.getrandbits


class WindowOutput:
    """What an executor produced since the last window: rows per target executor and acker
    contributions. One per executor, shared by its tasks."""

    def __init__(self) -> None:
        self.rows: dict[int, list[list[Any]]] = {}
        self.count = 0
        self.xor: dict[int, int] = {}
        self.inits: dict[int, int] = {}
        self.failed: set[int] = set()
        self.resets: set[int] = set()
        self.emitted: dict[str, int] = {}
        self.transferred: dict[str, int] = {}

    def take(self) -> WindowOutput:
        """Hand over everything collected so far and start afresh."""
        taken = WindowOutput()
        taken.__dict__, self.__dict__ = self.__dict__, taken.__dict__
        return taken


class TaskCollector:
    """The collector one task instance emits, acks and fails through."""

    def __init__(self, task: int, component: str, routes: dict[str, StreamRoute],
                 task_executor: dict[int, int], output: WindowOutput, tracking: bool,
                 auto_anchor: bool) -> None:
        self.task = task
        self.component = component
        self.routes = routes
        self.task_executor = task_executor
        self.output = output
        self.tracking = tracking
        self.auto_anchor = auto_anchor
        self.current: Tuple | None = None
        self.pending_roots: dict[int, tuple[Any, float]] = {}
        self.immediate_acks: list[Any] = []

    def _route(self, stream: str | None) -> StreamRoute:
        route = self.routes.get(stream or DEFAULT_STREAM)
        if route is None:
            msg = (
                f"component {self.component!r} emitted on stream {stream or DEFAULT_STREAM!r}, "
                f"which it does not declare (declared: {sorted(self.routes)}); add it to the "
                "component's outputs"
            )
            raise TopologyError(msg, code="UNDECLARED_STREAM")
        return route

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: int | None,
             need_task_ids: bool, tup_id: Any) -> list[int] | None:
        """Route and buffer one tuple; see ``Spout.emit`` and ``Bolt.emit``."""
        if not isinstance(values, list):
            values = list(values)
        route = self._route(stream)
        stream_id = route.stream.name
        tasks = route.tasks_for(values, direct_task)
        out = self.output
        if tup_id is not None:
            self._emit_spout_tuple(tasks, stream_id, values, tup_id)
        else:
            roots = self._anchor_tuples(anchors)
            rows, task_executor, src = out.rows, self.task_executor, self.task
            for task in tasks:
                rows.setdefault(task_executor[task], []).append(
                    [task, src, stream_id, values, _edge_map(roots) if roots else None]
                )
        out.count += len(tasks)
        out.emitted[stream_id] = out.emitted.get(stream_id, 0) + 1
        out.transferred[stream_id] = out.transferred.get(stream_id, 0) + len(tasks)
        return list(tasks) if need_task_ids else None

    def _anchor_tuples(self, anchors: Any) -> list[Tuple] | None:
        if anchors is None:
            current = self.current
            return [current] if self.auto_anchor and current is not None and current.anchors \
                else None
        tuples = [anchors] if isinstance(anchors, Tuple) else list(anchors)
        return [a for a in tuples if a.anchors] or None

    def _emit_spout_tuple(self, tasks: list[int], stream: str, values: list[Any],
                          tup_id: Any) -> None:
        out, src = self.output, self.task
        if not self.tracking:
            for task in tasks:
                out.rows.setdefault(self.task_executor[task], []).append(
                    [task, src, stream, values, None])
            self.immediate_acks.append(tup_id)
            return
        root, xor = new_id(64), 0
        for task in tasks:
            edge = new_id(64)
            xor ^= edge
            out.rows.setdefault(self.task_executor[task], []).append(
                [task, src, stream, values, {root: edge}])
        out.inits[root] = src
        out.xor[root] = out.xor.get(root, 0) ^ xor
        self.pending_roots[root] = (tup_id, time.monotonic())

    def ack(self, tup: Tuple) -> None:
        """Ack ``tup``: one XOR contribution per root it belongs to. Repeats are ignored."""
        if tup.done:
            return
        tup.done = True
        if tup.anchors:
            xor, val = self.output.xor, tup.ack_val
            for root, edge in tup.anchors.items():
                xor[root] = xor.get(root, 0) ^ edge ^ val

    def fail(self, tup: Tuple) -> None:
        """Fail ``tup``: every root it belongs to fails at once. Repeats are ignored."""
        if tup.done:
            return
        tup.done = True
        if tup.anchors:
            self.output.failed.update(tup.anchors)

    def reset_timeout(self, tup: Tuple) -> None:
        """Ask the spouts of ``tup``'s roots to restart their message timeouts."""
        if tup.anchors:
            self.output.resets.update(tup.anchors)


def _edge_map(roots: list[Tuple]) -> dict[int, int]:
    edges: dict[int, int] = {}
    for anchor in roots:
        edge = new_id(64)
        anchor.ack_val ^= edge
        for root in anchor.anchors or ():
            edges[root] = edges.get(root, 0) ^ edge
    return edges
