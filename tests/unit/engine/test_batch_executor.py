"""A real BatchBoltExecutor fed packed windows: columns in, routing, anchoring, acking, failing.

The XOR ledger is checked the way the acker keeps it: the spout's edges, then the window's
contributions, then the acks of the emitted tuples must bring every root back to zero, and
not before. Every test runs with both wires between batch bolts: Arrow pieces with anchors
per run (``topology.batch.arrow.wire``, the default) and msgpack rows.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from sparkstorm import (
    BatchBolt,
    FailedException,
    Grouping,
    ReportedFailedException,
    Spout,
    Stream,
    Topology,
)
from sparkstorm.engine.columnar.arrow_anchoring import ArrowAnchoring
from sparkstorm.engine.columnar.arrow_batch import decode_blob, lists_anchors
from sparkstorm.engine.executor import batch_bolt as batch_executor
from sparkstorm.engine.executor.batch_bolt import BatchBoltExecutor
from sparkstorm.engine.executor.factory import make_executor
from sparkstorm.engine.executor.host import ComponentFailure
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.anchor_columns import anchor_map, batch_of
from sparkstorm.engine.wire.frames import pack
from sparkstorm.errors import TopologyError

SEEN: list[tuple[str, str, Any]] = []
"""What the bolts were handed: (source component, stream, batch)."""


class Lines(Spout):
    outputs = ["sentence", Stream(["n"], name="numbers")]


class SplitWords(BatchBolt):
    """Splits with pyarrow; anchors each word to its sentence (parents)."""

    outputs = ["word"]
    ticks: ClassVar[list[Any]] = []

    def process_batch(self, batch: Any) -> None:
        SEEN.append((self.source.component, self.source.stream, batch))
        if self.source.stream == "numbers":
            self.emit_batch({"word": [str(n) for n in batch["n"]]})  # anchored to the batch
            return
        lists = pc.utf8_split_whitespace(batch.column("sentence"))
        sentences = batch.column("sentence").to_pylist()
        if "boom" in sentences:
            msg = "cannot split 'boom'"
            raise ValueError(msg)
        if "refused" in sentences:
            msg = "a sink refused it"
            raise FailedException(msg)
        if "reported" in sentences:
            msg = "a sink refused it, say so"
            raise ReportedFailedException(msg)
        self.emit_batch(pa.RecordBatch.from_arrays([pc.list_flatten(lists)], ["word"]),
                        parents=pc.list_parent_indices(lists))

    def process_tick(self, tup: Any) -> None:
        self.ticks.append(tup.values)


class ListsBolt(BatchBolt):
    outputs = ["word"]
    batch_format = "lists"

    def process_batch(self, batch: Any) -> None:
        SEEN.append((self.source.component, self.source.stream, batch))
        self.emit(["one"])  # a per-tuple emit inside a batch: anchored to the batch


class Sink(BatchBolt):
    outputs: ClassVar[list[Any]] = []


class Words(Topology):
    lines = Lines.spec()
    split = SplitWords.spec(inputs=[lines, lines["numbers"]])
    sink = Sink.spec(inputs={split: Grouping.fields("word")}, num_tasks=3)


class AsLists(Topology):
    lines = Lines.spec()
    split = ListsBolt.spec(inputs=[lines])
    sink = Sink.spec(inputs=[split])


WIRE = {"arrow": True}


@pytest.fixture(autouse=True, params=[True, False], ids=["arrow-wire", "rows-wire"])
def _wire(request: pytest.FixtureRequest) -> None:
    WIRE["arrow"] = request.param


def executor(topology: type[Topology]) -> tuple[BatchBoltExecutor, ExecutionPlan, int, int]:
    plan = ExecutionPlan(topology.topology_spec, {"topology.acker.executors": 1,
                                                  "topology.batch.arrow.wire": WIRE["arrow"]})
    gid = next(e.gid for e in plan.executors if e.component == "split")
    host = make_executor(plan, gid, "t")
    assert isinstance(host, BatchBoltExecutor)
    return host, plan, plan.executors[gid].tasks[0], plan.component_tasks["lines"][0]


SPOUT_EDGES: dict[int, int] = {}
"""root -> XOR of the edges of the inputs made by :func:`window`: what the spout and the
acker hold for each root before the bolt runs."""


def window(task: int, src: int, stream: str, values: list[list[Any]],
           roots: list[int | None]) -> bytes:
    """One window's packed input; input ``i`` of root ``r`` has its own edge."""
    anchors: list[dict[int, int] | None] = []
    for index, root in enumerate(roots):
        if root is None:
            anchors.append(None)
            continue
        edge = (root << 20) + (len(SPOUT_EDGES) << 8) + index + 1
        SPOUT_EDGES[root] = SPOUT_EDGES.get(root, 0) ^ edge
        anchors.append({root: edge})
    return pack([batch_of(task, src, stream, values, anchors)])


