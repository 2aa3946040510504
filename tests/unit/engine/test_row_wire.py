"""The flat wire form of one-field batches against the nested form it stands in for.

``engine.wire.row_wire`` packs a one-field stream's values as one flat column; every reader must
get exactly what the nested form gave: :func:`unpack_rows` the same batches, the bolt
executor's input loop the same tuples (values, namedtuple class, anchors, acks, fails).
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.engine.executor.input_loop import run_batch
from sparkstorm.engine.wire.frames import pack, unpack
from sparkstorm.engine.wire.row_wire import FLAT, nested, pack_batches, unpack_rows, wire_batches
from sparkstorm.topology.task import BoltRaised
from sparkstorm.topology.tuple import values_class
from tests.unit.engine.test_fast_paths import batch, mixed_loop, outcome

ONE_FIELD_VALUES = ["storm", None, 7, 2**63, -1.5, b"\x00", "", [1, [2]], {"a": 1}, ("t", 1),
                    True]


def arity(stream: str) -> int:
    return {"words": 1, "pairs": 2, "__tick": 1}.get(stream, 0)


def batches() -> list[list[Any]]:
    return [
        [3, 1, "words", [[v] for v in ONE_FIELD_VALUES], list(range(11)), list(range(11))],
        [3, 1, "words", [], [], []],
        [4, 1, "pairs", [["a", 1], ["b", 2]], [None, 5], [None, {5: 1, 6: 2}]],
        [4, 2, "words", [["x"], ["y", "z"]], [1, 1], [2, 3]],  # a row of another length
        [4, -1, "__tick", [[5]], [None], [None]],
        [5, 1, "undeclared", [["q"]], [None], [None]],
    ]


def test_unpack_rows_gives_back_what_the_nested_form_carries() -> None:
    general = unpack(pack(batches()))
    assert unpack_rows(pack_batches(batches(), arity)) == general


def test_only_one_field_batches_with_one_value_per_tuple_go_flat() -> None:
    wire = unpack(pack_batches(batches(), arity))
    assert [len(b) == 7 for b in wire] == [True, False, False, False, True, False]
    assert wire[0][3][:3] == ["storm", None, 7] and wire[0][6] == FLAT
    assert wire[4] == [4, -1, "__tick", [5], [None], [None], FLAT]


def test_wire_batches_leaves_the_output_alone() -> None:
    before = batches()
    after = batches()
    wire_batches(after, arity)
    assert after == before
    assert nested(before[2]) is before[2]


def run_flat_and_nested(words: list[Any], *, auto_ack: bool = True, tick: bool = False
                        ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``Mixed`` (test_fast_paths) over the batch in its flat and its nested wire form."""
    values, roots, edges = batch(words)
    cls = values_class(("sentence",))
    results = []
    for flat in (True, False):
        loop = mixed_loop(auto_ack)
        column = [v for (v,) in values] if flat else values
        try:
            result: Any = run_batch(loop, 5, ("source", "default", 2), column, cls, roots,
                                    edges, tick, flat)
        except BoltRaised as raised:
            result = ("raised", str(raised.cause), raised.processed, raised.auto_acked)
        results.append(outcome(loop, result))
    return results[0], results[1]


@pytest.mark.parametrize("words", [
    ["plain", "emit", "ack", "fail", "keep", "plain", "emit", "plain", "keep", "ack"],
    ["emit", "plain", "boom", "plain"],
    [None, 3, ["a"], {"k": 1}, "plain"],
    [],
])
def test_the_input_loop_makes_the_same_tuples_from_a_flat_column(words: list[Any]) -> None:
    flat, general = run_flat_and_nested(words)
    assert flat == general
    if words:
        assert {seen[5] for seen in flat[1]} == {"Values"}  # namedtuples, by field name


@pytest.mark.parametrize(("auto_ack", "tick"), [(False, False), (True, True)])
def test_the_bolt_loop_gets_the_same_tuples_from_a_flat_column(auto_ack: bool,
                                                                tick: bool) -> None:
    words = ["plain", "ack", "fail", "keep", "plain"]  # no emits: their edges are random
    flat, general = run_flat_and_nested(words, auto_ack=auto_ack, tick=tick)
    assert flat == general
