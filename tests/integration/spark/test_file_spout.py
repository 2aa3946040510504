"""FileSpout on real Spark local mode, on the local disk through fsspec.

Files of a folder are read in name order, one task per file, and every line reaches the
sink; a file with a line that does not parse goes to the bad folder with FILE_UNPARSABLE; a
killed spout's successor resumes its half-read file at the acked position (without
checkpoints) or the checkpointed one, and with checkpoints every line reaches the sink's
published files exactly once.
"""

from __future__ import annotations

import csv
import json
import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from sparkstorm import Topology
from sparkstorm.connectors.files import FileBolt, FileSpout
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.file_components import SlowPassBolt

pytestmark = pytest.mark.timeout(150)


def _write_lines(path: Path, numbers: range, *, bad_at: int | None = None) -> None:
    lines = [json.dumps({"n": n, "word": f"w{n}"}) for n in numbers]
    if bad_at is not None:
        lines[bad_at] = '{"n": broken'
    path.write_text("\n".join(lines) + "\n")


def _csv_numbers(folder: Path) -> list[int]:
    numbers = []
    for path in sorted(folder.glob("*.csv")):
        rows = list(csv.reader(path.read_text().splitlines()))
        assert rows[0] == ["n"], path
        numbers.extend(int(row[0]) for row in rows[1:])
    return numbers


def _folders(tmp_path: Path) -> dict[str, str]:
    return {"source_dir": str(tmp_path / "in"), "done_dir": str(tmp_path / "done"),
            "bad_dir": str(tmp_path / "bad")}


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file()} if folder.exists() else set()


def _kill(runner: TopologyDriver, component: str) -> None:
    gid = next(e.gid for e in runner.plan.executors if e.component == component)
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)


