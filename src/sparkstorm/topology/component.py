"""Spouts and bolts: the classes users subclass, in pystorm's shape.

The engine creates one instance per task inside an executor process, sets ``logger``,
``storm_conf``, ``context`` and its collector, then calls ``initialize(conf, context)``.
Every other method is called from one thread of control at a time, as Storm does.
"""

from __future__ import annotations

import logging
import os
import traceback
from typing import Any, ClassVar, Protocol, cast

from sparkstorm.errors import TopologyError
from sparkstorm.topology.spec import ComponentSpec, input_spec_placeholder
from sparkstorm.topology.spec_args import resolve_config, resolve_par
from sparkstorm.topology.tuple import HEARTBEAT_STREAM, SYSTEM_COMPONENT, TICK_STREAM, Tuple

_LOG_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO,
               "warn": logging.WARNING, "warning": logging.WARNING, "error": logging.ERROR,
               "critical": logging.CRITICAL}
"""pystorm's level names for ``Component.log`` (Storm has trace; Python logs it as debug)."""

FAIL_EXPLICIT, FAIL_ERROR, FAIL_TIMEOUT, FAIL_CRASH = "explicit", "error", "timeout", "crash"
FAIL_CAUSES = (FAIL_EXPLICIT, FAIL_ERROR, FAIL_TIMEOUT, FAIL_CRASH)
"""Why a tuple tree failed: a bolt called ``fail``; a component raised; the message timed
out; an executor or a whole window's job was lost."""


