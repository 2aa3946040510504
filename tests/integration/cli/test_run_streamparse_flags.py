"""``sparkstorm run`` with streamparse's ``-d``, ``-a`` and ``-w``: a real Spark local session.

``-d`` (``topology.debug``) logs every tuple the spout emits and the bolts receive, from the
first one on, with ``-a``/``-w`` given too (their conf is checked in the unit tests).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli.test_run import SPARK_FLAGS, sparkstorm


@pytest.fixture(autouse=True)
def _run_logs_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARKSTORM_STORM_LOCAL_DIR", str(tmp_path / "storm-local"))


@pytest.mark.spark
def test_debug_logs_every_tuple_from_the_first_one() -> None:
    result = sparkstorm("run", "-d", "-a", "0", "-w", "2", "examples/exclamation.py",
                        "--time", "6", "-c", "exclamation.count=20", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "topology.debug: each tuple a spout emits or a bolt receives" in out
    emitted = [line for line in out.splitlines() if "sampled emitted tuple" in line]
    received = [line for line in out.splitlines() if "sampled received tuple" in line]
    assert len(emitted) == 20, f"every one of the 20 words, the first too\n{out[-3000:]}"
    assert "['nathan']" in emitted[0], "the first word is logged: debug was on before it"
    assert len(received) == 40, "exclaim1 and exclaim2 each received the 20"
    assert any("'nathan!!!'" in line for line in received), "exclaim2 got exclaim1's words"
    table = out[out.index("stopping"):]
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:]]
            for line in table.splitlines() if line.startswith("│")}
    assert rows["word"][0] == "20" and rows["exclaim2"][2] == "20"
