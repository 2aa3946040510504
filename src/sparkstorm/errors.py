"""Root of every error sparkstorm raises.

Every error carries a stable upper-snake ``code``; tests and tools match on the code, never
on the prose, so the prose can improve without breaking anyone.
"""

from __future__ import annotations


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
