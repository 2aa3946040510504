"""The state-store contract, run against both backends (embedded SQLite and ZooKeeper).

Every behaviour of :class:`sparkstorm.cluster.store.StateStore` that callers rely on is
checked here once, so the backends cannot drift apart.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from sparkstorm.cluster.store import (
    BadVersionError,
    EphemeralParentError,
    InvalidPathError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    StateStore,
    StoreUnavailableError,
)
from sparkstorm.testing.polling import wait_for
from tests.integration.zookeeper.backends import BACKENDS, Backend

pytestmark = pytest.mark.parametrize("backend", BACKENDS, indirect=True)

WAIT = 15.0
"""Seconds to wait for a watch or an expiry; far above the usual tens of milliseconds."""


class Recorder:
    """Collects watch callback values from any thread."""

    def __init__(self) -> None:
        self.values: list[object] = []
        self._lock = threading.Lock()

    def children(self, names: list[str]) -> None:
        with self._lock:
            self.values.append(names)

    def data(self, data: bytes | None, version: int) -> None:
        with self._lock:
            self.values.append((data, version))

    @property
    def last(self) -> object:
        with self._lock:
            return self.values[-1] if self.values else None

    def wait_last(self, expected: object, what: str) -> None:
        wait_for(lambda: self.last == expected, WAIT, interval=0.01,
                 message=f"{what}: last value {expected!r} (seen {self.values!r})")


# --- create / get / set / versions ---------------------------------------------------------


def test_created_node_reads_back_at_version_zero(store: StateStore) -> None:
    assert store.create("/storms/wc-1", b"hello") == "/storms/wc-1"
    assert store.get("/storms/wc-1") == (b"hello", 0)
    assert store.exists("/storms/wc-1")
    assert store.get("/storms") == (b"", 0)  # parent made empty and persistent


def test_create_existing_node_fails(store: StateStore) -> None:
    store.create("/a", b"1")
    with pytest.raises(NodeExistsError) as caught:
        store.create("/a", b"2")
    assert caught.value.code == "STATE_NODE_EXISTS"
    assert "'/a'" in str(caught.value)
    assert store.get("/a") == (b"1", 0)


def test_create_without_parents_needs_the_parent(store: StateStore) -> None:
    with pytest.raises(NoNodeError) as caught:
        store.create("/missing/child", make_parents=False)
    assert caught.value.code == "STATE_NO_NODE"
    assert not store.exists("/missing")
    store.create("/missing")
    store.create("/missing/child", make_parents=False)
    assert store.exists("/missing/child")


@pytest.mark.parametrize("data", [b"", b"\x00\xff binary \x00", bytes(range(256)) * 400])
def test_bytes_round_trip_exactly(store: StateStore, data: bytes) -> None:
    store.create("/blob", data)
    assert store.get("/blob") == (data, 0)


def test_set_bumps_the_version(store: StateStore) -> None:
    store.create("/n", b"0")
    assert store.set("/n", b"1") == 1
    assert store.set("/n", b"2") == 2
    assert store.get("/n") == (b"2", 2)


def test_conditional_set_checks_the_version(store: StateStore) -> None:
    store.create("/n", b"0")
    assert store.set("/n", b"1", version=0) == 1
    with pytest.raises(BadVersionError) as caught:
        store.set("/n", b"stale", version=0)
    assert caught.value.code == "STATE_BAD_VERSION"
    assert store.get("/n") == (b"1", 1)


def test_missing_nodes_raise_no_node(store: StateStore) -> None:
    assert not store.exists("/nope")
    for call in (lambda: store.get("/nope"), lambda: store.set("/nope", b"x"),
                 lambda: store.children("/nope"), lambda: store.delete("/nope"),
                 lambda: store.delete("/nope", recursive=True)):
        with pytest.raises(NoNodeError) as caught:
            call()
        assert caught.value.code == "STATE_NO_NODE"


def test_compare_and_set_from_two_clients_loses_no_update(backend: Backend,
                                                          store: StateStore) -> None:
    other = backend.open()
    store.create("/counter", b"0")

    def add(client: StateStore, times: int) -> None:
        for _ in range(times):
            while True:
                data, version = client.get("/counter")
                try:
                    client.set("/counter", str(int(data) + 1).encode(), version)
                    break
                except BadVersionError:
                    continue

    threads = [threading.Thread(target=add, args=(c, 25)) for c in (store, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.get("/counter") == (b"50", 50)


# --- paths ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", "relative", "/trailing/", "//double", "/a//b", "/a/./b",
                                  "/a/../b", "/nul\x00"])
def test_malformed_paths_are_refused(store: StateStore, path: str) -> None:
    with pytest.raises(InvalidPathError) as caught:
        store.create(path)
    assert caught.value.code == "STATE_BAD_PATH"
    assert repr(path) in str(caught.value)


def test_root_cannot_be_deleted(store: StateStore) -> None:
    with pytest.raises(InvalidPathError):
        store.delete("/", recursive=True)
    assert store.exists("/")


def test_each_root_is_isolated(backend: Backend, store: StateStore) -> None:
    store.create("/only-here", b"x")
    root = str(backend.conf["storm.zookeeper.root"])
    other = backend.open(storm_zookeeper_root=root + "-other")
    assert not other.exists("/only-here")
    assert other.children("/") == []
    parent = backend.open(storm_zookeeper_root="/")
    assert parent.get(root + "/only-here") == (b"x", 0)


# --- children and delete -----------------------------------------------------------------


def test_children_are_sorted_names(store: StateStore) -> None:
    for name in ("b", "a", "c-1"):
        store.create(f"/dir/{name}")
    store.create("/dir/a/deeper")
    assert store.children("/dir") == ["a", "b", "c-1"]
    assert store.children("/dir/b") == []
    assert "dir" in store.children("/")


def test_delete_leaf_and_refuse_non_empty(store: StateStore) -> None:
    store.create("/d/x")
    with pytest.raises(NotEmptyError) as caught:
        store.delete("/d")
    assert caught.value.code == "STATE_NOT_EMPTY"
    store.delete("/d/x")
    store.delete("/d")
    assert not store.exists("/d")


def test_recursive_delete_spares_siblings_with_a_common_prefix(store: StateStore) -> None:
    for path in ("/t/a/1/x", "/t/a/2", "/t/ab", "/t/a0", "/t/a-b"):
        store.create(path, b"keep")
    store.delete("/t/a", recursive=True)
    assert store.children("/t") == ["a-b", "a0", "ab"]
    store.create("/t/a")  # the name is free again, and fresh
    assert store.get("/t/a") == (b"", 0)


# --- ephemeral and sequence nodes ---------------------------------------------------------


def test_ephemeral_nodes_go_with_their_session(backend: Backend, store: StateStore) -> None:
    watcher = backend.open()
    store.create("/supervisors/s1", b"info", ephemeral=True)
    assert watcher.get("/supervisors/s1") == (b"info", 0)
    store.close()
    wait_for(lambda: not watcher.exists("/supervisors/s1"), WAIT,
             message="ephemeral node deleted when its store closed")
    assert watcher.exists("/supervisors")  # the parent is persistent


def test_ephemeral_nodes_cannot_have_children(store: StateStore) -> None:
    store.create("/eph", ephemeral=True)
    with pytest.raises(EphemeralParentError) as caught:
        store.create("/eph/child")
    assert caught.value.code == "STATE_EPHEMERAL_PARENT"


def test_sequence_nodes_get_ten_digit_increasing_suffixes(store: StateStore) -> None:
    store.create("/q")
    first = store.create("/q/e", b"1", sequence=True)
    second = store.create("/q/e", b"2", sequence=True)
    store.create("/q/other")
    third = store.create("/q/e", b"3", sequence=True, ephemeral=True)
    assert first == "/q/e0000000000"
    assert second == "/q/e0000000001"
    assert third == "/q/e0000000003"  # the counter counts every child change, like ZooKeeper
    assert store.get(third) == (b"3", 0)


def test_sequence_numbers_are_unique_under_concurrency(backend: Backend,
                                                       store: StateStore) -> None:
    clients = [store, backend.open()]
    made: list[str] = []
    lock = threading.Lock()

    def create(client: StateStore) -> None:
        for _ in range(15):
            path = client.create("/seq/n-", sequence=True)
            with lock:
                made.append(path)

    threads = [threading.Thread(target=create, args=(c,)) for c in clients * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(made)) == 60
    assert len(store.children("/seq")) == 60


# --- watches -------------------------------------------------------------------------------


def test_children_watch_sees_changes_from_another_client(backend: Backend,
                                                         store: StateStore) -> None:
    writer = backend.open()
    seen = Recorder()
    store.watch_children("/assignments", seen.children)
    assert seen.values == [[]]  # called at once; the node need not exist
    writer.create("/assignments/t1")
    seen.wait_last(["t1"], "child created")
    writer.create("/assignments/t2")
    seen.wait_last(["t1", "t2"], "second child")
    writer.delete("/assignments/t1")
    seen.wait_last(["t2"], "child deleted")
    writer.delete("/assignments", recursive=True)
    seen.wait_last([], "watched node deleted")
    writer.create("/assignments/t3")
    seen.wait_last(["t3"], "watched node re-created")
    assert all(a != b for a, b in zip(seen.values, seen.values[1:], strict=False))


def test_data_watch_sees_create_set_and_delete(backend: Backend, store: StateStore) -> None:
    writer = backend.open()
    seen = Recorder()
    store.watch_data("/storms/t1", seen.data)
    assert seen.values == [(None, -1)]
    writer.create("/storms/t1", b"a")
    seen.wait_last((b"a", 0), "created")
    writer.set("/storms/t1", b"b")
    seen.wait_last((b"b", 1), "set")
    writer.delete("/storms/t1")
    seen.wait_last((None, -1), "deleted")


def test_watch_fires_for_own_changes_and_stops_when_cancelled(store: StateStore) -> None:
    seen = Recorder()
    watch = store.watch_data("/n", seen.data)
    store.create("/n", b"1")
    seen.wait_last((b"1", 0), "own create")
    watch.cancel()
    assert not watch.active
    count = len(seen.values)
    store.set("/n", b"2")
    # a later watch sees the change, so the cancelled one had every chance to fire
    probe = Recorder()
    store.watch_data("/n", probe.data)
    probe.wait_last((b"2", 1), "probe")
    marker = Recorder()
    store.watch_children("/", marker.children)
    store.create("/marker")
    marker.wait_last(sorted(["n", "marker"]), "marker")
    assert len(seen.values) == count


def test_a_failing_callback_keeps_its_watch(store: StateStore) -> None:
    seen = Recorder()

    def flaky(names: list[str]) -> None:
        seen.children(names)
        if names == ["boom"]:
            msg = "callback bug"
            raise RuntimeError(msg)

    store.watch_children("/w", flaky)
    store.create("/w/boom")
    seen.wait_last(["boom"], "first change")
    store.create("/w/next")
    seen.wait_last(["boom", "next"], "change after the callback raised")


# --- sessions --------------------------------------------------------------------------------


def test_session_expiry_deletes_ephemerals_and_the_store_goes_on(backend: Backend,
                                                                 store: StateStore) -> None:
    observer = backend.open()
    gone = Recorder()
    observer.watch_children("/supervisors", gone.children)
    store.create("/supervisors/s1", ephemeral=True)
    store.create("/persistent", b"stays")
    gone.wait_last(["s1"], "ephemeral registered")
    old = backend.expire_session(store)
    gone.wait_last([], "ephemeral deleted by the expiry")
    wait_for(lambda: store.session_id not in ("", old), WAIT,
             message="expired store opened a new session")
    assert store.get("/persistent") == (b"stays", 0)
    store.create("/supervisors/s1", ephemeral=True)  # owned by the new session
    gone.wait_last(["s1"], "re-registered")
    store.close()
    gone.wait_last([], "new session's ephemeral deleted on close")


def test_watches_survive_session_expiry(backend: Backend, store: StateStore) -> None:
    writer = backend.open()
    seen = Recorder()
    store.watch_data("/flag", seen.data)
    backend.expire_session(store)
    writer.create("/flag", b"up")
    seen.wait_last((b"up", 0), "change after the watcher's session expired")


def test_closed_store_refuses_calls(store: StateStore) -> None:
    store.close()
    store.close()
    calls: list[Callable[[], object]] = [
        lambda: store.get("/"), lambda: store.create("/x"), lambda: store.children("/"),
        lambda: store.watch_children("/", lambda names: None),
    ]
    for call in calls:
        with pytest.raises(StoreUnavailableError) as caught:
            call()
        assert caught.value.code == "STATE_STORE_CLOSED"
