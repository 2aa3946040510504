"""Chunked code uploads into ``<storm.local.dir>/nimbus/inbox/``, checked before any submit.

An upload is ``begin`` (a new ``stormjar-<uuid>.part`` file), ``chunk`` (append, size-capped)
and ``finish`` (sha256 compared, zip checked, renamed to ``stormjar-<uuid>.zip``). Any refused
step deletes the partial file, and so does a refused submit naming the upload (Nimbus calls
:meth:`Inbox.discard`), so a bad upload or submission leaves the disk as it was. Nimbus keeps no
upload state in memory: the file name is the state, and a restarted Nimbus carries on.
"""

from __future__ import annotations

import hashlib
import re
import uuid
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.config import conf_int

UPLOAD_ID = re.compile(r"^stormjar-[0-9a-f]{32}$")


@dataclass(frozen=True)
class UnpackLimits:
    """What a code archive may unpack to: a small zip must not fill a supervisor's disk.

    Python's ``zipfile`` never writes more than a member's declared size (it stops there and
    fails the CRC), so summing the declared sizes bounds what extraction writes.
    """

    max_bytes: int
    """``nimbus.upload.max.unpacked.bytes``."""
    max_files: int
    """``nimbus.upload.max.files``."""

    @classmethod
    def from_conf(cls, conf: Mapping[str, object]) -> UnpackLimits:
        """The limits configured in ``conf`` (the declared defaults when unset)."""
        return cls(conf_int(conf, "nimbus.upload.max.unpacked.bytes"),
                   conf_int(conf, "nimbus.upload.max.files"))

    def check(self, archive: zipfile.ZipFile, what: str) -> None:
        """Refuse ``archive`` when it holds too many members or unpacks too large.

        Raises:
            NimbusError: ``UPLOAD_TOO_MANY_FILES`` or ``UPLOAD_UNPACKED_TOO_LARGE``.
        """
        members = archive.infolist()
        if len(members) > self.max_files:
            msg = (f"{what} holds {len(members)} files, over the limit of {self.max_files}; "
                   "leave generated or data files out of the topology folder, or raise "
                   "nimbus.upload.max.files (on Nimbus and the supervisors)")
            raise NimbusError(msg, code="UPLOAD_TOO_MANY_FILES")
        unpacked = sum(member.file_size for member in members)
        if unpacked > self.max_bytes:
            msg = (f"{what} would unpack to {unpacked} bytes, over the limit of "
                   f"{self.max_bytes}; leave large data out of the topology folder, or raise "
                   "nimbus.upload.max.unpacked.bytes (on Nimbus and the supervisors)")
            raise NimbusError(msg, code="UPLOAD_UNPACKED_TOO_LARGE")


