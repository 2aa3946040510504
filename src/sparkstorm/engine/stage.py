"""The Spark side of a window: the function each Spark task runs, and the executor client.

Runs inside PySpark's Python workers, so it must be importable there and cheap to pickle:
a :class:`StageInfo` carries only gids, levels and socket paths. Records are
``(key, value)`` pairs: ``key`` is the target executor's gid, or :data:`DRIVER` for what
the driver collects at the end of the job (each executor's encoded
:class:`~sparkstorm.engine.messages.WindowMeta` and its deliveries on edges closing a cycle).
The spout stage's partitions get their executor's control as its own argument, apart from
the records.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sparkstorm.engine.wire import pack, recv_reply, send_frame

DRIVER = -1


@dataclass(frozen=True)
class StageInfo:
    """What a Spark task of one stage needs to know (picklable, small)."""

    level: int
    gids: tuple[int, ...]
    gid_levels: dict[int, int]
    sockets: dict[int, str]
    connect_timeout: float

    def partition_of(self, key: int) -> int:
        """Partition of a record in this stage: its executor's, or any for passing through."""
        try:
            return self.gids.index(key)
        except ValueError:
            return key % len(self.gids) if key >= 0 else 0


def call_executor(path: str, request: dict[str, Any], timeout: float) -> tuple[Any, bytes]:
    """Send ``request`` to the executor at ``path``; return its reply's payload and body.

    Reconnects and resends while the executor is being restarted (its socket missing or
    refusing), up to ``timeout`` seconds; the executor answers a resent window from memory.

    Raises:
        ConnectionError: the executor did not answer within ``timeout``.
        EngineError: ``EXECUTOR_REQUEST_FAILED`` when it answered that it could not.
    """
    body = pack(request)
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(path)
                send_frame(sock, body)
                return recv_reply(sock)
        except (ConnectionError, FileNotFoundError, OSError) as exc:
            if time.monotonic() > deadline:
                msg = f"executor at {path} did not answer within {timeout:.0f} s: {exc}"
                raise ConnectionError(msg) from exc
            time.sleep(delay)  # waiting for the worker to restart the executor process
            delay = min(delay * 2, 0.5)


def run_spout_stage(stage: StageInfo, window: int, index: int,
                    partition: Iterable[tuple[list[Any], list[tuple[int, Any]]]]
                    ) -> Iterator[tuple[int, Any]]:
    """The spout stage's partition function: ``partition`` holds one item, the executor's
    control (``SpoutControl.to_wire()``) and the records injected this window (ticks and
    cycle deliveries, for later stages)."""
    for control, records in partition:
        yield from _call_stage(stage, window, index, records, control)


def run_stage(stage: StageInfo, window: int, index: int,
              records: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """A bolt stage's partition function: its executor gets the records keyed to it."""
    yield from _call_stage(stage, window, index, records, None)


def _call_stage(stage: StageInfo, window: int, index: int, records: Iterable[tuple[int, Any]],
                control: list[Any] | None) -> Iterator[tuple[int, Any]]:
    """Hand this partition's input to its executor (a spout's: ``control``; a bolt's: the
    records keyed to it), forward its output.

    Called once per partition of each stage of window ``window``, in a Spark Python worker.
    Records for executors of later stages pass through unchanged.
    """
    gid = stage.gids[index]
    mine: list[bytes] = []
    for key, value in records:
        if key == gid:
            mine.append(value)
        else:
            yield key, value
    request: dict[str, Any] = {"cmd": "window", "w": window}
    if control is None:
        request["rows"] = mine
    else:
        request["control"] = control
    outputs, meta = call_executor(stage.sockets[gid], request, stage.connect_timeout)
    deliveries = {}
    for target, blob in outputs.items():
        if stage.gid_levels[target] > stage.level:
            yield target, blob
        else:  # an edge closing a cycle: delivered in the next window
            deliveries[target] = blob
    yield DRIVER, (meta, deliveries)
