"""Before authentication a TCP connection holds no thread, and not for long (issue 30).

A real executor process is flooded with idle TCP connections: its threads stay as they were,
the idle ones are closed after the handshake deadline, and a caller with the token is
served during the flood. A wrong token, an oversized first frame and a connection over the
cap are closed at once. The door itself (``engine.wire.gate``) is also checked in-process:
a token trickled byte by byte does not extend the deadline, and the endpoint lookup and the
hosting link use it.
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Topology
from sparkstorm.config import load_config
from sparkstorm.engine.driver.endpoint_lookup import EndpointLookup, look_up
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import call_executor, ping
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.frames import pack, recv_frame, send_frame
from sparkstorm.engine.wire.gate import AuthenticatedListener
from sparkstorm.engine.wire.protocol import WindowRequest
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, RecordingBolt

pytestmark = pytest.mark.timeout(120)

DEADLINE = 2.0
FLOOD = 300


class Pair(Topology):
    numbers = NumberSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


def proc_status(pid: int) -> dict[str, int]:
    """Threads, resident memory (kB) and open file descriptors of process ``pid``."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Threads", "VmRSS"):
            fields[key] = int(value.split()[0])
    fields["fds"] = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    return fields


def _pool(tmp_path: Path, **conf: Any) -> ExecutorPool:
    merged = load_config(topology={"test.dir": str(tmp_path), "test.count": 0,
                                   "topology.name": "pair",
                                   "topology.tcp.handshake.timeout.secs": DEADLINE, **conf})
    workdir = tmp_path / "work"
    workdir.mkdir()
    pool = ExecutorPool(ExecutionPlan(Pair.topology_spec, merged), "pair", workdir)
    pool.start()
    return pool


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Callable[..., ExecutorPool]]:
    pools: list[ExecutorPool] = []

    def start(**conf: Any) -> ExecutorPool:
        pools.append(_pool(tmp_path, **conf))
        return pools[-1]
    yield start
    for pool in pools:
        pool.stop()


def _sink(pool: ExecutorPool, tmp_path: Path) -> tuple[int, Endpoint]:
    """The sink executor's gid and its TCP endpoint as a caller on another host sees it."""
    gid = pool.plan.task_executor[pool.plan.component_tasks["sink"][0]]
    here = pool.endpoints[gid]
    return gid, Endpoint(str(tmp_path / "not-on-this-host.sock"), here.host, here.port)


def _window(pool: ExecutorPool, window: int) -> WindowRequest:
    sink = pool.plan.component_tasks["sink"][0]
    spout = pool.plan.component_tasks["numbers"][0]
    return WindowRequest(window, rows=[pack([[sink, spout, "default", [[window, "k"]],
                                              [None], [None]]])])


def _closed_by_peer(sock: socket.socket, within: float) -> bool:
    """Whether the other end closes ``sock`` within ``within`` seconds."""
    readable, _, _ = select.select([sock], [], [], within)
    if not readable:
        return False
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _open_idle(address: tuple[str, int], count: int) -> list[socket.socket]:
    return [socket.create_connection(address, 5) for _ in range(count)]


def test_a_flood_of_idle_connections_holds_no_thread_and_is_closed_after_the_deadline(
        started: Callable[..., ExecutorPool], tmp_path: Path) -> None:
    pool = started(**{"topology.tcp.max.connections": 1024})
    gid, elsewhere = _sink(pool, tmp_path)
    pid = pool.pids()[gid]
    assert ping(elsewhere, pool.token, 5)  # the door's thread and a served call are up
    before = proc_status(pid)

    opened = time.monotonic()
    idle = _open_idle((elsewhere.host, elsewhere.port), FLOOD)
    try:
        wait_for(lambda: proc_status(pid)["fds"] >= before["fds"] + FLOOD - 2, 10,
                 message=f"the executor accepted the {FLOOD} idle connections")
        flooded = proc_status(pid)
        # a caller with the token is served during the flood, over TCP
        rows, _ = call_executor(elsewhere, pool.token, _window(pool, 1), 10)
        assert isinstance(rows, dict) and ping(elsewhere, pool.token, 5)
        during = proc_status(pid)
        assert flooded["Threads"] <= before["Threads"] + 1, (before, flooded)
        assert during["Threads"] <= before["Threads"] + 2, (before, during)

        closed = [_closed_by_peer(sock, DEADLINE + 5) for sock in idle]
        waited = time.monotonic() - opened
        assert all(closed), f"{closed.count(False)} idle connections still open"
        assert waited >= DEADLINE * 0.9, f"closed after {waited:.2f} s, before the deadline"
    finally:
        for sock in idle:
            sock.close()
    wait_for(lambda: proc_status(pid)["fds"] <= before["fds"] + 2, 10,
             message="the executor let go of the idle connections")
    after = proc_status(pid)
    assert after["Threads"] <= before["Threads"] + 1, (before, after)
    print(f"\nexecutor {gid} under {FLOOD} idle TCP connections: threads "
          f"{before['Threads']} -> {flooded['Threads']} -> {after['Threads']}, RSS "
          f"{before['VmRSS']} -> {flooded['VmRSS']} -> {after['VmRSS']} kB, fds "
          f"{before['fds']} -> {flooded['fds']} -> {after['fds']}")


def test_a_wrong_token_or_an_oversized_first_frame_is_closed_at_once(
        started: Callable[..., ExecutorPool], tmp_path: Path) -> None:
    pool = started()
    _, elsewhere = _sink(pool, tmp_path)
    address = (elsewhere.host, elsewhere.port)
    with socket.create_connection(address, 5) as wrong:
        send_frame(wrong, b"not-the-token")
        assert _closed_by_peer(wrong, DEADLINE / 2)
    with socket.create_connection(address, 5) as huge:
        huge.sendall(struct.pack(">I", 1 << 30))  # would make the reader wait for 1 GiB
        assert _closed_by_peer(huge, DEADLINE / 2)
    assert not ping(elsewhere, "wrong-token", 5)
    assert ping(elsewhere, pool.token, 5)


