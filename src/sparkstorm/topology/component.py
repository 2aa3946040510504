"""Spouts and bolts: the classes users subclass, in pystorm's shape.

The engine creates one instance per task inside an executor process, sets ``logger``,
``storm_conf``, ``context`` and its collector, then calls ``initialize(conf, context)``.
Every other method is called from one thread of control at a time, as Storm does.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar, Protocol, cast

from sparkstorm.errors import TopologyError
from sparkstorm.topology.spec import ComponentSpec, input_spec_placeholder
from sparkstorm.topology.tuple import Tuple

FAIL_EXPLICIT, FAIL_ERROR, FAIL_TIMEOUT, FAIL_CRASH = "explicit", "error", "timeout", "crash"
FAIL_CAUSES = (FAIL_EXPLICIT, FAIL_ERROR, FAIL_TIMEOUT, FAIL_CRASH)
"""Why a tuple tree failed: a bolt called ``fail``; a component raised; the message timed
out; an executor or a whole window's job was lost."""


class Collector(Protocol):
    """What a host gives a component to emit, ack and fail through.

    Every host implements it: the engine's executors (``engine.collector.TaskCollector``),
    the multilang child (``multilang.runtime.ChildCollector``) and so the test harness; the
    component's ``_collector`` is typed with it, so mypy catches a host that drifts.
    """

    def emit(
        self,
        values: Any,
        stream: str | None,
        anchors: Any,
        direct_task: int | None,
        need_task_ids: bool,
        tup_id: Any,
    ) -> list[int] | None: ...

    def ack(self, tup: Tuple) -> None: ...

    def fail(self, tup: Tuple, reason: str | None = None, cause: str = FAIL_EXPLICIT) -> None:
        ...

    def reset_timeout(self, tup: Tuple) -> None: ...

    def report_error(self, text: str) -> None:
        """Report an error the component survives (it becomes the component's last
        error; nothing fails)."""


class _NoCollector:
    def __getattr__(self, name: str) -> Any:
        msg = (
            f"{name}() was called on a component that is not running in a topology; "
            "the engine sets the collector before initialize(); "
            "to test one component, drive it with sparkstorm.testing.BoltHarness or "
            "SpoutHarness; to run a topology, use LocalCluster"
        )
        raise RuntimeError(msg)


class Component:
    """Common part of spouts and bolts.

    Attributes:
        outputs: field names of the default stream and/or :class:`Stream` declarations.
        logger: a logger named after the topology component, set before ``initialize``.
    """

    outputs: ClassVar[list[Any]] = []
    kind: ClassVar[str] = "component"

    def __init__(self) -> None:
        self.logger = logging.getLogger(f"sparkstorm.component.{type(self).__name__}")
        self.storm_conf: dict[str, Any] = {}
        self.context: dict[str, Any] = {}
        self.component_name = ""
        self._collector: Collector = cast(Collector, _NoCollector())

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Called once per task before any other method; override to set up state."""


class Spout(Component):
    """A source of tuples. Override ``next_tuple`` and, for reliable spouts, ``ack``/``fail``.

    ``next_tuple`` is called repeatedly between windows while the spout is active, fewer than
    ``topology.max.spout.pending`` of its tuples are in flight and the buffer has room.
    """

    kind: ClassVar[str] = "spout"

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        par: int = 1,
        num_tasks: int | None = None,
        config: dict[str, Any] | None = None,
        outputs: list[Any] | None = None,
    ) -> ComponentSpec:
        """Declare this spout in a :class:`Topology`."""
        return ComponentSpec.declare(
            cls, "spout", name=name, inputs=None, par=par, num_tasks=num_tasks,
            config=config, outputs=cls.outputs if outputs is None else outputs,
        )

    def next_tuple(self) -> None:
        """Emit zero or more tuples. Must not block for long."""

    def ack(self, tup_id: Any) -> None:
        """The tree of the tuple emitted with message id ``tup_id`` completed."""

    def fail(self, tup_id: Any) -> None:
        """The tree of ``tup_id`` failed or timed out; replay it if it matters."""

    def activate(self) -> None:
        """The topology was activated; ``next_tuple`` calls follow."""

    def deactivate(self) -> None:
        """The topology was deactivated; ``next_tuple`` is no longer called."""

    def close(self) -> None:
        """The spout is shutting down."""

    def emit(
        self,
        values: Any,
        tup_id: Any = None,
        stream: str | None = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit a tuple; with a ``tup_id`` it is tracked and acked or failed back here.

        Returns:
            The task ids the tuple was sent to when ``need_task_ids`` is true, else None.

        Raises:
            TopologyError: the values do not match the declared fields, the stream is not
                declared, or a direct emit does not fit the stream.
        """
        result: list[int] | None = self._collector.emit(
            values, stream, None, direct_task, need_task_ids, tup_id
        )
        return result


