"""Test hosts in network namespaces (``scripts/test-hosts.sh``) running Spark standalone.

A Spark standalone master runs on host A and a worker on B and on C (``hosts``); with
``cluster_hosts``, ZooKeeper and Nimbus run on A and a supervisor on B and on C too. All of
it is removed after the module, even when it fails.

The tests are skipped, saying why, where the machine cannot make namespaces (not root, no
iproute2, a sandbox that forbids them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "test-hosts.sh"
SHARED = Path(os.environ.get("TEST_HOSTS_DIR", "/tmp/sparkstorm-hosts-tests"))
# TEST_HOSTS_SUBNET / _BRIDGE / _PREFIX (the script's own knobs) let two runs coexist
SUBNET = os.environ.get("TEST_HOSTS_SUBNET", "10.77.0")
PREFIX = os.environ.get("TEST_HOSTS_PREFIX", "ss")
"""Host X's network namespace is PREFIX + X (the script's TEST_HOSTS_PREFIX)."""
HOST_A, HOST_B, HOST_C = (f"{SUBNET}.{n}" for n in (1, 2, 3))
MASTER = f"spark://{HOST_A}:7077"


class TestHosts:
    """Runs commands on the test hosts."""

    __test__ = False

    def __init__(self) -> None:
        self.env = {**os.environ, "PYTHON": sys.executable, "TEST_HOSTS_DIR": str(SHARED)}
        self.shared = SHARED

    def script(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        """``scripts/test-hosts.sh ARGS`` (bounded)."""
        return subprocess.run(["bash", str(SCRIPT), *args], env=self.env, cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def run(self, host: str, *command: str, timeout: float = 240
            ) -> subprocess.CompletedProcess[str]:
        """Run ``command`` on ``host``."""
        return self.script("exec", host, *command, timeout=timeout)


def _unavailable() -> str | None:
    if sys.platform != "linux":
        return "test hosts need Linux network namespaces"
    if os.geteuid() != 0:
        return "test hosts need root (ip netns, veth, mounts)"
    for tool in ("ip", "nsenter", "unshare"):
        if shutil.which(tool) is None:
            return f"test hosts need {tool!r} (Debian's iproute2 / util-linux)"
    return None


CLUSTER_CONF: dict[str, object] = {
    "spark.ui.enabled": False,
    "topology.window.ms": 100,
    "topology.message.timeout.secs": 10,
    "nimbus.monitor.freq.secs": 1,
    "nimbus.task.timeout.secs": 10,
    "nimbus.task.launch.secs": 90,
    "supervisor.monitor.frequency.secs": 1,
    "supervisor.worker.shutdown.sleep.secs": 5,
    "supervisor.slots.ports": [6700, 6701],
    "storm.zookeeper.session.timeout": 5000,
}
"""The daemons' conf on every host (the script's ``TEST_HOSTS_CONF``): a lost worker is
reassigned after 10 s, lost trees replay after 10 s."""


@contextlib.contextmanager
def running_test_hosts(*stages: str) -> Iterator[TestHosts]:
    """Hosts up, then each of ``stages`` (``spark``, ``cluster``); all down at the end."""
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    test_hosts = TestHosts()
    test_hosts.script("down")  # a previous run killed before its teardown
    with tempfile.TemporaryDirectory(prefix="sparkstorm-hosts-conf-") as folder:
        conf = Path(folder) / "cluster.yaml"
        conf.write_text(yaml.safe_dump(CLUSTER_CONF))
        test_hosts.env["TEST_HOSTS_CONF"] = str(conf)
        try:
            up = test_hosts.script("up", timeout=60)
            if up.returncode != 0:
                pytest.skip(f"this machine cannot make test hosts: {up.stderr.strip()}")
            for stage in stages:
                started = test_hosts.script(stage)
                assert started.returncode == 0, started.stderr + _logs()
            yield test_hosts
        finally:
            test_hosts.script("down", timeout=60)
            shutil.rmtree(SHARED, ignore_errors=True)  # results and logs of the hosts


@pytest.fixture(scope="module")
def hosts() -> Iterator[TestHosts]:
    """Hosts A, B, C with Spark standalone (master on A, workers on B and C)."""
    with running_test_hosts("spark") as test_hosts:
        yield test_hosts


@pytest.fixture(scope="module")
def cluster_hosts() -> Iterator[TestHosts]:
    """Hosts with Spark standalone, ZooKeeper and Nimbus on A, a supervisor on B and C."""
    with running_test_hosts("spark", "cluster") as test_hosts:
        yield test_hosts


def _logs() -> str:
    return "\n".join(f"--- {p.name} ---\n{p.read_text(errors='replace')[-3000:]}"
                     for p in sorted(SHARED.glob("*.log")))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration/hosts" in str(item.fspath):
            item.add_marker(pytest.mark.spark)