def test_connections_over_the_cap_are_closed_on_accept_and_logged_once(
        started: Callable[..., ExecutorPool], tmp_path: Path) -> None:
    cap = 20
    pool = started(**{"topology.tcp.max.connections": cap,
                      "topology.tcp.handshake.timeout.secs": 5})
    gid, elsewhere = _sink(pool, tmp_path)
    pid = pool.pids()[gid]
    fds = proc_status(pid)["fds"]
    idle = _open_idle((elsewhere.host, elsewhere.port), cap)
    try:
        wait_for(lambda: proc_status(pid)["fds"] >= fds + cap, 10,
                 message="the executor holds the idle connections")
        over = _open_idle((elsewhere.host, elsewhere.port), 30)
        assert all(_closed_by_peer(sock, DEADLINE / 2) for sock in over), "over the cap"
        for sock in over:
            sock.close()
        with pytest.raises(ConnectionError):  # full: even a caller with the token waits
            call_executor(elsewhere, pool.token, _window(pool, 1), 1)
        assert all(_closed_by_peer(sock, 5 + 5) for sock in idle)
    finally:
        for sock in idle:
            sock.close()
    wait_for(lambda: ping(elsewhere, pool.token, 2), 10,
             message="the executor serves again once the idle ones are gone")
    log = pool.log_path(gid).read_text()
    refusals = [line for line in log.splitlines() if "closed before authentication" in line]
    assert 1 <= len(refusals) <= 2, refusals  # rate limited: not one line per connection
    assert "over topology.tcp.max.connections (20)" in refusals[0]


# --- the door in-process ---------------------------------------------------------------------


def _echo(conn: socket.socket) -> None:
    send_frame(conn, recv_frame(conn))


@pytest.fixture
def door() -> Iterator[AuthenticatedListener]:
    listener = AuthenticatedListener(socket.create_server(("127.0.0.1", 0)), "tok", _echo,
                                     name="test", handshake_timeout=1.0, max_connections=8)
    yield listener
    listener.close()


def test_a_token_trickled_byte_by_byte_does_not_extend_the_deadline(
        door: AuthenticatedListener) -> None:
    with socket.create_connection(door.address, 5) as slow:
        opened = time.monotonic()
        frame = struct.pack(">I", 3) + b"tok"
        for byte in frame[:-1]:  # one byte every 0.3 s: 1.8 s in all, over the 1 s deadline
            try:
                slow.sendall(bytes([byte]))
            except OSError:
                break
            if _closed_by_peer(slow, 0.3):
                break
        assert _closed_by_peer(slow, 2)
        assert 0.9 <= time.monotonic() - opened < 2.5
    assert wait_for(lambda: door.open_connections == 0, 5, message="let go")


def test_the_door_serves_each_caller_on_its_own_thread_and_counts_them(
        door: AuthenticatedListener) -> None:
    callers = [socket.create_connection(door.address, 5) for _ in range(3)]
    try:
        for sock in callers:
            send_frame(sock, b"tok")
        wait_for(lambda: door.served == 3, 5, message="three callers served")
        for i, sock in enumerate(callers):  # in any order: each has a thread
            send_frame(sock, b"%d" % i)
        assert [recv_frame(sock) for sock in reversed(callers)] == [b"2", b"1", b"0"]
    finally:
        for sock in callers:
            sock.close()
    wait_for(lambda: door.open_connections == 0, 5, message="served connections counted out")


def test_closing_the_door_closes_the_port_and_the_pending_handshakes() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    door = AuthenticatedListener(listener, "tok", _echo, name="test", handshake_timeout=30,
                                 max_connections=8)
    pending = socket.create_connection(door.address, 5)
    wait_for(lambda: door.open_connections == 1, 5, message="accepted")
    door.close()
    assert _closed_by_peer(pending, 2)
    pending.close()
    with pytest.raises(OSError):
        socket.create_connection(door.address, 1).close()


def test_the_endpoint_lookup_closes_idle_callers_and_answers_the_others() -> None:
    endpoint = Endpoint("/nowhere.sock", "127.0.0.1", 1234)
    lookup = EndpointLookup("127.0.0.1", "tok", lambda gid: (3, endpoint, 99), (1.0, 8))
    try:
        idle = _open_idle(lookup.address, 5)
        found = look_up(lookup.address, "tok", 0, 5)
        assert found is not None and found.endpoint == endpoint and found.pid == 99
        assert look_up(lookup.address, "wrong", 0, 2) is None
        assert all(_closed_by_peer(sock, 3) for sock in idle)
        for sock in idle:
            sock.close()
    finally:
        lookup.close()


def test_the_hosting_link_closes_idle_callers(tmp_path: Path) -> None:
    from sparkstorm.spark_app.hosting import SparkHosting

    hosting = SparkHosting.__new__(SparkHosting)  # only its listener: no Spark here
    hosting.name, hosting.token, hosting.timeout = "t", "tok", 5.0
    hosting.stopping = threading.Event()
    hosting.conf = {"topology.tcp.handshake.timeout.secs": 1.0,
                    "topology.tcp.max.connections": 4}
    host, port = hosting.listen(local=True)
    try:
        idle = _open_idle((host, port), 4)
        with socket.create_connection((host, port), 5) as over:
            assert _closed_by_peer(over, 0.5), "over the cap of 4"
        assert all(_closed_by_peer(sock, 3) for sock in idle)
        for sock in idle:
            sock.close()
    finally:
        assert hosting._listener is not None
        hosting._listener.close()
