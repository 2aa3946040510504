"""Terminal tables of REST API rows, for ``stats``, ``slot_usage`` and ``worker_uptime``.

Example:
    >>> text = render(table("Spouts", [{"spoutId": "word", "emitted": 1200}],
    ...                     [("spoutId", "id"), ("emitted", "emitted")]))
    >>> [line.rstrip() for line in text.splitlines()][::2]
    ['Spouts', '┃ id   ┃ emitted ┃', '│ word │    1200 │']
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.table import Table


def cell(value: object) -> str:
    """A value as shown: ``-`` for none, numbers as they are."""
    if value is None or value == "":
        return "-"
    return str(value)


def _number(value: object) -> bool:
    """Whether ``value`` reads as a number (the REST API sends latencies as text)."""
    if isinstance(value, bool) or value is None:
        return value is None
    try:
        float(str(value))
    except ValueError:
        return False
    return True


def table(title: str, rows: Iterable[Mapping[str, Any]],
          columns: list[tuple[str, str]]) -> Table:
    """A table of ``rows`` with ``columns`` (key, header); numbers are right-aligned."""
    rows = list(rows)
    result = Table(title=title, title_justify="left")
    for key, header in columns:
        numeric = bool(rows) and all(_number(r.get(key)) for r in rows)
        result.add_column(header, justify="right" if numeric else "left")
    for row in rows:
        result.add_row(*(cell(row.get(key)) for key, _ in columns))
    return result


def render(*tables: Table, width: int = 200) -> str:
    """The tables as text (for tests and pipes: no colours, a fixed width)."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False)
    for item in tables:
        console.print(item)
    return out.getvalue()


def printer() -> Console:
    """The console the commands print to: wide enough for the tables in a pipe too."""
    return Console(width=max(Console().width, 160), highlight=False)
