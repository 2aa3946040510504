"""Worker logs kept after their worker is gone, until Storm's logviewer limits remove them.

When a supervisor stops a worker for good (its topology was killed, or the worker moved away),
it removes the worker's folder, but first moves its log files (``worker.log`` and the
executors' ``executor-<id>.log``) and its record ``worker.json`` to
``<supervisor dir>/workers-artifacts/<worker id>/`` (Storm's folder name). Its logviewer
serves them from there as from a live worker's folder.

Kept folders go when they are older than ``logviewer.cleanup.age.mins`` (by their newest
file's modification time, as Storm's logviewer cleans up), and within a kept folder the
oldest files go first while it holds more than ``logviewer.max.per.worker.logs.size.mb``.
Then, as Storm's ``logviewer.max.sum.worker.logs.size.mb``, the oldest kept files of any
folder go while all the host's worker logs, live and kept, hold more than that (a folder
left without logs goes too). A live worker's files count but are never removed: its
process holds them open. The supervisor checks every ``logviewer.cleanup.interval.secs``.

Example:
    >>> import tempfile, pathlib, os
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> worker = root / "workers" / "w1"; worker.mkdir(parents=True)
    >>> _ = (worker / "worker.log").write_text("started")
    >>> _ = (worker / "worker.json").write_text('{"topology_id": "t-1"}')
    >>> _ = (worker / "heartbeat.json").write_text("{}")
    >>> kept = keep_logs(worker, root / "workers-artifacts")
    >>> sorted(p.name for p in kept.iterdir())
    ['worker.json', 'worker.log']
    >>> os.utime(kept / "worker.log", (0, 0)); os.utime(kept / "worker.json", (0, 0))
    >>> [p.name for p in clean_up(root / "workers-artifacts", max_age_secs=60, max_bytes=10)]
    ['w1']
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path

from sparkstorm.cluster.worker.log_files import LOG_FILE

logger = logging.getLogger(__name__)

ARTIFACTS = "workers-artifacts"
"""The folder, in the supervisor's, of the logs kept from workers that are gone."""
RECORD = "worker.json"


def keep_logs(folder: Path, artifacts: Path) -> Path | None:
    """Move a gone worker's log files and record from ``folder`` into ``artifacts``.

    Returns the kept folder (``artifacts/<worker id>``), None when there was nothing to keep.
    A worker id kept before (the same worker stopped twice) gets its files added, a file of
    the same name renamed with the time.
    """
    try:
        logs = [p for p in folder.iterdir() if LOG_FILE.match(p.name) and p.is_file()]
    except OSError:
        return None
    if not logs:
        return None
    kept = artifacts / folder.name
    kept.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for path in [*logs, folder / RECORD]:
        target = kept / path.name
        if target.exists() and path.name != RECORD:
            target = kept / f"{path.stem}-{stamp}{path.suffix}"
        try:
            shutil.move(str(path), target)
        except OSError as exc:
            logger.warning("cannot keep %s: %s", path, exc)
    return kept


def topology_of(folder: Path) -> str | None:
    """The topology id in a worker folder's record, None when it has none."""
    try:
        record = json.loads((folder / RECORD).read_text())
        return str(record["topology_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def log_bytes(workers: Path) -> int:
    """The bytes of the log files in the worker folders under ``workers`` (live workers')."""
    total = 0
    try:
        folders = [p for p in workers.iterdir() if p.is_dir()]
    except OSError:
        return 0
    for folder in folders:
        total += sum(size for _, _, size in _logs(folder))
    return total


def _logs(folder: Path) -> list[tuple[float, Path, int]]:
    """The log files of ``folder``: (modified, path, size), oldest first."""
    found = []
    try:
        paths = [p for p in folder.iterdir() if LOG_FILE.match(p.name)]
    except OSError:
        return []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((stat.st_mtime, path, stat.st_size))
    return sorted(found)


def clean_up(artifacts: Path, *, max_age_secs: float, max_bytes: float,
             max_total_bytes: float = float("inf"), live_bytes: int = 0,
             now: float | None = None) -> list[Path]:
    """Apply the retention limits to the kept folders; return the folders removed whole.

    ``max_total_bytes`` caps the kept logs together with ``live_bytes``, the live workers'
    (which count but are not removed).
    """
    now = time.time() if now is None else now
    removed = []
    try:
        folders = sorted(p for p in artifacts.iterdir() if p.is_dir())
    except OSError:
        return []
    for folder in folders:
        files = [p for p in folder.iterdir() if p.is_file()]
        newest = max((p.stat().st_mtime for p in files), default=folder.stat().st_mtime)
        if now - newest > max_age_secs:
            shutil.rmtree(folder, ignore_errors=True)
            logger.info("removed the kept logs %s (older than logviewer.cleanup.age.mins)",
                        folder)
            removed.append(folder)
            continue
        logs = sorted((p for p in files if LOG_FILE.match(p.name)),
                      key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in logs)
        while logs and total > max_bytes:
            oldest = logs.pop(0)
            total -= oldest.stat().st_size
            oldest.unlink(missing_ok=True)
            logger.info("removed %s (logviewer.max.per.worker.logs.size.mb)", oldest)
    return removed + _cap_total(artifacts, max_total_bytes, live_bytes)


def _cap_total(artifacts: Path, max_total_bytes: float, live_bytes: int) -> list[Path]:
    """Remove the oldest kept logs of any folder while all logs hold over the cap.

    Returns the folders this left without logs, removed whole.
    """
    folders = [p for p in sorted(artifacts.iterdir()) if p.is_dir()]
    kept = sorted(entry for folder in folders for entry in _logs(folder))
    total = live_bytes + sum(size for _, _, size in kept)
    emptied = set()
    for _, path, size in kept:
        if total <= max_total_bytes:
            break
        path.unlink(missing_ok=True)
        total -= size
        emptied.add(path.parent)
        logger.info("removed %s (logviewer.max.sum.worker.logs.size.mb)", path)
    gone = [folder for folder in sorted(emptied) if not _logs(folder)]
    for folder in gone:
        shutil.rmtree(folder, ignore_errors=True)
    return gone
