"""fsspec helpers: a folder URL to a filesystem, durable flushes, moves that tolerate repeats.

Local disks, HDFS (``hdfs://`` through pyarrow) and object stores (``s3://``, ``gs://``) are
reached the same way. ``sync`` flushes a file and, where the file has an OS descriptor (a
local or mounted disk), fsyncs it; an object store's file is durable only once closed.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path inside it."""
    from fsspec.core import url_to_fs

    fs, path = url_to_fs(url)
    return fs, str(path)


def sync(handle: Any) -> None:
    """Flush ``handle`` and fsync it when it has a file descriptor."""
    handle.flush()
    fileno = getattr(handle, "fileno", None)
    if fileno is None:
        return
    with contextlib.suppress(OSError, ValueError, NotImplementedError, AttributeError):
        os.fsync(fileno())


def move(fs: Any, source: str, target: str) -> bool:
    """Move ``source`` to ``target``; False when ``source`` is gone (moved before)."""
    try:
        fs.mv(source, target)
    except FileNotFoundError:
        return False
    return True


def names(fs: Any, folder: str, *, missing_ok: bool = True) -> list[str]:
    """The file names in ``folder`` (not sub-folders), sorted; none when it is missing.

    Raises:
        FileNotFoundError: ``folder`` is missing and not ``missing_ok``.
    """
    try:
        entries = fs.ls(folder, detail=True)
    except FileNotFoundError:
        if not missing_ok:
            raise
        return []
    return sorted(str(e["name"]).rstrip("/").rsplit("/", 1)[-1] for e in entries
                  if e.get("type") == "file")