class Bolt(Component):
    """Processes tuples. pystorm's semantics for ``auto_anchor``, ``auto_ack``, ``auto_fail``.

    Attributes:
        auto_anchor: emits inside ``process`` anchor to the current tuple when no anchors
            are given.
        auto_ack: the current tuple is acked when ``process`` returns.
        auto_fail: the current tuple is failed when ``process`` raises.
    """

    kind: ClassVar[str] = "bolt"
    auto_anchor: ClassVar[bool] = True
    auto_ack: ClassVar[bool] = True
    auto_fail: ClassVar[bool] = True

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        inputs: Any = None,
        par: int = 1,
        num_tasks: int | None = None,
        config: dict[str, Any] | None = None,
        outputs: list[Any] | None = None,
    ) -> ComponentSpec:
        """Declare this bolt in a :class:`Topology`.

        Args:
            name: component id; defaults to the attribute name in the topology class.
            inputs: a list of sources (shuffle grouping) or a dict of source to grouping;
                ``spec["stream"]`` selects a named stream of a source.
            par: executors (processes) for this bolt.
            num_tasks: task instances, fixed for the topology's life (default ``par``).
            config: component configuration overriding the topology's.
            outputs: override the class's ``outputs``.
        """
        return ComponentSpec.declare(
            cls, "bolt", name=name, inputs=input_spec_placeholder(inputs), par=par,
            num_tasks=num_tasks, config=config,
            outputs=cls.outputs if outputs is None else outputs,
        )

    def process(self, tup: Tuple) -> None:
        """Handle one input tuple."""

    def process_tick(self, tup: Tuple) -> None:
        """Handle a tick tuple (``topology.tick.tuple.freq.secs``)."""

    def emit(
        self,
        values: Any,
        stream: str | None = None,
        anchors: Any = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit a tuple anchored to ``anchors`` (default: the current tuple if auto_anchor).

        Returns:
            The task ids the tuple was sent to when ``need_task_ids`` is true, else None.
        """
        result: list[int] | None = self._collector.emit(
            values, stream, anchors, direct_task, need_task_ids, None
        )
        return result

    def ack(self, tup: Tuple) -> None:
        """Mark ``tup`` processed; its tree completes when every descendant is acked."""
        self._collector.ack(tup)

    def fail(self, tup: Tuple, reason: str | None = None) -> None:
        """Fail ``tup``: its spout tuple is failed back to the spout at once.

        ``reason`` (an extension to pystorm's signature) is shown with the failure counts
        in the UI, so people see why their tuples replay.
        """
        self._collector.fail(tup, reason)

    def reset_timeout(self, tup: Tuple) -> None:
        """Restart the message timeout of the tree ``tup`` belongs to."""
        self._collector.reset_timeout(tup)


class BasicBolt(Bolt):
    """A bolt that always anchors to, acks, and on error fails the tuple being processed
    (Storm's ``BaseBasicBolt``); subclasses cannot turn that off.

    Example:
        >>> class Shout(BasicBolt):
        ...     auto_ack = False
        Traceback (most recent call last):
        ...
        sparkstorm.errors.TopologyError: [BASIC_BOLT_AUTO_DISABLED] ...
    """

    auto_anchor: ClassVar[bool] = True
    auto_ack: ClassVar[bool] = True
    auto_fail: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        turned_off = [name for name in ("auto_anchor", "auto_ack", "auto_fail")
                      if not getattr(cls, name)]
        if turned_off:
            msg = (
                f"{cls.__module__}.{cls.__qualname__} is a BasicBolt but sets "
                f"{', '.join(f'{name} = False' for name in turned_off)}; a BasicBolt always "
                "anchors, acks and fails for you; subclass Bolt to manage acking yourself"
            )
            raise TopologyError(msg, code="BASIC_BOLT_AUTO_DISABLED")
