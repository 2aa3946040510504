"""FileBolt's files across checkpoint hooks and restores, without Spark (BoltHarness).

What an engine run does to the sink, step by step: a cut (``pre_prepare``), a commit
(``pre_commit``), a snapshot taken at the cut and put back into a fresh task as after a
kill -9. The Spark tests (tests/integration/spark/test_file_sink.py) kill a real executor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.checkpoint.snapshot import restore_task, task_snapshot
from sparkstorm.connectors.files import FileBolt
from sparkstorm.connectors.files.errors import FileConnectorError
from sparkstorm.testing import BoltHarness

CHECKPOINTS = {"topology.checkpoint.windows": 2}
INPUTS = {"numbers": ["n", "word"]}


def _harness(out: Path, conf: dict[str, Any] | None = None, **settings: Any) -> BoltHarness:
    return BoltHarness(FileBolt.spec(name="sink", path=str(out), **settings),
                       conf=conf, inputs=INPUTS, name="sink")


def _published(out: Path) -> list[int]:
    return [json.loads(line)["n"] for path in sorted(out.glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def _pending(out: Path) -> list[Path]:
    return sorted(out.glob(".*.pending"))


def _write(harness: BoltHarness, numbers: range) -> None:
    for n in numbers:
        assert harness.process([n, f"w{n}"]).acked, "acked as written under checkpoints"


def _snapshot(harness: BoltHarness) -> bytes:
    return task_snapshot(harness.instance, component="sink", task=harness.instance.task)


def _restored(out: Path, blob: bytes) -> BoltHarness:
    """A fresh task (its executor was killed) with the checkpoint's snapshot put back."""
    harness = _harness(out, CHECKPOINTS)
    restore_task(harness.instance, blob, component="sink", task=harness.instance.task)
    return harness


def test_output_is_visible_only_once_its_checkpoint_commits(tmp_path: Path) -> None:
    sink = _harness(tmp_path, CHECKPOINTS)
    _write(sink, range(3))
    sink.instance.pre_prepare(2)  # the cut closes the file
    _write(sink, range(3, 5))
    assert _published(tmp_path) == [] and len(_pending(tmp_path)) == 2
    sink.instance.pre_commit(2)
    assert _published(tmp_path) == [0, 1, 2]  # what the cut covered, not what came after
    sink.instance.pre_prepare(4)
    sink.instance.pre_commit(4)
    assert _published(tmp_path) == list(range(5)) and not _pending(tmp_path)


def test_a_restored_task_drops_what_came_after_its_checkpoint(tmp_path: Path) -> None:
    sink = _harness(tmp_path, CHECKPOINTS)
    _write(sink, range(3))
    sink.instance.pre_prepare(2)
    sink.instance.pre_commit(2)
    blob = _snapshot(sink)  # (a snapshot at cut 2 holds the same: nothing is pending)
    _write(sink, range(3, 6))  # then kill -9: replayed by the spouts after the restore
    successor = _restored(tmp_path, blob)
    assert len(_pending(tmp_path)) == 1, "the killed task's file of 3, 4, 5"
    _write(successor, range(3, 6))
    successor.instance.pre_prepare(4)
    successor.instance.pre_commit(4)
    assert sorted(_published(tmp_path)) == list(range(6)), "each record once"
    assert not _pending(tmp_path)


def test_a_task_killed_between_cut_and_commit_publishes_what_its_checkpoint_covers(
        tmp_path: Path) -> None:
    sink = _harness(tmp_path, CHECKPOINTS)
    _write(sink, range(4))
    sink.instance.pre_prepare(2)
    blob = _snapshot(sink)  # checkpoint 2 commits, but the task dies before pre_commit
    _write(sink, range(4, 6))
    successor = _restored(tmp_path, blob)
    successor.process([6, "w6"])  # its first call recovers the files
    assert _published(tmp_path) == [0, 1, 2, 3], "covered by checkpoint 2"
    assert len(_pending(tmp_path)) == 1, "only the successor's own file"
    successor.instance.pre_rollback()  # a rollback drops the open file
    assert not _pending(tmp_path)


