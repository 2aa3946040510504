"""``sparkstorm run`` as a user runs it: a real subprocess with a real Spark local session."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SPARK_FLAGS = ["-c", "spark.master=local[2]", "-c", "spark.ui.enabled=false",
               "-c", "topology.window.ms=100"]


@pytest.fixture(autouse=True)
def _run_logs_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run`` keeps executor logs under storm.local.dir: not in the repository."""
    monkeypatch.setenv("SPARKSTORM_STORM_LOCAL_DIR", str(tmp_path / "storm-local"))


def sparkstorm(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.spark
def test_run_shows_progress_stops_after_time_and_prints_the_table() -> None:
    result = sparkstorm("run", "examples/exclamation.py", "--time", "6",
                        "-c", "exclamation.count=50", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "windows" in out and "tuples/s" in out, "the live progress line"
    assert "Spark UI: " in out and "executor logs kept in " in out, "where the UI and logs are"
    table = out[out.index("stopping"):]
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:]]
            for line in table.splitlines() if line.startswith("│")}
    assert rows["word"][0] == "50", "the spout emitted exactly 50 words"
    assert rows["word"][3] == "50", "and all 50 were acked"
    assert rows["exclaim2"][2] == "50", "exclaim2 executed every one"
    reached = re.search(r"latency reached by word, whole run \(start-up included\): "
                        r"complete latency p50 ([\d,]+) ms, "
                        r"p99 ([\d,]+) ms, mean [\d,]+ ms over 50 acked tuples", out)
    assert reached, out[-2000:]
    p50, p99 = (int(v.replace(",", "")) for v in reached.groups())
    assert 0 < p50 <= p99
    assert re.search(r"throughput from 3 s until the spouts stopped at 6 s: [\d,]+ acked "
                     r"tuples/s", out), out[-2000:]


def test_run_rejects_an_invalid_topology_with_its_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad_topology.py"
    bad.write_text(
        "from sparkstorm import Bolt, Spout, Topology\n"
        "class S(Spout):\n    outputs = ['a']\n"
        "class B(Bolt):\n    outputs = ['b']\n"
        "class T(Topology):\n    s = S.spec()\n    b = B.spec(inputs=[s], par=3, num_tasks=2)\n"
    )
    result = sparkstorm("run", str(bad), "--time", "1")
    assert result.returncode == 2
    assert "PARALLELISM_ABOVE_TASKS" in result.stderr and "'b'" in result.stderr


def test_run_rejects_a_bad_config_value_before_starting_spark() -> None:
    result = sparkstorm("run", "examples/exclamation.py", "-c", "topology.workers=many",
                        timeout=60)
    assert result.returncode == 2
    assert "CONFIG_WRONG_TYPE" in result.stderr and "topology.workers" in result.stderr
    assert "command line" in result.stderr


def test_run_rejects_a_missing_file_and_a_malformed_override() -> None:
    missing = sparkstorm("run", "examples/nope.py", timeout=60)
    assert missing.returncode == 2 and "TOPOLOGY_FILE_NOT_FOUND" in missing.stderr
    malformed = sparkstorm("run", "examples/exclamation.py", "-c", "no-equals-sign",
                           timeout=60)
    assert malformed.returncode == 2 and "CONFIG_BAD_OVERRIDE" in malformed.stderr


@pytest.mark.spark
def test_ctrl_c_shuts_down_cleanly_and_prints_the_table() -> None:
    import signal

    process = subprocess.Popen(
        [sys.executable, "-m", "sparkstorm.cli.main", "run", "examples/wordcount.py",
         "-c", "wordcount.sentences=200", *SPARK_FLAGS],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    for line in process.stdout:  # the progress line appears once windows run
        if "windows" in line and "acked" in line:
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-3000:]
    assert "stopping" in out and "sentences" in out and "count" in out


def test_run_returns_only_once_sparks_jvm_is_gone(tmp_path: Path) -> None:
    """``sparkstorm run`` (and so ``make demo``) leaves no JVM behind when it returns."""
    import psutil

    with (tmp_path / "stderr.txt").open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.cli.main", "run", "examples/exclamation.py",
             "--time", "3", *SPARK_FLAGS], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
            stdin=subprocess.DEVNULL)
        me = psutil.Process(process.pid)
        jvms: dict[int, psutil.Process] = {}
        while True:  # note every JVM it starts, until it returns
            try:
                process.wait(0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            try:
                jvms |= {c.pid: c for c in me.children(recursive=True) if "java" in c.name()}
            except psutil.Error:
                continue  # a child went while we looked
    assert process.returncode == 0, (tmp_path / "stderr.txt").read_text()[-3000:]
    assert jvms, "Spark's JVM was seen while the topology ran"
    alive = []
    for jvm in jvms.values():
        try:
            if jvm.is_running() and jvm.status() != psutil.STATUS_ZOMBIE:
                alive.append(jvm.pid)
        except psutil.NoSuchProcess:
            continue
    assert alive == [], "Spark's JVM outlived sparkstorm run"
