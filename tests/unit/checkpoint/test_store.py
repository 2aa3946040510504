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
