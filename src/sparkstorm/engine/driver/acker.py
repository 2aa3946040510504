"""The ``__acker`` system component: Storm's XOR ledger over 64-bit root ids.

Its tasks live in the driver, not in a Spark stage: executors already pre-aggregate acker
traffic to one XOR value per root per window, so the per-window input is small, and running
the ledger where the job's result arrives saves one Python stage per window. Roots are
spread over the acker tasks by fields grouping on the root id (``root % tasks``).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from sparkstorm.engine.wire.failures import Failure
from sparkstorm.engine.wire.root_values import RootValues

if TYPE_CHECKING:
    from sparkstorm.engine.wire.messages import WindowMeta


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
        contributions does not matter (XOR commutes), only that the root is known. The
        window's trees are folded as arrays (``_WindowFold``): most complete in the window
        they began in and never enter a ledger; only those still open after it do.
        """
        verdicts = Verdicts()
        if not self.tasks:
            return verdicts
        now = time.monotonic()
        fold = _WindowFold(metas, self._open_roots())
        self._count_executed(fold)
        touched = self._apply_old_xors(fold)
        for meta in metas:
            self._apply_resets(meta.resets, fold, verdicts, now)
        failed: set[int] = set()
        for meta in metas:
            self._apply_fails(meta.failed, fold, verdicts, failed)
        for root in touched:
            acker = self._task_for(root)
            entry = acker.ledger.get(root)
            if entry is not None and entry.xor == 0:
                del acker.ledger[root]
                verdicts.ack[entry.spout_task].append(root)
        fold.ack_new_trees(verdicts, failed)
        for root, xor, spout_task in fold.still_open(failed):
            self._task_for(root).ledger[root] = LedgerEntry(xor, spout_task, now)
        self._expire(now)
        return verdicts

    def _open_roots(self) -> np.ndarray[Any, np.dtype[np.uint64]]:
        """The roots of every open tree, as an array (sorted)."""
        count = self.open_trees
        roots = np.fromiter(chain.from_iterable(t.ledger for t in self.tasks), np.uint64, count)
        roots.sort()
        return roots

    def _count_executed(self, fold: _WindowFold) -> None:
        """Count the window's contributions to known trees on their acker tasks."""
        if len(self.tasks) == 1:
            self.tasks[0].executed += fold.executed_on(1)[0]
            return
        for task, executed in zip(self.tasks, fold.executed_on(len(self.tasks)), strict=True):
            task.executed += executed

    def _apply_old_xors(self, fold: _WindowFold) -> list[int]:
        """XOR the window's contributions into trees of earlier windows; those roots."""
        touched = []
        for root, value in fold.old_contributions():
            self._task_for(root).ledger[root].xor ^= value
            touched.append(root)
        return touched

    def _apply_resets(self, roots: list[int], fold: _WindowFold, verdicts: Verdicts,
                      now: float) -> None:
        for root in roots:
            entry = self._task_for(root).ledger.get(root)
            if entry is not None:
                entry.touched = now
                verdicts.reset[entry.spout_task].append(root)
                continue
            spout_task = fold.new_tree_task(root)
            if spout_task is not None:  # a tree of this window: it was registered now
                verdicts.reset[spout_task].append(root)

    def _apply_fails(self, fails: Mapping[int, Failure], fold: _WindowFold,
                     verdicts: Verdicts, failed: set[int]) -> None:
        """Fail the trees of ``fails`` (root -> why) and keep why."""
        for root, why in fails.items():
            entry = self._task_for(root).ledger.pop(root, None)
            spout_task = entry.spout_task if entry is not None else None
            if spout_task is None and root not in failed:
                spout_task = fold.new_tree_task(root)
            if spout_task is not None:
                failed.add(root)
                verdicts.fail[spout_task].append(root)
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


_U64 = np.dtype("<u8")


