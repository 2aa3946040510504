"""The bolt executor's per-batch loop for auto-acking bolts: tuples made, processed, acked.

``BoltLoop.run`` (``topology.task``) is the one bolt loop every host shares, fed with the
tuples of ``topology.tuple.delivered``. For the engine's commonest bolt (``auto_ack`` on,
the default) this module runs the same loop with the three per-tuple steps that cost most
written into its body: the tuple made without a generator (and its object reused when
the bolt kept no reference to the one before), the bolt's ``process``, and
``TaskCollector.auto_ack``'s XOR into the window's per-root contributions without a call,
folded per run of tuples of one root before it goes into the window's map. It also lets
the bolt's commonest emits wait to be routed together (``engine.executor.deferred_emits``): it keeps
what each tuple emitted with that tuple's anchors; in a batch of untracked tuples, which
anchor nothing, they are routed as they come (``deferred_emits.unanchored_emit``).
Measured per input tuple, this is the engine's largest cost in a counting bolt (see
``benchmarks/RESULTS.md``, "Issue 12: the per-tuple executors' engine code").

Behaviour is ``BoltLoop.run`` over ``delivered``'s tuples, exactly: the same tuples, the
same ``collector.current``, the same auto-acks (a tuple ``process`` acked, failed or left
``done`` is not acked again), the same auto-fail and :class:`BoltRaised`. Bolts without
``auto_ack``, tick tuples and collectors whose ``auto_ack`` is not the engine's (a
recording harness) go through ``BoltLoop.run`` itself.
``tests/unit/engine/test_fast_paths.py`` checks the two against each other.

Called by ``BoltExecutor._process_batch`` once per input batch, under the executor's lock.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from itertools import count
from typing import Any

from sparkstorm.engine.executor.collector import TaskCollector
from sparkstorm.engine.executor.deferred_emits import GROUPS_PER_ROUTE, unanchored_emit
from sparkstorm.engine.wire.failures import FAIL_ERROR
from sparkstorm.engine.wire.row_wire import flat_values
from sparkstorm.topology.failed import FailedException
from sparkstorm.topology.task import BoltLoop, BoltRaised
from sparkstorm.topology.tuple import Tuple, delivered, values_of

_LOOP_REFERENCES = 3
"""References to the tuple just processed that are the loop's own: its variable,
``collector.current`` and ``sys.getrefcount``'s argument. With no other, nothing kept the
tuple (no bolt's list, no pending map of a shell bolt, no traceback), and the loop reuses
the object for the next tuple of the batch: one allocation and three stores less per tuple.
A kept tuple is never touched again."""


def _never_reused(tup: Tuple) -> int:
    return _LOOP_REFERENCES + 1


_references = getattr(sys, "getrefcount", _never_reused)
"""The reference count where it is exact (CPython); elsewhere every tuple is new."""


def run_batch(loop: BoltLoop, first_id: int, source: tuple[str, str, int],  # noqa: PLR0913, PLR0917
              values_list: list[Any], values_cls: Any, roots: list[Any], edges: list[Any],
              tick: bool, flat: bool = False) -> int:
    """Run one input batch through ``loop``'s bolt; returns how many tuples it auto-acked.

    Args:
        loop: the task's loop (its instance and collector, ``auto_ack``, ``auto_fail``).
        first_id: the id of the batch's first tuple (the next ones count up).
        source: the batch's source component, stream and task.
        values_list: the tuples' values.
        values_cls: the stream's namedtuple class (None: plain tuples).
        roots: the batch's roots column (``engine.wire.anchor_columns``).
        edges: the batch's edges column.
        tick: the batch is tick tuples (``process_tick``).
        flat: ``values_list`` holds each tuple's one value, not a list of values
            (``engine.wire.row_wire``).

    Raises:
        BoltRaised: as ``BoltLoop.run``.
    """
    engine_ack = type(loop.collector).auto_ack is TaskCollector.auto_ack
    if tick or not loop.auto_ack or not engine_ack:
        if flat:
            values_list = [[value] for value in values_list]
        return loop.run(delivered(first_id, *source, values_list, values_cls, roots, edges),
                        tick)
    values = flat_values(values_cls, values_list) if flat else values_of(values_cls,
                                                                         values_list)
    return _auto_ack_loop(loop, first_id, source, values, roots, edges)


def _auto_ack_loop(loop: BoltLoop, first_id: int, source: tuple[str, str, int],
                   values_iter: Iterator[Any], roots: list[Any], edges: list[Any]) -> int:
    """:func:`run_batch` for an auto-acking bolt of the engine's collector.

    Runs :func:`_auto_ack_run` over the batch (:func:`_untracked_run` when no tuple of it
    belongs to a tree), and again over the rest of it after each tuple whose ``process``
    raised :class:`~sparkstorm.topology.failed.FailedException`.
    """
    untracked = roots.count(None) == len(roots) and edges.count(None) == len(edges)
    run: Callable[[BoltLoop, int, tuple[str, str, int], Any], tuple[int, int | None]] = (
        _untracked_run if untracked else _auto_ack_run)
    items: Any = (zip(count(first_id), values_iter) if untracked
                  else zip(count(first_id), values_iter, roots, edges))
    acked, start = 0, first_id
    while True:
        try:
            more, resume = run(loop, start, source, items)
        except BoltRaised as raised:  # counted from the batch's first tuple, not the run's
            raise BoltRaised(raised.cause, raised.processed + start - first_id,
                             raised.auto_acked + acked) from raised.cause
        acked += more
        if resume is None:
            return acked
        start = resume


def _auto_ack_run(loop: BoltLoop, first_id: int, source: tuple[str, str, int],  # noqa: PLR0912, PLR0915
                  items: Iterator[tuple[int, Any, Any, Any]]) -> tuple[int, int | None]:
    """Run ``items`` (from tuple id ``first_id`` on) until the end or a failing tuple.

    One long function on purpose: every step of it runs once per tuple, and a call per
    step is what this module exists to save.

    Returns:
        How many tuples it auto-acked, and the id of the tuple to go on from when one
        raised :class:`~sparkstorm.topology.failed.FailedException` (None: all done).
    """
    component, stream, src = source
    collector: TaskCollector = loop.collector  # type: ignore[assignment]
    process = loop.instance.process
    xor = collector.output.xor  # the window's output: taken only between batches
    xor_get = xor.get
    new, references = object.__new__, _references
    # counted without a store per tuple: the id of the last tuple whose process returned,
    # and how many of those the bolt acked or failed itself (the others were auto-acked)
    last, skipped = first_id - 1, 0
    tup: Tuple | None = None
    # the contributions of a run of tuples of one root (consecutive in a batch: an upstream
    # emits a tuple's children one after the other), XORed here and put in the window's
    # map once per run: one dict update per tuple was a fifth of a counting executor's time
    run_root: int | None = None
    run_xor = 0
    # the bolt's commonest emits wait in ``rows`` (engine.executor.deferred_emits); each tuple that
    # emitted leaves its rows with its anchors in the collector's groups
    rows: list[Any] | None = None
    if collector.defers_emits:
        collector.deferred = rows = []
        groups = collector.deferred_groups
        keep_rows = groups.append
        anchored = collector.auto_anchor
    try:
        for tup_id, values, root, edge in items:
            if tup is None or references(tup) > _LOOP_REFERENCES:
                tup = new(Tuple)
                tup.component = component
                tup.stream = stream
                tup.task = src
            tup.id = tup_id
            tup.values = values
            tup.root = root
            tup.edge = edge
            tup.ack_val = 0
            tup.done = False
            collector.current = tup
            process(tup)
            last = tup_id
            if rows:
                keep_rows((rows, root, edge) if anchored else (rows, None, None))
                collector.deferred = rows = []
                if len(groups) >= GROUPS_PER_ROUTE:  # routed while still in the CPU's caches
                    collector.route_waiting()
            if tup.done:  # acked or failed by the bolt itself
                skipped += 1
                continue
            tup.done = True
            if root is not None:  # one tree: TaskCollector.auto_ack's XOR
                val = tup.ack_val  # 0 unless the bolt emitted anchored to it
                if root == run_root:
                    run_xor ^= edge ^ val if val else edge
                else:
                    if run_root is not None:
                        xor[run_root] = xor_get(run_root, 0) ^ run_xor
                    run_root, run_xor = root, edge ^ val if val else edge
            elif edge:  # several trees
                _ack_several(xor, edge, tup.ack_val)
    except Exception as exc:  # noqa: BLE001 - _raised raises it again as BoltRaised
        if rows and tup is not None:  # the raising tuple's emits are sent, as before
            keep_rows((rows, tup.root, tup.edge) if anchored else (rows, None, None))
        return _raised(loop, exc, tup, last - first_id + 1, skipped)
    finally:
        collector.current = None
        collector.deferred = None
        if run_root is not None:  # the last run (also when the bolt raised)
            xor[run_root] = xor_get(run_root, 0) ^ run_xor
    return last - first_id + 1 - skipped, None


def _untracked_run(loop: BoltLoop, first_id: int, source: tuple[str, str, int],
                   items: Iterator[tuple[int, Any]]) -> tuple[int, int | None]:
    """:func:`_auto_ack_run` for a batch none of whose tuples belongs to a tree.

    Under checkpoint reliability (or from an unreliable spout) no tuple has a root or an
    edge: nothing to XOR when it is acked, nothing to anchor its emits to. Without those
    steps a counting bolt's loop takes a sixth less time per tuple (``benchmarks/
    RESULTS.md``, "checkpoint reliability's per-tuple path"), and a bolt whose ``emit`` is
    the engine's routes its commonest emits as they come, with no list per tuple to keep
    them in (``deferred_emits.unanchored_emit``). Same results otherwise.
    """
    component, stream, src = source
    collector: TaskCollector = loop.collector  # type: ignore[assignment]
    instance = loop.instance
    process = instance.process
    new, references = object.__new__, _references
    last, skipped = first_id - 1, 0
    tup: Tuple | None = None
    rows: list[Any] | None = None
    settle: Callable[[], None] | None = None
    if collector.defers_emits and getattr(instance, "emit", None) == collector.bolt_emit:
        collector.route_waiting()  # what earlier batches left waiting goes first
        instance.emit, settle = unanchored_emit(collector, collector.bolt_emit)
    elif collector.defers_emits:
        collector.deferred = rows = []
        keep_rows = collector.deferred_groups.append
    try:
        for tup_id, values in items:
            if tup is None or references(tup) > _LOOP_REFERENCES:
                tup = new(Tuple)
                tup.component = component
                tup.stream = stream
                tup.task = src
                tup.root = tup.edge = None
                # with no root and no edge nothing XORs into it, and nothing but this loop
                # sets the collector's current tuple: both hold while the object is reused
                tup.ack_val = 0
                collector.current = tup
            tup.id = tup_id
            tup.values = values
            tup.done = False
            process(tup)
            last = tup_id
            if rows:
                keep_rows((rows, None, None))
                collector.deferred = rows = []
                if len(collector.deferred_groups) >= GROUPS_PER_ROUTE:
                    collector.route_waiting()
            if tup.done:  # acked or failed by the bolt itself
                skipped += 1
                continue
            tup.done = True  # acked: no tree to tell
    except Exception as exc:  # noqa: BLE001 - _raised raises it again as BoltRaised
        if rows and tup is not None:  # the raising tuple's emits are sent, as before
            keep_rows((rows, None, None))
        return _raised(loop, exc, tup, last - first_id + 1, skipped)
    finally:
        collector.current = None
        collector.deferred = None
        if settle is not None:
            settle()
            instance.emit = collector.bolt_emit
    return last - first_id + 1 - skipped, None


def _raised(loop: BoltLoop, exc: Exception, tup: Tuple | None, done: int, skipped: int
            ) -> tuple[int, int | None]:
    """What follows ``process`` raising ``exc`` for ``tup``.

    ``done`` tuples returned before it, ``skipped`` of them acked or failed by the bolt.

    Returns:
        As :func:`_auto_ack_run` for a :class:`~sparkstorm.topology.failed.FailedException`
        (the loop goes on after ``tup``).

    Raises:
        BoltRaised: for any other exception (``tup`` failed first with ``auto_fail``).
    """
    if isinstance(exc, FailedException) and tup is not None:
        loop.failed_by_bolt(tup, exc)  # neither auto-acked nor a crash: go on after it
        return done - skipped, tup.id + 1
    if loop.auto_fail and tup is not None:  # pystorm: else it is left to time out
        loop.collector.fail(tup, f"{type(exc).__name__}: {exc}", FAIL_ERROR)
    raise BoltRaised(exc, done, done - skipped) from exc


def _ack_several(xor: dict[int, int], edges: dict[int, int], ack_val: int) -> None:
    """A tuple of several trees acked: ``edge ^ ack_val`` into each of its roots' XORs."""
    for root, edge in edges.items():
        xor[root] = xor.get(root, 0) ^ edge ^ ack_val


__all__ = ["run_batch"]
