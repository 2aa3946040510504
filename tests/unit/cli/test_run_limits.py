"""``sparkstorm run`` refuses a topology too big for its limits before starting anything.

Issue 30: a topology of 500 components was accepted, one executor process each (about
13 GB). The real command on a topology file, in a subprocess: refused with the code, the
count and the key to raise, no Spark started; ``-o`` raises the limit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

BIG = '''
from sparkstorm import Bolt, Spout, Topology


class Words(Spout):
    outputs = ["word"]


class Relay(Bolt):
    outputs = ["word"]


class Big(Topology):
    words = Words.spec()
    for _i in range(COUNT):  # a class body's locals() is its namespace
        locals()[f"relay{_i}"] = Relay.spec(inputs=[words])
    del _i
'''


def _run(tmp_path: Path, count: int, *options: str) -> subprocess.CompletedProcess[str]:
    topology = tmp_path / "big.py"
    topology.write_text(BIG.replace("COUNT", str(count)))
    return subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", "run", str(topology),
                           "--name", "big", *options], capture_output=True, text=True,
                          timeout=100, cwd=tmp_path, check=False)


def test_run_refuses_a_topology_of_500_components(tmp_path: Path) -> None:
    ran = _run(tmp_path, 499)
    assert ran.returncode == 2, ran.stderr[-2000:]
    assert "[COMPONENTS_ABOVE_LIMIT]" in ran.stderr
    assert "500 components" in ran.stderr and "topology.max.components" in ran.stderr
    assert "SparkContext" not in ran.stderr, "refused before Spark started"


def test_run_refuses_too_many_executors_once_components_are_allowed(tmp_path: Path) -> None:
    ran = _run(tmp_path, 30, "-o", "topology.max.executors=20")
    assert ran.returncode == 2, ran.stderr[-2000:]
    assert "[EXECUTORS_ABOVE_LIMIT]" in ran.stderr
    assert "31 executors" in ran.stderr and "topology.max.executors" in ran.stderr