def delivered(output: Any) -> list[tuple[int, list[Any], dict[int, int] | None]]:
    """(target task, values, anchor map) of every emitted delivery, through the wire."""
    return [(target, values, anchors) for target, rows, anchors in acked_units(output)
            for values in rows]


def acked_units(output: Any) -> list[tuple[int, list[list[Any]], dict[int, int] | None]]:
    """(target task, rows, anchor map) of what a consumer acks at once, through the wire.

    A tuple, or a run of an Arrow piece (its rows share one edge).
    """
    units = []
    blobs = [encode_blob_of(output, gid) for gid in set(output.rows) | set(output.arrow)]
    for blob in blobs:
        rows, pieces = decode_blob(blob)
        for batch in rows:
            for values, root, edge in zip(batch[3], batch[4], batch[5], strict=True):
                units.append((batch[0], [values], anchor_map(root, edge)))
        for piece in pieces:
            columns = [c.to_pylist() for c in piece.values.columns]
            values = [list(v) for v in zip(*columns, strict=True)]
            anchors = piece.anchors
            start = 0
            for run, (end, root, edge) in enumerate(zip(
                    anchors.run_end.to_pylist(), anchors.root.to_pylist(),
                    anchors.edge.to_pylist(), strict=True)):
                amap = anchors.trees.get(run) or anchor_map(root, edge)
                units.append((piece.task, values[start:end], amap))
                start = end
    return units


def encode_blob_of(output: Any, gid: int) -> bytes:
    from sparkstorm.engine.columnar.arrow_batch import encode_blob

    rows = pack(output.rows[gid]) if gid in output.rows else None
    pieces = output.arrow.get(gid, [])
    return encode_blob(rows, pieces) if pieces else rows  # type: ignore[return-value]


def ledger_after(output: Any, roots: list[int]) -> dict[int, int]:
    """The acker's values for ``roots``: spout edges, then this window's XOR."""
    ledger = {root: SPOUT_EDGES[root] for root in roots}
    for root, value in output.xor.items():
        ledger[root] ^= value
    return ledger


@pytest.fixture(autouse=True)
def _clear() -> None:
    SEEN.clear()
    SPOUT_EDGES.clear()
    SplitWords.ticks.clear()


def test_one_record_batch_per_stream_with_parent_anchoring_and_exact_acks() -> None:
    host, plan, task, src = executor(Words)
    blobs = [window(task, src, "default", [["a b"], ["c"]], [1, 2]),
             window(task, src, "numbers", [[7], [8]], [3, 3]),  # two inputs of one root
             window(task, src, "default", [["d e f"]], [4])]
    output = host.run_window(blobs)

    assert [(c, s, b.num_rows) for c, s, b in SEEN] == [("lines", "default", 3),
                                                        ("lines", "numbers", 2)]
    assert SEEN[0][2].schema.names == ["sentence"] and SEEN[1][2].schema.names == ["n"]
    sent = delivered(output)
    words = sorted(values[0] for _, values, _ in sent)
    assert words == ["7", "8", "a", "b", "c", "d", "e", "f"]
    sink_tasks = set(plan.component_tasks["sink"])
    assert {target for target, _, _ in sent} <= sink_tasks
    by_word = {values[0]: anchors for _, values, anchors in sent}
    assert set(by_word["a"]) == set(by_word["b"]) == {1} and set(by_word["f"]) == {4}
    assert set(by_word["7"]) == {3}

    ledger = ledger_after(output, [1, 2, 3, 4])
    assert all(ledger.values()), "a tree completed before its words were acked"
    for _, _, anchors in acked_units(output):  # the sink acks every word
        for root, edge in (anchors or {}).items():
            ledger[root] ^= edge
    assert ledger == {1: 0, 2: 0, 3: 0, 4: 0}
    stats = host.take_stats()
    assert stats.executed == {"lines:default": 3, "lines:numbers": 2}
    assert stats.acked == {"lines:default": 3, "lines:numbers": 2}


def test_same_key_goes_to_the_same_task_as_per_tuple_fields_grouping() -> None:
    host, _, task, src = executor(Words)
    output = host.run_window([window(task, src, "default", [["x x x y"]], [1])])
    targets: dict[str, set[int]] = {}
    for target, values, _ in delivered(output):
        targets.setdefault(values[0], set()).add(target)
    assert len(targets["x"]) == 1 and len(targets["y"]) == 1


def test_a_raising_batch_fails_its_trees_and_the_rest_of_the_window() -> None:
    host, _, task, src = executor(Words)
    blobs = [window(task, src, "default", [["ok"], ["boom"]], [1, 2]),
             window(task, src, "numbers", [[5]], [3])]
    with pytest.raises(ComponentFailure):
        host.run_window(blobs)
    output = host.output.take()
    assert set(output.failed) == {1, 2, 3}
    why = output.failed[1]
    assert why.cause == "error" and "split: ValueError: cannot split 'boom'" in why.reason
    assert not output.xor, "a failed batch must not be acked"
    assert host.must_restart
    assert "ValueError: cannot split 'boom'" in host.errors[0].error
    assert host.take_stats().failed == {"lines:default": 2}


