"""Errors of the multi-language (shell component) host and runtime.

Every error names the component and task, what was received (truncated) and how to fix it.
Tests match on ``code``; the table below is sorted and unique (checked by a unit test).
"""

from __future__ import annotations

from sparkstorm.errors import SparkstormError

#: Every code a :class:`MultilangError` may carry, sorted.
CODES: tuple[str, ...] = (
    "MULTILANG_HANDSHAKE_FAILED",
    "MULTILANG_HANDSHAKE_TIMEOUT",
    "MULTILANG_HEARTBEAT_TIMEOUT",
    "MULTILANG_INVALID_CONFIG",
    "MULTILANG_LOG_HANDLER_INVALID",
    "MULTILANG_MALFORMED_MESSAGE",
    "MULTILANG_NON_FINITE_NUMBER",
    "MULTILANG_SPAWN_FAILED",
    "MULTILANG_SUBPROCESS_EXITED",
    "MULTILANG_SYNC_TIMEOUT",
    "MULTILANG_UNDECLARED_STREAM",
    "MULTILANG_UNENCODABLE_VALUE",
    "MULTILANG_UNEXPECTED_COMMAND",
    "MULTILANG_UNKNOWN_TUPLE_ID",
)


class MultilangError(SparkstormError, RuntimeError):
    """A shell component broke the protocol, died, hung, or cannot be started.

    The host kills the subprocess before raising it; the executor then fails the in-flight
    tuples, reports the error as the component's last error and restarts the task.
    """

    def __init__(self, message: str, *, code: str) -> None:
        if code not in CODES:  # a typo here would silently break tests matching on codes
            msg = f"unknown multilang error code {code!r}"
            raise ValueError(msg)
        super().__init__(message, code=code)


def excerpt(data: bytes | str, limit: int = 200) -> str:
    """``data`` shortened to ``limit`` characters for an error message, as a repr."""
    text = data if isinstance(data, str) else data.decode("utf-8", errors="backslashreplace")
    if len(text) > limit:
        return f"{text[:limit]!r}... ({len(text)} characters)"
    return repr(text)
