"""Topologies and drivers shared by the engine's unit tests.

- :func:`pipeline`: a word count (two spout tasks, one split task, three count tasks) for the
  acking, message and spout statistics tests.
- :func:`raiser_executor` and :func:`raiser_window`: a real ``BoltExecutor`` of a bolt that is
  slow and raises on "boom", and the window requests that feed it.
- :func:`engine_loop` and :func:`open_xors`: one bolt task's loop on the engine's collector,
  and a window's tree XORs with the children's random edges taken out, for the tests that
  run the same batch two ways.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from sparkstorm import Bolt, Grouping, Spout, Stream, Topology, TopologySpec
from sparkstorm.engine.executor.collector import TaskCollector, WindowOutput
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.routing import build_routes
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.anchor_columns import batch_of
from sparkstorm.engine.wire.frames import pack
from sparkstorm.topology.task import BoltLoop


class Sentences(Spout):
    outputs = ["sentence", Stream(["note"], name="side")]


class Split(Bolt):
    outputs = ["word"]


class Count(Bolt):
    outputs = ["word", "count"]


def pipeline() -> TopologySpec:
    """The word count: sentences (2 tasks) -> split (1 task) -> count (3 tasks, fields grouping)."""

    class Pipeline(Topology):
        sentences = Sentences.spec(par=2)
        split = Split.spec(inputs=[sentences])
        count = Count.spec(inputs={split: Grouping.fields("word")}, num_tasks=3)

    return Pipeline.topology_spec


class Words(Spout):
    outputs = ["word"]


class SlowThenRaise(Bolt):
    """Spends 2 ms on each tuple and raises on "boom"."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        time.sleep(0.002)
        if tup.values.word == "boom":
            msg = f"cannot take {tup.values.word!r}"
            raise ValueError(msg)


class RaisingTopology(Topology):
    words = Words.spec()
    raiser = SlowThenRaise.spec(inputs=[words])


def raiser_executor() -> tuple[BoltExecutor, int, int]:
    """A ``BoltExecutor`` of ``raiser``, its task, and the ``words`` task that feeds it."""
    plan = ExecutionPlan(RaisingTopology.topology_spec, {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "raiser")
    return (BoltExecutor(plan, gid, "t"), plan.executors[gid].tasks[0],
            plan.component_tasks["words"][0])


def raiser_window(task: int, src: int, words: list[str], first_root: int) -> list[bytes]:
    """One window's input for ``task``: ``words`` from ``src``, tree roots from ``first_root``."""
    anchors = [{first_root + n: 1000 + n} for n in range(len(words))]
    return [pack([batch_of(task, src, "default", [[w] for w in words], anchors)])]


def engine_loop(spec: TopologySpec, component: str, bolt: type[Bolt]) -> BoltLoop:
    """The loop of ``component``'s one task: a ``bolt`` on the engine's own collector.

    Its ``emit`` is the collector's fast path, as ``topology.task.make_instance`` binds it.
    """
    plan = ExecutionPlan(spec, {"topology.acker.executors": 1})
    (task,) = plan.component_tasks[component]
    collector = TaskCollector(task, component, build_routes(plan, component, task),
                              plan.task_executor, WindowOutput(), True, True)
    instance = bolt()
    instance._collector = collector
    instance.emit = collector.bolt_emit  # type: ignore[method-assign]
    instance.initialize({}, {})
    return BoltLoop(instance, collector)


def open_xors(out: WindowOutput) -> dict[int, int]:
    """``out``'s per-root XORs with every delivered child's edge XORed in again.

    The children's edges are random; taken out of their roots' XORs (as the children's acks
    would), what is left is what two ways of emitting the same window must agree on exactly.
    """
    xors = dict(out.xor)
    for rows in out.rows.values():
        for *_, roots, edges in rows:
            for root, edge in zip(roots, edges, strict=True):
                for r, e in ({root: edge} if root is not None else edge or {}).items():
                    xors[r] = xors.get(r, 0) ^ e
    return xors


class Queued(Spout):
    """Emits the ids put in ``todo``, one per call; records what it hears."""

    outputs = ["n"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.todo: list[int] = []
        self.acks: list[int] = []
        self.fails: list[int] = []

    def next_tuple(self) -> None:
        if self.todo:
            n = self.todo.pop(0)
            self.emit([n], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        self.acks.append(tup_id)

    def fail(self, tup_id: Any) -> None:
        self.fails.append(tup_id)


class NumbersSink(Bolt):
    outputs: ClassVar[list[Any]] = []


class Numbers(Topology):
    """``Queued`` into a bolt that emits nothing: a spout executor's verdicts, alone."""

    numbers = Queued.spec()
    sink = NumbersSink.spec(inputs=[numbers])
