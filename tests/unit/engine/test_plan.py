"""Tests of the execution plan: task numbering, executors, DAG levels and the multilang context."""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm import Bolt, Grouping, Spout, Stream, Topology, TopologySpec
from sparkstorm.engine.plan.execution import (
    ACKER_COMPONENT,
    SYSTEM_TASK,
    ExecutionPlan,
    acker_task_count,
    component_levels,
    find_back_edges,
    split_tasks,
)


class Lines(Spout):
    outputs = ["line", Stream(["n"], name="numbers")]


class Split(Bolt):
    outputs = ["word"]


class Count(Bolt):
    outputs = ["word", "count"]


def word_count() -> TopologySpec:
    class WordCount(Topology):
        spout = Lines.spec(par=2)
        split = Split.spec(inputs={spout: Grouping.SHUFFLE, spout["numbers"]: Grouping.ALL})
        count = Count.spec(inputs={split: Grouping.fields("word")}, par=2, num_tasks=3)

    return WordCount.topology_spec


def loop_topology() -> TopologySpec:
    """A loop: s -> a -> b -> c, a skip edge s -> c and a cycle edge c -> a."""

    class Loop(Topology):
        s = Lines.spec()
        a = Split.spec(inputs=[s, "c"])
        b = Split.spec(inputs=[a])
        c = Split.spec(inputs=[b, s])

    return Loop.topology_spec


def edges(spec: TopologySpec) -> set[tuple[str, str]]:
    return {(i.source, c.name or "") for c in spec.components for i in c.inputs}


# --- task numbering ----------------------------------------------------------------------


@pytest.mark.parametrize("conf", [{"topology.acker.executors": None}, {}],
                         ids=["none", "unset"])
def test_tasks_numbered_over_sorted_ids_with_one_acker(conf: dict[str, Any]) -> None:
    plan = ExecutionPlan(word_count(), conf)
    assert plan.component_tasks == {
        ACKER_COMPONENT: [1], "count": [2, 3, 4], "split": [5], "spout": [6, 7],
    }
    assert plan.acker_tasks == [1]
    assert plan.acker_tasks_count == 1


def test_no_acker_when_acking_is_off() -> None:
    plan = ExecutionPlan(word_count(), {"topology.acker.executors": 0})
    assert plan.component_tasks == {"count": [1, 2, 3], "split": [4], "spout": [5, 6]}
    assert plan.acker_tasks == []


def test_several_acker_tasks() -> None:
    plan = ExecutionPlan(word_count(), {"topology.acker.executors": 2})
    assert plan.acker_tasks == [1, 2]
    assert plan.component_tasks["count"] == [3, 4, 5]


@pytest.mark.parametrize(("value", "count"), [(None, 1), (0, 0), (1, 1), (3, 3), ("2", 2)])
def test_acker_task_count(value: Any, count: int) -> None:
    assert acker_task_count({"topology.acker.executors": value}) == count


def test_task_component_covers_every_task_and_the_system_task() -> None:
    plan = ExecutionPlan(word_count(), {})
    assert plan.task_component == {
        1: ACKER_COMPONENT, 2: "count", 3: "count", 4: "count", 5: "split", 6: "spout",
        7: "spout", SYSTEM_TASK: "__system",
    }


def test_numbering_is_deterministic() -> None:
    first, second = ExecutionPlan(word_count(), {}), ExecutionPlan(word_count(), {})
    assert first.component_tasks == second.component_tasks
    assert first.executors == second.executors


# --- executors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tasks", "executors", "expected"),
    [
        ([1, 2, 3, 4], 2, [(1, 2), (3, 4)]),
        ([1, 2, 3, 4, 5], 2, [(1, 2, 3), (4, 5)]),
        ([1, 2, 3, 4, 5, 6, 7], 3, [(1, 2, 3), (4, 5), (6, 7)]),
        ([5, 6, 7], 1, [(5, 6, 7)]),
        ([5, 6, 7], 3, [(5,), (6,), (7,)]),
    ],
)
def test_split_tasks(tasks: list[int], executors: int, expected: list[tuple[int, ...]]) -> None:
    ranges = split_tasks(tasks, executors)
    assert ranges == expected
    assert [t for r in ranges for t in r] == tasks


def test_executors_are_placed_by_level_then_id() -> None:
    plan = ExecutionPlan(word_count(), {})
    placed = [(e.gid, e.component, e.index, e.tasks, e.level) for e in plan.executors]
    assert placed == [
        (0, "spout", 0, (6,), 0),
        (1, "spout", 1, (7,), 0),
        (2, "split", 0, (5,), 1),
        (3, "count", 0, (2, 3), 2),
        (4, "count", 1, (4,), 2),
    ]
    assert plan.stages == [[0, 1], [2], [3, 4]]
    assert plan.task_executor == {6: 0, 7: 1, 5: 2, 2: 3, 3: 3, 4: 4}


