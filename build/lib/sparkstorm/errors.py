"""Root of every error sparkstorm raises.

Every error carries a stable upper-snake ``code``; tests and tools match on the code, never
on the prose, so the prose can improve without breaking anyone.
"""

from __future__ import annotations

from typing import Any


class SparkstormError(Exception):
    """Base class of all sparkstorm errors.

    Args:
        message: what went wrong, where, the value received and how to fix it.
        code: stable UPPER_SNAKE identifier of the condition.
    """

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code

    def __str__(self) -> str:
        return f"[{self.code}] {super().__str__()}"


class TopologyError(SparkstormError, ValueError):
    """An invalid topology declaration, or a component breaking its declared contract."""


class ConfigError(SparkstormError, ValueError):
    """A configuration value of the wrong type or out of range."""


class EngineError(SparkstormError, RuntimeError):
    """The window engine cannot go on (for example an executor process that will not start)."""


ERROR_TEXT_MAX_CHARS = 8000
"""The longest error text that travels (heartbeats, the umbilical, the error store, the UI):
one component raising with a megabyte message must not take its worker's heartbeats down.
As Storm keeps only its last few errors, shortened, the full text stays in the worker's log."""


def shorten_error_text(text: str, limit: int = ERROR_TEXT_MAX_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, keeping its head and its tail.

    A traceback's last lines name the exception; a marker between head and tail says how
    much was cut.

    Example:
        >>> shorten_error_text("x" * 10, limit=100) == "x" * 10
        True
        >>> short = shorten_error_text("a" * 500 + "b" * 500, limit=300)
        >>> len(short) <= 300, short[:3], short[-3:], "characters cut" in short
        (True, 'aaa', 'bbb', True)
    """
    if len(text) <= limit:
        return text
    room = max(limit - 100, 0)  # 100: the marker, whatever its count's digits
    head = room // 4
    tail = room - head
    cut = len(text) - head - tail
    marker = f"\n... [{cut} characters cut; the whole error is in the worker's log] ...\n"
    return text[:head] + marker + (text[-tail:] if tail else "")


def shorten_error(error: dict[str, Any]) -> dict[str, Any]:
    """An error record (``{"component", "error", ...}``) with its text shortened.

    A copy, its ``error`` shortened by :func:`shorten_error_text`; the record itself when
    already short.
    """
    text = error.get("error")
    if not isinstance(text, str) or len(text) <= ERROR_TEXT_MAX_CHARS:
        return error
    return {**error, "error": shorten_error_text(text)}
