"""The layout of a row batch: ``[target task, source task, stream, values, roots, edges]``.

A list rather than a class: msgpack carries it as it is (``engine.wire.row_encoding``), and
emits append to its three columns once per tuple. The anchor columns (``roots``, ``edges``)
are described in ``engine.wire.anchor_columns``; a one-field stream's batch may travel with a
flat values column (``engine.wire.row_wire``).

Example:
    >>> batch = [7, 2, "default", [["a"], ["b"]], [11, 11], [5, 6]]
    >>> batch[TARGET], batch[STREAM], len(batch[VALUES])
    (7, 'default', 2)
"""

TARGET, SOURCE, STREAM, VALUES, ROOTS, EDGES = range(6)
"""Positions in a batch: the target task, the emitting task, the stream, then the columns."""

__all__ = ["EDGES", "ROOTS", "SOURCE", "STREAM", "TARGET", "VALUES"]
