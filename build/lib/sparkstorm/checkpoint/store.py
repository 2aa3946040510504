"""Where checkpoints live, and how a checkpoint is written, committed and found again.

The folder is ``topology.checkpoint.dir`` (default ``<storm.local.dir>/checkpoints``), any
path or URI fsspec opens (``file://``, ``s3://``, ``hdfs://`` through fsspec's pyarrow
wrapper, ``memory://`` in tests).

Layout, one folder per checkpointed window::

    <dir>/<topology id>/<window, 12 digits>/executor-3        one part per writer
    <dir>/<topology id>/<window, 12 digits>/driver
    <dir>/<topology id>/<window, 12 digits>/_COMMITTED         written last

Each part is written under a temporary name and renamed, and the commit marker, written the
same way once every part is durable, lists each part's size and SHA-256. So a checkpoint is
either complete and verified or ignored: :meth:`CheckpointStore.latest_committed` skips a
folder without a marker (a writer killed mid-way) or whose parts do not match it.

Example:
    >>> store = CheckpointStore("memory://doctest-checkpoints", "wc-1-100")
    >>> info = store.write_part(10, "executor-0", b"tasks")
    >>> store.latest_committed() is None
    True
    >>> store.commit(10, [info]); store.latest_committed()
    10
    >>> store.read_part(10, "executor-0")
    b'tasks'
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sparkstorm.checkpoint.errors import CheckpointError
from sparkstorm.config.access import conf_optional_str, local_dir

logger = logging.getLogger(__name__)

MARKER = "_COMMITTED"
TEMP_INFIX = ".tmp-"


@dataclass(frozen=True)
class PartInfo:
    """One written part: its name, size in bytes and SHA-256 (hex)."""

    name: str
    size: int
    sha256: str


def checkpoint_root(conf: Mapping[str, object]) -> str:
    """``topology.checkpoint.dir``, or ``<storm.local.dir>/checkpoints`` when unset."""
    return conf_optional_str(conf, "topology.checkpoint.dir") or str(
        local_dir(conf) / "checkpoints")


class CheckpointStore:
    """The checkpoints of one topology (see the module docstring).

    Args:
        root: the checkpoint directory (path or URI).
        topology_id: the topology's id; its checkpoints live in a folder of that name.
    """

    def __init__(self, root: str, topology_id: str) -> None:
        from fsspec.core import url_to_fs  # only checkpointing topologies need fsspec

        self.fs, base = url_to_fs(root)
        self.base = f"{base.rstrip('/')}/{topology_id}"
        self.fs.makedirs(self.base, exist_ok=True)

    def _folder(self, window: int) -> str:
        return f"{self.base}/{window:012d}"

    def write_part(self, window: int, name: str, data: bytes | Iterable[bytes]) -> PartInfo:
        """Write one part of checkpoint ``window``.

        The bytes (or chunks, for large states) go under a temporary name, then are renamed
        into place.

        Raises:
            CheckpointError: ``CHECKPOINT_WRITE_FAILED`` when the filesystem refuses.
        """
        folder = self._folder(window)
        final = f"{folder}/{name}"
        temp = f"{final}{TEMP_INFIX}{uuid.uuid4().hex}"
        digest, size = hashlib.sha256(), 0
        try:
            self.fs.makedirs(folder, exist_ok=True)
            with self.fs.open(temp, "wb") as out:
                for chunk in [data] if isinstance(data, bytes | bytearray) else data:
                    out.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
            self.fs.mv(temp, final)
        except OSError as exc:
            msg = (f"cannot write checkpoint part {final!r}: {exc}; check that "
                   "topology.checkpoint.dir is writable and has room")
            raise CheckpointError(msg, code="CHECKPOINT_WRITE_FAILED") from exc
        return PartInfo(name, size, digest.hexdigest())

    def commit(self, window: int, parts: Iterable[PartInfo]) -> None:
        """Mark checkpoint ``window`` complete: every part in ``parts`` is durable.

        Called once, by the driver, after every writer reported its part.
        """
        listing = {part.name: {"size": part.size, "sha256": part.sha256} for part in parts}
        marker = json.dumps({"window": window, "parts": listing}, sort_keys=True).encode()
        self.write_part(window, MARKER, marker)

    def windows(self) -> list[int]:
        """Every window with a checkpoint folder, committed or not, oldest first."""
        found = []
        for path in self.fs.ls(self.base, detail=False):
            name = str(path).rstrip("/").rsplit("/", 1)[-1]
            if name.isdigit():
                found.append(int(name))
        return sorted(found)

    def parts(self, window: int) -> dict[str, Any]:
        """The parts the commit marker of ``window`` lists (empty if it has no marker)."""
        try:
            with self.fs.open(f"{self._folder(window)}/{MARKER}", "rb") as handle:
                marker = json.loads(handle.read())
        except (OSError, ValueError):
            return {}
        parts = marker.get("parts") if isinstance(marker, dict) else None
        return parts if isinstance(parts, dict) else {}

    def is_complete(self, window: int) -> bool:
        """True when ``window`` has a commit marker and every part it lists matches it."""
        if not self.fs.exists(f"{self._folder(window)}/{MARKER}"):
            return False
        for name, expected in self.parts(window).items():
            try:
                data = self.read_part(window, name)
            except CheckpointError:
                return False
            if len(data) != expected.get("size") or \
                    hashlib.sha256(data).hexdigest() != expected.get("sha256"):
                logger.warning("checkpoint %s of window %d: part %s does not match its "
                               "marker; ignoring that checkpoint", self.base, window, name)
                return False
        return True

    def latest_committed(self) -> int | None:
        """The newest complete checkpoint's window, or None; torn ones are skipped."""
        for window in reversed(self.windows()):
            if self.is_complete(window):
                return window
        return None

    def read_part(self, window: int, name: str) -> bytes:
        """One part of checkpoint ``window``.

        Raises:
            CheckpointError: ``CHECKPOINT_PART_MISSING`` when it was never written.
        """
        path = f"{self._folder(window)}/{name}"
        try:
            with self.fs.open(path, "rb") as handle:
                data: bytes = handle.read()
                return data
        except OSError as exc:
            msg = f"checkpoint part {path!r} cannot be read: {exc}"
            raise CheckpointError(msg, code="CHECKPOINT_PART_MISSING") from exc

    def purge_before(self, window: int) -> list[int]:
        """Delete every checkpoint older than the committed ``window``; return their windows.

        Called after ``window`` is committed.
        """
        old = [w for w in self.windows() if w < window]
        for stale in old:
            self.fs.rm(self._folder(stale), recursive=True)
        return old

    def discard_after(self, window: int | None) -> list[int]:
        """Delete the checkpoints newer than ``window`` (all when None).

        After a failure they are torn or uncommitted, and windows after the rollback write
        new ones.
        """
        newer = [w for w in self.windows() if window is None or w > window]
        for torn in newer:
            self.fs.rm(self._folder(torn), recursive=True)
        return newer
