"""The driver's side of checkpoints (docs/ARCHITECTURE.md, "Checkpoints"): take, commit, roll back.

A window boundary is a consistent cut, so a checkpoint needs no barrier: every
``topology.checkpoint.windows`` windows the driver asks each executor for its part at the
window's cut (the ``checkpoint`` flag of its window request), writes its own part (the
engine's state: the acker's ledger, the verdicts and the cycle deliveries that wait for
the next window) and commits the checkpoint once every part is durable. Executors write
their parts in the background and report them with a later window, so a checkpoint may
commit a few windows after it was taken. As in Storm's checkpoint protocol, one checkpoint
is in flight at a time: the next is taken no earlier than ``every`` windows after the last
and only once the last is committed, and executors hear of a commit (stateful bolts commit
their state) before they take their next part, so every ``prepare_commit(txid)`` is
followed by ``commit(txid)`` or a rollback.

On a failure (an executor restarted, an executor lost, a job failed for good) the whole
topology rolls back to the newest usable committed checkpoint (or to the very start when none
is committed yet): the torn and corrupt checkpoints after it are deleted, each executor
rebuilds its tasks from its part, and the driver puts its own part back. The newest
``keep`` committed checkpoints are kept (``topology.checkpoint.keep``), so a corrupt newest
one falls back to the one before; when committed checkpoints exist but none is usable the
rollback raises ``CHECKPOINT_UNUSABLE`` (the topology stops) unless ``start_empty``
(``topology.checkpoint.start.empty``) says to start from empty state.

Example:
    >>> from sparkstorm.checkpoint import CheckpointStore
    >>> store = CheckpointStore("memory://doctest-coordinator", "wc-1-1")
    >>> coordinator = CheckpointCoordinator(2, store, ["executor-0"])
    >>> [w for w in range(4) if coordinator.due(w)]
    [1, 2, 3]
    >>> coordinator.begin(1, EngineState().encode())
    >>> coordinator.due(3), coordinator.commit_ready()  # executor-0's part is not there
    (False, None)
    >>> coordinator.arrived(1, store.write_part(1, "executor-0", b"tasks"))
    >>> coordinator.commit_ready(), coordinator.take_announcement(), coordinator.due(2)
    (1, 1, False)
    >>> coordinator.due(3)
    True
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.checkpoint import CheckpointError, CheckpointStore, PartInfo
from sparkstorm.checkpoint.versioned import dump_versioned, load_versioned
from sparkstorm.engine.driver.acker import Acker, LedgerEntry, Verdicts

logger = logging.getLogger(__name__)

DRIVER_PART = "driver"
ENGINE_FORMAT = 1
GIVE_UP_WINDOWS = 100
"""Windows a taken checkpoint waits for its parts before it is given up (an executor could
not write its part: its error says why) and the next one may be taken."""


@dataclass
class EngineState:
    """The driver's part of a checkpoint.

    Attributes:
        ledger: acker task -> root -> (XOR so far, spout task, age in seconds).
        verdicts: the verdicts the spouts get with the next window.
        deliveries: rows on edges closing a cycle, delivered in the next window.
    """

    ledger: dict[int, dict[int, tuple[int, int, float]]] = field(default_factory=dict)
    verdicts: Verdicts = field(default_factory=Verdicts)
    deliveries: dict[int, list[bytes]] = field(default_factory=dict)

    @classmethod
    def of(cls, acker: Acker, verdicts: Verdicts, deliveries: dict[int, list[bytes]]
           ) -> EngineState:
        """The engine's state now (ages instead of the acker's monotonic times)."""
        now = time.monotonic()
        ledger = {task.task: {root: (entry.xor, entry.spout_task, now - entry.touched)
                              for root, entry in task.ledger.items()}
                  for task in acker.tasks}
        return cls(ledger, verdicts, {gid: list(blobs) for gid, blobs in deliveries.items()})

    def restore_ledger(self, acker: Acker) -> None:
        """Put the ledger back into ``acker`` (emptied first)."""
        now = time.monotonic()
        for task in acker.tasks:
            task.ledger = {root: LedgerEntry(xor, spout_task, now - age)
                           for root, (xor, spout_task, age) in self.ledger.get(task.task,
                                                                                {}).items()}

    def encode(self) -> bytes:
        """The driver's part, as written to the checkpoint."""
        verdicts = self.verdicts
        return dump_versioned(ENGINE_FORMAT, self.ledger, dict(verdicts.ack),
                              dict(verdicts.fail), dict(verdicts.reset), verdicts.reasons,
                              self.deliveries)

    @classmethod
    def decode(cls, blob: bytes) -> EngineState:
        """Inverse of :meth:`encode`.

        Raises:
            CheckpointError: ``CHECKPOINT_CORRUPT`` for bytes of another kind.
        """
        ledger, ack, fail, reset, reasons, deliveries = load_versioned(
            blob, ENGINE_FORMAT, 6, "the driver's checkpoint part")
        verdicts = Verdicts(defaultdict(list, ack), defaultdict(list, fail),
                            defaultdict(list, reset), reasons)
        return cls(ledger, verdicts, deliveries)


