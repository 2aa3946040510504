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
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import acks, sink_ids
from tests.integration.spark_app.submitted import (
    COUNT,
    alive,
    descendants,
    jvm,
    python_driver,
    spark_submit,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

# executors hosted by the driver, SIGTERM to the Python driver, is slow (20 s): make test runs
# that hosting and signal in tests/browser/test_spark_app_ui.py, and every id acked once
# after a SIGTERM to the Python driver in the drain test below
@pytest.mark.parametrize(("hosting", "signalled"), [
    ("spark", "jvm"), pytest.param("driver", "python", marks=pytest.mark.slow)])
def test_spark_submit_runs_every_id_and_drains_on_sigterm(
        tmp_path: Path, hosting: str, signalled: str) -> None:
    process, log = spark_submit(tmp_path, hosting)
    seen: dict[int, psutil.Process] = {}
    results = tmp_path / "numbers"
    try:
        def all_acked() -> bool:
            descendants(process, seen)
            assert process.poll() is None, log.read_text()[-5000:]
            return len({a["id"] for a in acks(results)}) >= COUNT

        wait_for(all_acked, 240, message="every id acked")
        time.sleep(1.0)  # the sink's and spout's last lines
        descendants(process, seen)
        target = jvm(seen) if signalled == "jvm" else python_driver(seen)
        target.send_signal(signal.SIGTERM)
        code = process.wait(120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    text = log.read_text()
    assert code in (0, 128 + signal.SIGTERM), text[-5000:]  # a JVM ended by SIGTERM: 143
    drained = ("draining (signal SIGTERM)" if signalled == "python" else
               "draining (the driver's JVM is shutting down")
    assert drained in text, text[-5000:]
    assert "stopped after" in text, text[-5000:]
    if hosting == "spark":
        assert text.count("hosts executors") >= 2, "both shares reported"
    acked = Counter(a["id"] for a in acks(results))
    assert set(acked) == set(range(COUNT)), f"never acked: {set(range(COUNT)) - set(acked)}"
    assert [i for i, n in acked.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(COUNT))
    wait_for(lambda: not [p for p in seen.values() if alive(p)], 30,
             message="every process of the application exited")
    assert not list((tmp_path / "tmp").glob("sparkstorm-*")), "executor folders left"
    assert not (tmp_path / "staging").exists() or list((tmp_path / "staging").iterdir()) == [
        tmp_path / "staging" / "chaos-code.zip"]


def _stop(process: subprocess.Popen[bytes], seen: dict[int, psutil.Process]) -> int:
    """SIGTERM to the Python driver; its exit code."""
    try:
        python_driver(seen).send_signal(signal.SIGTERM)
        return process.wait(120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def _wait_for(process: subprocess.Popen[bytes], log: Path, seen: dict[int, psutil.Process],
              condition: Callable[[], bool], message: str) -> None:
    def met() -> bool:
        descendants(process, seen)
        assert process.poll() is None, log.read_text()[-5000:]
        return condition()

    wait_for(met, 240, message=message)


def test_the_drain_commits_a_last_checkpoint_and_a_restart_resumes_from_it(
        tmp_path: Path) -> None:
    from sparkstorm.checkpoint import CheckpointStore

    results, root = tmp_path / "numbers", tmp_path / "checkpoints"
    conf = ("topology.checkpoint.windows=100000", "topology.checkpoint.id=chaos-kept",
            f"topology.checkpoint.dir={root}")
    process, log = spark_submit(tmp_path, "spark", *conf, log_name="first")
    seen: dict[int, psutil.Process] = {}
    _wait_for(process, log, seen, lambda: len({a["id"] for a in acks(results)}) >= COUNT,
              "every id acked")
    assert _stop(process, seen) == 0, log.read_text()[-5000:]
    first = log.read_text()
    committed = CheckpointStore(str(root), "chaos-kept").latest_committed()
    assert committed is not None, first[-5000:]
    assert f"last checkpoint {committed} committed" in first, "no periodic one: windows=1e5"

    process, log = spark_submit(tmp_path, "spark", *conf, log_name="second")
    _wait_for(process, log, seen,
              lambda: f"rolled back to checkpoint {committed}" in log.read_text(),
              "the restarted application resumed from the last checkpoint")
    assert _stop(process, seen) == 0, log.read_text()[-5000:]
    acked = Counter(a["id"] for a in acks(results))
    assert set(acked) == set(range(COUNT)) and max(acked.values()) == 1
    assert CheckpointStore(str(root), "chaos-kept").latest_committed() is not None, "kept"
    wait_for(lambda: not [p for p in seen.values() if alive(p)], 30,
             message="every process of both applications exited")


def test_a_share_whose_executors_cannot_start_fails_the_application_with_why(
        tmp_path: Path) -> None:
    process, log = spark_submit(tmp_path, "spark", "topology.executor.python=/no/python")
    try:
        code = process.wait(180)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    text = log.read_text()
    assert code == 2, text[-5000:]
    assert "[HOSTING_JOB_ENDED]" in text and "EXECUTOR_PYTHON_NOT_FOUND" in text, text[-5000:]
    assert not list((tmp_path / "tmp").glob("sparkstorm-*")), "executor folders left"
