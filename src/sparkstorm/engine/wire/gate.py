"""The door of every TCP listener that authenticates by a first frame: bounded before trust.

A caller on another host must send the topology's token as its first frame
(``engine.wire.endpoint``). Before it has, a connection is nobody's: it must not hold a
thread, unbounded memory or a slot for long. :class:`AuthenticatedListener` owns such a
listener and one thread that accepts connections and reads their token frames without
blocking (a selector), so idle or hostile connections cost a file descriptor and a few
bytes each, never a thread. A connection is closed when:

- its token frame is not complete within the handshake deadline
  (``topology.tcp.handshake.timeout.secs``: the whole frame, so trickling a byte at a time
  does not extend it);
- its frame announces more than :data:`MAX_TOKEN_BYTES` or is not the token;
- the process already holds ``topology.tcp.max.connections`` TCP connections on this
  listener (handshaking or served): closed at once, on accept.

A caller that sent the token is handed, blocking again, to ``serve`` on a thread of its
own, as before: nothing changes after authentication (no per-request cost). Refusals are
logged at most once per :data:`LOG_EVERY_SECS` per listener, with how many there were.

With ``tls`` (``engine.wire.secure``), each connection first completes a mutual TLS
handshake, driven by the same selector and under the same deadline, and the token frame is
read inside the channel: a caller without a certificate of the cluster CA never gets to
send one, and nothing of the conversation is readable or replayable on the network.

Example:
    >>> import socket
    >>> from sparkstorm.engine.wire.frames import send_frame, recv_frame
    >>> def echo(conn):
    ...     send_frame(conn, recv_frame(conn))
    >>> door = AuthenticatedListener(socket.create_server(("127.0.0.1", 0)), "s3cret", echo,
    ...                              name="doctest", handshake_timeout=5, max_connections=4)
    >>> with socket.create_connection(door.address) as caller:
    ...     send_frame(caller, b"s3cret"); send_frame(caller, b"hello"); recv_frame(caller)
    b'hello'
    >>> door.close()
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import selectors
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

MAX_TOKEN_BYTES = 4096
"""Longest first frame read before authentication: a token is tens of bytes."""
LOG_EVERY_SECS = 10.0
"""Refused connections are logged at most once per this many seconds per listener."""
_ACCEPT_BURST = 64
"""Connections accepted per wake-up, so expiring handshakes never waits behind a flood."""
_IDLE_WAKE_SECS = 1.0
_LENGTH = struct.Struct(">I")

HANDSHAKE_TIMEOUT_KEY = "topology.tcp.handshake.timeout.secs"
MAX_CONNECTIONS_KEY = "topology.tcp.max.connections"


@dataclass
class _Handshake:
    """A connection that has not sent its token yet."""

    deadline: float
    buffer: bytearray = field(default_factory=bytearray)
    length: int | None = None
    tls_pending: bool = False
    """A TLS handshake to finish before the token frame."""


class _RateLimitedLog:
    """Warn about refused connections at most once per :data:`LOG_EVERY_SECS`."""

    def __init__(self, name: str, clock: Callable[[], float]) -> None:
        self.name = name
        self.clock = clock
        self.counts: dict[str, int] = {}
        self.last = -LOG_EVERY_SECS

    def refused(self, why: str) -> None:
        self.counts[why] = self.counts.get(why, 0) + 1
        now = self.clock()
        if now - self.last < LOG_EVERY_SECS:
            return
        self.last = now
        summary = ", ".join(f"{n} {reason}" for reason, n in sorted(self.counts.items()))
        self.counts.clear()
        logger.warning("%s: TCP connections closed before authentication (since the last "
                       "such message, at most %.0f s ago): %s", self.name, LOG_EVERY_SECS,
                       summary)


class AuthenticatedListener:
    """Accept on ``listener``; serve each caller that sends ``token`` first on its own thread.

    Args:
        listener: a bound, listening TCP socket (owned from now on: :meth:`close` closes it).
        token: what a caller must send as its first frame.
        serve: called on a new thread with each authenticated connection (blocking, no
            timeout); the connection is closed when it returns.
        name: who listens, for logs and thread names (``"executor 3"``).
        handshake_timeout: seconds a connection has to send its whole token frame.
        max_connections: TCP connections held at once (handshaking and served); more are
            closed on accept.
        tls: wrap every caller in this server context (mutual TLS) before its token.
    """

    def __init__(self, listener: socket.socket, token: str,
                 serve: Callable[[socket.socket], None], *, name: str,
                 handshake_timeout: float, max_connections: int,
                 clock: Callable[[], float] = time.monotonic,
                 tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.listener = listener
        self.token = token.encode()
        self.serve = serve
        self.name = name
        self.handshake_timeout = float(handshake_timeout)
        self.max_connections = max(1, int(max_connections))
        self.clock = clock
        self.address: tuple[str, int] = listener.getsockname()[:2]
        self.served = 0
        """Authenticated connections being served now."""
        self._lock = threading.Lock()
        self._pending: dict[socket.socket, _Handshake] = {}
        self._log = _RateLimitedLog(name, clock)
        self._closed = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector = selectors.DefaultSelector()
        listener.setblocking(False)
        self._selector.register(listener, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(target=self._run, name=f"{name} tcp door",
                                        daemon=True)
        self._thread.start()

    @property
    def open_connections(self) -> int:
        """TCP connections held now: handshaking and served."""
        with self._lock:
            return len(self._pending) + self.served

    def close(self) -> None:
        """Stop accepting; close the listener and the connections still handshaking.

        Connections already served end as their ``serve`` does.
        """
        if self._closed.is_set():
            return
        self._closed.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        if self._thread is not threading.current_thread():
            self._thread.join(5.0)

    # -- the door's thread ------------------------------------------------------------
    def _run(self) -> None:
        try:
            while not self._closed.is_set():
                for key, _ in self._selector.select(self._next_timeout()):
                    if key.data == "accept":
                        self._accept()
                    elif key.data == "wake":
                        self._drain_wake()
                    else:
                        self._read(key.fileobj, key.data)  # type: ignore[arg-type]
                self._expire()
        except Exception:
            logger.exception("%s: the TCP listener's door failed; it stops accepting",
                             self.name)
        finally:
            self._shut()

    def _next_timeout(self) -> float:
        """Seconds until the first handshake deadline, at most one.

        So a listener its owner closed instead of calling :meth:`close` is noticed.
        """
        if self.listener.fileno() == -1:
            self._closed.set()
            return 0.0
        if not self._pending:
            return _IDLE_WAKE_SECS
        first = min(h.deadline for h in self._pending.values())
        return min(_IDLE_WAKE_SECS, max(0.0, first - self.clock()))

    def _accept(self) -> None:
        for _ in range(_ACCEPT_BURST):
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                if self.listener.fileno() == -1:  # closed under us
                    self._closed.set()
                return
            with self._lock:
                full = len(self._pending) + self.served >= self.max_connections
                if not full:
                    handshake = _Handshake(self.clock() + self.handshake_timeout)
                    self._pending[conn] = handshake
            if full:
                conn.close()
                self._log.refused(f"over topology.tcp.max.connections "
                                  f"({self.max_connections})")
                continue
            conn.setblocking(False)
            if self.tls is not None:
                try:
                    conn = self._wrap(conn, handshake)
                except (ssl.SSLError, OSError):
                    continue  # _wrap dropped it
            self._selector.register(conn, selectors.EVENT_READ, handshake)

    def _wrap(self, conn: socket.socket, handshake: _Handshake) -> socket.socket:
        """``conn`` in TLS, its handshake left to :meth:`_read` (non-blocking)."""
        assert self.tls is not None
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # see secure_caller
            wrapped = self.tls.wrap_socket(conn, server_side=True,
                                           do_handshake_on_connect=False)
        except (ssl.SSLError, OSError):
            with self._lock:
                self._pending.pop(conn, None)
            conn.close()
            self._log.refused("TLS refused")
            raise
        with self._lock:
            self._pending[wrapped] = self._pending.pop(conn)
        handshake.tls_pending = True
        return wrapped

    def _shake(self, conn: socket.socket, handshake: _Handshake) -> bool:
        """Advance ``conn``'s TLS handshake; whether it is done (False: dropped or waiting)."""
        try:
            conn.do_handshake()  # type: ignore[attr-defined]
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False
        except (ssl.SSLError, OSError) as exc:
            self._drop(conn, f"a failed TLS handshake (no certificate of the cluster CA?: "
                             f"{type(exc).__name__})")
            return False
        handshake.tls_pending = False
        return True

    def _read(self, conn: socket.socket, handshake: _Handshake) -> None:
        """Read what ``conn`` has of its token frame, never past it (its request follows)."""
        if handshake.tls_pending and not self._shake(conn, handshake):
            return
        while True:  # the length, then the token, in one wake-up when both are there
            want = _LENGTH.size if handshake.length is None else handshake.length
            if len(handshake.buffer) < want:
                try:
                    chunk = conn.recv(want - len(handshake.buffer))
                except (BlockingIOError, InterruptedError, ssl.SSLWantReadError,
                        ssl.SSLWantWriteError):
                    return
                except OSError:
                    chunk = b""
                if not chunk:
                    self._drop(conn, "closed by the caller before its token")
                    return
                handshake.buffer += chunk
                if len(handshake.buffer) < want:
                    return
            if handshake.length is not None:
                break
            (length,) = _LENGTH.unpack(handshake.buffer)
            if length > MAX_TOKEN_BYTES:
                self._drop(conn, f"a first frame over {MAX_TOKEN_BYTES} bytes")
                return
            handshake.length, handshake.buffer = length, bytearray()
        if not hmac.compare_digest(bytes(handshake.buffer), self.token):
            self._drop(conn, "without the topology's token")
            return
        self._selector.unregister(conn)
        with self._lock:
            del self._pending[conn]
            self.served += 1
        try:
            conn.setblocking(True)
            threading.Thread(target=self._serve, args=(conn,), name=f"{self.name} tcp",
                             daemon=True).start()
        except Exception:
            self._served_end(conn)
            raise

    def _serve(self, conn: socket.socket) -> None:
        try:
            self.serve(conn)
        finally:
            self._served_end(conn)

    def _served_end(self, conn: socket.socket) -> None:
        try:
            conn.close()
        finally:
            with self._lock:
                self.served -= 1

    def _expire(self) -> None:
        if not self._pending:
            return
        now = self.clock()
        late = [c for c, h in self._pending.items() if h.deadline <= now]
        for conn in late:
            self._drop(conn, f"no token within topology.tcp.handshake.timeout.secs "
                             f"({self.handshake_timeout:g} s)")

    def _drop(self, conn: socket.socket, why: str) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn)
        with self._lock:
            self._pending.pop(conn, None)
        conn.close()
        self._log.refused(why)

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(64):
                pass
        except (BlockingIOError, InterruptedError, OSError):
            pass

    def _shut(self) -> None:
        for conn in list(self._pending):
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(conn)
            conn.close()
        with self._lock:
            self._pending.clear()
        self._selector.close()
        self.listener.close()
        self._wake_r.close()
        self._wake_w.close()
