"""Uploads: size cap, checksum, zip checks; every refusal removes the partial file."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.inbox import Inbox, safe_extract


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
