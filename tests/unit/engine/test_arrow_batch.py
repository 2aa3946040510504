"""The Arrow wire between batch bolts: codec, run anchoring and vectorised routing."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from sparkstorm.engine.columnar.arrow_anchoring import ArrowAnchoring, concat_anchors, merge_xor
from sparkstorm.engine.columnar.arrow_batch import (
    ArrowPiece,
    RunAnchors,
    blob_roots,
    decode_blob,
    encode_blob,
    is_arrow_blob,
    lists_anchors,
    rows_piece,
)
from sparkstorm.engine.columnar.arrow_routing import BatchRouter
from sparkstorm.engine.executor.routing import make_chooser
from sparkstorm.engine.plan.execution import Subscription
from sparkstorm.engine.wire.anchor_columns import batch_of
from sparkstorm.engine.wire.frames import pack
from sparkstorm.topology.grouping import Grouping


def _piece(values: Any, run_end: list[int], roots: list[int | None],
           edges: list[int | None], trees: dict[int, dict[int, int]] | None = None
           ) -> ArrowPiece:
    anchors = RunAnchors(pa.array(run_end, pa.int32()), pa.array(roots, pa.uint64()),
                         pa.array(edges, pa.uint64()), trees or {})
    return ArrowPiece(4, 9, "default", values, anchors)


def test_round_trip_with_runs_in_several_trees_nulls_and_rows() -> None:
    values = pa.RecordBatch.from_arrays(
        [pa.array(["a", None, "c", "d"]), pa.array([1, 2, None, 2**62])], ["word", "n"])
    big = 2**64 - 1  # roots and edges use all 64 bits
    piece = _piece(values, [2, 3, 4], [big, None, None], [5, None, None],
                   {1: {7: 11, 8: 12}})
    rows = pack([batch_of(4, 9, "other", [["x"]], [{3: 4}])])
    blob = encode_blob(rows, [piece])
    assert is_arrow_blob(blob) and not is_arrow_blob(rows)

    rows_back, (back,) = decode_blob(blob)
    assert rows_back == [[4, 9, "other", [["x"]], [3], [4]]]
    assert (back.task, back.src, back.stream) == (4, 9, "default")
    assert back.values.equals(values)
    assert back.anchors.run_end.to_pylist() == [2, 3, 4]
    assert back.anchors.root.to_pylist() == [big, None, None]
    assert back.anchors.edge.to_pylist() == [5, None, None]
    assert back.anchors.trees == {1: {7: 11, 8: 12}}
    assert sorted(blob_roots(blob)) == [3, 7, 8, big]


def test_an_empty_batch_round_trips() -> None:
    values = pa.RecordBatch.from_arrays([pa.array([], pa.string())], ["word"])
    _, (back,) = decode_blob(encode_blob(None, [_piece(values, [], [], [])]))
    assert back.values.num_rows == 0 and back.anchors.runs == 0
    assert decode_blob(pack([])) == ([], [])


def test_rows_become_runs_of_one_with_their_anchor_maps() -> None:
    batch = batch_of(4, 9, "default", [["a"], ["b"], ["c"]], [{1: 2}, None, {3: 4, 5: 6}])
    piece = rows_piece(pa, batch, ("word",))
    assert piece.values.column(0).to_pylist() == ["a", "b", "c"]
    assert piece.anchors.run_end is None  # every row is its own run
    assert piece.anchors.root.to_pylist() == [1, None, None]
    assert piece.anchors.edge.to_pylist() == [2, None, None]
    assert piece.anchors.trees == {2: {3: 4, 5: 6}}
    _, (back,) = decode_blob(encode_blob(None, [piece]))
    assert back.anchors.run_end.to_pylist() == [1, 2, 3]


def _ledger(spout: dict[int, int], *xors: dict[int, int]) -> dict[int, int]:
    ledger = dict(spout)
    for xor in xors:
        for root, value in xor.items():
            ledger[root] = ledger.get(root, 0) ^ value
    return ledger


def _consumer_acks(anchors: RunAnchors) -> dict[int, int]:
    """What a batch consumer acking ``anchors`` adds: each run's edge, once per root."""
    xor: dict[int, int] = {}
    for run, (root, edge) in enumerate(zip(anchors.root.to_pylist(),
                                           anchors.edge.to_pylist(), strict=True)):
        amap = anchors.trees.get(run) or ({root: edge} if root is not None else {})
        for tree, value in amap.items():
            xor[tree] = xor.get(tree, 0) ^ value
    return xor


