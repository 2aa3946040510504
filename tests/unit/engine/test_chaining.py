"""Chaining (issue 12 §2): which bolts run in their upstream's Spark task, and how.

The decision (``engine.plan.chaining``), the plan's stages, the routing that keeps executor ``i``'s
output for its chained partner ``i``, and the stage function that calls the pair, against real
executor servers on Unix sockets.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Grouping, Spout, Stream, Topology, TopologySpec
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.main import ExecutorServer
from sparkstorm.engine.executor.routing import build_routes
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import DRIVER, StageInfo, run_stage
from sparkstorm.engine.wire.anchor_columns import batch_of
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.frames import pack
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import WindowFlags
from sparkstorm.engine.wire.row_wire import unpack_rows


class Numbers(Spout):
    outputs = ["n", Stream(["n"], name="odd"), Stream(["n"], name="direct", direct=True)]


class Pass(Bolt):
    outputs = ["n"]

    def process(self, tup: Any) -> None:
        self.emit([tup.values[0] * 10])


class Sink(Bolt):
    outputs: list[Any] = []


def spec_with(grouping: Grouping, *, spout_par: int = 2, par: int = 2,
              num_tasks: int | None = None, stream: str = "default") -> TopologySpec:
    class One(Topology):
        numbers = Numbers.spec(par=spout_par)
        passing = Pass.spec(inputs={numbers[stream]: grouping}, par=par, num_tasks=num_tasks)

    return One.topology_spec


# --- the decision ------------------------------------------------------------------------


@pytest.mark.parametrize("grouping", [Grouping.SHUFFLE, Grouping.NONE, Grouping.LOCAL_OR_SHUFFLE],
                         ids=["shuffle", "none", "local_or_shuffle"])
def test_a_same_parallelism_shuffle_like_edge_is_chained(grouping: Grouping) -> None:
    plan = ExecutionPlan(spec_with(grouping), {})
    assert plan.chain_parents == {"passing": "numbers"}
    spouts = [e.gid for e in plan.executors if e.component == "numbers"]
    bolts = [e.gid for e in plan.executors if e.component == "passing"]
    assert plan.stages == [spouts], "one stage: the bolts ride in the spouts' tasks"
    assert plan.chained == {spouts[0]: (bolts[0],), spouts[1]: (bolts[1],)}
    assert [plan.chain_root(g) for g in bolts] == spouts


@pytest.mark.parametrize("grouping", [
    Grouping.fields("n"), Grouping.ALL, Grouping.GLOBAL, Grouping.partial_key("n"),
], ids=["fields", "all", "global", "partial_key"])
def test_groupings_that_choose_by_value_are_not_chained(grouping: Grouping) -> None:
    plan = ExecutionPlan(spec_with(grouping), {})
    assert plan.chain_parents == {}
    assert len(plan.stages) == 2 and plan.chained == {}


def test_a_direct_grouping_is_not_chained() -> None:
    plan = ExecutionPlan(spec_with(Grouping.DIRECT, stream="direct"), {})
    assert plan.chain_parents == {}


def test_different_parallelism_is_not_chained() -> None:
    assert ExecutionPlan(spec_with(Grouping.SHUFFLE, spout_par=1), {}).chain_parents == {}


def test_shuffle_over_unevenly_split_tasks_is_not_chained_local_or_shuffle_is() -> None:
    """Three tasks over two executors: a chained shuffle would give one task double."""
    assert ExecutionPlan(spec_with(Grouping.SHUFFLE, num_tasks=3), {}).chain_parents == {}
    chained = ExecutionPlan(spec_with(Grouping.LOCAL_OR_SHUFFLE, num_tasks=3), {})
    assert chained.chain_parents == {"passing": "numbers"}
    assert ExecutionPlan(spec_with(Grouping.SHUFFLE, num_tasks=4), {}).chain_parents == {
        "passing": "numbers"}


def test_chaining_off_by_conf() -> None:
    plan = ExecutionPlan(spec_with(Grouping.SHUFFLE), {"topology.window.chain": False})
    assert plan.chain_parents == {} and len(plan.stages) == 2


def test_two_upstream_components_or_a_cycle_edge_are_not_chained() -> None:
    class Two(Topology):
        a = Numbers.spec(par=2)
        b = Numbers.spec(par=2)
        join = Pass.spec(inputs=[a, b], par=2)
        after = Pass.spec(inputs=[join], par=2)

    plan = ExecutionPlan(Two.topology_spec, {})
    assert plan.chain_parents == {"after": "join"}

    class Cycle(Topology):
        s = Numbers.spec(par=2)
        a = Pass.spec(inputs=[s, "b"], par=2)
        b = Pass.spec(inputs=[a], par=2)

    cycle = ExecutionPlan(Cycle.topology_spec, {})
    assert ("b", "a") in cycle.back_edges
    assert cycle.chain_parents == {"b": "a"}, "a has two sources; b's one edge is forward"


def test_several_streams_of_one_upstream_chain_when_all_allow_it() -> None:
    class Streams(Topology):
        numbers = Numbers.spec(par=2)
        both = Pass.spec(inputs={numbers: Grouping.SHUFFLE,
                                 numbers["odd"]: Grouping.LOCAL_OR_SHUFFLE}, par=2)
        mixed = Pass.spec(inputs={numbers: Grouping.SHUFFLE,
                                  numbers["odd"]: Grouping.fields("n")}, par=2)

    assert ExecutionPlan(Streams.topology_spec, {}).chain_parents == {"both": "numbers"}


def test_a_chain_of_three_is_one_stage_and_a_fields_edge_after_it_the_next() -> None:
    class Long(Topology):
        numbers = Numbers.spec(par=2)
        first = Pass.spec(inputs=[numbers], par=2)
        second = Pass.spec(inputs={first: Grouping.LOCAL_OR_SHUFFLE}, par=2, num_tasks=4)
        sink = Sink.spec(inputs={second: Grouping.fields("n")}, par=2)

    plan = ExecutionPlan(Long.topology_spec, {})
    by = {(e.component, e.index): e.gid for e in plan.executors}
    assert plan.chain_parents == {"first": "numbers", "second": "first"}
    assert plan.stages == [[by["numbers", 0], by["numbers", 1]],
                           [by["sink", 0], by["sink", 1]]]
    assert plan.chained[by["numbers", 1]] == (by["first", 1],)
    assert plan.chained[by["first", 1]] == (by["second", 1],)
    assert plan.chain_root(by["second", 1]) == by["numbers", 1]
    assert plan.executors[by["sink", 0]].level == 1
    assert plan.levels == {"numbers": 0, "first": 1, "second": 2, "sink": 3}


# --- routing -----------------------------------------------------------------------------


def test_an_executor_routes_a_chained_stream_only_to_its_partners_tasks() -> None:
    plan = ExecutionPlan(spec_with(Grouping.SHUFFLE, num_tasks=4), {})
    partner_tasks = {e.index: set(e.tasks) for e in plan.executors if e.component == "passing"}
    for spout in (e for e in plan.executors if e.component == "numbers"):
        task = spout.tasks[0]
        route = build_routes(plan, "numbers", task, spout.index)["default"]
        chosen = {t for _ in range(40) for t in route.tasks_for([1], None)}
        assert chosen == partner_tasks[spout.index], "every partner task, nothing else"
        # other streams of the spout are not subscribed by a chained bolt: unchanged
        unrouted = build_routes(plan, "numbers", task)["default"]
        assert {t for _ in range(40) for t in unrouted.tasks_for([1], None)} == \
            set(plan.component_tasks["passing"])


def test_without_chaining_every_task_is_a_candidate() -> None:
    plan = ExecutionPlan(spec_with(Grouping.SHUFFLE), {"topology.window.chain": False})
    route = build_routes(plan, "numbers", 99, 0)["default"]
    assert {t for _ in range(20) for t in route.tasks_for([1], None)} == \
        set(plan.component_tasks["passing"])


# --- the stage function ------------------------------------------------------------------


def test_a_chained_executors_records_go_to_its_callers_partition() -> None:
    stage = StageInfo(0, (3, 4), {3: 0, 4: 0, 5: 0, 6: 0, 9: 1}, {}, "", 1.0, 1.0, {},
                      chained={3: (5,), 4: (6,)}, roots={5: 3, 6: 4})
    assert [stage.partition_of(g) for g in (3, 4, 5, 6)] == [0, 1, 0, 1]


class BoltsAfterBolts(Topology):
    numbers = Numbers.spec()
    first = Pass.spec(inputs={numbers: Grouping.fields("n")})
    second = Pass.spec(inputs=[first])
    sink = Sink.spec(inputs={second: Grouping.fields("n")})


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ExecutionPlan, dict[int, Endpoint]]]:
    """Real executor servers for ``first`` and ``second`` (chained); ``sink``'s never runs."""
    plan = ExecutionPlan(BoltsAfterBolts.topology_spec, {"topology.acker.executors": 1})
    servers, threads, endpoints = [], [], {}
    for name in ("first", "second"):
        gid = next(e.gid for e in plan.executors if e.component == name)
        server = ExecutorServer(BoltExecutor(plan, gid, "chain"), str(tmp_path / f"{gid}.sock"))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        servers.append(server)
        threads.append(thread)
        endpoints[gid] = Endpoint(server.path, "127.0.0.1", 1)
    yield plan, endpoints
    for server, thread in zip(servers, threads, strict=True):
        server._shutdown()
        thread.join(5)


