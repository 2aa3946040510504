"""A window that hits a moved executor is retried at its new address (issue 10 §1).

Real parts: the driver on the tests' Spark local session hosting no executor, and two
executor hosts (``sparkstorm.testing.spread host``, the workers' executor hosting) as
subprocesses, each running half of the chaos topology's executors (the spout, a relay and a
sink on the first; a relay and a sink on the second). Mid-run the second host is killed
(SIGKILL: its executors follow it) and started again: its executors answer on new ports,
Unix sockets and process ids. The windows in flight cannot reach them; their tasks ask the
driver's endpoint lookup and, once the new host's endpoints are passed to the driver (what
the worker's heartbeat does on a cluster), resend their requests there. No window fails,
every id is committed exactly once, and windows started after the refresh call the new
addresses directly.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparkstorm.config import load_config
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.testing.polling import wait_for
from sparkstorm.testing.spread import load_spec
from tests.chaos.faults import acks, sink_ids
from tests.integration.spark.conftest import TEST_CONF

ROOT = Path(__file__).resolve().parents[3]
TOPOLOGY = "tests.chaos.topology.chaos:ChaosTopology"
COUNT = 3000
"""Ids: fifty seconds of stream at the spout's rate, so that the move lands mid-way even
when the driver's first window comes late (the spout emits from its executor's start)."""
CONF = {"topology.executor.answer.timeout.secs": 90, "topology.message.timeout.secs": 60}
"""A new host takes seconds to start on a loaded machine: the tasks wait for it (bounded
by the answer timeout); no tree may time out meanwhile, so a replay would show."""

# slow (CI budget, 54 s): make test keeps the refresh in unit/engine/test_connection_refresh.py
# (real sockets and lookup) and spark/test_moved_executor.py
pytestmark = [pytest.mark.timeout(400), pytest.mark.slow]


class Hosts:
    """Executor host subprocesses; every one (and every process under it) gone at the end."""

    def __init__(self, folder: Path, token: str, results: Path) -> None:
        self.folder = folder
        self.token = token
        self.results = results
        self.processes: list[subprocess.Popen[bytes]] = []
        self.seen: dict[int, psutil.Process] = {}

    def start(self, share: int, name: str) -> Path:
        """Start host ``share`` of 2 reporting into ``<folder>/<name>``; that folder."""
        folder = self.folder / name
        folder.mkdir()
        conf = [f"chaos.dir={self.results}", f"chaos.count={COUNT}",
                *(f"{key}={value}" for key, value in CONF.items())]
        log = (self.folder / f"{name}.log").open("ab")
        self.processes.append(subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.testing.spread", "host", "--topology",
             TOPOLOGY, "--name", "refresh", "--token", self.token, "--dir", str(folder),
             "--share", f"{share}/2", *(arg for item in conf for arg in ("-c", item))],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}))
        log.close()
        return folder

    def endpoints(self, folder: Path, share: int) -> dict[int, tuple[Endpoint, int]]:
        """What host ``share`` reported in ``folder``: each executor's endpoint and pid."""
        file = folder / f"endpoints-{share}.json"
        wait_for(file.exists, 120, message=f"{file} written\n{self.logs()}")
        self.note_processes()
        return {int(gid): (Endpoint(path, host, int(port)), int(pid)) for gid, (path, host,
                port, pid) in json.loads(file.read_text()).items()}

    def note_processes(self) -> None:
        """Remember every process under the hosts, to make sure all are gone at the end."""
        for process in self.processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                parent = psutil.Process(process.pid)
                for one in [parent, *parent.children(recursive=True)]:
                    self.seen.setdefault(one.pid, one)

    def kill(self, index: int) -> list[psutil.Process]:
        """SIGKILL host ``index`` (its executors exit when they see it gone); its processes."""
        process = self.processes[index]
        tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(True)]
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        return tree

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.folder.glob("*.log")))

    def stop(self) -> None:
        """Stop every host (SIGTERM: they stop their executors), then kill any leftover."""
        self.note_processes()
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        _, alive = psutil.wait_procs(list(self.seen.values()), timeout=15)
        for one in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                one.kill()
        assert not alive, f"processes left behind: {alive}"


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[Hosts]:
    results = tmp_path / "results"
    results.mkdir()
    running = Hosts(tmp_path, secrets.token_hex(16), results)
    try:
        yield running
    finally:
        running.stop()


