"""The ZooKeeper state store, through kazoo: the only module of sparkstorm that imports kazoo.

Every operation waits for a connection and retries connection losses with exponential
backoff (``storm.zookeeper.retry.times``, ``.retry.interval``, ``.retry.intervalceiling.millis``)
for at most ``storm.zookeeper.connection.timeout`` ms, then raises
:class:`~sparkstorm.cluster.store.errors.StoreUnavailableError`; kazoo's own exceptions never
leave this module. kazoo keeps reconnecting in the background, and after a session expiry it
opens a new session by itself; this store then re-arms its watches.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

# kazoo ships no type information; this module is the typed boundary around it.
from kazoo import exceptions as kz
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import (
    EventType,
    KazooState,
    WatchedEvent,
)
from kazoo.retry import KazooRetry, RetryFailedError

from sparkstorm.cluster.store._paths import Chroot, validate
from sparkstorm.cluster.store._watches import WatchEntry, WatchKind
from sparkstorm.cluster.store.base import ChildrenCallback, DataCallback, StateStore, Watch
from sparkstorm.cluster.store.errors import (
    BadVersionError,
    EphemeralParentError,
    InvalidPathError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StateStoreError,
    StoreUnavailableError,
)
from sparkstorm.config import conf_int, conf_str, conf_str_list

logger = logging.getLogger(__name__)

T = TypeVar("T")

_RETRYABLE = (kz.ConnectionLoss, kz.SessionExpiredError, kz.OperationTimeoutError)
_UNAVAILABLE = (*_RETRYABLE, RetryFailedError, KazooTimeoutError, kz.ZookeeperStoppedError)


class ZooKeeperStore(StateStore):
    """State store in a ZooKeeper ensemble.

    See :class:`~sparkstorm.cluster.store.base.StateStore`.

    Args:
        servers: ensemble hosts (``storm.zookeeper.servers``); ``"host:port"`` entries keep
            their own port.
        port: the port of entries without one (``storm.zookeeper.port``).
        root: every path lives under this node (``storm.zookeeper.root``), created on open.
        session_timeout_ms: ZooKeeper session timeout (the server may clamp it to its own
            min/max) (``storm.zookeeper.session.timeout``).
        connection_timeout_ms: how long opening, and each operation, may wait for a
            connection (``storm.zookeeper.connection.timeout``).
        retry_times: retries of an operation after a connection loss
            (``storm.zookeeper.retry.times``).
        retry_interval_ms: first retry delay, doubled each time
            (``storm.zookeeper.retry.interval``).
        retry_ceiling_ms: longest retry delay (``storm.zookeeper.retry.intervalceiling.millis``).

    Raises:
        StoreUnavailableError: no server answered within ``connection_timeout_ms``.
        InvalidPathError: ``root`` is malformed.
    """

    def __init__(
        self,
        servers: Sequence[str],
        port: int = 2181,
        *,
        root: str = "/storm",
        session_timeout_ms: int = 20000,
        connection_timeout_ms: int = 15000,
        retry_times: int = 5,
        retry_interval_ms: int = 1000,
        retry_ceiling_ms: int = 30000,
    ) -> None:
        self._chroot = Chroot(root)
        self.hosts = ",".join(h if ":" in h else f"{h}:{port}" for h in servers)
        self._op_timeout_s = connection_timeout_ms / 1000
        self._retry = KazooRetry(
            max_tries=retry_times,
            delay=retry_interval_ms / 1000,
            max_delay=retry_ceiling_ms / 1000,
            ignore_expire=True,  # retry SessionExpired too: kazoo opens a new session itself
        )
        self._connected = threading.Event()
        self._closed = False
        self._lock = threading.Lock()
        self._watches: list[_ZkWatch] = []
        self._client = KazooClient(
            hosts=self.hosts,
            timeout=session_timeout_ms / 1000,
            # Reconnect forever in the background; operations give up on their own deadline.
            # The 2 s cap keeps a client at most ~2 s behind a server that comes back.
            connection_retry=KazooRetry(max_tries=-1, delay=retry_interval_ms / 1000,
                                        max_delay=min(retry_ceiling_ms / 1000, 2.0)),
            logger=logging.getLogger("kazoo.client"),
        )
        self._client.add_listener(self._on_state)
        self._start()

    @classmethod
    def from_conf(cls, conf: Mapping[str, object]) -> ZooKeeperStore:
        """Open the store the way ``storm.zookeeper.*`` keys say."""
        return cls(
            conf_str_list(conf, "storm.zookeeper.servers"),
            conf_int(conf, "storm.zookeeper.port"),
            root=conf_str(conf, "storm.zookeeper.root"),
            session_timeout_ms=conf_int(conf, "storm.zookeeper.session.timeout"),
            connection_timeout_ms=conf_int(conf, "storm.zookeeper.connection.timeout"),
            retry_times=conf_int(conf, "storm.zookeeper.retry.times"),
            retry_interval_ms=conf_int(conf, "storm.zookeeper.retry.interval"),
            retry_ceiling_ms=conf_int(conf, "storm.zookeeper.retry.intervalceiling.millis"),
        )

    def _start(self) -> None:
        try:
            self._client.start(timeout=self._op_timeout_s)
        except KazooTimeoutError as exc:
            msg = (
                f"cannot connect to ZooKeeper at {self.hosts!r} within "
                f"{self._op_timeout_s:g} s; start ZooKeeper or fix storm.zookeeper.servers / "
                "storm.zookeeper.port (or raise storm.zookeeper.connection.timeout)"
            )
            raise StoreUnavailableError(msg, code="STATE_UNAVAILABLE") from exc
        try:
            if self._chroot.root != "/":
                self._call("open", "/", lambda: self._client.ensure_path(self._chroot.root))
        except StateStoreError:
            self.close()
            raise

    # --- connection ---------------------------------------------------------------------------

    def _on_state(self, state: str) -> None:
        """Kazoo listener, called on kazoo's connection thread: must not block."""
        if self._closed:
            return
        if state == KazooState.CONNECTED:
            self._connected.set()
            with self._lock:
                watches = list(self._watches)
            for watch in watches:  # server-side watches were dropped on the way: re-arm
                self._client.handler.spawn(watch.refresh)
        else:
            self._connected.clear()
            logger.warning("ZooKeeper connection %s (%s)", state.lower(), self.hosts)

    def _call(self, what: str, path: str, fn: Callable[[], T]) -> T:
        """Run ``fn`` with waits for the connection, retries and kazoo errors mapped."""
        self._check_open()
        deadline = time.monotonic() + self._op_timeout_s

        def attempt() -> T:
            if not self._connected.wait(max(0.0, deadline - time.monotonic())):
                msg = f"not connected to {self.hosts}"
                raise kz.ConnectionLoss(msg)
            return fn()

        retry = self._retry.copy()
        retry.deadline = self._op_timeout_s
        try:
            result: T = retry(attempt)
            return result
        except (kz.KazooException, KazooTimeoutError) as exc:  # RetryFailedError included
            raise self._translate(exc, what, path) from exc

    def _check_open(self) -> None:
        if self._closed:
            msg = (
                f"ZooKeeper state store {self.hosts!r} was closed; open a new one with "
                "sparkstorm.cluster.store.open_store(conf)"
            )
            raise StoreUnavailableError(msg, code="STATE_STORE_CLOSED")

    def _translate(self, exc: Exception, what: str, path: str) -> StateStoreError:
        if isinstance(exc, _UNAVAILABLE):
            msg = (
                f"ZooKeeper at {self.hosts!r} is unreachable during {what} {path!r} "
                f"({type(exc).__name__}, waited {self._op_timeout_s:g} s); check that "
                "ZooKeeper runs and storm.zookeeper.servers is right; retry later"
            )
            return StoreUnavailableError(msg, code="STATE_UNAVAILABLE")
        return _map_node_error(exc, what, path)

    @property
    def session_id(self) -> str:
        """The ZooKeeper session id in hex; ``""`` before the first connection."""
        client_id = self._client.client_id
        return f"0x{client_id[0]:x}" if client_id else ""

    @property
    def client_id(self) -> tuple[int, bytes] | None:
        """The session id and password.

        What a second client needs to take the session over, as the tests do to expire a session.
        """
        client_id = self._client.client_id
        return None if client_id is None else (int(client_id[0]), bytes(client_id[1]))

    # --- nodes --------------------------------------------------------------------------------

    def create(
        self,
        path: str,
        data: bytes = b"",
        *,
        ephemeral: bool = False,
        sequence: bool = False,
        make_parents: bool = True,
    ) -> str:
        """See :meth:`StateStore.create`."""
        full = self._chroot.full(validate(path, sequence=sequence))
        created = self._call("create", path, lambda: self._client.create(
            full, _as_bytes(data, path), ephemeral=ephemeral, sequence=sequence,
            makepath=make_parents))
        return self._chroot.rel(str(created))

    def set(self, path: str, data: bytes, version: int = -1) -> int:
        """See :meth:`StateStore.set`."""
        full = self._chroot.full(validate(path))
        stat = self._call("set", path, lambda: self._client.set(
            full, _as_bytes(data, path), version=version))
        return int(stat.version)

    def get(self, path: str) -> tuple[bytes, int]:
        """See :meth:`StateStore.get`."""
        full = self._chroot.full(validate(path))
        data, stat = self._call("get", path, lambda: self._client.get(full))
        return bytes(data or b""), int(stat.version)

    def exists(self, path: str) -> bool:
        """See :meth:`StateStore.exists`."""
        full = self._chroot.full(validate(path))
        return self._call("exists", path, lambda: self._client.exists(full)) is not None

    def children(self, path: str) -> list[str]:
        """See :meth:`StateStore.children`."""
        full = self._chroot.full(validate(path))
        return sorted(self._call("children", path, lambda: self._client.get_children(full)))

    def delete(self, path: str, *, recursive: bool = False) -> None:
        """See :meth:`StateStore.delete`."""
        if validate(path) == "/":
            msg = "the root '/' of the state store cannot be deleted; delete its children"
            raise InvalidPathError(msg, code=InvalidPathError.default_code)
        full = self._chroot.full(path)
        if recursive and not self.exists(path):
            raise _map_node_error(kz.NoNodeError(), "delete", path)  # kazoo ignores it
        self._call("delete", path, lambda: self._client.delete(full, recursive=recursive))

    # --- watches ------------------------------------------------------------------------------

    def _add_watch(self, kind: WatchKind, path: str, callback: Callable[[Any], object]) -> Watch:
        entry = WatchEntry(kind, validate(path), callback)
        watch = _ZkWatch(self._client, entry, self._chroot.full(path))
        # Registered before the first read, so a reconnect right after it re-arms it too.
        with self._lock:
            self._watches = [w for w in self._watches if not w.entry.cancelled] + [watch]
        try:
            self._call("watch", path, lambda: watch.refresh(strict=True))
        except StateStoreError:
            entry.cancel()
            raise
        return Watch(entry)

    def watch_children(self, path: str, callback: ChildrenCallback) -> Watch:
        """See :meth:`StateStore.watch_children`."""
        return self._add_watch("children", path, lambda value: callback(list(value)))

    def watch_data(self, path: str, callback: DataCallback) -> Watch:
        """See :meth:`StateStore.watch_data`."""
        return self._add_watch("data", path, lambda value: callback(*value))

    # --- life cycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """See :meth:`StateStore.close`."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            for watch in self._watches:
                watch.entry.cancel()
            self._watches = []
        try:
            self._client.stop()  # closes the session: the server deletes our ephemerals now
        finally:
            self._client.close()


