"""Tests of Storm's XOR acking: TaskCollector anchoring/ack/fail and the Acker ledger.

A small in-memory harness stands in for the executors and the worker: it keeps one
``WindowOutput`` per executor, delivers the buffered rows as ``Tuple``s the way
``BoltExecutor`` does, and hands the acker the ``WindowMeta`` each executor would report.
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest

from sparkstorm import Grouping, Topology, TopologySpec, Tuple
from sparkstorm.engine.driver import acker as acking
from sparkstorm.engine.driver.acker import Acker, Verdicts
from sparkstorm.engine.executor.collector import TaskCollector, WindowOutput
from sparkstorm.engine.executor.routing import build_routes
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.failures import Failure
from sparkstorm.engine.wire.messages import WindowMeta
from tests.fakes import FakeClock
from tests.unit.engine.helpers import Sentences, Split, pipeline

TIMEOUT = 30.0


class Cluster:
    """Executors' outputs, bolt deliveries and the acker, driven by hand."""

    def __init__(self, spec: TopologySpec, *, ackers: int = 1, auto_anchor: bool = True) -> None:
        self.plan = plan = ExecutionPlan(spec, {"topology.acker.executors": ackers})
        self.outputs = {e.gid: WindowOutput() for e in plan.executors}
        self.collectors: dict[int, TaskCollector] = {}
        for executor in plan.executors:
            for task in executor.tasks:
                self.collectors[task] = TaskCollector(
                    task, executor.component, build_routes(plan, executor.component, task),
                    plan.task_executor, self.outputs[executor.gid], ackers > 0, auto_anchor,
                )
        self.acker = Acker(plan.acker_tasks, TIMEOUT)
        self.inbox: dict[int, list[list[Any]]] = defaultdict(list)
        self.metas: list[WindowMeta] = []
        self.last_metas: list[WindowMeta] = []
        self.next_tuple_id = 0

    def task(self, component: str, index: int = 0) -> int:
        return self.plan.component_tasks[component][index]

    def collector(self, component: str, index: int = 0) -> TaskCollector:
        return self.collectors[self.task(component, index)]

    def spout_emit(self, values: list[Any], tup_id: Any, *, index: int = 0,
                   stream: str | None = None) -> int:
        """Emit a tracked spout tuple; returns its root id."""
        collector = self.collector("sentences", index)
        before = set(collector.pending_roots)
        collector.emit(values, stream, None, None, False, tup_id)
        (root,) = set(collector.pending_roots) - before
        assert collector.pending_roots[root][0] == tup_id
        return root

    def flush(self) -> None:
        """End of an executor round: rows go to their targets, acker metas are queued."""
        for gid, output in self.outputs.items():
            taken = output.take()
            for target, rows in taken.rows.items():
                self.inbox[target].extend(rows)
            meta = WindowMeta(gid, self.plan.executors[gid].component, taken.xor, taken.inits,
                              taken.failed, list(taken.resets))
            self.metas.append(WindowMeta.decode(meta.encode()))  # as the driver gets it

    def window(self, *, reverse: bool = False) -> Verdicts:
        """Flush and feed every queued meta to the acker as one window."""
        self.flush()
        metas, self.metas = self.metas, []
        self.last_metas = [m for m in metas if m.xor or m.inits or m.failed or m.resets]
        return self.acker.process_window(metas[::-1] if reverse else metas)

    def receive(self, component: str) -> list[tuple[int, Tuple]]:
        """The delivered (target task, tuple) pairs of ``component``, built as BoltExecutor does."""
        received = []
        for executor in self.plan.executors:
            if executor.component != component:
                continue
            for target, src, stream, values_list, roots, edges in self.inbox.pop(executor.gid,
                                                                                 []):
                source = self.plan.task_component[src]
                for values, root, edge in zip(values_list, roots, edges, strict=True):
                    self.next_tuple_id += 1
                    received.append((target, Tuple(
                        self.next_tuple_id, source, stream, src, values,
                        self.plan.fields_of(source, stream), root, edge)))
        return received

    def ack(self, delivered: tuple[int, Tuple]) -> None:
        target, tup = delivered
        self.collectors[target].ack(tup)

    def fail(self, delivered: tuple[int, Tuple]) -> None:
        target, tup = delivered
        self.collectors[target].fail(tup)

    def split_into_words(self) -> list[tuple[int, Tuple]]:
        """The split task emits one child per word, anchored to its input, and acks the input."""
        self.flush()
        (delivered,) = self.receive("split")
        target, sentence = delivered
        collector = self.collectors[target]
        for word in sentence.values.sentence.split():
            collector.emit([word], None, [sentence], None, False, None)
        collector.ack(sentence)
        self.flush()
        return self.receive("count")


