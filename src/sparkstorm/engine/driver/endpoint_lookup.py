"""Where an executor answers now: the driver's lookup, asked by Spark tasks mid-window.

A window's stages carry the executors' endpoints as they were when the window started. When
a worker moves or restarts its executors (a host lost, a worker killed and restarted on
another port), the task that hits the old address asks the driver where the executor is
now and retries there (``engine.spark.stage``), instead of failing its window's trees at once.

The driver serves its endpoint map (``ExecutorPool.where``, refreshed by the workers'
heartbeats through Nimbus) on a small TCP listener: tasks may run on any host, so a file in
the driver's private folder would not do. It speaks the executors' framing and
authentication (the topology's token first, then one request frame, one reply frame):

- request: ``{"cmd": "where", "gid": G}``;
- reply: ``[version, path, host, port, pid]`` (``version`` is ``pool.endpoints_version``)
  or None for an executor the driver does not know.

No connection is kept: every question opens and closes its own, so a changed map leaves no
stale connection behind (executor calls do the same, one connection per call).

Example:
    >>> old = Located(3, Endpoint("/a/e1.sock", "10.0.0.3", 4001), 11)
    >>> refresh_decision(old.endpoint, 11, old)
    'wait'
    >>> refresh_decision(old.endpoint, 11, Located(4, Endpoint("/b/e1.sock", "10.0.0.2", 4007), 11))
    'moved'
    >>> refresh_decision(old.endpoint, 11, Located(4, old.endpoint, 12))
    'replaced'
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.frames import pack, recv_frame, send_frame, unpack
from sparkstorm.engine.wire.gate import AuthenticatedListener
from sparkstorm.engine.wire.protocol import WhereRequest, decode_request
from sparkstorm.engine.wire.secure import active, listener_tls, secure_caller

logger = logging.getLogger(__name__)

Decision = Literal["wait", "moved", "replaced"]
"""What a task does after failing to reach an executor and asking the lookup:

- ``wait``: the executor is still said to be where the task tried (or the lookup did not
  answer): try that address again, until the task's bound;
- ``moved``: the same process answers at another address: resend the window there, where
  it is answered from the executor's memory if it had served it;
- ``replaced``: a new process (its state is gone) answers, at the old address or another:
  resend the window there; it serves it from scratch.
"""


@dataclass(frozen=True)
class Located:
    """One lookup answer: the map's version, the executor's endpoint and its process id."""

    version: int
    endpoint: Endpoint
    pid: int


def refresh_decision(tried: Endpoint, pid: int | None, found: Located | None) -> Decision:
    """What to do after ``tried`` (with process ``pid``, None: unknown) did not answer.

    ``found`` is the lookup's answer (None: no answer, or an executor it does not know).
    """
    if found is None:
        return "wait"
    if pid is not None and found.pid != pid:
        return "replaced"
    return "wait" if found.endpoint == tried else "moved"


Where = Callable[[int], "tuple[int, Endpoint, int] | None"]
"""The driver's answer for one gid: ``(version, endpoint, pid)``, None when unknown."""


class EndpointLookup:
    """The driver's endpoint lookup: a TCP listener answering "where is executor G now".

    Args:
        host: the address to listen on (the driver's advertised host: tasks on every host
            must reach it).
        token: what callers must send first (the topology's).
        where: the current answer for a gid.
    """

    def __init__(self, host: str, token: str, where: Where,
                 limits: tuple[float, int] = (5.0, 256)) -> None:
        self.token = token
        self.where = where
        deadline, most = limits
        listener = socket.create_server((host, 0))
        self.address: tuple[str, int] = (host, int(listener.getsockname()[1]))
        """Where tasks ask (picklable: it rides every stage)."""
        # callers send the token first, within the handshake deadline, a bounded number at once
        self._door = AuthenticatedListener(listener, token, self._answer,
                                           name="endpoint lookup", handshake_timeout=deadline,
                                           max_connections=most,
                                           tls=listener_tls(active()))  # as its pool's

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5.0)  # a caller that stalls must not hold a thread for ever
        try:
            request = decode_request(unpack(recv_frame(conn)))
            if not isinstance(request, WhereRequest):
                msg = f"the endpoint lookup answers only {WhereRequest.TAG!r} requests"
                raise ValueError(msg)
            found = self.where(request.gid)
            reply: Any = None
            if found is not None:
                version, endpoint, pid = found
                reply = [version, endpoint.path, endpoint.host, endpoint.port, pid]
            send_frame(conn, pack(reply))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("endpoint lookup: bad request: %s", exc)

    def close(self) -> None:
        """Stop answering and release the port."""
        self._door.close()


def look_up(address: tuple[str, int], token: str, gid: int, timeout: float) -> Located | None:
    """Ask the driver's lookup at ``address`` where executor ``gid`` answers now.

    Returns:
        None when the lookup does not answer within ``timeout`` seconds or does not know
        ``gid`` (the caller tries the address it has again).
    """
    try:
        with secure_caller(socket.create_connection(address, timeout), address[0]) as sock:
            send_frame(sock, token.encode())
            send_frame(sock, pack(WhereRequest(gid).to_wire()))
            reply = unpack(recv_frame(sock))
    except (OSError, ValueError) as exc:
        logger.debug("endpoint lookup at %s did not answer for executor %d: %s", address,
                     gid, exc)
        return None
    if reply is None:
        return None
    version, path, host, port, pid = reply
    return Located(int(version), Endpoint(str(path), str(host), int(port)), int(pid))
