"""Nimbus's and supervisors' own log files, for the logviewer.

Each daemon also writes its log records to ``<storm.local.dir>/logs/<daemon>.log``
(``nimbus.log``, ``supervisor.log``, as Storm's ``storm.log.dir``) at the daemon's
log level (warnings; everything from INFO up with ``sparkstorm -v``), rotated at
:data:`MAX_BYTES` with :data:`BACKUPS` older files. The supervisor's file takes the records of
its own loggers (``sparkstorm.cluster.supervisor``); Nimbus's the rest, so that
``sparkstorm cluster``, which runs both in one process, writes each line once.

Example:
    >>> import logging, tempfile
    >>> conf = {"storm.local.dir": tempfile.mkdtemp()}
    >>> handler = attach(conf, "supervisor")
    >>> logging.getLogger("sparkstorm.cluster.supervisor.x").warning("hello")
    >>> detach(handler)
    >>> "hello" in daemon_log_path(conf, "supervisor").read_text()
    True
"""

from __future__ import annotations

import logging
import logging.handlers
from collections.abc import Mapping
from pathlib import Path

from sparkstorm.config import local_dir

DAEMONS = ("nimbus", "supervisor")
MAX_BYTES = 64 << 20
BACKUPS = 2
SUPERVISOR_LOGGER = "sparkstorm.cluster.supervisor"
_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"


def daemon_log_path(conf: Mapping[str, object], daemon: str) -> Path:
    """Where ``daemon`` (``nimbus`` or ``supervisor``) writes its log."""
    return local_dir(conf) / "logs" / f"{daemon}.log"


class _NotSupervisor(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(SUPERVISOR_LOGGER)


def attach(conf: Mapping[str, object], daemon: str) -> logging.Handler:
    """Start writing ``daemon``'s records to its file; :func:`detach` stops it."""
    path = daemon_log_path(conf, daemon)
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES,
                                                   backupCount=BACKUPS, encoding="utf-8")
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.setLevel(logging.INFO)
    if daemon == "supervisor":
        target = logging.getLogger(SUPERVISOR_LOGGER)
    else:
        target = logging.getLogger()
        handler.addFilter(_NotSupervisor())
    target.addHandler(handler)
    handler.name = f"sparkstorm-daemon-{daemon}"
    return handler


def detach(handler: logging.Handler) -> None:
    """Stop writing to a file :func:`attach` opened, and close it."""
    for name in (None, SUPERVISOR_LOGGER):
        logging.getLogger(name).removeHandler(handler)
    handler.close()
