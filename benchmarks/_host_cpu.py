"""Core seconds used per test host and per CPU over a run, for the scaling benchmark.

Every ``interval`` seconds a thread reads, for each test host, the CPU time (user + system)
of every process in the host's network namespace (``ip netns pids``; a process's children
are in it too), and each CPU's busy time from ``/proc/stat``. A process counts from when it
was first seen (one already running, such as a Spark worker, from the sampler's start); one
that exits keeps its last reading, so at most ``interval`` of its time is missed.
``between(t0, t1)`` gives the core seconds of each host and each CPU between two wall-clock
times (linear between samples): what the run's own processes used, and what the machine's
CPUs did in all (the other engineers' work included). Each host's time is also split by
process class (:func:`process_class`, keys ``"B:spark executor JVM"`` and so on), to say
which processes a second host adds work to.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from bisect import bisect_left
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")

CLASSES = (
    ("CoarseGrainedExecutorBackend", "spark executor JVM"),
    ("SparkSubmit", "driver JVM"),
    ("org.apache.spark.deploy", "spark master/worker JVM"),
    ("pyspark.daemon", "spark python workers"),
    ("pyspark.worker", "spark python workers"),
    ("sparkstorm.engine.executor_main", "sparkstorm executors"),
    ("sparkstorm.testing.spread driver", "driver (python)"),
    ("sparkstorm.testing.spread host", "host process (python)"),
)
"""Substrings of a process's command line, first match wins, and the class they name."""


def namespace_pids(namespace: str) -> list[int]:
    """The processes in network namespace ``namespace`` (none when it is gone)."""
    done = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True,
                          check=False, timeout=10)
    return [int(pid) for pid in done.stdout.split()]


def process_seconds(pid: int) -> float | None:
    """User + system CPU seconds of ``pid`` (None: gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def cpu_busy_seconds() -> dict[str, float]:
    """Busy seconds of each CPU since boot (``/proc/stat``: all but idle and iowait)."""
    busy = {}
    with open("/proc/stat", encoding="ascii") as stat:
        for line in stat:
            name, *values = line.split()
            if name.startswith("cpu") and name != "cpu":
                ticks = [int(v) for v in values[:8]]
                busy[name] = (sum(ticks) - ticks[3] - ticks[4]) / TICKS
    return busy


def process_class(pid: int) -> str:
    """The class of ``pid`` by its command line (:data:`CLASSES`; "other" when none)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            command = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    return next((name for key, name in CLASSES if key in command), "other")


class HostCpuSampler:
    """Samples the hosts' processes and the CPUs in a thread (see the module docs).

    Args:
        namespaces: test host name -> its network namespace.
        interval: seconds between samples.
    """

    def __init__(self, namespaces: dict[str, str], interval: float = 0.5) -> None:
        self.namespaces = namespaces
        self.interval = interval
        self._baseline: dict[int, float] = {}
        self._last: dict[str, dict[int, float]] = {host: {} for host in namespaces}
        self._classes: dict[int, str] = {}
        self.samples: list[tuple[float, dict[str, float]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="host-cpu")

    def __enter__(self) -> HostCpuSampler:
        for namespace in self.namespaces.values():
            for pid in namespace_pids(namespace):
                self._baseline[pid] = process_seconds(pid) or 0.0
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _loop(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                self.sample()
                return

    def sample(self) -> None:
        """One reading of every host's processes and every CPU."""
        now = time.time()
        reading: dict[str, float] = {}
        for host, namespace in self.namespaces.items():
            last = self._last[host]
            for pid in namespace_pids(namespace):
                seconds = process_seconds(pid)
                if seconds is not None:
                    last[pid] = seconds - self._baseline.get(pid, 0.0)
                    if pid not in self._classes:
                        self._classes[pid] = process_class(pid)
            reading[host] = sum(last.values())
            for pid, seconds in last.items():
                key = f"{host}:{self._classes.get(pid, 'other')}"
                reading[key] = reading.get(key, 0.0) + seconds
        reading.update(cpu_busy_seconds())
        self.samples.append((now, reading))

    def between(self, t0: float, t1: float) -> dict[str, Any]:
        """Core seconds of each host and each CPU between wall-clock times ``t0`` and ``t1``."""
        if not self.samples:
            return {}
        keys = sorted({key for _, reading in self.samples for key in reading})
        return {key: round(self._at(key, t1) - self._at(key, t0), 2) for key in keys}

    def _at(self, key: str, when: float) -> float:
        """``key``'s reading at ``when`` (0 before its class was first seen)."""
        times = [t for t, _ in self.samples]
        i = bisect_left(times, when)
        if i == 0:
            return self.samples[0][1].get(key, 0.0)
        if i == len(times):
            return self.samples[-1][1].get(key, 0.0)
        (t_a, a), (t_b, b) = self.samples[i - 1], self.samples[i]
        share = (when - t_a) / (t_b - t_a) if t_b > t_a else 0.0
        before = a.get(key, 0.0)
        return before + share * (b.get(key, before) - before)