def _columns(mapping: Mapping[int, int]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """A meta's root map as (roots, values) uint64 arrays.

    No Python int is made per entry when the map came packed over the wire.
    """
    if isinstance(mapping, RootValues):
        return (np.frombuffer(mapping.root_bytes, _U64),
                np.frombuffer(mapping.value_bytes, _U64))
    count = len(mapping)
    return (np.fromiter(mapping.keys(), np.uint64, count),
            np.fromiter(mapping.values(), np.uint64, count))


class _WindowFold:
    """One window's acker traffic grouped by root, as arrays (no Python object per root).

    Every init and XOR contribution of the window's metas is sorted by root once; each
    root's group gives its XOR, its contribution count, whether a spout registered it this
    window and with which task. Roots of trees opened in earlier windows (``old``: the
    acker's ledger) are set apart: their contributions go to the ledger. Contributions to
    roots known neither way are ignored, as Storm's acker ignores them (timed out).

    Args:
        metas: the window's executor reports.
        old: the roots of the trees open before this window, sorted.
    """

    def __init__(self, metas: list[WindowMeta], old: np.ndarray[Any, Any]) -> None:
        roots, values, tasks = [], [], []
        for meta in metas:
            if meta.inits:
                init_roots, init_tasks = _columns(meta.inits)
                roots.append(init_roots)
                values.append(np.zeros(len(init_roots), np.uint64))
                tasks.append(init_tasks.astype(np.int64) + 1)  # 0: not an init
        for meta in metas:
            if meta.xor:
                xor_roots, xor_values = _columns(meta.xor)
                roots.append(xor_roots)
                values.append(xor_values)
                tasks.append(np.zeros(len(xor_roots), np.int64))
        if not roots:
            roots, values, tasks = [np.zeros(0, np.uint64)], [np.zeros(0, np.uint64)], \
                [np.zeros(0, np.int64)]
        all_roots = np.concatenate(roots)
        order = np.argsort(all_roots)  # XOR, max and sum need no stable order
        sorted_roots = all_roots[order]
        starts = np.flatnonzero(np.concatenate(([True], sorted_roots[1:] != sorted_roots[:-1])))
        if not len(sorted_roots):
            starts = starts[:0]
        sorted_tasks = np.concatenate(tasks)[order]
        self.roots = sorted_roots[starts]
        """Every root of the window, sorted, once."""
        self.xor = (np.bitwise_xor.reduceat(np.concatenate(values)[order], starts)
                    if len(starts) else np.zeros(0, np.uint64))
        inits = (sorted_tasks > 0).astype(np.int64)
        groups = np.diff(np.append(starts, len(sorted_roots)))
        self.spout_task = (np.maximum.reduceat(sorted_tasks, starts) - 1
                           if len(starts) else np.zeros(0, np.int64))
        """The spout task that registered each root this window (-1: none did)."""
        self.contributions = groups - (np.add.reduceat(inits, starts)
                                       if len(starts) else groups)
        self.old = self._of(old)
        """Whether each root's tree was open before this window (it stays the ledger's)."""
        self.new = (self.spout_task >= 0) & ~self.old
        """Whether each root's tree begins in this window."""
        self.failed = np.zeros(len(self.roots), bool)

    def _of(self, roots: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """Which of this window's roots are among ``roots`` (sorted)."""
        if not len(roots) or not len(self.roots):
            return np.zeros(len(self.roots), bool)
        at = np.searchsorted(roots, self.roots)
        at[at == len(roots)] = 0
        return roots[at] == self.roots  # type: ignore[no-any-return]

    def _index(self, root: int) -> int | None:
        """Where ``root`` is among the window's roots (None: absent)."""
        if not 0 <= root < 2**64:
            return None
        at = int(np.searchsorted(self.roots, np.uint64(root)))
        return at if at < len(self.roots) and int(self.roots[at]) == root else None

    def executed_on(self, tasks: int) -> list[int]:
        """Contributions to known trees, per acker task (``root % tasks``)."""
        known = self.new | self.old
        if tasks == 1:
            return [int(self.contributions[known].sum())]
        counts = np.bincount((self.roots[known] % np.uint64(tasks)).astype(np.int64),
                             weights=self.contributions[known], minlength=tasks)
        return [int(n) for n in counts]

    def old_contributions(self) -> list[tuple[int, int]]:
        """(root, XOR) of the window's contributions to trees of earlier windows."""
        touched = self.old & (self.contributions > 0)
        return list(zip(self.roots[touched].tolist(), self.xor[touched].tolist(),
                        strict=True))

    def new_tree_task(self, root: int) -> int | None:
        """The spout task of ``root`` if its tree began this window and is not failed."""
        at = self._index(root)
        if at is None or not self.new[at] or self.failed[at]:
            return None
        return int(self.spout_task[at])

    def ack_new_trees(self, verdicts: Verdicts, failed: set[int]) -> None:
        """Ack the trees that began and completed in this window (failed ones aside)."""
        self._mark_failed(failed)
        done = self.new & ~self.failed & (self.contributions > 0) & (self.xor == 0)
        roots, tasks = self.roots[done], self.spout_task[done]
        if not len(tasks):
            return
        if tasks[0] == tasks.min() == tasks.max():  # one spout task (the usual case)
            verdicts.ack[int(tasks[0])].extend(roots.tolist())
            return
        for task in np.flatnonzero(np.bincount(tasks)).tolist():
            verdicts.ack[task].extend(roots[tasks == task].tolist())

    def still_open(self, failed: set[int]) -> list[tuple[int, int, int]]:
        """(root, XOR, spout task) of the trees that began this window and stay open."""
        self._mark_failed(failed)
        stay = self.new & ~self.failed & ((self.contributions == 0) | (self.xor != 0))
        return list(zip(self.roots[stay].tolist(), self.xor[stay].tolist(),
                        self.spout_task[stay].tolist(), strict=True))

    def _mark_failed(self, failed: set[int]) -> None:
        for root in failed:
            at = self._index(root)
            if at is not None:
                self.failed[at] = True
