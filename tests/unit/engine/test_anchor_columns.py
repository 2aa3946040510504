"""Anchors as two flat columns per batch (issue 12 §2): same ledger as Storm's anchor maps.

A real ``BoltExecutor`` takes a packed window whose tuples belong to one tree, to several
trees or to none, emits one child per input (auto-anchored) and acks them. The ledger that
the spout's edges, the executor's XORs and the children's acks leave must be zero for every
root, the children's anchor columns must carry their parents' roots, and the wire must not
carry a map per single-root tuple.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.anchor_columns import EDGES, ROOTS, anchor_map, batch_of
from sparkstorm.engine.wire.frames import pack, unpack
from sparkstorm.topology.tuple import Tuple, delivered, values_class


class Words(Spout):
    outputs = ["word"]


class Echo(Bolt):
    """Emits each word upper-cased (anchored to it by auto_anchor); keeps what it saw."""

    outputs = ["word"]
    seen: ClassVar[list[Any]] = []

    def process(self, tup: Any) -> None:
        Echo.seen.append(tup.values)
        self.emit([tup.values.word.upper()])


class Sink(Bolt):
    def process(self, tup: Any) -> None:
        pass


class EchoTopology(Topology):
    words = Words.spec()
    echo = Echo.spec(inputs=[words])
    sink = Sink.spec(inputs=[echo])


def _echo() -> tuple[BoltExecutor, int, int]:
    plan = ExecutionPlan(EchoTopology.topology_spec, {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "echo")
    return BoltExecutor(plan, gid, "t"), plan.executors[gid].tasks[0], \
        plan.component_tasks["words"][0]


def test_single_multi_and_untracked_tuples_complete_their_trees() -> None:
    host, task, src = _echo()
    Echo.seen.clear()
    maps: list[dict[int, int] | None] = [{1: 0x11}, {2: 0x22, 3: 0x33}, None, {1: 0x44}]
    blob = pack([batch_of(task, src, "default", [["a"], ["b"], ["c"], ["d"]], maps)])

    output = host.run_window([blob])

    assert [values.word for values in Echo.seen] == ["a", "b", "c", "d"]
    ((batch,),) = output.rows.values()
    assert batch[3] == [["A"], ["B"], ["C"], ["D"]]
    roots, edges = batch[ROOTS], batch[EDGES]
    assert roots[0] == roots[3] == 1 and roots[1] is None and roots[2] is None
    assert isinstance(edges[0], int) and isinstance(edges[3], int), "one tree: no map"
    assert set(edges[1]) == {2, 3} and len(set(edges[1].values())) == 1
    assert edges[2] is None, "a child of an untracked tuple is untracked"

    ledger: dict[int, int] = {}
    for anchors in maps:  # what the spout's emits put in the acker
        for root, edge in (anchors or {}).items():
            ledger[root] = ledger.get(root, 0) ^ edge
    for root, value in output.xor.items():  # the echo's acks
        ledger[root] ^= value
    assert all(ledger.values()), "a tree completed before its children were acked"
    for root, edge in zip(roots, edges, strict=True):  # the sink acks every child
        for child_root, child_edge in (anchor_map(root, edge) or {}).items():
            ledger[child_root] ^= child_edge
    assert ledger == {1: 0, 2: 0, 3: 0}
    assert host.take_stats().acked == {"words:default": 4}


def test_the_wire_carries_two_ints_per_single_root_tuple() -> None:
    one_root = pack([batch_of(5, 6, "default", [["w"]] * 100, [{2**63 + n: 2**62 + n}
                                                               for n in range(100)])])
    unpacked = unpack(one_root)[0]
    assert unpacked[ROOTS][:2] == [2**63, 2**63 + 1] and unpacked[EDGES][0] == 2**62
    as_maps = pack([[5, 6, "default", [["w"]] * 100,
                     [{2**63 + n: 2**62 + n} for n in range(100)]]])
    assert len(one_root) < len(as_maps), "the columns must not be larger than the maps"


def test_failing_a_multi_root_tuple_fails_every_root() -> None:
    host, task, _ = _echo()
    collector = host.collectors[task]
    tup = Tuple(1, "words", "default", 9, ["x"], ("word",), None, {7: 1, 8: 2})
    collector.fail(tup, "no")
    assert set(host.output.failed) == {7, 8}
    collector.reset_timeout(Tuple(2, "words", "default", 9, ["y"], ("word",), 9, 3))
    assert host.output.resets == {9}


def test_delivered_tuples_match_the_public_constructor() -> None:
    cls = values_class(("word", "n"))
    made = list(delivered(10, "words", "default", 4, [["a", 1], ["b"]], cls, [5, None],
                          [6, None]))
    assert [t.id for t in made] == [10, 11]
    assert made[0].values.word == "a" and made[0].values.n == 1
    assert made[1].values == ("b",), "a row of another arity stays a plain tuple"
    assert (made[0].root, made[0].edge, made[0].anchors) == (5, 6, {5: 6})
    assert made[1].anchors is None and not made[1].done and made[1].ack_val == 0
    public = Tuple(10, "words", "default", 4, ["a", 1], ("word", "n"), {5: 6})
    assert (public.root, public.edge, public.values) == (5, 6, made[0].values)
