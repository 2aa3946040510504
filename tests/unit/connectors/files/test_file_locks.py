"""The file spout's lock files on the local disk through fsspec: one owner at a time."""

from __future__ import annotations

import json
import time
from pathlib import Path

from fsspec.implementations.local import LocalFileSystem

from sparkstorm.connectors.files import locks


def test_one_owner_at_a_time_and_the_same_owner_takes_its_lock_back(tmp_path: Path) -> None:
    fs, path = LocalFileSystem(), str(tmp_path / "f.txt.lock")
    assert locks.acquire(fs, path, "t:spout:1", timeout_s=30) == 0
    assert locks.acquire(fs, path, "t:spout:2", timeout_s=30) is None  # held, fresh
    locks.write_lock(fs, path, "t:spout:1", 120)
    assert locks.acquire(fs, path, "t:spout:1", timeout_s=30) == 120  # its successor
    locks.release(fs, path)
    locks.release(fs, path)  # gone already is fine
    assert locks.acquire(fs, path, "t:spout:2", timeout_s=30) == 0


def test_a_stale_lock_is_taken_over_at_its_position(tmp_path: Path) -> None:
    fs, path = LocalFileSystem(), tmp_path / "f.txt.lock"
    path.write_text(json.dumps({"owner": "t:spout:1", "position": 77,
                                "heartbeat": time.time() - 60}))
    assert locks.acquire(fs, str(path), "t:spout:2", timeout_s=30) == 77
    held = locks.read_lock(fs, str(path))
    assert held is not None and held.owner == "t:spout:2" and held.position == 77


def test_a_half_written_lock_is_left_alone(tmp_path: Path) -> None:
    fs, path = LocalFileSystem(), tmp_path / "f.txt.lock"
    path.write_text('{"owner": "t:sp')
    assert locks.read_lock(fs, str(path)) is None
    assert locks.acquire(fs, str(path), "t:spout:2", timeout_s=30) is None
