"""The settings of the SQL bolts (storm-jdbc's ``JdbcInsertBolt`` and ``JdbcLookupBolt``).

Example:
    >>> s = SqlSettings.read({"url": "sqlite://", "table": "words",
    ...                       "columns": ["word", {"total": "count"}]}, "insert")
    >>> s.columns
    {'word': 'word', 'total': 'count'}
    >>> SqlSettings.read({"url": "sqlite://", "query": "select n from t where k = :key",
    ...                   "output_fields": ["key", "n"]}, "lookup").parameters
    ['key']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from sparkstorm.connectors.settings_check import SettingsReader

KINDS = {"insert": "SqlInsertBolt", "lookup": "SqlLookupBolt"}
SETTINGS = ("url", "table", "columns", "query", "output_fields", "pool_size", "connect_args")
_PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
"""A ``:name`` bind parameter of a query (not ``::type`` casts)."""
_TABLE = re.compile(r"^[A-Za-z_][\w$]*(\.[A-Za-z_][\w$]*)?$")


def query_parameters(query: str) -> list[str]:
    """The ``:name`` parameters of ``query``, each once, in order."""
    return list(dict.fromkeys(_PARAMETER.findall(query)))


@dataclass(frozen=True)
class SqlSettings:
    """One SQL bolt's settings, checked (see docs/connectors.md for each one)."""

    kind: str
    url: str
    table: str | None
    columns: dict[str, str]
    """column -> the tuple field it takes."""
    query: str | None
    output_fields: list[str]
    pool_size: int
    connect_args: dict[str, Any] = field(default_factory=dict)

    @property
    def parameters(self) -> list[str]:
        """The query's parameters: the tuple fields it reads."""
        return query_parameters(self.query or "")

    @classmethod
    def read(cls, raw: Mapping[str, Any], kind: str) -> SqlSettings:
        """Check ``raw`` for a bolt of ``kind`` (insert or lookup).

        Raises:
            TopologyError: ``SQL_CONFIG_INVALID`` naming the setting and how to fix it.
        """
        reader = SettingsReader(raw, SETTINGS, KINDS[kind], "SQL_CONFIG_INVALID")
        url = reader.text("url", required=True)
        assert url is not None
        if "://" not in url:
            reader.invalid(f"url must be a SQLAlchemy URL such as "
                           f"postgresql+psycopg://user:password@host:5432/db, got {url!r}")
        table, query = reader.text("table"), reader.text("query")
        columns = _columns(reader, raw.get("columns"))
        outputs = reader.names("output_fields", None) or []
        if kind == "insert":
            if (table is None) == (query is None):
                reader.invalid("give table= and columns= (Storm's tableName and column "
                               "schema), or query= (an INSERT with :field parameters), not "
                               "both")
            if table is not None and not columns:
                reader.invalid("table= needs columns=: the columns to fill, each from the "
                               "tuple field of the same name (or {column: field})")
            if table is not None and not _TABLE.match(table):
                reader.invalid(f"table must be a name or schema.name, got {table!r}")
            if query is not None and columns:
                reader.invalid("columns= goes with table=; a query names its fields as "
                               ":field parameters")
            if outputs:
                reader.invalid("output_fields: the insert bolt emits nothing but its errors "
                               "stream")
        else:
            if query is None or table is not None or columns:
                reader.invalid("give query= (a SELECT with :field parameters) and "
                               "output_fields=; table= and columns= are the insert bolt's")
            if not outputs:
                reader.invalid("output_fields= is required: each is a column of the query's "
                               "result, else the input field of that name")
        pool_size = reader.whole("pool_size", 2, 1)
        assert pool_size is not None
        connect_args = raw.get("connect_args") or {}
        if not isinstance(connect_args, Mapping):
            reader.invalid(f"connect_args must be a mapping of the driver's connect() "
                           f"arguments, got {connect_args!r}")
        return cls(kind, url, table, columns, query, outputs, pool_size, dict(connect_args))

    def to_dict(self) -> dict[str, Any]:
        """The settings as the component config keeps them."""
        return {k: v for k, v in asdict(self).items()
                if k != "kind" and v is not None and v not in ([], {})}


def _columns(reader: SettingsReader, value: Any) -> dict[str, str]:
    """``columns`` as column -> field: names, ``{column: field}`` items, or one mapping."""
    if value is None:
        return {}
    items = list(value.items()) if isinstance(value, Mapping) else None
    if items is None and isinstance(value, list):
        items = []
        for item in value:
            if isinstance(item, str):
                items.append((item, item))
            elif isinstance(item, Mapping):
                items.extend(item.items())
            else:
                items = None
                break
    if not items or not all(isinstance(c, str) and c and isinstance(f, str) and f
                            for c, f in items):
        reader.invalid(f"columns must be a list of column names (each filled from the field "
                       f"of the same name), with {{column: field}} items where they differ, "
                       f"got {value!r}")
    columns = dict(items)
    if len(columns) != len(items):
        reader.invalid(f"columns names a column twice: {value!r}")
    return columns
