"""Core utilisation of a process tree: CPU seconds by process class against cores x wall time.

A sparkstorm run's CPU is spread over the driver, the JVM, Spark's Python workers and the
executor processes, some of which come and go. A background thread reads every descendant's
user+system time (``/proc/<pid>/stat`` through psutil) every ``interval`` seconds and keeps,
per process, the last value seen, so a process that exits still counts up to its last
sample. :meth:`CpuSampler.between` gives the CPU used between two moments of the monotonic
clock (interpolated between samples), so a benchmark can report its steady state only.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from types import TracebackType

import psutil  # type: ignore[import-untyped,unused-ignore]  # no stubs in the venv

CLASSES = ("executors", "spark python workers", "jvm", "driver", "other")


def process_class(process: psutil.Process, root_pid: int) -> str:
    """Which of :data:`CLASSES` ``process`` belongs to."""
    if process.pid == root_pid:
        return "driver"
    try:
        cmdline = " ".join(process.cmdline())
        name = process.name()
    except psutil.Error:
        return "other"
    if "sparkstorm.engine.executor_main" in cmdline:
        return "executors"
    if "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline:
        return "spark python workers"
    if name == "java":
        return "jvm"
    return "other"


class CpuSampler:
    """Samples the CPU time of this process's tree in a thread, per process class.

    Use as a context manager around the measured run.
    """

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self.root = psutil.Process(os.getpid())
        self._classes: dict[tuple[int, float], str] = {}
        self._baseline: dict[tuple[int, float], float] = {}
        self._last: dict[tuple[int, float], float] = {}
        self.series: list[tuple[float, dict[str, float]]] = []
        """(monotonic time, CPU seconds per class since the start) per sample."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def __enter__(self) -> CpuSampler:
        self._sample(baseline=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self, baseline: bool = False) -> None:
        try:
            tree = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            tree = [self.root]
        for process in tree:
            try:
                key = (process.pid, process.create_time())
                times = process.cpu_times()
            except psutil.Error:
                continue
            if key not in self._classes:
                self._classes[key] = process_class(process, self.root.pid)
                # a process born during the run counts from zero
                self._baseline[key] = times.user + times.system if baseline else 0.0
            self._last[key] = times.user + times.system
        totals = dict.fromkeys(CLASSES, 0.0)
        for key, value in self._last.items():
            totals[self._classes[key]] += value - self._baseline[key]
        self.series.append((time.monotonic(), totals))

    def between(self, start: float, end: float) -> dict[str, float]:
        """CPU seconds per class used between monotonic times ``start`` and ``end``."""
        return {name: self._at(end, name) - self._at(start, name) for name in CLASSES}

    def _at(self, when: float, name: str) -> float:
        times = [t for t, _ in self.series]
        i = bisect.bisect_left(times, when)
        if i <= 0:
            return self.series[0][1][name]
        if i >= len(self.series):
            return self.series[-1][1][name]
        (t0, a), (t1, b) = self.series[i - 1], self.series[i]
        share = (when - t0) / (t1 - t0) if t1 > t0 else 1.0
        return a[name] + share * (b[name] - a[name])


def utilisation_report(cpu: dict[str, float], seconds: float, sentences: float,
                       cores: int = 2) -> str:
    """Lines saying the share of ``cores`` x ``seconds`` used and the CPU per sentence."""
    total = sum(cpu.values())
    lines = [f"core utilisation: {total:.1f} CPU s of {cores} x {seconds:.1f} s = "
             f"{100 * total / (cores * seconds):.0f} %  "
             f"({1e6 * total / max(sentences, 1):.0f} core-us/sentence; "
             f"idle {1e6 * max(cores * seconds - total, 0) / max(sentences, 1):.0f} "
             "core-us/sentence)"]
    lines.extend(f"  {name:<22} {seconds_used:7.1f} CPU s  "
                 f"{1e6 * seconds_used / max(sentences, 1):6.0f} core-us/sentence"
                 for name, seconds_used in cpu.items())
    return "\n".join(lines)
