"""benchmarks/_cpu_speed.py: a probe per CPU, its readings by span, nothing left behind."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _cpu_speed import CpuSpeedProbe, mean_speed, scaled_load, wait_for_readings


def test_each_cpu_reports_its_speed_and_the_probes_stop() -> None:
    with CpuSpeedProbe(["0"], interval=0.05) as probe:
        wait_for_readings(probe)
        started, deadline = time.time(), time.monotonic() + 30
        while len(probe.readings["0"]) < 4:  # a few readings in the span
            assert time.monotonic() < deadline, "the probe stopped reading"
            time.sleep(0.01)
        ended = time.time()
        processes = list(probe._processes)  # to check they are gone
    span = probe.between(started - 60, ended)
    assert span["0"] is not None
    assert span["0"] > 1000  # sentences per CPU second: any CPU counts thousands
    assert probe.between(ended + 60, ended + 120) == {"0": None}
    assert all(process.poll() is not None for process in processes)


def test_the_mean_speed_needs_every_cpu() -> None:
    assert mean_speed({"0": 100.0, "1": 300.0}) == 200.0
    assert mean_speed({"0": 100.0, "1": None}) is None
    assert mean_speed({}) is None


def test_a_load_is_scaled_to_the_cpus_speed_now_over_their_speed_at_the_maximum() -> None:
    probe = CpuSpeedProbe(["0", "1"])  # not started: its readings are set here
    now = time.time()
    probe.readings = {"0": [(now - 60, 999_999.0), (now - 1, 300.0)], "1": [(now - 2, 500.0)]}

    rate, line = scaled_load(probe, 10_000.0, 500.0, 80)

    assert rate == 8_000.0 * 400.0 / 500.0  # the reading a minute ago is not "now"
    assert "0.800 of their speed" in line
    assert scaled_load(probe, 10_000.0, None, 80)[0] == 8_000.0  # no speed at the maximum
    probe.readings = {"0": [], "1": [(now - 2, 500.0)]}
    assert scaled_load(probe, 10_000.0, 500.0, 80)[0] == 8_000.0  # a CPU without a reading
