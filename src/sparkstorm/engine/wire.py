"""Framing between Spark tasks and executor processes: a 4-byte length, then msgpack.

Example frame: ``b"\\x00\\x00\\x00\\x05" + msgpack.packb({"w": 1})`` (5 bytes of body).
Anchor maps use 64-bit integer keys, hence ``strict_map_key=False``.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

import msgpack

_LENGTH = struct.Struct(">I")


def pack(obj: Any) -> bytes:
    """Serialize ``obj`` with msgpack (bytes stay bytes)."""
    return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]


def unpack(data: bytes) -> Any:
    """Inverse of :func:`pack`."""
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def send_frame(sock: socket.socket, body: bytes) -> None:
    """Write one length-prefixed frame."""
    sock.sendall(_LENGTH.pack(len(body)) + body)


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