class _ZkWatch:
    """A persistent watch over kazoo's one-shot ones.

    Like kazoo's ``ChildrenWatch``/``DataWatch``, plus: works while the node does not exist,
    survives deletion, and de-duplicates.
    """

    def __init__(self, client: KazooClient, entry: WatchEntry, full: str) -> None:
        self._client = client
        self.entry = entry
        self._full = full
        self._lock = threading.Lock()

    def _on_event(self, event: WatchedEvent) -> None:
        """Kazoo watcher, called on kazoo's callback thread: hand the read to a new one."""
        if event.type != EventType.NONE:  # NONE: connection lost; _on_state re-arms later
            self._client.handler.spawn(self.refresh)

    def _read(self) -> object:
        for _ in range(100):  # each loop means the node appeared or vanished under us
            try:
                if self.entry.kind == "children":
                    return tuple(sorted(self._client.get_children(self._full,
                                                                  watch=self._on_event)))
                data, stat = self._client.get(self._full, watch=self._on_event)
                return (bytes(data or b""), int(stat.version))
            except kz.NoNodeError:
                if self._client.exists(self._full, watch=self._on_event) is None:
                    return () if self.entry.kind == "children" else (None, -1)
        msg = f"state store watch on {self.entry.path!r} cannot settle: the node flaps"
        raise StateStoreError(msg, code="STATE_ERROR")

    def refresh(self, strict: bool = False) -> None:
        """Read the value, re-arm the server-side watch and deliver the value if it changed.

        Args:
            strict: raise kazoo errors (first read, inside the caller's retries); otherwise
                a connection error is left to the reconnect listener, which refreshes again.
        """
        with self._lock:
            if self.entry.cancelled:
                return
            try:
                value = self._read()
            except kz.KazooException:
                if strict:
                    raise
                logger.debug("watch on %r not re-armed yet; waiting for reconnect",
                             self.entry.path, exc_info=True)
                return
            self.entry.deliver(value)


