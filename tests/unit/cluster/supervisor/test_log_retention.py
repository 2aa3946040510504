"""The logviewer's retention limits over real folders: age, per worker, and all workers' sum."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from sparkstorm.cluster.supervisor.log_retention import ARTIFACTS, clean_up, log_bytes


def _worker(base: Path, worker_id: str, logs: dict[str, tuple[int, float]]) -> Path:
    """A worker folder with its record and ``logs`` (name -> (bytes, age in seconds))."""
    folder = base / worker_id
    folder.mkdir(parents=True)
    (folder / "worker.json").write_text(json.dumps({"topology_id": "t-1"}))
    for name, (size, age) in logs.items():
        (folder / name).write_bytes(b"x" * size)
        os.utime(folder / name, (time.time() - age, time.time() - age))
    return folder


def test_all_workers_logs_together_stay_under_the_sum_oldest_kept_files_first(
        tmp_path: Path) -> None:
    kept, live = tmp_path / ARTIFACTS, tmp_path / "workers"
    old = _worker(kept, "w-old", {"worker.log": (3000, 300), "executor-1.log": (1000, 200)})
    newer = _worker(kept, "w-new", {"worker.log": (2000, 100)})
    running = _worker(live, "w-live", {"worker.log": (4000, 500)})  # the oldest, but live
    assert log_bytes(live) == 4000
    # 10,000 bytes in all; the sum allows 7,000: w-old's worker.log (3,000) goes, nothing else
    removed = clean_up(kept, max_age_secs=3600, max_bytes=10_000, max_total_bytes=7000,
                       live_bytes=log_bytes(live))
    assert removed == []
    assert sorted(p.name for p in old.iterdir()) == ["executor-1.log", "worker.json"]
    assert (newer / "worker.log").exists() and (running / "worker.log").exists()
    # 5,000 allowed: w-old loses its last log and goes whole, w-new keeps its own
    removed = clean_up(kept, max_age_secs=3600, max_bytes=10_000, max_total_bytes=6000,
                       live_bytes=log_bytes(live))
    assert removed == [old] and not old.exists()
    assert (newer / "worker.log").exists()
    # a live worker over the sum alone: every kept log goes, the live one stays
    assert clean_up(kept, max_age_secs=3600, max_bytes=10_000, max_total_bytes=1000,
                    live_bytes=log_bytes(live)) == [newer]
    assert (running / "worker.log").stat().st_size == 4000


def test_without_a_sum_only_age_and_the_per_worker_limit_apply(tmp_path: Path) -> None:
    kept = tmp_path / ARTIFACTS
    folder = _worker(kept, "w-1", {"worker.log": (3000, 100), "executor-1.log": (3000, 50)})
    assert clean_up(kept, max_age_secs=3600, max_bytes=4000) == []
    assert sorted(p.name for p in folder.iterdir()) == ["executor-1.log", "worker.json"]
    assert clean_up(kept, max_age_secs=10, max_bytes=4000, now=time.time() + 60) == [folder]
