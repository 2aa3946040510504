"""Sessions of the embedded store: rows with a heartbeat, and the sweep of expired ones.

ZooKeeper expires a session when its client has been silent for the session timeout and then
deletes the session's ephemeral nodes. The embedded store emulates that in the shared file:
each store heartbeats its row from a background thread, and every store, on its own heartbeat,
deletes the rows (and the ephemeral nodes) of sessions silent for longer than their timeout.
All functions here run inside the caller's write transaction unless said otherwise.
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3

from sparkstorm.cluster.store._paths import parent_of
from sparkstorm.cluster.store._sqlite import bump_counter


def new_session_id() -> str:
    """Return a fresh random session id in ZooKeeper's hex style."""
    return "0x" + secrets.token_hex(8)


def insert_session(conn: sqlite3.Connection, session_id: str, now_ms: int,
                   timeout_ms: int) -> None:
    """Add a live session row."""
    conn.execute(
        "INSERT INTO sessions (id, heartbeat_ms, timeout_ms, pid, host) VALUES (?, ?, ?, ?, ?)",
        (session_id, now_ms, timeout_ms, os.getpid(), socket.gethostname()),
    )


def session_alive(conn: sqlite3.Connection, session_id: str) -> bool:
    """Tell whether the session still has its row (it was not swept)."""
    row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return row is not None


def touch_session(conn: sqlite3.Connection, session_id: str, now_ms: int) -> bool:
    """Heartbeat a session (autocommit, no transaction needed).

    Returns:
        False when the row is gone: the session expired and was swept.
    """
    cursor = conn.execute("UPDATE sessions SET heartbeat_ms = ? WHERE id = ?",
                          (now_ms, session_id))
    return cursor.rowcount > 0


def needs_sweep(conn: sqlite3.Connection, now_ms: int) -> bool:
    """Tell, with a read only, whether some session expired or some ephemeral is orphaned.

    Checked before taking the write lock, so that a sweep costs one read when, as usual,
    nothing expired.
    """
    expired = conn.execute(
        "SELECT 1 FROM sessions WHERE heartbeat_ms + timeout_ms < ? LIMIT 1", (now_ms,)
    ).fetchone()
    if expired is not None:
        return True
    orphan = conn.execute(
        "SELECT 1 FROM nodes WHERE owner IS NOT NULL "
        "AND owner NOT IN (SELECT id FROM sessions) LIMIT 1"
    ).fetchone()
    return orphan is not None


def delete_ephemerals(conn: sqlite3.Connection, owners: list[str]) -> int:
    """Delete the ephemeral nodes of the given sessions; bump the counter if any went.

    Returns:
        How many nodes were deleted.
    """
    deleted = 0
    for owner in owners:
        rows = conn.execute("SELECT path FROM nodes WHERE owner = ?", (owner,)).fetchall()
        for (path,) in rows:
            conn.execute("DELETE FROM nodes WHERE path = ?", (path,))
            conn.execute("UPDATE nodes SET cversion = cversion + 1 WHERE path = ?",
                         (parent_of(path),))
            deleted += 1
    if deleted:
        bump_counter(conn)
    return deleted


def sweep(conn: sqlite3.Connection, now_ms: int) -> list[str]:
    """Delete expired sessions and their ephemeral nodes, and orphaned ephemerals.

    An orphan is an ephemeral whose session row is gone, e.g. created by a process that then
    lost a race with the sweeper; it would otherwise never be deleted.

    Returns:
        The ids of the sessions that were expired.
    """
    expired = [
        row[0]
        for row in conn.execute(
            "SELECT id FROM sessions WHERE heartbeat_ms + timeout_ms < ?", (now_ms,)
        )
    ]
    orphans = [
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT owner FROM nodes WHERE owner IS NOT NULL "
            "AND owner NOT IN (SELECT id FROM sessions)"
        )
    ]
    conn.executemany("DELETE FROM sessions WHERE id = ?", [(sid,) for sid in expired])
    delete_ephemerals(conn, sorted(set(expired) | set(orphans)))
    return expired


def end_session(conn: sqlite3.Connection, session_id: str) -> None:
    """Close a session: drop its row and its ephemeral nodes."""
    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    delete_ephemerals(conn, [session_id])
