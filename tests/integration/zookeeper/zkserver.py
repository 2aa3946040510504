"""A real ZooKeeper server for the tests: Debian's ``zookeeper`` package run through java.

The server listens on a free loopback port with its own data directory, config and log file,
so tests never touch a system ZooKeeper. ``ZOOKEEPER_HOME`` may point to an unpacked Apache
ZooKeeper release instead of the Debian package.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from sparkstorm.child_process import die_with_parent
from sparkstorm.cluster.store.devzookeeper import (
    DEBIAN_JAR,
    ServerSettings,
    classpath,
    four_letter,
    server_command,
    serving,
)
from sparkstorm.testing.polling import wait_for

__all__ = ["DEBIAN_JAR", "ZooKeeperServer", "classpath", "four_letter", "free_port", "serving"]


def free_port() -> int:
    """Return a loopback port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ZooKeeperServer:
    """One standalone ZooKeeper server process.

    Args:
        workdir: holds ``zoo.cfg``, ``data/`` and ``server.log``; kept across restarts so
            that persistent data survives them.
        port: the client port; a free one by default. Restarts reuse it.
    """

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.workdir = workdir
        self.port = port or free_port()
        self.log_file = workdir / "server.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def hosts(self) -> str:
        """The connect string, ``127.0.0.1:<port>``."""
        return f"127.0.0.1:{self.port}"

    def _write_config(self) -> Path:
        # short ticks: tests ask for short sessions (400 ms), and keep 20 s ones
        settings = ServerSettings(self.port, self.workdir / "data", tick_ms=200,
                                  min_session_timeout_ms=400, max_session_timeout_ms=60000)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        cfg = self.workdir / "zoo.cfg"
        cfg.write_text(settings.zoo_cfg())
        return cfg

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until it serves clients (``srvr`` names its mode).

        Raises:
            RuntimeError: no ZooKeeper or no java is installed.
            TimeoutError: the server did not come up; the message holds its log's tail.
        """
        cfg = self._write_config()
        command = server_command(cfg)  # DevZooKeeperError (a RuntimeError) when missing
        with self.log_file.open("ab") as log:
            # dies with the test run even when pytest is killed before its teardown runs
            self._proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True,
                                          preexec_fn=die_with_parent)
        try:
            wait_for(self._ready, timeout, interval=0.05,
                     message=f"ZooKeeper on port {self.port} serving clients")
        except TimeoutError as exc:
            self.stop()
            msg = f"{exc}; server log tail:\n{self.log_tail(0)}"
            raise TimeoutError(msg) from exc

    def _ready(self) -> bool:
        if self._proc is not None and self._proc.poll() is not None:
            msg = f"ZooKeeper exited with {self._proc.returncode}:\n{self.log_tail(0)}"
            raise RuntimeError(msg)
        return serving(self.port)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and wait until its port closes."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        wait_for(lambda: four_letter(self.port, "ruok", 0.2) == "", 10, interval=0.05,
                 message=f"ZooKeeper port {self.port} closed")

    def restart(self) -> None:
        """Stop and start again on the same port and data directory."""
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def log_size(self) -> int:
        """Return the log's current size, a mark for :meth:`log_tail`."""
        return self.log_file.stat().st_size if self.log_file.exists() else 0

    def log_tail(self, since: int, lines: int = 200) -> str:
        """Return the last ``lines`` lines of the log written after byte ``since``."""
        if not self.log_file.exists():
            return "(no server log)"
        with self.log_file.open("rb") as log:
            log.seek(since)
            text = log.read().decode(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

