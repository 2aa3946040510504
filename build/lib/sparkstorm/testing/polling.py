"""Polling instead of sleeping: wait for a condition with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(condition: Callable[[], T], timeout: float = 60.0, interval: float = 0.1,
             message: str = "condition") -> T:
    """Call ``condition`` until it returns something truthy; return that value.

    Raises:
        TimeoutError: ``condition`` stayed falsy for ``timeout`` seconds; the message says
            which condition and its last value.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            msg = f"{message} not met within {timeout} s (last value: {value!r})"
            raise TimeoutError(msg)
        time.sleep(interval)
