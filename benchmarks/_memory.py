"""Peak resident-memory sampling for a process tree.

A Spark benchmark's memory is spread over the Python driver, the JVM it spawns,
PySpark Python workers and possibly executor subprocesses. Measuring only
``os.getpid()`` would miss almost all of it, so we poll the whole descendant
tree in a background thread and keep the peak of the *sum* (what the machine
actually had to provide) plus the peak of each process name (who to blame), and
what each process class held at the instant of the peak total (``peak_breakdown``:
the driver, each executor by gid, Spark's Python workers, the JVM; classes as
``_cpu_breakdown.classify_process``), which says which process to look at.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import sys
import threading
import time
from types import TracebackType

import psutil  # type: ignore[import-untyped,unused-ignore]  # no stubs in the venv

DEFAULT_INTERVAL_S = 0.2
TIMELINE_ENV = "BENCH_MEMORY_TIMELINE"
"""When set, every sample is appended to this file as a JSON line (time, total, by class)."""


def _format_bytes(n: int) -> str:
    """Human-readable MiB, the unit that is meaningful for these processes."""
    return f"{n / (1024 * 1024):,.1f} MiB"


_KCMP_VM = 1
_SYS_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def _shares_address_space(pid_a: int, pid_b: int) -> bool:
    """True if two pids share one address space (Linux ``kcmp(KCMP_VM)``).

    Why: the JVM launches subprocesses via posix_spawn, i.e. ``clone(CLONE_VM)``.
    Until the child execs, it *is* the JVM's memory under another pid (named
    after the spawning thread, e.g. "stream executio") and reports the JVM's
    full RSS; summing it would double-count ~the whole JVM. Where kcmp is
    unavailable this returns False, i.e. we fall back to plain summing.
    """
    if _libc is None or _SYS_KCMP is None:
        return False
    return int(_libc.syscall(_SYS_KCMP, pid_a, pid_b, _KCMP_VM, 0, 0)) == 0


def _process_tree(root: psutil.Process) -> list[psutil.Process]:
    """Root plus all recursive children; children may vanish while we list them."""
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]


def _role(proc: psutil.Process, root_pid: int) -> str:
    """The process's class for the peak breakdown; executors get their gid.

    Command lines are read once per pid (:data:`_ROLES`): a process keeps its role.
    """
    role = _ROLES.get(proc.pid)
    if role is None:
        from _cpu_breakdown import EXECUTOR, classify_process

        cmdline = proc.cmdline()
        role = classify_process(proc.pid, root_pid, cmdline)
        if role == EXECUTOR and "--gid" in cmdline:
            role = f"executor {cmdline[cmdline.index('--gid') + 1]}"
        _ROLES[proc.pid] = role
    return role


_ROLES: dict[int, str] = {}


def sample_tree_rss(root: psutil.Process, by_role: dict[str, int] | None = None
                    ) -> tuple[int, dict[str, int]]:
    """One snapshot: (total RSS, RSS summed per process name) for ``root``'s tree.

    With ``by_role``, the RSS summed per process class (executors per gid) goes in it.

    Per-name values are summed because e.g. two ``python`` workers exist at once
    and together they are what a user of that name costs at that instant.
    Processes that exit between listing and reading are skipped silently, and so
    are not-yet-exec'd spawn children that share their parent's address space.
    """
    total = 0
    by_name: dict[str, int] = {}
    for proc in _process_tree(root):
        try:
            if proc.pid != root.pid and _shares_address_space(proc.ppid(), proc.pid):
                continue
            rss = int(proc.memory_info().rss)
            name = proc.name()
        except psutil.Error:
            continue
        total += rss
        by_name[name] = by_name.get(name, 0) + rss
        if by_role is not None:
            try:
                role = _role(proc, root.pid)
            except psutil.Error:
                continue
            by_role[role] = by_role.get(role, 0) + rss
    return total, by_name


class peak_rss_sampler:  # noqa: N801 - lower-case on purpose: used like a function/context manager
    """Context manager sampling the peak RSS of this process and all descendants.

    Usage::

        with peak_rss_sampler() as mem:
            run_benchmark()
        print(mem.peak_bytes, mem.report())

    ``start()``/``stop()`` are also available for non-``with`` use. A sample is
    taken at start, every ``interval_s`` seconds, and at stop, so even runs
    shorter than one interval get a measurement.
    """

    def __init__(self, interval_s: float = DEFAULT_INTERVAL_S, pid: int | None = None) -> None:
        self.interval_s = interval_s
        self._root = psutil.Process(pid)  # None -> current process
        self.peak_bytes = 0
        self.peak_by_name: dict[str, int] = {}
        self.peak_breakdown: dict[str, int] = {}
        """RSS per process class (executors per gid) at the instant of the peak total."""
        self.samples = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def sample(self) -> None:
        """Take one snapshot and fold it into the peaks (thread-safe)."""
        by_role: dict[str, int] = {}
        total, by_name = sample_tree_rss(self._root, by_role)
        with self._lock:
            self.samples += 1
            if total > self.peak_bytes:
                self.peak_bytes, self.peak_breakdown = total, by_role
            timeline = os.environ.get(TIMELINE_ENV)
            if timeline:
                with open(timeline, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps([time.time(), total, by_role]) + "\n")
            for name, rss in by_name.items():
                if rss > self.peak_by_name.get(name, 0):
                    self.peak_by_name[name] = rss

    def _run(self) -> None:
        """Sampling loop; Event.wait doubles as an interruptible sleep."""
        while not self._stop.wait(self.interval_s):
            self.sample()

    def start(self) -> peak_rss_sampler:
        """Begin sampling in a daemon thread (daemon: never blocks interpreter exit)."""
        if self._thread is not None:
            msg = "sampler already started"
            raise RuntimeError(msg)
        self._stop.clear()
        self.sample()
        self._thread = threading.Thread(target=self._run, name="peak-rss-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sampling and take a final snapshot."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self.sample()

    def __enter__(self) -> peak_rss_sampler:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def report(self) -> str:
        """Multi-line summary: peak total, then per-name peaks, largest first.

        Note the per-name peaks may come from different instants, so they can sum
        to more than the peak total.
        """
        with self._lock:
            lines = [f"peak total RSS: {_format_bytes(self.peak_bytes)} ({self.samples} samples)"]
            # hide tiny short-lived helpers (readlink, chmod, ...) that only add noise
            ranked = sorted(
                ((n, b) for n, b in self.peak_by_name.items() if b >= 1024 * 1024),
                key=lambda kv: kv[1],
                reverse=True,
            )
            lines += [f"  {name:<20} {_format_bytes(rss)}" for name, rss in ranked]
            if self.peak_breakdown:
                at_peak = sorted(self.peak_breakdown.items(), key=lambda kv: -kv[1])
                lines.append("  at the peak: " + ", ".join(
                    f"{role} {rss / 2**20:,.0f}" for role, rss in at_peak) + " MiB")
        return "\n".join(lines)
