"""Checks of a connector's settings dict, shared by the Redis and SQL bolts."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from sparkstorm.errors import TopologyError


class SettingsReader:
    """Reads and checks one connector bolt's settings; every problem raises ``code``.

    Args:
        raw: the settings as given (``spec(...)`` keywords or a Flux bolt's config).
        allowed: the names a setting may have.
        who: the bolt for messages, e.g. ``"RedisStoreBolt"``.
        code: the error code of an invalid setting (``REDIS_CONFIG_INVALID``...).
    """

    def __init__(self, raw: Mapping[str, Any], allowed: tuple[str, ...], who: str,
                 code: str) -> None:
        self.raw, self.who, self.code = dict(raw), who, code
        for name in self.raw:
            if name not in allowed:
                near = difflib.get_close_matches(str(name), allowed, n=1)
                hint = f"did you mean {near[0]!r}? " if near else ""
                self.invalid(f"{name!r} is not one of its settings; {hint}"
                             f"the settings are {list(allowed)}")

    def invalid(self, problem: str) -> NoReturn:
        """Raise the settings' error with ``problem``."""
        msg = f"{self.who}: {problem}"
        raise TopologyError(msg, code=self.code)

    def text(self, name: str, default: str | None = None, *, required: bool = False
             ) -> str | None:
        """A non-empty string setting (None when unset and not required)."""
        value = self.raw.get(name, default)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            self.invalid(f"{name} must be a non-empty string, got {value!r}")
        return value

    def whole(self, name: str, default: int | None, minimum: int) -> int | None:
        """An integer setting of at least ``minimum`` (None when unset and ``default`` is)."""
        value = self.raw.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.invalid(f"{name} must be an integer >= {minimum}, got {value!r}")
        return value

    def names(self, name: str, default: list[str] | None) -> list[str] | None:
        """A list of field or column names (None when unset and ``default`` is)."""
        value = self.raw.get(name, default)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not value or not all(
                isinstance(v, str) and v for v in value):
            self.invalid(f"{name} must be a non-empty list of names, got {value!r}")
        if len(set(value)) != len(value):
            self.invalid(f"{name} names a field twice: {list(value)}")
        return list(value)

    def choice(self, name: str, choices: Mapping[str, str], *, required: bool = True,
               normalize: Callable[[str], str] = str.lower) -> str:
        """One of ``choices``' keys (after ``normalize``), as its value."""
        value = self.raw.get(name)
        if value is None and required:
            self.invalid(f"{name} is required; one of {sorted(set(choices.values()))}")
        key = normalize(value) if isinstance(value, str) else None
        if key is None or key not in choices:
            self.invalid(f"{name} must be one of {sorted(set(choices.values()))}, got {value!r}")
        return choices[key]
