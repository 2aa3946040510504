"""The execution plan: task ids, executors, DAG levels and subscriptions.

Computed from the topology spec and conf, deterministically, by the worker and by every
executor process, so only the spec and conf travel. Task ids follow
:func:`number_tasks` (which Nimbus also uses for the task infos it stores at submit),
``__system`` is task -1, and a component's tasks are split over its executors in
contiguous, nearly equal ranges.

A window runs in Spark stages: one per DAG level, except that a bolt chained to its upstream
(``engine.plan.chaining``) runs in its upstream's stage and Spark task. So an executor's
``level`` is its Spark stage, while gids follow the DAG levels (chaining changes no gid).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkstorm.config.reliability import ACKING, reliability_mode
from sparkstorm.engine.plan.chaining import chain_parents, stage_levels
from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.spec import ComponentSpec, TopologySpec
from sparkstorm.topology.tuple import SYSTEM_COMPONENT

ACKER_COMPONENT = "__acker"
SYSTEM_TASK = -1


@dataclass(frozen=True)
class ExecutorInfo:
    """One executor process: ``gid`` is its index in the plan, ``level`` its Spark stage."""

    gid: int
    component: str
    index: int
    tasks: tuple[int, ...]
    level: int


@dataclass(frozen=True)
class Subscription:
    """A consumer of a (component, stream): the target component, grouping and tasks."""

    target: str
    grouping: Grouping
    tasks: tuple[int, ...]


class ExecutionPlan:
    """Everything about a running topology that follows from its spec and conf."""

    def __init__(self, spec: TopologySpec, conf: dict[str, Any]) -> None:
        self.spec = spec
        self.conf = conf
        self.components = {c.name: c for c in spec.components if c.name}
        self.acker_tasks_count = acker_task_count(conf)
        self.component_tasks = self._number_tasks()
        self.task_component = {t: c for c, ts in self.component_tasks.items() for t in ts}
        self.task_component[SYSTEM_TASK] = SYSTEM_COMPONENT
        self.back_edges = find_back_edges(spec)
        self.levels = component_levels(spec, self.back_edges)
        self.chain_parents = chain_parents(spec, conf, self.back_edges)
        """Each chained bolt's upstream component (``engine.plan.chaining``)."""
        self.stage_levels = stage_levels(spec, self.back_edges, self.chain_parents)
        self.executors = self._place_executors()
        self.task_executor = {t: e.gid for e in self.executors for t in e.tasks}
        self.chained = self._chained()
        """Executor gid -> the gids of the executors chained to it, run right after it."""
        self.stages = self._stages()
        """Per Spark stage, the gids its partitions call first (chained ones ride along)."""
        self.subscriptions = self._subscriptions()

    @property
    def acker_tasks(self) -> list[int]:
        """Task ids of the ``__acker`` system component (empty when acking is off)."""
        return self.component_tasks.get(ACKER_COMPONENT, [])

    def _number_tasks(self) -> dict[str, list[int]]:
        return number_tasks({name: c.num_tasks for name, c in self.components.items()},
                            self.conf)

    def _place_executors(self) -> list[ExecutorInfo]:
        executors: list[ExecutorInfo] = []
        ordered = sorted(self.components.values(), key=lambda c: (self.levels[c.name or ""],
                                                                   c.name or ""))
        for component in ordered:
            name = component.name or ""
            for index, tasks in enumerate(split_tasks(self.component_tasks[name], component.par)):
                executors.append(
                    ExecutorInfo(len(executors), name, index, tasks, self.stage_levels[name])
                )
        return executors

    def _chained(self) -> dict[int, tuple[int, ...]]:
        by_index = {(e.component, e.index): e.gid for e in self.executors}
        chained: dict[int, list[int]] = defaultdict(list)
        for executor in self.executors:
            parent = self.chain_parents.get(executor.component)
            if parent is not None:
                chained[by_index[(parent, executor.index)]].append(executor.gid)
        return {gid: tuple(partners) for gid, partners in chained.items()}

    def _stages(self) -> list[list[int]]:
        stages: dict[int, list[int]] = defaultdict(list)
        for executor in self.executors:
            if executor.component not in self.chain_parents:
                stages[executor.level].append(executor.gid)
        return [stages[level] for level in sorted(stages)]

    def chain_root(self, gid: int) -> int:
        """The gid whose Spark task calls executor ``gid`` (itself unless it is chained)."""
        executor = self.executors[gid]
        while executor.component in self.chain_parents:
            parent = self.chain_parents[executor.component]
            executor = next(e for e in self.executors
                            if e.component == parent and e.index == executor.index)
        return executor.gid

    def chained_tasks(self, target: str, source: str, index: int) -> tuple[int, ...] | None:
        """The tasks executor ``index`` of ``source`` sends ``target``'s streams to.

        Those of ``target``'s executor ``index`` when ``target`` is chained to ``source``;
        None when it is not (every task of ``target`` is a candidate).
        """
        if self.chain_parents.get(target) != source:
            return None
        return next(e.tasks for e in self.executors
                    if e.component == target and e.index == index)

    def _subscriptions(self) -> dict[tuple[str, str], list[Subscription]]:
        subs: dict[tuple[str, str], list[Subscription]] = defaultdict(list)
        for component in self.spec.components:
            for item in component.inputs:
                subs[(item.source, item.stream)].append(
                    Subscription(component.name or "", item.grouping,
                                 tuple(self.component_tasks[component.name or ""]))
                )
        return dict(subs)

    def context_for(self, task: int) -> dict[str, Any]:
        """The multilang handshake ``context`` for ``task``, as pystorm gives it."""
        name = self.task_component[task]
        component = self.components[name]
        return {
            "taskid": task,
            "componentid": name,
            "task->component": {str(t): c for t, c in self.task_component.items() if t > 0},
            "streams": [s.name for s in component.outputs],
            "stream->outputfields": {s.name: list(s.fields) for s in component.outputs},
            "stream->target->grouping": self._targets_of(name),
            "source->stream->grouping": _sources_of(component, lambda i: i.grouping.to_dict()),
            "source->stream->fields": _sources_of(
                component, lambda i: list(self.fields_of(i.source, i.stream))
            ),
        }

    def _targets_of(self, name: str) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for (source, stream), subs in self.subscriptions.items():
            if source == name:
                out[stream] = {s.target: s.grouping.to_dict() for s in subs}
        return out

    def fields_of(self, component: str, stream: str) -> tuple[str, ...]:
        """Declared fields of ``component``'s ``stream`` (empty for system streams)."""
        spec = self.components.get(component)
        declared = spec.stream(stream) if spec else None
        return declared.fields if declared else ()


