"""Uploads: size cap, checksum, zip checks; every refusal removes the partial file."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.inbox import Inbox, UnpackLimits, safe_extract


def _zip(*names: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(zipfile.ZipInfo(name), b"data")
    return buffer.getvalue()


def _finish(inbox: Inbox, data: bytes) -> Path:
    upload_id = inbox.begin()
    inbox.chunk(upload_id, data)
    return inbox.finish(upload_id, hashlib.sha256(data).hexdigest())


def test_a_good_upload_is_finished_and_extracts(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path / "inbox", 10_000)
    done = _finish(inbox, _zip("topo.py", "resources/x.txt"))
    assert done.name.startswith("stormjar-") and done.suffix == ".zip"
    safe_extract(done, tmp_path / "code")
    assert (tmp_path / "code" / "resources" / "x.txt").read_bytes() == b"data"


@pytest.mark.parametrize(("data", "code"), [
    (_zip("../x.py"), "UPLOAD_UNSAFE_PATH"),
    (_zip("/abs.py"), "UPLOAD_UNSAFE_PATH"),
    (_zip("a\\..\\..\\x.py"), "UPLOAD_UNSAFE_PATH"),
    (_zip("C:/x.py"), "UPLOAD_UNSAFE_PATH"),
    (b"garbage", "UPLOAD_CORRUPT_ZIP"),
])
def test_bad_archives_are_refused_and_removed(tmp_path: Path, data: bytes, code: str) -> None:
    inbox = Inbox(tmp_path, 10_000)
    with pytest.raises(NimbusError) as caught:
        _finish(inbox, data)
    assert caught.value.code == code
    assert list(tmp_path.iterdir()) == []


def test_size_cap_checksum_and_unknown_ids(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path, 100)
    upload_id = inbox.begin()
    inbox.chunk(upload_id, b"x" * 60)
    with pytest.raises(NimbusError) as caught:
        inbox.chunk(upload_id, b"x" * 60)
    assert caught.value.code == "UPLOAD_TOO_LARGE" and list(tmp_path.iterdir()) == []
    upload_id = inbox.begin()
    inbox.chunk(upload_id, _zip("a.py")[:90])
    with pytest.raises(NimbusError) as caught:
        inbox.finish(upload_id, "0" * 64)
    assert caught.value.code == "UPLOAD_CHECKSUM_MISMATCH"
    for bad in ("../../etc/passwd", "stormjar-zz"):
        with pytest.raises(NimbusError) as caught:
            inbox.chunk(bad, b"")
        assert caught.value.code == "NO_SUCH_UPLOAD"


def _zeros_zip(size: int, files: int = 1) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(files):
            archive.writestr(f"f{n}", bytes(size // files))
    return buffer.getvalue()


def test_a_zip_bomb_is_refused_at_finish_and_removed(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path, 1 << 20, UnpackLimits(max_bytes=10 << 20, max_files=10))
    with pytest.raises(NimbusError) as caught:
        _finish(inbox, _zeros_zip(50 << 20))
    assert caught.value.code == "UPLOAD_UNPACKED_TOO_LARGE"
    with pytest.raises(NimbusError) as caught:
        _finish(inbox, _zeros_zip(0, files=11))
    assert caught.value.code == "UPLOAD_TOO_MANY_FILES"
    assert list(tmp_path.iterdir()) == []


def test_a_supervisor_checks_the_limits_again_before_unpacking(tmp_path: Path) -> None:
    """A supervisor trusts no download: its own limits refuse the archive unwritten."""
    archive = tmp_path / "stormjar.zip"
    archive.write_bytes(_zeros_zip(50 << 20))
    with pytest.raises(NimbusError) as caught:
        safe_extract(archive, tmp_path / "code", UnpackLimits(max_bytes=10 << 20,
                                                              max_files=10))
    assert caught.value.code == "UPLOAD_UNPACKED_TOO_LARGE"
    assert not (tmp_path / "code").exists()
    safe_extract(archive, tmp_path / "code", UnpackLimits(max_bytes=50 << 20, max_files=1))
    assert (tmp_path / "code" / "f0").stat().st_size == 50 << 20
