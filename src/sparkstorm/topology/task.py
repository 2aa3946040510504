"""One task of a component: its set-up and the bolt run loop, written once for every host.

Three hosts run user components: the engine's executor processes
(``sparkstorm.engine.executor.host``), the multilang child (``python -m sparkstorm.multilang
module:Class``, ``sparkstorm.multilang.runtime``) and the test harness
(``sparkstorm.testing``). Each gives the component its own :class:`HostCollector` (the
engine's routes and acks by XOR, the child's writes protocol commands, the harness's is the
engine's) and then uses these two pieces, so a component behaves the same in all three:

* :func:`start_task` makes the instance, sets what ``Component`` documents (collector,
  ``logger``, ``component_name``, ``storm_conf``, ``context``) and calls ``initialize``;
* :class:`BoltLoop` runs ``process`` (``process_tick`` for tick tuples) over tuples in order,
  with pystorm's ``auto_ack`` and ``auto_fail``; ``auto_anchor`` is the collector's part.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from sparkstorm.topology.component import FAIL_ERROR, Bolt, Collector, Component, Spout
from sparkstorm.topology.failed import FailedException, ReportedFailedException
from sparkstorm.topology.tuple import Tuple


class HostCollector(Collector, Protocol):
    """A :class:`Collector` as a host implements it.

    It adds what :class:`BoltLoop` needs besides the component's calls.
    """

    current: Tuple | None
    """The tuple being processed (auto-anchoring anchors to it), None between tuples."""

    def auto_ack(self, tup: Tuple) -> None:
        """Ack ``tup`` for the loop (``auto_ack``); ``tup.done`` is false when called.

        The engine's is leaner than ``ack``: the loop counts these acks itself.
        """


def start_task(cls: type[Component], collector: HostCollector, *, name: str,
               conf: dict[str, Any], context: dict[str, Any],
               attributes: Mapping[str, Any] | None = None) -> Any:
    """Make one task instance of ``cls`` and initialize it, as every host does.

    Called once per task, in the process that runs it, before any other call into it.

    Args:
        cls: the user's ``Spout`` or ``Bolt`` subclass.
        collector: what the instance emits, acks and fails through. If it has a
            ``bolt_emit`` (the engine's fast path) and the class does not override
            ``Bolt.emit``, the instance's ``emit`` is bound to it; so is a ``spout_emit``
            to a spout that does not override ``Spout.emit``.
        name: the component id (names the instance's logger
            ``sparkstorm.component.<name>``).
        conf: the component's effective conf (``storm_conf``).
        context: the task's context, shaped as Storm's multilang handshake gives it.
        attributes: extra instance attributes a host sets before ``initialize`` (the
            engine gives shell components their ``component_spec``).

    Returns:
        The initialized instance.
    """
    instance: Any = cls()
    instance._collector = collector
    fast_emit = getattr(collector, "bolt_emit", None)
    if fast_emit is not None and type(instance).emit is Bolt.emit:  # one call less per emit
        instance.emit = fast_emit
    fast_emit = getattr(collector, "spout_emit", None)
    if fast_emit is not None and type(instance).emit is Spout.emit:
        instance.emit = fast_emit
    instance.logger = logging.getLogger(f"sparkstorm.component.{name}")
    instance.component_name = name
    instance.storm_conf = conf
    instance.context = context
    for key, value in (attributes or {}).items():
        setattr(instance, key, value)
    instance.initialize(conf, context)
    return instance


class BoltRaised(Exception):
    """``process`` (or ``process_tick``) raised; the tuple was failed if ``auto_fail``.

    Attributes:
        cause: what the component raised.
        processed: tuples of the batch that completed before it.
        auto_acked: how many of those the loop acked.
    """

    def __init__(self, cause: Exception, processed: int, auto_acked: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.processed = processed
        self.auto_acked = auto_acked


class BoltLoop:
    """The run loop of one bolt task: process, auto-ack, auto-fail, tick dispatch.

    Args:
        instance: the bolt task, as :func:`start_task` made it.
        collector: the collector it was given.
    """

    __slots__ = ("instance", "collector", "auto_ack", "auto_fail")

    def __init__(self, instance: Any, collector: HostCollector) -> None:
        cls = type(instance)
        self.instance = instance
        self.collector = collector
        self.auto_ack = bool(getattr(cls, "auto_ack", True))
        self.auto_fail = bool(getattr(cls, "auto_fail", True))

    def run(self, tuples: Iterable[Tuple], tick: bool = False) -> int:
        """Process ``tuples`` in order; acks each one ``process`` left open (``auto_ack``).

        Called by the engine once per input batch (the engine's hottest loop: keep it
        lean), by the multilang child once per input tuple. Tuples of a bolt that acks
        them itself get ``received`` (``perf_counter`` seconds), from which the engine
        measures their process latency.

        Args:
            tuples: the input, all from one source component and stream.
            tick: they are tick tuples: ``process_tick`` handles them.

        Returns:
            How many tuples the loop acked.

        A tuple whose ``process`` raises :class:`~sparkstorm.topology.failed.FailedException`
        is failed (cause ``"explicit"``, the exception as reason) and the loop goes on.

        Raises:
            BoltRaised: the component raised; the tuple was failed first if ``auto_fail``
                (cause ``"error"``, the exception as reason), later tuples were not run.
        """
        collector = self.collector
        process = self.instance.process_tick if tick else self.instance.process
        done = auto_acked = 0
        tup: Tuple | None = None
        items = iter(tuples)  # a FailedException goes on with the same iterator
        try:
            while True:
                try:
                    if self.auto_ack:  # the common case: nothing but the per-tuple work
                        ack = collector.auto_ack
                        for tup in items:
                            collector.current = tup
                            process(tup)
                            done += 1
                            if not tup.done:
                                ack(tup)
                                auto_acked += 1
                    else:  # acked later, maybe much later: process latency counts from receipt
                        clock = time.perf_counter
                        for tup in items:
                            tup.received = clock()
                            collector.current = tup
                            process(tup)
                            done += 1
                except FailedException as exc:
                    done += 1
                    self.failed_by_bolt(tup, exc)
                    continue
                except Exception as exc:
                    if self.auto_fail and tup is not None:  # pystorm: else it times out
                        collector.fail(tup, f"{type(exc).__name__}: {exc}", FAIL_ERROR)
                    raise BoltRaised(exc, done, auto_acked) from exc
                return auto_acked
        finally:
            collector.current = None

    def failed_by_bolt(self, tup: Tuple | None, exc: FailedException) -> None:
        """Fail ``tup``, whose ``process`` raised ``exc``; report it if it says so.

        ``tup`` is not failed again when the bolt acked or failed it before raising.
        """
        if tup is None:
            return
        if not tup.done:
            self.collector.fail(tup, f"{type(exc).__name__}: {exc}")
        if isinstance(exc, ReportedFailedException):
            self.instance.raise_exception(exc, tup)


__all__ = ["BoltLoop", "BoltRaised", "HostCollector", "start_task"]