def _sources_of(component: ComponentSpec, value: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = defaultdict(dict)
    for item in component.inputs:
        out[item.source][item.stream] = value(item)
    return dict(out)


def plan_tag(plan: ExecutionPlan) -> str:
    """What tells two plans of one topology apart: its executors per component.

    A topology's tasks are fixed, so its executor counts decide every gid. Workers tag the
    endpoints they report with the tag of the plan their executors run (``rebalance -e``,
    ``engine.plan.regroup``), and a driver takes only the endpoints of its own plan: an address
    reported under another plan names another executor, or one that has not taken the new
    plan yet.

        >>> from sparkstorm.topology.spec import TopologySpec
        >>> spec = TopologySpec.from_dict({"components": [
        ...     {"name": "s", "kind": "spout", "component": "m:S", "par": 2, "num_tasks": 2,
        ...      "outputs": [{"fields": ["x"], "name": "default", "direct": False}]}]})
        >>> plan_tag(ExecutionPlan(spec, {}))
        's=2'
    """
    counts: dict[str, int] = defaultdict(int)
    for executor in plan.executors:
        counts[executor.component] += 1
    return ",".join(f"{name}={counts[name]}" for name in sorted(counts))


def number_tasks(user_tasks: Mapping[str, int], conf: Mapping[str, Any]) -> dict[str, list[int]]:
    """Every component's task ids, as Storm numbers them (``StormCommon.stormTaskInfo``).

    The one home of this rule: the engine's plan and Nimbus's task infos (written at submit,
    ``/tasks/<topology id>/<task id>``) both call it, so the store and the running engine
    agree. As in Storm, the system components are numbered with the user's: ``__acker``
    gets :func:`acker_task_count` tasks (none when acking is off), then tasks are numbered
    1..N over all components sorted by id. ``__`` sorts before letters and digits, so the
    ackers come first. ``__system`` has no numbered task here (it is task -1, as Storm's
    per-worker system executor); we have no ``__eventlogger`` or ``__metrics_*``
    components, so they take no ids.

    Args:
        user_tasks: each user component's id and task count (``num_tasks``).
        conf: the topology's effective conf (``topology.acker.executors``).

    Returns:
        Component id -> its task ids, ascending, for every component with tasks.

    Example:
        >>> number_tasks({"split": 2, "count": 4, "sentences": 1}, {})
        {'__acker': [1], 'count': [2, 3, 4, 5], 'sentences': [6], 'split': [7, 8]}
        >>> number_tasks({"count": 2}, {"topology.acker.executors": 0})
        {'count': [1, 2]}
    """
    counts = dict(user_tasks)
    ackers = acker_task_count(conf)
    if ackers:
        counts[ACKER_COMPONENT] = ackers
    numbered: dict[str, list[int]] = {}
    next_task = 1
    for name in sorted(counts):
        numbered[name] = list(range(next_task, next_task + counts[name]))
        next_task += counts[name]
    return numbered


def acker_task_count(conf: Mapping[str, Any]) -> int:
    """``topology.acker.executors``: unset means one (one per worker, as Storm), 0 means off.

    None in the ``checkpoint`` and ``none`` reliability modes (``topology.reliability``).
    """
    if reliability_mode(conf) != ACKING:
        return 0
    value = conf.get("topology.acker.executors")
    return 1 if value is None else int(value)


def split_tasks(tasks: list[int], executors: int) -> list[tuple[int, ...]]:
    """Storm's split: contiguous ranges whose sizes differ by at most one."""
    size, extra = divmod(len(tasks), executors)
    ranges, start = [], 0
    for index in range(executors):
        end = start + size + (1 if index < extra else 0)
        ranges.append(tuple(tasks[start:end]))
        start = end
    return ranges


def find_back_edges(spec: TopologySpec) -> set[tuple[str, str]]:
    """Edges that close a cycle, found by depth-first search from the spouts.

    Tuples on these edges are delivered in the next window (DESIGN §4.3).
    """
    consumers: dict[str, list[str]] = defaultdict(list)
    for component in spec.components:
        for item in component.inputs:
            consumers[item.source].append(component.name or "")
    back: set[tuple[str, str]] = set()
    state: dict[str, str] = {}

    def visit(node: str) -> None:
        state[node] = "open"
        for nxt in consumers[node]:
            if state.get(nxt) == "open":
                back.add((node, nxt))
            elif nxt not in state:
                visit(nxt)
        state[node] = "done"

    starts = [c.name or "" for c in spec.spouts] + [c.name or "" for c in spec.bolts]
    for start in starts:
        if start not in state:
            visit(start)
    return back


def component_levels(spec: TopologySpec, back_edges: set[tuple[str, str]]) -> dict[str, int]:
    """Longest-path depth of each component over the forward edges; spouts are level 0."""
    levels: dict[str, int] = {c.name or "": 0 for c in spec.spouts}
    pending = [c for c in spec.bolts]
    while pending:
        progressed = False
        for component in list(pending):
            name = component.name or ""
            sources = [i.source for i in component.inputs if (i.source, name) not in back_edges]
            if all(s in levels for s in sources):
                levels[name] = 1 + max((levels[s] for s in sources), default=0)
                pending.remove(component)
                progressed = True
        if not progressed:  # only unreachable pieces are left; cannot happen without cycles
            for component in pending:
                levels[component.name or ""] = 1
            break
    return levels
