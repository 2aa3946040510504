"""The file spout's lock files: one reader per file across tasks, and where it got to.

A task reading ``data.txt`` holds ``<lock_dir>/data.txt.lock``, a small JSON document with
its owner (``<topology>:<component>:<task>``), the position up to which every line was acked
(or, with checkpoints, covered by a committed checkpoint) and a heartbeat time. It is made
with an exclusive create where the filesystem has one (local disks, HDFS); another task
takes a lock over when its heartbeat is older than the lock timeout (its reader died), and
the same task started again takes its own lock back at once; either resumes at the lock's
position. On an object store without exclusive create two tasks may, rarely, take the same
file: give the spout one task there.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Lock:
    """What a lock file says."""

    owner: str
    position: int
    heartbeat: float


def read_lock(fs: Any, path: str) -> Lock | None:
    """The lock at ``path``; None when it is missing or unreadable (a half-written one)."""
    try:
        with fs.open(path, "rb") as handle:
            raw = json.loads(handle.read().decode("utf-8"))
        return Lock(str(raw["owner"]), int(raw["position"]), float(raw["heartbeat"]))
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        return None


def write_lock(fs: Any, path: str, owner: str, position: int, *, exclusive: bool = False
               ) -> bool:
    """Write the lock; with ``exclusive``, only when it does not exist yet (False then)."""
    data = json.dumps({"owner": owner, "position": position,
                       "heartbeat": time.time()}).encode("utf-8")
    if exclusive:
        try:
            with fs.open(path, "xb") as handle:
                handle.write(data)
        except FileExistsError:
            return False
        except ValueError:  # a filesystem without exclusive create: check, then write
            if fs.exists(path):
                return False
        else:
            return True
    with fs.open(path, "wb") as handle:
        handle.write(data)
    return True


def acquire(fs: Any, path: str, owner: str, timeout_s: float) -> int | None:
    """Take the lock at ``path`` for ``owner``: the position to resume at, or None.

    A new lock starts at 0; ``owner``'s own lock, or one whose heartbeat is older than
    ``timeout_s``, is taken over at its position.
    """
    if write_lock(fs, path, owner, 0, exclusive=True):
        return 0
    held = read_lock(fs, path)
    if held is None:
        return None  # being written by its owner this instant: try again later
    if held.owner != owner and time.time() - held.heartbeat < timeout_s:
        return None
    write_lock(fs, path, owner, held.position)
    return held.position


def release(fs: Any, path: str) -> None:
    """Delete the lock (gone already is fine)."""
    with contextlib.suppress(FileNotFoundError):
        fs.rm(path)
