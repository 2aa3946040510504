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
folder without a marker (a writer killed mid-way) or whose parts do not match it, and
:meth:`CheckpointStore.read_part` checks a part against the marker before it returns the
bytes (a part is a pickle: unpickling bytes someone else wrote runs their code).

The newest ``keep`` committed checkpoints are kept (``topology.checkpoint.keep``), so one
that turns out corrupt falls back to the one before; :meth:`CheckpointStore.restore_point`
refuses (``CHECKPOINT_UNUSABLE``) when committed checkpoints exist but none is usable,
rather than letting the topology start again from empty state.

On a local filesystem the folders are made 0700 and the files 0600: a part is a pickle and
may hold the components' secrets. (Other filesystems keep their own permissions: give the
bucket or HDFS folder to the topology's user alone.)

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

import contextlib
import hashlib
import json
import logging
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sparkstorm.checkpoint.errors import CheckpointError
from sparkstorm.config.access import conf_optional_str, local_dir

logger = logging.getLogger(__name__)

MARKER = "_COMMITTED"
TEMP_INFIX = ".tmp-"
FOLDER_MODE = 0o700
FILE_MODE = 0o600


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
        self.local = "file" in _protocols(self.fs)
        """Whether the folder is on a local (or mounted) filesystem: modes are set there."""
        root_folder = base.rstrip("/") or "/"
        self.base = f"{root_folder.rstrip('/')}/{topology_id}"
        if self.local:
            _private_folder(root_folder, chmod=False)  # made 0700; an existing one is kept
            _private_folder(self.base)
        else:
            self.fs.makedirs(self.base, exist_ok=True)

    def _folder(self, window: int) -> str:
        return f"{self.base}/{window:012d}"

    def _makedirs(self, folder: str) -> None:
        if self.local:
            _private_folder(folder)
        else:
            self.fs.makedirs(folder, exist_ok=True)

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
            self._makedirs(folder)
            with self._create(temp) as out:
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

    def _create(self, path: str) -> Any:
        """A new file open for writing; 0600 from its creation on a local filesystem."""
        if not self.local:
            return self.fs.open(path, "wb")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        os.fchmod(fd, FILE_MODE)  # the umask may take bits away, never add them
        return os.fdopen(fd, "wb")

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
            return self._listing(window)
        except CheckpointError:
            return {}

    def _listing(self, window: int) -> dict[str, Any]:
        """The parts the commit marker of ``window`` lists, each with its size and SHA-256.

        Raises:
            CheckpointError: ``CHECKPOINT_PART_MISSING`` without a marker (not committed),
                ``CHECKPOINT_CORRUPT`` for a marker that cannot be read as one.
        """
        path = f"{self._folder(window)}/{MARKER}"
        raw = self._read(path)
        try:
            marker = json.loads(raw)
        except ValueError as exc:
            msg = f"the commit marker {path!r} is not JSON ({exc}); that checkpoint is corrupt"
            raise CheckpointError(msg, code="CHECKPOINT_CORRUPT") from exc
        parts = marker.get("parts") if isinstance(marker, dict) else None
        if not isinstance(parts, dict) or not all(
                isinstance(v, dict) for v in parts.values()):
            msg = f"the commit marker {path!r} lists no parts; that checkpoint is corrupt"
            raise CheckpointError(msg, code="CHECKPOINT_CORRUPT")
        return parts

    def committed_windows(self) -> list[int]:
        """Every window whose checkpoint has a commit marker (usable or not), oldest first."""
        return [w for w in self.windows() if self.fs.exists(f"{self._folder(w)}/{MARKER}")]

    def problem(self, window: int) -> str | None:
        """Why committed checkpoint ``window`` cannot be used (None: every part matches).

        Reads every part and checks its size and SHA-256 against the commit marker.
        """
        try:
            for name in self._listing(window):
                self.read_part(window, name)
        except CheckpointError as exc:
            return str(exc)
        return None

    def is_complete(self, window: int) -> bool:
        """True when ``window`` has a commit marker and every part it lists matches it."""
        if not self.fs.exists(f"{self._folder(window)}/{MARKER}"):
            return False
        problem = self.problem(window)
        if problem is not None:
            logger.warning("checkpoint %s of window %d is not usable: %s", self.base, window,
                           problem)
            return False
        return True

    def latest_committed(self) -> int | None:
        """The newest complete checkpoint's window, or None; torn and corrupt ones are skipped."""
        for window in reversed(self.windows()):
            if self.is_complete(window):
                return window
        return None

    def restore_point(self, *, start_empty: bool = False) -> int | None:
        """The checkpoint a rollback restores: the newest committed one that is usable.

        Corrupt ones newer than it are logged (the rollback deletes them). None when no
        checkpoint was ever committed (the topology starts from empty state, as at its
        first start), or when none is usable and ``start_empty`` says so.

        Raises:
            CheckpointError: ``CHECKPOINT_UNUSABLE`` when committed checkpoints exist but none
                is usable (and ``start_empty`` is False): starting from empty state would lose
                what they hold. The message names each and why.
        """
        problems: list[str] = []
        for window in reversed(self.committed_windows()):
            problem = self.problem(window)
            if problem is None:
                for text in problems:
                    logger.error("checkpoint %s skipped, falling back to window %d: %s",
                                 self.base, window, text)
                return window
            problems.append(f"window {window}: {problem}")
        if not problems:
            return None
        if start_empty:
            logger.error("no committed checkpoint in %s is usable; starting from empty state "
                         "as topology.checkpoint.start.empty says: %s", self.base,
                         "; ".join(problems))
            return None
        msg = (f"no committed checkpoint in {self.base!r} is usable, so the topology stops "
               f"rather than start again from empty state: {'; '.join(problems)}. Restore "
               "that folder from a copy, or set topology.checkpoint.start.empty: true to "
               "start from empty state deliberately (the unusable checkpoints are deleted)")
        raise CheckpointError(msg, code="CHECKPOINT_UNUSABLE")

    def read_part(self, window: int, name: str) -> bytes:
        """One part of committed checkpoint ``window``, checked against its commit marker.

        The size and SHA-256 are checked before the bytes are returned, so nothing that
        does not match what the checkpoint's writer wrote is ever unpickled.

        Raises:
            CheckpointError: ``CHECKPOINT_PART_MISSING`` when the checkpoint is not committed,
                its marker does not list the part or the part cannot be read;
                ``CHECKPOINT_CORRUPT`` when the part or the marker does not match.
        """
        path = f"{self._folder(window)}/{name}"
        expected = self._listing(window).get(name)
        if expected is None:
            msg = (f"checkpoint part {path!r} is not listed in its commit marker; a part "
                   "of another executor layout, or a checkpoint that was not committed")
            raise CheckpointError(msg, code="CHECKPOINT_PART_MISSING")
        data = self._read(path)
        sha = hashlib.sha256(data).hexdigest()
        if len(data) != expected.get("size") or sha != expected.get("sha256"):
            msg = (f"checkpoint part {path!r} does not match its commit marker: "
                   f"{len(data)} bytes with SHA-256 {sha[:16]}..., the marker says "
                   f"{expected.get('size')} bytes with {str(expected.get('sha256'))[:16]}...")
            raise CheckpointError(msg, code="CHECKPOINT_CORRUPT")
        return data

    def _read(self, path: str) -> bytes:
        try:
            with self.fs.open(path, "rb") as handle:
                data: bytes = handle.read()
                return data
        except OSError as exc:
            msg = f"checkpoint file {path!r} cannot be read: {exc}"
            raise CheckpointError(msg, code="CHECKPOINT_PART_MISSING") from exc

    def purge_before(self, window: int) -> list[int]:
        """Delete every checkpoint older than the committed ``window``; return their windows.

        Called after ``window`` is committed.
        """
        old = [w for w in self.windows() if w < window]
        for stale in old:
            self.fs.rm(self._folder(stale), recursive=True)
        return old

    def purge(self, keep: int) -> list[int]:
        """Keep the newest ``keep`` committed checkpoints; delete the rest, return their windows.

        Folders without a marker older than the newest committed one (torn, superseded) go
        too. Called after each commit (``topology.checkpoint.keep``).
        """
        committed = self.committed_windows()
        if not committed:
            return []
        kept = set(committed[-max(1, keep):])
        old = [w for w in self.windows() if w < committed[-1] and w not in kept]
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


