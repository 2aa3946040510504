"""``rebalance -e`` in place: a running topology takes new executor counts.

Storm keeps a topology's task ids for its whole life; an executor is a contiguous range of
one component's tasks (``engine.plan.execution.split_tasks``). New executor counts regroup only the
rebalanced components' tasks. An executor is the same executor across two plans when it
runs the same tasks of the same component: such an executor *stays*, keeps its process
(a spout its pending tuples and buffer, a bolt its memory) and only switches its routing
to the new plan. Its gid (its position in the plan) may change, because gids are numbered
over every component in level order; the driver renumbers what it keeps by gid.

The executors of a rebalanced component whose task range changed *leave* (closed) and the
new ranges *arrive* (started fresh, as restarted executors that join windows mid-stream):
the task instances of a regrouped component start afresh, as they do in Storm when a
rebalance moves them. Trees in flight in a leaving executor time out and replay.

Protocol (one between-windows step, driven by the driver's window loop, ``engine.driver.replans``):

1. the window in flight ends (nothing is in flight while the plan changes);
2. the pool writes the new spec to its plan file (a restarted executor reads the new plan),
   closes the leaving executors and starts the arriving ones, renumbering the staying ones;
3. each staying executor gets ``{"cmd": "replan", "spec": {...}, "gid": 3}``: it rebuilds
   its plan, its tasks' routes and target map, and files what its spout buffered under the
   new gids (a tuple's target task is kept, only the executor holding it may change);
4. the next window runs the new stages (chaining decided again from the new counts).

Across workers (``topology.workers`` above 1) Nimbus keeps every worker and each staying
executor in its slot, and places the arriving ones on those workers
(``cluster.nimbus.staying.keep_in_place``); the heartbeat answers carry the new counts and
each worker's executors. The driver drives the step, through the heartbeats it already
exchanges with Nimbus:

1. the driver's worker takes the counts with its executor list (``TopologyDriver.replan``);
   its window loop ends the window in flight and replans its own executors as above; the
   other workers' endpoints are forgotten (their gids changed, and their staying executors
   have not taken the new plan yet);
2. its heartbeats now carry the new plan (``executor_counts``, ``plan_tag``), and Nimbus
   passes them to the other workers (``driver_plan``): each replans the executors it hosts
   alike (:func:`follow_driver_plan`), before any window of the new plan can reach them;
3. those workers report their executors' endpoints tagged with the new plan
   (``engine.plan.execution.plan_tag``); the driver takes only endpoints of its own plan, so an
   address reported under the old gids is never used;
4. once every executor of the new plan has an endpoint, the next window runs.

With checkpoints on (``topology.checkpoint.windows``), the replan is followed by a rollback
to the committed checkpoint under the new layout: the staying executors restore their own
part (named by the gid they had then), a regrouped executor merges the parts of the
executors that held its tasks (:class:`PartLayouts`), so a stateful component rebalanced
mid-stream keeps exact state; the checkpoints pending at the replan are given up and the
next window takes a new one. New counts together with a new worker count (``rebalance -e
-n``) are not taken in place: Nimbus replaces the workers.

Example: ``split`` from two executors to one; ``sentences`` and ``count`` stay:

    >>> from sparkstorm.topology.spec import TopologySpec
    >>> from sparkstorm.engine.plan.execution import ExecutionPlan
    >>> def bolt(name, source):
    ...     return {"name": name, "kind": "bolt", "component": "m:B", "par": 2,
    ...             "outputs": [{"fields": ["w"], "name": "default", "direct": False}],
    ...             "inputs": [{"source": source, "stream": "default",
    ...                         "grouping": {"type": "SHUFFLE"}}]}
    >>> spec = TopologySpec.from_dict({"components": [
    ...     {"name": "sentences", "kind": "spout", "component": "m:S",
    ...      "outputs": [{"fields": ["s"], "name": "default", "direct": False}]},
    ...     bolt("split", "sentences"), bolt("count", "split")]})
    >>> old = ExecutionPlan(spec, {})
    >>> new = ExecutionPlan(with_counts(spec, {"split": 1}), {})
    >>> r = regroup(old, new)
    >>> r.staying, r.leaving, r.arriving
    ({0: 0, 3: 2, 4: 3}, [1, 2], [1])
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkstorm.engine.executor.checkpoint_part import part_name
from sparkstorm.engine.executor.collector import WindowOutput
from sparkstorm.engine.executor.host import ExecutorHost
from sparkstorm.engine.executor.routing import build_routes
from sparkstorm.engine.plan.execution import ExecutionPlan, plan_tag
from sparkstorm.engine.wire.batch_columns import TARGET
from sparkstorm.errors import EngineError
from sparkstorm.topology.spec import TopologySpec
from sparkstorm.topology.validate import executor_count_problem

logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class Regrouping:
    """How two plans' executors relate.

    Attributes:
        staying: old gid -> new gid of every executor running the same tasks in both.
        leaving: old gids whose task range is gone (closed).
        arriving: new gids whose task range is new (started fresh).
    """

    staying: dict[int, int]
    leaving: list[int]
    arriving: list[int]


def executor_counts(plan: ExecutionPlan) -> dict[str, int]:
    """Each user component's executor count in ``plan``."""
    counts: dict[str, int] = {}
    for executor in plan.executors:
        counts[executor.component] = counts.get(executor.component, 0) + 1
    return counts


