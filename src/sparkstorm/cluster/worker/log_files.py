r"""Log files as the UI reads them: tails, byte ranges, substring search.

A worker's own ``worker.log`` (in its folder, written by the supervisor's launcher) and each
executor process's ``executor-<id>.log`` (next to it unless ``topology.executor.log.dir``
says). The worker sends tails through the umbilical for the live view; the supervisor's
logviewer (:mod:`sparkstorm.cluster.supervisor.logviewer`) serves any byte range of them,
searches them and lets them be downloaded, live and after the worker is gone.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "worker.log").write_text("one\ntwo\nthree two\n")
    >>> tail(folder / "worker.log", 12)
    'three two\n'
    >>> tail(folder / "missing.log")
    ''
    >>> read_range(folder / "worker.log", 4, 3)
    {'start': 4, 'length': 3, 'size': 18, 'data': 'two'}
    >>> [m["byteOffset"] for m in search(folder / "worker.log", "two")["matches"]]
    [4, 14]
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from sparkstorm.cluster.nimbus.log_tails import MAX_TAIL_CHARS

WORKER_LOG = "worker.log"
DEFAULT_PAGE_BYTES = 51_200
"""Storm logviewer's default ``length``: a page of 50 KiB."""
MAX_PAGE_BYTES = 1 << 20
"""The longest range one read returns (1 MiB); download a file for all of it."""
MAX_MATCHES = 1000
"""The most matches one search returns (``numMatches`` is capped at this)."""
CONTEXT_CHARS = 120
"""Characters of a matching line kept on each side of the match."""
LOG_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.log(\.\d{1,4})?$")
"""The names of log files served: no path separators, no hidden files."""
_CHUNK = 1 << 16


def tail(path: Path, max_chars: int = MAX_TAIL_CHARS) -> str:
    """The end of the file at ``path``.

    Whole lines, at most ``max_chars`` bytes; "" when the file does not exist.
    """
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(0, size - max_chars)
            handle.seek(start)
            data = handle.read()
    except OSError:
        return ""
    if start:  # drop the cut first line
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    return data.decode("utf-8", errors="replace")


def read_range(path: Path, start: int | None = None,
               length: int | None = None) -> dict[str, Any]:
    """``length`` bytes of the file from byte ``start``, as Storm's logviewer pages a log.

    ``start`` None means the last page (Storm's default); a start past the end is moved
    back to the last page, a negative one to 0. ``length`` is capped at
    :data:`MAX_PAGE_BYTES`. Raises :class:`OSError` when the file cannot be read.
    """
    length = DEFAULT_PAGE_BYTES if length is None or length <= 0 else min(length,
                                                                        MAX_PAGE_BYTES)
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if start is None or start >= size:
            start = max(0, size - length)
        start = max(0, start)
        handle.seek(start)
        data = handle.read(length)
    return {"start": start, "length": len(data), "size": size,
            "data": data.decode("utf-8", errors="replace")}


def search(path: Path, needle: str, *, start: int = 0,
           max_matches: int = 100) -> dict[str, Any]:
    """The lines of the file holding ``needle`` (a plain, case-sensitive substring).

    Each match gives its ``byteOffset`` in the file, its 1-based ``lineNumber`` counted
    from ``start`` and the ``line`` around it (:data:`CONTEXT_CHARS` each side). At most
    ``max_matches`` (capped at :data:`MAX_MATCHES`); ``nextByteOffset`` is where to go on
    when there were more, else None (Storm's ``startByteOffset``).
    """
    wanted = needle.encode()
    if not wanted:
        return {"searchString": needle, "matches": [], "nextByteOffset": None}
    limit = max(1, min(max_matches, MAX_MATCHES))
    matches: list[dict[str, Any]] = []
    offset, number = max(0, start), 0
    with path.open("rb") as handle:
        handle.seek(offset)
        for line in handle:
            number += 1
            found = line.find(wanted)
            while found >= 0:
                if len(matches) == limit:
                    return {"searchString": needle, "matches": matches,
                            "nextByteOffset": offset + found}
                matches.append(_match(line, found, len(wanted), offset, number))
                found = line.find(wanted, found + len(wanted))
            offset += len(line)
    return {"searchString": needle, "matches": matches, "nextByteOffset": None}


def _match(line: bytes, found: int, width: int, offset: int, number: int) -> dict[str, Any]:
    before = line[max(0, found - CONTEXT_CHARS):found].decode("utf-8", errors="replace")
    after = line[found + width:found + width + CONTEXT_CHARS].rstrip(b"\r\n")
    return {"byteOffset": offset + found, "lineNumber": number,
            "beforeString": before, "matchString": line[found:found + width].decode(
                "utf-8", errors="replace"),
            "afterString": after.decode("utf-8", errors="replace")}


def log_files(folder: Path) -> list[dict[str, Any]]:
    """The log files of ``folder`` (not recursive): name, size and modification time."""
    files = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    for entry in entries:
        if LOG_FILE.match(entry.name) and entry.is_file():
            try:
                stat = entry.stat()
            except OSError:
                continue
            files.append({"file": entry.name, "size": stat.st_size,
                          "modifiedSecs": stat.st_mtime})
    return files


def log_sources(folder: Path | None, executor_logs: dict[int, tuple[str, Path]]
                ) -> dict[str, tuple[str, Path]]:
    """Each log's source name (``worker``, ``executor-<id>``), label and path."""
    sources: dict[str, tuple[str, Path]] = {}
    if folder is not None:
        sources["worker"] = ("worker", folder / WORKER_LOG)
    for gid, (component, path) in sorted(executor_logs.items()):
        sources[f"executor-{gid}"] = (f"executor {gid} ({component})", path)
    return sources
