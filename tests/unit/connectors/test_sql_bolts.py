"""The SQL bolts' settings, and the bolts on SQLite (in the standard library: no server).

PostgreSQL runs them for real in tests/integration/spark/test_sql_bolts.py.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.connectors.sql import SqlInsertBolt, SqlLookupBolt
from sparkstorm.connectors.sql.settings import SqlSettings, query_parameters
from sparkstorm.connectors.window_batch import ConnectorError
from sparkstorm.errors import TopologyError
from sparkstorm.testing import BoltHarness
from sparkstorm.topology.tuple import Tuple


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "test.db"
    with sqlite3.connect(path) as conn:
        conn.execute("create table words (word text primary key, total integer not null)")
    return path


def rows(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("select word, total from words order by word").fetchall()


def window(harness: BoltHarness, batch: list[list[Any]]) -> None:
    """Deliver ``batch`` as one streaming window: every tuple, then ``end_window`` once."""
    fields = harness.plan.fields_of("src", "default")
    tuples = [Tuple(100 + n, "src", "default", 0, values, fields, {100 + n: 100 + n})
              for n, values in enumerate(batch)]
    harness.loop.run(tuples)
    harness.instance.end_window()


def test_the_insert_bolt_writes_a_window_in_one_transaction(database: Path) -> None:
    spec = SqlInsertBolt.spec(url=f"sqlite:///{database}", table="words",
                              columns=["word", {"total": "n"}])
    harness = BoltHarness(spec, inputs={"src": ["word", "n"]})
    statements: list[str] = []
    from sqlalchemy import event

    event.listen(harness.instance.engine, "before_cursor_execute",
                 lambda *args: statements.append(args[2]))
    with harness._recording() as call:
        window(harness, [["a", 1], ["b", 2], ["c", 3]])
    assert rows(database) == [("a", 1), ("b", 2), ("c", 3)]
    assert len(call.result.acked) == 3 and not call.result.failed
    assert len([s for s in statements if s.lower().startswith("insert")]) == 1


def test_refused_rows_go_to_the_errors_stream_and_the_others_are_written(
        database: Path) -> None:
    spec = SqlInsertBolt.spec(url=f"sqlite:///{database}", table="words",
                              columns=["word", {"total": "n"}])
    harness = BoltHarness(spec, inputs={"src": ["word", "n"]})
    with harness._recording() as call:
        window(harness, [["a", 1], ["b", None], ["c", 3], ["a", 4]])  # NOT NULL, primary key
    assert rows(database) == [("a", 1), ("c", 3)]
    assert len(call.result.acked) == 4 and not call.result.failed
    errors = [e.values for e in call.result.emits if e.stream == "errors"]
    assert [(code, values) for code, _, values in errors] == [
        ("SQL_ROW_REJECTED", ["b", None]), ("SQL_ROW_REJECTED", ["a", 4])]
    assert all(e.anchors for e in call.result.emits)


def test_a_tuple_without_a_field_goes_to_the_errors_stream(database: Path) -> None:
    spec = SqlInsertBolt.spec(url=f"sqlite:///{database}",
                              query="insert into words values (:word, :total)")
    harness = BoltHarness(spec, inputs={"src": ["word", "n"]})
    result = harness.process(["a", 1])
    assert [e.values[0] for e in result.emits] == ["SQL_TUPLE_UNMAPPABLE"]
    assert result.acked and "SQL_TUPLE_UNMAPPABLE" in result.errors[0]
    assert rows(database) == []


def test_a_value_the_driver_cannot_bind_goes_to_the_errors_stream(database: Path) -> None:
    spec = SqlInsertBolt.spec(url=f"sqlite:///{database}", table="words",
                              columns=["word", {"total": "n"}])
    harness = BoltHarness(spec, inputs={"src": ["word", "n"]})
    with harness._recording() as call:  # not replayed as a failed statement would be
        window(harness, [["a", 1], ["b", {"n": 2}], ["c", [3]], ["d", {4}], ["e", 5]])
    assert rows(database) == [("a", 1), ("e", 5)]
    assert len(call.result.acked) == 5 and not call.result.failed
    errors = [e.values for e in call.result.emits if e.stream == "errors"]
    assert [(code, values) for code, _, values in errors] == [
        ("SQL_TUPLE_UNMAPPABLE", ["b", {"n": 2}]), ("SQL_TUPLE_UNMAPPABLE", ["c", [3]]),
        ("SQL_TUPLE_UNMAPPABLE", ["d", {4}])]  # SQLite binds no list; PostgreSQL does


def test_a_missing_table_fails_the_window_so_that_it_is_replayed(tmp_path: Path) -> None:
    spec = SqlInsertBolt.spec(url=f"sqlite:///{tmp_path / 'empty.db'}", table="words",
                              columns=["word"])
    result = BoltHarness(spec, inputs={"src": ["word"]}).process(["a"])
    # SQLite's driver calls a missing table an OperationalError, as it does a lost
    # connection: the code is SQL_UNAVAILABLE here, SQL_STATEMENT_FAILED on PostgreSQL
    # (tests/integration/spark/test_sql_bolts.py); the tuple is failed either way
    assert [f.reason.split(":")[0] for f in result.failed] == ["SQL_UNAVAILABLE"]
    assert "no such table: words" in result.errors[0]


def test_the_lookup_bolt_emits_one_tuple_per_row(database: Path) -> None:
    with sqlite3.connect(database) as conn:
        conn.executemany("insert into words values (?, ?)", [("a", 1), ("b", 2)])
    spec = SqlLookupBolt.spec(url=f"sqlite:///{database}",
                              query="select word as found, total from words where word >= :w",
                              output_fields=["w", "found", "total"])
    harness = BoltHarness(spec, inputs={"src": ["w"]})
    result = harness.process(["a"])
    assert [(e.values, e.anchors) for e in result.emits] == [
        (["a", "a", 1], (result.input,)), (["a", "b", 2], (result.input,))]
    assert result.acked == [result.input]
    nothing = harness.process(["z"])
    assert (nothing.emits, nothing.acked) == ([], [nothing.input])


@pytest.mark.parametrize(("kind", "raw"), [
    ("insert", {"table": "t", "columns": ["a"]}),  # no url
    ("insert", {"url": "sqlite://"}),  # neither table nor query
    ("insert", {"url": "sqlite://", "table": "t"}),  # no columns
    ("insert", {"url": "sqlite://", "table": "t; drop", "columns": ["a"]}),
    ("insert", {"url": "sqlite://", "table": "t", "columns": ["a", "a"]}),
    ("insert", {"url": "sqlite://", "query": "insert", "table": "t", "columns": ["a"]}),
    ("lookup", {"url": "sqlite://", "query": "select 1"}),  # no output_fields
    ("lookup", {"url": "sqlite://", "table": "t", "output_fields": ["a"]}),
    ("insert", {"url": "sqlite://", "table": "t", "columns": ["a"], "pool_size": 0}),
    ("insert", {"url": "localhost/db", "table": "t", "columns": ["a"]}),
])
def test_invalid_settings_are_refused_with_a_code(kind: str, raw: dict[str, Any]) -> None:
    with pytest.raises(TopologyError) as caught:
        SqlSettings.read(raw, kind)
    assert caught.value.code == "SQL_CONFIG_INVALID"


def test_query_parameters_skip_casts() -> None:
    assert query_parameters("select :a::text, x from t where y = :b or z = :a") == ["a", "b"]


def test_under_checkpoint_reliability_a_failed_window_raises_for_a_rollback(
        tmp_path: Path) -> None:
    """There a failed tuple is replayed only by a rollback: the bolt fails its window."""
    spec = SqlInsertBolt.spec(url=f"sqlite:///{tmp_path / 'empty.db'}", table="words",
                              columns=["word"])
    harness = BoltHarness(spec, inputs={"src": ["word"]},
                          conf={"topology.reliability": "checkpoint"})
    with pytest.raises(ConnectorError) as caught:
        harness.process(["a"])
    assert caught.value.code == "SQL_UNAVAILABLE"  # SQLite's name for a missing table
    assert "rolls back to its last committed checkpoint" in str(caught.value)
