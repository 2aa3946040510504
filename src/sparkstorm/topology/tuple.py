"""The tuple a bolt receives."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator
from functools import lru_cache
from itertools import count, repeat
from typing import Any

TICK_STREAM = "__tick"
SYSTEM_COMPONENT = "__system"
HEARTBEAT_STREAM = "__heartbeat"


def is_tick(component: str, stream: str) -> bool:
    """True for the system tick stream (``__system``'s ``__tick``).

    Bolts handle it in ``process_tick``.
    """
    return stream == TICK_STREAM and component == SYSTEM_COMPONENT


@lru_cache(maxsize=1024)
def values_class(fields: tuple[str, ...]) -> Any:
    """The namedtuple class of a stream's values (None for a stream without fields)."""
    if not fields:
        return None
    return namedtuple("Values", fields, rename=True)


class Tuple:
    """One delivered tuple: ``id``, ``component``, ``stream``, ``task`` and ``values``.

    ``values`` is a sequence that is also readable by field name when the source stream
    declares fields (``tup.values.word``), as pystorm's tuples are. The engine keeps the
    tuple's anchors in the slots ``root`` and ``edge``, as a batch carries them (see
    ``sparkstorm.engine.wire.anchor_columns``): one tree is ``root`` (an int) with its ``edge``
    (an int); several trees are ``root`` None and ``edge`` a map ``{root: edge}``; an
    untracked tuple has both None. :attr:`anchors` gives them as one map. A bolt may keep
    a tuple and ack it later.

    Example:
        >>> t = Tuple(7, "split", "default", 3, ["storm"], ("word",), {11: 5})
        >>> t.values.word, t.values[0], t.root, t.edge, t.anchors
        ('storm', 'storm', 11, 5, {11: 5})
    """

    __slots__ = ("id", "component", "stream", "task", "values", "root", "edge", "ack_val",
                 "done", "received")
    received: float
    """perf_counter seconds of receipt, set by the engine only for bolts that ack
    themselves, whose process latency runs from receipt to a later ack (unset otherwise)."""

    def __init__(
        self,
        id: Any,  # noqa: A002 - Storm's and pystorm's name
        component: str,
        stream: str,
        task: int,
        values: list[Any],
        fields: tuple[str, ...] | Any = (),
        anchors: dict[int, int] | int | None = None,
        edge: int | dict[int, int] | None = None,
    ) -> None:
        """Make a tuple; ``anchors`` is an anchor map, or the root that goes with ``edge``.

        The engine passes the root and edge of a batch's anchor columns: an int root with
        an int edge, or None with a map of several roots.
        """
        self.id = id
        self.component = component
        self.stream = stream
        self.task = task
        # the engine passes the namedtuple class itself, looked up once per batch; made
        # here rather than on first read: nearly every bolt reads its values, and a
        # property would cost more than it saves
        cls: Any = values_class(fields) if type(fields) is tuple else fields
        self.values: Any = _values(cls, values)
        """The values, as a namedtuple when field names are known."""
        if edge is None and anchors is not None:  # an anchor map, from a caller
            anchors, edge = _split_map(anchors)  # type: ignore[arg-type]
        self.root: int | None = anchors  # type: ignore[assignment]
        self.edge = edge
        self.ack_val = 0
        self.done = False

    @property
    def anchors(self) -> dict[int, int] | None:
        """The tuple's anchor map ``{root: edge}`` (None when it is not tracked)."""
        if self.root is not None:
            return {self.root: self.edge}  # type: ignore[dict-item]
        return self.edge or None  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # issue 11: tuples kept by a component (a windowed bolt's windows) are task state
        # and must pickle for checkpoints; the namedtuple class is rebuilt from its fields,
        # and ``received`` (a perf_counter reading of this process) is left out
        fields = tuple(getattr(type(self.values), "_fields", ()))
        return (_rebuild_tuple, (self.id, self.component, self.stream, self.task,
                                 list(self.values), fields, self.anchors, self.ack_val,
                                 self.done))

    def is_tick(self) -> bool:
        """True for the system tick tuple."""
        return is_tick(self.component, self.stream)

    def __repr__(self) -> str:
        return (
            f"Tuple(id={self.id!r}, component={self.component!r}, stream={self.stream!r}, "
            f"task={self.task!r}, values={list(self.values)!r})"
        )


def delivered(first_id: int, component: str, stream: str, task: int,
              values_list: list[list[Any]], values_cls: Any, roots: list[Any],
              edges: list[Any]) -> Iterator[Tuple]:
    """The engine's tuples of one input batch, made as they are taken (ids from ``first_id``).

    The same tuples as ``Tuple(id, component, stream, task, values, values_cls, root,
    edge)`` for each row of the batch's columns, made without a call per tuple: the
    namedtuples in one ``map`` when every row has the stream's arity (emits are checked
    for it), the rest as plain stores into an empty instance.
    """
    new = object.__new__
    for tup_id, values, root, edge in zip(count(first_id), values_of(values_cls, values_list),
                                          roots, edges):
        tup = new(Tuple)
        tup.id = tup_id
        tup.component = component
        tup.stream = stream
        tup.task = task
        tup.values = values
        tup.root = root
        tup.edge = edge
        tup.ack_val = 0
        tup.done = False
        yield tup


def values_of(values_cls: Any, values_list: list[list[Any]]) -> Iterator[Any]:
    """Each row of ``values_list`` as a ``values_cls`` namedtuple (if its arity fits).

    Made in one C ``map`` when every row has the stream's arity; a row that does not fit
    becomes a plain tuple.
    """
    if values_cls is not None and values_list and len(values_list[0]) == len(
            values_cls._fields) and len(set(map(len, values_list))) == 1:
        return map(tuple.__new__, repeat(values_cls), values_list)
    return (_values(values_cls, values) for values in values_list)


def _values(values_cls: Any, values: list[Any]) -> Any:
    """``values`` as a ``values_cls`` namedtuple when the arity fits, else a plain tuple."""
    if values_cls is not None and len(values_cls._fields) == len(values):
        return tuple.__new__(values_cls, values)
    return tuple(values)


def _split_map(anchors: dict[int, int]) -> tuple[int | None, int | dict[int, int] | None]:
    """An anchor map as (root, edge): one tree as two ints, several as (None, map)."""
    if not anchors:
        return None, None
    if len(anchors) == 1:
        ((root, edge),) = anchors.items()
        return root, edge
    return None, anchors


def _rebuild_tuple(id: Any, component: str, stream: str, task: int,  # noqa: A002
                   values: list[Any], fields: tuple[str, ...], anchors: dict[int, int] | None,
                   ack_val: int, done: bool) -> Tuple:
    """Unpickle a :class:`Tuple` (see ``Tuple.__reduce__``)."""
    tup = Tuple(id, component, stream, task, values, fields, anchors)
    tup.ack_val, tup.done = ack_val, done
    return tup
