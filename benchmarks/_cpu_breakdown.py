"""Where a benchmark's core time goes: CPU per process class, and user vs engine code.

Two samplers run in background threads while the benchmark runs, and the breakdown is cut
out afterwards for any span (the steady state is only known once the run is over):

- ``/proc/<pid>/stat`` (utime + stime, every thread of the process) of every process in
  the benchmark's tree, every ``interval_s``, each process classed by its command line:
  executors (``sparkstorm.engine.executor.main``), Spark's Python workers
  (``pyspark.daemon`` / ``pyspark.worker``), the JVM (``java``), the driver (the root pid:
  the benchmark's own process, less its sampler threads: :data:`SAMPLER_THREADS`), the
  profiler (``py-spy``), and anything else.
- ``py-spy record --gil --format raw --nonblocking`` attached to each executor process in
  chunks of ``chunk_s`` seconds (a chunk is the unit that can be cut by time; py-spy writes
  only at its end). Each sample of the thread holding the GIL is classed by its innermost
  frame that is either user code (a file under one of ``user_dirs``) or sparkstorm: stdlib
  frames count for whichever of the two called them. The executors' measured CPU is split by
  those shares: sampling, not timers, so the hot path runs unchanged.

Why ``--gil``: without it py-spy calls a thread active when the OS says it can run, and on a
loaded machine threads just woken in ``Condition.wait`` (the executor's socket and spout
threads) showed up as a third of the "active" samples, all of them engine. With it, time in
native code that releases the GIL is not sampled; the executors' hot paths hold it. A sample
is a moment the code held the GIL, not a moment it ran on a core (a preempted holder is
sampled too), so the split assumes preemption hits user and engine code alike.
The profiler's own CPU is exact: each py-spy chunk's rusage from ``wait4``.

py-spy is an optional dependency (``pip install -e '.[bench]'``, done by ``make bench``);
without it the executors are reported as one figure and the split says why.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import psutil  # type: ignore[import-untyped,unused-ignore]  # no stubs in the venv

EXECUTOR, PYSPARK_WORKER, JVM, DRIVER, PROFILER, SAMPLERS, OTHER = (
    "executors", "spark python workers", "jvm", "driver", "profiler (py-spy)",
    "samplers (the driver process's threads, CPU speed probes)", "other")
CLASSES = (EXECUTOR, PYSPARK_WORKER, JVM, DRIVER, PROFILER, SAMPLERS, OTHER)
SAMPLER_THREADS = ("cpu-breakdown", "peak-rss-sampler", "py-spy-")
"""Names (prefixes) of the benchmark's own threads in the driver process: this sampler,
``_memory.peak_rss_sampler`` (whose ``psutil`` walk of every process on the machine cost
more than the driver's window loop) and the threads that wait for each py-spy chunk. Their
CPU is the measurement's, not the driver's: read per thread (``/proc/<pid>/task``) and
counted as :data:`SAMPLERS`."""
PROBE_MARK = "# _cpu_speed probe"
"""In the command line of ``_cpu_speed``'s probe processes (the first line of their
``python -c`` source)."""
USER, ENGINE = "user", "engine"
KEEP_PROFILES_ENV = "BENCH_KEEP_PROFILES"
"""When set, the executors' raw py-spy recordings are kept in this folder (else deleted)."""
T = TypeVar("T")
_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
# py-spy cannot read a process's Python version before its libpython is mapped and set up
_PROFILE_MIN_AGE_S = 1.0


def classify_process(pid: int, root_pid: int, cmdline: list[str]) -> str:
    """The process class of ``pid`` from its command line (see the module docstring)."""
    if pid == root_pid:
        return DRIVER
    joined = " ".join(cmdline)
    program = os.path.basename(cmdline[0]) if cmdline else ""
    if program in ("java", "py-spy"):
        return JVM if program == "java" else PROFILER
    # the CPU speed probes are the measurement's, as the sampler threads are
    return next((name for mark, name in _COMMAND_MARKS if mark in joined), OTHER)


_COMMAND_MARKS = (("sparkstorm.engine.executor.main", EXECUTOR),
                  ("pyspark.daemon", PYSPARK_WORKER), ("pyspark.worker", PYSPARK_WORKER),
                  (PROBE_MARK, SAMPLERS))
"""Substrings of a command line and the class they name (first match wins)."""


