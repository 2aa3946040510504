"""The ``__acker`` system component: Storm's XOR ledger over 64-bit root ids.

Its tasks live in the driver, not in a Spark stage: executors already pre-aggregate acker
traffic to one XOR value per root per window, so the per-window input is small, and running
the ledger where the job's result arrives saves one Python stage per window. Roots are
spread over the acker tasks by fields grouping on the root id (``root % tasks``).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sparkstorm.engine.failures import Failure

if TYPE_CHECKING:
    from sparkstorm.engine.messages import WindowMeta


@dataclass
class Verdicts:
    """What the spouts learn from one window: acked, failed and reset roots per spout task."""

    ack: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    fail: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    reset: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    reasons: dict[int, Failure] = field(default_factory=dict)
    """Why each failed root failed (the spout counts it when it fails the tuple, so counts
    by cause always add up to the spout's failed count)."""

    def merge(self, later: Verdicts) -> None:
        """Add ``later``'s verdicts to these, which no spout has heard yet."""
        for mine, theirs in ((self.ack, later.ack), (self.fail, later.fail),
                             (self.reset, later.reset)):
            for task, roots in theirs.items():
                mine.setdefault(task, []).extend(roots)
        self.reasons.update(later.reasons)


@dataclass(slots=True)
class LedgerEntry:
    """One open tuple tree in an acker task (Storm's acker keeps the same three values)."""

    xor: int
    """The XOR of every edge seen so far: 0 once the tree is complete."""
    spout_task: int
    """The task that emitted the root, which gets the verdict."""
    touched: float
    """When the tree was registered or last reset (``time.monotonic()``): its age."""


class AckerTask:
    """One ``__acker`` task: its ledger of open trees by root id."""

    def __init__(self, task: int) -> None:
        self.task = task
        self.ledger: dict[int, LedgerEntry] = {}
        self.executed = 0


class Acker:
    """All acker tasks of a topology (in its driver), fed one window of executor metas at a time."""

    def __init__(self, tasks: list[int], timeout_secs: float) -> None:
        self.tasks = [AckerTask(t) for t in tasks]
        self.timeout = timeout_secs

    def _task_for(self, root: int) -> AckerTask:
        return self.tasks[root % len(self.tasks)]

    @property
    def open_trees(self) -> int:
        """Tuple trees still in flight."""
        return sum(len(t.ledger) for t in self.tasks)

    def process_window(self, metas: list[WindowMeta]) -> Verdicts:
        """Apply one window's inits, XORs, fails and resets; return the verdicts.

        All inits are registered before any XOR is applied: within a window the order of
        contributions does not matter (XOR commutes), only that the root is known.
        """
        verdicts = Verdicts()
        if not self.tasks:
            return verdicts
        now = time.monotonic()
        for meta in metas:
            for root, spout_task in meta.inits.items():
                ledger = self._task_for(root).ledger
                if root not in ledger:
                    ledger[root] = LedgerEntry(0, spout_task, now)
        touched: list[int] = []
        for meta in metas:
            self._apply_xor(meta.xor, touched)
            self._apply_resets(meta.resets, verdicts, now)
        for meta in metas:
            self._apply_fails(meta.failed, verdicts)
        for root in touched:
            acker = self._task_for(root)
            entry = acker.ledger.get(root)
            if entry is not None and entry.xor == 0:
                del acker.ledger[root]
                verdicts.ack[entry.spout_task].append(root)
        self._expire(now)
        return verdicts

    def _apply_xor(self, xors: dict[int, int], touched: list[int]) -> None:
        for root, value in xors.items():
            acker = self._task_for(root)
            entry = acker.ledger.get(root)
            if entry is not None:  # unknown roots already timed out: ignore, as Storm does
                entry.xor ^= value
                acker.executed += 1
                touched.append(root)

    def _apply_resets(self, roots: list[int], verdicts: Verdicts, now: float) -> None:
        for root in roots:
            entry = self._task_for(root).ledger.get(root)
            if entry is not None:
                entry.touched = now
                verdicts.reset[entry.spout_task].append(root)

    def _apply_fails(self, fails: dict[int, Failure], verdicts: Verdicts) -> None:
        """Fail the trees of ``fails`` (root -> why) and keep why."""
        for root, why in fails.items():
            entry = self._task_for(root).ledger.pop(root, None)
            if entry is not None:
                verdicts.fail[entry.spout_task].append(root)
                verdicts.reasons[root] = why

    def _expire(self, now: float) -> None:
        """Forget trees older than the timeout; their spouts time them out themselves."""
        deadline = now - self.timeout
        for acker in self.tasks:
            stale = [r for r, entry in acker.ledger.items() if entry.touched < deadline]
            for root in stale:
                del acker.ledger[root]

    def forget_spout_tasks(self, spout_tasks: set[int]) -> None:
        """Drop the trees of these spout tasks.

        Their executor was lost with its pending tuples: no verdict could reach them.
        """
        for acker in self.tasks:
            gone = [r for r, entry in acker.ledger.items() if entry.spout_task in spout_tasks]
            for root in gone:
                del acker.ledger[root]

    def forget_all(self) -> None:
        """Drop every open tree (after a failed window: the spouts fail them all)."""
        for acker in self.tasks:
            acker.ledger.clear()
