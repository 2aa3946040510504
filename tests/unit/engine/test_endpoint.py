"""An executor is reached over its Unix socket on its host and over TCP from elsewhere.

A TCP caller sends the topology's token first; one without it gets nothing.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.main import ExecutorServer
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import call_executor, ping
from sparkstorm.engine.wire.endpoint import Endpoint, advertised_host
from sparkstorm.engine.wire.frames import pack, recv_frame, send_frame
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import PingRequest, WindowRequest
from sparkstorm.engine.wire.row_wire import unpack_rows

TOKEN = "topology-token"


class Numbers(Spout):
    outputs = ["n"]


class Double(Bolt):
    outputs = ["n"]

    def process(self, tup: Any) -> None:
        self.emit([tup.values.n * 2])


class Doubling(Topology):
    numbers = Numbers.spec()
    double = Double.spec(inputs=[numbers])
    sink = Double.spec(inputs=[double])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ExecutionPlan, ExecutorServer, int]]:
    """The ``double`` executor serving a Unix socket and TCP on loopback."""
    plan = ExecutionPlan(Doubling.topology_spec, {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "double")
    server = ExecutorServer(BoltExecutor(plan, gid, "tcp"), str(tmp_path / "e.sock"),
                            tcp=(("127.0.0.1", 0), TOKEN))  # the OS picks the port
    port = int((tmp_path / "e.sock.port").read_text())  # as the pool reads it
    assert server.tcp_listener is not None
    assert port == server.tcp_listener.getsockname()[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield plan, server, port
    server._shutdown()
    thread.join(5)


def _window(plan: ExecutionPlan, window: int) -> WindowRequest:
    double, spout = plan.component_tasks["double"][0], plan.component_tasks["numbers"][0]
    return WindowRequest(window, rows=[
        pack([[double, spout, "default", [[1], [2]], [7, 8], [1, 2]]])])


def test_a_caller_on_another_host_reaches_the_executor_over_tcp(
        served: tuple[ExecutionPlan, ExecutorServer, int], tmp_path: Path) -> None:
    plan, server, port = served
    elsewhere = Endpoint(str(tmp_path / "not-on-this-host.sock"), "127.0.0.1", port)
    assert not elsewhere.local()
    rows, body = call_executor(elsewhere, TOKEN, _window(plan, 1), 5)
    ((_, _, _, values, _, _),) = unpack_rows(next(iter(rows.values())))
    assert values == [[2], [4]]
    assert WindowMeta.decode(body).stats.executed == {"numbers:default": 2}
    # the same window over the Unix socket is answered from memory, not run again
    here = Endpoint(server.path, "127.0.0.1", port)
    assert here.local()
    assert call_executor(here, "", _window(plan, 1), 5) == (rows, body)
    assert ping(elsewhere, TOKEN, 2)


def test_a_tcp_caller_without_the_token_gets_no_answer(
        served: tuple[ExecutionPlan, ExecutorServer, int], tmp_path: Path) -> None:
    plan, _, port = served
    elsewhere = Endpoint(str(tmp_path / "not-on-this-host.sock"), "127.0.0.1", port)
    assert not ping(elsewhere, "wrong-token", 2)
    with socket.create_connection(("127.0.0.1", port), 5) as sock:  # no token frame at all
        sock.settimeout(5)
        send_frame(sock, pack(PingRequest().to_wire()))  # taken as a (wrong) token
        with pytest.raises(ConnectionError):
            recv_frame(sock)
    with pytest.raises(ConnectionError):
        call_executor(elsewhere, "wrong-token", _window(plan, 2), 1)


def test_executors_listen_on_loopback_for_a_local_master() -> None:
    assert advertised_host({"spark.master": "local[2]"}) == "127.0.0.1"
    assert advertised_host({"spark.master": "spark://10.77.0.1:7077",
                            "spark.driver.host": "10.77.0.1"}) == "10.77.0.1"
    assert advertised_host({"spark.master": "local[*]",
                            "storm.local.hostname": "10.0.0.5"}) == "10.0.0.5"


def test_a_restarted_executor_asks_for_its_port_and_takes_another_when_it_is_taken(
        tmp_path: Path) -> None:
    plan = ExecutionPlan(Doubling.topology_spec, {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "double")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        server = ExecutorServer(BoltExecutor(plan, gid, "tcp"), str(tmp_path / "e.sock"),
                                tcp=(("127.0.0.1", busy), TOKEN))
        try:
            port = int((tmp_path / "e.sock.port").read_text())
            assert port != busy and port > 0
        finally:
            server._shutdown()
