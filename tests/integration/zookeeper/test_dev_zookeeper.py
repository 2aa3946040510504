"""``sparkstorm dev-zookeeper`` as a real process.

A kazoo client creates and reads a node, SIGTERM stops it cleanly; without ZooKeeper or Java it
exits 2 with a code and a hint.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.zookeeper.backends import REPO, ensure_zookeeper_installed
from tests.integration.zookeeper.zkserver import four_letter, free_port, serving

pytestmark = pytest.mark.timeout(120)


def _dev_zookeeper(tmp_path: Path, *conf: str,
                   env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sparkstorm.cli.main", "dev-zookeeper",
         "-c", f"storm.local.dir={tmp_path / 'local'}", *conf],
        cwd=REPO, env=env or dict(os.environ), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """The processes a test started; their groups are killed if the test leaves them."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def test_dev_zookeeper_serves_kazoo_and_stops_on_sigterm(
        tmp_path: Path, processes: list[subprocess.Popen[str]]) -> None:
    ensure_zookeeper_installed()
    from kazoo.client import KazooClient  # type: ignore[import-untyped]

    port = free_port()
    server = _dev_zookeeper(tmp_path, "-c", f"storm.zookeeper.port={port}")
    processes.append(server)
    wait_for(lambda: serving(port) or server.poll() is not None, 60,
             message=f"dev-zookeeper answering on {port}")
    assert server.poll() is None, server.communicate()[0]

    client = KazooClient(hosts=f"127.0.0.1:{port}", timeout=10)
    client.start(timeout=30)
    try:
        client.create("/sparkstorm-dev/hello", b"world", makepath=True)
        assert client.get("/sparkstorm-dev/hello")[0] == b"world"
    finally:
        client.stop()
        client.close()

    data = tmp_path / "local" / "dev-zookeeper"
    cfg = (data / "zoo.cfg").read_text()
    assert f"clientPort={port}\n" in cfg and "clientPortAddress=127.0.0.1\n" in cfg
    assert (data / "version-2").is_dir(), "its data lives under <storm.local.dir>"

    server.send_signal(signal.SIGTERM)
    output, _ = server.communicate(timeout=30)
    assert server.returncode == 0, output
    assert f"dev-zookeeper: serving on 127.0.0.1:{port}" in output
    assert four_letter(port, "ruok", 0.2) == "", "the server is gone with it"


@pytest.mark.parametrize(("env_change", "code", "hint"), [
    ({"ZOOKEEPER_HOME": "{empty}"}, "DEV_ZOOKEEPER_JAR_MISSING", "make services"),
    ({"PATH": "{empty}", "JAVA_HOME": ""}, "DEV_ZOOKEEPER_JAVA_MISSING", "apt-get install"),
])
def test_missing_zookeeper_or_java_is_a_clear_error(
        tmp_path: Path, processes: list[subprocess.Popen[str]], env_change: dict[str, str],
        code: str, hint: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, **{k: v.format(empty=empty) for k, v in env_change.items()}}
    if "PATH" in env_change and not (Path("/usr/share/java/zookeeper.jar").is_file()
                                     or os.environ.get("ZOOKEEPER_HOME")):
        pytest.skip("no ZooKeeper installed: the jar check comes first")
    server = _dev_zookeeper(tmp_path, "-c", f"storm.zookeeper.port={free_port()}", env=env)
    processes.append(server)
    output, _ = server.communicate(timeout=60)
    assert server.returncode == 2, output
    assert f"[{code}]" in output and hint in output, output


def test_a_taken_port_is_a_clear_error(tmp_path: Path,
                                       processes: list[subprocess.Popen[str]]) -> None:
    ensure_zookeeper_installed()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = _dev_zookeeper(tmp_path, "-c", f"storm.zookeeper.port={port}")
        processes.append(server)
        output, _ = server.communicate(timeout=60)
    assert server.returncode == 2, output
    assert "[DEV_ZOOKEEPER_EXITED]" in output and "storm.zookeeper.port" in output, output


def test_the_server_dies_with_the_command(tmp_path: Path,
                                          processes: list[subprocess.Popen[str]]) -> None:
    ensure_zookeeper_installed()
    port = free_port()
    server = _dev_zookeeper(tmp_path, "-c", f"storm.zookeeper.port={port}")
    processes.append(server)
    wait_for(lambda: serving(port) or server.poll() is not None, 60,
             message=f"dev-zookeeper answering on {port}")
    os.kill(server.pid, signal.SIGKILL)  # the command only, not its process group
    server.wait(10)
    wait_for(lambda: four_letter(port, "ruok", 0.2) == "", 30,
             message="the ZooKeeper server gone with its command")
