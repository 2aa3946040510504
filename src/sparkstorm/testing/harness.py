"""Drive one bolt or spout in this process with given tuples, no Spark: unit tests of components.

A harness hosts one task the way an executor does, with the engine's own pieces: the task
is made by :func:`~sparkstorm.topology.task.start_task`, a bolt's input runs through
:class:`~sparkstorm.topology.task.BoltLoop` (``auto_anchor``, ``auto_ack``, ``auto_fail``,
``process_tick`` for ticks), and the component emits, acks and fails through the engine's
``TaskCollector`` (routing, field checks, direct streams, anchoring). The harness only
records each call before the engine's code handles it.

Example:
    >>> from sparkstorm import Bolt
    >>> from sparkstorm.testing import BoltHarness
    >>> class Split(Bolt):
    ...     outputs = ["word"]
    ...     def process(self, tup):
    ...         if not tup.values.sentence:
    ...             self.fail(tup, "empty sentence")
    ...             return
    ...         for word in tup.values.sentence.split():
    ...             self.emit([word])
    ...         self.logger.info("split %d words", len(tup.values.sentence.split()))
    >>> harness = BoltHarness(Split, inputs={"sentences": ["sentence"]})
    >>> result = harness.process(["the cow"])
    >>> [(e.stream, e.values) for e in result.emits]
    [('default', ['the']), ('default', ['cow'])]
    >>> result.emits[0].anchors == (result.input,), result.acked == [result.input]
    (True, True)
    >>> result.logs
    ['INFO split 2 words']
    >>> [(f.reason, f.cause) for f in harness.process([""]).failed]
    [('empty sentence', 'explicit')]

Supported:
    * bolts: ``process`` with any source component, stream and fields; ``tick()``;
      emits on declared streams (unanchored, explicit anchors, direct, ``need_task_ids``),
      ``ack``, ``fail`` with a reason, ``reset_timeout``, ``self.logger``; a raising
      ``process`` is re-raised after ``auto_fail`` recorded its failure.
    * spouts: ``next_tuple``, ``ack``, ``fail``, ``activate``, ``deactivate``, ``close``,
      with the message ids in flight in :attr:`SpoutHarness.pending`.
    * any ``Spout``/``Bolt`` subclass, shell components (``ShellBolt``) included.

Not supported:
    * more than one task, several components wired together, acker timeouts, replay,
      ``topology.max.spout.pending`` or windows: run those on :class:`LocalCluster`.
    * emits are routed to stand-in consumers (``target_tasks`` tasks subscribing to every
      output stream, directly for direct streams), not to real bolts.

Use cases:
    * unit tests of a component's logic: what it emits, anchors, acks and fails per input.
    * checking ``auto_ack``/``auto_fail``/``auto_anchor`` settings and tick handling.
    * reproducing a failing tuple from a log without starting Spark.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sparkstorm.config import load_config
from sparkstorm.engine import ExecutionPlan, TaskCollector, WindowOutput, build_routes
from sparkstorm.errors import TopologyError
from sparkstorm.topology.component import Component
from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.spec import ComponentSpec, InputSpec, TopologySpec, load_class
from sparkstorm.topology.stream import DEFAULT_STREAM, normalize_outputs
from sparkstorm.topology.task import BoltLoop, BoltRaised, start_task
from sparkstorm.topology.tuple import SYSTEM_COMPONENT, TICK_STREAM, Tuple, is_tick

TARGET = "__harness_target"
"""The stand-in consumer of every output stream."""


@dataclass(frozen=True)
class Emit:
    """One emitted tuple.

    ``anchors`` are the input tuples it is anchored to (bolts), ``tup_id`` its message id (spouts),
    ``tasks`` the stand-in consumer tasks it went to.
    """

    stream: str
    values: list[Any]
    anchors: tuple[Tuple, ...] = ()
    tup_id: Any = None
    direct_task: int | None = None
    tasks: tuple[int, ...] = ()


@dataclass(frozen=True)
class Fail:
    """A failed input tuple, with the reason and the cause of its failure.

    The reason is the one the component gave (None if it gave none); the cause is ``explicit``
    (``fail()``) or ``error`` (``process`` raised).
    """

    tuple: Tuple
    reason: str | None
    cause: str


@dataclass
class Result:
    """What one call into the component did, in call order per kind.

    Attributes:
        input: the tuple the call delivered (None for spout calls).
        emits: tuples emitted.
        acked: tuples acked (by the component or by ``auto_ack``).
        failed: tuples failed.
        reset: tuples whose timeout the component reset.
        logs: ``"LEVEL message"`` lines logged through the component's ``logger``.
        errors: errors the component reported and survived (``report_error``).
    """

    input: Tuple | None = None
    emits: list[Emit] = field(default_factory=list)
    acked: list[Tuple] = field(default_factory=list)
    failed: list[Fail] = field(default_factory=list)
    reset: list[Tuple] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class _RecordingCollector(TaskCollector):
    """The engine's collector, recording each call before handling it the engine's way."""

    result: Result

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: int | None,
             need_task_ids: bool, tup_id: Any) -> list[int] | None:
        """Record, then :meth:`TaskCollector.emit` (the engine's checks and routing)."""
        roots = tuple(self._anchor_tuples(anchors) or ()) if tup_id is None else ()
        tasks = super().emit(values, stream, anchors, direct_task, True, tup_id) or []
        self.result.emits.append(Emit(stream or DEFAULT_STREAM, list(values), roots, tup_id,
                                      direct_task, tuple(tasks)))
        return tasks if need_task_ids else None

    def bolt_emit(self, values: Any, stream: str | None = None, anchors: Any = None,
                  direct_task: int | None = None, need_task_ids: bool = False
                  ) -> list[int] | None:
        """The engine's fast path behaves as :meth:`emit`; the harness records there."""
        return self.emit(values, stream, anchors, direct_task, need_task_ids, None)

    def spout_emit(self, values: Any, tup_id: Any = None, stream: str | None = None,
                   direct_task: int | None = None, need_task_ids: bool = False
                   ) -> list[int] | None:
        """The engine's spout fast path behaves as :meth:`emit`; the harness records there."""
        return self.emit(values, stream, None, direct_task, need_task_ids, tup_id)

    def ack(self, tup: Tuple) -> None:
        """Record, then ack."""
        if not tup.done:
            self.result.acked.append(tup)
        super().ack(tup)

    def auto_ack(self, tup: Tuple) -> None:
        """Record, then the loop's ack."""
        self.result.acked.append(tup)
        super().auto_ack(tup)

    def fail(self, tup: Tuple, reason: str | None = None, cause: str = "explicit") -> None:
        """Record, then fail."""
        if not tup.done:
            self.result.failed.append(Fail(tup, reason, cause))
        super().fail(tup, reason, cause)

    def reset_timeout(self, tup: Tuple) -> None:
        """Record, then reset."""
        self.result.reset.append(tup)
        super().reset_timeout(tup)

    def report_error(self, text: str) -> None:
        """Record the error."""
        self.result.errors.append(text)


class _LogRecorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


class _Harness:
    """What both harnesses share: a one-task plan, the collector and log capture."""

    def __init__(self, component: type[Component] | ComponentSpec, kind: str, *, name: str,
                 conf: Mapping[str, Any] | None, outputs: Sequence[Any] | None,
                 inputs: tuple[InputSpec, ...], sources: list[ComponentSpec],
                 target_tasks: int) -> None:
        if isinstance(component, ComponentSpec):
            cls: type[Component] = load_class(component.component, component=name)
        else:  # kept as given: in one process, a class defined in a test function works
            cls, component = component, ComponentSpec.declare(
                component, kind, name=name, inputs=None, par=1, num_tasks=1, config=None,
                outputs=getattr(component, "outputs", []))
        _check_kind(cls, kind)
        component = replace(component, name=name, inputs=inputs, raw_inputs=None, par=1,
                            num_tasks=1, outputs=component.outputs if outputs is None
                            else normalize_outputs(outputs))
        target = ComponentSpec(TARGET, "bolt", "sparkstorm.topology.component:Bolt", (),
                               _subscriptions(name, component), num_tasks=target_tasks)
        self.conf: dict[str, Any] = load_config(env={}, topology=dict(conf or {}))
        self.plan = ExecutionPlan(TopologySpec((*sources, component, target)), self.conf)
        self.name = name
        self.task = self.plan.component_tasks[name][0]
        self.target_tasks: list[int] = self.plan.component_tasks[TARGET]
        """The stand-in consumers' task ids (valid targets of a direct emit)."""
        self.collector = _RecordingCollector(
            self.task, name, build_routes(self.plan, name, self.task), self.plan.task_executor,
            WindowOutput(), True, bool(getattr(cls, "auto_anchor", True)))
        self.collector.result = Result()
        self._logs = _LogRecorder()
        self._logger = logging.getLogger(f"sparkstorm.component.{name}")
        self._logger.addHandler(self._logs)
        if self._logger.getEffectiveLevel() > logging.INFO:
            self._logger.setLevel(logging.INFO)
        self.instance: Any = None
        with self._recording():
            self.instance = start_task(cls, self.collector, name=name,
                                       conf={**self.conf, **component.config},
                                       context=self.plan.context_for(self.task),
                                       attributes={"component_spec": component})

    def _recording(self) -> _Call:
        return _Call(self)

    def close(self) -> Result:
        """Call the component's ``close()`` (if it has one) and stop capturing its logs."""
        with self._recording() as call:
            close = getattr(self.instance, "close", None)
            if callable(close):
                close()
        self._logger.removeHandler(self._logs)
        return call.result

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Call:
    """One call into the component: a fresh :class:`Result` and the log lines it wrote."""

    def __init__(self, harness: _Harness) -> None:
        self.harness = harness
        self.result = Result()

    def __enter__(self) -> _Call:
        self.harness.collector.result = self.result
        self.harness.collector.output.take()  # the engine's window buffers: not kept
        self.harness._logs.lines = self.result.logs
        return self

    def __exit__(self, *exc: object) -> None:
        self.harness._logs.lines = []


def _check_kind(cls: type, kind: str) -> None:
    if getattr(cls, "kind", None) != kind:
        msg = (f"{cls.__module__}.{cls.__qualname__} is not a {kind} (its kind is "
               f"{getattr(cls, 'kind', None)!r}); use "
               f"{'SpoutHarness' if kind == 'bolt' else 'BoltHarness'} for it")
        raise TopologyError(msg, code="HARNESS_WRONG_KIND")


def _subscriptions(name: str, component: ComponentSpec) -> tuple[InputSpec, ...]:
    return tuple(InputSpec(name, stream.name,
                           Grouping.DIRECT if stream.direct else Grouping.SHUFFLE)
                 for stream in component.outputs)


def _sources(inputs: Mapping[str, Any] | None) -> tuple[list[ComponentSpec],
                                                        tuple[InputSpec, ...]]:
    """Stand-in spouts declaring each input's streams, and the bolt's subscriptions."""
    sources, subscriptions = [], []
    for source, declared in (inputs or {}).items():
        streams = normalize_outputs(declared)
        sources.append(ComponentSpec(source, "spout", "sparkstorm.topology.component:Spout",
                                     streams))
        subscriptions += [InputSpec(source, s.name, Grouping.SHUFFLE) for s in streams]
    return sources, tuple(subscriptions)


class BoltHarness(_Harness):
    """Hosts one task of a bolt; each call returns what the bolt did (see the module doc).

    Args:
        component: the ``Bolt`` subclass, or its declaration (``MyBolt.spec(...)``; its
            ``outputs``, ``config`` and settings such as a ``ShellBolt``'s command count).
        conf: topology conf, over ./sparkstorm.yaml if there is one and the declared
            defaults (SPARKSTORM_* environment variables are ignored: tests stay the same).
        outputs: its output declarations, as ``Bolt.spec(outputs=...)`` (default: the
            declaration's, else the class's ``outputs``).
        inputs: source component id -> its output declarations (field names and/or
            ``Stream`` objects), so input values read by field name; a source not listed
            delivers plain tuples.
        name: the bolt's component id.
        target_tasks: tasks of the stand-in consumer of its streams.
    """

    def __init__(self, component: type[Component] | ComponentSpec, *,
                 conf: Mapping[str, Any] | None = None,
                 outputs: Sequence[Any] | None = None, inputs: Mapping[str, Any] | None = None,
                 name: str = "bolt", target_tasks: int = 1) -> None:
        sources, subscriptions = _sources(inputs)
        self._default_source = next(iter(inputs or {}), "source")
        self._roots = itertools.count(1)
        self._ids = itertools.count(1)
        super().__init__(component, "bolt", name=name, conf=conf, outputs=outputs,
                         inputs=subscriptions, sources=sources, target_tasks=target_tasks)
        self.loop = BoltLoop(self.instance, self.collector)
        self.last = Result()
        """What the latest ``process``/``tick`` did (also when it raised)."""

    def process(self, values: Sequence[Any], stream: str = DEFAULT_STREAM,
                source: str | None = None, source_task: int = 0) -> Result:
        """Deliver one tuple ``values`` from ``source`` (default: the first input) on ``stream``.

        As the engine does: its own tuple tree, ``auto_ack``/``auto_fail``.

        Raises:
            Exception: whatever ``process`` raised (after ``auto_fail``, recorded in
                the failure list of :attr:`last`).
        """
        source = self._default_source if source is None else source
        fields = self.plan.fields_of(source, stream)
        root = next(self._roots)  # its own tree, so fail() has a root to fail
        tup = Tuple(next(self._ids), source, stream, source_task, list(values), fields,
                    {root: root})
        return self._run(tup, tick=False)

    def tick(self) -> Result:
        """Deliver a tick tuple (``__system``/``__tick``, untracked) to ``process_tick``.

        Its one value is ``topology.tick.tuple.freq.secs`` (None when unset), as the engine's ticks
        carry it.
        """
        freq = self.instance.storm_conf.get("topology.tick.tuple.freq.secs")
        tup = Tuple(next(self._ids), SYSTEM_COMPONENT, TICK_STREAM, -1, [freq], ())
        return self._run(tup, tick=is_tick(tup.component, tup.stream))

    def _run(self, tup: Tuple, tick: bool) -> Result:
        with self._recording() as call:
            call.result.input = tup
            self.last = call.result
            try:
                self.loop.run((tup,), tick)
            except BoltRaised as raised:
                raise raised.cause from None
            end_window = getattr(self.instance, "end_window", None)
            if end_window is not None:  # each call is a window (shell bolts wait for
                end_window()            # their child's answers here, as in the engine)
        return call.result


class SpoutHarness(_Harness):
    """Hosts one task of a spout; each call returns what the spout did (see the module doc).

    The spout is activated at once (``active=False`` to call :meth:`activate` yourself).
    Emits with a message id are in flight (:attr:`pending`) until :meth:`ack` or :meth:`fail`.

    Args:
        component: the ``Spout`` subclass, or its declaration (``MySpout.spec(...)``).
        conf: topology conf, over ./sparkstorm.yaml if there is one and the declared
            defaults (SPARKSTORM_* environment variables are ignored: tests stay the same).
        outputs: its output declarations (default: the declaration's, else the class's).
        name: the spout's component id.
        target_tasks: tasks of the stand-in consumer of its streams.
        active: call ``activate()`` before returning.
    """

    def __init__(self, component: type[Component] | ComponentSpec, *,
                 conf: Mapping[str, Any] | None = None,
                 outputs: Sequence[Any] | None = None, name: str = "spout",
                 target_tasks: int = 1, active: bool = True) -> None:
        super().__init__(component, "spout", name=name, conf=conf, outputs=outputs, inputs=(),
                         sources=[], target_tasks=target_tasks)
        if active:
            self.activate()

    @property
    def pending(self) -> list[Any]:
        """Message ids emitted and neither acked nor failed yet, oldest first."""
        return [tup_id for tup_id, _, _ in self.collector.pending_roots.values()]

    def next_tuple(self) -> Result:
        """Call ``next_tuple`` once."""
        return self._call(self.instance.next_tuple)

    def ack(self, tup_id: Any) -> Result:
        """Tell the spout the tree of ``tup_id`` completed (``ack``)."""
        self._settle(tup_id)
        return self._call(self.instance.ack, tup_id)

    def fail(self, tup_id: Any) -> Result:
        """Tell the spout the tree of ``tup_id`` failed (``fail``)."""
        self._settle(tup_id)
        return self._call(self.instance.fail, tup_id)

    def activate(self) -> Result:
        """Call ``activate``."""
        return self._call(self.instance.activate)

    def deactivate(self) -> Result:
        """Call ``deactivate``."""
        return self._call(self.instance.deactivate)

    def _settle(self, tup_id: Any) -> None:
        roots = self.collector.pending_roots
        for root, (pending_id, _, _) in list(roots.items()):
            if pending_id == tup_id:
                del roots[root]
                return

    def _call(self, method: Any, *args: Any) -> Result:
        with self._recording() as call:
            method(*args)
        return call.result


__all__ = ["BoltHarness", "Emit", "Fail", "Result", "SpoutHarness"]