@pytest.mark.parametrize("parents", [[0, 0, 1, 2, 2, 3], [3, 0, 0, 2, 1, 3]])
def test_run_anchoring_completes_every_tree_only_when_the_consumer_acks(
    parents: list[int],
) -> None:
    # input: row 0 of tree 1, rows 1-2 one run of tree 2, row 3 in trees 3 and 4
    anchors = RunAnchors(pa.array([1, 3, 4], pa.int32()), pa.array([1, 2, None], pa.uint64()),
                         pa.array([10, 20, None], pa.uint64()), {2: {3: 30, 4: 40}})
    spout = {1: 10, 2: 20, 3: 30, 4: 40}
    batch = ArrowAnchoring(pa, anchors, 4)
    out = []
    for target in (0, 1):  # two target tasks, each gets the same parents
        out.append(batch.emit_anchors(*batch.child_runs(pa.array(parents, pa.int32()))))
        assert out[-1].runs <= len(parents), target
    xor: dict[int, int] = {}
    batch.ack_into(xor)
    early = _ledger(spout, xor)
    assert all(early.values()), "a tree completed before its rows were acked"
    assert _ledger(spout, xor, *(_consumer_acks(a) for a in out)) == dict.fromkeys(spout, 0)


def test_whole_batch_anchoring_and_rows_emitted_one_by_one() -> None:
    anchors = lists_anchors(pa, [1, 2, 2], [10, 20, 21])
    spout = {1: 10, 2: 20 ^ 21}
    batch = ArrowAnchoring(pa, anchors, 3)
    whole = batch.whole_batch_anchors(5)  # five rows to one task, anchored to every input
    assert whole.trees and set(whole.trees[0]) == {1, 2}
    assert batch.roots_column == [1, 2, 2] and batch.edges_column == [10, 20, 21]
    vals = batch.parent_vals()  # a row emitted to a per-tuple consumer, anchored to row 1
    row_edge = 99
    vals[1] ^= row_edge
    xor: dict[int, int] = {}
    batch.ack_into(xor)
    acks = _consumer_acks(whole)
    acks[2] = acks.get(2, 0) ^ row_edge
    assert _ledger(spout, xor, acks) == {1: 0, 2: 0}


def test_concatenated_pieces_keep_their_runs() -> None:
    first = RunAnchors(pa.array([2], pa.int32()), pa.array([1], pa.uint64()),
                       pa.array([10], pa.uint64()), {})
    second = lists_anchors(pa, [None, 3], [{4: 5, 6: 7}, 8])
    merged = concat_anchors(pa, [(first, 2), (second, 2)])
    assert merged.run_end.to_pylist() == [2, 3, 4]
    assert merged.root.to_pylist() == [1, None, 3] and merged.trees == {1: {4: 5, 6: 7}}


def test_merge_xor_handles_repeats_and_existing_roots() -> None:
    xor = {1: 3}
    merge_xor(xor, [1, 2, None, 2], [5, 6, 7, 8])
    assert xor == {1: 3 ^ 5, 2: 6 ^ 8}
    fresh: dict[int, int] = {}
    merge_xor(fresh, [4, 5], [1, 2])
    assert fresh == {4: 1, 5: 2}


def _targets(router: BatchRouter, batch: Any) -> dict[int, int]:
    """Row index -> task, from the router's split."""
    out = {}
    for task, rows in router.split(batch):
        indexes = range(rows[0], rows[0] + rows[1]) if isinstance(rows, tuple) \
            else rows.to_pylist()
        for index in indexes:
            out[index] = task
    return out


