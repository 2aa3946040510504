"""A topology deployed with ``spark-submit`` on a standalone cluster nobody installed us on.

The test hosts run a Spark standalone master on A and a worker on B and on C (three cores
each), and nothing of sparkstorm: the workers' Python (``PYSPARK_PYTHON`` of their
environment) is a plain ``python3 -m venv`` without the project's packages, and nothing puts
the source tree on the executors' path. ``sparkstorm pack-env`` packs a virtualenv with
sparkstorm, and ``sparkstorm spark-submit`` runs the chaos topology (ids 0..N-1 through a
relay to a sink) from host A with it (``--archive``): the driver on A, its executor
processes in two shares hosted by the application's own Spark executors on B and C.

Checked: both shares report from B and C, with the shipped environment's Python and
sparkstorm; every id is acked exactly once and reaches the sink; SIGTERM to the
``spark-submit`` JVM drains the topology (its shutdown hook waits for the Python driver);
afterwards nothing of the application runs on B or C (only the hosts' anchors and Spark
workers) and no folder of ours is left in their ``/tmp``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY, acks, sink_ids
from tests.integration.hosts.conftest import (
    HOST_A,
    HOST_B,
    HOST_C,
    MASTER,
    PREFIX,
    ROOT,
    SCRIPT,
    SHARED,
    TestHosts,
    running_test_hosts,
)

# slow (CI budget: 100 s, the suite's longest): make test keeps the same spark-submit path,
# hosting job, link and drain on one machine in tests/integration/spark_app/
pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]

COUNT = 300
"""Ids of the run: five seconds of the spout's stream."""


@pytest.fixture(scope="module")
def plain_python() -> Iterator[str]:
    """A Python with none of the project's packages, outside /tmp (the hosts see it)."""
    folder = Path(f"/var/tmp/sparkstorm-plain-python-{os.getpid()}")
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(folder)], check=True,
                   timeout=120)
    python = str(folder / "bin" / "python")
    probe = subprocess.run([python, "-c", "import sparkstorm"], capture_output=True,
                           check=False, timeout=60)
    assert probe.returncode != 0, "the plain Python must not import sparkstorm"
    yield python
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def bare_hosts(plain_python: str) -> Iterator[TestHosts]:
    """Spark standalone on the test hosts, its workers' Python the plain one, 3 cores each."""
    import pyspark

    saved = {k: os.environ.get(k) for k in ("TEST_HOSTS_CORES", "PYTHON", "SPARK_HOME")}
    os.environ.update({"TEST_HOSTS_CORES": "3", "PYTHON": plain_python,
                       "SPARK_HOME": os.path.dirname(pyspark.__file__)})
    try:
        with running_test_hosts("spark") as test_hosts:
            test_hosts.env["PYTHON"] = plain_python
            yield test_hosts
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _netns_pids(host: str) -> set[int]:
    listed = subprocess.run(["ip", "netns", "pids", f"{PREFIX}{host}"], capture_output=True,
                            text=True, check=False, timeout=10).stdout
    return {int(pid) for pid in listed.split()}


def _ours(host: str) -> list[str]:
    """What runs on ``host`` besides its anchor and its Spark worker (and their helpers)."""
    anchor = int((SHARED / f"anchor.{host}").read_text())
    left = []
    for pid in _netns_pids(host) - {anchor}:
        try:
            cmdline = " ".join(psutil.Process(pid).cmdline())
        except psutil.Error:  # gone, or a zombie about to be
            continue
        if "org.apache.spark.deploy.worker.Worker" not in cmdline:
            left.append(f"{pid}: {cmdline[:300]}")
    return left


def _spark_submit_jvm(seen: dict[int, psutil.Process]) -> psutil.Process:
    for process in seen.values():
        try:
            if "org.apache.spark.deploy.SparkSubmit" in " ".join(process.cmdline()):
                return process
        except psutil.Error:  # gone, or a zombie
            continue
    msg = "no spark-submit JVM among the command's processes"
    raise AssertionError(msg)


def test_spark_submit_on_hosts_without_sparkstorm(bare_hosts: TestHosts,
                                                  tmp_path: Path) -> None:
    assert _ours("B") == [] and _ours("C") == [], "nothing but Spark's workers before"
    archive = SHARED / "sparkstorm-env.tar.gz"
    packed = subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", "pack-env", "-o",
                             str(archive)], capture_output=True, text=True, check=False,
                            timeout=600)
    assert packed.returncode == 0, packed.stderr[-3000:]
    results = SHARED / "numbers"
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    log = tmp_path / "spark-submit.log"
    command = [
        "bash", str(SCRIPT), "exec", "A", sys.executable, "-m", "sparkstorm.cli.main",
        "spark-submit", str(TOPOLOGY), "--master", MASTER, "--archive", str(archive),
        "--staging", str(SHARED / "staging"),
        "-c", f"chaos.dir={results}", "-c", f"chaos.count={COUNT}",
        "-c", "topology.workers=2", "-c", "topology.window.ms=100",
        "-c", "topology.message.timeout.secs=20", "-c", f"spark.driver.host={HOST_A}",
        "-c", "spark.executor.cores=3", "-c", "spark.executor.memory=1g",
        "-c", "spark.ui.enabled=false"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=bare_hosts.env, cwd=ROOT, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    seen: dict[int, psutil.Process] = {}
    try:
        def all_acked() -> bool:
            for child in psutil.Process(process.pid).children(recursive=True):
                seen.setdefault(child.pid, child)
            assert process.poll() is None, log.read_text()[-6000:]
            return len({a["id"] for a in acks(results)}) >= COUNT

        wait_for(all_acked, 600, message="every id acked")
        time.sleep(2.0)
        text = log.read_text()
        reports = re.findall(r"share (\d) \(run \w+\) hosts executors \[[\d, ]+\] on ([\d.]+); "
                             r"Python (\S+), sparkstorm from (\S+)", text)
        assert {host for _, host, _, _ in reports} == {HOST_B, HOST_C}, text[-6000:]
        for _, _, python, package in reports:  # the shipped environment's, on the worker
            assert "/sparkstorm-env/" in python and "/sparkstorm-env/" in package, reports
            assert "/tmp/spark-work/" in python
        _spark_submit_jvm(seen).send_signal(signal.SIGTERM)
        code = process.wait(180)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    text = log.read_text()
    assert code in (0, 128 + signal.SIGTERM), text[-6000:]
    assert "draining (the driver's JVM is shutting down" in text, text[-6000:]
    assert "stopped after" in text, text[-6000:]
    acked = Counter(a["id"] for a in acks(results))
    assert set(acked) == set(range(COUNT)), f"never acked: {set(range(COUNT)) - set(acked)}"
    assert [i for i, n in acked.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(COUNT))
    wait_for(lambda: _ours("B") == [] and _ours("C") == [], 60,
             message=f"the application gone from B and C: {_ours('B') + _ours('C')}")
    for host in ("B", "C"):
        listing = bare_hosts.run(host, "sh", "-c", "ls -a /tmp").stdout.split()
        ours = [n for n in listing if n.startswith("sparkstorm-") and n != SHARED.name]
        assert not ours, (host, listing)
    assert HOST_A in (SHARED / "spark-master.log").read_text()
