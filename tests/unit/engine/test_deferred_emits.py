"""Emits that wait for the window's end against emits routed at once (``deferred_emits``).

The same batch runs through the input loop twice, once with the collector letting its
commonest emits wait and once routing every emit when it is made. The window's batches (rows
in order per target task, roots) and the trees' XORs, with each child's random edge taken out
again, must be the same: the acker then sees the same trees complete or stay open.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from sparkstorm import Bolt, Grouping, Spout, Stream, Topology
from sparkstorm.engine.executor.collector import TaskCollector
from sparkstorm.engine.executor.input_loop import run_batch
from sparkstorm.topology.task import BoltLoop, BoltRaised
from sparkstorm.topology.tuple import Tuple, values_class
from tests.unit.engine.helpers import engine_loop, open_xors


class Source(Spout):
    outputs = ["sentence"]


class Splitter(Bolt):
    """What it emits for each input word (see :meth:`process`)."""

    outputs = ["word", Stream(["word"], name="other")]

    def process(self, tup: Tuple) -> None:
        word = tup.values[0]
        if word == "many":
            for child in ("a", "b", 7, ("t", 1), f"word {tup.id}"):  # the last: every task
                self.emit([child])
        elif word == "mixed":  # an emit that cannot wait, between two that can
            self.emit(["before"])
            self.emit(["pinned"], anchors=[tup])
            self.emit(["after"])
        elif word == "other":
            self.emit(["first"])
            self.emit(["elsewhere"], stream="other")
            self.emit(["last"])
        elif word == "ack":
            self.emit(["acked"])
            self.ack(tup)
        elif word == "fail":
            self.emit(["failed"])
            self.fail(tup)
        elif word == "wrong":
            self.emit(["too", "long"])  # refused at once: the bolt raises
        elif word == "boom":
            self.emit(["sent anyway"])
            msg = "boom"
            raise ValueError(msg)


class Sink(Bolt):
    outputs: list[Any] = []


class Splitting(Topology):
    source = Source.spec()
    split = Splitter.spec(inputs=[source])
    count = Sink.spec(inputs={split: Grouping.fields("word")}, num_tasks=3)
    other = Sink.spec(inputs={split["other"]: Grouping.SHUFFLE})


def split_loop(defer: bool) -> BoltLoop:
    loop = engine_loop(Splitting.topology_spec, "split", Splitter)
    collector: TaskCollector = loop.collector  # type: ignore[assignment]
    assert collector.defers_emits
    collector.defers_emits = defer
    return loop


def window(loop: BoltLoop) -> tuple[list[Any], dict[int, int], dict[int, str]]:
    """The window's batches (rows, roots), XORs and failed trees.

    The XORs are those of the trees still open, with the children's edges taken out.
    """
    out = loop.collector.output.take()  # type: ignore[attr-defined]
    xors = open_xors(out)
    batches = [(task, src, stream, values, roots)
               for rows in out.rows.values() for task, src, stream, values, roots, _ in rows]
    # a failed tree's XOR means nothing (it fails whatever it is), and the two ways differ
    # there: a failed tuple's children's edges stay in its ack_val, or go into the XOR
    failed = {r: f.cause for r, f in out.failed.items()}
    return sorted(batches, key=repr), {r: x for r, x in xors.items() if r not in failed}, failed


def run(words: list[Any], roots: list[Any], edges: list[Any], defer: bool) -> tuple[Any, ...]:
    loop = split_loop(defer)
    try:
        result: Any = run_batch(loop, 1, ("source", "default", 9), [[w] for w in words],
                                values_class(("sentence",)), roots, edges, False)
    except BoltRaised as raised:
        result = ("raised", repr(raised.cause), raised.processed, raised.auto_acked)
    return (result, *window(loop), loop.collector.deferred,  # type: ignore[attr-defined]
            loop.collector.deferred_groups)  # type: ignore[attr-defined]


def one_tree_each(words: list[Any]) -> tuple[list[Any], list[Any]]:
    """Roots in runs of two (an upstream's children come one after the other)."""
    return [100 + i // 2 for i in range(len(words))], [1000 + i for i in range(len(words))]


@pytest.mark.parametrize("words", [
    ["many", "plain", "many", "ack", "fail", "many"],
    ["many", "mixed", "many", "other", "many"],
    ["many", "boom", "many"],
    ["many", "wrong"],
    ["many"] * 80,  # 400 waiting rows, routed at the window's end
    ["many"] * 40 + ["mixed"] + ["many"] * 40,
    ["many"] * 1200,  # routed in the loop, every GROUPS_PER_ROUTE tuples, and at the end
])
def test_waiting_emits_make_the_window_emits_at_once_make(words: list[Any]) -> None:
    roots, edges = one_tree_each(words)
    waiting, at_once = run(words, roots, edges, True), run(words, roots, edges, False)
    assert waiting == at_once
    assert waiting[-2] is None and waiting[-1] == [], "nothing left waiting after the window"


def test_tuples_of_several_trees_and_untracked_ones_anchor_their_waiting_emits() -> None:
    words = ["many"] * 60 + ["mixed", "many"]
    roots: list[Any] = [100 + i if i % 3 == 0 else None for i in range(len(words))]
    edges: list[Any] = [1000 + i if i % 3 == 0 else ({7: 1, 8: 2} if i % 3 == 1 else None)
                        for i in range(len(words))]
    waiting, at_once = run(words, roots, edges, True), run(words, roots, edges, False)
    assert waiting == at_once
    batches = waiting[1]
    assert any(None in batch[4] for batch in batches), "untracked and several-tree rows"


def test_waiting_rows_reach_every_task_and_leave_each_tree_its_own_edge() -> None:
    words = ["many"] * 100
    roots, edges = one_tree_each(words)
    (_, batches, xors, failed, *_) = run(words, roots, edges, True)
    assert sum(len(batch[3]) for batch in batches) == 500
    assert len({batch[0] for batch in batches}) == 3, "every count task got rows"
    # each tuple's own edge is all that is left once its children are acked: the tree
    # completes exactly when the input's edge is acked upstream
    assert xors == {root: edges[2 * (root - 100)] ^ edges[2 * (root - 100) + 1]
                    for root in set(roots)}
    assert failed == {}


def test_rows_reach_each_task_in_the_order_they_were_emitted() -> None:
    words = ["many"] * 70 + ["mixed"] + ["many"] * 70
    roots, edges = one_tree_each(words)
    _, batches, *_ = run(words, roots, edges, True)
    for task, _src, stream, values, _roots in batches:
        if stream != "default":
            continue
        # "before" and "after" of the one mixed tuple go where their hash sends them; the
        # pinned row (an emit routed at once, between them) keeps its place among them
        mine = [v[0] for v in values if v[0] in ("before", "pinned", "after")]
        order = ["before", "pinned", "after"]
        assert mine == [w for w in order if w in mine], task


def test_emits_outside_the_input_loop_do_not_wait() -> None:
    loop = split_loop(True)
    collector: TaskCollector = loop.collector  # type: ignore[assignment]
    current = Tuple(1, "source", "default", 9, ["x"], ("sentence",), 100, 1000)
    collector.current = current
    collector.bolt_emit(["now"])
    assert collector.deferred is None and collector.deferred_groups == []
    out = collector.output.take()
    ((*_, values, roots, (edge,)),) = (row for rows in out.rows.values() for row in rows)
    assert (values, roots) == ([["now"]], [100])
    assert out.xor == {} and current.ack_val == edge, "the edge is in the tuple's ack_val"


@pytest.mark.parametrize("words", [
    ["many"] * 1200,  # routed every GROUPS_PER_ROUTE tuples and at the end
    ["many"] * 40 + ["mixed", "other"] + ["many"] * 40,  # emits routed at once between
])
def test_untracked_tuples_waiting_emits_leave_every_column_aligned(words: list[Any]) -> None:
    """Checkpoint reliability: no input is tracked, so no row gets a root or an edge.

    The commonest emits are routed as they come, their roots and edges filled in after
    their values (``deferred_emits.unanchored_emit``): each batch's columns keep one entry
    a row.
    """
    untracked: list[Any] = [None] * len(words)
    waiting = run(words, untracked, untracked, True)
    assert waiting == run(words, untracked, untracked, False)
    loop = split_loop(True)
    run_batch(loop, 1, ("source", "default", 9), [[w] for w in words],
              values_class(("sentence",)), untracked, untracked, False)
    out = loop.collector.output.take()  # type: ignore[attr-defined]
    batches = [row for rows in out.rows.values() for row in rows]
    assert sum(len(values) for *_, values, _, _ in batches) == 5 * words.count("many") + \
        3 * words.count("mixed") + 3 * words.count("other")
    for *_, values, roots, edges in batches:
        assert roots == [None] * len(values) and edges == [None] * len(values)
    assert out.xor == {}


@pytest.mark.parametrize(("words", "default_emits"), [
    (["many", "mixed", "other", "many"], 5 + 3 + 2 + 5),
    (["many", "boom", "many"], 5 + 1),  # the batch stops at the raise, its emit goes
])
def test_untracked_emits_wait_for_nothing_and_count_as_emits_routed_at_once(
        words: list[Any], default_emits: int) -> None:
    untracked: list[Any] = [None] * len(words)
    counts = []
    for defer in (True, False):
        loop = split_loop(defer)
        collector: TaskCollector = loop.collector  # type: ignore[assignment]
        with contextlib.suppress(BoltRaised):  # "boom": the emits before it still count
            run_batch(loop, 1, ("source", "default", 9), [[w] for w in words],
                      values_class(("sentence",)), untracked, untracked, False)
        assert not collector.deferred_groups and not collector.deferred  # nothing waits
        assert loop.instance.emit == collector.bolt_emit  # after the batch, as before it
        collector.output.take()
        counts.append({name: (route.emitted, route.transferred)
                       for name, route in collector.routes.items()})
    assert counts[0] == counts[1]
    assert counts[0]["default"][0] == default_emits
