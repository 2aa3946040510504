"""A real Redis server on a free loopback port, one per test session.

Debian's ``redis-server`` (``make services``); each test gets its own database, flushed first.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process without persistence, in its own folder."""

    def __init__(self, workdir: Path) -> None:
        self.workdir, self.port = workdir, free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir), "--databases", "64",
             "--logfile", str(self.workdir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        client = redis.Redis(port=self.port)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        wait_for(answers, timeout=20, message=f"redis-server on port {self.port}")
        client.close()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed; run `make services`")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


_databases = iter(range(1, 64))


@pytest.fixture
def redis_config(redis_server: RedisServer) -> dict[str, Any]:
    """Storm's provider config pointing at a fresh database of the test server."""
    import redis

    database = next(_databases)
    client = redis.Redis(port=redis_server.port, db=database)
    client.flushdb()
    client.close()
    return {"jedisPoolConfig": {"host": "127.0.0.1", "port": redis_server.port,
                                "database": database, "timeout": 5000}}