def verdict(mapping: dict[int, list[int]]) -> dict[int, list[int]]:
    return {task: sorted(roots) for task, roots in mapping.items() if roots}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock(1000.0)
    monkeypatch.setattr(acking, "time", SimpleNamespace(monotonic=fake))
    return fake


# --- completion --------------------------------------------------------------------------


def test_tree_completes_only_after_every_child_is_acked_across_windows() -> None:
    cluster = Cluster(pipeline())
    spout_task = cluster.task("sentences")
    root = cluster.spout_emit(["a b c"], "m1")
    first = cluster.window()
    assert verdict(first.ack) == verdict(first.fail) == {}
    assert cluster.acker.open_trees == 1

    children = cluster.split_into_words()
    assert len(children) == 3
    assert all(set(tup.anchors or {}) == {root} for _, tup in children)
    assert verdict(cluster.window().ack) == {}

    cluster.ack(children[0])
    assert verdict(cluster.window().ack) == {}
    cluster.ack(children[1])
    assert verdict(cluster.window().ack) == {}
    assert cluster.acker.open_trees == 1

    cluster.ack(children[2])
    last = cluster.window()
    assert verdict(last.ack) == {spout_task: [root]}
    assert verdict(last.fail) == {}
    assert cluster.acker.open_trees == 0


def test_tree_completes_within_one_window_whatever_the_meta_order() -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["x y z"], "m1", index=1)
    cluster.flush()
    children = cluster.split_into_words()
    for child in children:
        cluster.ack(child)
    result = cluster.window(reverse=True)  # the init arrives after the XORs
    assert verdict(result.ack) == {cluster.task("sentences", 1): [root]}
    assert cluster.acker.open_trees == 0


def test_ack_verdict_goes_to_the_emitting_spout_task() -> None:
    cluster = Cluster(pipeline())
    roots = {cluster.spout_emit(["a"], "first", index=0): 0,
             cluster.spout_emit(["b"], "second", index=1): 1}
    cluster.flush()
    for delivered in cluster.receive("split"):
        cluster.ack(delivered)
    result = cluster.window()
    assert verdict(result.ack) == {
        cluster.task("sentences", i): [root] for root, i in roots.items()
    }


def test_tuple_sent_to_several_tasks_needs_every_delivery_acked() -> None:
    class Broadcast(Topology):
        sentences = Sentences.spec()
        split = Split.spec(inputs={sentences: Grouping.ALL}, num_tasks=3)

    cluster = Cluster(Broadcast.topology_spec)
    root = cluster.spout_emit(["a"], "m1")
    cluster.flush()
    deliveries = cluster.receive("split")
    assert sorted(t for t, _ in deliveries) == cluster.plan.component_tasks["split"]
    for delivered in deliveries[:-1]:
        cluster.ack(delivered)
    assert verdict(cluster.window().ack) == {}
    cluster.ack(deliveries[-1])
    assert verdict(cluster.window().ack) == {cluster.task("sentences"): [root]}


def test_spout_tuple_without_subscribers_completes_at_once() -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["note"], "m1", stream="side")
    assert verdict(cluster.window().ack) == {cluster.task("sentences"): [root]}
    assert cluster.acker.open_trees == 0


# --- failure -----------------------------------------------------------------------------


@pytest.mark.parametrize("failed", [0, 1, 2])
def test_fail_of_any_descendant_fails_the_root(failed: int) -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["a b c"], "m1")
    children = cluster.split_into_words()
    for i, child in enumerate(children):
        if i < failed:
            cluster.ack(child)
    cluster.fail(children[failed])
    result = cluster.window()
    assert verdict(result.fail) == {cluster.task("sentences"): [root]}
    assert verdict(result.ack) == {}
    assert cluster.acker.open_trees == 0

    for child in children[failed + 1:]:  # the rest of the tree is acked later: ignored
        cluster.ack(child)
    late = cluster.window()
    assert verdict(late.ack) == verdict(late.fail) == {}


def test_fail_of_the_spout_tuple_itself_fails_the_root() -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["a b"], "m1")
    cluster.flush()
    (delivered,) = cluster.receive("split")
    cluster.fail(delivered)
    assert verdict(cluster.window().fail) == {cluster.task("sentences"): [root]}


def test_fail_wins_over_completion_in_the_same_window() -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["a b"], "m1")
    children = cluster.split_into_words()
    cluster.ack(children[0])
    cluster.fail(children[1])
    result = cluster.window()
    assert verdict(result.fail) == {cluster.task("sentences"): [root]}
    assert verdict(result.ack) == {}


# --- anchoring ---------------------------------------------------------------------------


