"""A standalone ZooKeeper server from an installed distribution, run through ``java``.

The server is Debian's ``zookeeper`` package (``/usr/share/java/zookeeper.jar``, whose
manifest names every other jar; ``make services`` or ``apt-get install zookeeper``), or an
unpacked Apache ZooKeeper release named by ``ZOOKEEPER_HOME``. ``sparkstorm dev-zookeeper``
runs one in the foreground (Storm's ``storm dev-zookeeper``): on ``storm.zookeeper.port``,
bound to ``dev.zookeeper.bind.address`` (loopback unless set), with its data in
``dev.zookeeper.path`` (unset: ``<storm.local.dir>/dev-zookeeper``). The test suites start
their servers from the same pieces (:func:`classpath`, :meth:`ServerSettings.zoo_cfg`,
:func:`server_command`).

Example:
    >>> cfg = ServerSettings(2181, Path("/srv/zk")).zoo_cfg()
    >>> [line for line in cfg.splitlines() if "client" in line.lower()]
    ['clientPort=2181', 'clientPortAddress=127.0.0.1', 'maxClientCnxns=0']
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sparkstorm.child_process import die_with_parent
from sparkstorm.cluster.store.errors import DevZooKeeperError
from sparkstorm.config import conf_int, conf_optional_str, local_dir

logger = logging.getLogger(__name__)

DEBIAN_JAR = Path("/usr/share/java/zookeeper.jar")
"""The Debian package's server jar; its manifest's Class-Path names every other jar."""

MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
INSTALL_HINT = ("install it with 'make services' (scripts/install-zookeeper.sh) or "
                "'apt-get install zookeeper', or point ZOOKEEPER_HOME at an unpacked Apache "
                "ZooKeeper release")

_LOG_BINDING = Path("/usr/share/java/slf4j-simple.jar")  # logs to stderr
# Small heap and C1 only: a development or test server does little; JVM start-up is the cost.
_JVM_OPTIONS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.net.preferIPv4Stack=true")


@dataclass(frozen=True)
class ServerSettings:
    """What goes into one server's ``zoo.cfg``.

    Attributes:
        port: the client port.
        address: the address the client port is bound to (loopback by default).
        data_dir: snapshots and transaction logs.
        tick_ms: ZooKeeper's ``tickTime``; session timeouts default to 2 and 20 ticks.
        min_session_timeout_ms: ``minSessionTimeout`` (None: ZooKeeper's default).
        max_session_timeout_ms: ``maxSessionTimeout`` (None: ZooKeeper's default).
    """

    port: int
    data_dir: Path
    tick_ms: int = 2000
    min_session_timeout_ms: int | None = None
    max_session_timeout_ms: int | None = None
    address: str = "127.0.0.1"

    def zoo_cfg(self) -> str:
        """The config file's text.

        Bound to :attr:`address` only, no admin web server (it would take port 8080), the
        ``ruok`` and ``srvr`` four-letter words for health checks.
        """
        lines = [f"tickTime={self.tick_ms}", f"dataDir={self.data_dir}",
                 f"clientPort={self.port}", f"clientPortAddress={self.address}", "maxClientCnxns=0",
                 "admin.enableServer=false", "4lw.commands.whitelist=ruok,srvr"]
        if self.min_session_timeout_ms is not None:
            lines.append(f"minSessionTimeout={self.min_session_timeout_ms}")
        if self.max_session_timeout_ms is not None:
            lines.append(f"maxSessionTimeout={self.max_session_timeout_ms}")
        return "\n".join(lines) + "\n"


def classpath(env: Mapping[str, str] = os.environ) -> str | None:
    """The server's Java classpath, or None when no ZooKeeper is installed."""
    home = env.get("ZOOKEEPER_HOME")
    if home:
        jars = sorted(Path(home).glob("lib/*.jar")) + sorted(Path(home).glob("*.jar"))
        return os.pathsep.join(str(j) for j in jars) if jars else None
    if not DEBIAN_JAR.is_file():
        return None
    parts = [DEBIAN_JAR] + ([_LOG_BINDING] if _LOG_BINDING.is_file() else [])
    return os.pathsep.join(str(p) for p in parts)


def find_java(env: Mapping[str, str] = os.environ) -> str | None:
    """``$JAVA_HOME/bin/java`` when it exists, else ``java`` on the ``PATH``."""
    home = env.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "java", os.X_OK):
        return str(Path(home) / "bin" / "java")
    return shutil.which("java", path=env.get("PATH", ""))


def server_command(cfg: Path, env: Mapping[str, str] = os.environ) -> list[str]:
    """The command line that runs a server on config file ``cfg``.

    Raises:
        DevZooKeeperError: ``DEV_ZOOKEEPER_JAR_MISSING`` or ``DEV_ZOOKEEPER_JAVA_MISSING``.
    """
    cp = classpath(env)
    if cp is None:
        where = (f"no jars under ZOOKEEPER_HOME={env['ZOOKEEPER_HOME']}"
                 if env.get("ZOOKEEPER_HOME") else f"{DEBIAN_JAR} does not exist")
        msg = f"cannot run a ZooKeeper server: {where}; {INSTALL_HINT}"
        raise DevZooKeeperError(msg, code="DEV_ZOOKEEPER_JAR_MISSING")
    java = find_java(env)
    if java is None:
        msg = ("cannot run a ZooKeeper server: no 'java' on the PATH (nor in JAVA_HOME); "
               "ZooKeeper needs a Java runtime: 'apt-get install default-jre-headless', or "
               f"{INSTALL_HINT} (the package pulls Java in)")
        raise DevZooKeeperError(msg, code="DEV_ZOOKEEPER_JAVA_MISSING")
    return [java, *_JVM_OPTIONS, "-cp", cp, MAIN_CLASS, str(cfg)]


def four_letter(port: int, word: str, timeout: float = 1.0, address: str = "127.0.0.1") -> str:
    """Send a four-letter command (``ruok``, ``srvr``) to the server at ``address``.

    Returns its answer, or "" when nothing answers.
    """
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            sock.sendall(word.encode())
            chunks = []
            while chunk := sock.recv(4096):
                chunks.append(chunk)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


def serving(port: int, address: str = "127.0.0.1", timeout: float = 1.0) -> bool:
    """Whether the server at ``address:port`` serves clients.

    ``ruok`` answers ``imok`` as soon as the port listens, while the server may still be
    loading its database and closing every session ("ZooKeeperServer not running"); ``srvr``
    names the server's mode only once it serves.
    """
    return "Mode:" in four_letter(port, "srvr", timeout, address)


def dev_settings(conf: Mapping[str, object]) -> ServerSettings:
    """The dev server's settings from a sparkstorm conf.

    ``storm.zookeeper.port``, ``dev.zookeeper.path`` (unset:
    ``<storm.local.dir>/dev-zookeeper``) and ``dev.zookeeper.bind.address``.
    """
    path = conf_optional_str(conf, "dev.zookeeper.path")
    folder = Path(path).resolve() if path else local_dir(conf) / "dev-zookeeper"
    address = conf_optional_str(conf, "dev.zookeeper.bind.address") or "127.0.0.1"
    return ServerSettings(conf_int(conf, "storm.zookeeper.port"), folder, address=address)


class DevZooKeeper:
    """One server, a child of this process that dies with it (Linux), its output on ours.

    Args:
        settings: port and data directory; ``zoo.cfg`` goes into the data directory.
    """

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until it serves clients (see :func:`serving`).

        Raises:
            DevZooKeeperError: ``DEV_ZOOKEEPER_JAR_MISSING``, ``DEV_ZOOKEEPER_JAVA_MISSING``;
                ``DEV_ZOOKEEPER_EXITED`` when it stops or stays silent (its own log, just
                above on the terminal, says why: a port in use, a bad data directory).
        """
        data = self.settings.data_dir
        data.mkdir(parents=True, exist_ok=True)
        cfg = data / "zoo.cfg"
        cfg.write_text(self.settings.zoo_cfg())
        command = server_command(cfg)
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        preexec_fn=die_with_parent)
        deadline = time.monotonic() + timeout
        while not serving(self.settings.port, self.settings.address, 0.5):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                msg = (f"the ZooKeeper server on {self.settings.address}:{self.settings.port} "
                       f"{'exited' if self.process.returncode else 'did not answer'} "
                       f"(exit code {self.process.returncode}); see its log above; is the port "
                       "taken, or the address not this host's? change them with -c "
                       "storm.zookeeper.port=N or -c dev.zookeeper.bind.address=IP")
                raise DevZooKeeperError(msg, code="DEV_ZOOKEEPER_EXITED")
            time.sleep(0.1)

    def wait(self, stop: threading.Event) -> int | None:
        """Block until ``stop`` is set (None) or the server exits (its exit code)."""
        assert self.process is not None, "start() first"
        while not stop.wait(0.2):
            code = self.process.poll()
            if code is not None:
                # a terminal's Ctrl-C reaches the server too, which may exit first
                return None if stop.wait(0.5) else code
        return None

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the server, SIGKILL it after ``grace`` seconds; wait until it is gone."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
