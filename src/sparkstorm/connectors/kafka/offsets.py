"""What a spout may commit for one partition: Storm's ``OffsetManager``, by a simpler rule.

An offset is *open* from its poll until it is finished (acked, given up after its retries,
or skipped); the offset to commit is the smallest open one, or the next to poll when none
is open. Offsets the broker never hands out (compaction, transaction markers) are never
open, so gaps need no special case.

Example:
    >>> p = PartitionOffsets(committed=10)
    >>> for offset in (10, 11, 13):
    ...     p.polled(offset)
    >>> p.done(11), p.commit_point(), p.uncommitted()
    (True, 10, 3)
    >>> p.done(10), p.commit_point()
    (True, 13)
    >>> p.committed_to(13); p.uncommitted()
    1
    >>> p.done(13), p.commit_point(), p.done(13)
    (True, 14, False)

A checkpoint keeps a copy without the records polled and not yet emitted, so that a restored
spout polls them again:

    >>> p.polled(14); p.polled(15); p.rewound([14, 15]).position
    14
"""

from __future__ import annotations


class PartitionOffsets:
    """The offsets of one partition between their poll and their commit.

    Args:
        committed: the offset committed in Kafka when the partition was assigned (the next
            one to read), None when there is none or it is not known yet.
    """

    def __init__(self, committed: int | None = None) -> None:
        self.committed = committed
        self.position = committed
        """The next offset to poll: one after the last polled record."""
        self.open: set[int] = set()
        self.finished: set[int] = set()
        """Finished offsets at or above :attr:`committed`."""

    def seen(self, offset: int) -> bool:
        """Whether ``offset`` was polled already (a fetch after a seek may repeat it)."""
        return self.position is not None and offset < self.position

    def polled(self, offset: int) -> None:
        """``offset`` was polled: it is open until :meth:`done`."""
        self.open.add(offset)
        self.position = offset + 1

    def polled_all(self, offsets: list[int]) -> None:
        """:meth:`polled` for each of ``offsets`` (ascending: one fetch of the partition)."""
        self.open.update(offsets)
        self.position = offsets[-1] + 1

    def done(self, offset: int) -> bool:
        """``offset`` is finished; False if it was not open (a late or repeated verdict)."""
        if offset not in self.open:
            return False
        self.open.discard(offset)
        self.finished.add(offset)
        return True

    def done_all(self, offsets: list[int]) -> None:
        """:meth:`done` for each of ``offsets`` (a batch's), in set operations."""
        hit = self.open.intersection(offsets)
        self.open -= hit
        self.finished |= hit

    def commit_point(self) -> int | None:
        """The offset to commit: every offset below it is finished."""
        if self.open:
            return min(self.open)
        return self.position

    def committed_to(self, offset: int) -> None:
        """``offset`` was committed."""
        self.committed = offset
        self.finished = {o for o in self.finished if o >= offset}

    def rewound(self, unsent: list[int]) -> PartitionOffsets:
        """A copy as if the offsets ``unsent`` (the last ones polled) had not been polled."""
        copy = PartitionOffsets(self.committed)
        copy.open = self.open - set(unsent)
        copy.finished = set(self.finished)
        copy.position = min(unsent) if unsent else self.position
        return copy

    def uncommitted(self) -> int:
        """Offsets polled and not committed (Storm's count for ``max.uncommitted.offsets``)."""
        return len(self.open) + len(self.finished)
