"""The executor of a spout: produces between windows, applies acks and fails per window.

``next_tuple`` runs in a background thread (the producer) between windows, as Storm's spout
executor thread does. Storm's contract is that ``next_tuple``, ``ack`` and ``fail`` of one
instance never run at the same time, and that a spout may take its time in ``next_tuple``
(Storm's own ``TestWordSpout`` sleeps 100 ms per call; others block on a queue or a socket).
So two locks:

- :attr:`calls` is held across every call into a task instance (``next_tuple``, ``ack``,
  ``fail``, ``activate``, a checkpoint's snapshot, ``close``): calls never overlap;
- ``self.lock`` guards the buffer a window takes (:attr:`output`) and the statistics, and is
  held only for short moves, never across ``next_tuple``.

While ``next_tuple`` runs, the tasks emit into :attr:`staging`, which the producer moves into
:attr:`output` after each burst of calls. A window takes :attr:`output` at once; it applies the
acker's verdicts itself when the producer is between calls (it asks it to pause), and leaves
them to the producer otherwise, so a window never waits for a blocked ``next_tuple``. Only a
checkpoint window waits for the call in progress: its snapshot must match the tuples it hands
over. Lock order: :attr:`calls` before ``self.lock``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sized
from contextlib import contextmanager
from typing import Any

from sparkstorm.config import conf_bool, conf_float, conf_int, conf_optional_int
from sparkstorm.config.reliability import CHECKPOINT, reliability_mode
from sparkstorm.engine.executor.checkpoint_part import RestorePoint
from sparkstorm.engine.executor.collector import TaskCollector, WindowOutput
from sparkstorm.engine.executor.commit_acks import AcksAtCommit
from sparkstorm.engine.executor.hand_overs import HandOvers
from sparkstorm.engine.executor.host import ExecutorHost
from sparkstorm.engine.executor.log_levels import log_sampled
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.batch_columns import STREAM, VALUES
from sparkstorm.engine.wire.failures import FAIL_CRASH, FAIL_EXPLICIT, FAIL_TIMEOUT, Failure
from sparkstorm.engine.wire.messages import SpoutControl
from sparkstorm.engine.wire.stats import ComponentCounters, LatencySample

TIMED_OUT = Failure(FAIL_TIMEOUT, "message timed out (topology.message.timeout.secs)")
JOB_LOST = Failure(FAIL_CRASH, "a window's job failed; its open trees were failed")
UNKNOWN_FAILURE = Failure(FAIL_EXPLICIT, "failed (reason not reported)")

IDLE_ROUNDS_BEFORE_SLOWER_POLL = 100
"""Rounds without an emit after which an idle spout polls every 10 ms instead of every 1 ms."""
BLOCKED_WAIT_SECONDS = 0.05
"""How long a spout at its buffer or pending bound sleeps unless a window wakes it."""

PRODUCE_BURST = 512
"""``next_tuple`` calls per task between two moves of :attr:`SpoutExecutor.staging` into the
window's buffer. Each move costs a new staging output and the collector's batch lookups
again: with 64 calls per move the per-tuple spout executor took 4.2 us per sentence against
3.6 before staging (``benchmarks/spout_executor_cpu.py``); a window never waits for a burst
(it takes the buffer under its own lock and asks the producer to pause)."""
BURST_SECONDS = 0.005
"""A burst also ends after this long (looked at every :data:`BURST_CLOCK_EVERY` calls, and
after each call that emitted nothing), so a slow ``next_tuple`` (one that sleeps) has its
tuples in the window's buffer right after its call."""
BURST_CLOCK_EVERY = 16
"""Calls between two reads of the clock in a burst (a read per call was 1 % of a call)."""
VERDICT_WAIT_SECONDS = 0.02
"""How long a window waits for the producer to finish its ``next_tuple`` call so that it can
apply the acker's verdicts itself; past it, the producer applies them after the call."""
CLOSE_WAIT_SECONDS = 5.0
"""How long ``close`` waits for a ``next_tuple`` call in progress before closing anyway."""


