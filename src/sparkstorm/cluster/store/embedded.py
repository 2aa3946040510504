"""The embedded state store: a SQLite file shared by the processes of one machine.

The file is ``<storm.local.dir>/state/store.sqlite``. Nimbus, supervisors and workers of one
machine open it each from their own process; see :mod:`~sparkstorm.cluster.store._sqlite` for
how they share it and :mod:`~sparkstorm.cluster.store._sessions` for how ephemeral nodes are
emulated. Watches poll the file's change counter every ``storm.state.embedded.poll.ms``
(one indexed read while nothing changes) and re-read only the watches whose value may have
changed.

The file must be on a local disk: SQLite's WAL mode needs shared memory between the
processes, which network file systems do not provide. Use ZooKeeper for more than one machine.

Two daemon threads run per store: the heartbeat thread (every third of the session timeout:
heartbeat this store's session, then sweep expired ones) and, once a watch exists, the watch
thread (polls, then runs callbacks).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from sparkstorm.cluster.store import _sessions, _sqlite
from sparkstorm.cluster.store._paths import Chroot, ancestors, name_of, parent_of, validate
from sparkstorm.cluster.store._watches import WatchEntry, WatchKind
from sparkstorm.cluster.store.base import ChildrenCallback, DataCallback, StateStore, Watch
from sparkstorm.cluster.store.errors import (
    BadVersionError,
    EphemeralParentError,
    InvalidPathError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StoreUnavailableError,
)
from sparkstorm.config import conf_int, conf_str, local_dir
from sparkstorm.periodic import PeriodicThread

logger = logging.getLogger(__name__)

T = TypeVar("T")

STORE_FILE = Path("state") / "store.sqlite"
"""Location of the file under ``storm.local.dir``."""


def store_file(local_dir: str | Path) -> Path:
    """Return the embedded store's file for a ``storm.local.dir``."""
    return Path(local_dir) / STORE_FILE


