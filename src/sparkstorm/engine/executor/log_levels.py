"""Runtime log control of a worker and its executor processes.

Storm's dynamic log levels (``/api/v1/topology/:id/logconfig``) and debug sampling
(``/debug/enable/<pct>``: a share of a component's tuples written to its log).

Example:
    >>> import logging
    >>> levels = LogLevels()
    >>> levels.apply({"sparkstorm.component.count": "DEBUG"})
    >>> logging.getLogger("sparkstorm.component.count").level == logging.DEBUG
    True
    >>> levels.apply({})  # no longer asked for: back to the level it had
    >>> logging.getLogger("sparkstorm.component.count").level == logging.NOTSET
    True
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable
from typing import Any

STORM_LEVELS = {"ALL": logging.NOTSET, "TRACE": logging.DEBUG, "DEBUG": logging.DEBUG,
                "INFO": logging.INFO, "WARN": logging.WARNING, "WARNING": logging.WARNING,
                "ERROR": logging.ERROR, "FATAL": logging.CRITICAL,
                "CRITICAL": logging.CRITICAL, "OFF": logging.CRITICAL + 10}
"""Storm's (log4j's) level names and Python's, as Python levels."""


class LogLevels:
    """Sets named loggers to the levels asked for.

    Loggers no longer asked for get back the level they had before.
    """

    def __init__(self) -> None:
        self._original: dict[str, int] = {}

    def apply(self, levels: dict[str, str]) -> None:
        """Make ``levels`` (logger name -> Storm or Python level name) the loggers' levels.

        "" or ``ROOT`` names the root logger; unknown level names are skipped.
        """
        wanted = {name: STORM_LEVELS[str(level).upper()] for name, level in levels.items()
                  if str(level).upper() in STORM_LEVELS}
        for name in [n for n in self._original if n not in wanted]:
            _logger(name).setLevel(self._original.pop(name))
        for name, level in wanted.items():
            logger = _logger(name)
            self._original.setdefault(name, logger.level)
            logger.setLevel(level)


def _logger(name: str) -> logging.Logger:
    return logging.getLogger(None if name in ("", "ROOT") else name)


def log_sampled(logger: logging.Logger, pct: float, what: str,
                rows: Iterable[tuple[str, list[Any]]]) -> int:
    """Write about ``pct`` percent of the tuples of ``rows`` to ``logger``.

    ``rows`` are (stream, values list) pairs. Returns how many were written.
    """
    if pct <= 0:
        return 0
    share, written = min(pct, 100.0) / 100.0, 0
    for stream, values_list in rows:
        for values in values_list:
            if random.random() < share:
                logger.info("sampled %s tuple on stream %s: %r", what, stream, values)
                written += 1
    return written
