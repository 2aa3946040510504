"""``SqlInsertBolt`` and ``SqlLookupBolt``: storm-jdbc's bolts on SQLAlchemy, per window.

The insert bolt maps each tuple to a row in ``process`` and, at the end of each window,
inserts the window's rows in one transaction (``executemany``); its tuples are acked once it
committed. The lookup bolt runs its query for each tuple of the window on one connection at
the end of the window and emits one tuple per result row (storm-jdbc's ``JdbcLookupBolt``).
Each executor process keeps one SQLAlchemy engine (a connection pool of ``pool_size``
connections, checked before use) per URL, shared by its tasks.

Failures: a database that cannot be reached, or a connection that drops, fails the
window's unsettled tuples with ``SQL_UNAVAILABLE`` (their spouts replay them; the next window
tries again); any other failure of the statement (a missing table, no rights) with
``SQL_STATEMENT_FAILED``. Both are the component's error in the UI. When the database
refuses the batch for its data (a constraint, a value of the wrong type), the rows are
inserted one by one, each in its own transaction, and those refused go to the ``errors``
stream with ``SQL_ROW_REJECTED`` (acked); a tuple that lacks a field, or whose value no
driver binds as a parameter (a dict or a set; a list except on PostgreSQL, where it is an
array), goes there with ``SQL_TUPLE_UNMAPPABLE`` before any statement runs: the driver would
refuse the whole batch for it in a way that looks like a broken statement, which is retried.

Usage::

    from sparkstorm.connectors.sql import SqlInsertBolt, SqlLookupBolt

    url = "postgresql+psycopg://app:secret@db:5432/app"
    save = SqlInsertBolt.spec(inputs=[counts], url=url, table="word_counts",
                              columns=["word", {"total": "count"}])
    find = SqlLookupBolt.spec(inputs=[words], url=url,
                              query="select total from word_counts where word = :word",
                              output_fields=["word", "total"])
"""

from __future__ import annotations

import json
import threading
from typing import Any, ClassVar

from sparkstorm.connectors.sql.settings import SqlSettings
from sparkstorm.connectors.window_batch import (
    ERROR_STREAM,
    ConnectorError,
    WindowBatchBolt,
    error_stream,
    settings_from,
)
from sparkstorm.topology.tuple import Tuple

_engines: dict[tuple[str, int, str], Any] = {}
_engines_lock = threading.Lock()

Row = dict[str, Any]

NEVER_BOUND: tuple[type, ...] = (dict, set, frozenset)
"""Values no DB-API driver binds as a parameter (psycopg: "cannot adapt type 'dict'")."""
ARRAY_DIALECTS = frozenset({"postgresql"})
"""Dialects whose drivers bind a list as an array; elsewhere a list is not bound either."""


