"""A topology deployed with the real ``spark-submit`` on a ``local`` master, then stopped.

``sparkstorm spark-submit`` builds and runs PySpark's own ``spark-submit``; the topology is
the chaos suite's (ids 0..N-1 through a relay to a sink, each acked id committed once).
Its executors are hosted by the application's Spark tasks (``topology.executor.hosting:
spark``, two shares) or by the driver itself; once every id is acked, SIGTERM goes to the
driver's JVM (its shutdown hook makes the Python driver drain before Spark stops) or to the
Python driver. Every id must be acked exactly once and reach the sink, the application must
say it drained, and no process or folder it made may be left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY, acks, sink_ids

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

COUNT = 120
"""Ids per run: two seconds of the spout's stream."""


def _spark_submit(tmp_path: Path, hosting: str) -> tuple[subprocess.Popen[bytes], Path]:
    results, scratch = tmp_path / "numbers", tmp_path / "tmp"
    results.mkdir()
    scratch.mkdir()
    log = tmp_path / "spark-submit.log"
    env = {**os.environ, "TMPDIR": str(scratch)}  # the executors' folders go there
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.cli.main", "spark-submit", str(TOPOLOGY),
             "--master", "local[4]", "--staging", str(tmp_path / "staging"),
             "-c", f"chaos.dir={results}", "-c", f"chaos.count={COUNT}",
             "-c", "topology.workers=2", "-c", f"topology.executor.hosting={hosting}",
             "-c", "topology.window.ms=100", "-c", "topology.message.timeout.secs=10",
             "-c", "spark.ui.enabled=false", "-c", f"spark.local.dir={scratch}",
             "--", "--driver-java-options", f"-Djava.io.tmpdir={scratch}"],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    return process, log


def _descendants(process: subprocess.Popen[bytes], seen: dict[int, psutil.Process]) -> None:
    try:
        for child in psutil.Process(process.pid).children(recursive=True):
            seen.setdefault(child.pid, child)
    except psutil.NoSuchProcess:
        pass


def _jvm(seen: dict[int, psutil.Process]) -> psutil.Process:
    for child in seen.values():
        try:
            if "org.apache.spark.deploy.SparkSubmit" in " ".join(child.cmdline()):
                return child
        except psutil.NoSuchProcess:
            continue
    msg = "no spark-submit JVM among the command's processes"
    raise AssertionError(msg)


def _python_driver(seen: dict[int, psutil.Process]) -> psutil.Process:
    for child in seen.values():
        try:
            if any(arg.endswith("spark_app/__main__.py") for arg in child.cmdline()):
                return child
        except psutil.NoSuchProcess:
            continue
    msg = "no Python driver among the command's processes"
    raise AssertionError(msg)


@pytest.mark.parametrize(("hosting", "signalled"), [("spark", "jvm"), ("driver", "python")])
def test_spark_submit_runs_every_id_and_drains_on_sigterm(
        tmp_path: Path, hosting: str, signalled: str) -> None:
    process, log = _spark_submit(tmp_path, hosting)
    seen: dict[int, psutil.Process] = {}
    results = tmp_path / "numbers"
    try:
        def all_acked() -> bool:
            _descendants(process, seen)
            assert process.poll() is None, log.read_text()[-5000:]
            return len({a["id"] for a in acks(results)}) >= COUNT

        wait_for(all_acked, 240, message="every id acked")
        time.sleep(1.0)  # the sink's and spout's last lines
        _descendants(process, seen)
        target = _jvm(seen) if signalled == "jvm" else _python_driver(seen)
        target.send_signal(signal.SIGTERM)
        code = process.wait(120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    text = log.read_text()
    assert code in (0, 128 + signal.SIGTERM), text[-5000:]  # a JVM ended by SIGTERM: 143
    assert "draining (signal SIGTERM)" in text or "draining (the driver's JVM" in text, \
        text[-5000:]
    assert "stopped after" in text, text[-5000:]
    if hosting == "spark":
        assert text.count("hosts executors") >= 2, "both shares reported"
    acked = Counter(a["id"] for a in acks(results))
    assert set(acked) == set(range(COUNT)), f"never acked: {set(range(COUNT)) - set(acked)}"
    assert [i for i, n in acked.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(COUNT))
    wait_for(lambda: not [p for p in seen.values() if p.is_running()
                          and p.status() != psutil.STATUS_ZOMBIE], 30,
             message="every process of the application exited")
    assert not list((tmp_path / "tmp").glob("sparkstorm-*")), "executor folders left"
    assert not (tmp_path / "staging").exists() or list((tmp_path / "staging").iterdir()) == [
        tmp_path / "staging" / "chaos-code.zip"]
