"""Support of the state-store suites.

The backends they run on, the base conf, a real ZooKeeper server installed on demand, and
:class:`Backend`, which opens clients of one store.

The fixtures built on these live in ``conftest.py``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.cluster.store import StateStore, _sessions, _sqlite, open_store
from sparkstorm.cluster.store.embedded import EmbeddedStore
from sparkstorm.cluster.store.zookeeper import ZooKeeperStore
from tests.integration.zookeeper.zkserver import DEBIAN_JAR, ZooKeeperServer, classpath

REPO = Path(__file__).resolve().parents[3]
INSTALL_SCRIPT = REPO / "scripts" / "install-zookeeper.sh"

BACKENDS = ["embedded", "zookeeper"]

BASE_CONF: dict[str, object] = {
    "storm.zookeeper.session.timeout": 6000,
    "storm.zookeeper.connection.timeout": 5000,
    "storm.zookeeper.retry.times": 5,
    "storm.zookeeper.retry.interval": 50,
    "storm.zookeeper.retry.intervalceiling.millis": 500,
    "storm.state.embedded.poll.ms": 20,
}
"""Fast polls and retries; sessions long enough that a busy 2-core machine never expires one
by accident."""


def ensure_zookeeper_installed() -> None:
    """Install ZooKeeper with the project's script if needed.

    Skips (fails under CI) if that cannot be done.
    """
    if classpath() is not None and shutil.which("java"):
        return
    where = os.environ.get("ZOOKEEPER_HOME") or DEBIAN_JAR
    detail = "java is missing" if classpath() is not None else f"no ZooKeeper jars at {where}"
    try:
        done = subprocess.run([str(INSTALL_SCRIPT)], capture_output=True, text=True,
                              timeout=900, check=False)
        output = " ".join((done.stdout + done.stderr).split())
        detail += f"; {INSTALL_SCRIPT.name} exited {done.returncode}: {output}"
    except OSError as exc:
        detail += f"; cannot run {INSTALL_SCRIPT}: {exc}"
    if classpath() is not None and shutil.which("java"):
        return
    reason = f"no ZooKeeper server for the state-store tests ({detail})"
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"{reason}; CI must run these tests", pytrace=False)
    pytest.skip(reason)


class Backend:
    """Opens clients of one store (one embedded file, or one ZooKeeper root) for a test.

    Args:
        kind: ``"embedded"`` or ``"zookeeper"``.
        conf: the conf every client is opened with.
        server: the ZooKeeper server, for ``"zookeeper"``.
    """

    def __init__(self, kind: str, conf: dict[str, object],
                 server: ZooKeeperServer | None) -> None:
        self.kind = kind
        self.conf = conf
        self.server = server
        self._opened: list[StateStore] = []

    def open(self, **overrides: Any) -> StateStore:
        """Open one more client; ``overrides`` are conf keys with ``_`` for ``.``."""
        conf = self.conf | {k.replace("_", "."): v for k, v in overrides.items()}
        store = open_store(conf)
        self._opened.append(store)
        return store

    def expire_session(self, store: StateStore) -> str:
        """Expire ``store``'s session the way the backend would, and return its old id.

        ZooKeeper: a second client takes the session over with its id and password and
        closes it (kazoo's test harness does the same), so the server ends the session.
        Embedded: the session's heartbeat is pushed past its timeout and a sweep runs in
        one transaction, as another client's sweep would after a silent timeout.
        """
        old = store.session_id
        if isinstance(store, ZooKeeperStore):
            from kazoo.client import KazooClient  # type: ignore[import-untyped]

            assert self.server is not None
            thief = KazooClient(hosts=self.server.hosts, client_id=store.client_id)
            thief.start(timeout=10)
            thief.stop()
            thief.close()
        else:
            assert isinstance(store, EmbeddedStore)
            conn = sqlite3.connect(store.file, timeout=10, isolation_level=None)
            try:
                with _sqlite.transaction(conn):
                    conn.execute("UPDATE sessions SET heartbeat_ms = 0 WHERE id = ?", (old,))
                    _sessions.sweep(conn, int(time.time() * 1000))
            finally:
                conn.close()
        return old

    def close_all(self) -> None:
        """Close every client opened by :meth:`open` (closing twice is harmless)."""
        for store in reversed(self._opened):
            store.close()