class Collector(Protocol):
    """What a host gives a component to emit, ack and fail through.

    Every host implements it: the engine's executors (``engine.executor.collector.TaskCollector``),
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
    ) -> list[int] | None:
        """Route a tuple (anchored to ``anchors``, tracked with ``tup_id`` for a spout).

        Returns:
            The task ids the tuple was sent to when ``need_task_ids`` is true, else None.
        """

    def ack(self, tup: Tuple) -> None:
        """Mark ``tup`` processed for its tree."""

    def fail(self, tup: Tuple, reason: str | None = None, cause: str = FAIL_EXPLICIT) -> None:
        """Fail the tree of ``tup``, with the ``reason`` and ``cause`` the UI counts."""

    def reset_timeout(self, tup: Tuple) -> None:
        """Restart the message timeout of the tree ``tup`` belongs to."""

    def report_error(self, text: str) -> None:
        """Report an error the component survives.

        It becomes the component's last error; nothing fails.
        """


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
        par: executors when ``.spec()`` is given no ``par`` (streamparse's class attribute);
            an int or a dict of environment name to int.
        config: component configuration when ``.spec()`` is given no ``config``.
        logger: a logger named after the topology component, set before ``initialize``.
    """

    outputs: ClassVar[list[Any]] = []
    kind: ClassVar[str] = "component"
    par: ClassVar[int | dict[str, int]] = 1
    config: ClassVar[dict[str, Any] | None] = None

    def __init__(self) -> None:
        self.logger = logging.getLogger(f"sparkstorm.component.{type(self).__name__}")
        self.storm_conf: dict[str, Any] = {}
        self.context: dict[str, Any] = {}
        self.component_name = ""
        self._collector: Collector = cast(Collector, _NoCollector())

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Called once per task before any other method; override to set up state."""

    # -- pystorm's component API -------------------------------------------------------------
    # Properties with setters: streamparse code often assigns ``self.pid = os.getpid()``.
    @property
    def pid(self) -> int:
        """The process id of the executor (or child) running this task, as pystorm's."""
        return int(self.__dict__.get("_pid") or os.getpid())

    @pid.setter
    def pid(self, value: int) -> None:
        self.__dict__["_pid"] = value

    @property
    def task_id(self) -> Any:
        """This task's id (pystorm's ``task_id``), None before ``initialize``."""
        return self.__dict__.get("_task_id", self.context.get("taskid"))

    @task_id.setter
    def task_id(self, value: Any) -> None:
        self.__dict__["_task_id"] = value

    @property
    def topology_name(self) -> str:
        """The running topology's name (pystorm's ``topology_name``)."""
        return str(self.__dict__.get("_topology_name")
                   or self.storm_conf.get("topology.name") or "")

    @topology_name.setter
    def topology_name(self, value: str) -> None:
        self.__dict__["_topology_name"] = value

    @property
    def debug(self) -> bool:
        """``topology.debug`` of this component's conf (pystorm's ``debug``)."""
        return bool(self.__dict__.get("_debug", self.storm_conf.get("topology.debug", False)))

    @debug.setter
    def debug(self, value: bool) -> None:
        self.__dict__["_debug"] = value

    @staticmethod
    def is_heartbeat(tup: Any) -> bool:
        """Whether ``tup`` is a multilang heartbeat tuple (task -1, stream ``__heartbeat``).

        In-process bolts never receive one; it is here so pystorm code runs unchanged.
        """
        return bool(tup.task == -1 and tup.stream == HEARTBEAT_STREAM)

    def log(self, message: Any, level: str | None = None) -> None:
        """Log ``message`` on this component's logger at ``level`` (pystorm's ``log``).

        The levels are trace, debug, info (default), warn, warning, error and critical.
        """
        self.logger.log(_LOG_LEVELS.get(str(level or "info").lower(), logging.INFO), "%s",
                        message)

    def raise_exception(self, exception: BaseException, tup: Any = None) -> None:
        """Report ``exception`` as this component's error (pystorm's ``raise_exception``).

        It becomes the UI's last error and goes to the log, without failing anything or stopping.
        """
        text = "".join(traceback.format_exception(exception))
        if tup is not None:
            text = f"Python {type(exception).__name__} raised while processing {tup!r}\n{text}"
        self.logger.error("%s", text)
        report = getattr(self._collector, "report_error", None)
        if callable(report):
            report(text)

    def report_metric(self, name: str, value: Any) -> None:
        """Keep ``value`` as the latest of metric ``name`` (pystorm's ``report_metric``).

        It is kept in ``self.metrics`` and logged at debug level; sparkstorm has no metrics
        consumer.
        """
        metrics = self.__dict__.setdefault("metrics", {})
        metrics[name] = value
        self.logger.debug("metric %s = %r", name, value)


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
        par: int | dict[str, int] | None = None,
        num_tasks: int | None = None,
        config: dict[str, Any] | None = None,
        outputs: list[Any] | None = None,
    ) -> ComponentSpec:
        """Declare this spout in a :class:`Topology`.

        ``par``/``config`` default to the class attributes, as in streamparse.
        """
        return ComponentSpec.declare(
            cls, "spout", name=name, inputs=None, par=resolve_par(cls, par, name),
            num_tasks=num_tasks, config=resolve_config(cls, config, name),
            outputs=cls.outputs if outputs is None else outputs,
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
        par: int | dict[str, int] | None = None,
        num_tasks: int | None = None,
        config: dict[str, Any] | None = None,
        outputs: list[Any] | None = None,
    ) -> ComponentSpec:
        """Declare this bolt in a :class:`Topology`.

        Args:
            name: component id; defaults to the attribute name in the topology class.
            inputs: a list of sources (shuffle grouping) or a dict of source to grouping;
                ``spec["stream"]`` selects a named stream of a source.
            par: executors (processes) for this bolt; None: the class's ``par``; a dict
                ``{"prod": 4}`` picks the entry of the environment being run (see
                :func:`~sparkstorm.topology.spec_args.current_environment`).
            num_tasks: task instances, fixed for the topology's life (default ``par``).
            config: component configuration overriding the topology's (None: the
                class's ``config``).
            outputs: override the class's ``outputs``.
        """
        return ComponentSpec.declare(
            cls, "bolt", name=name, inputs=input_spec_placeholder(inputs),
            par=resolve_par(cls, par, name), num_tasks=num_tasks,
            config=resolve_config(cls, config, name),
            outputs=cls.outputs if outputs is None else outputs,
        )

    def process(self, tup: Tuple) -> None:
        """Handle one input tuple."""

    def process_tick(self, tup: Tuple) -> None:
        """Handle a tick tuple (``topology.tick.tuple.freq.secs``)."""

    @staticmethod
    def is_tick(tup: Any) -> bool:
        """Whether ``tup`` is a tick tuple (component ``__system``, stream ``__tick``)."""
        return bool(tup.component == SYSTEM_COMPONENT and tup.stream == TICK_STREAM)

    def read_tuple(self) -> Tuple:
        """Refused in process: pystorm reads its next input from stdin here.

        An in-process bolt is handed its inputs instead.

        Raises:
            TopologyError: ``READ_TUPLE_IN_PROCESS``.
        """
        msg = (
            f"{type(self).__name__}.read_tuple(): in-process bolts do not read their input; "
            "sparkstorm calls process(tup) with each tuple (and process_tick for ticks); "
            "move the code after read_tuple() into process()"
        )
        raise TopologyError(msg, code="READ_TUPLE_IN_PROCESS")

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
    """A bolt that always anchors to, acks, and on error fails the tuple being processed.

    Storm's ``BaseBasicBolt``; subclasses cannot turn that off.

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
