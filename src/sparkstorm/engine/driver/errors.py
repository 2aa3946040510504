"""The components' errors the driver keeps: each component's last, and a queue to report.

A cluster worker takes the queue with every heartbeat and sends it to Nimbus; the UI and
``sparkstorm run``'s table show each component's last error.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from sparkstorm.engine.wire.messages import ComponentError, WindowMeta
from sparkstorm.errors import shorten_error

logger = logging.getLogger(__name__)

QUEUED_ERRORS = 1000
"""Errors queued for a reporter at most (a component that fails every tuple must not grow
the queue without end)."""


class ErrorReports:
    """The errors of one topology's components (see the module docstring).

    Args:
        name: the topology's name, for the log.
        last_errors: component -> its last error, kept here (the statistics' own dict).
    """

    def __init__(self, name: str, last_errors: dict[str, Any]) -> None:
        self.name = name
        self.last_errors = last_errors
        self.queued: deque[dict[str, Any]] = deque(maxlen=QUEUED_ERRORS)
        """Errors not yet taken by a reporter, oldest first, as ``ComponentError.to_wire()``
        dicts."""

    def add(self, error: ComponentError) -> None:
        """Keep ``error`` as its component's last and queue it for whoever reports errors."""
        reported = shorten_error(error.to_wire())  # a megabyte message must not ride beats
        self.last_errors[error.component] = reported
        self.queued.append(reported)

    def startup(self, error: ComponentError) -> None:
        """An executor failed in ``initialize``: reported now, not when a window ends."""
        logger.error("topology %s component %s failed to start:\n%s", self.name,
                     error.component, error.error)
        self.add(error)

    def of_window(self, metas: list[WindowMeta]) -> None:
        """The errors the executors reported with a window."""
        for meta in metas:
            for error in meta.errors:
                self.add(error)
                logger.error("topology %s component %s task %s failed:\n%s", self.name,
                             error.component, error.task, error.error)


__all__ = ["QUEUED_ERRORS", "ErrorReports"]
