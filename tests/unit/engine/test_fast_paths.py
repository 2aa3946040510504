"""The executors' per-tuple fast paths against the general paths they stand in for.

- ``TaskCollector.bolt_emit`` on a fields-grouped stream (``collector.FieldsEmit``) must
  route, batch, anchor and count exactly as ``TaskCollector.emit`` does;
- ``engine.executor.input_loop.run_batch`` must process, auto-ack and auto-fail exactly as
  ``BoltLoop.run`` over ``delivered``'s tuples.
"""

from __future__ import annotations

import random
import sys
from functools import reduce
from operator import xor
from typing import Any

import pytest

from sparkstorm import (
    Bolt,
    FailedException,
    Grouping,
    ReportedFailedException,
    Spout,
    Stream,
    Topology,
)
from sparkstorm.engine.executor.collector import TaskCollector, WindowOutput
from sparkstorm.engine.executor.input_loop import run_batch
from sparkstorm.engine.executor.routing import build_routes
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.topology.task import BoltLoop, BoltRaised
from sparkstorm.topology.tuple import Tuple, delivered, values_class
from tests.unit.engine.helpers import engine_loop, open_xors

WORDS = ["storm", "spark", None, 7, 2.5, "storm", ("a", 1), "ümlaut", "", "spark", [1, 2]]


class Source(Spout):
    outputs = ["sentence"]


class Splitter(Bolt):
    outputs = ["word", Stream(["word", "n"], name="pairs"), Stream(["word"], name="everyone")]


class Sink(Bolt):
    outputs: list[Any] = []


class Grouped(Topology):
    source = Source.spec()
    split = Splitter.spec(inputs=[source])
    count = Sink.spec(inputs={split: Grouping.fields("word"),
                              split["pairs"]: Grouping.fields("n")}, num_tasks=5)
    everyone = Sink.spec(inputs={split["everyone"]: Grouping.ALL}, num_tasks=3)


def split_collector() -> TaskCollector:
    plan = ExecutionPlan(Grouped.topology_spec, {"topology.acker.executors": 1})
    (task,) = plan.component_tasks["split"]
    return TaskCollector(task, "split", build_routes(plan, "split", task), plan.task_executor,
                         WindowOutput(), True, True)


def anchored(root: int | None, edge: Any) -> Tuple:
    return Tuple(1, "source", "default", 1, ["a b"], ("sentence",), root, edge)


def edge_xors(roots: list[Any], edges: list[Any]) -> dict[int, int]:
    """A batch's edges folded per root: what the acker's ledger gets from its deliveries."""
    xors: dict[int, int] = {}
    for root, edge in zip(roots, edges, strict=True):
        for r, e in ({root: edge} if root is not None else (edge or {})).items():
            xors[r] = xors.get(r, 0) ^ e
    return xors


def emitted(collector: TaskCollector) -> tuple[list[Any], dict[str, int], dict[str, int]]:
    """The window's batches (edges: their shape and XOR per root) and the per-stream counters."""
    out = collector.output.take()
    batches = sorted(
        ([gid, task, src, stream, values, roots,
          [sorted(e) if isinstance(e, dict) else e is None for e in edges],
          edge_xors(roots, edges)]
         for gid, rows in out.rows.items() for task, src, stream, values, roots, edges in rows),
        key=repr)
    return batches, *collector.take_counts()


