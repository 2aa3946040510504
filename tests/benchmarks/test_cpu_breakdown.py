"""benchmarks/_cpu_breakdown.py: process classes, the span arithmetic, and py-spy's split.

The last test profiles a real child process with the real py-spy: half a second of every
two-thirds in a "user" file, the rest in a file under a ``sparkstorm`` folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import _cpu_breakdown as cb
from _cpu_speed import _PROBE


def test_processes_are_classed_by_command_line() -> None:
    root = os.getpid()
    assert cb.classify_process(root, root, ["python", "bench.py"]) == cb.DRIVER
    assert cb.classify_process(2, root, [sys.executable, "-m", "sparkstorm.engine.executor.main",
                                         "--plan", "x"]) == cb.EXECUTOR
    assert cb.classify_process(3, root, ["python3", "-m", "pyspark.daemon"]) == cb.PYSPARK_WORKER
    assert cb.classify_process(4, root, ["/usr/lib/jvm/bin/java", "-cp", "x"]) == cb.JVM
    assert cb.classify_process(5, root, ["/venv/bin/py-spy", "record"]) == cb.PROFILER
    assert cb.classify_process(6, root, ["bash", "spark-submit"]) == cb.OTHER
    # the CPU speed probes are the measurement's, as the sampler threads are
    assert cb.classify_process(7, root, ["python3", "-c", _PROBE, "1.0"]) == cb.SAMPLERS


def test_innermost_user_or_engine_frame_decides_and_stdlib_counts_for_its_caller() -> None:
    user = ("/bench/",)
    raw = "\n".join([
        "run (/src/sparkstorm/engine/executor/host.py:10);process (/bench/topo.py:5) 7",
        "process (/bench/topo.py:5);emit (/src/sparkstorm/engine/executor/collector.py:3) 5",
        "process (/bench/topo.py:5);most_common (/usr/lib/python3.11/collections.py:9) 2",
        "loop (/src/sparkstorm/engine/executor/main.py:1);recv (/usr/lib/socket.py:4) 3",
        "_bootstrap (/usr/lib/python3.11/threading.py:1) 1",
    ])
    assert cb.parse_raw_profile(raw, user) == {cb.USER: 9, cb.ENGINE: 9}


def test_span_takes_differences_counts_late_born_pids_and_idle_is_the_rest() -> None:
    sampler = cb.CpuBreakdownSampler(profile=False, cores=2)
    sampler.series = {
        1: cb._Series(cb.DRIVER, [(0.0, 1.0), (10.0, 3.0), (20.0, 5.0)]),
        2: cb._Series(cb.EXECUTOR, [(12.0, 1.0), (20.0, 9.0)]),  # born after the span's start
        3: cb._Series(cb.JVM, [(0.0, 0.0), (20.0, 4.0)]),
    }
    b = sampler.breakdown(5.0, 15.0)
    assert b.by_class[cb.DRIVER] == pytest.approx(2.0)
    assert b.by_class[cb.EXECUTOR] == pytest.approx(1.0 + 8.0 * 3 / 8)
    assert b.by_class[cb.JVM] == pytest.approx(2.0)
    assert b.idle == pytest.approx(2 * 10.0 - b.busy)  # no machine samples: all unused
    sampler.machine_idle = cb._Series(cb.OTHER, [(0.0, 100.0), (20.0, 104.0)])
    b = sampler.breakdown(5.0, 15.0)
    assert b.idle == pytest.approx(2.0)
    assert b.elsewhere == pytest.approx(2 * 10.0 - b.busy - 2.0)
    assert b.user_share is None


def _write_child(folder: Path) -> Path:
    user, engine = folder / "user", folder / "sparkstorm"
    user.mkdir()
    engine.mkdir()
    (user / "component.py").write_text(textwrap.dedent("""
        import time
        def user_work(seconds):
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                sum(range(100))
    """))
    (engine / "plumbing.py").write_text(textwrap.dedent("""
        import time
        def engine_work(seconds):
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                sum(range(100))
    """))
    main = folder / "main.py"
    main.write_text(textwrap.dedent(f"""
        import sys, time
        sys.path[:0] = [{str(user)!r}, {str(engine)!r}]
        from component import user_work
        from plumbing import engine_work
        end = time.monotonic() + 30
        while time.monotonic() < end:
            user_work(0.02)
            engine_work(0.01)
    """))
    return main


@pytest.mark.skipif(cb._find_py_spy() is None, reason="py-spy absent: pip install -e '.[bench]'")
def test_py_spy_splits_a_real_executor_by_where_its_samples_are(tmp_path: Path) -> None:
    main = _write_child(tmp_path)
    # the argument only makes classify_process see an executor
    child = subprocess.Popen([sys.executable, str(main), "sparkstorm.engine.executor.main"])
    try:
        sampler = cb.CpuBreakdownSampler(interval_s=0.2, chunk_s=1.0,
                                         user_dirs=(str(tmp_path / "user") + os.sep,))
        with sampler:
            deadline = time.monotonic() + 30
            while len(sampler.chunks) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            started = time.time() - 0.5
            tmp_dir = sampler._tmp
            spies = [p for p in psutil.Process().children(recursive=True)
                     if "py-spy" in " ".join(p.cmdline())]
        b = sampler.breakdown(min(c.started for c in sampler.chunks), started)
    finally:
        child.kill()
        child.wait()
    assert spies, "no py-spy process was started for the executor"
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in spies)
    assert tmp_dir is not None and not os.path.exists(tmp_dir)
    assert b.by_class[cb.EXECUTOR] > 0.1 * b.seconds  # a busy loop, on a shared machine
    assert b.user_share is not None
    assert 0.5 < b.user_share < 0.85  # 2/3 by construction; sampling and load blur it


def test_the_benchmarks_sampler_threads_are_counted_apart_from_the_driver() -> None:
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            sum(range(1000))

    with cb.CpuBreakdownSampler(interval_s=0.05, profile=False) as cpu:
        began = time.time()
        sampler = threading.Thread(target=busy, name="peak-rss-sampler-test", daemon=True)
        sampler.start()
        time.sleep(1.0)
        ended = time.time()
        time.sleep(0.2)  # samples after ``ended`` while it still runs
    # stopped only once the sampler has stopped: a thread's CPU is read from /proc while it
    # lives, and the busy thread holding the GIL can delay the sampler past its end
    stop.set()
    sampler.join()
    b = cpu.breakdown(began, ended)
    assert b.by_class[cb.SAMPLERS] > 0.05
    # the driver process's other threads slept: nearly all of its CPU was the sampler's
    assert b.by_class[cb.DRIVER] < 0.25 * b.by_class[cb.SAMPLERS]
