"""Rows <-> columns for BatchBolt (sparkstorm.topology.batch_columns), and its class checks."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from sparkstorm import BatchBolt
from sparkstorm.errors import TopologyError
from sparkstorm.topology.batch_columns import (
    as_list,
    columns_to_rows,
    lists_to_record_batch,
    positional_fields,
    rows_to_lists,
)


def test_rows_become_one_list_per_field_in_declared_order() -> None:
    rows = [["a", 1, None], ["b", 2, 2.5]]
    assert rows_to_lists(rows, ("w", "n", "x")) == {"w": ["a", "b"], "n": [1, 2],
                                                    "x": [None, 2.5]}
    assert rows_to_lists([["only"]], ("w",)) == {"w": ["only"]}
    assert rows_to_lists([], ("w", "n")) == {"w": [], "n": []}


def test_streams_without_fields_get_positional_names() -> None:
    assert positional_fields((), 2) == ("_0", "_1")
    assert positional_fields(("a",), 1) == ("a",)


def test_record_batch_has_typed_columns_named_after_the_fields() -> None:
    batch = lists_to_record_batch(pa, {"w": ["a", "b"], "n": [1, 2]}, "split/default")
    assert batch.schema.names == ["w", "n"]
    assert batch.column(0).type == pa.string() and batch.column(1).type == pa.int64()
    assert batch.num_rows == 2


def test_a_column_of_mixed_types_is_a_clear_error() -> None:
    with pytest.raises(TopologyError) as excinfo:
        lists_to_record_batch(pa, {"w": ["a", 1]}, "split/default")
    assert excinfo.value.code == "BATCH_COLUMN_NOT_ARROW"
    assert "'split/default'" in str(excinfo.value) and "batch_format" in str(excinfo.value)


@pytest.mark.parametrize("columns", [
    {"n": [1, 2], "word": ["a", "b"]},
    {"word": ("a", "b"), "n": pa.array([1, 2])},
    pa.RecordBatch.from_pydict({"n": [1, 2], "word": ["a", "b"]}),
    pa.Table.from_batches([pa.RecordBatch.from_pydict({"word": ["a"], "n": [1]}),
                           pa.RecordBatch.from_pydict({"word": ["b"], "n": [2]})]),
], ids=["dict", "dict-of-arrays", "record-batch", "chunked-table"])
def test_columns_become_rows_in_declared_field_order(columns: Any) -> None:
    assert columns_to_rows(columns, ("word", "n"), "count/default") == [["a", 1], ["b", 2]]


def test_one_field_and_no_rows() -> None:
    assert columns_to_rows({"word": ["a", "b"]}, ("word",), "x") == [["a"], ["b"]]
    assert columns_to_rows({"word": []}, ("word",), "x") == []


@pytest.mark.parametrize(("columns", "code"), [
    ({"word": ["a"]}, "BATCH_COLUMNS_MISMATCH"),
    ({"word": ["a"], "n": [1], "extra": [0]}, "BATCH_COLUMNS_MISMATCH"),
    ({"word": ["a", "b"], "n": [1]}, "BATCH_COLUMN_LENGTHS"),
    ([["a", 1]], "BATCH_COLUMNS_TYPE"),
])
def test_bad_columns_are_refused_with_a_code(columns: Any, code: str) -> None:
    with pytest.raises(TopologyError) as excinfo:
        columns_to_rows(columns, ("word", "n"), "count/default")
    assert excinfo.value.code == code
    assert "'count/default'" in str(excinfo.value)


def test_as_list_gives_plain_python_values() -> None:
    assert as_list(pa.chunked_array([[1], [2, 3]])) == [1, 2, 3]
    assert as_list((1, 2)) == [1, 2]


def test_batch_format_is_checked_when_the_class_is_defined() -> None:
    with pytest.raises(TopologyError) as excinfo:
        class Wrong(BatchBolt):
            batch_format = "pandas"
    assert excinfo.value.code == "BATCH_FORMAT_INVALID"


@pytest.mark.parametrize("flag", ["auto_ack", "auto_fail", "auto_anchor"])
def test_turning_off_batch_acking_is_refused(flag: str) -> None:
    with pytest.raises(TopologyError) as excinfo:
        type("Manual", (BatchBolt,), {flag: False})
    assert excinfo.value.code == "BATCH_BOLT_AUTO_DISABLED"
    assert f"{flag} = False" in str(excinfo.value)


def test_emit_batch_outside_a_batch_and_process_are_refused() -> None:
    bolt = BatchBolt()
    with pytest.raises(TopologyError) as excinfo:
        bolt.emit_batch({"word": ["a"]})
    assert excinfo.value.code == "BATCH_EMIT_OUTSIDE_BATCH"
    from sparkstorm import Tuple
    with pytest.raises(TopologyError) as excinfo:
        bolt.process(Tuple(1, "src", "default", 2, ["a"]))
    assert excinfo.value.code == "BATCH_BOLT_PER_TUPLE_HOST"