class SpoutExecutor(ExecutorHost):
    """Executor of a spout: produces between windows, applies acks and fails per window."""

    def __init__(self, plan: ExecutionPlan, gid: int, topology_name: str,
                 restore: RestorePoint | None = None) -> None:
        self.staging = WindowOutput()
        """Where the tasks emit; moved into :attr:`output` after each burst of calls."""
        self.calls = threading.RLock()
        """Held across every call into a task instance (see the module docstring)."""
        self.pausers = 0
        """Threads waiting for :attr:`calls` (a window, a push, a replan): while any does,
        the producer stops at its next call's end and lets them have it."""
        self.pausers_lock = threading.Lock()
        self.deferred: list[tuple[SpoutControl, bool, float]] = []
        """Windows' controls (True) and pushed verdicts (False) that came during a
        ``next_tuple`` call, in order, with when they came, for the producer to apply
        right after it."""
        self.heard_at: float | None = None
        """While deferred verdicts are applied: when they came, which ends their trees'
        complete latency (not the end of the ``next_tuple`` call that held them up)."""
        self.emitted: dict[str, int] = {}
        self.transferred: dict[str, int] = {}
        """Emit counts of the moved tuples since the last window, by stream (the routes'
        counters are only read by the producer, which counts them while it emits)."""
        self.commit_acks = (AcksAtCommit() if reliability_mode(plan.conf) == CHECKPOINT
                            else None)
        """``topology.reliability: checkpoint``: a tuple's ``ack`` waits for the checkpoint
        that covers its window (see :meth:`_hand_over`)."""
        self.hand_overs = HandOvers()
        """Which trees windows took when: their message timeouts start there (:meth:`_expire`)."""
        super().__init__(plan, gid, topology_name, restore)
        self.max_pending = conf_optional_int(self.conf, "topology.max.spout.pending")
        self.buffer_bound = conf_int(self.conf, "topology.spout.buffer.size")
        self.max_limit = max(self.buffer_bound,
                             conf_int(self.conf, "topology.spout.buffer.max.size"))
        """The largest limit a control may set (``topology.spout.buffer.max.size``)."""
        self.limit = self.buffer_bound
        """Tuples to buffer for the next window: the driver's ``SpoutControl.limit``."""
        self.filled_under = self.limit
        """The limit the buffer last handed over was filled under (reported as its bound)."""
        self.auto_pending: int | None = None
        """Un-acked tuples per task the driver's window sizer allows (``SpoutControl.pending``
        shared among the tasks; None: only ``topology.max.spout.pending``)."""
        self.timeout = conf_float(self.conf, "topology.message.timeout.secs")
        self.timeouts_enabled = conf_bool(self.conf, "topology.enable.message.timeouts")
        self.active = False
        self.stopped = threading.Event()
        self.wakeup = threading.Condition(self.lock)
        self.wakeups = 0
        """Counts notifications of :attr:`wakeup`, so the producer, which checks its bounds
        outside ``self.lock``, does not sleep through one that came meanwhile."""
        self.latency = LatencySample()
        self.acked: dict[str, int] = {}
        """Trees completed since the last window, by the stream their root was emitted on."""
        self.failed: dict[str, int] = {}
        self.complete_ms: dict[str, float] = {}
        """Complete latencies of the acked trees, summed by stream."""
        self.timed_out = 0
        self.buffered = 0
        self.buffered_bytes = 0
        """The bytes of the last window's encoded tuples (for the sizer's byte cap)."""
        self.fail_causes: dict[tuple[str, str], int] = {}
        """Failed trees since the last window, by (cause, reason)."""
        self.thread = threading.Thread(target=self._produce_loop, name="spout", daemon=True)
        self.thread.start()

    def emit_target(self) -> WindowOutput:
        """The tasks emit into :attr:`staging` (see the module docstring)."""
        return self.staging

    def buffers(self) -> list[WindowOutput]:
        """The window's buffer and the staging one (a replan refiles both)."""
        return [self.output, self.staging]

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """No task call runs (``next_tuple`` included) and no window takes the buffer."""
        with self._pausing():
            self.calls.acquire()
        try:
            with self.lock:
                yield
        finally:
            self.calls.release()
            self._notify()

    @property
    def pause_wanted(self) -> bool:
        """Whether a thread waits for :attr:`calls` (see :attr:`pausers`)."""
        return self.pausers > 0

    @contextmanager
    def _pausing(self) -> Iterator[None]:
        with self.pausers_lock:
            self.pausers += 1
        try:
            yield
        finally:
            with self.pausers_lock:
                self.pausers -= 1

    def _notify(self) -> None:
        with self.lock:
            self.wakeups += 1
            self.wakeup.notify_all()

    def _sleep(self, seconds: float, seen: int) -> None:
        """Sleep up to ``seconds`` unless :attr:`wakeup` was notified since ``seen``."""
        with self.lock:
            if self.wakeups == seen and not self.stopped.is_set():
                self.wakeup.wait(seconds)

    def set_active(self, active: bool) -> None:
        """Activate or deactivate the spout tasks (calls their activate/deactivate once)."""
        with self.calls, self.lock:
            self._set_active(active)

    def _set_active(self, active: bool) -> None:
        if active == self.active:
            return
        self.active = active
        for task, instance in self.instances.items():
            self._call(task, instance.activate if active else instance.deactivate)
        self.wakeups += 1
        self.wakeup.notify_all()

    def _call(self, task: int, method: Any, *args: Any) -> None:
        try:
            method(*args)
        except Exception as exc:  # noqa: BLE001 - a user error must not kill the executor
            self._call_raised(task, exc)

    def _call_raised(self, task: int, exc: Exception) -> None:
        """A user call of ``task`` raised ``exc``: recorded, and the executor restarts."""
        with self.lock:  # the window swaps self.errors under it
            self.record_error(task, exc)
        self.must_restart = True

    def _call_each(self, task: int, method: Any, args: list[Any]) -> None:
        """:meth:`_call` ``method`` with each of ``args``, in one ``try`` while none raises.

        A commit acks a window's message ids at once: tens of thousands of calls.
        """
        rest = iter(args)
        while True:
            try:
                for arg in rest:
                    method(arg)
                return
            except Exception as exc:  # noqa: BLE001 - as _call; then the rest
                self._call_raised(task, exc)

    def _buffered(self) -> int:
        """Deliveries waiting for the next window (moved or still in :attr:`staging`)."""
        return self.output.count + self.staging.count

    def _in_flight_of(self, collector: TaskCollector) -> tuple[Sized, int]:
        """What the in-flight bounds count of ``collector``'s task: ``len`` of one, plus the other.

        Under acking its pending trees, until their verdicts. Under checkpoint reliability
        the tuples it emitted since its last move into the buffer, plus those in the buffer
        or in windows that may not have ended yet (:meth:`_window_rows`): a tree ends with
        the window that took it, and so does its complete latency.
        """
        if self.commit_acks is None:
            return collector.pending_roots, 0
        return collector.immediate_acks, self.commit_acks.in_flight(collector.task)

    def _window_rows(self, collector: TaskCollector) -> int:
        """Under checkpoint reliability, rows of the task's tuples in flight (else 0).

        Emitted, buffered, or in windows that may not have ended yet.
        """
        if self.commit_acks is None:
            return 0
        return (self.commit_acks.in_flight(collector.task)
                + sum(rows for _, _, rows in collector.immediate_acks))

    def _can_produce(self, collector: TaskCollector) -> bool:
        counted, beside = self._in_flight_of(collector)
        in_flight = len(counted) + beside
        if self.max_pending is not None and in_flight >= self.max_pending:
            return False
        if self.auto_pending is not None and in_flight >= self.auto_pending:
            return False
        return self._buffered() < self.limit

    def _produce_loop(self) -> None:
        idle = 0
        while not self.stopped.is_set():
            seen = self.wakeups
            if self.pause_wanted:  # a window waits for calls: let it have them
                self._sleep(0.001, seen)
                continue
            with self.calls:
                called, emitted = self._produce_round()
            if not called:
                # inactive, or every task at a bound (buffer, pending): only a window lifts
                # it, and it notifies; polling every 1 ms meanwhile cost CPU for nothing
                self._sleep(BLOCKED_WAIT_SECONDS, seen)
            elif not emitted:
                self._sleep(0.001 if idle < IDLE_ROUNDS_BEFORE_SLOWER_POLL else 0.01, seen)
            idle = 0 if emitted else idle + 1

    def _produce_round(self) -> tuple[bool, bool]:
        """One burst per task that may produce (under :attr:`calls`).

        Returns:
            Whether any task was called, and whether anything was emitted.
        """
        if self.deferred:
            with self.lock:
                self._apply_deferred()
        if not self.active or self.must_restart:
            return False, False
        called = emitted = False
        for task, instance in self.instances.items():
            if self.stopped.is_set() or self.pause_wanted:
                break
            if self._can_produce(self.collectors[task]):
                called = True
                emitted = self._produce_burst(task, instance) or emitted
                with self.lock:
                    self._move_staging()
                    self._apply_deferred()
        return called, emitted

    def _produce_burst(self, task: int, instance: Any) -> bool:
        """Call ``next_tuple`` of ``task`` up to :data:`PRODUCE_BURST` times.

        Under :attr:`calls`, not ``self.lock``: a window takes what earlier bursts moved
        meanwhile. Stops at the first call that emits nothing, when the task may produce no
        more, after :data:`BURST_SECONDS`, or when a window asks for a pause.

        Returns:
            Whether anything was emitted.
        """
        collector, staging, output = self.collectors[task], self.staging, self.output
        next_tuple = instance.next_tuple
        pending, beside = self._in_flight_of(collector)
        emitted = False
        ends = time.monotonic() + BURST_SECONDS
        # _can_produce's bounds, read once per burst (a window may change them: the next
        # burst sees it): this loop runs once per tuple of a saturated spout
        bounds = [b for b in (self.max_pending, self.auto_pending) if b is not None]
        in_flight = min(bounds) - beside if bounds else None
        limit = self.limit
        for n in range(PRODUCE_BURST):
            if (self.must_restart or output.count + staging.count >= limit
                    or (in_flight is not None and len(pending) >= in_flight)):
                break
            before = staging.count
            try:
                next_tuple()
            except Exception as exc:  # noqa: BLE001 - a user error must not kill the executor
                self._call_raised(task, exc)
                break
            if staging.count == before and not collector.immediate_acks:
                break
            emitted = True
            if self.pausers or (n % BURST_CLOCK_EVERY == 0 and time.monotonic() >= ends):
                break
        return emitted

    def _move_staging(self) -> None:
        """Move what the tasks emitted into the window's buffer (under both locks).

        Untracked tuples (no ackers) are acked now, as Storm acks them at emit.
        """
        # no emit runs meanwhile (the callers hold calls): every tree so far is in output
        self.hand_overs.moved(time.monotonic())
        if self.staging.count or self.staging.inits or self.staging.arrow:
            self.output.absorb(self.staging.take())
        for collector in self.collectors.values():
            emitted, transferred = collector.take_counts()
            for stream, n in emitted.items():
                self.emitted[stream] = self.emitted.get(stream, 0) + n
                self.transferred[stream] = self.transferred.get(stream, 0) + transferred[stream]
        for task, collector in self.collectors.items():
            if collector.immediate_acks:
                acks, collector.immediate_acks = collector.immediate_acks, []
                if self.commit_acks is not None:
                    self.commit_acks.buffered(task, acks, time.monotonic())
                    continue
                for tup_id, stream, rows in acks:
                    self._call(task, self.instances[task].ack, tup_id)
                    self.acked[stream] = self.acked.get(stream, 0) + rows

    def _apply_deferred(self) -> None:
        """Apply the verdicts that came during a call (under both locks)."""
        controls, self.deferred = self.deferred, []
        for control, whole, heard_at in controls:
            self.heard_at = heard_at
            try:
                if whole:
                    self._apply_control(control)
                else:
                    self._apply_verdicts(control)
            finally:
                self.heard_at = None

    def _apply_control(self, control: SpoutControl) -> None:
        """A window's control: verdicts, expiry, activation (under both locks)."""
        if control.fail_all:
            self._fail_everything()
        self._apply_verdicts(control)
        if self.timeouts_enabled:
            self._expire()
        self._set_active(control.active)

    def _take_calls(self, wait: bool) -> bool:
        """Take :attr:`calls`, asking the producer to pause after its call.

        Waits as long as it takes when ``wait``, else up to :data:`VERDICT_WAIT_SECONDS`.

        Returns:
            Whether :attr:`calls` is now held (release it).
        """
        with self._pausing():
            return self.calls.acquire(timeout=-1 if wait else VERDICT_WAIT_SECONDS)

    def run_window(self, control: SpoutControl, checkpoint: int | None = None,
                   window: int | None = None) -> WindowOutput:
        """Apply the acker's verdicts, expire timed-out tuples, hand over the buffer.

        The part of checkpoint ``checkpoint`` is taken with the buffer (what was emitted
        after it is emitted again by a restored spout), so a checkpoint window waits for a
        ``next_tuple`` call in progress; so does a window that finds the spout inactive or
        deactivates it (a drain must see every tuple the spout emitted before it stopped,
        and the verdicts it applies in its statistics). Any other window leaves the verdicts
        to the producer when a call is in progress (see the module docstring).
        """
        calls = self._take_calls(wait=checkpoint is not None or not control.active
                                 or not self.active)
        try:
            with self.lock:
                if calls:
                    self._apply_deferred()
                    self._apply_control(control)
                    self._move_staging()  # what ack and fail emitted (a retry) goes too
                else:
                    self.deferred.append((control, True, time.monotonic()))
                self.filled_under = self.limit
                self.limit = min(self.max_limit, control.limit or self.buffer_bound)
                self.auto_pending = (None if control.pending is None
                                     else max(1, control.pending // max(1, len(self.instances))))
                taken = self.output.take()
                if self.commit_acks is not None:
                    self._hand_over(self.commit_acks, window)
                elif self.timeouts_enabled:  # every window: a reset is handed over too
                    self.hand_overs.taken(time.monotonic())
                if calls:
                    self.take_checkpoint(checkpoint)
                self.buffered = taken.count  # the buffer's fill when the window came
                self.wakeups += 1
                self.wakeup.notify_all()
        finally:
            if calls:
                self.calls.release()
        if self.sample_pct:
            log_sampled(self.component_logger, self.sample_pct, "emitted",
                        ((b[STREAM], b[VALUES]) for rows in taken.rows.values() for b in rows))
        return taken

    # -- checkpoint reliability (topology.reliability: checkpoint) ------------------------------
    def _hand_over(self, book: AcksAtCommit, window: int | None) -> None:
        """The buffer went to ``window``: its tuples wait for a checkpoint to commit.

        Their trees end with the window (no edges, no acker): the spout counts them acked
        now with the time they waited for it, and the driver adds the window's own time to
        those latencies once the window ends (``ComponentCounters.end_trees_after``).
        ``ack`` itself comes with the commit (:meth:`commit_state`). A batch spout's batch
        counts its rows, with one latency sample (its rows completed at once, as with
        acking). Under both locks.
        """
        waits = book.hand_over(book.next_window() if window is None else window,
                               time.monotonic())
        acked, complete_ms, add_latency = self.acked, self.complete_ms, self.latency.add_many
        for stream, waited_ms, tuples, rows in waits:
            add_latency(waited_ms, tuples)
            acked[stream] = acked.get(stream, 0) + rows
            complete_ms[stream] = complete_ms.get(stream, 0.0) + waited_ms * rows

    def handed_for_checkpoint(self) -> dict[int, list[Any]]:
        """In checkpoint mode, the ids of the tuples handed to windows not yet committed.

        A restore from this checkpoint (committed by then) acks them (:meth:`_restore`).
        """
        if self.commit_acks is None:
            return {}
        return self.commit_acks.handed_ids()

    def _restore(self, point: RestorePoint) -> None:
        """As the base class; in checkpoint mode the restored tuples are acked at once.

        They were handed to windows the restored checkpoint covers, and it is committed.
        (A part written before ``ExecutorPart.handed`` holds them as trees.)
        """
        super()._restore(point)
        if self.commit_acks is None:
            self.hand_overs.restored([at for collector in self.collectors.values()
                                      for _, at, _ in collector.pending_roots.values()])
            return
        for task, collector in self.collectors.items():
            restored, collector.pending_roots = collector.pending_roots, {}
            tup_ids = [tup_id for tup_id, _, _ in restored.values()]
            tup_ids += point.part.handed.get(task, [])
            if tup_ids:
                self._call_each(task, self.instances[task].ack, tup_ids)

    def commit_state(self, window: int) -> None:
        """Checkpoint ``window`` committed: hooks, then (checkpoint mode) ``ack`` of its tuples.

        Takes :attr:`calls` first: a spout's calls never overlap its ``next_tuple``.
        """
        calls = self._take_calls(wait=True)
        try:
            super().commit_state(window)
            if self.commit_acks is not None:
                with self.lock:
                    for task, tup_ids in self.commit_acks.committed(window):
                        self._call_each(task, self.instances[task].ack, tup_ids)
        finally:
            if calls:
                self.calls.release()
            self._notify()

    def rollback_state(self, target: int | None = None) -> None:
        """A rollback to ``target``: in checkpoint mode ``fail`` for the tuples it discards.

        Those handed to windows after ``target`` and those still buffered: this instance
        emitted them (a queue's spout gives them back); the restored one never saw them.
        """
        calls = self._take_calls(wait=True)
        try:
            if self.commit_acks is not None:
                with self.lock:
                    self._move_staging()
                    for task, tup_id in self.commit_acks.discarded(target):
                        self._call(task, self.instances[task].fail, tup_id)
            super().rollback_state(target)
        finally:
            if calls:
                self.calls.release()

    def apply_verdicts(self, control: SpoutControl) -> None:
        """Apply the acker's verdicts now, between windows (the driver's ``verdicts`` push).

        Only ``ack``, ``fail`` (with reasons), ``reset`` and ``ended`` count; the rest of
        ``control`` is the next window's. A verdict heard twice (the push and again a
        window's control, when the push's answer was lost) finds its root gone and is
        ignored, as a late one is.
        During a ``next_tuple`` call the producer applies them after it (an inactive spout
        makes no calls, so a drain's verdicts are applied at once).
        """
        calls = self._take_calls(wait=not self.active)
        try:
            with self.lock:
                if calls:
                    self._apply_verdicts(control)
                else:
                    self.deferred.append((control, False, time.monotonic()))
                self.wakeups += 1
                self.wakeup.notify_all()  # acked trees free room under the pending bounds
        finally:
            if calls:
                self.calls.release()

    def _apply_verdicts(self, control: SpoutControl) -> None:
        if control.ended is not None and self.commit_acks is not None:
            self.commit_acks.ended(control.ended)
        for root in control.reset:
            self._reset(root)
        self._ack_all(control.ack)
        reasons = control.fail_reasons
        for root in control.fail:
            self._finish(root, acked=False, why=reasons.get(root, UNKNOWN_FAILURE))

    def _now(self) -> float:
        """When the verdicts being applied came (see :attr:`heard_at`)."""
        return time.monotonic() if self.heard_at is None else self.heard_at

    def _owner(self, root: int) -> TaskCollector | None:
        for collector in self.collectors.values():
            if root in collector.pending_roots:
                return collector
        return None

    def _ack_all(self, roots: list[int]) -> None:
        """The acker's acks of a window: :meth:`_finish` of each root, in one loop.

        A saturated window acks tens of thousands of trees, and per root the general path's
        calls (owner lookup, ``_call``, one clock read each) cost more than the ack itself.
        All of them arrived together, so their complete latency ends now.
        """
        if len(self.collectors) != 1:
            for root in roots:
                self._finish(root, acked=True)
            return
        (collector,) = self.collectors.values()
        task, pop = collector.task, collector.pending_roots.pop
        ack, add_latency = self.instances[task].ack, self.latency.add
        acked, complete_ms = self.acked, self.complete_ms
        now = self._now()
        for root in roots:
            entry = pop(root, None)
            if entry is None:
                continue  # already timed out or failed: Storm ignores late verdicts too
            tup_id, emitted_at, stream = entry
            spent_ms = (now - emitted_at) * 1000.0
            add_latency(spent_ms)
            acked[stream] = acked.get(stream, 0) + 1
            complete_ms[stream] = complete_ms.get(stream, 0.0) + spent_ms
            try:
                ack(tup_id)
            except Exception as exc:  # noqa: BLE001 - as _call: the component's error
                self.record_error(task, exc)
                self.must_restart = True

    def _finish(self, root: int, *, acked: bool, why: Failure = UNKNOWN_FAILURE) -> None:
        collector = self._owner(root)
        if collector is None:
            return  # already timed out or failed: Storm ignores late verdicts too
        tup_id, emitted_at, stream = collector.pending_roots.pop(root)
        instance = self.instances[collector.task]
        if acked:
            complete_ms = (self._now() - emitted_at) * 1000.0
            self.latency.add(complete_ms)
            self.acked[stream] = self.acked.get(stream, 0) + 1
            self.complete_ms[stream] = self.complete_ms.get(stream, 0.0) + complete_ms
            self._call(collector.task, instance.ack, tup_id)
        else:
            self.failed[stream] = self.failed.get(stream, 0) + 1
            key = (why.cause, why.reason)
            self.fail_causes[key] = self.fail_causes.get(key, 0) + 1
            self._call(collector.task, instance.fail, tup_id)

    def _reset(self, root: int) -> None:
        collector = self._owner(root)
        if collector is not None:
            # to the end: pending_roots stays in order of time (see _expire)
            tup_id, _, stream = collector.pending_roots.pop(root)
            collector.pending_roots[root] = (tup_id, time.monotonic(), stream)

    def _expire(self) -> None:
        """Time out the trees handed to a window more than the message timeout ago.

        A tree's timeout runs from the first hand-over after its emit (or reset), not from
        the emit: a tuple still in the spout's buffer cannot have failed downstream, and
        one a stall held there past the timeout, failed and replayed, would be counted
        twice, its original taken by the next window with the replay (with checkpoints,
        their exactly-once state would count it twice): :attr:`hand_overs` says which emit
        times windows took a timeout ago.

        ``pending_roots`` is in order of emit (or reset) time: trees are added as they are
        emitted, a reset moves its tree to the end and a restore adds them oldest first.
        The timed-out ones are then its first entries, and the scan stops at the first tree
        still in time. Reading every pending tree each window cost 5 % of a saturated
        spout's CPU (``benchmarks/RESULTS.md``, 2026-11-27 12:59), and grows with
        the pending trees.
        """
        through = self.hand_overs.timed_out_through(time.monotonic() - self.timeout)
        for collector in self.collectors.values():
            expired = []
            for root, (_, emitted_at, _) in collector.pending_roots.items():
                if emitted_at > through:
                    break
                expired.append(root)
            self.timed_out += len(expired)
            for root in expired:
                self._finish(root, acked=False, why=TIMED_OUT)

    def _fail_everything(self) -> None:
        for collector in self.collectors.values():
            for root in list(collector.pending_roots):
                self._finish(root, acked=False, why=JOB_LOST)

    def encode_rows(self, output: WindowOutput) -> dict[int, bytes]:
        """As the base class; notes the bytes handed over (``buffered_bytes``)."""
        encoded = super().encode_rows(output)
        self.buffered_bytes = sum(map(len, encoded.values()))
        return encoded

    def take_emit_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """The emit counts the producer moved since the last window (under ``self.lock``)."""
        counts = self.emitted, self.transferred
        self.emitted, self.transferred = {}, {}
        return counts

    def take_stats(self) -> ComponentCounters:
        """Counters since the last window, for the driver's statistics."""
        counters = super().take_stats()
        counters.acked, counters.failed, counters.complete_ms = \
            self.acked, self.failed, self.complete_ms
        counters.timed_out, counters.fail_causes = self.timed_out, self.fail_causes
        (counters.complete_count, counters.complete_total_ms,
         counters.complete_values) = self.latency.take()
        # the bound it was filled under, so that "full" means the spout had to wait
        counters.buffered, counters.buffer_bound = self.buffered, self.filled_under
        counters.buffered_bytes, self.buffered_bytes = self.buffered_bytes, 0
        self.acked, self.failed, self.complete_ms = {}, {}, {}
        self.timed_out = 0
        self.fail_causes = {}
        return counters

    def close(self) -> None:
        """Stop producing and call ``close()`` on every task.

        Waits up to :data:`CLOSE_WAIT_SECONDS` for a ``next_tuple`` call in progress (one
        blocked for good must not keep the process from exiting).
        """
        self.stopped.set()
        self._notify()
        calls = self.calls.acquire(timeout=CLOSE_WAIT_SECONDS)
        try:
            super().close()
        finally:
            if calls:
                self.calls.release()


__all__ = ["SpoutExecutor"]