def test_subscriptions() -> None:
    plan = ExecutionPlan(word_count(), {})
    assert {k: [(s.target, s.grouping, s.tasks) for s in v]
            for k, v in plan.subscriptions.items()} == {
        ("spout", "default"): [("split", Grouping.SHUFFLE, (5,))],
        ("spout", "numbers"): [("split", Grouping.ALL, (5,))],
        ("split", "default"): [("count", Grouping.fields("word"), (2, 3, 4))],
    }


# --- levels and back edges ---------------------------------------------------------------


def test_levels_on_a_dag_with_a_skip_edge() -> None:
    class Skip(Topology):
        s = Lines.spec()
        a = Split.spec(inputs=[s])
        b = Split.spec(inputs=[a, s])

    spec = Skip.topology_spec
    assert find_back_edges(spec) == set()
    assert component_levels(spec, set()) == {"s": 0, "a": 1, "b": 2}


def test_levels_and_back_edges_with_a_cycle() -> None:
    plan = ExecutionPlan(loop_topology(), {"topology.window.chain": False})
    assert plan.back_edges == {("c", "a")}
    assert plan.levels == {"s": 0, "a": 1, "b": 2, "c": 3}
    assert [[plan.executors[g].component for g in stage] for stage in plan.stages] == [
        ["s"], ["a"], ["b"], ["c"],
    ]


def test_a_chained_bolt_runs_in_its_upstreams_stage_inside_a_cycle() -> None:
    plan = ExecutionPlan(loop_topology(), {})  # b's only input is a's shuffle: chained
    assert plan.levels == {"s": 0, "a": 1, "b": 2, "c": 3}, "gids still follow the DAG"
    assert [[plan.executors[g].component for g in stage] for stage in plan.stages] == [
        ["s"], ["a"], ["c"],
    ]
    gid = {e.component: e.gid for e in plan.executors}
    assert plan.chained == {gid["a"]: (gid["b"],)}
    assert plan.executors[gid["b"]].level == plan.executors[gid["a"]].level == 1


def test_self_loop_is_a_back_edge() -> None:
    class SelfLoop(Topology):
        s = Lines.spec()
        a = Split.spec(inputs=[s, "a"])
        b = Split.spec(inputs=[a])

    plan = ExecutionPlan(SelfLoop.topology_spec, {})
    assert plan.back_edges == {("a", "a")}
    assert plan.levels == {"s": 0, "a": 1, "b": 2}


@pytest.mark.parametrize("order", ["sabc", "scab", "scba", "sbca"])
def test_forward_edges_always_go_to_a_higher_level(order: str) -> None:
    """Whatever the declaration order, cutting the back edges leaves a DAG.

    The levels follow every forward edge; each back edge closes a cycle (goes to a level not above).
    """
    loop = {c.name: c for c in loop_topology().components}
    spec = TopologySpec(tuple(loop[name] for name in order))
    back = find_back_edges(spec)
    levels = component_levels(spec, back)
    assert len(back) == 1
    assert levels["s"] == 0
    for source, target in edges(spec) - back:
        assert levels[source] < levels[target], (source, target, levels)
    for source, target in back:
        assert levels[target] <= levels[source]


# --- multilang context -------------------------------------------------------------------


def test_context_for_a_bolt_task() -> None:
    plan = ExecutionPlan(word_count(), {})
    context = plan.context_for(5)
    assert context == {
        "taskid": 5,
        "componentid": "split",
        "task->component": {"1": "__acker", "2": "count", "3": "count", "4": "count",
                            "5": "split", "6": "spout", "7": "spout"},
        "streams": ["default"],
        "stream->outputfields": {"default": ["word"]},
        "stream->target->grouping": {"default": {"count": {"type": "FIELDS",
                                                           "fields": ["word"]}}},
        "source->stream->grouping": {"spout": {"default": {"type": "SHUFFLE"},
                                               "numbers": {"type": "ALL"}}},
        "source->stream->fields": {"spout": {"default": ["line"], "numbers": ["n"]}},
    }
    assert all(isinstance(k, str) for k in context["task->component"])


def test_context_for_a_spout_task() -> None:
    plan = ExecutionPlan(word_count(), {"topology.acker.executors": 0})
    context = plan.context_for(6)
    assert context["taskid"] == 6
    assert context["componentid"] == "spout"
    assert context["streams"] == ["default", "numbers"]
    assert context["stream->outputfields"] == {"default": ["line"], "numbers": ["n"]}
    assert context["stream->target->grouping"] == {
        "default": {"split": {"type": "SHUFFLE"}}, "numbers": {"split": {"type": "ALL"}},
    }
    assert context["source->stream->grouping"] == {}
    assert context["source->stream->fields"] == {}
    assert "__acker" not in context["task->component"].values()


def test_fields_of() -> None:
    plan = ExecutionPlan(word_count(), {})
    assert plan.fields_of("count", "default") == ("word", "count")
    assert plan.fields_of("spout", "numbers") == ("n",)
    assert plan.fields_of("spout", "nope") == ()
    assert plan.fields_of("__system", "__tick") == ()
