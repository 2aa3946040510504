"""Nimbus keeps its limits before it reads a body.

The token and ``Content-Length`` first, every JSON body capped (a chunked one while it is
read), code uploads that would unpack too large or into too many files refused. Real HTTP
to an in-process Nimbus (uvicorn).
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import threading
import zipfile
from collections.abc import Callable
from typing import Any

import httpx
import psutil

from tests.unit.cluster.nimbus.http_helpers import AUTH, sha256

TOKEN = {"storm.cluster.token": "secret"}
"""The token of :data:`AUTH`."""
MB = 1 << 20
CLAIMED = 200 * MB
"""The body size a hostile client announces (and sends, as long as Nimbus reads)."""


def _url(server: Any) -> tuple[str, int]:
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    return str(host), int(port)


class _PeakRss:
    """The process's largest resident size while it runs (Nimbus runs in this process)."""

    def __init__(self) -> None:
        self.process = psutil.Process()
        self.start = self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def growth(self) -> int:
        self._stop.set()
        self._thread.join(5)
        return self.peak - self.start


def _raw_request(server: Any, head: str, body: Callable[[socket.socket], None]
                 ) -> tuple[int, dict[str, Any]]:
    """Send ``head``, stream ``body`` from a thread, return Nimbus's status and answer.

    The answer is read while the body is still being sent: Nimbus answers before reading it.
    """
    sock = socket.create_connection(_url(server), timeout=60)
    sock.sendall(head.encode())
    sender = threading.Thread(target=_quietly, args=(body, sock), daemon=True)
    sender.start()
    received = b""
    try:
        while b"\r\n\r\n" not in received or not _complete(received):
            piece = sock.recv(65536)
            if not piece:
                break
            received += piece
    finally:
        with contextlib.suppress(OSError):  # Nimbus closed it first
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        sender.join(60)
    header, _, payload = received.partition(b"\r\n\r\n")
    return int(header.split()[1]), json.loads(payload)


def _complete(received: bytes) -> bool:
    header, _, payload = received.partition(b"\r\n\r\n")
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(payload) >= int(value)
    return False


def _quietly(body: Callable[[socket.socket], None], sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # Nimbus answered and closed: the rest is never sent
        body(sock)


def _send_plain(total: int) -> Callable[[socket.socket], None]:
    block = b"[" + b"1," * (MB // 2 - 1) + b"1]"

    def send(sock: socket.socket) -> None:
        for _ in range(total // len(block)):
            sock.sendall(block)

    return send


def _send_chunked(total: int) -> Callable[[socket.socket], None]:
    block = b"x" * (256 * 1024)
    frame = f"{len(block):x}\r\n".encode() + block + b"\r\n"

    def send(sock: socket.socket) -> None:
        for _ in range(total // len(block)):
            sock.sendall(frame)
        sock.sendall(b"0\r\n\r\n")

    return send


def _post_head(path: str, headers: dict[str, str]) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             *(f"{k}: {v}" for k, v in headers.items())]
    return "\r\n".join(lines) + "\r\n\r\n"


def test_a_200mb_body_without_token_is_refused_before_it_is_read(
        served: Callable[..., Any]) -> None:
    server = served(**TOKEN)
    rss = _PeakRss()
    status, answer = _raw_request(server, _post_head(
        "/api/v1/topologies", {"Content-Length": str(CLAIMED)}), _send_plain(CLAIMED))
    assert (status, answer["code"]) == (401, "AUTH_TOKEN_MISSING"), answer
    assert rss.growth() < 40 * MB, f"Nimbus grew by {rss.growth() / MB:.0f} MB for a refused call"


def test_a_json_body_over_the_cap_is_refused_by_its_content_length_unread(
        served: Callable[..., Any]) -> None:
    server = served(**TOKEN, **{"nimbus.request.max.bytes": MB})
    rss = _PeakRss()
    status, answer = _raw_request(server, _post_head(
        "/api/v1/worker/w1/heartbeat", {**AUTH, "Content-Length": str(CLAIMED)}),
        _send_plain(CLAIMED))
    assert (status, answer["code"]) == (413, "REQUEST_TOO_LARGE"), answer
    assert "nimbus.request.max.bytes" in answer["error"]
    assert rss.growth() < 40 * MB


def test_a_chunked_json_body_is_capped_while_it_is_read(served: Callable[..., Any]) -> None:
    server = served(**TOKEN, **{"nimbus.request.max.bytes": MB})
    rss = _PeakRss()
    status, answer = _raw_request(server, _post_head(
        "/api/v1/worker/w1/heartbeat", {**AUTH, "Transfer-Encoding": "chunked"}),
        _send_chunked(CLAIMED))
    assert (status, answer["code"]) == (413, "REQUEST_TOO_LARGE"), answer
    assert rss.growth() < 40 * MB


def test_bodies_under_the_cap_reach_their_route(served: Callable[..., Any]) -> None:
    """Chunked or not, a body within the cap is handed to the route whole."""
    server = served(**TOKEN, **{"nimbus.request.max.bytes": MB})
    host, port = _url(server)
    body = json.dumps({"topology_id": "nope", "stats": {"pad": "x" * (MB // 2)}}).encode()
    headers = {**AUTH, "Content-Type": "application/json"}
    with httpx.Client(base_url=f"http://{host}:{port}", headers=headers) as http:
        plain = http.post("/api/v1/worker/w1/heartbeat", content=body)
        chunked = http.post("/api/v1/worker/w1/heartbeat", content=iter([body[:1000],
                                                                         body[1000:]]))
        refused = http.post("/api/v1/worker/w1/heartbeat", content=b"x" * (MB + 1))
    # an unknown worker is told to shut down: the route read and parsed the body
    assert plain.status_code == chunked.status_code == 200, (plain.text, chunked.text)
    assert plain.json()["shutdown"] is True and chunked.json()["shutdown"] is True
    assert refused.status_code == 413


def _bomb(unpacked: int, files: int = 1) -> bytes:
    """A small zip that unpacks to ``unpacked`` bytes (zeros) over ``files`` files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(files):
            archive.writestr(f"f{n}.txt", bytes(unpacked // files))
    return buffer.getvalue()


def _upload(http: httpx.Client, data: bytes) -> httpx.Response:
    upload_id = http.post("/api/v1/uploads").json()["upload_id"]
    assert http.put(f"/api/v1/uploads/{upload_id}", content=data).status_code == 200
    return http.post(f"/api/v1/uploads/{upload_id}/finish", json={"sha256": sha256(data)})


def test_uploads_that_unpack_too_large_or_into_too_many_files_are_refused(
        served: Callable[..., Any]) -> None:
    server = served(**TOKEN, **{"nimbus.upload.max.unpacked.bytes": 64 * MB,
                       "nimbus.upload.max.files": 100})
    host, port = _url(server)
    bomb = _bomb(200 * MB)
    assert len(bomb) < MB, "a zip bomb: small upload, large unpacked size"
    with httpx.Client(base_url=f"http://{host}:{port}", headers=AUTH) as http:
        too_large = _upload(http, bomb)
        too_many = _upload(http, _bomb(0, files=101))
        fine = _upload(http, _bomb(MB, files=100))
    assert too_large.status_code == 413, too_large.text
    assert too_large.json()["code"] == "UPLOAD_UNPACKED_TOO_LARGE"
    assert "nimbus.upload.max.unpacked.bytes" in too_large.json()["error"]
    assert (too_many.status_code, too_many.json()["code"]) == (413, "UPLOAD_TOO_MANY_FILES")
    assert fine.status_code == 200, fine.text