def test_multi_anchored_tuple_completes_both_roots() -> None:
    cluster = Cluster(pipeline())
    first = cluster.spout_emit(["one"], "m1", index=0)
    second = cluster.spout_emit(["two"], "m2", index=1)
    cluster.flush()
    deliveries = cluster.receive("split")
    assert len(deliveries) == 2
    target = deliveries[0][0]
    inputs = [tup for _, tup in deliveries]
    collector = cluster.collectors[target]
    collector.emit(["joined"], None, inputs, None, False, None)
    for tup in inputs:
        collector.ack(tup)
    assert verdict(cluster.window().ack) == {}
    assert cluster.acker.open_trees == 2

    cluster.flush()
    (child,) = cluster.receive("count")
    assert set(child[1].anchors or {}) == {first, second}
    cluster.ack(child)
    result = cluster.window()
    assert verdict(result.ack) == {cluster.task("sentences", 0): [first],
                                   cluster.task("sentences", 1): [second]}
    assert cluster.acker.open_trees == 0


def test_multi_anchored_tuple_fail_fails_both_roots() -> None:
    cluster = Cluster(pipeline())
    first = cluster.spout_emit(["one"], "m1", index=0)
    second = cluster.spout_emit(["two"], "m2", index=0)
    cluster.flush()
    deliveries = cluster.receive("split")
    target = deliveries[0][0]
    inputs = [tup for _, tup in deliveries]
    cluster.collectors[target].emit(["joined"], None, inputs, None, False, None)
    for tup in inputs:
        cluster.collectors[target].ack(tup)
    cluster.flush()
    (child,) = cluster.receive("count")
    cluster.fail(child)
    assert verdict(cluster.window().fail) == {cluster.task("sentences"): sorted([first, second])}


@pytest.mark.parametrize("auto_anchor", [True, False])
def test_auto_anchor_to_the_current_tuple(auto_anchor: bool) -> None:
    cluster = Cluster(pipeline(), auto_anchor=auto_anchor)
    root = cluster.spout_emit(["a"], "m1")
    cluster.flush()
    ((target, sentence),) = cluster.receive("split")
    collector = cluster.collectors[target]
    collector.current = sentence
    collector.emit(["a"], None, None, None, False, None)  # no explicit anchors
    collector.current = None
    collector.ack(sentence)
    cluster.flush()
    ((_, child),) = cluster.receive("count")
    if auto_anchor:
        assert set(child.anchors or {}) == {root}
        assert verdict(cluster.window().ack) == {}  # the child is still open
    else:
        assert child.anchors is None
        assert verdict(cluster.window().ack) == {cluster.task("sentences"): [root]}


# --- untracked tuples and repeats --------------------------------------------------------


def test_untracked_tuples_do_not_touch_the_ledger() -> None:
    cluster = Cluster(pipeline())
    cluster.collector("sentences").emit(["a b"], None, None, None, False, None)  # no tup_id
    cluster.window()
    assert cluster.last_metas == []
    assert cluster.acker.open_trees == 0

    ((target, sentence),) = cluster.receive("split")
    assert sentence.anchors is None
    collector = cluster.collectors[target]
    collector.emit(["a"], None, [sentence], None, False, None)  # anchored to an untracked tuple
    collector.current = sentence
    collector.emit(["b"], None, None, None, False, None)  # auto-anchored to it
    collector.ack(sentence)
    collector.reset_timeout(sentence)
    cluster.flush()
    children = cluster.receive("count")
    assert [tup.anchors for _, tup in children] == [None, None]
    cluster.fail(children[0])
    cluster.ack(children[1])
    result = cluster.window()
    assert cluster.last_metas == []
    assert verdict(result.ack) == verdict(result.fail) == verdict(result.reset) == {}


def test_untracked_spout_tuple_when_acking_is_off() -> None:
    cluster = Cluster(pipeline(), ackers=0)
    collector = cluster.collector("sentences")
    collector.emit(["a"], None, None, None, False, "m1")
    assert collector.immediate_acks == [("m1", "default", 1)]
    assert collector.pending_roots == {}
    cluster.window()
    assert cluster.last_metas == []
    ((_, sentence),) = cluster.receive("split")
    assert sentence.anchors is None


@pytest.mark.parametrize("repeat_in_a_later_window", [False, True], ids=["same", "later"])
def test_acking_a_tuple_twice_is_ignored(repeat_in_a_later_window: bool) -> None:
    """A repeated ack would XOR the same value again and cancel the first one."""
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["a b c"], "m1")
    children = cluster.split_into_words()
    cluster.ack(children[0])
    if not repeat_in_a_later_window:
        cluster.ack(children[0])
    assert verdict(cluster.window().ack) == {}
    if repeat_in_a_later_window:
        cluster.ack(children[0])
    cluster.ack(children[1])
    cluster.ack(children[2])
    assert verdict(cluster.window().ack) == {cluster.task("sentences"): [root]}


