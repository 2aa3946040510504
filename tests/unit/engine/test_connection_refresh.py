"""Connection refresh (issue 10 §1): the driver's endpoint lookup and the task's retry.

Real TCP sockets throughout: the driver's lookup is the real listener, and a small server
speaking the executors' framing (token first, one request, one reply) stands in for an
executor at its new address, recording what it was asked. A port bound and closed again is
an executor that went away (connection refused).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sparkstorm.engine.driver.endpoint_lookup import (
    EndpointLookup,
    Located,
    look_up,
    refresh_decision,
)
from sparkstorm.engine.spark.stage import (
    DRIVER,
    ExecutorUnreachable,
    ExecutorUnresponsive,
    StageInfo,
    call_refreshing,
    run_stage,
)
from sparkstorm.engine.wire.anchor_columns import batch_of
from sparkstorm.engine.wire.endpoint import Endpoint, authenticated
from sparkstorm.engine.wire.failures import FAIL_CRASH
from sparkstorm.engine.wire.frames import pack, recv_frame, send_reply, unpack
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import WindowFlags, WindowRequest

TOKEN = "topology-token"
GONE = Endpoint("/nonexistent/sparkstorm-e4.sock", "127.0.0.1", 0)


@pytest.fixture
def gone() -> Endpoint:
    """An executor's old address: nothing listens there any more."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return Endpoint(GONE.path, "127.0.0.1", port)


class MovedExecutor:
    """A listener with the executors' framing; answers every request with what it got."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.endpoint = Endpoint(GONE.path, "127.0.0.1", self.listener.getsockname()[1])
        self.requests: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return  # closed
            with conn:
                if authenticated(conn, TOKEN):
                    request = unpack(recv_frame(conn))
                    self.requests.append(request)
                    send_reply(conn, {}, WindowMeta(4, "count").encode())

    def close(self) -> None:
        # close() alone does not wake a thread blocked in accept() on Linux; shutdown() does
        with contextlib.suppress(OSError):  # some platforms refuse it: close() still frees
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(5)
        assert not self.thread.is_alive(), "the moved executor's thread stopped"


@pytest.fixture
def moved() -> Iterator[MovedExecutor]:
    server = MovedExecutor()
    yield server
    server.close()


class Map:
    """The driver's endpoint map as the lookup reads it; counts the questions."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple[int, Endpoint, int]] = {}
        self.asked = 0

    def where(self, gid: int) -> tuple[int, Endpoint, int] | None:
        self.asked += 1
        return self.entries.get(gid)


@pytest.fixture
def lookup() -> Iterator[tuple[EndpointLookup, Map]]:
    endpoints = Map()
    server = EndpointLookup("127.0.0.1", TOKEN, endpoints.where)
    yield server, endpoints
    server.close()


def _stage(lookup: EndpointLookup | None, old: Endpoint, pid: int | None,
           answer_timeout: float = 10.0) -> StageInfo:
    return StageInfo(1, (4,), {4: 1}, {4: old}, TOKEN, 0.5, answer_timeout, {4: "count"},
                     lookup.address if lookup is not None else None,
                     {} if pid is None else {4: pid})


@pytest.mark.parametrize(("found", "pid", "expected"), [
    pytest.param(None, 11, "wait", id="lookup-silent"),
    pytest.param(Located(1, GONE, 11), 11, "wait", id="not-moved-yet"),
    pytest.param(Located(2, Endpoint("/b.sock", "10.0.0.2", 7), 11), 11, "moved", id="moved"),
    pytest.param(Located(2, GONE, 12), 11, "replaced", id="restarted-in-place"),
    pytest.param(Located(2, Endpoint("/b.sock", "10.0.0.2", 7), 12), 11, "replaced",
                 id="restarted-elsewhere"),
    pytest.param(Located(2, Endpoint("/b.sock", "10.0.0.2", 7), 12), None, "moved",
                 id="pid-unknown"),
])
def test_refresh_decision(found: Located | None, pid: int | None, expected: str) -> None:
    assert refresh_decision(GONE, pid, found) == expected


def test_the_lookup_answers_where_an_executor_is_now(
        lookup: tuple[EndpointLookup, Map]) -> None:
    server, endpoints = lookup
    here = Endpoint("/w/e4.sock", "10.0.0.3", 4004)
    endpoints.entries[4] = (7, here, 1234)
    assert look_up(server.address, TOKEN, 4, 5.0) == Located(7, here, 1234)
    assert look_up(server.address, TOKEN, 5, 5.0) is None, "an executor it does not know"
    asked = endpoints.asked
    assert look_up(server.address, "not-the-token", 4, 5.0) is None
    assert endpoints.asked == asked, "a caller without the token learns nothing"


def test_a_closed_lookup_is_no_answer_and_frees_its_port() -> None:
    server = EndpointLookup("127.0.0.1", TOKEN, lambda gid: None)
    address = server.address
    server.close()
    assert look_up(address, TOKEN, 4, 2.0) is None
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(address)  # the port is free again


