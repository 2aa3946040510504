"""New executor counts in place (``engine.plan.regroup``), without Spark.

Which executors stay, and a staying executor's switch to the new plan (routes, target map,
its spout's buffer).
"""

from __future__ import annotations

import pytest

from sparkstorm import Bolt, Grouping, Spout, Topology
from sparkstorm.engine.executor.checkpoint_part import part_name
from sparkstorm.engine.executor.collector import WindowOutput
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import (
    PartLayouts,
    check_counts,
    executor_counts,
    refile,
    regroup,
    replan_host,
    with_counts,
)
from sparkstorm.errors import EngineError


class Numbers(Spout):
    outputs = ["n"]


class Relay(Bolt):
    outputs = ["n"]


class Sink(Bolt):
    outputs: list[str] = []


class Chain(Topology):
    numbers = Numbers.spec()
    relay = Relay.spec(inputs=[numbers], par=2)
    sink = Sink.spec(inputs={relay: Grouping.fields("n")}, par=3, num_tasks=4)


CONF = {"topology.acker.executors": 1}


def _plans(**counts: int) -> tuple[ExecutionPlan, ExecutionPlan]:
    spec = Chain.topology_spec
    return ExecutionPlan(spec, CONF), ExecutionPlan(with_counts(spec, counts), CONF)


def _by_component(plan: ExecutionPlan) -> dict[str, list[tuple[int, tuple[int, ...]]]]:
    found: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
    for e in plan.executors:
        found.setdefault(e.component, []).append((e.gid, e.tasks))
    return found


def test_only_the_rebalanced_component_s_executors_change_and_tasks_stay_fixed() -> None:
    old, new = _plans(relay=1)
    assert executor_counts(new) == {"numbers": 1, "relay": 1, "sink": 3}
    assert new.component_tasks == old.component_tasks, "task ids are fixed"
    regrouping = regroup(old, new)
    before, after = _by_component(old), _by_component(new)
    assert [t for _, t in after["relay"]] == [tuple(old.component_tasks["relay"])]
    assert regrouping.leaving == [g for g, _ in before["relay"]]
    assert regrouping.arriving == [g for g, _ in after["relay"]]
    # the sink's executors stay, each renumbered one lower (one relay executor less)
    assert {o: regrouping.staying[o] for o, _ in before["sink"]} == {
        o: n for (o, _), (n, _) in zip(before["sink"], after["sink"], strict=True)}
    assert all(regrouping.staying[o] == o - 1 for o, _ in before["sink"])
    assert regrouping.staying[before["numbers"][0][0]] == after["numbers"][0][0]


def test_unchanged_counts_regroup_nothing() -> None:
    old, new = _plans(relay=2)
    regrouping = regroup(old, new)
    assert regrouping.leaving == [] and regrouping.arriving == []
    assert regrouping.staying == {e.gid: e.gid for e in old.executors}


@pytest.mark.parametrize(("counts", "code"), [
    ({"nope": 1}, "REBALANCE_UNKNOWN_COMPONENT"),
    ({"relay": 0}, "REBALANCE_INVALID"),
    ({"relay": "2"}, "REBALANCE_INVALID"),
    ({"relay": True}, "REBALANCE_INVALID"),
    ({"relay": 3}, "PARALLELISM_ABOVE_TASKS"),
])
def test_bad_counts_are_refused_with_a_code(counts: dict[str, object], code: str) -> None:
    plan = ExecutionPlan(Chain.topology_spec, CONF)
    with pytest.raises(EngineError) as excinfo:
        check_counts(plan, counts, "chain")
    assert excinfo.value.code == code
    assert "chain" in str(excinfo.value) or "relay" in str(excinfo.value)


def test_good_counts_pass() -> None:
    plan = ExecutionPlan(Chain.topology_spec, CONF)
    assert check_counts(plan, {"sink": 4, "relay": 1}, "chain") == {"sink": 4, "relay": 1}


def test_refile_moves_buffered_batches_to_the_executor_holding_their_task_now() -> None:
    output = WindowOutput()
    first = output.batch(7, 3, 1, "default")
    second = output.batch(8, 4, 1, "default")
    generation = output.generation
    refile(output, {3: 5, 4: 5})
    assert output.rows == {5: [first, second]}
    assert output.generation != generation, "collectors drop their cached lookups"
    assert output.batch(5, 3, 1, "default") is first, "the open batch goes on filling"
    assert output.rows == {5: [first, second]}


