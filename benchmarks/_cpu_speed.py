"""How fast each CPU is right now: a plain-Python word count timed in its own CPU seconds.

This machine's two CPUs are virtual, and the physical cores behind them change speed from
minute to minute (measured 2026-11-27: the same plain-Python loop, pinned to CPU 0 alone,
took 3.5 s of CPU in one minute and 5.6 s a few minutes later; run on both CPUs at once,
one copy took 3.7 s and the other 5.3 s). A throughput ratio between two runs minutes
apart then measures the machine as much as the system. The scaling benchmark runs this
probe beside each run: one small process pinned to each CPU counts the words of
``SENTENCES`` fixed sentences (the benchmark's own kind of work: split, dict update) every
``interval`` seconds and reports how many sentences it counted per CPU second of its own.
Its own CPU seconds leave out the time it waited for the CPU, so a CPU busy with the run
still reports its speed, not the probe's share of it; each probe costs about 1 % of its CPU.

``CpuSpeedProbe.between(t0, t1)`` gives each CPU's mean speed over a span.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

SENTENCES = 4000
"""Sentences counted per reading: about 10 ms of a CPU, long enough to time, short enough
to cost the run little."""

_PROBE = f"""# _cpu_speed probe
import sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from _sentences import make_sentences
sentences = make_sentences({SENTENCES}, seed=7)
interval = float(sys.argv[1])
while True:
    started = time.process_time()
    counts = {{}}
    for sentence in sentences:
        for word in sentence.split():
            counts[word] = counts.get(word, 0) + 1
    spent = time.process_time() - started
    print(time.time(), {SENTENCES} / spent if spent > 0 else 0.0, flush=True)
    time.sleep(interval)
"""


class CpuSpeedProbe:
    """One probe process per CPU while the ``with`` block runs (see the module docs).

    Args:
        cpus: the CPUs to probe (``taskset`` numbers, as strings).
        interval: seconds between readings.
    """

    def __init__(self, cpus: list[str], interval: float = 1.0) -> None:
        self.cpus = cpus
        self.interval = interval
        self.readings: dict[str, list[tuple[float, float]]] = {cpu: [] for cpu in cpus}
        self._processes: list[subprocess.Popen[str]] = []
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> CpuSpeedProbe:
        for cpu in self.cpus:
            process = subprocess.Popen(
                ["taskset", "-c", cpu, sys.executable, "-c", _PROBE, str(self.interval)],
                stdout=subprocess.PIPE, text=True)
            self._processes.append(process)
            thread = threading.Thread(target=self._read, args=(cpu, process), daemon=True,
                                      name=f"cpu-speed-{cpu}")
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self._processes:
            process.kill()
            process.wait(10)
        for thread in self._threads:
            thread.join(10)

    def _read(self, cpu: str, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            when, speed = line.split()
            self.readings[cpu].append((float(when), float(speed)))

    def between(self, t0: float, t1: float) -> dict[str, float | None]:
        """Each CPU's mean speed (sentences per CPU second) over ``t0``..``t1``.

        None for a CPU with no reading in the span.
        """
        means: dict[str, float | None] = {}
        for cpu, readings in self.readings.items():
            inside = [speed for when, speed in readings if t0 <= when <= t1]
            means[cpu] = sum(inside) / len(inside) if inside else None
        return means


def mean_speed(speeds: dict[str, float | None]) -> float | None:
    """The mean of the CPUs' speeds of a span (None when a CPU had no reading in it)."""
    values = list(speeds.values())
    if not values or any(value is None for value in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


RECENT_SPEED_S = 10.0
"""How far back ``speed_now`` reads the probe: ten readings per CPU at the default interval."""


def speed_now(probe: CpuSpeedProbe) -> float | None:
    """The CPUs' mean speed over the last ``RECENT_SPEED_S`` seconds (None: no reading)."""
    now = time.time()
    return mean_speed(probe.between(now - RECENT_SPEED_S, now))


def scaled_load(probe: CpuSpeedProbe, maximum: float, maximum_speed: float | None,
                load: int) -> tuple[float, str]:
    """``load`` % of ``maximum`` scaled to the CPUs' speed now, and a line that says so.

    The scale is the probe's speed now over ``maximum_speed``, its speed while the maximum
    was measured.

    This machine's virtual CPUs change speed from minute to minute: in the latency curves of
    2026-11-27 10:40 and 11:33 they were 10-20 % slower during the loads than during the
    maximum's run, so the nominal 80 % was 95 % of what they then carried, a saturated
    topology. The speed can still drift while the load runs; the callers print the probe
    during the load too. Unscaled when either speed is unknown.
    """
    rate = maximum * load / 100.0
    speed = speed_now(probe)
    if not speed or not maximum_speed:
        return rate, f"load {load} %: {rate:,.0f} sentences/s (no CPU speed to scale by)"
    scale = speed / maximum_speed
    return rate * scale, (f"load {load} %: CPUs at {scale:.3f} of their speed during the "
                          f"maximum (probe {speed:,.0f} vs {maximum_speed:,.0f}): offering "
                          f"{rate * scale:,.0f} sentences/s ({rate:,.0f} nominal)")


def wait_for_readings(probe: CpuSpeedProbe, timeout: float = 30.0) -> None:
    """Return once every CPU has given a reading (the probes import and build first).

    Raises:
        RuntimeError: a probe gave none in ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while not all(probe.readings.values()):
        if time.monotonic() > deadline:
            msg = f"the CPU speed probes gave no reading in {timeout} s"
            raise RuntimeError(msg)
        time.sleep(0.05)
