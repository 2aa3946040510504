"""Output stream declarations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DEFAULT_STREAM = "default"


@dataclass(frozen=True)
class Stream:
    """A declared output stream: its field names, its id and whether it is direct.

    Example:
        >>> Stream(fields=["word", "count"], name="totals").fields
        ('word', 'count')
    """

    fields: tuple[str, ...] = ()
    name: str = DEFAULT_STREAM
    direct: bool = False

    def __init__(
        self, fields: Any = (), name: str = DEFAULT_STREAM, direct: bool = False
    ) -> None:
        object.__setattr__(self, "fields", tuple(fields))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "direct", bool(direct))

    def to_dict(self) -> dict[str, Any]:
        """The stream as the JSON spec shows it."""
        return {"fields": list(self.fields), "name": self.name, "direct": self.direct}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stream:
        """Inverse of :meth:`to_dict`."""
        return cls(data["fields"], data.get("name", DEFAULT_STREAM), data.get("direct", False))


def normalize_outputs(outputs: Any) -> tuple[Stream, ...]:
    """Turn a component's ``outputs`` (field names and ``Stream`` objects) into streams.

    Plain strings are the fields of the default stream, as in streamparse:
    ``outputs = ["word", Stream(["a"], name="other")]`` declares ``default: [word]`` and
    ``other: [a]``.
    """
    default_fields = [item for item in outputs or () if isinstance(item, str)]
    streams = [item for item in outputs or () if isinstance(item, Stream)]
    if default_fields:
        streams.insert(0, Stream(default_fields))
    return tuple(streams)
