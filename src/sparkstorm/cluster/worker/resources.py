"""What a worker's processes use, for its heartbeat.

CPU (percent of one core, since the previous sample), resident memory (MB) and uptime
(seconds since the process started: a restarted executor's starts again at 0) of the worker
and of each executor process.

Example:
    >>> import os
    >>> sampler = ResourceSampler()
    >>> sample = sampler.sample(os.getpid(), {})
    >>> sample["worker"]["pid"] == os.getpid() and sample["worker"]["memoryMb"] > 0
    True
"""

from __future__ import annotations

import time
from typing import Any

import psutil

_MB = 1024 * 1024


class ResourceSampler:
    """Samples processes by pid.

    Each one's :class:`psutil.Process` is kept so that its CPU share is measured between
    two heartbeats (the first sample of a process reads 0).
    """

    def __init__(self) -> None:
        self._processes: dict[int, psutil.Process] = {}

    def _one(self, pid: int) -> dict[str, Any] | None:
        process = self._processes.get(pid)
        try:
            if process is None:
                process = self._processes[pid] = psutil.Process(pid)
            with process.oneshot():
                return {"pid": pid, "cpuPercent": round(process.cpu_percent(None), 1),
                        "memoryMb": round(process.memory_info().rss / _MB, 1),
                        "uptimeSecs": round(max(0.0, time.time() - process.create_time()), 1)}
        except psutil.Error:  # gone (an executor restarting): no figures this time
            self._processes.pop(pid, None)
            return None

    def sample(self, worker_pid: int, executor_pids: dict[int, int]) -> dict[str, Any]:
        """Sample the worker and its executors.

        Returns ``{"worker": {...}, "executors": {"<executor id>": {...}}}``, each
        ``{"pid", "cpuPercent", "memoryMb", "uptimeSecs"}``; processes that are gone are left
        out.
        """
        executors = {}
        for gid, pid in sorted(executor_pids.items()):
            figures = self._one(pid)
            if figures is not None:
                executors[str(gid)] = figures
        live = {worker_pid, *executor_pids.values()}
        for pid in [p for p in self._processes if p not in live]:
            del self._processes[pid]
        return {"worker": self._one(worker_pid) or {}, "executors": executors}
