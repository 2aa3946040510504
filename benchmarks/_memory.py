"""Peak resident-memory sampling for a process tree.

A Spark benchmark's memory is spread over the Python driver, the JVM it spawns,
PySpark Python workers and possibly executor subprocesses. Measuring only
``os.getpid()`` would miss almost all of it, so we poll the whole descendant
tree in a background thread and keep the peak of the *sum* (what the machine
actually had to provide) plus the peak of each process name (who to blame).
"""

from __future__ import annotations

import ctypes
import platform
import sys
import threading
from types import TracebackType

import psutil  # type: ignore[import-untyped,unused-ignore]  # no stubs in the venv

DEFAULT_INTERVAL_S = 0.2


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


def sample_tree_rss(root: psutil.Process) -> tuple[int, dict[str, int]]:
    """One snapshot: (total RSS, RSS summed per process name) for ``root``'s tree.

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
        self.samples = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def sample(self) -> None:
        """Take one snapshot and fold it into the peaks (thread-safe)."""
        total, by_name = sample_tree_rss(self._root)
        with self._lock:
            self.samples += 1
            self.peak_bytes = max(self.peak_bytes, total)
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
        return "\n".join(lines)