def _protocols(fs: Any) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _private_folder(path: str, *, chmod: bool = True) -> None:
    """Make ``path`` (and missing parents) 0700; with ``chmod``, make an existing one 0700."""
    existed = os.path.isdir(path)
    if not existed:
        parent = os.path.dirname(path.rstrip("/"))
        if parent and parent != path and not os.path.isdir(parent):
            os.makedirs(parent, mode=FOLDER_MODE, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another writer made it meanwhile
            os.mkdir(path, FOLDER_MODE)
    if not existed:
        os.chmod(path, FOLDER_MODE)
    elif chmod and os.stat(path).st_mode & 0o777 != FOLDER_MODE:
        try:
            os.chmod(path, FOLDER_MODE)
        except OSError as exc:  # another user's folder: written to as it is, and said
            logger.warning("checkpoint folder %s cannot be made 0700: %s", path, exc)


def remove_checkpoints(root: str, topology_id: str) -> bool:
    """Delete a topology's checkpoint folder under ``root`` (Nimbus's cleaner, once killed).

    Returns:
        Whether there was one.
    """
    from fsspec.core import url_to_fs

    fs, base = url_to_fs(root)
    folder = f"{base.rstrip('/')}/{topology_id}"
    if not fs.exists(folder):
        return False
    fs.rm(folder, recursive=True)
    return True