def test_without_checkpoints_tuples_are_acked_once_synced_and_files_rotate(
        tmp_path: Path) -> None:
    done = tmp_path / "done"
    sink = _harness(tmp_path / "out", sync_count=3, rotate_size_bytes=60, move_to=str(done))
    assert not sink.process([0, "w0"]).acked and not sink.process([1, "w1"]).acked
    assert len(sink.process([2, "w2"]).acked) == 3, "the third tuple syncs all three"
    for n in range(3, 9):
        sink.process([n, f"w{n}"])
    sink.close()
    assert sorted(_published(done)) == list(range(9))
    names = sorted(p.name for p in done.glob("*.jsonl"))
    assert len(names) >= 3 and all(name.startswith("sink-") for name in names)
    assert not list((tmp_path / "out").iterdir())


def test_a_tuple_without_the_chosen_field_is_failed_with_its_code(tmp_path: Path) -> None:
    sink = _harness(tmp_path, fields=["n", "missing"])
    result = sink.process([1, "w1"])
    assert result.failed and "FILE_TUPLE_UNMAPPABLE" in result.errors[0]


def test_under_checkpoint_reliability_an_unwritable_tuple_is_reported_and_dropped(
        tmp_path: Path) -> None:
    # a failed tuple rolls this mode back, and this one would roll it back every time
    sink = _harness(tmp_path / "out", {"topology.reliability": "checkpoint",
                                       "topology.checkpoint.dir": str(tmp_path / "cp")},
                    fields=["n", "missing"])
    result = sink.process([1, "w1"])
    assert not result.failed and result.acked == [result.input]
    assert "FILE_TUPLE_UNMAPPABLE" in result.errors[0]


class FullDisk:
    """A stream whose writes fail, as on a full or vanished disk."""

    def write(self, _data: bytes) -> int:
        raise OSError(28, "No space left on device")


def test_a_failed_write_fails_the_unsynced_tuples_and_a_new_file_follows(
        tmp_path: Path) -> None:
    sink = _harness(tmp_path, sync_count=10)
    sink.process([0, "w0"])
    sink.instance.writer.stream = FullDisk()
    result = sink.process([1, "w1"])
    assert len(result.failed) == 2, "the unsynced tuple and this one"
    assert all("FILE_WRITE_FAILED" in (f.reason or "") for f in result.failed)
    assert "FILE_WRITE_FAILED" in result.errors[0]
    sink.process([2, "w2"])  # a new file
    sink.close()
    # the failed file keeps what reached it (0, failed and so replayed: at least once)
    assert sorted(_published(tmp_path)) == [0, 2]
    assert len(list(tmp_path.glob("*.jsonl"))) == 2


def test_under_checkpoints_a_failed_write_raises_for_a_rollback(tmp_path: Path) -> None:
    sink = _harness(tmp_path, CHECKPOINTS)
    sink.process([0, "w0"])
    sink.instance.writer.stream = FullDisk()
    with pytest.raises(FileConnectorError) as caught:
        sink.process([1, "w1"])
    assert caught.value.code == "FILE_WRITE_FAILED"
    assert not _pending(tmp_path), "the file since the cut is dropped; the rollback replays"


def test_times_are_checked_at_the_end_of_a_window(tmp_path: Path) -> None:
    done = tmp_path / "done"
    sink = _harness(tmp_path / "out", sync_interval_ms=500, rotate_interval_ms=2000,
                    move_to=str(done))
    result = sink.process([0, "w0"])  # the harness ends a window after each call
    assert not result.acked, "not yet due"
    sink.instance.oldest_unsynced -= 0.5  # as if half a second had passed
    assert len(sink.process([1, "w1"]).acked) == 2, "synced at the window's end"
    assert not list(done.iterdir())
    sink.instance.opened_at -= 2  # the file is two seconds old
    sink.process([2, "w2"])
    assert sorted(_published(done)) == [0, 1, 2], "rotated at the window's end, and moved"