def _as_bytes(data: object, path: str) -> bytes:
    if not isinstance(data, bytes | bytearray | memoryview):
        msg = f"data for state store node {path!r} must be bytes, got {type(data).__name__}"
        raise TypeError(msg)
    return bytes(data)


def _map_node_error(exc: Exception, what: str, path: str) -> StateStoreError:
    """Translate kazoo's node errors into ours, with the same messages as the embedded store."""
    if isinstance(exc, kz.NoNodeError):
        where = "its parent" if what == "create" else "it"
        msg = (
            f"state store node {path!r}: {where} does not exist ({what}); create it first, "
            "pass make_parents=True, or check the id in the path"
        )
        return NoNodeError(msg, code=NoNodeError.default_code)
    if isinstance(exc, kz.NodeExistsError):
        msg = f"state store node {path!r} already exists; use set() to change it or delete it"
        return NodeExistsError(msg, code=NodeExistsError.default_code)
    if isinstance(exc, kz.BadVersionError):
        msg = (
            f"state store node {path!r} is not at the expected version: another client "
            "changed it; get() it again and retry the update"
        )
        return BadVersionError(msg, code=BadVersionError.default_code)
    if isinstance(exc, kz.NotEmptyError):
        msg = f"cannot delete {path!r}: it has children; delete them first or recursive=True"
        return NotEmptyError(msg, code=NotEmptyError.default_code)
    if isinstance(exc, kz.NoChildrenForEphemeralsError):
        msg = (
            f"cannot create {path!r}: its parent is ephemeral and ephemeral nodes cannot "
            "have children; make the parent persistent"
        )
        return EphemeralParentError(msg, code=EphemeralParentError.default_code)
    msg = f"ZooKeeper refused {what} {path!r}: {type(exc).__name__} {exc}"
    return StateStoreError(msg, code="STATE_ERROR")
