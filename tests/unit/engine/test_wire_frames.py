"""Length-prefixed frames arrive whole, whatever their size (small: one buffer; large: two)."""

from __future__ import annotations

import socket
import threading

import pytest

from sparkstorm.engine.wire.frames import SMALL_FRAME, recv_frame, send_frame


@pytest.mark.parametrize("size", [0, 1, SMALL_FRAME, SMALL_FRAME + 1, 3 * 1024 * 1024 + 7])
def test_a_frame_arrives_as_it_was_sent(size: int) -> None:
    body = bytes(i % 251 for i in range(size))
    left, right = socket.socketpair()
    with left, right:
        sender = threading.Thread(target=send_frame, args=(left, body))
        sender.start()
        received = recv_frame(right)
        sender.join()
    assert received == body


def test_frames_follow_each_other_on_one_connection() -> None:
    bodies = [b"a", bytes(SMALL_FRAME * 3), b"", b"end"]
    left, right = socket.socketpair()
    with left, right:
        sender = threading.Thread(target=lambda: [send_frame(left, b) for b in bodies])
        sender.start()
        received = [recv_frame(right) for _ in bodies]
        sender.join()
    assert received == bodies