def process_engine(settings: SqlSettings) -> Any:
    """The executor process's SQLAlchemy engine (its connection pool) for these settings."""
    from sqlalchemy import create_engine

    key = (settings.url, settings.pool_size, json.dumps(settings.connect_args, sort_keys=True))
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            engine = create_engine(settings.url, pool_size=settings.pool_size, max_overflow=0,
                                   pool_pre_ping=True, connect_args=settings.connect_args)
            _engines[key] = engine
        return engine


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` means the database could not be reached or the connection dropped."""
    from sqlalchemy import exc as sa

    if isinstance(exc, sa.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, sa.OperationalError | sa.InterfaceError | sa.DisconnectionError
                      | sa.TimeoutError)


def data_refused(exc: BaseException) -> bool:
    """Whether the database refused a statement for its values (one row's data)."""
    from sqlalchemy import exc as sa

    return isinstance(exc, sa.IntegrityError | sa.DataError)


class SqlBolt(WindowBatchBolt[Row]):
    """What the two SQL bolts share; see the module docstring."""

    sql_kind: ClassVar[str] = ""
    outputs: ClassVar[list[Any]] = [error_stream()]
    unavailable_code: ClassVar[str] = "SQL_UNAVAILABLE"

    @classmethod
    def read_settings(cls, raw: dict[str, Any]) -> SqlSettings:
        """The settings of docs/connectors.md; ``SQL_CONFIG_INVALID`` when bad."""
        return SqlSettings.read(raw, cls.sql_kind)

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Read the settings; take this process's engine (made on first use)."""
        self.init_batching(type(self).__name__)
        raw = settings_from(storm_conf, self.where, "SQL_CONFIG_INVALID")
        self.settings = SqlSettings.read(raw, self.sql_kind)
        self.engine = process_engine(self.settings)
        self.unbound: tuple[type, ...] = NEVER_BOUND if self.engine.dialect.name in \
            ARRAY_DIALECTS else (*NEVER_BOUND, list, tuple)
        """Value types that go to the errors stream rather than to the driver."""

    def failure_code(self, exc: Exception) -> str:
        """``SQL_UNAVAILABLE`` when the database could not be reached, else the statement's."""
        return "SQL_UNAVAILABLE" if unreachable(exc) else "SQL_STATEMENT_FAILED"

    def describe_failure(self, exc: Exception) -> str:
        """Where the database was expected, and the driver's own words (first line)."""
        where = self.engine.url.render_as_string(hide_password=True)
        first_line = str(getattr(exc, "orig", None) or exc).strip().splitlines()[:1]
        return f"database {where}: {type(exc).__name__}: {' '.join(first_line)}"

    def row_of(self, tup: Tuple, names: dict[str, str]) -> Row:
        """``{parameter: value}`` of ``tup`` for ``names`` (parameter -> field)."""
        field = self.field_reader(tup, "SQL_TUPLE_UNMAPPABLE")
        row = {parameter: field(name) for parameter, name in names.items()}
        for parameter, value in row.items():
            if isinstance(value, self.unbound):
                msg = (f"{self.where}: field {names[parameter]!r} of tuple "
                       f"{list(tup.values)!r} is a {type(value).__name__}, which the "
                       f"{self.engine.dialect.name} driver cannot bind as a parameter; the "
                       f"tuple went to the {ERROR_STREAM!r} stream; encode it upstream "
                       "(json.dumps for a JSON column)")
                raise ConnectorError(msg, code="SQL_TUPLE_UNMAPPABLE")
        return row

    def refused(self, tup: Tuple, exc: BaseException, what: str) -> None:
        """The database refused ``tup``'s data: to the errors stream with ``SQL_ROW_REJECTED``."""
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[:1]
        self.reject(tup, "SQL_ROW_REJECTED",
                    f"{self.where}: the database refused {what} of tuple {list(tup.values)!r} "
                    f"({' '.join(reason)}); it went to the {ERROR_STREAM!r} stream")

    def close(self) -> None:
        """Nothing: the process's engine stays for its other tasks and ends with the process."""

    cleanup = close


class SqlInsertBolt(SqlBolt):
    """Inserts each tuple as a row (storm-jdbc's ``JdbcInsertBolt``), a window per transaction.

    ``table`` and ``columns`` (each column from the tuple field of the same name, or
    ``{column: field}``), or ``query``: an INSERT (or any statement) with ``:field``
    parameters. Emits nothing but its ``errors`` stream.
    """

    sql_kind = "insert"

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Build the statement once."""
        super().initialize(storm_conf, context)
        from sqlalchemy import column, insert, table, text

        s = self.settings
        if s.table is not None:
            schema, _, name = s.table.rpartition(".")
            target = table(name, *(column(c) for c in s.columns), schema=schema or None)
            self.statement: Any = insert(target)
            self.names = dict(s.columns)
        else:
            self.statement = text(s.query or "")
            self.names = {p: p for p in s.parameters}

    def map_tuple(self, tup: Tuple) -> Row:
        """The row of ``tup``."""
        return self.row_of(tup, self.names)

    def flush(self, batch: list[tuple[Tuple, Row]]) -> None:
        """Insert the window's rows in one transaction; row by row if the data is refused."""
        try:
            with self.engine.begin() as conn:
                conn.execute(self.statement, [row for _, row in batch])
        except Exception as exc:
            if not data_refused(exc):
                raise
            self._one_by_one(batch)
            return
        for tup, _ in batch:
            self.ack(tup)

    def _one_by_one(self, batch: list[tuple[Tuple, Row]]) -> None:
        for tup, row in batch:
            try:
                with self.engine.begin() as conn:
                    conn.execute(self.statement, [row])
            except Exception as exc:
                if not data_refused(exc):
                    raise
                self.refused(tup, exc, "the row")
            else:
                self.ack(tup)


class SqlLookupBolt(SqlBolt):
    """Runs ``query`` for each tuple and emits one tuple per result row (``JdbcLookupBolt``).

    Each of ``output_fields`` is the result column of that name, else the input field of that
    name. A query that finds nothing emits nothing; the tuple is acked either way.
    """

    sql_kind = "lookup"

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Build the query once."""
        super().initialize(storm_conf, context)
        from sqlalchemy import text

        self.query = text(self.settings.query or "")
        self.names = {p: p for p in self.settings.parameters}

    def map_tuple(self, tup: Tuple) -> Row:
        """The query parameters of ``tup``."""
        return self.row_of(tup, self.names)

    def flush(self, batch: list[tuple[Tuple, Row]]) -> None:
        """Run the window's queries on one connection (autocommit: one bad value fails one)."""
        with self.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            for tup, params in batch:
                try:
                    rows = conn.execute(self.query, params).mappings().all()
                except Exception as exc:
                    if not data_refused(exc):
                        raise
                    self.refused(tup, exc, "the query parameters")
                    continue
                self._emit_rows(tup, rows)

    def _emit_rows(self, tup: Tuple, rows: list[Any]) -> None:
        field = self.field_reader(tup, "SQL_TUPLE_UNMAPPABLE")
        try:
            out = [[row[name] if name in row else field(name)
                    for name in self.settings.output_fields] for row in rows]
        except ConnectorError as exc:
            self.reject(tup, exc.code, exc.args[0])
            return
        for values in out:
            self.emit(values, anchors=[tup])
        self.ack(tup)
