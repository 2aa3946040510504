"""Serializing a window's tuple batches, refusing the tuples the wire cannot carry.

A value msgpack cannot encode (a ``set``, a string with a lone surrogate, an integer of 2**64
or more, a list nested too deep) must not take the executor's whole reply down: that lost
every tuple of the window, and the retried window failed the same way, forever. Each
target's batches are encoded in one go as before; only when that raises are its tuples
tried one by one, so the hot path pays nothing. Each tuple that cannot be encoded is left
out, its tree fails with ``TUPLE_VALUE_UNENCODABLE`` (so its spout replays or gives up, as
for any failure) and the emitting component gets an error naming stream, field and type.

Example:
    >>> from sparkstorm.engine.wire.row_wire import unpack_rows
    >>> out = WindowOutput()
    >>> out.batch(3, 30, 10, "default")[3:] = [[["ok"], [{1, 2}]], [7, 8], [5, 6]]
    >>> errors = []
    >>> rows = encode_rows(out, "words", lambda stream: ("word",),
    ...                    lambda task, text: errors.append(text))
    >>> unpack_rows(rows[3])
    [[30, 10, 'default', [['ok']], [7], [5]]]
    >>> out.failed[8].reason[:44]
    "[TUPLE_VALUE_UNENCODABLE] component 'words' "
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sparkstorm.engine.executor.collector import WindowOutput, mark_failed
from sparkstorm.engine.wire.anchor_columns import roots_of
from sparkstorm.engine.wire.failures import FAIL_ERROR
from sparkstorm.engine.wire.frames import pack
from sparkstorm.engine.wire.row_wire import pack_batches
from sparkstorm.errors import TopologyError

UNENCODABLE = (TypeError, ValueError, OverflowError)
"""What msgpack raises for a value it cannot encode (``UnicodeEncodeError`` is a
``ValueError``; too deep a nesting is ``ValueError("recursion limit exceeded")``)."""

Fields = Callable[[str], tuple[str, ...]]
"""The declared fields of the component's stream."""
Report = Callable[[int, str], None]
"""Where an error of an emitting task goes: (task, text)."""


def encode_rows(output: WindowOutput, component: str, fields: Fields,
                report: Report) -> dict[int, bytes]:
    """The batches for each target executor, serialized, without unencodable tuples.

    Args:
        output: the window's output; the trees of refused tuples are failed in it.
        component: the emitting component (for the error).
        fields: the component's declared fields per stream (for the error).
        report: called once per emitting task, stream, field and type with the error text.
    """
    encoded = {}

    def arity(stream: str) -> int:
        return len(fields(stream))
    for gid, batches in output.rows.items():
        try:
            encoded[gid] = pack_batches(batches, arity)
        except UNENCODABLE:
            encoded[gid] = pack_batches(_refuse_unencodable(output, batches, component,
                                                            fields, report), arity)
    return encoded


def _refuse_unencodable(output: WindowOutput, batches: list[list[Any]], component: str,
                        fields: Fields, report: Report) -> list[list[Any]]:
    """``batches`` without their unencodable tuples, whose trees fail in ``output``."""
    refused: dict[tuple[int, str, str, str], list[Any]] = {}
    """(emitting task, stream, field, type) -> [count, message]"""
    for batch in batches:
        task, src, stream, values_list, roots, edges = batch
        kept_values, kept_roots, kept_edges = [], [], []
        for values, root, edge in zip(values_list, roots, edges, strict=True):
            problem = _problem(task, src, stream, values, fields(stream))
            if problem is None:
                kept_values.append(values)
                kept_roots.append(root)
                kept_edges.append(edge)
                continue
            field, kind, exc = problem
            found = refused.get((src, stream, field, kind))
            if found is None:
                found = refused[(src, stream, field, kind)] = [
                    0, _message(component, stream, field, kind, exc)]
            found[0] += 1
            text = found[1]
            mark_failed(output, roots_of(root, edge), FAIL_ERROR, text)
        batch[3:] = kept_values, kept_roots, kept_edges
    for (src, _, _, _), (count, text) in refused.items():
        report(src, f"{text} ({count} tuple{'s' if count != 1 else ''} refused in this "
                    "window)")
    return batches


def _problem(task: int, src: int, stream: str, values: list[Any],
             names: tuple[str, ...]) -> tuple[str, str, Exception] | None:
    """None if the tuple encodes at its depth in a batch, else (field, type, error)."""
    try:
        pack([[task, src, stream, [values], [None], [None]]])
    except UNENCODABLE as exc:
        for index, value in enumerate(values):
            try:
                pack([[task, src, stream, [[value]], [None], [None]]])
            except UNENCODABLE as field_exc:
                name = names[index] if index < len(names) else f"#{index}"
                return name, _kind(value, field_exc), field_exc
        return "(tuple)", type(values).__name__, exc
    return None


def _kind(value: Any, exc: Exception) -> str:
    """The offending value's type, said the way a user would fix it."""
    if isinstance(value, str):
        return "str with characters UTF-8 cannot encode"
    if isinstance(exc, ValueError) and "recursion" in str(exc):
        return f"{type(value).__name__} nested too deep"
    if isinstance(value, int) and not isinstance(value, bool):
        return "int outside the 64-bit range"
    return type(value).__name__


def _message(component: str, stream: str, field: str, kind: str, exc: Exception) -> str:
    msg = (
        f"component {component!r} emitted on stream {stream!r} a tuple whose field "
        f"{field!r} is a {kind}, which the wire cannot encode ({type(exc).__name__}: "
        f"{exc}); the tuple was not sent and its tree failed. Emit only None, bool, int "
        "(64-bit), float, str, bytes, and lists, tuples and dicts of them, nested at most "
        "a few hundred levels (convert a set with sorted() or list())"
    )
    return str(TopologyError(msg, code="TUPLE_VALUE_UNENCODABLE"))


__all__ = ["UNENCODABLE", "encode_rows"]