def test_a_staying_spout_routes_to_the_new_executors_and_keeps_its_buffer() -> None:
    old, new = _plans(relay=1)
    gid = old.executors[0].gid
    assert old.executors[0].component == "numbers"
    spout = SpoutExecutor(old, gid, "t")
    try:
        task = old.executors[0].tasks[0]
        collector = spout.collectors[task]
        relay_tasks = old.component_tasks["relay"]
        for n in range(10):  # the tasks emit into the staging buffer (engine.executor.spout)
            collector.emit([n], None, None, None, False, n)
        before = {g for g in spout.staging.rows}
        assert before == {old.task_executor[t] for t in relay_tasks}, "both relays"
        emitted = collector.routes["default"].emitted

        replan_host(spout, new, new.executors[0].gid)

        (relay_gid,) = [e.gid for e in new.executors if e.component == "relay"]
        assert set(spout.staging.rows) == {relay_gid}, "the buffer goes to the one relay"
        assert sum(len(b[3]) for b in spout.staging.rows[relay_gid]) == 10
        assert collector.routes["default"].emitted == emitted == 10, "counters carry over"
        for n in range(10, 14):
            collector.emit([n], None, None, None, False, n)
        assert set(spout.staging.rows) == {relay_gid}
        assert sum(len(b[3]) for b in spout.staging.rows[relay_gid]) == 14
        assert spout.info == new.executors[0] and spout.plan is new
    finally:
        spout.close()


def test_a_staying_bolt_takes_its_new_gid_and_refuses_other_tasks() -> None:
    old, new = _plans(relay=1)
    (sink_old, *_) = [e for e in old.executors if e.component == "sink"]
    (sink_new, *_) = [e for e in new.executors if e.component == "sink"]
    bolt = BoltExecutor(old, sink_old.gid, "t")
    replan_host(bolt, new, sink_new.gid)
    assert bolt.info.gid == sink_new.gid == sink_old.gid - 1
    assert bolt.window_meta(WindowOutput()).gid == sink_new.gid, "reported under its new gid"
    (relay_new,) = [e for e in new.executors if e.component == "relay"]
    with pytest.raises(ValueError, match="cannot become"):
        replan_host(bolt, new, relay_new.gid)


def test_part_layouts_name_the_parts_that_held_a_regrouped_executor_s_tasks() -> None:
    old, new = _plans(relay=1)
    layouts = PartLayouts()
    layouts.taken(10, old)
    (relay_new,) = [e for e in new.executors if e.component == "relay"]
    relay_old = [e.gid for e in old.executors if e.component == "relay"]
    assert layouts.parts_for(10, relay_new.tasks) == [part_name(g) for g in relay_old]
    (sink_old, *_) = [e for e in old.executors if e.component == "sink"]
    (sink_new, *_) = [e for e in new.executors if e.component == "sink"]
    assert layouts.parts_for(10, sink_new.tasks) == [part_name(sink_old.gid)]
    assert layouts.parts_for(None, sink_new.tasks) is None, "from scratch"
    assert layouts.parts_for(11, sink_new.tasks) is None, "not taken here: its own part"
    filed = layouts.deliveries(10, {sink_old.gid: [b"x"], relay_old[0]: [b"y"]}, new)
    assert filed == {sink_new.gid: [b"x"], relay_new.gid: [b"y"]}
    layouts.forget_before(12)
    assert layouts.parts_for(10, sink_new.tasks) is None


def test_a_driver_with_executors_in_other_workers_needs_its_executors_with_new_counts(
        ) -> None:
    import shutil

    from sparkstorm.engine.driver.loop import TopologyDriver

    driver = TopologyDriver("chain", Chain.topology_spec, dict(CONF), hosted={0})
    try:
        with pytest.raises(EngineError) as excinfo:
            driver.replan({"relay": 1})
        assert excinfo.value.code == "REBALANCE_NOT_IN_PLACE"
        assert not driver.replan_pending
        spout = driver.plan.executors[0]
        driver.replan({"relay": 1}, [[min(spout.tasks), max(spout.tasks)]])  # Nimbus's list
        assert driver.replan_pending and driver.replan_requests.executors is not None
        everything = TopologyDriver("chain", Chain.topology_spec, dict(CONF))
        try:
            everything.replan({"relay": 1})
            everything.replan({"sink": 4})
            assert everything.replan_pending
            assert everything.replan_requests.wanted == {"relay": 1, "sink": 4}, "taken together"
        finally:
            everything._job_threads.shutdown()
            shutil.rmtree(everything.workdir, ignore_errors=True)
    finally:
        driver._job_threads.shutdown()
        shutil.rmtree(driver.workdir, ignore_errors=True)


def test_a_worker_follows_its_driver_s_plan_once_the_assignment_is_in_step() -> None:
    from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner
    from sparkstorm.engine.plan.execution import plan_tag

    host = ExecutorHostRunner("chain", Chain.topology_spec, dict(CONF), set(), "token")
    try:
        before = host.plan
        relays = [e for e in before.executors if e.component == "relay"]
        old_ids = [[min(e.tasks), max(e.tasks)] for e in relays]
        assert not host.follow_driver_plan({"relay": 1}, old_ids), "the old assignment"
        assert host.plan is before
        one = [[min(relays[0].tasks), max(relays[-1].tasks)]]
        assert not host.follow_driver_plan({"relay": 1}, [[1, "x"]]), "malformed"
        assert host.follow_driver_plan({"relay": 1}, []), "in step: hosts none of them"
        assert plan_tag(host.plan) == host.pool.plan_tag != plan_tag(before)
        assert not host.follow_driver_plan({"relay": 1}, one), "already there"
    finally:
        host.stop()
