"""A tuple value the wire cannot encode is refused, its tree fails, the rest goes on.

See issue 14 §1. An executor never drops a connection over a request it cannot answer.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.engine.executor.collector import WindowOutput
from sparkstorm.engine.executor.host import BoltExecutor
from sparkstorm.engine.executor.main import ExecutorServer
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import call_executor
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.failures import FAIL_ERROR
from sparkstorm.engine.wire.frames import pack, recv_reply, send_frame, unpack
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import WindowRequest
from sparkstorm.engine.wire.row_encoding import encode_rows
from sparkstorm.engine.wire.row_wire import unpack_rows
from sparkstorm.errors import EngineError


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


UNENCODABLE = {
    "set": ({1, 2}, "is a set"),
    "surrogate": ("bad \udcff", "is a str with characters UTF-8 cannot encode"),
    "deep": (_deep(5000), "is a list nested too deep"),
    "huge int": (2**70, "is a int outside the 64-bit range"),
}


def _output(bad: Any) -> WindowOutput:
    """Three tuples from task 10 to task 30 (executor 3); the middle one holds ``bad``."""
    out = WindowOutput()
    batch = out.batch(3, 30, 10, "words")
    batch[3].extend([["a", 1], ["b", bad], ["c", 3]])
    batch[4].extend([100, 200, None])
    batch[5].extend([1, 2, None])
    return out


@pytest.mark.parametrize("case", sorted(UNENCODABLE))
def test_an_unencodable_tuple_is_left_out_and_its_tree_fails(case: str) -> None:
    bad, kind = UNENCODABLE[case]
    out = _output(bad)
    reports: list[tuple[int, str]] = []
    rows = encode_rows(out, "split", lambda stream: ("word", "count"),
                       lambda task, text: reports.append((task, text)))

    assert unpack(rows[3]) == [[30, 10, "words", [["a", 1], ["c", 3]], [100, None], [1, None]]]
    assert set(out.failed) == {200}, "only the refused tuple's tree fails"
    assert out.failed[200].cause == FAIL_ERROR
    ((task, text),) = reports
    assert task == 10, "reported as an error of the emitting task"
    for part in ("[TUPLE_VALUE_UNENCODABLE]", "'split'", "stream 'words'", "field 'count'",
                 kind, "1 tuple refused"):
        assert part in text
    assert out.failed[200].reason.startswith("[TUPLE_VALUE_UNENCODABLE] component 'split'")


def test_one_report_per_field_and_type_however_many_tuples() -> None:
    out = WindowOutput()
    batch = out.batch(3, 30, 10, "default")
    batch[3].extend([[{i}] for i in range(50)])
    batch[4].extend(range(50))
    batch[5].extend(range(50))
    reports: list[str] = []
    rows = encode_rows(out, "split", lambda stream: ("word",),
                       lambda task, text: reports.append(text))
    assert unpack(rows[3]) == [[30, 10, "default", [], [], []]]
    assert len(out.failed) == 50
    (report,) = reports
    assert "50 tuples refused" in report


def test_each_type_gets_its_own_report() -> None:
    out = WindowOutput()
    batch = out.batch(3, 30, 10, "default")
    values = [bad for bad, _ in UNENCODABLE.values()]
    batch[3].extend([[bad] for bad in values * 2])
    batch[4].extend(range(len(values) * 2))
    batch[5].extend(range(len(values) * 2))
    reports: list[str] = []
    encode_rows(out, "split", lambda stream: ("word",), lambda task, text: reports.append(text))
    assert len(reports) == len(UNENCODABLE)
    for _, kind in UNENCODABLE.values():
        (report,) = [r for r in reports if kind in r]
        assert "2 tuples refused" in report


def test_encodable_windows_are_encoded_as_they_were() -> None:
    out = _output("fine")
    rows = encode_rows(out, "split", lambda stream: (), lambda task, text: None)
    assert rows == {3: pack(out.rows[3])}
    assert out.failed == {}


# --- the executor server ------------------------------------------------------------------


class Numbers(Spout):
    outputs = ["n"]


class SetEmitter(Bolt):
    """Emits ``{n}`` (a set) for even numbers, ``[n]`` for odd ones."""

    outputs = ["n"]

    def process(self, tup: Any) -> None:
        n = tup.values[0]
        self.emit([{n}] if n % 2 == 0 else [n])


class Sink(Bolt):
    outputs: list[Any] = []


class SetTopology(Topology):
    numbers = Numbers.spec()
    emitter = SetEmitter.spec(inputs=[numbers])
    sink = Sink.spec(inputs=[emitter])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ExecutionPlan, ExecutorServer]]:
    plan = ExecutionPlan(SetTopology.topology_spec, {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "emitter")
    host = BoltExecutor(plan, gid, "sets")
    served = ExecutorServer(host, str(tmp_path / "e.sock"))
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield plan, served
    served._shutdown()
    thread.join(5)


def _local(served: ExecutorServer) -> Endpoint:
    """The server's endpoint for a caller on its host (its Unix socket)."""
    return Endpoint(served.path, "127.0.0.1", 1)


def test_the_executor_answers_a_window_with_an_unencodable_emit(
        server: tuple[ExecutionPlan, ExecutorServer]) -> None:
    """Before the fix the encoding error dropped the connection: the caller timed out."""
    plan, served = server
    emitter, spout = plan.component_tasks["emitter"][0], plan.component_tasks["numbers"][0]
    batch = pack([[emitter, spout, "default", [[1], [2], [3]], [11, 12, 13], [5, 6, 7]]])
    rows, body = call_executor(_local(served), "", WindowRequest(1, rows=[batch]), 5)

    (blob,) = rows.values()
    ((_, _, _, values, _, _),) = unpack_rows(blob)
    assert values == [[1], [3]]
    meta = WindowMeta.decode(body)
    assert set(meta.failed) == {12}
    (error,) = meta.errors
    assert "[TUPLE_VALUE_UNENCODABLE]" in error.error and "field 'n' is a set" in error.error
    assert meta.stats.executed == {"numbers:default": 3}, "each input ran once"
    assert not served.host.must_restart


def test_a_request_the_executor_cannot_handle_gets_an_error_reply(
        server: tuple[ExecutionPlan, ExecutorServer]) -> None:
    _, served = server
    # no window number: not a request of the protocol
    with pytest.raises(EngineError) as caught, _local(served).connect("", 5) as sock:
        send_frame(sock, pack({"cmd": "window"}))
        recv_reply(sock)
    assert caught.value.code == "EXECUTOR_REQUEST_FAILED"
    assert "could not answer request 'window' of window None" in str(caught.value)
    assert served.host.must_restart, "an executor in an unknown state restarts"


def test_an_undecodable_request_gets_an_error_reply(
        server: tuple[ExecutionPlan, ExecutorServer]) -> None:
    _, served = server
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(served.path)
        send_frame(sock, b"\xc1")  # never valid msgpack
        with pytest.raises(EngineError) as caught:
            recv_reply(sock)
    assert "could not answer a request it could not decode" in str(caught.value)