@pytest.mark.parametrize("word", ["refused", "reported"])
def test_a_failed_exception_fails_its_batch_and_the_bolt_goes_on(word: str) -> None:
    host, _, task, src = executor(Words)
    blobs = [window(task, src, "default", [["ok"], [word]], [1, 2]),
             window(task, src, "numbers", [[5]], [3])]
    output = host.run_window(blobs)
    assert set(output.failed) == {1, 2}, "the batch's trees fail, the next batch's do not"
    why = output.failed[1]
    assert why.cause == "explicit" and "split: " in why.reason and "a sink refused" in why.reason
    assert [(c, s) for c, s, _ in SEEN] == [("lines", "default"), ("lines", "numbers")], \
        "the window's next batch is processed"
    assert not host.must_restart, "no restart: the bolt goes on"
    stats = host.take_stats()
    assert stats.failed == {"lines:default": 2} and stats.acked == {"lines:numbers": 1}
    errors = [e.error for e in host.errors]
    if word == "reported":
        assert len(errors) == 1 and "ReportedFailedException" in errors[0]
    else:
        assert not errors, "a FailedException is not an error"


def test_ticks_go_to_process_tick() -> None:
    host, plan, task, _ = executor(Words)
    system = next(t for t, c in plan.task_component.items() if c == "__system")
    host.run_window([pack([[task, system, "__tick", [[1]], [None], [None]]])])
    assert SplitWords.ticks == [(1,)] and SEEN == []


def test_lists_format_and_per_tuple_emit_anchored_to_the_batch() -> None:
    host, _, task, src = executor(AsLists)
    output = host.run_window([window(task, src, "default", [["a"], ["b"]], [1, 2])])
    assert SEEN[0][2] == {"sentence": ["a", "b"]}
    ((_, values, anchors),) = delivered(output)
    assert values == ["one"] and anchors is not None and set(anchors) == {1, 2}
    ledger = ledger_after(output, [1, 2])
    for root, edge in anchors.items():
        assert ledger[root] != 0
        ledger[root] ^= edge
    assert ledger == {1: 0, 2: 0}


def test_without_pyarrow_batches_are_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    # pyarrow is installed here; its absence is what this simulates
    monkeypatch.setattr(batch_executor, "load_pyarrow", lambda: None)
    host, _, task, src = executor(Words)
    output = host.run_window([window(task, src, "numbers", [[1], [2]], [None, None])])
    assert SEEN[0][2] == {"n": [1, 2]}
    assert host.wire_pa is None and not output.arrow and output.rows  # msgpack rows out
    assert sorted(values[0] for _, values, _ in delivered(output)) == ["1", "2"]


def test_parents_out_of_range_is_a_clear_error() -> None:
    host, _, task, src = executor(Words)
    sink = host.sinks[task]
    sink.anchoring = batch_executor.BatchAnchoring([1], [5])
    if WIRE["arrow"]:
        sink.anchoring = ArrowAnchoring(pa, lists_anchors(pa, [1], [5]), 1)
    with pytest.raises(TopologyError) as excinfo:
        sink.emit_batch({"word": ["a", "b"]}, None, [0, 1], True)
    assert excinfo.value.code == "BATCH_PARENTS_MISMATCH"


def test_a_spout_sends_a_batch_bolt_arrow_pieces_one_run_per_tuple() -> None:
    host, plan, task, src = executor(Words)
    spout = make_executor(plan, next(e.gid for e in plan.executors if e.component == "lines"),
                          "t")
    try:
        spout.output.batch(host.info.gid, task, src, "default")[3:] = [[["a b"], ["c"]],
                                                                       [1, 2], [11, 12]]
        SPOUT_EDGES.update({1: 11, 2: 12})
        blob = spout.encode_rows(spout.output.take())[host.info.gid]
    finally:
        spout.close()
    rows, pieces = decode_blob(blob)
    if WIRE["arrow"]:
        assert rows == [] and pieces[0].values.column(0).to_pylist() == ["a b", "c"]
        assert pieces[0].anchors.root.to_pylist() == [1, 2]
    else:
        assert pieces == [] and rows[0][3:] == [[["a b"], ["c"]], [1, 2], [11, 12]]
    output = host.run_window([blob])
    ledger = ledger_after(output, [1, 2])
    assert all(ledger.values())
    for _, _, anchors in acked_units(output):
        for root, edge in (anchors or {}).items():
            ledger[root] ^= edge
    assert ledger == {1: 0, 2: 0}


def test_mixed_types_a_batch_consumer_cannot_type_travel_as_rows() -> None:
    host, _, task, _ = executor(Words)
    sink = host.sinks[task]
    sink.anchoring = None
    assert sink.emit_batch({"word": [1, "a"]}, None, None, False) == 2
    output = host.output.take()
    assert not output.arrow
    assert sorted(map(str, (v[0] for _, v, _ in delivered(output)))) == ["1", "a"]
