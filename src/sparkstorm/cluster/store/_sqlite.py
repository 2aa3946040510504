"""The SQLite file of the embedded store: schema, connections, transactions, error mapping.

Several processes of one machine open the same file. WAL mode lets readers run while one
writer writes; every write is a short ``BEGIN IMMEDIATE`` transaction, so writers queue on
SQLite's lock (up to the busy timeout) instead of failing half-way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sparkstorm.cluster.store.errors import StateStoreError, StoreUnavailableError

SCHEMA_VERSION = 1

_SCHEMA = (
    # One row per node. ``parent`` is indexed for children(); ``owner`` is the session id of
    # an ephemeral node; ``czxid`` (the change counter at creation) tells a re-created node
    # from the old one, as ZooKeeper's czxid does.
    """CREATE TABLE IF NOT EXISTS nodes (
        path TEXT PRIMARY KEY,
        parent TEXT NOT NULL,
        data BLOB NOT NULL,
        version INTEGER NOT NULL DEFAULT 0,
        cversion INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        czxid INTEGER NOT NULL,
        mtime_ms INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS nodes_by_parent ON nodes(parent)",
    "CREATE INDEX IF NOT EXISTS nodes_by_owner ON nodes(owner) WHERE owner IS NOT NULL",
    # One row per live client; a row whose heartbeat is older than its timeout is expired
    # and any client may delete it together with its ephemeral nodes.
    """CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY,
        heartbeat_ms INTEGER NOT NULL,
        timeout_ms INTEGER NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL
    )""",
    # 'counter' goes up by one per committed change: watchers poll this single row.
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO meta (key, value) VALUES ('counter', 0)",
    "INSERT OR IGNORE INTO nodes (path, parent, data, czxid, mtime_ms) VALUES ('/', '', x'', 0, 0)",
)


def translate(exc: sqlite3.Error, file: Path, what: str, busy_timeout_ms: int) -> StateStoreError:
    """Turn a ``sqlite3`` error into a store error that says what to do.

    Args:
        exc: the error SQLite raised.
        file: the database file.
        what: the operation, e.g. ``"create '/storms/x'"``.
        busy_timeout_ms: the busy timeout in effect, for the message.

    Returns:
        A :class:`StoreUnavailableError`: ``STATE_STORE_CORRUPT`` when the file is not a
        usable database, else ``STATE_UNAVAILABLE``.
    """
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        msg = (
            f"embedded state store {str(file)!r} is not a usable SQLite database ({text}) "
            f"during {what}; stop every sparkstorm daemon of this machine and move the file "
            "aside (the cluster state then starts empty), or point storm.local.dir elsewhere"
        )
        return StoreUnavailableError(msg, code="STATE_STORE_CORRUPT")
    if "locked" in text or "busy" in text:
        msg = (
            f"embedded state store {str(file)!r} stayed locked by another process for "
            f"{busy_timeout_ms} ms during {what}; find a hung process holding it "
            "(fuser FILE), or raise storm.state.embedded.busy.timeout.ms"
        )
        return StoreUnavailableError(msg, code="STATE_UNAVAILABLE")
    msg = (
        f"embedded state store {str(file)!r} failed during {what}: {text}; check that "
        "storm.local.dir is writable and its disk is not full"
    )
    return StoreUnavailableError(msg, code="STATE_UNAVAILABLE")


def connect(file: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    """Open a connection in autocommit mode with WAL and the busy timeout set.

    Raises:
        sqlite3.Error: the file cannot be opened or is not a database.
    """
    conn = sqlite3.connect(
        file, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a committed assignment or committed window survives a power loss too.
        conn.execute("PRAGMA synchronous = FULL")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run a write transaction; any exception rolls back.

    ``BEGIN IMMEDIATE`` takes the write lock up front, so two writers never deadlock upgrading read
    locks.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def create_schema(conn: sqlite3.Connection, file: Path) -> None:
    """Create the tables if missing (idempotent, safe when several processes race).

    Raises:
        StoreUnavailableError: ``STATE_STORE_CORRUPT`` when a newer sparkstorm wrote the file.
        sqlite3.Error: the file is not a database, or is locked past the busy timeout.
    """
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        msg = (
            f"embedded state store {str(file)!r} has schema version {found}, newer than this "
            f"sparkstorm's {SCHEMA_VERSION}; run the newer sparkstorm, or point "
            "storm.local.dir elsewhere"
        )
        raise StoreUnavailableError(msg, code="STATE_STORE_CORRUPT")
    with transaction(conn):
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def bump_counter(conn: sqlite3.Connection) -> int:
    """Advance the change counter inside a write transaction and return its new value."""
    row = conn.execute(
        "UPDATE meta SET value = value + 1 WHERE key = 'counter' RETURNING value"
    ).fetchone()
    return int(row[0])


def read_counter(conn: sqlite3.Connection) -> int:
    """Return the change counter (one indexed row: cheap enough to poll)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'counter'").fetchone()
    return int(row[0])