class EmbeddedStore(StateStore):
    """State store in a SQLite file; see :class:`~sparkstorm.cluster.store.base.StateStore`.

    Args:
        file: the SQLite file; its directory is created if missing.
        root: the store's root node (``storm.zookeeper.root``), created if missing.
        session_timeout_ms: a session silent this long expires (``storm.zookeeper.session.
            timeout``); the store heartbeats every third of it.
        poll_interval_ms: how often watches poll for changes (``storm.state.embedded.poll.ms``).
        busy_timeout_ms: how long a write waits for another process's write lock
            (``storm.state.embedded.busy.timeout.ms``).
        clock: wall-clock time in seconds; wall time, not monotonic, because session rows are
            compared across processes and reboots. Tests inject a fake one.
        background: start the heartbeat thread. Tests that drive :meth:`heartbeat` and
            :meth:`sweep_expired_sessions` by hand pass False.

    Raises:
        StoreUnavailableError: the file cannot be opened or is not a SQLite database.
        InvalidPathError: ``root`` is malformed.
    """

    def __init__(
        self,
        file: str | Path,
        *,
        root: str = "/",
        session_timeout_ms: int = 20000,
        poll_interval_ms: int = 100,
        busy_timeout_ms: int = 10000,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ) -> None:
        self.file = Path(file)
        self._chroot = Chroot(root)
        self._timeout_ms = int(session_timeout_ms)
        self._poll_s = poll_interval_ms / 1000
        self._busy_ms = int(busy_timeout_ms)
        self._clock = clock
        self._pid = os.getpid()
        self._lock = threading.RLock()  # guards self._conn (one statement stream at a time)
        self._hb_lock = threading.Lock()  # guards self._hb_conn, the heartbeat's connection
        self._session_lock = threading.Lock()
        self._closed = False
        self._watches: list[WatchEntry] = []
        self._timers: list[PeriodicThread] = []
        self._watch_timer: PeriodicThread | None = None
        self._conn = self._open()
        self._session_id = _sessions.new_session_id()
        try:
            self._hb_conn = self._guard("open", "/",
                                        lambda: _sqlite.connect(self.file, self._busy_ms))
            self._write("open", "/", self._start)
        except BaseException:
            self._conn.close()
            raise
        if background:
            self._spawn("heartbeat", max(self._timeout_ms / 3000, 0.01), self._heartbeat_round)

    @classmethod
    def from_conf(cls, conf: Mapping[str, object]) -> EmbeddedStore:
        """Open the store the way ``storm.*`` keys say.

        See :func:`~sparkstorm.cluster.store.open_store`.
        """
        return cls(
            store_file(local_dir(conf)),
            root=conf_str(conf, "storm.zookeeper.root"),
            session_timeout_ms=conf_int(conf, "storm.zookeeper.session.timeout"),
            poll_interval_ms=conf_int(conf, "storm.state.embedded.poll.ms"),
            busy_timeout_ms=conf_int(conf, "storm.state.embedded.busy.timeout.ms"),
        )

    # --- plumbing ---------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            msg = (
                f"cannot create the directory of the embedded state store {str(self.file)!r}: "
                f"{exc.strerror or exc}; set storm.local.dir to a writable directory"
            )
            raise StoreUnavailableError(msg, code="STATE_UNAVAILABLE") from exc
        conn = self._guard("open", "/", lambda: _sqlite.connect(self.file, self._busy_ms))
        try:
            self._guard("open", "/", lambda: _sqlite.create_schema(conn, self.file))
        except BaseException:
            conn.close()
            raise
        return conn

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _guard(self, what: str, path: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except sqlite3.Error as exc:
            raise _sqlite.translate(exc, self.file, f"{what} {path!r}", self._busy_ms) from exc

    def _check_usable(self) -> None:
        if self._closed:
            msg = (
                f"embedded state store {str(self.file)!r} was closed; open a new one with "
                "sparkstorm.cluster.store.open_store(conf)"
            )
            raise StoreUnavailableError(msg, code="STATE_STORE_CLOSED")
        if os.getpid() != self._pid:
            msg = (
                f"embedded state store {str(self.file)!r} was opened in process {self._pid} "
                f"and used in forked process {os.getpid()}; open a new store in each process"
            )
            raise StoreUnavailableError(msg, code="STATE_UNAVAILABLE")

    def _read(self, what: str, path: str, fn: Callable[[sqlite3.Connection], T]) -> T:
        self._check_usable()
        with self._lock:
            return self._guard(what, path, lambda: fn(self._conn))

    def _write(self, what: str, path: str, fn: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            with _sqlite.transaction(self._conn):
                return fn(self._conn)

        self._check_usable()
        with self._lock:
            return self._guard(what, path, run)

    def _spawn(self, name: str, interval: float,
               action: Callable[[], object]) -> PeriodicThread | None:
        """Start a background job (first round after one ``interval``); None once closed.

        Called under ``_lock`` (or before the store is shared): :meth:`close` marks the
        store closed under it, then stops every timer started before.
        """
        if self._closed:
            return None
        timer = PeriodicThread(f"sparkstorm-state-{name}", interval, action, first_now=False)
        self._timers.append(timer)
        timer.start()
        return timer

    def _background(self, what: str, action: Callable[[], object]) -> None:
        """Run one round of a background job.

        An unreachable store is retried next round, quietly once the store is closed (its timer is
        being stopped).
        """
        try:
            action()
        except StoreUnavailableError as exc:
            if not self._closed:
                logger.warning("state store %s failed, will retry: %s", what, exc)

    # --- sessions -----------------------------------------------------------------------------

    def _start(self, conn: sqlite3.Connection) -> None:
        self._ensure_node(conn, self._chroot.root)
        _sessions.insert_session(conn, self._session_id, self._now_ms(), self._timeout_ms)
        _sessions.sweep(conn, self._now_ms())  # clean up after clients that died unclosed

    def _live_session(self, conn: sqlite3.Connection) -> str:
        """Return this store's session id inside a write transaction.

        The session is renewed when it expired: an ephemeral must never be owned by a swept session
        (nobody would delete it). Lock order everywhere: SQLite write lock first, then
        ``_session_lock``.
        """
        with self._session_lock:
            if not _sessions.session_alive(conn, self._session_id):
                old, self._session_id = self._session_id, _sessions.new_session_id()
                _sessions.insert_session(conn, self._session_id, self._now_ms(), self._timeout_ms)
                logger.warning("state store session %s expired (ephemeral nodes deleted); "
                               "continuing with new session %s", old, self._session_id)
            return self._session_id

    def heartbeat(self) -> None:
        """Refresh this store's session; start a new one if it was swept.

        Called by the heartbeat thread every third of the session timeout.
        """
        self._check_usable()
        now = self._now_ms()
        with self._hb_lock:
            if self._guard("heartbeat", "/", lambda: _sessions.touch_session(
                    self._hb_conn, self._session_id, now)):
                return

            def renew() -> None:
                with _sqlite.transaction(self._hb_conn):
                    self._live_session(self._hb_conn)

            self._guard("heartbeat", "/", renew)

    def sweep_expired_sessions(self) -> list[str]:
        """Delete sessions silent for longer than their timeout, with their ephemeral nodes.

        Called by the heartbeat thread after each heartbeat; any store of the file may sweep.

        Returns:
            The expired session ids.
        """
        self._check_usable()
        now = self._now_ms()

        def run() -> list[str]:
            if not _sessions.needs_sweep(self._hb_conn, now):
                return []
            with _sqlite.transaction(self._hb_conn):
                return _sessions.sweep(self._hb_conn, now)

        with self._hb_lock:
            expired = self._guard("sweep", "/", run)
        if expired:
            logger.info("state store expired sessions %s", ", ".join(expired))
        return expired

    def _heartbeat_round(self) -> None:
        # a dead heartbeat thread would expire the session for good: PeriodicThread logs
        # any other failure and runs the next round anyway
        self._background("heartbeat", self._heartbeat_and_sweep)

    def _heartbeat_and_sweep(self) -> None:
        self.heartbeat()
        self.sweep_expired_sessions()

    @property
    def session_id(self) -> str:
        """The current session id (``0x`` + 16 hex digits)."""
        return self._session_id

    # --- nodes --------------------------------------------------------------------------------

    def _insert(self, conn: sqlite3.Connection, full: str, data: bytes, owner: str | None) -> None:
        zxid = _sqlite.bump_counter(conn)
        conn.execute(
            "INSERT INTO nodes (path, parent, data, owner, czxid, mtime_ms) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (full, parent_of(full), data, owner, zxid, self._now_ms()),
        )
        conn.execute("UPDATE nodes SET cversion = cversion + 1 WHERE path = ?",
                     (parent_of(full),))

    def _ensure_node(self, conn: sqlite3.Connection, full: str) -> None:
        if full == "/":
            return
        for path in [*ancestors(full), full]:
            row = conn.execute("SELECT owner FROM nodes WHERE path = ?", (path,)).fetchone()
            if row is None:
                self._check_parent(conn, path)
                self._insert(conn, path, b"", None)

    def _check_parent(self, conn: sqlite3.Connection, full: str) -> int:
        parent = parent_of(full)
        row = conn.execute("SELECT owner, cversion FROM nodes WHERE path = ?",
                           (parent,)).fetchone()
        if row is None:
            msg = (
                f"cannot create {self._chroot.rel(full)!r}: its parent "
                f"{self._chroot.rel(parent)!r} does not exist; create it first or pass "
                "make_parents=True"
            )
            raise NoNodeError(msg, code=NoNodeError.default_code)
        if row[0] is not None:
            msg = (
                f"cannot create {self._chroot.rel(full)!r}: its parent "
                f"{self._chroot.rel(parent)!r} is ephemeral and ephemeral nodes cannot have "
                "children; make the parent persistent"
            )
            raise EphemeralParentError(msg, code=EphemeralParentError.default_code)
        return int(row[1])

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
        validate(path, sequence=sequence)
        full = self._chroot.full(path)
        payload = _as_bytes(data, path)

        def run(conn: sqlite3.Connection) -> str:
            if make_parents:
                self._ensure_node(conn, parent_of(full))
            cversion = self._check_parent(conn, full)
            target = f"{full}{cversion:010d}" if sequence else full
            if _exists(conn, target):
                raise _exists_error(self._chroot.rel(target))
            owner = self._live_session(conn) if ephemeral else None
            self._insert(conn, target, payload, owner)
            return target

        return self._chroot.rel(self._write("create", path, run))

    def set(self, path: str, data: bytes, version: int = -1) -> int:
        """See :meth:`StateStore.set`."""
        full = self._chroot.full(validate(path))
        payload = _as_bytes(data, path)

        def run(conn: sqlite3.Connection) -> int:
            current = _version(conn, full, path)
            if version not in (-1, current):
                raise _bad_version(path, version, current)
            conn.execute("UPDATE nodes SET data = ?, version = ?, mtime_ms = ? WHERE path = ?",
                         (payload, current + 1, self._now_ms(), full))
            _sqlite.bump_counter(conn)
            return current + 1

        return self._write("set", path, run)

    def get(self, path: str) -> tuple[bytes, int]:
        """See :meth:`StateStore.get`."""
        full = self._chroot.full(validate(path))
        row = self._read("get", path, lambda c: c.execute(
            "SELECT data, version FROM nodes WHERE path = ?", (full,)).fetchone())
        if row is None:
            raise _no_node(path)
        return bytes(row[0]), int(row[1])

    def exists(self, path: str) -> bool:
        """See :meth:`StateStore.exists`."""
        full = self._chroot.full(validate(path))
        return self._read("exists", path, lambda c: _exists(c, full))

    def children(self, path: str) -> list[str]:
        """See :meth:`StateStore.children`."""
        full = self._chroot.full(validate(path))

        def run(conn: sqlite3.Connection) -> list[str] | None:
            if not _exists(conn, full):
                return None
            rows = conn.execute("SELECT path FROM nodes WHERE parent = ?", (full,)).fetchall()
            return sorted(name_of(row[0]) for row in rows)

        names = self._read("children", path, run)
        if names is None:
            raise _no_node(path)
        return names

    def delete(self, path: str, *, recursive: bool = False) -> None:
        """See :meth:`StateStore.delete`."""
        if validate(path) == "/":
            msg = "the root '/' of the state store cannot be deleted; delete its children"
            raise InvalidPathError(msg, code=InvalidPathError.default_code)
        full = self._chroot.full(path)
        # Descendants sort between "<full>/" and "<full>0" ('0' follows '/'), so one range
        # scan of the primary key finds them all.
        below = (full + "/", full + "0")

        def run(conn: sqlite3.Connection) -> None:
            _version(conn, full, path)
            if recursive:
                conn.execute("DELETE FROM nodes WHERE path >= ? AND path < ?", below)
            elif conn.execute("SELECT 1 FROM nodes WHERE parent = ? LIMIT 1",
                              (full,)).fetchone():
                msg = (
                    f"cannot delete {path!r}: it has children; delete them first or pass "
                    "recursive=True"
                )
                raise NotEmptyError(msg, code=NotEmptyError.default_code)
            conn.execute("DELETE FROM nodes WHERE path = ?", (full,))
            conn.execute("UPDATE nodes SET cversion = cversion + 1 WHERE path = ?",
                         (parent_of(full),))
            _sqlite.bump_counter(conn)

        self._write("delete", path, run)

    # --- watches ------------------------------------------------------------------------------

    def _watch_value(self, conn: sqlite3.Connection, entry: WatchEntry) -> object:
        full = self._chroot.full(entry.path)
        if entry.kind == "children":
            rows = conn.execute("SELECT path FROM nodes WHERE parent = ?", (full,)).fetchall()
            return tuple(sorted(name_of(row[0]) for row in rows))
        row = conn.execute("SELECT data, version FROM nodes WHERE path = ?", (full,)).fetchone()
        return (None, -1) if row is None else (bytes(row[0]), int(row[1]))

    def _snapshot(self, entry: WatchEntry) -> object:
        """Read the counter, then the value.

        Any later change moves the counter past ``entry.seen_counter``, so the poller cannot miss
        it.
        """

        def run(conn: sqlite3.Connection) -> object:
            entry.seen_counter = _sqlite.read_counter(conn)
            return self._watch_value(conn, entry)

        return self._read("watch", entry.path, run)

    def _add_watch(self, kind: WatchKind, path: str, callback: Callable[[Any], object]) -> Watch:
        entry = WatchEntry(kind, validate(path), callback)
        # Deliver the first value before the poller can see the entry, so that deliveries
        # stay in order; changes after the snapshot still reach it through seen_counter.
        entry.deliver(self._snapshot(entry))
        with self._lock:
            self._watches.append(entry)
            if self._watch_timer is None:
                self._watch_timer = self._spawn("watch", self._poll_s, self._watch_round)
        return Watch(entry)

    def watch_children(self, path: str, callback: ChildrenCallback) -> Watch:
        """See :meth:`StateStore.watch_children`."""
        return self._add_watch("children", path, lambda value: callback(list(value)))

    def watch_data(self, path: str, callback: DataCallback) -> Watch:
        """See :meth:`StateStore.watch_data`."""
        return self._add_watch("data", path, lambda value: callback(*value))

    def poll_watches(self) -> None:
        """Deliver the changes made since the last poll to the watches.

        Called by the watch thread every ``poll_interval_ms``; one read of the counter when
        nothing changed.
        """
        with self._lock:
            self._watches = [w for w in self._watches if not w.cancelled]
            entries = list(self._watches)
        if not entries:
            return
        counter = self._read("poll", "/", _sqlite.read_counter)
        for entry in entries:
            if entry.seen_counter != counter and not entry.cancelled:
                entry.deliver(self._snapshot(entry))

    def _watch_round(self) -> None:
        # keep watching: one bad poll must not end every watch (PeriodicThread logs any
        # other failure and polls again)
        self._background("watch poll", self.poll_watches)

    # --- life cycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """See :meth:`StateStore.close`."""
        if self._closed or os.getpid() != self._pid:
            return
        with self._lock:
            for entry in self._watches:
                entry.cancel()
            try:
                self._write("close", "/", lambda c: _sessions.end_session(c, self._session_id))
            except StoreUnavailableError as exc:
                logger.warning("state store could not end its session cleanly: %s", exc)
            self._closed = True
        for timer in self._timers:
            timer.stop()  # joins it, unless close runs on the timer's own thread
        self._conn.close()
        self._hb_conn.close()


def _as_bytes(data: object, path: str) -> bytes:
    if not isinstance(data, bytes | bytearray | memoryview):
        msg = f"data for state store node {path!r} must be bytes, got {type(data).__name__}"
        raise TypeError(msg)
    return bytes(data)


def _exists(conn: sqlite3.Connection, full: str) -> bool:
    return conn.execute("SELECT 1 FROM nodes WHERE path = ?", (full,)).fetchone() is not None


def _version(conn: sqlite3.Connection, full: str, path: str) -> int:
    row = conn.execute("SELECT version FROM nodes WHERE path = ?", (full,)).fetchone()
    if row is None:
        raise _no_node(path)
    return int(row[0])


def _no_node(path: str) -> NoNodeError:
    msg = f"state store node {path!r} does not exist; create it first or check the id in it"
    return NoNodeError(msg, code=NoNodeError.default_code)


def _exists_error(path: str) -> NodeExistsError:
    msg = f"state store node {path!r} already exists; use set() to change it or delete it first"
    return NodeExistsError(msg, code=NodeExistsError.default_code)


def _bad_version(path: str, expected: int, actual: int) -> BadVersionError:
    msg = (
        f"state store node {path!r} is at version {actual}, not {expected}: another client "
        "changed it; get() it again and retry the update"
    )
    return BadVersionError(msg, code=BadVersionError.default_code)


__all__ = ["EmbeddedStore", "store_file"]