def check_counts(plan: ExecutionPlan, counts: Mapping[str, Any],
                 topology: str) -> dict[str, int]:
    """``counts`` checked against ``plan``'s components and task counts.

    Args:
        plan: the running plan.
        counts: component id -> wanted executors (``rebalance -e component=N``).
        topology: the topology's name (in messages).

    Returns:
        The counts as integers.

    Raises:
        EngineError: ``REBALANCE_UNKNOWN_COMPONENT`` (no such component),
            ``REBALANCE_INVALID`` (not a positive integer), ``PARALLELISM_ABOVE_TASKS``
            (more executors than the component has tasks).
    """
    tasks = {name: len(ids) for name, ids in plan.component_tasks.items()
             if name in plan.components}
    checked: dict[str, int] = {}
    for name, count in counts.items():
        problem = executor_count_problem(topology, name, count, tasks)
        if problem is not None:
            code, msg = problem
            raise EngineError(msg, code=code)
        checked[name] = count
    return checked


def with_counts(spec: TopologySpec, counts: Mapping[str, int]) -> TopologySpec:
    """``spec`` with the executor counts (``par``) of ``counts``; tasks unchanged."""
    data = spec.to_dict()
    for component in data["components"]:
        if component["name"] in counts:
            component["par"] = int(counts[component["name"]])
    return TopologySpec.from_dict(data)


def regroup(old: ExecutionPlan, new: ExecutionPlan) -> Regrouping:
    """Which executors of ``old`` stay in ``new`` (same component, same tasks)."""
    new_gids = {(e.component, e.tasks): e.gid for e in new.executors}
    staying: dict[int, int] = {}
    leaving: list[int] = []
    for executor in old.executors:
        gid = new_gids.get((executor.component, executor.tasks))
        if gid is None:
            leaving.append(executor.gid)
        else:
            staying[executor.gid] = gid
    kept = set(staying.values())
    return Regrouping(staying, leaving, [e.gid for e in new.executors if e.gid not in kept])


def hosted_gids(plan: ExecutionPlan, executor_ids: Any) -> set[int] | None:
    """The gids in ``plan`` of the executors an assignment gives one worker.

    Args:
        plan: the plan the worker switches to.
        executor_ids: Nimbus's executor ids (``[[first task, last task], ...]``).

    Returns:
        The gids; None when some id is not an executor of ``plan`` (the assignment is not
        in step with these counts yet: the next heartbeat answer will be) or malformed.
    """
    try:
        wanted = {(int(first), int(last)) for first, last in executor_ids}
    except (TypeError, ValueError):
        return None
    gids = {e.gid for e in plan.executors if (min(e.tasks), max(e.tasks)) in wanted}
    return gids if len(gids) == len(wanted) else None


def replan_host(host: ExecutorHost, plan: ExecutionPlan, gid: int) -> None:
    """Switch a staying executor's tasks to ``plan``, where the executor is ``gid``.

    Called by the executor process on ``{"cmd": "replan"}``, between windows (the driver
    sends it with no window in flight). The task instances go on untouched; their
    collectors get the new plan's routes (a chained partner may have changed) and target
    map, and what a spout buffered since the last window is filed under the new gids. The
    routes' emit counters carry over, so the next window's statistics still count them.

    Raises:
        ValueError: ``gid`` in ``plan`` runs other tasks than this executor (not a staying
            executor: the driver closes those and starts new ones instead).
    """
    info = plan.executors[gid]
    if (info.component, info.tasks) != (host.info.component, host.info.tasks):
        msg = (f"executor {host.info.gid} ({host.info.component} tasks {host.info.tasks}) "
               f"cannot become executor {gid} ({info.component} tasks {info.tasks})")
        raise ValueError(msg)
    with host.quiet():
        host.plan = plan
        host.info = info
        for task, collector in host.collectors.items():
            routes = build_routes(plan, info.component, task, info.index)
            for stream, route in routes.items():
                old = collector.routes.get(stream)
                if old is not None:
                    route.emitted, route.transferred = old.emitted, old.transferred
            collector.routes = routes
            collector.task_executor = plan.task_executor
        for output in host.buffers():
            refile(output, plan.task_executor)


