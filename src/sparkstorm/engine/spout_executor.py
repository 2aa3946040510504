"""The executor of a spout: produces between windows, applies acks and fails per window.

``next_tuple`` runs in a background thread between windows into a buffer bounded by the
window sizer's limit (``SpoutControl.limit``) and the in-flight bounds; each window request
applies the acker's verdicts, expires timed-out trees and hands the buffer over. Every call
into a task instance happens under the executor's lock, as in ``engine.executor``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from sparkstorm.config import conf_bool, conf_float, conf_int, conf_optional_int
from sparkstorm.engine.collector import TaskCollector, WindowOutput
from sparkstorm.engine.executor import ExecutorHost
from sparkstorm.engine.executor_checkpoint import RestorePoint
from sparkstorm.engine.failures import FAIL_CRASH, FAIL_EXPLICIT, FAIL_TIMEOUT, Failure
from sparkstorm.engine.log_control import log_sampled
from sparkstorm.engine.messages import SpoutControl
from sparkstorm.engine.plan import ExecutionPlan
from sparkstorm.engine.stats import ComponentCounters, LatencySample

TIMED_OUT = Failure(FAIL_TIMEOUT, "message timed out (topology.message.timeout.secs)")
JOB_LOST = Failure(FAIL_CRASH, "a window's job failed; its open trees were failed")
UNKNOWN_FAILURE = Failure(FAIL_EXPLICIT, "failed (reason not reported)")

IDLE_ROUNDS_BEFORE_SLOWER_POLL = 100
"""Rounds without an emit after which an idle spout polls every 10 ms instead of every 1 ms."""
BLOCKED_WAIT_SECONDS = 0.05
"""How long a spout at its buffer or pending bound sleeps unless a window wakes it."""

PRODUCE_BURST = 64
"""``next_tuple`` calls per task in one hold of the executor's lock. Taking the lock per call
was a seventh of a saturated spout executor's samples (py-spy, batch word count); 64 calls
hold it for about 0.1-0.2 ms, which a window request waits at most."""


class SpoutExecutor(ExecutorHost):
    """Executor of a spout: produces between windows, applies acks and fails per window."""

    def __init__(self, plan: ExecutionPlan, gid: int, topology_name: str,
                 restore: RestorePoint | None = None) -> None:
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

    def set_active(self, active: bool) -> None:
        """Activate or deactivate the spout tasks (calls their activate/deactivate once)."""
        with self.lock:
            if active == self.active:
                return
            self.active = active
            for task, instance in self.instances.items():
                self._call(task, instance.activate if active else instance.deactivate)
            self.wakeup.notify_all()

    def _call(self, task: int, method: Any, *args: Any) -> None:
        try:
            method(*args)
        except Exception as exc:  # noqa: BLE001 - a user error must not kill the executor
            self.record_error(task, exc)
            self.must_restart = True

    def _can_produce(self, collector: TaskCollector) -> bool:
        if self.max_pending is not None and len(collector.pending_roots) >= self.max_pending:
            return False
        if self.auto_pending is not None and len(collector.pending_roots) >= self.auto_pending:
            return False
        return self.output.count < self.limit

    def _produce_loop(self) -> None:
        idle = 0
        while not self.stopped.is_set():
            emitted = called = False
            with self.lock:
                if not self.active or self.must_restart:
                    self.wakeup.wait(0.05)
                    continue
                for task, instance in self.instances.items():
                    if self._can_produce(self.collectors[task]):
                        called = True
                        emitted = self._produce_burst(task, instance) or emitted
                if not called:
                    # every task at a bound (buffer, pending): only a window lifts it, and
                    # run_window notifies; polling every 1 ms meanwhile cost CPU for nothing
                    self.wakeup.wait(BLOCKED_WAIT_SECONDS)
                elif not emitted:
                    self.wakeup.wait(0.001 if idle < IDLE_ROUNDS_BEFORE_SLOWER_POLL else 0.01)
            idle = 0 if emitted else idle + 1

    def _produce_burst(self, task: int, instance: Any) -> bool:
        """Call ``next_tuple`` of ``task`` up to :data:`PRODUCE_BURST` times (under the lock).

        Stops at the first call that emits nothing or when the task may produce no more.

        Returns:
            Whether anything was emitted.
        """
        collector, output = self.collectors[task], self.output
        emitted = False
        for _ in range(PRODUCE_BURST):
            if self.must_restart or not self._can_produce(collector):
                break
            before = output.count
            self._call(task, instance.next_tuple)
            self._flush_immediate_acks(task, collector)
            if output.count == before:
                break
            emitted = True
        return emitted

    def _flush_immediate_acks(self, task: int, collector: TaskCollector) -> None:
        if collector.immediate_acks:
            acks, collector.immediate_acks = collector.immediate_acks, []
            for tup_id, stream in acks:
                self._call(task, self.instances[task].ack, tup_id)
                self.acked[stream] = self.acked.get(stream, 0) + 1

    def run_window(self, control: SpoutControl, checkpoint: int | None = None
                   ) -> WindowOutput:
        """Apply the acker's verdicts, expire timed-out tuples, hand over the buffer.

        The part of checkpoint ``checkpoint`` is taken with the buffer (what was emitted
        after it is emitted again by a restored spout).
        """
        with self.lock:
            if control.fail_all:
                self._fail_everything()
            self._apply_verdicts(control)
            if self.timeouts_enabled:
                self._expire()
            self.set_active(control.active)
            self.filled_under = self.limit
            self.limit = min(self.max_limit, control.limit or self.buffer_bound)
            self.auto_pending = (None if control.pending is None
                                 else max(1, control.pending // max(1, len(self.instances))))
            taken = self.output.take()
            self.take_checkpoint(checkpoint)
            self.buffered = taken.count  # the buffer's fill when the window came (vs its bound)
            self.wakeup.notify_all()
            if self.sample_pct:
                log_sampled(self.component_logger, self.sample_pct, "emitted",
                            ((b[2], b[3]) for rows in taken.rows.values() for b in rows))
            return taken

    def apply_verdicts(self, control: SpoutControl) -> None:
        """Apply the acker's verdicts now, between windows (the driver's ``verdicts`` push).

        Only ``ack``, ``fail`` (with reasons) and ``reset`` count; the rest of ``control`` is
        the next window's. A verdict heard twice (the push and again a window's control, when
        the push's answer was lost) finds its root gone and is ignored, as a late one is.
        """
        with self.lock:
            self._apply_verdicts(control)
            self.wakeup.notify_all()  # acked trees free room under the pending bounds

    def _apply_verdicts(self, control: SpoutControl) -> None:
        for root in control.reset:
            self._reset(root)
        self._ack_all(control.ack)
        reasons = control.fail_reasons
        for root in control.fail:
            self._finish(root, acked=False, why=reasons.get(root, UNKNOWN_FAILURE))

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
        now = time.monotonic()
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
            complete_ms = (time.monotonic() - emitted_at) * 1000.0
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
        """Time out the trees emitted (or reset) more than the message timeout ago.

        ``pending_roots`` is in order of that time: trees are added as they are emitted, a
        reset moves its tree to the end and a restore adds them oldest first. The timed-out
        ones are then its first entries, and the scan stops at the first tree still in
        time. Reading every pending tree each window cost 5 % of a saturated spout's CPU
        (``benchmarks/RESULTS.md``, 2026-11-27 12:59), and grows with the pending trees.
        """
        deadline = time.monotonic() - self.timeout
        for collector in self.collectors.values():
            expired = []
            for root, (_, emitted_at, _) in collector.pending_roots.items():
                if emitted_at >= deadline:
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
        """Stop producing and call ``close()`` on every task."""
        self.stopped.set()
        with self.lock:
            self.wakeup.notify_all()
        super().close()


__all__ = ["SpoutExecutor"]
