"""Runner folders left by a SIGKILLed worker are removed by the next runner."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sparkstorm.engine.executor.workdirs import WORKDIR_PREFIX, remove_stale_workdirs


def test_folders_of_dead_processes_go_and_live_ones_stay() -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    stale = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{dead_pid}-"))
    (stale / "plan.json").write_text("{}")
    live = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
    try:
        remove_stale_workdirs()
        assert not stale.exists(), "a dead worker's folder must be removed"
        assert live.exists(), "a live worker's folder must stay"
    finally:
        for path in (stale, live):
            if path.exists():
                (path / "plan.json").unlink(missing_ok=True)
                path.rmdir()
