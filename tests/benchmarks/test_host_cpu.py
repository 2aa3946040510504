"""benchmarks/_host_cpu.py: process classes by command line, and spans over class keys.

The sampler itself needs test hosts (network namespaces, root); the scaling benchmark runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _host_cpu import HostCpuSampler, process_class, thread_name, thread_seconds


def test_a_process_is_classed_by_its_command_line() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()",
                              "-m", "pyspark.daemon"], stdin=subprocess.PIPE)
    try:
        # until it has exec'd, the child shows its parent's command line
        deadline = time.monotonic() + 10
        while b"pyspark.daemon" not in Path(f"/proc/{child.pid}/cmdline").read_bytes():
            assert time.monotonic() < deadline, "the child never exec'd"
            time.sleep(0.01)
        assert process_class(child.pid) == "spark python workers"
    finally:
        child.communicate(b"")
    assert process_class(child.pid) == "other"  # gone: no command line


def test_a_class_first_seen_mid_span_counts_from_zero() -> None:
    sampler = HostCpuSampler({"B": "none"})
    sampler.samples = [(0.0, {"B": 1.0}), (1.0, {"B": 2.0, "B:spark executor JVM": 0.5}),
                       (2.0, {"B": 4.0, "B:spark executor JVM": 1.5})]
    span = sampler.between(0.0, 2.0)
    assert span["B"] == 3.0
    assert span["B:spark executor JVM"] == 1.5


def test_each_thread_is_read_with_its_name() -> None:
    comm = Path("/proc/self/comm").read_text().strip()  # e.g. "python3.11"
    spent = time.process_time() + 0.05
    while time.process_time() < spent:  # some CPU for this thread to show
        pass
    threads = thread_seconds(os.getpid())
    name, seconds = threads[threading.get_native_id()]
    assert name == thread_name(comm)
    assert seconds > 0
    assert thread_seconds(2**22 + 7) == {}  # no such process


def test_thread_names_merge_numbers_and_renamed_threads() -> None:
    assert thread_name("C2 CompilerThre") == "C# CompilerThre"
    assert thread_name("GC Thread#12") == "GC Thread##"
    # Spark 4 renames a task thread between tasks: one name for both
    assert thread_name("Executor task l") == thread_name("Executor task i")
