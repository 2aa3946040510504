"""ZooKeeper-only behaviour: a server restart, an unreachable server, the chroot on open."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient  # type: ignore[import-untyped]

from sparkstorm.cluster.store import StateStore, StoreUnavailableError, open_store
from sparkstorm.cluster.store.zookeeper import ZooKeeperStore
from sparkstorm.testing.polling import wait_for
from tests.integration.zookeeper.backends import BASE_CONF, ensure_zookeeper_installed
from tests.integration.zookeeper.zkserver import ZooKeeperServer, free_port


@pytest.fixture
def own_server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ZooKeeperServer]:
    """A server of this test alone, since the test stops and restarts it."""
    ensure_zookeeper_installed()
    server = ZooKeeperServer(tmp_path / "zookeeper")
    server.start()
    request.node.zk_log_mark = (server, 0)
    yield server
    server.stop()


def _conf(server: ZooKeeperServer, **extra: object) -> dict[str, object]:
    return BASE_CONF | {
        "storm.state.store": "zookeeper",
        "storm.zookeeper.servers": ["127.0.0.1"],
        "storm.zookeeper.port": server.port,
        "storm.zookeeper.root": "/restart",
    } | extra


def test_server_restart_keeps_data_and_the_client_reconnects(own_server: ZooKeeperServer) -> None:
    store = open_store(_conf(own_server, **{"storm.zookeeper.connection.timeout": 1500}))
    try:
        store.create("/storms/wc-1", b"base")
        seen: list[tuple[bytes | None, int]] = []
        store.watch_data("/storms/wc-1", lambda data, version: seen.append((data, version)))

        own_server.stop()
        started = time.monotonic()
        with pytest.raises(StoreUnavailableError) as caught:
            store.get("/storms/wc-1")
        assert caught.value.code == "STATE_UNAVAILABLE"
        assert own_server.hosts in str(caught.value)
        assert time.monotonic() - started < 10  # bounded by the connection timeout

        own_server.start()
        wait_for(lambda: _readable(store), 30, message="store usable after the restart")
        assert store.get("/storms/wc-1") == (b"base", 0)
        store.set("/storms/wc-1", b"after")
        wait_for(lambda: seen[-1] == (b"after", 1), 15,
                 message=f"watch re-armed after the restart (seen {seen!r})")
    finally:
        store.close()


def _readable(store: StateStore) -> bool:
    try:
        store.exists("/")
    except StoreUnavailableError:
        return False
    return True


def test_unreachable_server_fails_fast_with_a_clear_error() -> None:
    port = free_port()  # nothing listens there
    conf = BASE_CONF | {
        "storm.state.store": "zookeeper",
        "storm.zookeeper.servers": ["127.0.0.1"],
        "storm.zookeeper.port": port,
        "storm.zookeeper.connection.timeout": 800,
    }
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        open_store(conf)
    assert caught.value.code == "STATE_UNAVAILABLE"
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert "storm.zookeeper.servers" in str(caught.value)
    assert time.monotonic() - started < 5


def test_open_store_creates_the_root_as_a_chroot(zk_server: ZooKeeperServer) -> None:
    conf = BASE_CONF | {
        "storm.state.store": "zookeeper",
        "storm.zookeeper.servers": [zk_server.hosts],  # host:port form keeps its own port
        "storm.zookeeper.root": "/sparkstorm/chroot-test",
    }
    with open_store(conf) as store:
        assert isinstance(store, ZooKeeperStore)
        assert store.session_id.startswith("0x")
        store.create("/storms/x", b"1")
        raw = KazooClient(hosts=zk_server.hosts)
        raw.start(timeout=10)
        try:
            assert raw.get("/sparkstorm/chroot-test/storms/x")[0] == b"1"
            assert not raw.exists("/storms/x")
        finally:
            raw.stop()
            raw.close()


def test_the_test_server_dies_with_a_test_run_killed_before_its_teardown(tmp_path: Path) -> None:
    """A test run killed by SIGKILL (or SIGTERM: no teardown either) leaves no ZooKeeper."""
    ensure_zookeeper_installed()
    root = Path(__file__).resolve().parents[3]
    starter = (
        "import sys; from pathlib import Path\n"
        "from tests.integration.zookeeper.zkserver import ZooKeeperServer\n"
        "server = ZooKeeperServer(Path(sys.argv[1]))\n"
        "server.start()\n"
        "print(server._proc.pid, flush=True)\n"
        "sys.stdin.read()\n"  # until killed
    )
    run = subprocess.Popen([sys.executable, "-c", starter, str(tmp_path)], cwd=root,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None
        zk_pid = int(run.stdout.readline())
        assert _alive(zk_pid), "ZooKeeper started"
    finally:
        run.kill()
        run.wait(10)
    wait_for(lambda: not _alive(zk_pid), 15, message=f"ZooKeeper {zk_pid} gone with its parent")


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie of ours counts as gone: it can do nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"
