"""A spout executor's tuples under ``topology.reliability: checkpoint``.

No edges and no acker: a window that took a tuple finishes its whole tree (windows are
consistent cuts), and the checkpoint at or after that window makes it durable. So the spout
executor only remembers which window took each message id: ``ack`` when a checkpoint at or
after that window commits, ``fail`` when a rollback discards the window.

Example:
    >>> book = AcksAtCommit()
    >>> book.buffered(7, [("a", "default", 1), ("b", "default", 1)], moved_at=1.0)
    >>> [(stream, round(ms), rows) for stream, ms, rows in book.hand_over(3, now=1.25)]
    [('default', 250, 1), ('default', 250, 1)]
    >>> book.buffered(7, [("c", "default", 500)], moved_at=2.0)  # a batch of 500 rows
    >>> book.hand_over(4, now=2.0)
    [('default', 0.0, 500)]
    >>> book.committed(3)
    [(7, 'a'), (7, 'b')]
    >>> book.discarded(3)
    [(7, 'c')]
"""

from __future__ import annotations

from typing import Any

Pending = dict[int, dict[int, tuple[Any, float, str]]]
"""Per task, root -> (message id, age, stream): a checkpoint part's spout trees."""


class AcksAtCommit:
    """Which window took each message id, until a commit acks it or a rollback fails it."""

    def __init__(self) -> None:
        self.unhanded: list[tuple[int, Any, str, int, float]] = []
        """(task, message id, stream, rows, when moved) of the tuples in the buffer (rows: 1,
        or a batch spout's batch's)."""
        self.handed: dict[int, list[tuple[int, Any, str]]] = {}
        """Window -> (task, message id, stream) of the tuples it took."""

    def buffered(self, task: int, acks: list[tuple[Any, str, int]], moved_at: float) -> None:
        """``task``'s emitted (message id, stream, rows) went into the buffer."""
        self.unhanded.extend((task, tup_id, stream, rows, moved_at)
                             for tup_id, stream, rows in acks)

    def hand_over(self, window: int, now: float) -> list[tuple[str, float, int]]:
        """The buffer went to ``window``; (stream, ms waited in the buffer, rows) of each."""
        waits = [(stream, (now - moved_at) * 1000.0, rows)
                 for _, _, stream, rows, moved_at in self.unhanded]
        if self.unhanded:
            self.handed.setdefault(window, []).extend(
                (task, tup_id, stream) for task, tup_id, stream, _, _ in self.unhanded)
            self.unhanded = []
        return waits

    def next_window(self) -> int:
        """A window number after every one handed so far (for callers that number none)."""
        return max(self.handed, default=-1) + 1

    def committed(self, window: int) -> list[tuple[int, Any]]:
        """Checkpoint ``window`` committed: (task, message id) to ack, oldest first."""
        done = sorted(w for w in self.handed if w <= window)
        return [(task, tup_id) for w in done for task, tup_id, _ in self.handed.pop(w)]

    def discarded(self, target: int | None) -> list[tuple[int, Any]]:
        """A rollback to ``target`` (None: the start): (task, message id) to fail; forgets all.

        Windows after ``target`` and the buffer; windows up to it are the restored
        checkpoint's, which its restore acks (:meth:`restored`).
        """
        lost = [(task, tup_id) for w in sorted(self.handed) if target is None or w > target
                for task, tup_id, _ in self.handed[w]]
        lost += [(task, tup_id) for task, tup_id, _, _, _ in self.unhanded]
        self.handed, self.unhanded = {}, []
        return lost

    def pending(self) -> Pending:
        """What a checkpoint keeps: the tuples of windows not yet committed, per task."""
        pending: Pending = {}
        number = 0
        for window in sorted(self.handed):
            for task, tup_id, stream in self.handed[window]:
                pending.setdefault(task, {})[number] = (tup_id, 0.0, stream)
                number += 1
        return pending


__all__ = ["AcksAtCommit", "Pending"]
