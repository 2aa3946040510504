"""A batch's anchors as two flat columns: Storm's anchor maps without a map per tuple.

A batch, in a window's output and on the wire, is::

    [target_task, source_task, stream, [values, ...], [root, ...], [edge, ...]]

and tuple ``i``'s anchors (Storm's anchor map ``{root: edge}``) are read from the two
parallel columns:

- ``roots[i]`` an int: the tuple belongs to that one tree with edge ``edges[i]`` (an int):
  the common case, two 64-bit integers and no map to make, pack, unpack and walk;
- ``roots[i]`` None and ``edges[i]`` a map ``{root: edge, ...}``: several trees
  (multi-anchoring, a tuple anchored to a whole ``BatchBolt`` batch);
- both None: the tuple is not tracked.

Example:
    >>> batch = batch_of(3, 10, "default", [["a"], ["b"], ["c"]], [{7: 5}, None, {7: 1, 8: 2}])
    >>> batch[ROOTS], batch[EDGES]
    ([7, None, None], [5, None, {7: 1, 8: 2}])
    >>> [anchor_map(r, e) for r, e in zip(batch[ROOTS], batch[EDGES])]
    [{7: 5}, None, {7: 1, 8: 2}]
    >>> sorted(batch_roots(batch))
    [7, 7, 8]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

ROOTS = 4
"""Index of a batch's roots column."""
EDGES = 5
"""Index of a batch's edges column."""

Edge = int | dict[int, int] | None
"""One tuple's entry of the edges column."""


def split_map(anchors: dict[int, int] | None) -> tuple[int | None, Edge]:
    """An anchor map as the (root, edge) pair of the columns."""
    if not anchors:
        return None, None
    if len(anchors) == 1:
        ((root, edge),) = anchors.items()
        return root, edge
    return None, anchors


def anchor_map(root: int | None, edge: Edge) -> dict[int, int] | None:
    """The (root, edge) pair of the columns as an anchor map (None: not tracked)."""
    if root is not None:
        return {root: edge}  # type: ignore[dict-item]
    return edge if edge else None  # type: ignore[return-value]


def roots_of(root: int | None, edge: Edge) -> tuple[int, ...] | dict[int, int]:
    """The trees a tuple belongs to (iterable; empty when it is not tracked)."""
    if root is not None:
        return (root,)
    return edge or ()  # type: ignore[return-value]


def batch_roots(batch: list[Any]) -> Iterator[int]:
    """Every root of every tuple in ``batch`` (repeated as often as tuples share it)."""
    return column_roots(batch[ROOTS], batch[EDGES])


def column_roots(roots: list[int | None], edges: list[Edge]) -> Iterator[int]:
    """Every root in the anchor columns ``roots`` and ``edges``."""
    for root, edge in zip(roots, edges, strict=True):
        if root is not None:
            yield root
        elif edge:
            yield from edge  # type: ignore[misc]


def batch_of(task: int, src: int, stream: str, values: list[Any],
             anchor_maps: list[dict[int, int] | None]) -> list[Any]:
    """A batch from one anchor map (or None) per tuple: for ticks, tests and tools."""
    roots, edges = [], []
    for anchors in anchor_maps:
        root, edge = split_map(anchors)
        roots.append(root)
        edges.append(edge)
    return [task, src, stream, values, roots, edges]


__all__ = ["EDGES", "ROOTS", "Edge", "anchor_map", "batch_of", "batch_roots", "column_roots",
           "roots_of", "split_map"]
