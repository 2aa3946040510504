"""Stream groupings: how the tuples of a stream are split among a bolt's tasks.

The meanings are Storm's (``org.apache.storm.grouping`` and ``CustomStreamGrouping``); the
names follow streamparse's DSL so that ``Grouping.fields("word")`` reads the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

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
    def fields(cls, *names: str) -> Grouping:
        """Tuples with equal values in ``names`` go to the same task."""
        return cls("FIELDS", tuple(names))

    @classmethod
    def partial_key(cls, *names: str) -> Grouping:
        """Like ``fields`` but each key may go to one of two tasks, the less loaded one."""
        return cls("PARTIAL_KEY", tuple(names))

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


Grouping.SHUFFLE = Grouping("SHUFFLE")
Grouping.ALL = Grouping("ALL")
Grouping.GLOBAL = Grouping("GLOBAL")
Grouping.NONE = Grouping("NONE")
Grouping.DIRECT = Grouping("DIRECT")
Grouping.LOCAL_OR_SHUFFLE = Grouping("LOCAL_OR_SHUFFLE")
