"""A driver's pool that runs only some executors.

The others' endpoints arrive as their workers report them; a changed process id is a
restart (their state is gone).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.endpoint import Endpoint


class Numbers(Spout):
    outputs = ["n"]


class Sink(Bolt):
    outputs: list[Any] = []


class Pair(Topology):
    numbers = Numbers.spec()
    sink = Sink.spec(inputs=[numbers], par=2)


def _pool(tmp_path: Path) -> ExecutorPool:
    plan = ExecutionPlan(Pair.topology_spec, {"topology.acker.executors": 1})
    spout = next(e.gid for e in plan.executors if e.component == "numbers")
    return ExecutorPool(plan, "pair", tmp_path, hosted={spout}, token="shared")


def test_remote_executors_are_missing_until_reported(tmp_path: Path) -> None:
    pool = _pool(tmp_path)
    assert set(pool.sockets) == {0} and pool.token == "shared"
    assert pool.missing() == [1, 2]
    version = pool.endpoints_version
    pool.set_remote({1: (Endpoint("/elsewhere/e1.sock", "10.0.0.2", 4001), 11),
                     2: (Endpoint("/elsewhere/e2.sock", "10.0.0.2", 4002), 12)})
    assert pool.missing() == [] and pool.endpoints_version > version
    assert pool.endpoints[1].host == "10.0.0.2"
    assert not pool.hosted_endpoints().keys() & {1, 2}, "only its own go into its heartbeat"


def test_a_moved_or_restarted_remote_executor_is_noticed(tmp_path: Path) -> None:
    pool = _pool(tmp_path)
    first = Endpoint("/elsewhere/e1.sock", "10.0.0.2", 4001)
    pool.set_remote({1: (first, 11)})
    version, restarts = pool.endpoints_version, pool.restarts
    pool.set_remote({1: (first, 11)})
    assert (pool.endpoints_version, pool.restarts) == (version, restarts), "nothing changed"
    pool.set_remote({1: (first, 99)})  # restarted in place: same address, new process
    assert pool.restarts == restarts + 1 and pool.endpoints_version == version
    moved = Endpoint("/other/e1.sock", "10.0.0.3", 4009)
    pool.set_remote({1: (moved, 100)})  # a worker moved to another host
    assert pool.endpoints[1] == moved and pool.endpoints_version == version + 1
    assert pool.restarts == restarts + 2
    pool.set_remote({0: (moved, 5)})  # its own executor is never overwritten
    assert pool.endpoints.get(0) != moved


def test_where_answers_the_current_endpoint_version_and_pid(tmp_path: Path) -> None:
    pool = _pool(tmp_path)
    assert pool.where(1) is None, "not reported yet"
    first = Endpoint("/elsewhere/e1.sock", "10.0.0.2", 4001)
    pool.set_remote({1: (first, 11)})
    assert pool.where(1) == (pool.endpoints_version, first, 11)
    moved = Endpoint("/other/e1.sock", "10.0.0.3", 4009)
    pool.set_remote({1: (moved, 12)})
    assert pool.where(1) == (pool.endpoints_version, moved, 12)


def test_endpoints_reported_under_another_plan_are_not_taken(tmp_path: Path) -> None:
    pool = _pool(tmp_path)
    assert pool.plan_tag == "numbers=1,sink=2"
    where = Endpoint("/elsewhere/e1.sock", "10.0.0.2", 4001)
    pool.set_remote({1: (where, 11)}, {1: "numbers=1,sink=1"})
    assert pool.missing() == [1, 2], "a worker that has not followed a rebalance -e yet"
    pool.set_remote({1: (where, 11), 2: (where, 12)}, {1: pool.plan_tag})
    assert pool.missing() == [], "tagged with its plan, or untagged (older workers)"


def test_a_replan_forgets_other_workers_endpoints_until_they_report_the_new_plan(
        tmp_path: Path) -> None:
    from sparkstorm.engine.plan.regroup import hosted_gids, regroup, with_counts

    old = ExecutionPlan(Pair.topology_spec, {"topology.acker.executors": 1})
    pool = ExecutorPool(old, "pair", tmp_path, hosted=set(), token="shared")  # the driver's
    pool.set_remote({gid: (Endpoint(f"/elsewhere/e{gid}.sock", "10.0.0.2", 4000 + gid), gid)
                     for gid in (0, 1, 2)})
    new = ExecutionPlan(with_counts(old.spec, {"sink": 1}), old.conf)
    regrouping = regroup(old, new)
    assert regrouping.leaving == [1, 2] and regrouping.arriving == [1]
    spout = new.executors[0]
    assert hosted_gids(new, [[min(spout.tasks), max(spout.tasks)]]) == {0}
    pool.replan(new, regrouping.staying, regrouping.leaving, regrouping.arriving,
                hosted=set())
    assert pool.plan_tag == "numbers=1,sink=1" and pool.missing() == [0, 1]
    where = Endpoint("/elsewhere/e9.sock", "10.0.0.2", 4009)
    pool.set_remote({1: (where, 13)}, {1: "numbers=1,sink=2"})
    assert pool.missing() == [0, 1], "a stale report under the old gids"
    pool.set_remote({1: (where, 13)}, {1: "numbers=1,sink=1"})
    assert pool.missing() == [0]
    assert hosted_gids(new, [[99, 99]]) is None, "not an executor of the new plan"