def _stage_of(plan: ExecutionPlan, endpoints: dict[int, Endpoint], level: int,
              answer_timeout: float = 5.0) -> StageInfo:
    levels = {e.gid: e.level for e in plan.executors}
    chained = {g: p for g, p in plan.chained.items() if levels[g] == level}
    roots = {p: plan.chain_root(p) for ps in chained.values() for p in ps}
    return StageInfo(level, tuple(plan.stages[level]), levels, endpoints, "", 5.0,
                     answer_timeout, {e.gid: e.component for e in plan.executors},
                     chained=chained, roots=roots)


def test_the_task_feeds_the_first_executors_output_to_its_partner(
        served: tuple[ExecutionPlan, dict[int, Endpoint]]) -> None:
    plan, endpoints = served
    gid = {e.component: e.gid for e in plan.executors}
    stage = _stage_of(plan, endpoints, 1)
    assert stage.gids == (gid["first"],) and stage.chained == {gid["first"]: (gid["second"],)}
    source = plan.component_tasks["numbers"][0]
    first_task = plan.component_tasks["first"][0]
    rows = pack([batch_of(first_task, source, "default", [[1], [2]], [{11: 5}, {12: 6}])])
    records = list(run_stage(stage, 1, WindowFlags(), 0, [(gid["first"], rows), (77, b"passing")]))

    assert (77, b"passing") in records, "records for other stages pass through"
    metas = [WindowMeta.decode(v[0]) for k, v in records if k == DRIVER]
    assert [m.gid for m in metas] == [gid["first"], gid["second"]]
    assert metas[1].stats.executed == {"first:default": 2}, "second got first's output"
    forwarded = [v for k, v in records if k == gid["sink"]]
    values = sorted(values for blob in forwarded for batch in unpack_rows(blob)
                    for values in batch[3])
    assert values == [[100], [200]], "second's output goes on to the next stage"
    assert not any(k == gid["second"] for k, _ in records), "never through Spark"


