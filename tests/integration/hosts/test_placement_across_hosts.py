"""Window placement on the test hosts: tasks run on their executor's host, no stall after.

A vanished Spark host must not stall windows.

The chaos topology's executors are dealt over hosts B and C (``sparkstorm.testing.spread``:
spout, relay 1 and sink 1 on B; relay 2 and sink 2 on C); its driver runs on host A with
``spark.master`` at A's standalone master, whose workers run on B and C. In the steady
state at least 95 % of the executor calls must be host-local (the Spark task found its
executor's Unix socket on its own host). Then host C's Spark worker and executor are killed
with -9: the windows after it must stay far below ``spark.locality.wait`` (set to 10 s
here, so a stall would be plain), and every id is still acked exactly once.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import acks, sink_ids
from tests.integration.hosts.conftest import (
    HOST_A,
    HOST_B,
    HOST_C,
    MASTER,
    PREFIX,
    ROOT,
    SCRIPT,
    TestHosts,
)

# slow (make test-all): minutes of Spark standalone on two hosts; test_across_hosts and
# test_cluster_across_hosts keep the test hosts in make test
pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]
COUNT = 1500  # 25 s of the chaos topology's stream (or a burst, when start-up was slower)
LOCALITY_WAIT = 10.0
STEADY_AFTER = 5  # windows of start-up (executors registering, first shuffles)
STEADY = 15  # windows measured before the kill
AFTER = 8  # windows after it
SPARK_CONF = [
    "-c", f"spark.master={MASTER}", "-c", f"spark.driver.host={HOST_A}",
    "-c", "spark.executor.memory=1g", "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}",
    "-c", f"spark.locality.wait={LOCALITY_WAIT:g}s", "-c", "topology.stats.window.count=1000",
]


def _spread(hosts: TestHosts, host: str, *args: str, log: Path) -> subprocess.Popen[bytes]:
    """``sparkstorm.testing.spread ARGS`` on ``host``, in the background."""
    with log.open("wb") as out:
        return subprocess.Popen(
            ["bash", str(SCRIPT), "exec", host, sys.executable, "-m",
             "sparkstorm.testing.spread", *args], env=hosts.env, cwd=ROOT,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stats(folder: Path) -> dict[str, Any]:
    path = folder / "stats.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _kill_spark_on(host: str) -> list[int]:
    """Kill -9 the Spark worker and executor JVMs on ``host`` (as if it vanished for Spark).

    Only processes in that host's network namespace: the machine's process list is shared
    with every other host (and everything else running here).
    """
    listed = subprocess.run(["ip", "netns", "pids", f"{PREFIX}{host}"], capture_output=True,
                            text=True, check=True, timeout=30).stdout.split()
    killed = []
    for pid in map(int, listed):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        if b"deploy.worker.Worker" in command or b"CoarseGrainedExecutorBackend" in command:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


def _windows(folder: Path) -> int:
    return int(_stats(folder).get("windows") or 0)


def _after(folder: Path, when: float) -> list[dict[str, Any]]:
    """The windows that started after ``when``."""
    return [w for w in _stats(folder).get("recent_windows", []) if w["started"] > when]


def _share(windows: list[dict[str, Any]]) -> float:
    calls = sum(w["locality"]["calls"] for w in windows)
    local = sum(w["locality"]["host_local_calls"] for w in windows)
    return local / calls if calls else 0.0


def test_tasks_run_on_their_executors_host_and_a_lost_host_does_not_stall(
        hosts: TestHosts) -> None:
    folder = hosts.shared / "placement"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "results").mkdir(parents=True)
    common = ["--topology", "tests.chaos.topology.chaos:ChaosTopology", "--dir", str(folder),
              "--token", secrets.token_hex(16), "-c", f"chaos.dir={folder / 'results'}",
              "-c", f"chaos.count={COUNT}"]
    started: list[subprocess.Popen[bytes]] = []
    try:
        for index, (host, address) in enumerate((("B", HOST_B), ("C", HOST_C))):
            started.append(_spread(hosts, host, "host", *common, "--share", f"{index}/2",
                                   "-c", f"storm.local.hostname={address}",
                                   log=folder / f"host-{host}.log"))
        started.append(_spread(hosts, "A", "driver", *common, "--shares", "2",
                               "--seconds", "400", *SPARK_CONF, log=folder / "driver.log"))
        driver = started[-1]
        wait_for(lambda: _windows(folder) >= STEADY_AFTER + STEADY or driver.poll() is not None,
                 300, message="windows in the steady state")
        assert driver.poll() is None, (folder / "driver.log").read_text()[-4000:]
        before = _stats(folder)["recent_windows"]
        killed_at = time.time()
        assert _kill_spark_on("C"), "no Spark worker found on host C"
        wait_for(lambda: len(_after(folder, killed_at)) >= AFTER
                 and len(acks(folder / "results")) >= COUNT or driver.poll() is not None,
                 300, message="windows after the kill, every id acked")
        (folder / "stop").touch()  # the driver stops
        assert driver.wait(120) == 0, (folder / "driver.log").read_text()[-4000:]
    finally:
        (folder / "stop").touch()
        for process in started:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
                process.wait(10)
    steady = before[STEADY_AFTER:]
    assert _share(steady) >= 0.95, [w["locality"] for w in steady]
    after = _after(folder, killed_at)
    assert len(after) >= AFTER, "windows went on after host C's Spark worker was killed"
    # the first windows after the kill may retry tasks whose shuffle output was on C
    assert max(w["seconds"] for w in after[3:]) < LOCALITY_WAIT / 2, [w["seconds"] for w in after]
    acked = Counter(a["id"] for a in acks(folder / "results"))
    assert set(acked) == set(range(COUNT)), f"never acked: {set(range(COUNT)) - set(acked)}"
    assert [i for i, n in acked.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(folder / "results") >= set(range(COUNT))
