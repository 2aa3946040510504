"""The tuple a bolt receives."""

from __future__ import annotations

from collections import namedtuple
from functools import lru_cache
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
    ``sparkstorm.engine.anchor_columns``): one tree is ``root`` (an int) with its ``edge``
    (an int); several trees are ``root`` None and ``edge`` a map ``{root: edge}``; an
    untracked tuple has both None. :attr:`anchors` gives them as one map. A bolt may keep
    a tuple and ack it later.

    Example:
        >>> t = Tuple(7, "split", "default", 3, ["storm"], ("word",), {11: 5})
        >>> t.values.word, t.values[0], t.root, t.edge, t.anchors
        ('storm', 'storm', 11, 5, {11: 5})
    """

    __slots__ = ("id", "component", "stream", "task", "_raw", "values", "root", "edge",
                 "ack_val", "done", "received")
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
        self._raw = values
        # the engine passes the namedtuple class itself, looked up once per batch; made
        # here rather than on first read: nearly every bolt reads its values, and a
        # property would cost more than it saves
        cls: Any = values_class(fields) if type(fields) is tuple else fields
        if cls is not None and len(cls._fields) == len(values):
            self.values: Any = tuple.__new__(cls, values)
            """The values, as a namedtuple when field names are known."""
        else:
            self.values = tuple(values)
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
                                 list(self._raw), fields, self.anchors, self.ack_val, self.done))

    def is_tick(self) -> bool:
        """True for the system tick tuple."""
        return is_tick(self.component, self.stream)

    def __repr__(self) -> str:
        return (
            f"Tuple(id={self.id!r}, component={self.component!r}, stream={self.stream!r}, "
            f"task={self.task!r}, values={self._raw!r})"
        )


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