def check_zip(path: Path, what: str, limits: UnpackLimits | None = None) -> None:
    """Refuse a corrupt zip, an unsafe member path, or an archive beyond ``limits``.

    The limits are checked before any member is decompressed; a member path must stay inside
    the extraction folder.

    Raises:
        NimbusError: ``UPLOAD_CORRUPT_ZIP``, ``UPLOAD_UNSAFE_PATH``,
            ``UPLOAD_TOO_MANY_FILES`` or ``UPLOAD_UNPACKED_TOO_LARGE``.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                _check_member(name, what)
            (limits or UnpackLimits.from_conf({})).check(archive, what)
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        msg = (f"{what} is not a readable zip archive ({exc}); upload the zip that "
               "'sparkstorm submit' builds, or rebuild yours with 'zip -r'")
        raise NimbusError(msg, code="UPLOAD_CORRUPT_ZIP") from exc
    if bad is not None:
        msg = f"{what} is a corrupt zip: member {bad!r} fails its CRC check; rebuild the zip"
        raise NimbusError(msg, code="UPLOAD_CORRUPT_ZIP")


def _check_member(name: str, what: str) -> None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        msg = (f"{what} has member {name!r}, which would be written outside the code folder "
               "(absolute path or '..'); build the zip with relative paths only")
        raise NimbusError(msg, code="UPLOAD_UNSAFE_PATH")


def safe_extract(archive_path: Path, dest: Path, limits: UnpackLimits | None = None) -> None:
    """Extract a zip after :func:`check_zip` against the extracting side's own ``limits``.

    A supervisor trusts no download: it checks paths, unpacked size and file count again.
    """
    check_zip(archive_path, f"code archive {str(archive_path)!r}", limits)
    with zipfile.ZipFile(archive_path) as archive:
        archive.extractall(dest)


class Inbox:
    """The upload folder and the three upload steps.

    Args:
        folder: ``<storm.local.dir>/nimbus/inbox``.
        max_bytes: the largest upload accepted (``nimbus.upload.max.bytes``).
        limits: what a finished upload may unpack to (the declared defaults when None).
    """

    def __init__(self, folder: Path, max_bytes: int,
                 limits: UnpackLimits | None = None) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.limits = limits or UnpackLimits.from_conf({})
        folder.mkdir(parents=True, exist_ok=True)

    def begin(self) -> str:
        """Start an upload; return its id (``stormjar-<uuid>``)."""
        upload_id = f"stormjar-{uuid.uuid4().hex}"
        self._part(upload_id).touch(mode=0o600)
        return upload_id

    def chunk(self, upload_id: str, data: bytes) -> int:
        """Append ``data``; return the size so far.

        Raises:
            NimbusError: ``NO_SUCH_UPLOAD``; ``UPLOAD_TOO_LARGE`` (the upload is deleted).
        """
        part = self._existing_part(upload_id)
        size = part.stat().st_size + len(data)
        if size > self.max_bytes:
            part.unlink(missing_ok=True)
            msg = (f"upload {upload_id} would be {size} bytes, over the limit of "
                   f"{self.max_bytes}; the upload was dropped; leave data out of the topology "
                   "folder or raise nimbus.upload.max.bytes on Nimbus")
            raise NimbusError(msg, code="UPLOAD_TOO_LARGE")
        with part.open("ab") as out:
            out.write(data)
        return size

    def finish(self, upload_id: str, sha256: str) -> Path:
        """Check the checksum and the zip, then mark the upload complete.

        Raises:
            NimbusError: ``NO_SUCH_UPLOAD``, ``UPLOAD_CHECKSUM_MISMATCH``, ``UPLOAD_CORRUPT_ZIP``,
                ``UPLOAD_UNSAFE_PATH``, ``UPLOAD_TOO_MANY_FILES`` or
                ``UPLOAD_UNPACKED_TOO_LARGE`` (all but the first delete the upload).
        """
        part = self._existing_part(upload_id)
        try:
            digest = _sha256(part)
            if digest != sha256.lower():
                msg = (f"upload {upload_id} has sha256 {digest}, the client announced "
                       f"{sha256!r}; the upload was dropped; upload it again")
                raise NimbusError(msg, code="UPLOAD_CHECKSUM_MISMATCH")
            check_zip(part, f"upload {upload_id}", self.limits)
        except NimbusError:
            part.unlink(missing_ok=True)
            raise
        done = self.path(upload_id)
        part.rename(done)
        return done

    def path(self, upload_id: str) -> Path:
        """The finished upload's file (it may not exist)."""
        return self.folder / f"{self._checked(upload_id)}.zip"

    def finished(self, upload_id: str) -> Path:
        """The finished upload's file.

        Raises:
            NimbusError: ``NO_SUCH_UPLOAD`` when it was never finished (or expired).
        """
        done = self.path(upload_id)
        if not done.is_file():
            msg = (f"no finished upload {upload_id!r} in the Nimbus inbox; upload the code "
                   "first (begin, chunks, finish), or again if it expired")
            raise NimbusError(msg, code="NO_SUCH_UPLOAD")
        return done

    def discard(self, upload_id: str) -> list[str]:
        """Delete an upload, finished or partial, when a submit naming it is refused.

        Returns the file names deleted (none for an id that is not ours).
        """
        if not UPLOAD_ID.match(upload_id):
            return []
        removed = []
        for path in (self.path(upload_id), self._part(upload_id)):
            try:
                path.unlink()
                removed.append(path.name)
            except FileNotFoundError:
                continue
        return removed

    def remove_older_than(self, cutoff: float) -> list[str]:
        """Delete uploads (finished or partial) last written before epoch ``cutoff``.

        Returns their file names.
        """
        removed = []
        for path in sorted(self.folder.glob("stormjar-*")):
            try:
                if path.is_file() and path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed.append(path.name)
            except FileNotFoundError:
                continue  # submitted or dropped in between
        return removed

    def _part(self, upload_id: str) -> Path:
        return self.folder / f"{self._checked(upload_id)}.part"

    def _existing_part(self, upload_id: str) -> Path:
        part = self._part(upload_id)
        if part.is_file():
            return part
        if self.path(upload_id).is_file():
            msg = f"upload {upload_id} is already finished; start a new one to change it"
            raise NimbusError(msg, code="UPLOAD_ALREADY_FINISHED")
        msg = f"no upload {upload_id!r} in progress; begin one first"
        raise NimbusError(msg, code="NO_SUCH_UPLOAD")

    @staticmethod
    def _checked(upload_id: str) -> str:
        # the id becomes a file name: only our own shape may pass
        if not UPLOAD_ID.match(upload_id):
            msg = f"{upload_id!r} is not an upload id (expected stormjar-<32 hex digits>)"
            raise NimbusError(msg, code="NO_SUCH_UPLOAD")
        return upload_id


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