def _driver_conf(results: Path) -> dict[str, Any]:
    spec = load_spec(TOPOLOGY)
    return load_config(topology={**spec.config, **TEST_CONF, **CONF, "topology.name": "refresh",
                                 "chaos.dir": str(results), "chaos.count": COUNT})


def _committed(results: Path) -> list[int]:
    return [a["id"] for a in acks(results)]


def test_windows_follow_an_executor_host_restarted_on_new_addresses(
        spark: Any, hosts: Hosts, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sparkstorm.engine.driver")
    first, second = hosts.start(0, "first"), hosts.start(1, "second")
    reported = {**hosts.endpoints(first, 0), **hosts.endpoints(second, 1)}
    moving = set(hosts.endpoints(second, 1))
    driver = TopologyDriver("refresh", load_spec(TOPOLOGY), _driver_conf(hosts.results),
                            hosted=set(), token=hosts.token)
    driver.set_remote_endpoints(reported)
    driver.start(spark)
    try:
        wait_for(lambda: len(_committed(hosts.results)) >= 150, 120,
                 message=f"ids committed through both hosts\n{hosts.logs()}")
        assert len(_committed(hosts.results)) < COUNT, "the stream still flows"
        for process in hosts.kill(1):
            wait_for(lambda p=process: not p.is_running() or p.status() == "zombie", 30,
                     message=f"process {process.pid} of the killed host gone")
        moved = hosts.endpoints(hosts.start(1, "second-again"), 1)
        assert set(moved) == moving
        assert all(moved[g][0] != reported[g][0] and moved[g][1] != reported[g][1]
                   for g in moving), "new addresses and new processes"
        driver.set_remote_endpoints(moved)  # what the worker's heartbeat answer does
        refreshed_from = driver.window
        wait_for(lambda: len(set(_committed(hosts.results))) >= COUNT, 180,
                 message=f"every id committed\n{hosts.logs()}")
        # the windows in flight at the move are recorded, and two started after it
        stats = wait_for(lambda: (lambda s: s if s["windows"] >= refreshed_from + 2
                                  else None)(driver.stats.summary()), 60,
                         message="windows after the refresh")
    finally:
        driver.stop(60)
    assert driver.failure is None
    committed = _committed(hosts.results)
    assert sorted(committed) == list(range(COUNT)), "every id committed exactly once"
    assert sink_ids(hosts.results) >= set(range(COUNT))
    assert driver.failed_jobs == 0, "no window failed: the moved executors' calls were retried"
    assert stats["components"]["ids"]["failed"] == 0, "no tree failed and replayed"
    locality = stats["locality"]
    windows = [(w["window"], w["locality"]) for w in stats["recent_windows"]]
    assert locality["refreshed_calls"] >= 1 and locality["replaced_calls"] >= 1, \
        f"{locality} windows {stats['windows']}: {windows}"
    retried = [r.getMessage() for r in caplog.records if "retried at the refreshed" in
               r.getMessage()]
    assert retried, "the driver logs the retry"
    assert not [r for r in caplog.records if "did not answer window" in r.getMessage()], \
        "no executor given up on (its trees failed)"
    later = [w for w in stats["recent_windows"] if w["window"] >= refreshed_from]
    assert later, "windows ran after the refresh"
    assert all(w["locality"]["refreshed_calls"] == 0 for w in later), \
        "a window started after the new endpoints arrived calls them directly"