def read_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (utime + stime, all threads, live and exited) of ``pid``, None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    fields = raw[raw.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_SECOND


def read_thread_cpu_seconds(pid: int, tid: int) -> float | None:
    """CPU seconds (utime + stime) of thread ``tid`` of ``pid``, None if it is gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_SECOND


def read_machine_idle_seconds() -> float:
    """Idle core seconds of the whole machine since boot (``/proc/stat``: idle + iowait)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = stat.readline().split()
    return (int(fields[4]) + int(fields[5])) / _TICKS_PER_SECOND


def classify_stack(frames: list[str], user_dirs: tuple[str, ...]) -> str:
    """USER or ENGINE for one py-spy raw stack (outermost first).

    The innermost frame in user code or in sparkstorm decides; stdlib and third-party frames
    count for their caller (``str.split`` in a bolt is user time, ``socket.recv`` under the
    executor's loop is engine time). A stack with neither (thread start-up) is engine.
    """
    for frame in reversed(frames):
        if any(d in frame for d in user_dirs):
            return USER
        if f"{os.sep}sparkstorm{os.sep}" in frame:
            return ENGINE
    return ENGINE


def parse_raw_profile(text: str, user_dirs: tuple[str, ...]) -> dict[str, int]:
    """Sample counts by USER/ENGINE from py-spy's raw format: ``f1;f2;...;fn count`` lines."""
    counts = {USER: 0, ENGINE: 0}
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            counts[classify_stack(stack.split(";"), user_dirs)] += int(count)
    return counts


@dataclass
class _Chunk:
    """One py-spy recording of one executor: its span and its sample counts."""

    pid: int
    started: float
    ended: float
    counts: dict[str, int]
    cpu_seconds: float


@dataclass
class Breakdown:
    """Core seconds by class over a span, and the user share of the executors' samples."""

    seconds: float
    cores: int
    by_class: dict[str, float]
    user_samples: float = 0.0
    engine_samples: float = 0.0
    split_note: str = ""
    dead_pids: int = 0
    machine_idle: float | None = None
    """Core seconds no process on the machine used (``/proc/stat``), None if unknown."""

    @property
    def busy(self) -> float:
        """Core seconds of every class together."""
        return sum(self.by_class.values())

    @property
    def unused(self) -> float:
        """Core seconds this benchmark did not use: cores x wall time minus its classes."""
        return max(0.0, self.cores * self.seconds - self.busy)

    @property
    def idle(self) -> float:
        """Core seconds no process used (the machine's idle, at most ``unused``)."""
        if self.machine_idle is None:
            return self.unused
        return min(self.unused, self.machine_idle)

    @property
    def elsewhere(self) -> float:
        """Core seconds other processes on the machine (not this benchmark's) used."""
        return self.unused - self.idle

    @property
    def user_share(self) -> float | None:
        """Share of the executors' active samples in user code, None without samples."""
        total = self.user_samples + self.engine_samples
        return self.user_samples / total if total else None


@dataclass
class _Series:
    """Cumulative CPU seconds of one pid over time, as sampled."""

    klass: str
    points: list[tuple[float, float]] = field(default_factory=list)

    def at(self, when: float) -> float:
        """CPU seconds at ``when``, linear between samples; 0 before the pid was seen."""
        pts = self.points
        if when >= pts[-1][0]:
            return pts[-1][1]
        if when < pts[0][0]:
            return 0.0  # what it used before its first sample falls after ``when``
        prev_t, prev_c = pts[0]
        for t, c in pts:
            if t >= when:
                return prev_c + (c - prev_c) * (when - prev_t) / ((t - prev_t) or 1.0)
            prev_t, prev_c = t, c
        return pts[-1][1]


class CpuBreakdownSampler:
    """Samples the process tree's CPU and profiles executors; use as a context manager.

    Args:
        interval_s: how often every process's CPU is read.
        profile: attach py-spy to executor processes (if it is installed).
        rate: py-spy samples per second per executor.
        chunk_s: length of one py-spy recording; spans are cut at this resolution.
        user_dirs: path fragments of user component code (default: this benchmarks folder).
        cores: the machine's cores the idle figure is counted against.
    """

    def __init__(self, interval_s: float = 0.5, *, profile: bool = True, rate: int = 50,
                 chunk_s: float = 5.0, user_dirs: tuple[str, ...] | None = None,
                 cores: int | None = None) -> None:
        self.interval_s, self.rate, self.chunk_s = interval_s, rate, chunk_s
        self.user_dirs = user_dirs or (os.path.dirname(os.path.abspath(__file__)) + os.sep,)
        self.cores = cores or len(os.sched_getaffinity(0))
        self.root_pid = os.getpid()
        self.py_spy = _find_py_spy() if profile else None
        self.profile_note = "" if self.py_spy or not profile else (
            "py-spy not found: pip install -e '.[bench]' (make bench does) for the split")
        self.series: dict[int, _Series] = {}
        self.machine_idle = _Series(OTHER)
        self.samplers = _Series(SAMPLERS)
        self._sampler_cpu: dict[int, float] = {}  # thread id -> its last CPU seconds
        self.chunks: list[_Chunk] = []
        self._profiled: set[int] = set()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._running: dict[int, subprocess.Popen[bytes]] = {}
        self._lock = threading.Lock()
        self._tmp: str | None = None

    def __enter__(self) -> CpuBreakdownSampler:
        self._tmp = tempfile.mkdtemp(prefix="cpu-breakdown-")
        self.sample()
        self._spawn(self._sample_loop, "cpu-breakdown")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop sampling and profiling, end every py-spy process, remove the temp folder."""
        self._stop.set()
        with self._lock:
            running = list(self._running.values())
        for proc in running:
            _end(proc)
        for thread in self._threads:
            thread.join(timeout=10.0)
        self._threads.clear()
        self.sample()  # so that a span ending now has a point after it
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _spawn(self, target: object, name: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        """Read every process's CPU once; start a profiler on executors not yet profiled."""
        now = time.time()
        self.machine_idle.points.append((now, read_machine_idle_seconds()))
        self.samplers.points.append((now, self._sampler_seconds()))
        try:
            procs = [psutil.Process(self.root_pid)]
            procs += procs[0].children(recursive=True)
        except psutil.Error:
            return
        for proc in procs:
            series = self.series.get(proc.pid)
            if series is None:
                try:
                    series = _Series(classify_process(proc.pid, self.root_pid, proc.cmdline()))
                except psutil.Error:
                    continue
                self.series[proc.pid] = series
            cpu = read_cpu_seconds(proc.pid)
            if cpu is not None:  # its own time: the process scan before it can take long
                series.points.append((time.time(), cpu))
            if (series.klass == EXECUTOR and self.py_spy and proc.pid not in self._profiled
                    and _age(proc) >= _PROFILE_MIN_AGE_S and not self._stop.is_set()):
                self._profiled.add(proc.pid)
                self._spawn(self._profile_loop, f"py-spy-{proc.pid}", proc.pid)

    def _sampler_seconds(self) -> float:
        """CPU seconds the benchmark's sampler threads used so far (ended ones included)."""
        for thread in threading.enumerate():
            if thread.native_id is not None and thread.name.startswith(SAMPLER_THREADS):
                cpu = read_thread_cpu_seconds(self.root_pid, thread.native_id)
                if cpu is not None:
                    self._sampler_cpu[thread.native_id] = cpu
        return sum(self._sampler_cpu.values())

    def _profile_loop(self, pid: int) -> None:
        """Record ``pid`` in chunks until stopped or the process is gone."""
        assert self.py_spy and self._tmp
        k = 0
        while not self._stop.is_set() and psutil.pid_exists(pid):
            out = os.path.join(self._tmp, f"{pid}-{k}.txt")
            k += 1
            started = time.time()
            proc = subprocess.Popen(
                [self.py_spy, "record", "--gil", "--format", "raw", "--nonblocking",
                 "--full-filenames",
                 "--rate", str(self.rate), "--duration", f"{self.chunk_s:g}",
                 "--pid", str(pid), "--output", out],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with self._lock:
                self._running[pid] = proc
            cpu = _wait_for_cpu_seconds(proc)
            with self._lock:
                self._running.pop(pid, None)
            if not os.path.exists(out):
                continue  # the executor ended, or py-spy was stopped before it wrote
            with open(out, encoding="utf-8", errors="replace") as raw:
                counts = parse_raw_profile(raw.read(), self.user_dirs)
            keep = os.environ.get(KEEP_PROFILES_ENV)
            if keep:  # for reading the executors' hot stacks afterwards
                os.makedirs(keep, exist_ok=True)
                shutil.move(out, os.path.join(keep, f"{int(started)}-{pid}-{k}.txt"))
            else:
                os.unlink(out)
            with self._lock:
                self.chunks.append(_Chunk(pid, started, time.time(), counts, cpu))

    def breakdown(self, t_lo: float, t_hi: float) -> Breakdown:
        """Core seconds by class between wall-clock times ``t_lo`` and ``t_hi``."""
        by_class = dict.fromkeys(CLASSES, 0.0)
        dead = 0
        for series in self.series.values():
            if not series.points or series.klass == PROFILER:
                continue  # py-spy's chunks live seconds: their exact CPU comes from wait4 below
            by_class[series.klass] += series.at(t_hi) - series.at(t_lo)
            dead += t_lo <= series.points[-1][0] < t_hi - 2 * self.interval_s
        if self.samplers.points:  # the driver process's figure less the samplers' threads
            samplers = self.samplers.at(t_hi) - self.samplers.at(t_lo)
            by_class[SAMPLERS] = samplers
            by_class[DRIVER] -= samplers
        idle = self.machine_idle
        out = Breakdown(t_hi - t_lo, self.cores, by_class, dead_pids=dead,
                        machine_idle=idle.at(t_hi) - idle.at(t_lo) if idle.points else None)
        with self._lock:
            chunks = list(self.chunks)
        for chunk in chunks:
            overlap = min(chunk.ended, t_hi) - max(chunk.started, t_lo)
            if overlap > 0:
                weight = overlap / ((chunk.ended - chunk.started) or 1.0)
                out.user_samples += weight * chunk.counts[USER]
                out.engine_samples += weight * chunk.counts[ENGINE]
                out.by_class[PROFILER] += weight * chunk.cpu_seconds
        out.split_note = self.profile_note or (
            "" if out.user_share is not None else "py-spy took no executor sample in the span")
        return out


def measure_core_time(fn: Callable[[], T]) -> tuple[T, Breakdown]:
    """Run ``fn`` and return its result with the process tree's CPU while it ran."""
    with CpuBreakdownSampler(profile=False) as cpu:
        started = time.time()
        result = fn()
        ended = time.time()
    return result, cpu.breakdown(started, ended)


def _find_py_spy() -> str | None:
    """py-spy next to this interpreter (a venv's bin) or on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def _wait_for_cpu_seconds(proc: subprocess.Popen[bytes]) -> float:
    """Reap ``proc`` and return the CPU seconds it used (0 if ``close`` reaped it first)."""
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:
        proc.wait()
        return 0.0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return float(usage.ru_utime + usage.ru_stime)


def _age(proc: psutil.Process) -> float:
    try:
        return time.time() - float(proc.create_time())
    except psutil.Error:
        return 0.0


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Stop a py-spy recording (SIGINT lets it exit cleanly), killing it if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def format_breakdown(b: Breakdown, sentences: float,
                     references: list[tuple[str, float]]) -> str:
    """The table: core-microseconds per sentence by class, then the references'.

    ``references`` are (label, core-microseconds per sentence) measured in the same run.
    """
    per = 1e6 / sentences if sentences else float("nan")
    rows: list[tuple[str, float]] = []
    share = b.user_share
    executors = b.by_class[EXECUTOR]
    if share is None:
        rows.append((f"executors ({b.split_note})", executors))
    else:
        rows.append(("executors: user component code", executors * share))
        rows.append(("executors: engine code", executors * (1 - share)))
    rows += [(k, b.by_class[k])
             for k in (PYSPARK_WORKER, JVM, DRIVER, PROFILER, SAMPLERS, OTHER)]
    rows.append(("= this benchmark's processes, measuring aside",
                 b.busy - b.by_class[PROFILER] - b.by_class[SAMPLERS]))
    rows.append(("other processes on the machine (not ours)", b.elsewhere))
    rows.append(("idle (no process on the machine)", b.idle))
    total = b.cores * b.seconds
    lines = [f"core time per sentence, steady state ({b.seconds:.1f} s wall, "
             f"{sentences:,.0f} sentences, {b.cores} cores):"]
    lines += [f"  {label:<44} {sec * per:>9,.1f} us  {100 * sec / total:5.1f} %"
              for label, sec in rows]
    lines.append(f"  {'total (cores x wall time)':<44} {total * per:>9,.1f} us  100.0 %")
    if share is not None:
        lines.append(f"  (executor split from {b.user_samples + b.engine_samples:,.0f} py-spy "
                     f"samples, {100 * share:.1f} % in user code)")
    if b.dead_pids:
        lines.append(f"  ({b.dead_pids} processes ended during the span: their CPU after "
                     "their last sample is missing)")
    lines += [f"  {label:<44} {us:>9,.1f} us" for label, us in references]
    return "\n".join(lines)
