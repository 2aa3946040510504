"""The SQL bolts against a real PostgreSQL server, one task in this process (BoltHarness).

A window's rows in one transaction; lookups with one tuple per row; refused rows and
unmappable tuples on the errors stream; a statement that cannot run fails the window
(SQL_STATEMENT_FAILED); a stopped server fails it (SQL_UNAVAILABLE) and the bolt carries on,
on fresh connections, once the server is back. The bolts in a running topology:
tests/integration/spark/test_connector_outages.py.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from sparkstorm.connectors.sql import SqlInsertBolt, SqlLookupBolt
from sparkstorm.testing import BoltHarness
from sparkstorm.testing.harness import Result
from sparkstorm.topology.tuple import Tuple
from tests.integration.postgresql.server import PostgresServer

pytestmark = pytest.mark.timeout(90)
_tables = itertools.count(1)


@pytest.fixture
def table(postgres: PostgresServer) -> str:
    """A new table ``(word text primary key, total int not null, seen timestamptz)``."""
    name = f"words_{next(_tables)}"
    postgres.execute(f"create table {name} (word text primary key, total int not null, "
                     "seen timestamptz default now())")
    return name


def window(harness: BoltHarness, batch: list[list[Any]]) -> Result:
    """Deliver ``batch`` as one streaming window: every tuple, then ``end_window`` once."""
    fields = harness.plan.fields_of("src", "default")
    tuples = [Tuple(100 + n, "src", "default", 0, values, fields, {100 + n: 100 + n})
              for n, values in enumerate(batch)]
    with harness._recording() as call:
        harness.loop.run(tuples)
        harness.instance.end_window()
    return call.result


def inserter(postgres: PostgresServer, table: str) -> BoltHarness:
    return BoltHarness(SqlInsertBolt.spec(url=postgres.url, table=table,
                                          columns=["word", {"total": "n"}]),
                       inputs={"src": ["word", "n"]})


def test_a_window_is_inserted_and_looked_up(postgres: PostgresServer, table: str) -> None:
    result = window(inserter(postgres, table), [["a", 1], ["b", 2], ["c", 3]])
    assert (len(result.acked), result.failed, result.emits) == (3, [], [])
    assert postgres.execute(f"select word, total from {table} order by word") == [
        ("a", 1), ("b", 2), ("c", 3)]
    lookup = BoltHarness(SqlLookupBolt.spec(
        url=postgres.url, query=f"select word, total from {table} where word = any(:words) "
                                "order by word", output_fields=["id", "word", "total"]),
        inputs={"src": ["id", "words"]})
    found = window(lookup, [[1, ["a", "c"]], [2, ["zz"]]])
    assert [e.values for e in found.emits] == [[1, "a", 1], [1, "c", 3]]
    assert len(found.acked) == 2


def test_refused_rows_and_unmappable_tuples_go_to_the_errors_stream(
        postgres: PostgresServer, table: str) -> None:
    harness = inserter(postgres, table)
    window(harness, [["a", 1]])
    result = window(harness, [["a", 2], ["b", "two"], ["c", 3], ["d"], ["e", None],
                              ["f", {"n": 6}]])
    errors = [(e.stream, e.values[0], e.values[2]) for e in result.emits]
    assert errors == [("errors", "SQL_TUPLE_UNMAPPABLE", ["d"]),
                      # psycopg cannot adapt a dict: bad data, not a failed statement
                      ("errors", "SQL_TUPLE_UNMAPPABLE", ["f", {"n": 6}]),
                      ("errors", "SQL_ROW_REJECTED", ["a", 2]),  # primary key
                      ("errors", "SQL_ROW_REJECTED", ["b", "two"]),  # not an integer
                      ("errors", "SQL_ROW_REJECTED", ["e", None])]  # not null
    assert len(result.acked) == 6 and not result.failed
    assert postgres.execute(f"select word, total from {table} order by word") == [
        ("a", 1), ("c", 3)]
    lookup = BoltHarness(SqlLookupBolt.spec(
        url=postgres.url, query=f"select total from {table} where total = :n",
        output_fields=["n", "total"]), inputs={"src": ["n"]})
    refused = window(lookup, [["x"], [3]])
    assert [(e.stream, e.values[0]) for e in refused.emits] == [
        ("errors", "SQL_ROW_REJECTED"), ("default", 3)]


def test_a_statement_that_cannot_run_fails_the_window(postgres: PostgresServer) -> None:
    result = window(inserter(postgres, "no_such_table"), [["a", 1], ["b", 2]])
    assert [f.reason.split(":")[0] for f in result.failed] == ["SQL_STATEMENT_FAILED"] * 2
    assert 'relation "no_such_table" does not exist' in result.errors[0]


def test_a_stopped_server_fails_the_window_and_the_bolt_carries_on(
        postgres: PostgresServer, table: str) -> None:
    harness = inserter(postgres, table)
    assert window(harness, [["a", 1]]).acked  # a pooled connection now exists
    postgres.stop()
    try:
        down = window(harness, [["b", 2], ["c", 3]])
    finally:
        postgres.start()
    assert [f.reason.split(":")[0] for f in down.failed] == ["SQL_UNAVAILABLE"] * 2
    assert "SQL_UNAVAILABLE" in down.errors[0]
    assert len(window(harness, [["b", 2], ["c", 3]]).acked) == 2
    assert postgres.execute(f"select word from {table} order by word") == [("a",), ("b",),
                                                                           ("c",)]