def test_fail_after_ack_is_ignored() -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["a b"], "m1")
    children = cluster.split_into_words()
    cluster.ack(children[0])
    cluster.ack(children[1])
    cluster.fail(children[0])
    result = cluster.window()
    assert verdict(result.ack) == {cluster.task("sentences"): [root]}
    assert verdict(result.fail) == {}


def test_ack_after_fail_is_ignored() -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["a b"], "m1")
    children = cluster.split_into_words()
    cluster.window()
    cluster.fail(children[0])
    cluster.ack(children[0])
    result = cluster.window()
    reason = Failure("explicit", "count: fail() called")
    (meta,) = cluster.last_metas
    assert (meta.xor, meta.inits, meta.failed, meta.resets) == ({}, {}, {root: reason}, [])
    assert verdict(result.fail) == {cluster.task("sentences"): [root]}
    assert result.reasons == {root: reason}


# --- timeouts ----------------------------------------------------------------------------


def test_reset_timeout_gives_a_reset_verdict_and_restarts_the_clock(clock: FakeClock) -> None:
    cluster = Cluster(pipeline())
    root = cluster.spout_emit(["a b"], "m1")
    cluster.window()
    clock.now += 20
    cluster.flush()
    ((target, sentence),) = cluster.receive("split")
    cluster.collectors[target].reset_timeout(sentence)
    result = cluster.window()
    assert verdict(result.reset) == {cluster.task("sentences"): [root]}
    assert verdict(result.ack) == verdict(result.fail) == {}
    assert not sentence.done  # resetting is not acking

    clock.now += 20  # 40s after the emit, 20s after the reset
    cluster.window()
    assert cluster.acker.open_trees == 1
    clock.now += 11  # 31s after the reset
    cluster.window()
    assert cluster.acker.open_trees == 0


def test_expiry_drops_ledger_entries_older_than_the_timeout(clock: FakeClock) -> None:
    cluster = Cluster(pipeline())
    old = cluster.spout_emit(["a"], "old")
    cluster.window()
    clock.now += 20
    young = cluster.spout_emit(["b"], "young")
    cluster.window()
    assert cluster.acker.open_trees == 2

    clock.now += TIMEOUT - 20 - 0.5
    assert verdict(cluster.window().ack) == {}
    assert cluster.acker.open_trees == 2
    clock.now += 1.0  # "old" is now past the timeout, "young" is not
    result = cluster.window()
    assert verdict(result.ack) == verdict(result.fail) == {}  # the spout times out itself
    ledger = {root for task in cluster.acker.tasks for root in task.ledger}
    assert ledger == {young}

    for delivered in cluster.receive("split"):  # acks arriving after the expiry
        cluster.ack(delivered)
    late = cluster.window()
    assert verdict(late.ack) == {cluster.task("sentences"): [young]}
    assert old not in {r for roots in late.ack.values() for r in roots}


# --- acker tasks -------------------------------------------------------------------------


def test_roots_are_spread_over_acker_tasks_by_root_id() -> None:
    cluster = Cluster(pipeline(), ackers=2)
    roots = [cluster.spout_emit([f"s{i}"], f"m{i}", index=i % 2) for i in range(16)]
    cluster.window()
    for acker_task in cluster.acker.tasks:
        index = cluster.acker.tasks.index(acker_task)
        assert all(root % 2 == index for root in acker_task.ledger)
    assert {r for t in cluster.acker.tasks for r in t.ledger} == set(roots)
    for delivered in cluster.receive("split"):
        cluster.ack(delivered)
    result = cluster.window()
    assert sorted(r for rs in result.ack.values() for r in rs) == sorted(roots)
    assert cluster.acker.open_trees == 0


def test_forget_all_and_no_acker_tasks() -> None:
    cluster = Cluster(pipeline())
    cluster.spout_emit(["a"], "m1")
    cluster.window()
    cluster.acker.forget_all()
    assert cluster.acker.open_trees == 0

    idle = Acker([], TIMEOUT)
    result = idle.process_window([WindowMeta(0, "sentences", xor={5: 0}, inits={5: 1})])
    assert verdict(result.ack) == {} and idle.open_trees == 0


def test_verdicts_of_two_windows_merge_so_that_none_is_lost() -> None:
    # with overlapping windows two windows can end before the next takes their verdicts
    pending, later = Verdicts(), Verdicts()
    pending.ack[1].append(10)
    pending.fail[1].append(11)
    pending.reasons[11] = Failure.of("error", "first")
    later.ack[1].append(20)
    later.ack[2].append(21)
    later.reset[2].append(22)
    pending.merge(later)
    assert pending.ack == {1: [10, 20], 2: [21]}
    assert pending.fail == {1: [11]} and pending.reset == {2: [22]}
    assert pending.reasons[11].reason == "first"
