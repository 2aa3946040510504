"""A real BatchSpoutExecutor: next_batch, one tree per batch, ack/fail/replay, bounds in rows.

The XOR ledger is checked as the acker keeps it: the spout's init values, then what the
consumers (a real ``BatchBoltExecutor``, and per-tuple consumers acking each row they got)
contribute must bring every batch's root to zero, and not before. Every ledger test runs
with both wires to batch bolts: Arrow pieces (``topology.batch.arrow.wire``) and msgpack rows.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from sparkstorm import BatchBolt, BatchSpout, Bolt, Grouping, Topology
from sparkstorm.engine.columnar.arrow_batch import decode_blob
from sparkstorm.engine.executor.batch_bolt import BatchBoltExecutor
from sparkstorm.engine.executor.batch_spout import BatchSpoutExecutor
from sparkstorm.engine.executor.factory import make_executor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import refile
from sparkstorm.engine.wire.anchor_columns import anchor_map
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.errors import TopologyError
from sparkstorm.testing.polling import wait_for


class Planned(BatchSpout):
    """Emits the batches put in ``todo`` (or ``endless`` rows per call); replays fails."""

    outputs = ["n", "word"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.todo: list[tuple[Any, Any]] = []
        self.sent: dict[Any, Any] = {}
        self.asked: list[int] = []
        self.acks: list[Any] = []
        self.fails: list[Any] = []
        self.codes: list[str] = []
        self.endless = 0
        self.singles: list[Any] = []

    def next_batch(self, max_rows: int) -> None:
        self.asked.append(max_rows)
        while self.singles:  # per-tuple emits with their own ids work here too
            tup_id = self.singles.pop()
            self.emit([0, "single"], tup_id=tup_id)
        if self.endless:
            n = min(self.endless, max_rows)
            self.todo.append(({"n": list(range(n)), "word": ["w"] * n}, len(self.asked)))
        if not self.todo:
            return
        columns, batch_id = self.todo.pop(0)
        try:
            self.emit_batch(columns, batch_id=batch_id)
        except TopologyError as exc:
            self.codes.append(exc.code)
            return
        self.sent[batch_id] = columns

    def ack(self, tup_id: Any) -> None:
        self.acks.append(tup_id)

    def fail(self, tup_id: Any) -> None:
        self.fails.append(tup_id)
        self.todo.append((self.sent[tup_id], tup_id))  # replay with the same id


SEEN: list[Any] = []


class Collect(BatchBolt):
    outputs: ClassVar[list[Any]] = []

    def process_batch(self, batch: Any) -> None:
        SEEN.append(batch)


class PerTuple(Bolt):
    outputs: ClassVar[list[Any]] = []


class ToBatchBolt(Topology):
    numbers = Planned.spec()
    collect = Collect.spec(inputs=[numbers], num_tasks=2)


class ToBoth(Topology):
    numbers = Planned.spec()
    collect = Collect.spec(inputs=[numbers], num_tasks=2)
    each = PerTuple.spec(inputs={numbers: Grouping.fields("word")}, num_tasks=2)


def start(topology: type[Topology], **conf: Any) -> tuple[BatchSpoutExecutor, Planned,
                                                           ExecutionPlan]:
    plan = ExecutionPlan(topology.topology_spec, {"topology.acker.executors": 1, **conf})
    gid = next(e.gid for e in plan.executors if e.component == "numbers")
    host = make_executor(plan, gid, "t")
    assert isinstance(host, BatchSpoutExecutor)
    (spout,) = host.instances.values()
    return host, spout, plan


@pytest.fixture
def spouts() -> Any:
    started: list[BatchSpoutExecutor] = []

    def make(topology: type[Topology], **conf: Any) -> tuple[BatchSpoutExecutor, Planned,
                                                              ExecutionPlan]:
        found = start(topology, **conf)
        started.append(found[0])
        return found
    yield make
    for host in started:
        host.close()
    SEEN.clear()


def emit_window(host: BatchSpoutExecutor, spout: Planned, batches: list[tuple[Any, Any]],
                rows: int, control: SpoutControl | None = None) -> Any:
    """Queue ``batches``, let the spout emit ``rows`` deliveries, take the window."""
    with host.lock:
        spout.todo.extend(batches)
    host.run_window(control or SpoutControl())  # activates, applies verdicts
    wait_for(lambda: host.output.count >= rows, timeout=10, message=f"{rows} buffered")
    wait_for(lambda: not spout.todo, timeout=10, message="every batch offered")
    return host.run_window(SpoutControl())


def roots_by_id(host: BatchSpoutExecutor) -> dict[Any, int]:
    (collector,) = host.collectors.values()
    return {batch_id: root for root, (batch_id, _, _) in collector.pending_roots.items()}


def rows_acked_per_tuple(blob: bytes, ledger: dict[int, int]) -> list[list[Any]]:
    """What per-tuple consumers got; acking each (nothing emitted) XORs its edges in."""
    rows, _ = decode_blob(blob)
    got = []
    for batch in rows:
        for values, root, edge in zip(batch[3], batch[4], batch[5], strict=True):
            got.append(values)
            for tree, value in (anchor_map(root, edge) or {}).items():
                ledger[tree] ^= value
    return got


@pytest.mark.parametrize("arrow_wire", [True, False], ids=["arrow-wire", "rows-wire"])
def test_a_batch_is_one_tree_that_its_consumers_complete(spouts: Any, arrow_wire: bool
                                                         ) -> None:
    host, spout, plan = spouts(ToBoth, **{"topology.batch.arrow.wire": arrow_wire})
    words = ["a", "b", "c", "a", "d"]
    out = emit_window(host, spout, [({"n": list(range(5)), "word": words}, "b1")], 10)
    (root,) = roots_by_id(host).values()
    assert out.inits == {root: host.info.tasks[0]}
    ledger = dict(out.xor)
    blobs = host.encode_rows(out)
    collect_gid = next(e.gid for e in plan.executors if e.component == "collect")
    each_gids = [e.gid for e in plan.executors if e.component == "each"]
    per_tuple = [row for gid in each_gids if gid in blobs
                 for row in rows_acked_per_tuple(blobs[gid], ledger)]
    assert sorted(per_tuple) == sorted([n, w] for n, w in enumerate(words))
    assert ledger[root] != 0, "the batch bolt has not acked yet"
    bolt = make_executor(plan, collect_gid, "t")
    assert isinstance(bolt, BatchBoltExecutor)
    try:
        done = bolt.run_window([blobs[collect_gid]])
    finally:
        bolt.close()
    ledger[root] ^= done.xor[root]
    assert ledger == {root: 0}
    got = sorted(n for batch in SEEN for n in batch.column("n").to_pylist())
    assert got == [0, 1, 2, 3, 4]  # shuffled over the two tasks, each row once

    host.run_window(SpoutControl(ack=[root]))
    stats = host.take_stats()
    assert spout.acks == ["b1"] and spout.fails == []
    assert stats.acked == {"default": 5} and stats.emitted == {"default": 5}
    assert host.pending_rows == {host.info.tasks[0]: 0} and host.batch_rows == {}


def test_a_failed_batch_is_failed_once_and_replayed_then_acked_once(spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt)
    emit_window(host, spout, [({"n": [1, 2, 3], "word": ["x"] * 3}, "b1"),
                              ({"n": [4], "word": ["y"]}, "b2")], 4)
    roots = roots_by_id(host)
    replayed = emit_window(host, spout, [], 3, SpoutControl(ack=[roots["b2"]],
                                                            fail=[roots["b1"]]))
    stats = host.take_stats()
    assert spout.fails == ["b1"] and spout.acks == ["b2"]
    assert stats.failed == {"default": 3} and stats.acked == {"default": 1}
    pieces = [p for ps in replayed.arrow.values() for p in ps]
    assert sorted(n for p in pieces for n in p.values.column(0).to_pylist()) == [1, 2, 3]
    new_root = roots_by_id(host)["b1"]
    assert new_root != roots["b1"] and replayed.inits == {new_root: host.info.tasks[0]}
    host.run_window(SpoutControl(ack=[new_root, roots["b1"]]))  # a late verdict: ignored
    assert spout.acks == ["b2", "b1"] and spout.fails == ["b1"]


def test_a_lost_job_fails_every_batch_in_flight_counting_rows(spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt)
    emit_window(host, spout, [({"n": [1, 2], "word": ["x", "y"]}, "b1"),
                              ({"n": [3], "word": ["z"]}, "b2")], 3)
    host.run_window(SpoutControl(fail_all=True))
    stats = host.take_stats()
    assert sorted(spout.fails) == ["b1", "b2"]
    assert stats.failed == {"default": 3} and sum(stats.fail_causes.values()) == 3


def test_max_spout_pending_counts_rows_and_next_batch_is_asked_for_the_room(
    spouts: Any
) -> None:
    host, spout, _ = spouts(ToBatchBolt, **{"topology.max.spout.pending": 250})
    with host.lock:
        spout.endless = 100
    host.run_window(SpoutControl())
    wait_for(lambda: host.output.count >= 250, timeout=10, message="250 in flight")
    host.run_window(SpoutControl())
    assert spout.asked == [250, 150, 50] and host.output.count == 0
    first = min(roots_by_id(host).items())[1]  # batch id 1: 100 rows
    host.run_window(SpoutControl(ack=[first]))
    wait_for(lambda: host.output.count >= 100, timeout=10, message="100 more")
    assert spout.asked[3:] == [100] and sum(host.pending_rows.values()) == 250


def test_the_window_limit_counts_rows(spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt)
    with host.lock:
        spout.endless = 100
    host.run_window(SpoutControl(limit=120))
    wait_for(lambda: host.output.count >= 120, timeout=10, message="120 buffered")
    assert host.run_window(SpoutControl(limit=120)).count == 120
    assert spout.asked[:2] == [120, 20]  # the room; the spout emitted 100, then 20


def test_bad_batches_are_refused_with_a_code_and_lose_nothing_accepted(spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt)
    good = ({"n": [1, 2], "word": ["a", "b"]}, "good")
    bad = [
        ({"n": [1]}, "missing"),
        ({"n": [1], "word": ["a"], "extra": [0]}, "extra"),
        ({"n": [1, 2], "word": ["a"]}, "lengths"),
        ("n,word", "not-columns"),
        ({"n": [1, "x"], "word": ["a", "b"]}, "mixed"),
        ({"n": ["x"], "word": ["c"]}, "retyped"),
    ]
    castable = ({"n": [3.0], "word": ["c"]}, "castable")  # float64 -> int64, safely
    out = emit_window(host, spout, [good, *bad, castable], 3)
    assert spout.codes == ["BATCH_COLUMNS_MISMATCH", "BATCH_COLUMNS_MISMATCH",
                           "BATCH_COLUMN_LENGTHS", "BATCH_COLUMNS_TYPE",
                           "BATCH_COLUMN_NOT_ARROW", "BATCH_SPOUT_SCHEMA_CHANGED"]
    assert set(roots_by_id(host)) == {"good", "castable"} and not host.must_restart
    pieces = [p for ps in out.arrow.values() for p in ps]
    assert sorted(n for p in pieces for n in p.values.column(0).to_pylist()) == [1, 2, 3]
    assert {str(p.values.schema.field(0).type) for p in pieces} == {"int64"}
    host.run_window(SpoutControl(ack=list(roots_by_id(host).values())))
    assert sorted(spout.acks) == ["castable", "good"]


class Careless(BatchSpout):
    """Emits a good batch, then one with an undeclared column, which it does not catch."""

    outputs = ["n"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.calls = 0

    def next_batch(self, max_rows: int) -> None:
        self.calls += 1
        if self.calls == 1:
            self.emit_batch({"n": [1, 2]}, batch_id="good")
        elif self.calls == 2:
            self.emit_batch({"n": [3], "oops": [4]}, batch_id="bad")


class CarelessTopology(Topology):
    numbers = Careless.spec()
    collect = Collect.spec(inputs=[numbers])


def test_an_uncaught_bad_batch_is_the_spouts_error_and_keeps_what_was_accepted(
    spouts: Any
) -> None:
    host, _, _ = spouts(CarelessTopology)
    host.run_window(SpoutControl())
    wait_for(lambda: host.must_restart, timeout=10, message="the error")
    out = host.run_window(SpoutControl())
    assert "BATCH_COLUMNS_MISMATCH" in host.errors[0].error
    pieces = [p for ps in out.arrow.values() for p in ps]
    assert [n for p in pieces for n in p.values.column(0).to_pylist()] == [1, 2]
    assert list(roots_by_id(host)) == ["good"] and len(out.inits) == 1


def test_without_ackers_a_batch_is_acked_once_emitted(spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt, **{"topology.acker.executors": 0})
    out = emit_window(host, spout, [({"n": [1, 2], "word": ["a", "b"]}, "b1")], 2)
    assert spout.acks == ["b1"] and out.inits == {} and roots_by_id(host) == {}
    assert host.take_stats().acked == {"default": 2}  # rows, as with ackers


def test_in_checkpoint_reliability_a_batch_counts_its_rows_and_is_acked_at_commit(
        spouts: Any) -> None:
    # the benchmark's batch word count in checkpoint mode waited forever for its acked
    # sentences: each batch counted one
    host, spout, _ = spouts(ToBatchBolt, **{"topology.reliability": "checkpoint"})
    with host.lock:
        spout.todo.append(({"n": [1, 2, 3], "word": ["a", "b", "c"]}, "b1"))
    host.run_window(SpoutControl(), None, 0)  # activates
    wait_for(lambda: host.output.count + host.staging.count >= 3 and not spout.todo,
             timeout=10, message="the batch emitted")
    host.run_window(SpoutControl(), 1, 1)  # checkpoint window 1 takes it
    assert spout.acks == []
    host.commit_state(1)
    assert spout.acks == ["b1"]
    stats = host.take_stats()
    assert stats.acked == {"default": 3} and stats.complete_count == 1  # one sample a batch


def test_in_checkpoint_reliability_the_bound_counts_rows_until_their_window_ends(
        spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt, **{"topology.reliability": "checkpoint",
                                            "topology.max.spout.pending": 250})
    with host.lock:
        spout.endless = 100
    host.run_window(SpoutControl(), None, 0)  # activates
    wait_for(lambda: host.output.count >= 250, timeout=10, message="250 in flight")
    host.run_window(SpoutControl(), None, 1)  # window 1 takes them and runs
    assert spout.asked == [250, 150, 50] and host.output.count == 0
    host.apply_verdicts(SpoutControl(ended=1))  # its 250 rows are done
    wait_for(lambda: host.output.count >= 250, timeout=10, message="250 more")
    assert spout.asked[3:] == [250, 150, 50]


def test_rows_without_a_batch_id_are_unreliable(spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt)
    out = emit_window(host, spout, [({"n": [1, 2], "word": ["a", "b"]}, None)], 2)
    assert out.inits == {} and roots_by_id(host) == {} and spout.acks == []


def test_a_per_tuple_host_is_refused_with_a_code() -> None:
    spout = Planned()
    for call in (spout.next_tuple, lambda: spout.emit_batch({"n": [1], "word": ["a"]}, 1)):
        with pytest.raises(TopologyError) as excinfo:
            call()
        assert excinfo.value.code == "BATCH_SPOUT_PER_TUPLE_HOST"


def test_a_replan_files_buffered_pieces_under_their_tasks_new_executors(spouts: Any) -> None:
    host, spout, plan = spouts(ToBatchBolt)
    emit_window(host, spout, [], 0)
    with host.lock:
        spout.todo.append(({"n": [1, 2, 3, 4], "word": list("abcd")}, "b1"))
    wait_for(lambda: host.output.count >= 4, timeout=10, message="4 buffered")
    with host.lock:
        refile(host.output, {task: 100 + task for task in plan.task_executor})
        pieces = {gid: list(ps) for gid, ps in host.output.arrow.items()}
    assert len(pieces) == 2  # the two collect tasks, each under its new executor
    assert all(gid == 100 + p.task for gid, ps in pieces.items() for p in ps)


def test_per_tuple_emits_of_a_batch_spout_count_one_row_each_in_flight(spouts: Any) -> None:
    host, spout, _ = spouts(ToBatchBolt, **{"topology.max.spout.pending": 150})
    out = emit_window(host, spout, [({"n": list(range(100)), "word": ["w"] * 100}, "b1")],
                      100)
    with host.lock:
        spout.singles.append("t1")
        spout.todo.append(({"n": [1], "word": ["w"]}, "b2"))
    wait_for(lambda: host.output.count >= 2, timeout=10, message="a tuple and a batch")
    # the next call's room: 150 - 100 (b1) - 1 (t1) - 1 (b2)
    wait_for(lambda: spout.asked[-1] == 48, timeout=10, message="asked for 48")
    roots = roots_by_id(host)
    host.run_window(SpoutControl(ack=[roots["t1"], roots["b1"]]))
    assert sorted(spout.acks) == ["b1", "t1"] and len(out.inits) == 1
    assert host.take_stats().acked == {"default": 101}
    assert host.pending_rows == {host.info.tasks[0]: 1}


class OnlyPerTuple(Topology):
    numbers = Planned.spec()
    each = PerTuple.spec(inputs={numbers: Grouping.fields("word")}, num_tasks=2)


def test_a_batch_that_routing_refuses_half_way_is_failed_whole_and_replayed(
    spouts: Any
) -> None:
    host, spout, _ = spouts(OnlyPerTuple)
    (collector,) = host.collectors.values()
    route = collector.route(None)
    choose = route.single

    def refuse_boom(values: list[Any]) -> list[int]:  # a grouping that refuses a value
        if values[1] == "boom":
            msg = "cannot route 'boom'"
            raise ValueError(msg)
        return choose(values)  # type: ignore[misc]
    route.single = refuse_boom
    with host.lock:
        spout.todo.append(({"n": [1, 2], "word": ["a", "boom"]}, "b1"))
    host.run_window(SpoutControl())
    wait_for(lambda: host.must_restart, timeout=10, message="the error")
    out = host.run_window(SpoutControl())
    assert "cannot route 'boom'" in host.errors[0].error
    (root,) = out.inits  # the row already buffered is in a registered tree, failed at once
    assert out.failed[root].cause == "error"
    buffered = [(values, r) for batches in out.rows.values() for b in batches
                for values, r in zip(b[3], b[4], strict=True)]
    assert buffered == [([1, "a"], root)]
    host.run_window(SpoutControl(fail=[root]))
    assert spout.fails == ["b1"]  # once: the spout replays it (a restarted one re-reads)
