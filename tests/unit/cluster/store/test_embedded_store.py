"""The embedded store's own promises.

The file, WAL, persistence, several processes, a corrupt file, open_store and its background
threads.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sparkstorm.cluster.store import StoreUnavailableError, open_store
from sparkstorm.cluster.store.embedded import EmbeddedStore, store_file
from sparkstorm.errors import ConfigError
from sparkstorm.testing.polling import wait_for


def test_open_store_puts_the_file_under_the_local_dir(tmp_path: Path) -> None:
    conf = {"storm.state.store": "embedded", "storm.local.dir": str(tmp_path / "local"),
            "storm.zookeeper.root": "/storm"}
    with open_store(conf) as store:
        assert isinstance(store, EmbeddedStore)
        assert store.file == tmp_path / "local" / "state" / "store.sqlite"
        store.create("/storms/x", b"1")
    assert store_file(tmp_path / "local").is_file()


def test_open_store_rejects_bad_conf(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        open_store({"storm.state.store": "etcd"})
    assert caught.value.code == "CONFIG_OUT_OF_RANGE"
    assert "storm.state.store" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        open_store({"storm.local.dir": str(tmp_path), "storm.zookeeper.session.timeout": "20s"})
    assert caught.value.code == "CONFIG_WRONG_TYPE"
    assert "'storm.zookeeper.session.timeout' must be an int, got '20s'" in str(caught.value)


def test_file_uses_wal_and_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with EmbeddedStore(path, root="/storm") as store:
        store.create("/storms/x", b"kept")
        store.set("/storms/x", b"kept2")
        store.create("/eph", ephemeral=True)
    with EmbeddedStore(path, root="/storm") as store:
        assert store.get("/storms/x") == (b"kept2", 1)
        assert not store.exists("/eph")
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_corrupt_file_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreUnavailableError) as caught:
        EmbeddedStore(path)
    assert caught.value.code == "STATE_STORE_CORRUPT"
    assert str(path) in str(caught.value) and "move the file aside" in str(caught.value)
    assert path.read_bytes().startswith(b"this is not")  # never deleted


def test_unwritable_local_dir_gives_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreUnavailableError) as caught:
        EmbeddedStore(blocker / "state" / "store.sqlite")
    assert "storm.local.dir" in str(caught.value)


_WORKER = """
import sys
from sparkstorm.cluster.store.embedded import EmbeddedStore
from sparkstorm.cluster.store import BadVersionError
with EmbeddedStore(sys.argv[1], busy_timeout_ms=30000) as store:
    for _ in range(int(sys.argv[2])):
        store.create("/seq/n-", sequence=True)
        while True:
            data, version = store.get("/counter")
            try:
                store.set("/counter", str(int(data) + 1).encode(), version)
                break
            except BadVersionError:
                pass
"""


def test_several_processes_share_the_file_safely(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with EmbeddedStore(path) as store:
        store.create("/counter", b"0")
        workers = [subprocess.Popen([sys.executable, "-c", _WORKER, str(path), "40"])
                   for _ in range(3)]
        assert [w.wait(60) for w in workers] == [0, 0, 0]
        assert store.get("/counter") == (b"120", 120)
        assert len(store.children("/seq")) == 120


def test_watch_polling_reads_only_the_counter_when_nothing_changed(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path / "store.sqlite", poll_interval_ms=10_000) as store:
        seen: list[list[str]] = []
        store.watch_children("/w", seen.append)
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        store.poll_watches()
        assert len(statements) == 1 and "meta" in statements[0]
        store.create("/w/a")
        statements.clear()
        store.poll_watches()
        assert seen == [[], ["a"]]


def test_a_file_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    EmbeddedStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreUnavailableError) as caught:
        EmbeddedStore(path)
    assert caught.value.code == "STATE_STORE_CORRUPT" and "schema version 99" in str(caught.value)


def test_close_stops_the_heartbeat_and_watch_threads(tmp_path: Path) -> None:
    def state_threads() -> list[str]:
        return sorted(t.name for t in threading.enumerate()
                      if t.name.startswith("sparkstorm-state-"))

    before = state_threads()
    store = EmbeddedStore(tmp_path / "store.sqlite", session_timeout_ms=30)
    seen: list[list[str]] = []
    store.watch_children("/", seen.append)
    store.create("/x")
    wait_for(lambda: ["x"] in seen, 10, message="the watch thread delivers the change")
    assert state_threads() == sorted([*before, "sparkstorm-state-heartbeat",
                                      "sparkstorm-state-watch"])
    store.close()
    assert state_threads() == before, "close joins its background threads"
