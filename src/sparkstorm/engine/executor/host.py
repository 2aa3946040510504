"""An executor: the task instances of one component executor, driven one window at a time.

Lives in its own long-lived process (see ``engine.executor.main``). Bolt executors process the
window's input when the Spark task hands it over. Spout executors
(``engine.executor.spout``) run ``next_tuple`` in a background thread between windows into a
bounded buffer; the window request applies the acker's acks and fails, expires timed-out
tuples and drains the buffer.

Every call into a bolt's task instance happens under ``self.lock``, so ``process`` and the
rest of one instance never run concurrently, as in Storm (a spout has a lock of its own for
its calls, so that a window need not wait for ``next_tuple``: ``engine.executor.spout``).
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sparkstorm.checkpoint import CheckpointError, restore_task, task_snapshot
from sparkstorm.config import conf_bool
from sparkstorm.engine.columnar.arrow_batch import encode_blob
from sparkstorm.engine.columnar.arrow_rows import RowsToArrow
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, PartBuilder, RestorePoint
from sparkstorm.engine.executor.collector import TaskCollector, WindowOutput, mark_failed
from sparkstorm.engine.executor.input_loop import run_batch
from sparkstorm.engine.executor.log_levels import log_sampled
from sparkstorm.engine.executor.routing import build_routes
from sparkstorm.engine.plan.execution import ExecutionPlan, ExecutorInfo, acker_task_count
from sparkstorm.engine.wire.anchor_columns import batch_roots
from sparkstorm.engine.wire.batch_columns import STREAM, VALUES
from sparkstorm.engine.wire.failures import (
    FAIL_ERROR,
)
from sparkstorm.engine.wire.frames import unpack
from sparkstorm.engine.wire.messages import ComponentError, WindowMeta
from sparkstorm.engine.wire.row_encoding import encode_rows
from sparkstorm.engine.wire.row_wire import nested
from sparkstorm.engine.wire.stats import ComponentCounters
from sparkstorm.topology.component import Component
from sparkstorm.topology.spec import load_class
from sparkstorm.topology.task import BoltLoop, BoltRaised, start_task
from sparkstorm.topology.tuple import SYSTEM_COMPONENT, is_tick, values_class

logger = logging.getLogger(__name__)


class ComponentFailure(Exception):
    """A component raised; the executor process must restart after answering the window."""


class TaskStartFailed(Exception):
    """A task's component raised while it started (``__init__`` or ``initialize``).

    Carries which component and task, so the report names them (the cause is chained).
    """

    def __init__(self, component: str, task: int, cause: BaseException) -> None:
        super().__init__(f"component {component!r} task {task} failed to start: "
                         f"{type(cause).__name__}: {cause}")
        self.component, self.task, self.cause = component, task, cause


class ExecutorHost:
    """Hosts the tasks of one executor (see the module docstring)."""

    def __init__(self, plan: ExecutionPlan, gid: int, topology_name: str,
                 restore: RestorePoint | None = None) -> None:
        self.plan = plan
        self.info: ExecutorInfo = plan.executors[gid]
        self.topology_name = topology_name
        self.spec = plan.components[self.info.component]
        self.conf = {**plan.conf, **self.spec.config}
        self.lock = threading.RLock()
        self.output = WindowOutput()
        self.errors: list[ComponentError] = []
        self.must_restart = False
        self.sample_pct = 100.0 if conf_bool(self.conf, "topology.debug") else 0.0
        """Debug sampling: this percentage of the tuples goes to the component's log."""
        self.component_logger = logging.getLogger(f"sparkstorm.component.{self.info.component}")
        cls = load_class(self.spec.component, component=self.info.component)
        self.instances: dict[int, Any] = {}
        self.collectors: dict[int, TaskCollector] = {}
        tracking = acker_task_count(plan.conf) > 0
        for task in self.info.tasks:
            self._start_task(cls, task, tracking)
        self.rows_to_arrow = RowsToArrow.for_executor(plan, self.info.component, self.conf)
        """Turns the rows for batch bolts into Arrow pieces (None: none, or off)."""
        self.taken_part: PartBuilder | None = None
        """The part taken at the cut of this window's checkpoint, for the part writer."""
        if restore is not None:
            self._restore(restore)

    def _start_task(self, cls: type[Component], task: int, tracking: bool) -> None:
        routes = build_routes(self.plan, self.info.component, task, self.info.index)
        collector = TaskCollector(
            task, self.info.component, routes,
            self.plan.task_executor, self.emit_target(), tracking,
            bool(getattr(cls, "auto_anchor", True)),
        )
        collector.error_sink = self._keep_error
        # shell components read their command from component_spec
        try:
            self.instances[task] = start_task(
                cls, collector, name=self.info.component, conf=self.conf,
                context=self.plan.context_for(task), attributes={"component_spec": self.spec})
        except Exception as exc:
            raise TaskStartFailed(self.info.component, task, exc) from exc
        self.collectors[task] = collector

    def emit_target(self) -> WindowOutput:
        """The output the tasks' collectors emit into (a spout's differs: its staging)."""
        return self.output

    def buffers(self) -> list[WindowOutput]:
        """Every output holding tuples for the next window (a replan refiles them)."""
        return [self.output]

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Hold off every task call and window while the body runs (a replan)."""
        with self.lock:
            yield

    # -- checkpoints (see engine.executor.checkpoint_part) ------------------------------------
    def _stateful(self, instance: Any) -> Any:
        """The :class:`~sparkstorm.state.lifecycle.StatefulTask` of a StatefulBolt task, or None.

        The task's state is started now if no tuple started it yet; other components get None.
        """
        if not getattr(type(instance), "stateful", False):
            return None
        task = instance.__dict__.get("_stateful_task")
        return task if task is not None else instance.start_state()

    @staticmethod
    def _checkpoint_hook(instance: Any, name: str) -> Callable[..., None] | None:
        """A component's own checkpoint hook (``pre_prepare``, ``pre_commit``, ``pre_rollback``).

        Storm's ``IStatefulComponent`` hooks, heard by any component that defines them (a
        connector commits a source's offsets or publishes a sink's files on ``pre_commit``);
        a StatefulBolt hears them through its state's lifecycle instead.
        """
        if getattr(type(instance), "stateful", False):
            return None
        hook = getattr(instance, name, None)
        return hook if callable(hook) else None

    def take_part(self, window: int) -> PartBuilder:
        """This executor's part of checkpoint ``window``, taken now.

        Call under ``self.lock``, at the window's cut. Instance states are pickled here;
        stateful bolts' states are copied here and pickled by the returned builder.

        Raises:
            CheckpointError: ``CHECKPOINT_UNPICKLABLE`` naming component, task, attribute.
        """
        component = self.info.component
        blobs: dict[int, bytes] = {}
        states: dict[int, Any] = {}
        for task, instance in self.instances.items():
            stateful = self._stateful(instance)
            if stateful is not None:
                states[task] = stateful.prepare(window)
                continue
            prepare = self._checkpoint_hook(instance, "pre_prepare")
            if prepare is not None:
                try:
                    prepare(window)
                except Exception as exc:  # noqa: BLE001 - a user hook: its error, then rollback
                    self.record_error(task, exc)
                    self.must_restart = True
            blobs[task] = task_snapshot(instance, component=component, task=task)
        pending = self.pending_for_checkpoint(time.monotonic())
        handed = self.handed_for_checkpoint()

        def build() -> ExecutorPart:
            for task, state in states.items():
                blobs[task] = task_snapshot(None, component=component, task=task,
                                            state_snapshot=state, stateful=True)
            return ExecutorPart(blobs, pending, handed)
        return build

    def take_checkpoint(self, window: int | None) -> None:
        """At a checkpoint window's cut: keep the part in :attr:`taken_part`.

        An error is the component's, reported with this window.
        """
        if window is None or self.must_restart:
            return
        try:
            self.taken_part = self.take_part(window)
        except CheckpointError as exc:
            logger.error("topology %s: %s", self.topology_name, exc)
            self._keep_error(None, f"{exc.code}: {exc}")

    def pending_for_checkpoint(self, now: float) -> dict[int, dict[int, tuple[Any, float, str]]]:
        """Per task, the spout trees in flight at the cut: root -> (message id, age, stream)."""
        return {task: {root: (msg, now - at, stream)
                       for root, (msg, at, stream) in collector.pending_roots.items()}
                for task, collector in self.collectors.items() if collector.pending_roots}

    def handed_for_checkpoint(self) -> dict[int, list[Any]]:
        """Under checkpoint reliability, a spout's ids not acked yet (``ExecutorPart.handed``)."""
        return {}

    def commit_state(self, window: int) -> None:
        """Checkpoint ``window`` is committed: stateful bolts commit their state.

        Other components that define ``pre_commit(txid)`` hear it.
        """
        with self.lock:
            for task, instance in self.instances.items():
                stateful = self._stateful(instance)
                commit = (stateful.commit if stateful is not None
                          else self._checkpoint_hook(instance, "pre_commit"))
                if commit is None:
                    continue
                try:
                    commit(window)
                except Exception as exc:  # noqa: BLE001 - a user hook: its error, then rollback
                    self.record_error(task, exc)
                    self.must_restart = True

    def rollback_state(self, target: int | None = None) -> None:
        """The topology rolls back to checkpoint ``target``: stateful bolts hear ``pre_rollback``.

        Their state drops what was not committed (before this executor is rebuilt from the
        checkpoint; ``target`` None: the topology's start).
        """
        with self.lock:
            for task, instance in self.instances.items():
                stateful = instance.__dict__.get("_stateful_task")
                rollback = (stateful.rollback if stateful is not None
                            else self._checkpoint_hook(instance, "pre_rollback"))
                if rollback is None:
                    continue
                try:
                    rollback()
                except Exception as exc:  # noqa: BLE001 - rebuilt from the checkpoint anyway
                    self.record_error(task, exc)

    def _restore(self, point: RestorePoint) -> None:
        """Put the tasks and the spout trees of ``point`` back (after ``initialize``)."""
        component = self.info.component
        now = time.monotonic()
        for task, instance in self.instances.items():
            blob = point.part.tasks.get(task)
            if blob is None:
                continue
            state = restore_task(instance, blob, component=component, task=task)
            if getattr(type(instance), "stateful", False):
                instance.start_state(state, committed_txid=point.window)
        for task, trees in point.part.pending.items():
            collector = self.collectors.get(task)
            if collector is not None:
                # oldest first, as the spout keeps them (SpoutExecutor._expire)
                oldest_first = sorted(trees.items(), key=lambda tree: -tree[1][1])
                collector.pending_roots = {root: (msg, now - age, stream)
                                           for root, (msg, age, stream) in oldest_first}

    def record_error(self, task: int, exc: BaseException) -> None:
        """Log and keep an error of a task, with its traceback, for the driver to report."""
        text = "".join(traceback.format_exception(exc))
        logger.error("topology %s component %s task %d raised:\n%s", self.topology_name,
                     self.info.component, task, text)
        self._keep_error(task, text)

    def _keep_error(self, task: int | None, text: str) -> None:
        self.errors.append(ComponentError.now(self.info.component, task, text))

    def take_stats(self) -> ComponentCounters:
        """Counters since the last window (emitted and transferred here, the rest by kind).

        Called under ``self.lock``: a spout's producer thread keeps emitting meanwhile.
        """
        counters = ComponentCounters()
        counters.emitted, counters.transferred = self.take_emit_counts()
        for task, instance in self.instances.items():
            # a dict the component replaces whole (read here while a spout's next_tuple runs)
            metrics = instance.__dict__.get("component_metrics")
            if metrics:
                counters.metrics[str(task)] = metrics
        return counters

    def take_emit_counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """Tuples emitted and transferred per stream since the last call, all tasks."""
        emitted: dict[str, int] = {}
        transferred: dict[str, int] = {}
        for collector in self.collectors.values():
            task_emitted, task_transferred = collector.take_counts()
            for stream, n in task_emitted.items():
                emitted[stream] = emitted.get(stream, 0) + n
                transferred[stream] = transferred.get(stream, 0) + task_transferred[stream]
        return emitted, transferred

    def encode_rows(self, output: WindowOutput) -> dict[int, bytes]:
        """``output``'s batches per target executor, serialized.

        A tuple the wire cannot carry is refused there (see ``engine.wire.row_encoding``).
        """
        component = self.info.component
        if self.rows_to_arrow is not None:
            self.rows_to_arrow.move(output)
        encoded = encode_rows(output, component,
                              lambda stream: self.plan.fields_of(component, stream),
                              self._keep_error)
        for gid, pieces in output.arrow.items():  # batch bolts' input: Arrow pieces
            encoded[gid] = encode_blob(encoded.get(gid), pieces)
        return encoded

    def window_meta(self, output: WindowOutput) -> WindowMeta:
        """What the driver learns of this window besides the tuples in ``output``."""
        with self.lock:
            stats = self.take_stats()
            errors, self.errors = self.errors, []
        return WindowMeta(self.info.gid, self.info.component, output.xor, output.inits,
                          output.failed, list(output.resets), stats, errors)

    def close(self) -> None:
        """Call ``close()`` on every task that has one (shell components stop their child)."""
        with self.lock:
            for task, instance in self.instances.items():
                close = getattr(instance, "close", None)
                if callable(close):
                    try:
                        close()
                    except Exception as exc:  # noqa: BLE001 - shutting down anyway
                        self.record_error(task, exc)