def test_a_moved_executor_gets_the_same_request_at_its_new_address(
        lookup: tuple[EndpointLookup, Map], gone: Endpoint, moved: MovedExecutor) -> None:
    server, endpoints = lookup
    endpoints.entries[4] = (2, moved.endpoint, 11)  # the same process, another address
    request = WindowRequest(9, WindowFlags(after=8), rows=[])
    refreshed: list[str] = []
    _, endpoint = call_refreshing(_stage(server, gone, 11), 4, request, [], refreshed)
    assert endpoint == moved.endpoint
    assert moved.requests == [request.to_wire()], \
        "the window's request, unchanged (answered from memory)"
    assert refreshed == [f"moved 127.0.0.1:{moved.endpoint.port}"]


def test_a_new_process_gets_the_window_without_waiting_for_one_it_never_saw(
        lookup: tuple[EndpointLookup, Map], gone: Endpoint, moved: MovedExecutor) -> None:
    server, endpoints = lookup
    endpoints.entries[4] = (2, moved.endpoint, 12)  # restarted: a new pid
    refreshed: list[str] = []
    call_refreshing(_stage(server, gone, 11), 4,
                    WindowRequest(9, WindowFlags(after=8), rows=[]), [], refreshed)
    assert moved.requests == [{"cmd": "window", "w": 9, "rows": []}]
    assert refreshed == [f"replaced 127.0.0.1:{moved.endpoint.port}"]


def test_the_task_waits_for_the_new_address_to_be_reported(
        lookup: tuple[EndpointLookup, Map], gone: Endpoint, moved: MovedExecutor) -> None:
    server, endpoints = lookup
    endpoints.entries[4] = (1, gone, 11)  # the driver has not heard of the move yet

    def heartbeat_arrives() -> None:
        while endpoints.asked < 2:  # the task asked (and was told "where it was") twice
            time.sleep(0.05)
        endpoints.entries[4] = (2, moved.endpoint, 11)

    arrival = threading.Thread(target=heartbeat_arrives, daemon=True)
    arrival.start()
    refreshed: list[str] = []
    call_refreshing(_stage(server, gone, 11), 4, WindowRequest(3, rows=[]), [],
                    refreshed)
    arrival.join(5)
    assert len(moved.requests) == 1 and len(refreshed) == 1


def test_an_executor_nobody_moved_is_given_up_on_after_the_answer_timeout(
        lookup: tuple[EndpointLookup, Map], gone: Endpoint) -> None:
    server, endpoints = lookup
    endpoints.entries[4] = (1, gone, 11)
    stage = _stage(server, gone, 11, answer_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(ExecutorUnreachable) as caught:
        call_refreshing(stage, 4, WindowRequest(3, rows=[]), [], [])
    assert caught.value.code == "EXECUTOR_UNREACHABLE"
    assert "topology.executor.answer.timeout.secs" in str(caught.value)
    assert time.monotonic() - started < 10
    rows = pack([batch_of(7, 3, "default", [["a"], ["b"]], [{100: 1}, {200: 2}])])
    ((key, (blob, _, call)),) = list(run_stage(stage, 3, WindowFlags(), 0, [(4, rows)]))
    meta = WindowMeta.decode(blob)
    assert key == DRIVER and call is None and meta.lost
    assert set(meta.failed) == {100, 200}, "only then do the trees of its input fail"
    assert {why.cause for why in meta.failed.values()} == {FAIL_CRASH}


@pytest.fixture
def silent() -> Iterator[Endpoint]:
    """An address that accepts connections into its backlog and never answers."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=16)
    yield Endpoint(GONE.path, "127.0.0.1", listener.getsockname()[1])
    listener.close()


def test_an_executor_silent_mid_call_is_followed_if_its_worker_moved_it(
        lookup: tuple[EndpointLookup, Map], silent: Endpoint, moved: MovedExecutor) -> None:
    server, endpoints = lookup
    endpoints.entries[4] = (2, moved.endpoint, 12)
    refreshed: list[str] = []
    call_refreshing(_stage(server, silent, 11, answer_timeout=0.5), 4,
                    WindowRequest(3, rows=[]), [], refreshed)
    assert len(moved.requests) == 1 and refreshed[0].startswith("replaced")


def test_a_hung_executor_nobody_moved_is_still_given_up_on(
        lookup: tuple[EndpointLookup, Map], silent: Endpoint) -> None:
    server, endpoints = lookup
    endpoints.entries[4] = (1, silent, 11)
    with pytest.raises(ExecutorUnresponsive):
        call_refreshing(_stage(server, silent, 11, answer_timeout=0.5), 4,
                        WindowRequest(3, rows=[]), [], [])


def test_the_drivers_own_executors_are_never_looked_up(
        lookup: tuple[EndpointLookup, Map], gone: Endpoint) -> None:
    server, endpoints = lookup
    with pytest.raises(ConnectionError):
        call_refreshing(_stage(server, gone, None), 4, WindowRequest(1, rows=[]),
                        [], [])
    assert endpoints.asked == 0, "a restarting executor of its own comes back where it was"


def test_a_refreshed_call_is_reported_to_the_driver(
        lookup: tuple[EndpointLookup, Map], gone: Endpoint, moved: MovedExecutor) -> None:
    server, endpoints = lookup
    endpoints.entries[4] = (2, moved.endpoint, 12)
    records = list(run_stage(_stage(server, gone, 11), 5, WindowFlags(), 0, [(4, pack([]))]))
    ((key, (_, _, call)),) = records
    local, crossed, refreshed = call
    assert key == DRIVER and not local and crossed > 0
    assert refreshed == [f"replaced 127.0.0.1:{moved.endpoint.port}"]
