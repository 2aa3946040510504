"""The launcher's reading of a worker's local heartbeat: only this incarnation's counts."""

from __future__ import annotations

import json
from pathlib import Path

from sparkstorm.cluster.supervisor.launcher import Launcher, WorkerProcess


def test_last_heartbeat_ignores_missing_torn_and_earlier_incarnations(tmp_path: Path) -> None:
    launcher = Launcher(tmp_path, "http://127.0.0.1:1", None, 0.0)
    process = WorkerProcess("w1", "t-1-1", 6700, 123, create_time=1000.0)
    folder = launcher.root / "w1"
    folder.mkdir()
    assert launcher.last_heartbeat(process) is None, "none written yet"
    (folder / "heartbeat.json").write_text('{"time_secs": 10')
    assert launcher.last_heartbeat(process) is None, "torn"
    (folder / "heartbeat.json").write_text(json.dumps({"time_secs": 900.0}))
    assert launcher.last_heartbeat(process) is None, "the previous worker's"
    (folder / "heartbeat.json").write_text(json.dumps({"time_secs": 1005.5}))
    assert launcher.last_heartbeat(process) == 1005.5