class BoltExecutor(ExecutorHost):
    """Executor of a bolt: processes each window's input rows in order."""

    def __init__(self, plan: ExecutionPlan, gid: int, topology_name: str,
                 restore: RestorePoint | None = None) -> None:
        super().__init__(plan, gid, topology_name, restore)
        self.next_tuple_id = 0
        self.loops = {task: BoltLoop(instance, self.collectors[task])
                      for task, instance in self.instances.items()}
        self.values_classes = {(c, s.name): values_class(s.fields)
                               for c, spec in plan.components.items() for s in spec.outputs}
        self.stats = BoltWindowStats()

    def run_window(self, blobs: list[bytes], checkpoint: int | None = None) -> WindowOutput:
        """Process every input batch of this window (``blobs`` as packed by the senders).

        Take the part of checkpoint ``checkpoint`` once they are processed.
        """
        with self.lock:
            started = time.perf_counter()
            batches = self._decode(blobs)
            if self.sample_pct:
                log_sampled(self.component_logger, self.sample_pct, "received",
                            ((batch[STREAM], nested(batch)[VALUES]) for batch in batches
                             if type(batch) is list))
            try:
                self._process_batches(batches)
                self._end_window()
                self.take_checkpoint(checkpoint)
            finally:
                # a window that raised was busy too: its executed tuples count (an idle
                # window is not execute time: it would skew the average)
                if batches:
                    self.stats.busy_seconds += time.perf_counter() - started
            return self.output.take()

    def _decode(self, blobs: list[bytes]) -> list[Any]:
        """The window's input batches from the senders' blobs (msgpack rows).

        A one-field stream's batches stay in their wire form (``engine.wire.row_wire``): the
        input loop makes the tuples' values from the flat column.
        """
        return [batch for blob in blobs for batch in unpack(blob)]

    def _process_batches(self, batches: list[list[Any]]) -> None:
        """Run the window's input batches in order; a failure fails the ones after it."""
        for position, batch in enumerate(batches):
            try:
                self._process_batch(*batch)
            except ComponentFailure as failure:
                self._fail_rest(batches[position + 1:], str(failure))
                raise

    def _end_window(self) -> None:
        """Give instances with an ``end_window()`` hook (shell bolts) a chance to finish.

        They finish the window's work there, e.g. wait until their subprocess answered every
        tuple sent.
        """
        for task, instance in self.instances.items():
            hook = getattr(instance, "end_window", None)
            if hook is None:
                continue
            try:
                hook()
            except Exception as exc:
                self.record_error(task, exc)
                self.must_restart = True
                raise ComponentFailure(str(exc)) from exc

    def _process_batch(self, task: int, src: int, stream: str, values_list: list[Any],
                       roots: list[Any], edges: list[Any], flat: int = 0) -> None:
        """Run ``task``'s :class:`BoltLoop` over one batch, counting what it did.

        ``flat``: ``values_list`` holds each tuple's one value (``engine.wire.row_wire``).

        This is the engine's hottest path: everything constant for the batch is looked up
        once, and ``engine.executor.input_loop.run_batch`` makes the tuples as its loop takes them.
        """
        component = self.plan.task_component.get(src, SYSTEM_COMPONENT)
        key = (component, stream)
        first_id = self.next_tuple_id + 1
        self.next_tuple_id += len(values_list)
        done = auto_acked = 0
        started = time.perf_counter()
        try:
            auto_acked = run_batch(self.loops[task], first_id, (component, stream, src),
                                   values_list, self.values_classes.get(key), roots, edges,
                                   is_tick(component, stream), bool(flat))
            done = len(values_list)
        except BoltRaised as raised:
            # the raising tuple was executed too (Storm's UI counts it; it also fails)
            done, auto_acked = raised.processed + 1, raised.auto_acked
            self.record_error(task, raised.cause)
            reason = f"{type(raised.cause).__name__}: {raised.cause}"
            self.must_restart = True
            self._fail_rest([[task, src, stream, values_list[done:], roots[done:],
                              edges[done:]]], reason)
            raise ComponentFailure(reason) from raised.cause
        finally:
            stats = self.stats
            stats.count(stats.executed, key, done)
            # explicit acks (and acks of kept tuples, later) are counted by the collector
            stats.count(stats.acked, key, auto_acked)
            if done:
                spent_ms = (time.perf_counter() - started) * 1000.0
                stats.add_ms(stats.execute_ms, key, spent_ms)
                # an auto-acked tuple's process latency is its own execute time
                stats.add_ms(stats.process_ms, key, spent_ms * auto_acked / done)

    def _fail_rest(self, batches: list[list[Any]], reason: str) -> None:
        """Fail the window's tuples after the one that raised, so their trees replay now.

        Otherwise they would time out. They fail because of that error: same cause and
        reason as the tuple that raised (not a crash).
        """
        why = f"{self.info.component}: {reason}"
        for batch in batches:
            mark_failed(self.output, batch_roots(batch), FAIL_ERROR, why)

    def take_stats(self) -> ComponentCounters:
        """Counters since the last window, explicit fails through the collectors included."""
        counters = super().take_stats()
        for collector in self.collectors.values():
            for key, n in collector.failed_count.items():
                self.stats.count(self.stats.failed, key, n)
            for key, n in collector.acked_count.items():
                self.stats.count(self.stats.acked, key, n)
            for key, ms in collector.acked_ms.items():
                self.stats.add_ms(self.stats.process_ms, key, ms)
            collector.failed_count, collector.acked_count, collector.acked_ms = {}, {}, {}
        self.stats.take_into(counters)
        return counters


