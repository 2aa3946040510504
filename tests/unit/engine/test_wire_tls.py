"""Executor TCP in mutual TLS: tuples unreadable on the wire, a captured call not replayable."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.frames import recv_frame, send_frame
from sparkstorm.engine.wire.gate import AuthenticatedListener
from sparkstorm.engine.wire.secure import listener_tls, use, wire_tls
from sparkstorm.testing.polling import wait_for
from sparkstorm.tls.material import TlsFiles, files_env, make_material, tls_files

TOKEN = "topology-token-4f1c"
TUPLE = b"a tuple's known bytes: sentence-31337"


@pytest.fixture
def files(tmp_path: Path) -> Iterator[TlsFiles]:
    make_material(tmp_path / "tls", [])
    material = tls_files({"storm.tls.dir": str(tmp_path / "tls")})
    yield material
    use(None)  # this process's callers go back to plain


class _Recorder:
    """A relay that records what the caller sent (the capture on the network)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sent = bytearray()
        self.thread = threading.Thread(target=self._relay, daemon=True)
        self.thread.start()

    def _relay(self) -> None:
        with self.listener:
            caller, _ = self.listener.accept()
        with caller, socket.create_connection(self.target) as server:
            while True:
                ready, _, _ = select.select([caller, server], [], [], 10)
                if not ready:
                    return
                for side in ready:
                    data = side.recv(65536)
                    if not data:
                        return
                    if side is caller:
                        self.sent += data
                        server.sendall(data)
                    else:
                        caller.sendall(data)


def _echo_door(tls: TlsFiles | None, served: list[bytes]) -> AuthenticatedListener:
    def echo(conn: socket.socket) -> None:
        request = recv_frame(conn)
        served.append(request)
        send_frame(conn, request)

    return AuthenticatedListener(socket.create_server(("127.0.0.1", 0)), TOKEN, echo,
                                 name="test executor", handshake_timeout=2,
                                 max_connections=8, tls=listener_tls(tls))


def test_a_call_is_encrypted_and_its_capture_cannot_be_replayed(files: TlsFiles) -> None:
    served: list[bytes] = []
    door = _echo_door(files, served)
    try:
        recorder = _Recorder(door.address)
        use(files)
        with Endpoint("/no/such.sock", "127.0.0.1", recorder.port).connect(TOKEN, 5) as sock:
            send_frame(sock, TUPLE)
            assert recv_frame(sock) == TUPLE
        recorder.thread.join(10)
        capture = bytes(recorder.sent)
        assert capture and TOKEN.encode() not in capture and TUPLE not in capture

        # the capture, replayed from a host that has neither the token nor a certificate
        with socket.create_connection(door.address, timeout=5) as replay:
            with contextlib.suppress(OSError):  # a reset is a refusal too
                replay.sendall(capture)
                while replay.recv(65536):  # TLS alerts at most, then the door closes it
                    pass
            wait_for(lambda: door.open_connections == 0, 5, message="the replay was dropped")
        assert served == [TUPLE], "the replayed request never reached the executor"
    finally:
        door.close()


def test_a_plain_caller_with_the_token_is_refused_by_a_tls_executor(files: TlsFiles) -> None:
    served: list[bytes] = []
    door = _echo_door(files, served)
    try:
        use(None)
        with pytest.raises(OSError), \
                Endpoint("/no/such.sock", "127.0.0.1", door.address[1]).connect(TOKEN, 5) as sock:
            send_frame(sock, TUPLE)  # a reset may come here already
            recv_frame(sock)
        assert served == []
    finally:
        door.close()


def test_auto_is_on_in_a_tls_clusters_workers_only(files: TlsFiles,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    conf = {"storm.tls.dir": str(files.ca.parent)}
    assert wire_tls(conf) is None, "local mode, spark-submit: plain unless asked"
    assert wire_tls({**conf, "topology.tcp.tls": "on"}) == files
    for name, value in files_env(files).items():  # what a TLS supervisor gives its workers
        monkeypatch.setenv(name, value)
    assert wire_tls({}) == files
    assert wire_tls({"topology.tcp.tls": "off"}) is None
