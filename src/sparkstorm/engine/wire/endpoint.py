"""Where an executor answers, and how a caller on any host reaches it.

Every executor listens on a Unix socket (callers on its own host: the fast path) and on TCP
(callers on other hosts: Spark tasks that ran elsewhere). A TCP connection must first send
the topology's token, so nothing else on the network can drive an executor; with
``topology.tcp.tls`` it does so inside mutual TLS (``engine.wire.secure``). The caller
picks the Unix socket when its path exists on the caller's host, TCP otherwise: correctness
never depends on where Spark ran a task (``docs/multi-host.md``: TCP costs about 10 %
more than a Unix socket once serialization is counted).

Example:
    >>> import tempfile
    >>> endpoint = Endpoint(tempfile.gettempdir() + "/no-such-executor.sock", "127.0.0.1", 1)
    >>> endpoint.local()
    False
"""

from __future__ import annotations

import hmac
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from sparkstorm.config.access import conf_optional_str
from sparkstorm.config.loader import DEFAULT_SPARK_MASTER
from sparkstorm.engine.wire.frames import recv_frame, send_frame
from sparkstorm.engine.wire.secure import secure_caller


@dataclass(frozen=True)
class Endpoint:
    """An executor's addresses: its Unix socket path and its TCP host and port."""

    path: str
    host: str
    port: int

    def local(self) -> bool:
        """Whether the executor runs on this host (its socket is visible here)."""
        return os.path.exists(self.path)

    def connect(self, token: str, timeout: float | None,
                connect_timeout: float | None = None) -> socket.socket:
        """A connection to the executor, authenticated when it is over TCP.

        ``timeout`` is the socket's; ``connect_timeout`` bounds a TCP connect on its own (a
        host cut off answers no SYN: the caller's retry bound, not a long answer bound,
        must decide when to look its address up again).

        Raises:
            OSError: the executor does not accept connections (yet).
        """
        if self.local():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(timeout)
                sock.connect(self.path)
            except OSError:
                sock.close()
                raise
            return sock
        sock = socket.create_connection(
            (self.host, self.port), timeout if connect_timeout is None else connect_timeout)
        try:
            sock = secure_caller(sock, self.host)  # TLS when the process's setting says
            if connect_timeout is not None:
                sock.settimeout(timeout)
            send_frame(sock, token.encode())
        except OSError:
            sock.close()
            raise
        return sock


def authenticated(conn: socket.socket, token: str) -> bool:
    """Read a TCP caller's first frame; whether it is the topology's token."""
    try:
        offered = recv_frame(conn)
    except (ConnectionError, OSError):
        return False
    return hmac.compare_digest(offered, token.encode())


def advertised_host(conf: Mapping[str, object]) -> str:
    """The address executors listen on for TCP callers.

    ``storm.local.hostname`` when set (Storm's key for the address a host reports), else
    loopback for a ``local`` Spark master (nothing leaves the machine), else the address
    Spark's driver uses (``spark.driver.host``) or this host name's address.
    """
    configured = conf_optional_str(conf, "storm.local.hostname")
    if configured:
        return configured
    if str(conf.get("spark.master") or DEFAULT_SPARK_MASTER).startswith("local"):
        return "127.0.0.1"
    driver_host = conf.get("spark.driver.host")
    if isinstance(driver_host, str) and driver_host:
        return driver_host
    return socket.gethostbyname(socket.gethostname())
