"""Spouts that sleep or block in ``next_tuple``, as Storm's own example spouts do.

Storm's ``TestWordSpout`` and storm-starter's ``RandomSentenceSpout`` sleep 100 ms per call;
the topology must go at the spout's pace with windows still ending on time, every tuple
acked and a clean exit (``engine.executor.spout``). Each run is a real ``sparkstorm run``
subprocess on Spark local mode, read through its summary table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.migration.test_moving_over import SPARK_FLAGS, sparkstorm, table

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.spark

SLEEPING_TOPOLOGY = '''
import time

from sparkstorm.bolt import Bolt
from sparkstorm.spout import ReliableSpout
from sparkstorm.topology import Topology


class SleepingSpout(ReliableSpout):
    """storm-starter's RandomSentenceSpout's pace: a sleep, then one tuple with an id."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.n = 0

    def next_tuple(self):
        time.sleep(SLEEP_SECONDS)
        self.n += 1
        self.emit([self.n], tup_id=self.n)


class Sink(Bolt):
    outputs = []

    def process(self, tup):
        pass


class Sleeping(Topology):
    spout = SleepingSpout.spec()
    sink = Sink.spec(inputs=[spout])
'''


def latencies(out: str, component: str) -> tuple[float, float, float]:
    """The summary's complete latency of ``component``: average, p50, p99 (ms)."""
    row = next(line for line in out[out.index("stopping"):].splitlines()
               if f"│ {component} " in line)
    cell = [c.strip() for c in row.split("│")][8]
    avg, p50, p99 = (float(v.replace(",", "")) for v in cell.split(" / "))
    return avg, p50, p99


def windows_run(out: str) -> tuple[int, float]:
    """The summary's windows and the seconds they took."""
    found = re.search(r"(\d+) windows in ([\d.]+) s", out)
    assert found, out[-2000:]
    return int(found.group(1)), float(found.group(2))


def write_topology(folder: Path, sleep_seconds: float) -> Path:
    path = folder / "sleeping.py"
    path.write_text(SLEEPING_TOPOLOGY.replace("SLEEP_SECONDS", repr(sleep_seconds)))
    return path


def test_a_spout_sleeping_100_ms_per_call_goes_at_its_pace_with_every_tuple_acked(
        tmp_path: Path) -> None:
    write_topology(tmp_path, 0.1)
    result = sparkstorm(tmp_path, "run", "sleeping.py", "--time", "7", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "TOPOLOGY_SHUTDOWN_TIMEOUT" not in result.stdout + result.stderr
    rows = table(result.stdout)
    emitted = rows["spout"]["emitted"]
    # 10 calls a second for 7 s, less Spark's start: near 70, never more
    assert 40 <= emitted <= 71, f"the spout's own pace (10/s): {emitted}"
    assert rows["spout"]["acked"] == emitted == rows["sink"]["executed"], \
        "every tuple processed and acked, the last ones at shutdown included"
    assert rows["spout"]["failed"] == 0
    _, p50, _ = latencies(result.stdout, "spout")
    assert p50 < 1000, f"median complete latency {p50} ms"


def test_windows_end_on_time_while_next_tuple_blocks_for_seconds(tmp_path: Path) -> None:
    write_topology(tmp_path, 2.0)
    result = sparkstorm(tmp_path, "run", "sleeping.py", "--time", "8", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    windows, seconds = windows_run(result.stdout)
    # 100 ms windows; a window that waited for the 2 s call would allow 4-6 in all
    assert windows >= 20, f"{windows} windows in {seconds} s"
    rows = table(result.stdout)
    assert 2 <= rows["spout"]["emitted"] <= 5
    assert rows["spout"]["acked"] == rows["spout"]["emitted"] == rows["sink"]["executed"]
    _, p50, _ = latencies(result.stdout, "spout")
    assert p50 < 1000, "latency ends when the verdict came, not after the next 2 s call"


# slow (17 s): the two tests above cover sleeping and blocking spouts; Flux files run in
# test_moving_over.py
@pytest.mark.slow
def test_flux_simple_wordcount_as_storm_ships_it_counts_every_word(tmp_path: Path) -> None:
    yaml_file = tmp_path / "simple_wordcount.yaml"
    yaml_file.write_text((HERE / "storm_files" / "simple_wordcount.yaml").read_text())
    result = sparkstorm(tmp_path, "run", yaml_file.name, "--time", "8", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = table(result.stdout)
    words = rows["spout-1"]["emitted"]
    assert 40 <= words <= 81, f"TestWordSpout's pace, 10 words a second: {words}"
    assert rows["bolt-1"]["executed"] == words == rows["bolt-1"]["emitted"], \
        "TestWordCounter counted every word"
    assert rows["bolt-2"]["executed"] == words, "LogInfoBolt logged every count"
