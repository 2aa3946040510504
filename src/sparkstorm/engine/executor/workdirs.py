"""The driver's and the executor hosts' folders for executor sockets and plans.

Each is ``<tmp>/sparkstorm-<pid>-<random>``, removed by its process when it stops; a folder
whose process is gone (a SIGKILLed driver cannot clean up) is removed by the next one made.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

WORKDIR_PREFIX = "sparkstorm-"
"""Driver folders (executor sockets, plan) are ``<tmp>/sparkstorm-<pid>-<random>``: short,
because Unix socket paths are limited to about 100 bytes."""


def remove_stale_workdirs() -> None:
    """Remove driver folders whose process is gone (a SIGKILLed driver cannot clean up)."""
    for path in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*-*"):
        pid = path.name[len(WORKDIR_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def workdirs_of(pid: int) -> list[Path]:
    """The folders process ``pid`` made with :func:`new_workdir` (gone or not)."""
    return list(Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}{pid}-*"))


def new_workdir() -> Path:
    """A new folder for this process, after removing the stale ones of processes gone."""
    remove_stale_workdirs()
    return Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))


__all__ = ["WORKDIR_PREFIX", "new_workdir", "remove_stale_workdirs", "workdirs_of"]
