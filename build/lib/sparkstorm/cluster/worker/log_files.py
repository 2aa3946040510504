r"""The logs a worker can show in the UI's live log viewer.

Its own ``worker.log`` (in its folder, written by the supervisor's launcher) and each
executor process's log.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "worker.log").write_text("one\ntwo\n")
    >>> tail(folder / "worker.log", 5)
    'two\n'
    >>> tail(folder / "missing.log")
    ''
"""

from __future__ import annotations

import os
from pathlib import Path

from sparkstorm.cluster.nimbus.log_tails import MAX_TAIL_CHARS

WORKER_LOG = "worker.log"


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


def log_sources(folder: Path | None, executor_logs: dict[int, tuple[str, Path]]
                ) -> dict[str, tuple[str, Path]]:
    """Each log's source name (``worker``, ``executor-<id>``), label and path."""
    sources: dict[str, tuple[str, Path]] = {}
    if folder is not None:
        sources["worker"] = ("worker", folder / WORKER_LOG)
    for gid, (component, path) in sorted(executor_logs.items()):
        sources[f"executor-{gid}"] = (f"executor {gid} ({component})", path)
    return sources
