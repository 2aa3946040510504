r"""Framing between Spark tasks and executor processes: a 4-byte length, then msgpack.

Example frame: ``b"\x00\x00\x00\x05" + msgpack.packb({"w": 1})`` (5 bytes of body).
Anchor maps use 64-bit integer keys, hence ``strict_map_key=False``.

A request is one frame; its reply is two: a header ``["ok", payload]`` or
``["error", text]``, then a body of raw bytes (a window's encoded meta, else empty), which
the caller passes on without decoding it.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

import msgpack

from sparkstorm.errors import EngineError

_LENGTH = struct.Struct(">I")
_OK, _ERROR = "ok", "error"


def pack(obj: Any) -> bytes:
    """Serialize ``obj`` with msgpack (bytes stay bytes)."""
    return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]


def unpack(data: bytes) -> Any:
    """Inverse of :func:`pack`."""
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def encodable_text(text: str) -> str:
    r"""``text`` with what UTF-8 cannot carry (lone surrogates) spelled out as ``\udcff``.

    For texts the engine builds from user data (error messages, fail reasons): they must
    never make a window's report unencodable.
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


SMALL_FRAME = 64 * 1024
"""Frames up to this size are sent as one buffer; larger ones without joining (a copy)."""


def send_frame(sock: socket.socket, body: bytes) -> None:
    """Write one length-prefixed frame.

    A window's frames are megabytes: joining the length to the body copied each one once more
    (memory and CPU in every executor and Spark Python worker), so large bodies go as they are.
    """
    prefix = _LENGTH.pack(len(body))
    if len(body) <= SMALL_FRAME:
        sock.sendall(prefix + body)
        return
    sock.sendall(prefix)
    sock.sendall(body)


def recv_frame(sock: socket.socket) -> bytes:
    """Read one length-prefixed frame.

    Raises:
        ConnectionError: the peer closed the connection mid-frame or before it.
    """
    (length,) = _LENGTH.unpack(_recv_exactly(sock, _LENGTH.size))
    return _recv_exactly(sock, length)


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            msg = f"executor connection closed with {remaining} of {size} bytes unread"
            raise ConnectionError(msg)
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def send_reply(sock: socket.socket, payload: Any, body: bytes = b"") -> None:
    """Answer a request: ``payload`` (packed) and ``body`` (as it is)."""
    send_frame(sock, pack([_OK, payload]))
    send_frame(sock, body)


def send_error_reply(sock: socket.socket, text: str) -> None:
    """Answer a request the executor could not handle: the caller raises with ``text``."""
    send_frame(sock, pack([_ERROR, text]))
    send_frame(sock, b"")


def recv_reply(sock: socket.socket, sizes: list[int] | None = None) -> tuple[Any, bytes]:
    """Read a reply: its decoded payload and its raw body.

    With ``sizes``, the bytes read (both frames with their lengths) are appended to it.

    Raises:
        ConnectionError: the peer closed the connection mid-reply.
        EngineError: ``EXECUTOR_REQUEST_FAILED`` when the executor answered with an error.
    """
    header = recv_frame(sock)
    status, payload = unpack(header)
    body = recv_frame(sock)
    if sizes is not None:
        sizes.append(len(header) + len(body) + 2 * _LENGTH.size)
    if status != _OK:
        raise EngineError(str(payload), code="EXECUTOR_REQUEST_FAILED")
    return payload, body