class CheckpointCoordinator:
    """When checkpoints are taken, which parts arrived, what is committed.

    Args:
        every: take a checkpoint after every ``every``-th window.
        store: the topology's checkpoint store.
        writers: the parts every checkpoint needs besides the driver's (one per executor).
        keep: committed checkpoints kept (``topology.checkpoint.keep``).
        start_empty: start from empty state when no committed checkpoint is usable
            (``topology.checkpoint.start.empty``) instead of raising ``CHECKPOINT_UNUSABLE``.
        outside_state: what keeps state outside the checkpoints, at the newest committed
            one (a Redis state provider), for messages; None: nothing. A rollback cannot
            then fall back to an older checkpoint.
    """

    def __init__(self, every: int, store: CheckpointStore, writers: Iterable[str], *,
                 keep: int = 2, start_empty: bool = False,
                 outside_state: str | None = None) -> None:
        self.every = every
        self.store = store
        self.keep = max(1, keep)
        self.start_empty = start_empty
        self.outside_state = outside_state
        self.kept: list[int] = []
        """The committed checkpoints kept that this driver committed, oldest first."""
        self.expected = {*writers, DRIVER_PART}
        self.pending: dict[int, dict[str, PartInfo]] = {}
        self.committed: int | None = None
        self._announce: int | None = None
        self._flagged: int | None = None
        """A window sent to take a checkpoint whose job has not ended yet (windows overlap:
        the next may start before it ends, and must not take a second one)."""
        self._next_due = every - 1
        self.last_commit_ms = 0.0
        self._taken_at: dict[int, float] = {}

    def due(self, window: int) -> bool:
        """Whether a checkpoint is taken at the end of ``window`` (see the module docstring).

        Gives up a checkpoint that waited too long for its parts.
        """
        for taken in [w for w in self.pending if window - w > GIVE_UP_WINDOWS]:
            missing = sorted(self.expected - set(self.pending.pop(taken)))
            self._taken_at.pop(taken, None)
            logger.error("checkpoint %d given up: no part from %s", taken, ", ".join(missing))
        return (window >= self._next_due and not self.pending and self._announce is None
                and self._flagged is None)

    def flagged(self, window: int) -> None:
        """``window``'s requests ask for a checkpoint: none other until it ends."""
        self._flagged = window

    def abandon(self, window: int) -> None:
        """Flagged ``window`` ended without a checkpoint (its job failed, a rollback is due).

        The parts its executors took are never committed (:meth:`arrived` ignores them);
        the next window takes one instead.
        """
        if self._flagged == window:
            self._flagged = None

    def begin(self, window: int, engine_part: bytes) -> None:
        """Checkpoint ``window`` was taken: write the driver's part, wait for the others."""
        self.abandon(window)
        self._next_due = window + self.every
        info = self.store.write_part(window, DRIVER_PART, engine_part)
        self.pending[window] = {DRIVER_PART: info}
        self._taken_at[window] = time.monotonic()

    def arrived(self, window: int, info: PartInfo) -> None:
        """An executor's part of checkpoint ``window`` is durable."""
        parts = self.pending.get(window)
        if parts is not None:  # a part of a checkpoint given up or rolled back: ignored
            parts[info.name] = info

    def commit_ready(self) -> int | None:
        """Commit the newest checkpoint whose parts are all durable and purge the older ones.

        Older pending checkpoints are superseded by it. Returns its window, or None.
        """
        ready = [w for w, parts in self.pending.items() if self.expected <= set(parts)]
        if not ready:
            return None
        window = max(ready)
        self.store.commit(window, self.pending[window].values())
        self.last_commit_ms = (time.monotonic() - self._taken_at.get(window,
                                                                     time.monotonic())) * 1000
        for older in [w for w in self.pending if w <= window]:
            del self.pending[older]
            self._taken_at.pop(older, None)
        self.committed = self._announce = window
        self.kept = [*self.kept, window][-self.keep:]
        self.store.purge(self.keep)
        return window

    def replace_parts(self, writers: Iterable[str]) -> None:
        """New executors (``rebalance -e``): checkpoints need their parts from now on.

        The pending checkpoints, taken under the old executors, are given up; the next
        window takes a checkpoint.
        """
        self.expected = {*writers, DRIVER_PART}
        self.pending.clear()
        self._taken_at.clear()
        self._flagged = None
        self._next_due = 0

    def take_next(self) -> None:
        """Take a checkpoint at the next window that can (the last one, at a drain).

        That is as soon as the checkpoint in flight, if any, has committed and its commit
        was announced: still one at a time.
        """
        self._next_due = 0

    def take_announcement(self) -> int | None:
        """The committed window executors have not been told of yet (told once)."""
        window, self._announce = self._announce, None
        return window

    def rollback_target(self) -> int | None:
        """Forget pending checkpoints, delete torn ones; the newest committed window."""
        self.pending.clear()
        self._next_due = 0  # the next window after the rollback starts a checkpoint
        self._taken_at.clear()
        self._announce = None
        self._flagged = None
        target = self.store.restore_point(start_empty=self.start_empty)
        committed = self.store.committed_windows()
        if self.outside_state and target is not None and committed and committed[-1] > target:
            msg = (f"the newest committed checkpoint in {self.store.base!r}, window "
                   f"{committed[-1]}, is not usable, and the topology's state in "
                   f"{self.outside_state} is at it or later: checkpoint {target} before it "
                   "would apply updates twice, so the topology stops. Restore that "
                   "checkpoint's folder from a copy, or set topology.checkpoint.start.empty: "
                   "true and clear that state to start from empty state deliberately")
            raise CheckpointError(msg, code="CHECKPOINT_UNUSABLE")
        discarded = self.store.discard_after(target)
        if discarded:
            logger.info("checkpoints %s after %s deleted: torn, corrupt or not committed",
                        discarded, "the start" if target is None else target)
        self.committed = target
        self.kept = [w for w in self.kept if target is not None and w <= target]
        return target

    def engine_state(self, window: int) -> EngineState:
        """The driver's part of committed checkpoint ``window``."""
        return EngineState.decode(self.store.read_part(window, DRIVER_PART))


def part_info(wire: tuple[int, str, int, str] | list[Any]) -> tuple[int, PartInfo]:
    """A part reported in a :class:`~sparkstorm.engine.wire.messages.WindowMeta`."""
    window, name, size, sha = wire
    return int(window), PartInfo(str(name), int(size), str(sha))