@pytest.mark.parametrize("column", [
    pa.array([f"w{i % 37}" for i in range(500)]),
    pa.array([i % 41 - 20 for i in range(500)], pa.int64()),
    pa.array([None if i % 7 == 0 else f"k{i % 5}" for i in range(500)]),
    pa.array([(i % 13) / 4 for i in range(500)]),
])
def test_fields_grouping_sends_a_key_where_the_per_tuple_path_does(column: Any) -> None:
    sub = Subscription("count", Grouping.fields("word"), (3, 5, 8))
    chooser = make_chooser(sub, ("word", "n"), random.Random(1))
    batch = pa.RecordBatch.from_arrays([column, pa.array(range(500))], ["word", "n"])
    targets = _targets(BatchRouter(pa, sub, ("word", "n"), chooser), batch)
    values = column.to_pylist()
    assert targets == {i: chooser([values[i], i])[0] for i in range(500)}


def test_fields_on_two_fields_and_partial_key_follow_the_per_tuple_choosers() -> None:
    batch = pa.RecordBatch.from_arrays([pa.array(["a", "b", "a", "c"] * 5),
                                        pa.array([1, 2, 1, 3] * 5)], ["w", "n"])
    sub = Subscription("count", Grouping.fields("w", "n"), (1, 2, 3))
    chooser = make_chooser(sub, ("w", "n"), random.Random(1))
    targets = _targets(BatchRouter(pa, sub, ("w", "n"), chooser), batch)
    rows = list(zip(*(c.to_pylist() for c in batch.columns), strict=True))
    assert targets == {i: chooser(list(row))[0] for i, row in enumerate(rows)}
    partial = Subscription("count", Grouping.partial_key("w"), (1, 2))
    router = BatchRouter(pa, partial, ("w", "n"),
                         make_chooser(partial, ("w", "n"), random.Random(1)))
    assert sorted(_targets(router, batch)) == list(range(20))


@pytest.mark.parametrize(("grouping", "expected"), [
    (Grouping.SHUFFLE, {1: 4, 2: 3, 3: 3}), (Grouping.ALL, {1: 10, 2: 10, 3: 10}),
    (Grouping.GLOBAL, {1: 10}), (Grouping.NONE, {1: 4, 2: 3, 3: 3}),
])
def test_other_groupings_cut_the_batch(grouping: Any, expected: dict[int, int]) -> None:
    sub = Subscription("count", grouping, (1, 2, 3))
    router = BatchRouter(pa, sub, ("w",), None)
    batch = pa.RecordBatch.from_arrays([pa.array(range(10))], ["w"])
    counts = {task: (rows[1] if isinstance(rows, tuple) else len(rows))
              for task, rows in router.split(batch)}
    assert sorted(counts.values()) == sorted(expected.values())
    if grouping in (Grouping.ALL, Grouping.GLOBAL):
        assert counts == expected
    assert router.split(batch.slice(0, 0)) == []


def test_shuffle_turns_the_first_task_from_batch_to_batch() -> None:
    router = BatchRouter(pa, Subscription("c", Grouping.SHUFFLE, (1, 2)), ("w",), None)
    batch = pa.RecordBatch.from_arrays([pa.array([1, 2, 3])], ["w"])
    firsts = [router.split(batch)[0][0] for _ in range(4)]
    assert firsts == [1, 2, 1, 2]


def test_vectorised_run_values_equal_the_python_loop() -> None:
    anchors = lists_anchors(pa, list(range(1, 7)), list(range(11, 17)))
    one = ArrowAnchoring(pa, anchors, 6)
    increasing = pa.array([0, 2, 5], pa.int32())
    one.emit_anchors(pa.array([1, 2, 3], pa.int32()), increasing)
    assert one.run_vals is not None and not one.extra_vals
    two = ArrowAnchoring(pa, anchors, 6)
    two.emit_anchors(pa.array([1, 2, 3], pa.int32()), pa.array([5, 0, 5], pa.int32()))
    assert two.run_vals is None and set(two.extra_vals) == {0, 5}
    assert pc.sum(pc.cast(pc.is_valid(one.run_vals), pa.int8())).as_py() == 6
