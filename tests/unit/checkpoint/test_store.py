"""The checkpoint store: parts renamed into place and a commit marker written last.

Torn and corrupt checkpoints are ignored, older ones purged.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from sparkstorm.checkpoint import CheckpointError, CheckpointStore, checkpoint_root

WRITER = Path(__file__).with_name("torn_writer.py")
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(params=["local", "memory"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "local":
        return str(tmp_path / "checkpoints")
    return f"memory://checkpoint-tests-{uuid.uuid4().hex}"


def commit_window(store: CheckpointStore, window: int) -> None:
    store.commit(window, [store.write_part(window, "executor-0", f"tasks-{window}".encode()),
                          store.write_part(window, "driver", [b"ledger-", str(window).encode()])])


def test_write_commit_read(root: str) -> None:
    store = CheckpointStore(root, "wc-1-1")
    assert store.latest_committed() is None
    commit_window(store, 10)
    assert store.latest_committed() == 10
    assert store.read_part(10, "driver") == b"ledger-10"
    assert set(store.parts(10)) == {"executor-0", "driver"}
    with pytest.raises(CheckpointError) as caught:
        store.read_part(10, "executor-9")
    assert caught.value.code == "CHECKPOINT_PART_MISSING"


def test_uncommitted_and_corrupt_checkpoints_are_ignored(root: str) -> None:
    store = CheckpointStore(root, "wc-1-1")
    commit_window(store, 10)
    commit_window(store, 20)
    store.write_part(30, "executor-0", b"partial")  # no marker: a writer died
    assert store.latest_committed() == 20
    with store.fs.open(f"{store.base}/{20:012d}/driver", "wb") as handle:  # rotted after commit
        handle.write(b"ledger-2X")
    assert store.latest_committed() == 10


def test_purge_and_discard(root: str) -> None:
    store = CheckpointStore(root, "wc-1-1")
    for window in (10, 20, 30):
        commit_window(store, window)
    store.write_part(40, "driver", b"torn")
    assert store.purge_before(30) == [10, 20]
    assert store.discard_after(30) == [40]
    assert store.windows() == [30] and store.latest_committed() == 30
    assert store.read_part(30, "executor-0") == b"tasks-30"


@pytest.mark.parametrize("stage", ["part", "marker"])
def test_checkpoint_torn_by_a_killed_writer_is_ignored(tmp_path: Path, stage: str) -> None:
    root = str(tmp_path / "checkpoints")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    writer = subprocess.Popen([sys.executable, str(WRITER), root, stage],
                              stdout=subprocess.PIPE, env=env)
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == b"mid-write"
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    store = CheckpointStore(root, "topo-1")
    assert store.windows() == [1, 2]  # the torn one is there...
    assert store.latest_committed() == 1  # ...and never used
    assert store.read_part(1, "driver") == b"ledger-1"
    assert store.discard_after(1) == [2]
    commit_window(store, 2)  # the window after the rollback writes it anew
    assert store.latest_committed() == 2


def test_default_root_is_under_storm_local_dir(tmp_path: Path) -> None:
    assert checkpoint_root({"storm.local.dir": str(tmp_path)}) == str(tmp_path / "checkpoints")
    assert checkpoint_root({"topology.checkpoint.dir": "s3://bucket/ck"}) == "s3://bucket/ck"


def _corrupt(store: CheckpointStore, window: int, name: str = "driver") -> None:
    """Flip one byte of a part, as a disk or a hand would."""
    path = f"{store.base}/{window:012d}/{name}"
    with store.fs.open(path, "rb") as handle:
        data = bytearray(handle.read())
    data[0] ^= 0xFF
    with store.fs.open(path, "wb") as handle:
        handle.write(bytes(data))


def test_folders_are_0700_and_files_0600(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)  # the usual one: it would leave files 0644
    try:
        root = tmp_path / "checkpoints"
        store = CheckpointStore(str(root), "wc-1-1")
        commit_window(store, 10)
    finally:
        os.umask(old_umask)
    mode = {path.relative_to(tmp_path).as_posix(): path.stat().st_mode & 0o777
            for path in [root, *root.rglob("*")]}
    assert mode == {"checkpoints": 0o700, "checkpoints/wc-1-1": 0o700,
                    "checkpoints/wc-1-1/000000000010": 0o700,
                    "checkpoints/wc-1-1/000000000010/executor-0": 0o600,
                    "checkpoints/wc-1-1/000000000010/driver": 0o600,
                    "checkpoints/wc-1-1/000000000010/_COMMITTED": 0o600}


def test_an_existing_topology_folder_is_made_0700(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoints" / "wc-1-1"
    folder.mkdir(parents=True, mode=0o755)
    folder.chmod(0o755)
    CheckpointStore(str(tmp_path / "checkpoints"), "wc-1-1")
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "checkpoints").stat().st_mode & 0o777 == 0o755, "not ours to change"


def test_a_part_is_checked_against_its_marker_before_it_is_returned(root: str) -> None:
    store = CheckpointStore(root, "wc-1-1")
    commit_window(store, 10)
    _corrupt(store, 10)
    with pytest.raises(CheckpointError) as caught:
        store.read_part(10, "driver")
    assert caught.value.code == "CHECKPOINT_CORRUPT"
    assert "driver" in str(caught.value) and "000000000010" in str(caught.value)
    store.write_part(20, "driver", b"not committed")
    with pytest.raises(CheckpointError) as caught:
        store.read_part(20, "driver")
    assert caught.value.code == "CHECKPOINT_PART_MISSING"


def test_the_newest_keep_committed_checkpoints_are_kept(root: str) -> None:
    store = CheckpointStore(root, "wc-1-1")
    for window in (10, 20, 30):
        commit_window(store, window)
    store.write_part(15, "driver", b"torn")  # older than the newest commit: goes
    store.write_part(40, "driver", b"in flight")  # newer: stays
    assert store.purge(2) == [10, 15]
    assert store.windows() == [20, 30, 40] and store.committed_windows() == [20, 30]
    assert store.purge(1) == [20]


def test_a_corrupt_newest_checkpoint_falls_back_to_the_one_before(root: str) -> None:
    store = CheckpointStore(root, "wc-1-1")
    commit_window(store, 10)
    commit_window(store, 20)
    assert store.restore_point() == 20
    _corrupt(store, 20, "executor-0")
    assert store.restore_point() == 10


def test_no_usable_committed_checkpoint_is_an_error_unless_starting_empty(root: str) -> None:
    store = CheckpointStore(root, "wc-1-1")
    assert store.restore_point() is None, "never committed: the start"
    store.write_part(5, "driver", b"torn")
    assert store.restore_point() is None, "a torn one is no commit"
    commit_window(store, 10)
    commit_window(store, 20)
    _corrupt(store, 10)
    store.fs.rm(f"{store.base}/{20:012d}/executor-0")
    with pytest.raises(CheckpointError) as caught:
        store.restore_point()
    assert caught.value.code == "CHECKPOINT_UNUSABLE"
    text = str(caught.value)
    assert "window 20" in text and "executor-0" in text, text
    assert "window 10" in text and "driver" in text, text
    assert "topology.checkpoint.start.empty" in text and store.base in text, text
    assert store.restore_point(start_empty=True) is None
