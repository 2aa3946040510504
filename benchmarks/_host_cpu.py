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
which processes a second host adds work to. The Spark executor JVMs' time is split further by
thread name (keys ``"B:jvm thread:C# CompilerThre"``, :func:`thread_name`): what a JVM does
with its seconds (task threads, shuffle, JIT compiler, GC, heartbeats).
"""

from __future__ import annotations

import os
import re
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
    ("sparkstorm.engine.executor.main", "sparkstorm executors"),
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


JVM_CLASS = "spark executor JVM"
"""The class whose threads are sampled one by one."""


RENAMED_THREADS = (("Executor task", "Executor task threads"),)
"""Thread names that change while a thread lives, and the one name they count under: a
Spark 4 task thread is "Executor task launch worker ..." while it runs a task and
"Executor task idle worker" between tasks."""


def thread_name(comm: str) -> str:
    """The name a thread's seconds count under.

    Its ``comm`` (15 characters at most), digits as ``#`` so that pools of numbered threads
    add up, renamed threads under one name.
    """
    name = re.sub(r"\d+", "#", comm)
    return next((merged for prefix, merged in RENAMED_THREADS if name.startswith(prefix)),
                name)


def thread_seconds(pid: int) -> dict[int, tuple[str, float]]:
    """Each thread of ``pid``: its id -> its name and its user + system CPU seconds.

    Names as :func:`thread_name`; empty when ``pid`` is gone.
    """
    threads: dict[int, tuple[str, float]] = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return threads
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", encoding="ascii",
                      errors="replace") as stat:
                head, tail = stat.read().rsplit(")", 1)
        except OSError:
            continue  # the thread ended between the listing and the read
        fields = tail.split()
        threads[int(task)] = (thread_name(head.split("(", 1)[1]),
                              (int(fields[11]) + int(fields[12])) / TICKS)
    return threads


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
        self._threads: dict[str, dict[tuple[int, int], tuple[str, float]]] = {
            host: {} for host in namespaces}
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
                    # read again while "other": a child first seen before its exec shows
                    # its parent's command line (a driver JVM was once "other" all run)
                    if self._classes.get(pid, "other") == "other":
                        self._classes[pid] = process_class(pid)
            reading[host] = sum(last.values())
            for pid, seconds in last.items():
                key = f"{host}:{self._classes.get(pid, 'other')}"
                reading[key] = reading.get(key, 0.0) + seconds
            self._sample_threads(host, reading)
        reading.update(cpu_busy_seconds())
        self.samples.append((now, reading))

    def _sample_threads(self, host: str, reading: dict[str, float]) -> None:
        """Add ``host``'s executor JVMs' seconds by thread name to ``reading``.

        A JVM started after the sampler (each run's application starts its own) counts from
        zero; a thread that ended keeps its last reading, as a process does.
        """
        last = self._threads[host]
        for pid, name in self._classes.items():
            if name == JVM_CLASS and pid in self._last[host]:
                for tid, (thread, seconds) in thread_seconds(pid).items():
                    # a thread counts under the name it was first seen with: its seconds
                    # never move from one name to another
                    first = last.get((pid, tid), (thread, 0.0))[0]
                    last[pid, tid] = (first, seconds)
        for thread, seconds in last.values():
            key = f"{host}:jvm thread:{thread}"
            reading[key] = reading.get(key, 0.0) + seconds

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
