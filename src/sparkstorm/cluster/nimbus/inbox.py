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
from pathlib import Path, PurePosixPath

from sparkstorm.cluster.nimbus.errors import NimbusError

UPLOAD_ID = re.compile(r"^stormjar-[0-9a-f]{32}$")


def check_zip(path: Path, what: str) -> None:
    """Refuse a corrupt zip or one whose members would land outside the extraction folder.

    Raises:
        NimbusError: ``UPLOAD_CORRUPT_ZIP`` or ``UPLOAD_UNSAFE_PATH``.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                _check_member(name, what)
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


def safe_extract(archive_path: Path, dest: Path) -> None:
    """Extract a zip after :func:`check_zip` (again: a supervisor trusts no download)."""
    check_zip(archive_path, f"code archive {str(archive_path)!r}")
    with zipfile.ZipFile(archive_path) as archive:
        archive.extractall(dest)


class Inbox:
    """The upload folder and the three upload steps.

    Args:
        folder: ``<storm.local.dir>/nimbus/inbox``.
        max_bytes: the largest upload accepted (``nimbus.upload.max.bytes``).
    """

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
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
            NimbusError: ``NO_SUCH_UPLOAD``, ``UPLOAD_CHECKSUM_MISMATCH``, ``UPLOAD_CORRUPT_ZIP``
                or ``UPLOAD_UNSAFE_PATH`` (the last three delete the upload).
        """
        part = self._existing_part(upload_id)
        try:
            digest = _sha256(part)
            if digest != sha256.lower():
                msg = (f"upload {upload_id} has sha256 {digest}, the client announced "
                       f"{sha256!r}; the upload was dropped; upload it again")
                raise NimbusError(msg, code="UPLOAD_CHECKSUM_MISMATCH")
            check_zip(part, f"upload {upload_id}")
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
