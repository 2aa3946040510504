"""Columns for :class:`~sparkstorm.topology.batch_bolt.BatchBolt`: wire rows in, columns out.

The engine carries a window's tuples as batches of rows (``[[v1, v2], ...]``, one list per
tuple, see ``engine.executor.collector.WindowOutput``). A batch bolt reads them as columns, one per
declared field: a transpose done by ``zip`` in C, never a ``Tuple`` per input, then one
``pyarrow.array`` per column when the bolt reads Arrow. What it emits goes the other way.

pyarrow is optional (``pip install sparkstorm[arrow]``): without it batch bolts get lists.

Example:
    >>> rows_to_lists([["a", 1], ["b", 2]], ("word", "n"))
    {'word': ['a', 'b'], 'n': [1, 2]}
    >>> columns_to_rows({"n": [1, 2], "word": ("a", "b")}, ("word", "n"), "split/default")
    [['a', 1], ['b', 2]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkstorm.errors import TopologyError


def load_pyarrow() -> Any:
    """The ``pyarrow`` module (``pyarrow.compute`` loaded), or None when not installed."""
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:
        return None
    return pyarrow


def positional_fields(fields: tuple[str, ...], width: int) -> tuple[str, ...]:
    """``fields``, or ``_0, _1, ...`` for a stream that declares none (system streams)."""
    return fields if fields or not width else tuple(f"_{i}" for i in range(width))


def rows_to_lists(rows: list[list[Any]], fields: tuple[str, ...]) -> dict[str, list[Any]]:
    """One list per field, in declared order, from rows as the wire carries them."""
    if len(fields) == 1:
        return {fields[0]: [row[0] for row in rows]}
    if not rows:
        return {name: [] for name in fields}
    return {name: list(column) for name, column in zip(fields, zip(*rows, strict=True),
                                                       strict=True)}


def lists_to_record_batch(pa: Any, columns: dict[str, list[Any]], where: str) -> Any:
    """A ``pyarrow.RecordBatch`` with one column per entry of ``columns``.

    Args:
        pa: the pyarrow module.
        columns: field name -> values, as :func:`rows_to_lists` makes them.
        where: ``"component/stream"`` of the input, for the error.

    Raises:
        TopologyError: ``BATCH_COLUMN_NOT_ARROW`` when a column's values have no common
            Arrow type (mixed ``int`` and ``str``, say).
    """
    arrays = []
    for name, values in columns.items():
        try:
            arrays.append(pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            msg = (
                f"input {where!r}: field {name!r} cannot become an Arrow column "
                f"({type(exc).__name__}: {exc}); emit values of one type per field on that "
                "stream, or set batch_format = 'lists' on the BatchBolt to get Python lists"
            )
            raise TopologyError(msg, code="BATCH_COLUMN_NOT_ARROW") from exc
    return pa.RecordBatch.from_arrays(arrays, names=list(columns))


def as_list(values: Any) -> list[Any]:
    """A Python list of ``values``: a pyarrow array, a NumPy array or any iterable."""
    if type(values) is list:
        return values
    to_pylist = getattr(values, "to_pylist", None)  # pyarrow Array / ChunkedArray
    if to_pylist is not None:
        return list(to_pylist())
    tolist = getattr(values, "tolist", None)  # NumPy: plain ints, not numpy.int64
    if tolist is not None:
        return list(tolist())
    return list(values)


def columns_to_rows(columns: Any, fields: tuple[str, ...], where: str) -> list[list[Any]]:
    """Rows in ``fields`` order from a RecordBatch, a Table or a mapping of columns.

    Args:
        columns: a ``pyarrow.RecordBatch`` or ``pyarrow.Table``, or a mapping of field
            name to a sequence (list, tuple, pyarrow or NumPy array).
        fields: the declared fields of the stream emitted on.
        where: ``"component/stream"``, for the errors.

    Raises:
        TopologyError: ``BATCH_COLUMNS_TYPE`` for anything else,
            ``BATCH_COLUMNS_MISMATCH`` when the column names are not the declared fields,
            ``BATCH_COLUMN_LENGTHS`` when the columns differ in length.
    """
    lists = [as_list(column) for column in _columns_in_order(columns, fields, where)]
    if not lists:
        return []
    lengths = {len(column) for column in lists}
    if len(lengths) > 1:
        msg = (
            f"emit_batch on {where!r}: columns differ in length "
            f"{dict(zip(fields, map(len, lists), strict=True))}; give every field one value "
            "per emitted tuple"
        )
        raise TopologyError(msg, code="BATCH_COLUMN_LENGTHS")
    if len(lists) == 1:
        return [[value] for value in lists[0]]
    return list(map(list, zip(*lists, strict=True)))


def _columns_in_order(columns: Any, fields: tuple[str, ...], where: str) -> list[Any]:
    if hasattr(columns, "schema") and hasattr(columns, "column"):  # RecordBatch, Table
        names = list(columns.schema.names)
        _check_names(names, fields, where)
        return [columns.column(name) for name in fields]
    if isinstance(columns, Mapping):
        _check_names(list(columns), fields, where)
        return [columns[name] for name in fields]
    msg = (
        f"emit_batch on {where!r} got a {type(columns).__name__}; pass a "
        "pyarrow.RecordBatch, a pyarrow.Table or a dict of field name -> list of values"
    )
    raise TopologyError(msg, code="BATCH_COLUMNS_TYPE")


def _check_names(names: list[str], fields: tuple[str, ...], where: str) -> None:
    if sorted(names) == sorted(fields) and len(set(names)) == len(names):
        return
    missing = [name for name in fields if name not in names]
    extra = [name for name in names if name not in fields]
    msg = (
        f"emit_batch on {where!r}: columns {names!r} do not match the declared fields "
        f"{list(fields)!r} (missing {missing!r}, undeclared {extra!r}); give exactly one "
        "column per declared field (select or rename columns before emitting)"
    )
    raise TopologyError(msg, code="BATCH_COLUMNS_MISMATCH")


__all__ = ["as_list", "columns_to_rows", "lists_to_record_batch", "load_pyarrow",
           "positional_fields", "rows_to_lists"]
