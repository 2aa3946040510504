"""Executor logs of ``sparkstorm run``: a kept folder per run, followed onto the console.

Each executor process writes ``executor-<n>.log`` (its stdout and stderr: the components'
``self.logger`` lines, multilang children's ``log`` commands, errors) into
``topology.executor.log.dir``. ``run`` points that key at
``<storm.local.dir>/logs/<topology>-<date>-<time>`` unless it is set, prints where each
executor's log is, and prints their new lines as they come.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sparkstorm.config import conf_optional_str, local_dir

LOG_DIR_KEY = "topology.executor.log.dir"


def run_log_dir(conf: dict[str, Any], name: str) -> Path:
    """The folder this run's executor logs go to (created; see the module docstring)."""
    configured = conf_optional_str(conf, LOG_DIR_KEY)
    if configured:
        folder = Path(configured).resolve()
    else:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        folder = local_dir(conf) / "logs" / f"{name}-{stamp}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def executor_logs(folder: Path, executors: list[Any]) -> list[str]:
    """One line per executor: its log file and its component."""
    return [f"  {folder / f'executor-{e.gid}.log'}  ({e.component})" for e in executors]


class LogFollower:
    """Reads the lines appended to the ``executor-*.log`` files of a folder since last time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.offsets: dict[Path, int] = {}
        self.partial: dict[Path, bytes] = {}

    def new_lines(self) -> list[str]:
        """Complete lines written since the previous call, file by file."""
        lines: list[str] = []
        for path in sorted(self.folder.glob("executor-*.log")):
            try:
                with path.open("rb") as handle:
                    handle.seek(self.offsets.get(path, 0))
                    data = handle.read()
            except OSError:
                continue
            if not data:
                continue
            self.offsets[path] = self.offsets.get(path, 0) + len(data)
            data = self.partial.pop(path, b"") + data
            *complete, rest = data.split(b"\n")
            if rest:
                self.partial[path] = rest
            lines.extend(line.decode("utf-8", "replace") for line in complete if line)
        return lines