def refile(output: WindowOutput, task_executor: Mapping[int, int]) -> None:
    """File ``output``'s open batches under the executors that hold their tasks now.

    A batch targets one task (``[task, src, stream, ...]``, or an Arrow piece's ``task``),
    and tasks are fixed for the topology's life, so every batch still has a home.
    Collectors drop their cached batch lookups (the generation changes).
    """
    rows: dict[int, list[list[Any]]] = {}
    for batch in output.batches.values():
        rows.setdefault(task_executor[batch[TARGET]], []).append(batch)
    output.rows = rows
    arrow: dict[int, list[Any]] = {}  # a batch spout's Arrow pieces, made at emit time
    for pieces in output.arrow.values():
        for piece in pieces:
            arrow.setdefault(task_executor[piece.task], []).append(piece)
    output.arrow = arrow
    output.generation += 1


class PartLayouts:
    """Which executor held each task when a checkpoint was taken (its part's name).

    A checkpoint's parts are named by gid (``executor-<gid>``), and a replan renumbers
    and regroups executors. So the driver notes, per checkpoint it takes, task -> gid; a
    rollback then tells each executor which parts hold its tasks (one for an executor that
    stayed, several for one whose tasks were regrouped) and files the cycle deliveries of
    the checkpoint under the executors that hold their tasks now. A checkpoint this
    driver did not take (a restarted driver's) was taken under the current plan.
    """

    def __init__(self) -> None:
        self._taken: dict[int, dict[int, int]] = {}

    def taken(self, window: int, plan: ExecutionPlan) -> None:
        """Checkpoint ``window`` is taken under ``plan``."""
        self._taken[window] = dict(plan.task_executor)

    def forget_before(self, window: int) -> None:
        """Checkpoint ``window`` is committed: the older ones are purged."""
        for old in [w for w in self._taken if w < window]:
            del self._taken[old]

    def parts_for(self, window: int | None, tasks: tuple[int, ...]) -> list[str] | None:
        """The parts of checkpoint ``window`` that hold ``tasks``; None: the executor's own."""
        layout = self._taken.get(window) if window is not None else None
        if layout is None:
            return None
        return [part_name(g) for g in sorted({layout[t] for t in tasks if t in layout})]

    def deliveries(self, window: int | None, deliveries: dict[int, list[bytes]],
                   plan: ExecutionPlan) -> dict[int, list[bytes]]:
        """Checkpoint ``window``'s cycle deliveries, filed under ``plan``'s gids.

        Deliveries to an executor whose tasks are now spread over several are dropped
        (their trees time out and replay); logged.
        """
        layout = self._taken.get(window) if window is not None else None
        if layout is None:
            return deliveries
        filed: dict[int, list[bytes]] = {}
        for old, blobs in deliveries.items():
            now = {plan.task_executor[t] for t, g in layout.items() if g == old}
            if len(now) == 1:
                filed.setdefault(now.pop(), []).extend(blobs)
            else:
                logger.warning("cycle deliveries to executor %d of checkpoint %s dropped: its "
                               "tasks were regrouped; their trees replay", old, window)
        return filed


def follow_driver_plan(runner: Any, counts: Mapping[str, Any], executors: Any) -> bool:
    """Replan a worker's hosted executors to the plan its driver runs now (step 2 above).

    Called from the worker's heartbeat thread when the heartbeat answer's ``driver_plan``
    has other counts than ``runner``'s plan (an ``ExecutorHostRunner``): the driver has
    switched and awaits this worker's endpoints, so no window calls these executors now.

    Args:
        runner: the worker's runner (``name``, ``plan``, ``conf``, ``pool``).
        counts: the driver's executors per component.
        executors: the executor ids Nimbus's assignment gives this worker.

    Returns:
        Whether the runner switched; False when ``executors`` is not in step with
        ``counts`` yet (the next heartbeat answer will be) or the counts are unusable.
    """
    old: ExecutionPlan = runner.plan
    try:
        merged = {**executor_counts(old), **{str(k): int(v) for k, v in counts.items()}}
        new = ExecutionPlan(with_counts(old.spec, merged), runner.conf)
    except (TypeError, ValueError) as exc:
        logger.warning("ignoring the driver's executor counts %r: %s", counts, exc)
        return False
    hosted = hosted_gids(new, executors)
    if hosted is None or plan_tag(new) == plan_tag(old):
        return False
    regrouping = regroup(old, new)
    runner.pool.replan(new, regrouping.staying, regrouping.leaving, regrouping.arriving,
                       hosted=hosted)
    runner.plan = new
    logger.warning("topology %s: this worker follows its driver to %s: it runs executors "
                   "%s", runner.name, plan_tag(new), sorted(hosted))
    return True
