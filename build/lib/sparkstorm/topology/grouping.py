"""Stream groupings: how the tuples of a stream are split among a bolt's tasks.

The meanings are Storm's (``org.apache.storm.grouping`` and ``CustomStreamGrouping``); the
names follow streamparse's DSL so that ``Grouping.fields("word")`` reads the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sparkstorm.errors import TopologyError

GROUPING_TYPES = (
    "SHUFFLE",
    "FIELDS",
    "ALL",
    "GLOBAL",
    "NONE",
    "DIRECT",
    "LOCAL_OR_SHUFFLE",
    "PARTIAL_KEY",
)


@dataclass(frozen=True)
class Grouping:
    """A grouping, as a value: ``type`` is one of :data:`GROUPING_TYPES`.

    ``field_names`` is set for ``FIELDS`` and ``PARTIAL_KEY`` only.

    Example:
        >>> Grouping.fields("word")
        Grouping(type='FIELDS', field_names=('word',))
        >>> Grouping.SHUFFLE.type
        'SHUFFLE'
    """

    type: str
    field_names: tuple[str, ...] = ()

    SHUFFLE: ClassVar[Grouping]
    ALL: ClassVar[Grouping]
    GLOBAL: ClassVar[Grouping]
    NONE: ClassVar[Grouping]
    DIRECT: ClassVar[Grouping]
    LOCAL_OR_SHUFFLE: ClassVar[Grouping]

    @classmethod
    def fields(cls, *names: Any) -> Grouping:
        """Tuples with equal values in ``names`` go to the same task.

        As in streamparse, the names may also come as one list: ``fields(["a", "b"])``.

        Example:
            >>> Grouping.fields(["user", "day"]) == Grouping.fields("user", "day")
            True
        """
        return cls("FIELDS", _field_names("fields", names))

    @classmethod
    def partial_key(cls, *names: Any) -> Grouping:
        """Like ``fields`` but each key may go to one of two tasks, the less loaded one."""
        return cls("PARTIAL_KEY", _field_names("partial_key", names))

    def to_dict(self) -> dict[str, Any]:
        """The grouping as the multilang context and the JSON spec show it."""
        out: dict[str, Any] = {"type": self.type}
        if self.type in ("FIELDS", "PARTIAL_KEY"):
            out["fields"] = list(self.field_names)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grouping:
        """Inverse of :meth:`to_dict`."""
        return cls(str(data["type"]), tuple(data.get("fields", ())))


def _field_names(kind: str, names: tuple[Any, ...]) -> tuple[str, ...]:
    """``names``, or the items of a single list or tuple given instead.

    Raises:
        TopologyError: ``INVALID_GROUPING`` when a name is not a string.
    """
    if len(names) == 1 and isinstance(names[0], list | tuple):
        names = tuple(names[0])
    for name in names:
        if not isinstance(name, str):
            msg = (f"Grouping.{kind}(...): field names must be strings, got {name!r} "
                   f"({type(name).__name__}); write Grouping.{kind}('a', 'b') or "
                   f"Grouping.{kind}(['a', 'b'])")
            raise TopologyError(msg, code="INVALID_GROUPING")
    return tuple(names)


Grouping.SHUFFLE = Grouping("SHUFFLE")
Grouping.ALL = Grouping("ALL")
Grouping.GLOBAL = Grouping("GLOBAL")
Grouping.NONE = Grouping("NONE")
Grouping.DIRECT = Grouping("DIRECT")
Grouping.LOCAL_OR_SHUFFLE = Grouping("LOCAL_OR_SHUFFLE")