class BoltWindowStats:
    """Per-window counters of a bolt executor, keyed by (source component, stream)."""

    def __init__(self) -> None:
        self.executed: dict[tuple[str, str], int] = {}
        self.acked: dict[tuple[str, str], int] = {}
        self.failed: dict[tuple[str, str], int] = {}
        self.execute_ms: dict[tuple[str, str], float] = {}
        """Time spent in ``process`` per input stream (Storm's execute latency, summed)."""
        self.process_ms: dict[tuple[str, str], float] = {}
        """From receipt to ack, summed over the acked tuples (Storm's process latency)."""
        self.busy_seconds = 0.0

    @staticmethod
    def count(counts: dict[tuple[str, str], int], key: tuple[str, str], n: int) -> None:
        """Add ``n`` to ``counts[key]``."""
        if n:
            counts[key] = counts.get(key, 0) + n

    @staticmethod
    def add_ms(sums: dict[tuple[str, str], float], key: tuple[str, str], ms: float) -> None:
        """Add ``ms`` to ``sums[key]``."""
        sums[key] = sums.get(key, 0.0) + ms

    def take_into(self, counters: ComponentCounters) -> None:
        """Move these counters into ``counters`` (keyed ``"component:stream"``) and reset."""
        counters.executed = _keyed(self.executed)
        counters.acked = _keyed(self.acked)
        counters.failed = _keyed(self.failed)
        counters.busy_ms = self.busy_seconds * 1000.0
        counters.execute_ms = _keyed(self.execute_ms)
        counters.process_ms = _keyed(self.process_ms)
        self.__init__()  # type: ignore[misc]


def _keyed(counts: dict[tuple[str, str], Any]) -> dict[str, Any]:
    return {f"{c}:{s}": n for (c, s), n in counts.items()}


__all__ = ["BoltExecutor", "ComponentFailure", "ExecutorHost", "TaskStartFailed"]
