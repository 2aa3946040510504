"""FileSpout step by step without Spark (SpoutHarness): locks, positions, done and bad files.

The Spark tests (tests/integration/spark/test_file_spout.py) kill real executors.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sparkstorm.checkpoint.snapshot import restore_task, task_snapshot
from sparkstorm.connectors.files import FileSpout
from sparkstorm.testing import SpoutHarness


def _spout(tmp_path: Path, conf: dict[str, Any] | None = None, **settings: Any
           ) -> SpoutHarness:
    spec = FileSpout.spec(name="lines", source_dir=str(tmp_path / "in"),
                          done_dir=str(tmp_path / "done"), bad_dir=str(tmp_path / "bad"),
                          **settings)
    return SpoutHarness(spec, conf=conf, name="lines")


def _drain(spout: SpoutHarness, calls: int = 50, errors: list[str] | None = None
           ) -> list[Any]:
    emitted = []
    for _ in range(calls):
        result = spout.next_tuple()
        emitted += [e.values[0] for e in result.emits]
        if errors is not None:
            errors += result.errors
        spout.instance.next_scan = 0.0  # no wait between folder listings in a unit test
    return emitted


def test_lines_in_name_order_then_done_and_a_restart_resumes_at_the_acked_position(
        tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "b.txt").write_text("b1\nb2\n")
    (tmp_path / "in" / "a.txt").write_text("a1\na2\na3\n")
    (tmp_path / "in" / "c.txt.ignore").write_text("no\n")
    first = _spout(tmp_path, commit_count=1)
    assert _drain(first, 4) == ["a1", "a2", "a3"]
    first.ack(("a.txt", 0))  # a1 acked and its position recorded in the lock
    first.fail(("a.txt", 3))  # a2 failed: emitted again
    assert _drain(first, 1) == ["a2"]
    lock = json.loads((tmp_path / "in" / ".lock" / "a.txt.lock").read_text())
    assert lock["position"] == 3
    # the task's executor dies; its successor takes its lock back and resumes at a2
    successor = _spout(tmp_path, commit_count=1)
    assert _drain(successor, 3) == ["a2", "a3"]
    for offset in (3, 6):
        successor.ack(("a.txt", offset))
    assert (tmp_path / "done" / "a.txt").exists() and not (tmp_path / "in" / "a.txt").exists()
    assert _drain(successor, 3) == ["b1", "b2"]
    assert (tmp_path / "in" / "c.txt.ignore").exists()


def test_a_bad_line_moves_its_file_to_the_bad_folder_and_reading_goes_on(
        tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "1.csv").write_text("n,w\n1,a\n2\n3,c\n")
    (tmp_path / "in" / "2.csv").write_text("n,w\n4,d\n")
    spout = _spout(tmp_path, format="csv", fields=["n", "w"], csv_header=True)
    errors: list[str] = []
    assert _drain(spout, 6, errors) == ["1", "4"]
    assert (tmp_path / "bad" / "1.csv").exists()
    assert len(errors) == 1 and "FILE_UNPARSABLE" in errors[0] and "1.csv" in errors[0]
    assert not (tmp_path / "in" / ".lock" / "1.csv.lock").exists()


def test_with_checkpoints_a_finished_file_moves_when_its_checkpoint_commits(
        tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a1\na2\n")
    conf = {"topology.checkpoint.windows": 2}
    spout = _spout(tmp_path, conf)
    assert _drain(spout, 2) == ["a1", "a2"]
    blob = task_snapshot(spout.instance, component="lines", task=1)  # a cut, lines in flight
    spout.ack(("a.txt", 0))
    spout.ack(("a.txt", 3))
    assert _drain(spout, 1) == []  # reads the end: finished
    assert (tmp_path / "in" / "a.txt").exists(), "finished, not yet committed"
    spout.instance.pre_prepare(2)
    spout.instance.pre_commit(2)
    assert (tmp_path / "done" / "a.txt").exists()
    # a rollback to a checkpoint taken before the acks reads the file from where it was
    (tmp_path / "in" / "b.txt").write_text("b1\n")
    successor = _spout(tmp_path, conf)
    restore_task(successor.instance, blob, component="lines", task=1)
    assert successor.instance.outstanding.keys() == {0, 3}  # its lines in flight, kept
    assert _drain(successor, 3) == ["b1"]  # a.txt (done) is gone: the next file


def test_unreachable_folders_are_reported_and_reading_resumes_when_they_are_back(
        tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a1\na2\n")
    spout = _spout(tmp_path, lock_dir=str(tmp_path / "locks"))
    # the locks' filesystem fails: a regular file stands where the folder was
    (tmp_path / "locks").rmdir()
    (tmp_path / "locks").write_text("not a folder")
    errors: list[str] = []
    assert _drain(spout, 3, errors) == []  # no exception out of next_tuple: it goes on
    assert len(errors) == 1 and "FILE_SOURCE_UNAVAILABLE" in errors[0]  # once per 30 s
    assert any("FILE_SOURCE_UNAVAILABLE" in line for line in spout.next_tuple().logs)
    (tmp_path / "locks").unlink()
    (tmp_path / "locks").mkdir()
    assert _drain(spout, 3) == ["a1", "a2"]


def test_a_missing_source_folder_is_an_outage_not_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    spout = _spout(tmp_path)
    shutil.rmtree(tmp_path / "in")  # an unmounted share, a bucket not there
    errors: list[str] = []
    assert _drain(spout, 3, errors) == []
    assert len(errors) == 1 and "FILE_SOURCE_UNAVAILABLE" in errors[0]
    assert "does not exist" in errors[0]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("a1\n")
    assert _drain(spout, 3) == ["a1"], "read once the folder is back"
