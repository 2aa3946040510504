"""Log handlers for the multilang ``log`` command (Storm's ``ShellLogHandler``).

Pluggable with ``topology.multilang.log.handler`` since Storm 1.2.

A handler is a class named ``module:Class`` with a no-argument constructor and two methods:
``setup(component, pid, conf, context)``, called once the child's PID is known, and
``log(level, text)`` with a :mod:`logging` level, called for every ``log`` message.

Example:
    >>> handler = load_log_handler({}, where="bolt 'split' task 3")
    >>> type(handler).__name__
    'DefaultShellLogHandler'
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from sparkstorm.config import conf_optional_str
from sparkstorm.errors import SparkstormError
from sparkstorm.multilang.errors import MultilangError
from sparkstorm.topology.spec import load_class

LOG_HANDLER_KEY = "topology.multilang.log.handler"


class ShellLogHandler(Protocol):
    """What a multilang log handler offers."""

    def setup(self, component: str, pid: Any, conf: dict[str, Any],
              context: dict[str, Any]) -> None:
        """Called once, when the child's PID is known."""

    def log(self, level: int, text: str) -> None:
        """Handle one ``log`` message at ``level``, a :mod:`logging` level."""


class DefaultShellLogHandler:
    """Storm's default: ``ShellLog pid:<pid>, name:<component> <text>`` at the message's level.

    On the logger ``sparkstorm.multilang.shell.<component>``.
    """

    def __init__(self) -> None:
        self.logger = logging.getLogger("sparkstorm.multilang.shell")
        self.component = "?"
        self.pid: Any = None

    def setup(self, component: str, pid: Any, conf: dict[str, Any],
              context: dict[str, Any]) -> None:
        """Log on the component's own logger, naming the child's PID."""
        self.logger = logging.getLogger(f"sparkstorm.multilang.shell.{component}")
        self.component, self.pid = component, pid

    def log(self, level: int, text: str) -> None:
        """Log ``text`` as Storm's ``ShellLog`` line."""
        self.logger.log(level, "ShellLog pid:%s, name:%s %s", self.pid, self.component, text)


def load_log_handler(conf: dict[str, Any], *, where: str) -> ShellLogHandler:
    """The handler ``topology.multilang.log.handler`` names (the default when unset).

    Raises:
        MultilangError: ``MULTILANG_LOG_HANDLER_INVALID`` when the class cannot be imported
            or built, or lacks ``setup`` or ``log``.
    """
    path = conf_optional_str(conf, LOG_HANDLER_KEY)
    if not path:
        return DefaultShellLogHandler()
    try:
        handler = load_class(path, component=where)()
    except (SparkstormError, TypeError) as exc:
        msg = (f"{where}: {LOG_HANDLER_KEY} {path!r} cannot be used ({exc}); name a class "
               "as 'module:Class' whose no-argument constructor works")
        raise MultilangError(msg, code="MULTILANG_LOG_HANDLER_INVALID") from exc
    missing = [m for m in ("setup", "log") if not callable(getattr(handler, m, None))]
    if missing:
        msg = (f"{where}: {LOG_HANDLER_KEY} {path!r} has no {' or '.join(missing)}(); a "
               "handler needs setup(component, pid, conf, context) and log(level, text)")
        raise MultilangError(msg, code="MULTILANG_LOG_HANDLER_INVALID")
    return handler  # type: ignore[no-any-return]