def test_a_lost_first_executor_fails_its_trees_and_its_partner_is_still_called(
        served: tuple[ExecutionPlan, dict[int, Endpoint]], tmp_path: Path) -> None:
    import socket

    plan, endpoints = served
    gid = {e.component: e.gid for e in plan.executors}
    frozen_path = str(tmp_path / "frozen.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(frozen_path)
    listener.listen(16)
    try:
        frozen = Endpoint(frozen_path, "127.0.0.1", 1)
        stage = _stage_of(plan, {**endpoints, gid["first"]: frozen}, 1, answer_timeout=0.3)
        source = plan.component_tasks["numbers"][0]
        rows = pack([batch_of(plan.component_tasks["first"][0], source, "default", [[1]],
                              [{11: 5}])])
        records = list(run_stage(stage, 1, WindowFlags(), 0, [(gid["first"], rows)]))
    finally:
        listener.close()
    metas = [WindowMeta.decode(v[0]) for k, v in records if k == DRIVER]
    assert [m.gid for m in metas] == [gid["first"], gid["second"]]
    assert metas[0].lost and set(metas[0].failed) == {11}
    assert not metas[1].lost and metas[1].stats.executed == {}, "called, with nothing"


def test_routing_seeds_differ_but_partners_agree() -> None:
    """Every task of a chained upstream executor picks among the same partner tasks."""
    plan = ExecutionPlan(spec_with(Grouping.SHUFFLE, num_tasks=4, par=2), {})
    spout = next(e for e in plan.executors if e.component == "numbers" and e.index == 1)
    partner = next(e for e in plan.executors if e.component == "passing" and e.index == 1)
    seeds = random.Random(3).sample(range(1000), 5)
    for seed in seeds:
        route = build_routes(plan, "numbers", seed, spout.index)["default"]
        assert set(route.tasks_for([1], None)) <= set(partner.tasks)