@pytest.mark.parametrize("anchor", [(11, 5), (None, {11: 5, 12: 6}), (None, None), None])
def test_fields_emit_batches_like_the_general_emit(
        anchor: tuple[Any, Any] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, general = split_collector(), split_collector()
    for collector in (fast, general):
        # the same edge ids, drawn in the same order, so that the edges' XORs compare
        monkeypatch.setattr(sys.modules[TaskCollector.__module__], "new_id",
                            random.Random(3).getrandbits)
        collector.current = None if anchor is None else anchored(*anchor)
        for stream in (None, "default", "pairs", "everyone"):
            for word in WORDS:
                values = [word, word] if stream == "pairs" else [word]
                if collector is fast:
                    collector.bolt_emit(values, stream)
                else:
                    collector.emit(values, stream, None, None, False, None)
    assert emitted(fast) == emitted(general)
    assert fast.output.count == general.output.count == 0  # taken
    if anchor is not None:  # the anchor's ack_val holds the XOR of every edge it was given
        assert fast.current.ack_val == general.current.ack_val  # type: ignore[union-attr]


def test_fields_emit_serves_the_one_field_fields_groupings_only() -> None:
    collector = split_collector()
    assert set(collector._fields_emits) == {None, "default", "pairs"}  # not ALL's stream
    assert collector._fields_emits["pairs"].key_index == 1
    collector.bolt_emit(["storm", 3], "pairs")
    assert collector._fields_emits["pairs"].emitted == 1  # it went the fast way
    assert collector.take_counts() == ({"pairs": 1}, {"pairs": 1})
    assert collector._fields_emits["pairs"].emitted == 0


def test_fields_emit_xors_each_edge_into_the_current_tuple() -> None:
    collector = split_collector()
    current = collector.current = anchored(11, 5)
    for word in WORDS:
        collector.bolt_emit([word])
    out = collector.output.take()
    edges = [e for rows in out.rows.values() for *_, roots, edges in rows
             for r, e in zip(roots, edges, strict=True) if r == 11]
    assert len(edges) == len(WORDS)
    assert reduce(xor, edges) == current.ack_val != 0


def test_fields_emit_starts_new_batches_after_the_output_is_taken() -> None:
    collector = split_collector()
    collector.bolt_emit(["storm"])
    first = collector.output.take()
    collector.bolt_emit(["storm"])
    second = collector.output.take()
    (rows_1,), (rows_2,) = first.rows.values(), second.rows.values()
    assert rows_1[0][3] == rows_2[0][3] == [["storm"]]
    assert rows_1[0] is not rows_2[0]


def test_fields_emit_follows_new_routes() -> None:
    collector = split_collector()
    plan = ExecutionPlan(Grouped.topology_spec, {"topology.acker.executors": 1})
    collector.routes = build_routes(plan, "split", collector.task)
    collector.bolt_emit(["storm"])
    assert collector.routes["default"].emitted == 1


# --- the input loop ------------------------------------------------------------------------
class Mixed(Bolt):
    """Emits for "emit", acks "ack", fails "fail", keeps "keep", raises on "boom".

    Raises ``FailedException`` on "failed" (after emitting) and ``ReportedFailedException``
    on "reported"; "acked-failed" acks, then raises ``FailedException``.
    """

    outputs = ["word"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.seen: list[tuple[Any, ...]] = []
        self.kept: list[Tuple] = []

    def process(self, tup: Tuple) -> None:
        word = tup.values[0]
        self.seen.append((tup.id, tup.component, tup.stream, tup.task, tuple(tup.values),
                          type(tup.values).__name__, tup.root, tup.edge))
        if word == "emit":
            self.emit(["x"])
            self.emit(["y"])
        elif word == "ack":
            self.ack(tup)
        elif word == "fail":
            self.fail(tup)
        elif word == "keep":
            self.kept.append(tup)
        elif word == "boom":
            msg = "boom"
            raise ValueError(msg)
        elif word == "failed":
            self.emit(["z"])
            raise FailedException(word)
        elif word == "reported":
            raise ReportedFailedException(word)
        elif word == "acked-failed":
            self.ack(tup)
            raise FailedException(word)


class Counting(Topology):
    source = Source.spec()
    mixed = Mixed.spec(inputs=[source])
    sink = Sink.spec(inputs=[mixed])


def mixed_loop(auto_ack: bool = True) -> BoltLoop:
    loop = engine_loop(Counting.topology_spec, "mixed", Mixed)
    loop.auto_ack = auto_ack
    return loop


RUNS = False  # set by a test: the roots come in runs, as an upstream's children do
UNTRACKED = False  # set by a test: no tuple belongs to a tree (checkpoint reliability)


def batch(words: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    values = [[w] for w in words]
    if UNTRACKED:
        return values, [None] * len(words), [None] * len(words)
    roots = [100 + (i // 3 if RUNS else i) if i % 3 or RUNS else None
             for i in range(len(words))]
    edges = [1000 + i if i % 3 or RUNS else ({7: 1, 8: 2} if i % 2 else None)
             for i in range(len(words))]
    return values, roots, edges


def outcome(loop: BoltLoop, result: Any) -> tuple[Any, ...]:
    out = loop.collector.output.take()  # type: ignore[attr-defined]
    instance = loop.instance
    # a failed tree's XOR is never read (the acker fails it whatever it holds), and the two
    # paths XOR the children of a tuple that emitted, then raised, at different times
    xors = {root: x for root, x in open_xors(out).items() if root not in out.failed}
    return (result, instance.seen, [t.done for t in instance.kept], xors,
            {r: (f.cause, f.reason) for r, f in out.failed.items()},
            [(r[3], r[4]) for rows in out.rows.values() for r in rows],
            loop.collector.current)  # type: ignore[attr-defined]


def run_both(words: list[Any], *, auto_ack: bool = True, tick: bool = False,
             arity: int = 1) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    values, roots, edges = batch(words)
    if arity != 1:
        values[0] = values[0] * arity  # a row that does not fit the namedtuple
    cls = values_class(("sentence",))
    results = []
    for fast in (True, False):
        loop = mixed_loop(auto_ack)
        try:
            if fast:
                result: Any = run_batch(loop, 5, ("source", "default", 2), values, cls, roots,
                                        edges, tick)
            else:
                result = loop.run(delivered(5, "source", "default", 2, values, cls, roots,
                                            edges), tick)
        except BoltRaised as raised:
            result = ("raised", str(raised.cause), raised.processed, raised.auto_acked)
        results.append(outcome(loop, result))
    return results[0], results[1]


@pytest.mark.parametrize("words", [
    ["plain", "emit", "ack", "fail", "keep", "plain", "emit", "plain", "keep", "ack"],
    ["emit", "plain", "boom", "plain"],
    [],
    ["plain", "failed", "emit", "reported", "failed", "plain", "acked-failed", "keep"],
    ["failed", "failed", "plain", "boom", "plain"],
    ["plain", "emit", "plain", "failed"],
])
def test_run_batch_does_what_the_bolt_loop_does(words: list[str]) -> None:
    fast, general = run_both(words)
    assert fast == general


def test_run_batch_without_auto_ack_is_the_bolt_loop() -> None:
    words = ["plain", "ack", "fail", "keep", "plain"]  # emits of a tuple left open: random
    assert run_both(words, auto_ack=False)[0] == run_both(words, auto_ack=False)[1]


def test_run_batch_with_a_row_of_another_arity() -> None:
    fast, general = run_both(["plain", "emit", "plain"], arity=2)
    assert fast == general
    assert fast[1][0][5] == "tuple"  # the odd row is a plain tuple, the others namedtuples
    assert fast[1][1][5] == "Values"


def test_run_batch_acks_every_plain_tuple_once() -> None:
    (result, _, _, xors, failed, _, current), _ = run_both(["plain"] * 7)
    assert result == 7
    assert failed == {}
    assert current is None
    # each single-root tuple contributed its edge, the two-root ones each of their edges
    expected: dict[int, int] = {}
    values, roots, edges = batch(["plain"] * 7)
    for root, edge in zip(roots, edges, strict=True):
        for r, e in ({root: edge} if root is not None else (edge or {})).items():
            expected[r] = expected.get(r, 0) ^ e
    assert xors == expected


# --- the spout's emit ----------------------------------------------------------------------
def spout_collector(tracking: bool = True) -> TaskCollector:
    plan = ExecutionPlan(Grouped.topology_spec, {"topology.acker.executors": 1})
    (task,) = plan.component_tasks["source"]
    return TaskCollector(task, "source", build_routes(plan, "source", task),
                         plan.task_executor, WindowOutput(), tracking, True)


@pytest.mark.parametrize("tracking", [True, False])
def test_spout_emit_tracks_like_the_general_emit(tracking: bool) -> None:
    fast, general = spout_collector(tracking), spout_collector(tracking)
    for n in range(5):
        fast.spout_emit([f"s{n}"], tup_id=n)
        general.emit([f"s{n}"], None, None, None, False, n)
    fast.spout_emit(["untracked"])
    general.emit(["untracked"], None, None, None, False, None)
    for collector in (fast, general):
        assert sorted(m for m, _, _ in collector.pending_roots.values()) == (
            list(range(5)) if tracking else [])
        assert [m for m, _, _ in collector.immediate_acks] == ([] if tracking else list(range(5)))
    fast_out, general_out = fast.output.take(), general.output.take()
    assert fast_out.count == general_out.count == 6
    assert set(fast_out.inits.values()) == set(general_out.inits.values())
    assert sorted(fast_out.inits) == sorted(fast.pending_roots)
    # each tree's XOR is the XOR of the edges its root's deliveries carry
    for out in (fast_out, general_out):
        ((_, _, _, values, roots, edges),) = next(iter(out.rows.values()))
        assert [v[0] for v in values] == [*(f"s{n}" for n in range(5)), "untracked"]
        for root, edge in zip(roots, edges, strict=True):
            if root is not None:
                assert out.xor[root] == edge
    assert fast.take_counts() == general.take_counts() == ({"default": 6}, {"default": 6})


@pytest.mark.parametrize("words", [
    ["plain", "plain", "ack", "plain", "emit", "plain", "keep", "plain", "fail", "plain"],
    ["plain", "plain", "plain", "plain", "boom", "plain"],
    ["emit", "emit", "emit", "plain"],
])
def test_run_batch_folds_runs_of_one_root_as_the_bolt_loop_acks(
        words: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.RUNS", True)
    assert batch(words)[1][:4] == [100, 100, 100, 101]
    fast, general = run_both(words)
    assert fast == general


@pytest.mark.parametrize("words", [
    ["plain", "emit", "ack", "fail", "keep", "plain", "emit", "plain", "keep", "ack"],
    ["emit", "plain", "boom", "plain"],
    ["plain", "failed", "emit", "reported", "failed", "plain", "acked-failed", "keep"],
    ["emit"] * 600 + ["keep", "plain"],  # routed every GROUPS_PER_ROUTE tuples on the way
])
def test_run_batch_of_untracked_tuples_does_what_the_bolt_loop_does(
        words: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``input_loop._untracked_run``: no roots, no edges, the same tuples and outcome."""
    monkeypatch.setattr(f"{__name__}.UNTRACKED", True)
    fast, general = run_both(words)
    assert fast == general
    assert all(seen[6:] == (None, None) for seen in fast[1]), "no tuple had a tree"


def test_run_batch_reuses_a_tuple_object_only_when_nothing_kept_it() -> None:
    loop = mixed_loop()
    ids: list[int] = []
    process = loop.instance.process

    def remember(tup: Tuple) -> None:
        ids.append(id(tup))
        process(tup)
    loop.instance.process = remember
    words = ["plain", "plain", "keep", "plain", "keep", "keep", "plain", "plain"]
    values, roots, edges = batch(words)
    run_batch(loop, 5, ("source", "default", 2), values, values_class(("sentence",)), roots,
              edges, False)
    kept = loop.instance.kept
    assert [t.values.sentence for t in kept] == ["keep"] * 3  # untouched after being kept
    assert [t.id for t in kept] == [7, 9, 10]
    assert len({id(t) for t in kept}) == 3
    assert ids[0] == ids[1]  # reused: the bolt did not keep the first
    assert ids[7] == ids[6] != ids[5]


@pytest.mark.parametrize("fast", [True, False])
def test_a_failed_exception_fails_its_tuple_and_the_batch_goes_on(fast: bool) -> None:
    words = ["plain", "failed", "plain", "plain", "reported", "plain"]
    values, roots, edges = batch(words)
    loop = mixed_loop()
    reported: list[str] = []
    loop.collector.error_sink = lambda task, text: reported.append(text)  # type: ignore[attr-defined]
    cls = values_class(("sentence",))
    if fast:
        acked = run_batch(loop, 5, ("source", "default", 2), values, cls, roots, edges, False)
    else:
        acked = loop.run(delivered(5, "source", "default", 2, values, cls, roots, edges))
    assert acked == 4, "the four plain tuples are auto-acked, the failed ones are not"
    assert [seen[0] for seen in loop.instance.seen] == [5, 6, 7, 8, 9, 10], "every tuple ran"
    out = loop.collector.output.take()  # type: ignore[attr-defined]
    failed = {root: (f.cause, f.reason) for root, f in out.failed.items()}
    assert failed == {101: ("explicit", "mixed: FailedException: failed"),
                      104: ("explicit", "mixed: ReportedFailedException: reported")}
    assert len(reported) == 1 and "ReportedFailedException: reported" in reported[0], \
        "only the reported one is the component's error"
