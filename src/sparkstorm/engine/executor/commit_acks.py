"""A spout executor's tuples under ``topology.reliability: checkpoint``.

No edges and no acker: a window that took a tuple finishes its whole tree (windows are
consistent cuts), and the checkpoint at or after that window makes it durable. So the spout
executor only remembers which window took each message id: ``ack`` when a checkpoint at or
after that window commits, ``fail`` when a rollback discards the window.

The ids are kept as the spout's collector handed them over, a list per move into the
buffer, and counted per move and stream: per tuple, a spout in this mode does no more than
its collector's one append (``benchmarks/RESULTS.md``, "checkpoint reliability's spout").

A tuple's tree ends with the window that took it, so that is where its complete latency
ends, and the spout's in-flight bounds (``topology.max.spout.pending``, the window sizer's
automatic one) count it until then: :meth:`AcksAtCommit.in_flight`. The driver tells the
spout executor as soon as a window ended (``SpoutControl.ended``, pushed right after the
window, and again with the next window's control); without it, the window numbers it
serves say as much a window later: the driver starts window ``w`` only once window
``w - WINDOWS_IN_FLIGHT`` ended (``engine.driver.scheduling``), and a commit of ``w`` says
that ``w`` ended too.

Example:
    >>> book = AcksAtCommit()
    >>> book.buffered(7, [("a", "default", 1), ("b", "default", 1)], moved_at=1.0)
    >>> book.hand_over(3, now=1.25)  # (stream, ms waited in the buffer, tuples, rows)
    [('default', 250.0, 2, 2)]
    >>> book.buffered(7, [("c", "default", 500)], moved_at=2.0)  # a batch of 500 rows
    >>> book.hand_over(4, now=2.0)
    [('default', 0.0, 1, 500)]
    >>> book.in_flight(7)  # rows: window 3 may still run beside window 4
    502
    >>> book.ended(3)  # the driver says window 3 ended
    >>> book.in_flight(7)
    500
    >>> book.committed(3)
    [(7, ['a', 'b'])]
    >>> book.discarded(3)
    [(7, 'c')]
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

Acks = list[tuple[Any, str, int]]
"""A spout task's untracked emits since the last move: (message id, stream, rows) (rows: 1,
or a batch spout's batch's)."""

_ID, _STREAM, _ROWS = itemgetter(0), itemgetter(1), itemgetter(2)

WINDOWS_IN_FLIGHT = 2
"""Windows that may run at once: when window ``w`` takes a spout's buffer, every window up
to ``w - WINDOWS_IN_FLIGHT`` has ended (``scheduling.OverlappingWindows`` starts a window
after it absorbed the one before the last; ``SequentialWindows`` after the last one)."""


class AcksAtCommit:
    """Which window took each message id, until a commit acks it or a rollback fails it."""

    def __init__(self) -> None:
        self.unhanded: list[tuple[int, Acks, float]] = []
        """(task, its acks, when moved) per move of the tuples into the buffer."""
        self.handed: dict[int, list[tuple[int, Acks]]] = {}
        """Window -> (task, acks) of the moves it took."""
        self.counts: dict[int, int] = {}
        """Task -> rows of its tuples buffered or taken by windows that may not have ended."""
        self.running: dict[int, dict[int, int]] = {}
        """Window that may still run -> task -> rows of its tuples it took."""

    def buffered(self, task: int, acks: Acks, moved_at: float) -> None:
        """``task``'s emitted (message id, stream, rows) went into the buffer (kept as is)."""
        self.unhanded.append((task, acks, moved_at))
        self.counts[task] = self.counts.get(task, 0) + sum(map(_ROWS, acks))

    def in_flight(self, task: int) -> int:
        """Rows of ``task``'s tuples in the buffer or in windows that may not have ended.

        A per-tuple spout's tuple is one row, a batch spout's batch its rows.
        """
        return self.counts.get(task, 0)

    def ended(self, window: int) -> None:
        """Every window up to ``window`` ended: their tuples are in flight no more."""
        for number in [w for w in self.running if w <= window]:
            for task, tuples in self.running.pop(number).items():
                self.counts[task] -= tuples

    def hand_over(self, window: int, now: float) -> list[tuple[str, float, int, int]]:
        """The buffer went to ``window``.

        Returns:
            (stream, ms waited in the buffer, tuples, rows) of each move and stream.
        """
        self.ended(window - WINDOWS_IN_FLIGHT)
        if not self.unhanded:
            return []
        waits = [(stream, (now - moved_at) * 1000.0, tuples, rows)
                 for _, acks, moved_at in self.unhanded
                 for stream, (tuples, rows) in _by_stream(acks).items()]
        self.handed.setdefault(window, []).extend(
            (task, acks) for task, acks, _ in self.unhanded)
        took = self.running.setdefault(window, {})
        for task, acks, _ in self.unhanded:
            took[task] = took.get(task, 0) + sum(map(_ROWS, acks))
        self.unhanded = []
        return waits

    def next_window(self) -> int:
        """A window number after every one handed so far (for callers that number none)."""
        return max(self.handed, default=-1) + 1

    def committed(self, window: int) -> list[tuple[int, list[Any]]]:
        """Checkpoint ``window`` committed: (task, message ids) to ack, oldest first."""
        self.ended(window)
        done = sorted(w for w in self.handed if w <= window)
        return [(task, list(map(_ID, acks))) for w in done for task, acks in self.handed.pop(w)]

    def discarded(self, target: int | None) -> list[tuple[int, Any]]:
        """A rollback to ``target`` (None: the start): (task, message id) to fail; forgets all.

        Windows after ``target`` and the buffer; windows up to it are the restored
        checkpoint's, which its restore acks (``SpoutExecutor._restore``).
        """
        moves = [move for w in sorted(self.handed) if target is None or w > target
                 for move in self.handed[w]]
        moves += [(task, acks) for task, acks, _ in self.unhanded]
        self.handed, self.unhanded, self.counts, self.running = {}, [], {}, {}
        return [(task, tup_id) for task, acks in moves for tup_id, _, _ in acks]

    def handed_ids(self) -> dict[int, list[Any]]:
        """What a checkpoint keeps: per task, the message ids of windows not yet committed."""
        ids: dict[int, list[Any]] = {}
        for window in sorted(self.handed):
            for task, acks in self.handed[window]:
                ids.setdefault(task, []).extend(map(_ID, acks))
        return ids


def _by_stream(acks: Acks) -> dict[str, tuple[int, int]]:
    """Stream -> (tuples, rows) of ``acks`` (one stream, the common case, at C speed)."""
    streams = set(map(_STREAM, acks))
    if len(streams) == 1:
        return {streams.pop(): (len(acks), sum(map(_ROWS, acks)))}
    counts: dict[str, tuple[int, int]] = {}
    for _, stream, rows in acks:
        tuples, total = counts.get(stream, (0, 0))
        counts[stream] = (tuples + 1, total + rows)
    return counts


__all__ = ["WINDOWS_IN_FLIGHT", "AcksAtCommit"]