def test_files_are_read_once_each_and_a_bad_one_goes_to_the_bad_folder(
        cluster: LocalCluster, tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    _write_lines(source / "a.jsonl", range(0, 150))
    _write_lines(source / "b.jsonl", range(1000, 1010), bad_at=3)
    _write_lines(source / "c.jsonl", range(150, 300))
    _write_lines(source / "d.jsonl.inprogress", range(5000, 5010))  # still being written
    _write_lines(source / ".hidden.jsonl", range(6000, 6010))
    out, rotated = tmp_path / "out", tmp_path / "rotated"

    class FilesToFiles(Topology):
        lines = FileSpout.spec(par=2, format="json", fields=["n", "word"], commit_count=20,
                               **_folders(tmp_path))
        sink = FileBolt.spec(inputs=[lines], path=str(out), format="csv", fields=["n"],
                             sync_count=25, sync_interval_ms=200, rotate_size_bytes=400,
                             move_to=str(rotated))

    runner = cluster.submit_topology("files-read", FilesToFiles, conf={})
    wait_for(lambda: _names(tmp_path / "done") == {"a.jsonl", "c.jsonl"}
             and _names(tmp_path / "bad") == {"b.jsonl"}, timeout=60,
             message="a and c read and done, b in the bad folder")
    error = wait_for(lambda: runner.stats.last_errors.get("lines"), 30,
                     message="the bad file reported")["error"]
    assert "FILE_UNPARSABLE" in error and "b.jsonl" in error, error
    cluster.kill_topology("files-read")  # the sink syncs, closes and moves its last file
    assert not list(out.glob("*.csv")), "every closed file was moved to move_to"
    files = sorted(rotated.glob("*.csv"))
    assert len(files) > 2, "400-byte files: several rotations"
    assert {p.name.split("-")[0] for p in files} == {"sink"}
    numbers = Counter(_csv_numbers(rotated))
    assert set(numbers) - {1000, 1001, 1002} == set(range(300)), "every good line, no other"
    assert max(numbers.values()) == 1, "nothing failed, so nothing was read twice"
    assert _names(source) == {"d.jsonl.inprogress", ".hidden.jsonl"}
    assert _names(source / ".lock") == set(), "every lock released"


# slow: test_files_are_read_once_each_and_a_bad_one_goes_to_the_bad_folder covers reading,
# acking and the lock's position; this kills the reader mid-file
@pytest.mark.slow
def test_a_killed_reader_resumes_its_half_read_file_at_the_acked_position(
        cluster: LocalCluster, tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    count = 3000
    _write_lines(source / "big.jsonl", range(count))
    out = tmp_path / "out"

    class Resume(Topology):
        lines = FileSpout.spec(format="json", fields=["n", "word"], commit_count=50,
                               **_folders(tmp_path))
        slow = SlowPassBolt.spec(inputs=[lines])
        sink = FileBolt.spec(inputs=[slow], path=str(out), format="csv", sync_count=50)

    runner = cluster.submit_topology("files-resume", Resume, conf={
        "topology.max.spout.pending": 100})
    lock = source / ".lock" / "big.jsonl.lock"

    def acked_position() -> int | None:
        try:
            position = int(json.loads(lock.read_text())["position"])
        except (OSError, ValueError, KeyError):
            return None
        return position if position > 0 else None

    wait_for(acked_position, timeout=60, message="some lines acked and recorded")
    _kill(runner, "lines")
    resumed_at = acked_position()
    assert resumed_at is not None
    assert "big.jsonl" in _names(source), "killed mid-file"
    wait_for(lambda: _names(tmp_path / "done") == {"big.jsonl"}, timeout=120,
             message="the file read to its end by the successor")
    cluster.kill_topology("files-resume")
    numbers = Counter(_csv_numbers(out))
    assert set(numbers) == set(range(count))
    first_line_after = sum(1 for _ in (tmp_path / "done" / "big.jsonl").read_bytes()
                           [:resumed_at].splitlines())
    assert first_line_after > 0
    again = [n for n, c in numbers.items() if c > 1]
    assert all(n >= first_line_after - 1 for n in again), \
        f"lines before the acked position were read again: {sorted(again)[:10]}"


# slow: test_with_checkpoints_a_killed_sink_leaves_every_record_exactly_once covers the
# checkpoint path of the sink; this kills the spout's executor instead
@pytest.mark.slow
def test_with_checkpoints_a_killed_reader_resumes_and_every_line_is_written_once(
        cluster: LocalCluster, tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    count = 1500
    _write_lines(source / "a.jsonl", range(count // 2))
    _write_lines(source / "b.jsonl", range(count // 2, count))
    out = tmp_path / "out"

    class Exact(Topology):
        lines = FileSpout.spec(format="json", fields=["n", "word"], **_folders(tmp_path))
        slow = SlowPassBolt.spec(inputs=[lines])
        sink = FileBolt.spec(inputs=[slow], path=str(out), format="csv")

    runner = cluster.submit_topology("files-exact", Exact, conf={
        "topology.checkpoint.windows": 2, "topology.max.spout.pending": 100,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints")})
    wait_for(lambda: len(_csv_numbers(out)) > 0, timeout=60,
             message="a checkpoint committed and its files published")
    assert len(set(_csv_numbers(out))) < count, "killed mid-run"
    _kill(runner, "lines")
    wait_for(lambda: _names(tmp_path / "done") == {"a.jsonl", "b.jsonl"}
             and len(set(_csv_numbers(out))) == count
             and not list(out.glob(".*.pending")), timeout=120,
             message="both files read, every line published, nothing pending")
    assert runner.stats.rollbacks >= 1
    numbers = Counter(_csv_numbers(out))
    assert set(numbers) == set(range(count))
    assert max(numbers.values()) == 1, [n for n, c in numbers.items() if c > 1][:20]
    cluster.kill_topology("files-exact")


EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "flux" / "files_pipeline.yaml"


# slow: the Flux example end to end; its declaration is covered fast by
# tests/unit/connectors/files/test_file_flux.py and the same classes in a topology by
# test_files_are_read_once_each_and_a_bad_one_goes_to_the_bad_folder
@pytest.mark.slow
def test_the_flux_example_turns_json_lines_into_csv_exactly_once(
        cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparkstorm.flux import load_flux_file

    monkeypatch.setenv("FILES_ROOT", str(tmp_path))
    (tmp_path / "in").mkdir()
    for name, first in (("a.jsonl", 0), ("b.jsonl", 100)):
        (tmp_path / "in" / name).write_text("".join(
            json.dumps({"user": f"u{n}", "event": "login"}) + "\n"
            for n in range(first, first + 100)))
    (tmp_path / "in" / "c.jsonl").write_text("not json\n")
    flux = load_flux_file(EXAMPLE, env_filter=True)
    cluster.submit_topology(flux.name, flux.spec, conf={
        "topology.checkpoint.dir": str(tmp_path / "checkpoints")})

    def users() -> list[str]:
        return [row[0] for path in sorted((tmp_path / "out").glob("*.csv"))
                for row in list(csv.reader(path.read_text().splitlines()))[1:]]

    wait_for(lambda: len(users()) >= 200 and _names(tmp_path / "done") == {"a.jsonl", "b.jsonl"}
             and _names(tmp_path / "bad") == {"c.jsonl"}, timeout=120,
             message="both files read and published, the bad one set aside")
    cluster.kill_topology(flux.name)
    assert sorted(users()) == sorted(f"u{n}" for n in range(200))
