"""Test hosts in network namespaces (``scripts/test-hosts.sh``) running Spark standalone.

A Spark standalone master runs on host A and a worker on B and on C; all of it is removed
after the module, even when it fails.

The tests are skipped, saying why, where the machine cannot make namespaces (not root, no
iproute2, a sandbox that forbids them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

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


@pytest.fixture(scope="module")
def hosts() -> Iterator[TestHosts]:
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    test_hosts = TestHosts()
    test_hosts.script("down")  # a previous run killed before its teardown
    try:
        up = test_hosts.script("up", timeout=60)
        if up.returncode != 0:
            pytest.skip(f"this machine cannot make test hosts: {up.stderr.strip()}")
        spark = test_hosts.script("spark")
        assert spark.returncode == 0, spark.stderr + _logs()
        yield test_hosts
    finally:
        test_hosts.script("down", timeout=60)
        shutil.rmtree(SHARED, ignore_errors=True)  # results and logs of the hosts


def _logs() -> str:
    return "\n".join(f"--- {p.name} ---\n{p.read_text(errors='replace')[-3000:]}"
                     for p in sorted(SHARED.glob("*.log")))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration/hosts" in str(item.fspath):
            item.add_marker(pytest.mark.spark)
