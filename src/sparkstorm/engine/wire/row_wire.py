"""A window's row batches on the wire: a one-field stream's values as one flat column.

In an executor's output a batch's values column holds one list per tuple (see
``engine.executor.collector.WindowOutput``); on a stream that declares one field that is a list of
one-element lists, ``[["the"], ["cow"], ...]``, and msgpack spends as much on packing and
unpacking those little lists as on the rest of the batch (a word count's split packs each
word 3 times slower as ``["the"]`` than as ``"the"``, and its count unpacks it 1.8 times
slower). So such a batch travels with its values flat and a seventh element saying so::

    [target_task, source_task, stream, ["the", "cow"], [root, ...], [edge, ...], 1]

Everything else travels as before, six elements (tick rows, batches of several fields,
batches a sender could not prove one-field). The receiving bolt executor makes its tuples'
values straight from the flat column (``engine.executor.input_loop``); every other reader gets the
batches back in the output's form from :func:`unpack_rows`.

Example:
    >>> blob = pack(wire_batches([[3, 1, "default", [["the"], ["cow"]], [7, 7], [1, 2]],
    ...                           [3, 1, "pairs", [["a", 1]], [None], [None]]],
    ...                          lambda stream: 1 if stream == "default" else 2))
    >>> unpack(blob)[0]
    [3, 1, 'default', ['the', 'cow'], [7, 7], [1, 2], 1]
    >>> unpack_rows(blob)[0]
    [3, 1, 'default', [['the'], ['cow']], [7, 7], [1, 2]]
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any

from sparkstorm.engine.wire.batch_columns import EDGES, ROOTS, SOURCE, STREAM, TARGET, VALUES
from sparkstorm.engine.wire.frames import pack, unpack

FLAT = 1
"""A wire batch's seventh element: its values column holds each tuple's one value."""
_FLAT_LENGTH = 7


def wire_batches(batches: list[list[Any]], arity: Callable[[str], int]) -> list[list[Any]]:
    """``batches`` (an output's, for one target executor) as they go on the wire.

    Args:
        batches: the batches, six elements each (not changed).
        arity: the number of fields the emitting component declares for a stream.
    """
    wire: list[list[Any]] = []
    for batch in batches:
        wire.append(_flat(batch) if batch[VALUES] and arity(batch[STREAM]) == 1 else batch)
    return wire


def _flat(batch: list[Any]) -> list[Any]:
    """A one-field stream's batch with its values flat, if every tuple has one value."""
    try:
        # every tuple of a stream has its arity (emits check it); the unpacking checks it
        # again for nothing (a flat column cannot carry a tuple of another length)
        values = [value for (value,) in batch[VALUES]]
    except (TypeError, ValueError):
        return batch
    return [batch[TARGET], batch[SOURCE], batch[STREAM], values, batch[ROOTS], batch[EDGES], FLAT]


def pack_batches(batches: list[list[Any]], arity: Callable[[str], int]) -> bytes:
    """``batches`` packed in their wire form (see :func:`wire_batches`)."""
    return pack(wire_batches(batches, arity))


def unpack_rows(blob: bytes) -> list[list[Any]]:
    """A blob's batches in the output's form (six elements, a list of values per tuple)."""
    return [nested(batch) for batch in unpack(blob)]


def nested(batch: list[Any]) -> list[Any]:
    """A wire batch in the output's form (a flat one's values each made a list again)."""
    if len(batch) != _FLAT_LENGTH:
        return batch
    return [*batch[:3], [[value] for value in batch[VALUES]], batch[ROOTS], batch[EDGES]]


def flat_values(values_cls: Any, values: list[Any]) -> Any:
    """The tuple values of a flat column, as ``topology.tuple.values_of`` makes them.

    A ``values_cls`` namedtuple for each when the stream has one field (always, for a flat
    batch), else a plain one-element tuple.
    """
    if values_cls is not None and len(values_cls._fields) == 1:
        return map(tuple.__new__, repeat(values_cls), zip(values))
    return zip(values)


__all__ = ["FLAT", "flat_values", "nested", "pack_batches", "unpack_rows", "wire_batches"]
