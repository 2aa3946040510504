"""Storm's windowed bolts: ``WindowedBolt.process_window(window)`` over sliding or tumbling windows.

The windows are by count or duration, in processing or event time.

Built on the public :class:`~sparkstorm.topology.component.Bolt` API, so the engine runs it
as any bolt: ``process`` files each tuple into the task's :class:`WindowManager`, and
``process_tick`` lets time move without input (``spec()`` asks for tick tuples as often as the
windows need them). Acking follows Storm's ``WindowedBoltExecutor``: a tuple is acked when it
leaves the last window that can hold it, a late tuple at once (after it was emitted on the
late-tuple stream, if one is declared), and emits from ``process_window`` are anchored to
every tuple of the window unless other anchors are given.

The window contents are ordinary attributes of the task (tuples included), so they are part
of the task's instance state and pickle with it.

Example:
    >>> from sparkstorm.topology.windowed_bolts import Duration
    >>> class Average(WindowedBolt):
    ...     outputs = ["avg"]
    ...     def process_window(self, window):
    ...         values = [t.values.value for t in window.get()]
    ...         self.emit([sum(values) / len(values)])
    >>> spec = Average.spec(window=Duration.seconds(30), slide=Duration.seconds(5),
    ...                     timestamp_field="ts", late_tuple_stream="late")
    >>> spec.config["topology.bolts.window.length.duration.ms"], [s.name for s in spec.outputs]
    (30000, ['default', 'late'])
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from sparkstorm.errors import TopologyError
from sparkstorm.topology.component import Bolt
from sparkstorm.topology.spec import ComponentSpec
from sparkstorm.topology.stream import Stream, normalize_outputs
from sparkstorm.topology.tuple import Tuple
from sparkstorm.topology.windowed_bolts.manager import Activation, Step, WindowManager
from sparkstorm.topology.windowed_bolts.options import (
    LATE_TUPLE_FIELD,
    LATE_TUPLE_STREAM,
    Count,
    Duration,
    WindowOptions,
    window_conf,
)

TICK_FREQ = "topology.tick.tuple.freq.secs"


class TupleWindow:
    """The tuples of one window (Storm's ``TupleWindow``).

    Attributes:
        start_ts: the window's start in ms (exclusive), None for count-length windows.
        end_ts: the window's end in ms (inclusive): its watermark position in event time,
            the clock when it fired in processing time.
    """

    def __init__(self, activation: Activation) -> None:
        self._activation = activation
        self.start_ts = activation.start_ts
        self.end_ts = activation.end_ts

    def get(self) -> list[Tuple]:
        """Every tuple in the window, oldest first."""
        return list(self._activation.events)

    def new(self) -> list[Tuple]:
        """The tuples that were not in the previous window (Storm's ``getNew``)."""
        return list(self._activation.new)

    def expired(self) -> list[Tuple]:
        """The tuples that left the windows since the previous one (Storm's ``getExpired``).

        They are already acked.
        """
        return list(self._activation.expired)

    def __iter__(self) -> Any:
        return iter(self._activation.events)

    def __len__(self) -> int:
        return len(self._activation.events)

    def __repr__(self) -> str:
        return (f"TupleWindow({len(self)} tuples, new={len(self._activation.new)}, "
                f"expired={len(self._activation.expired)}, start_ts={self.start_ts}, "
                f"end_ts={self.end_ts})")


class WindowedBolt(Bolt):
    """A bolt that sees its input as windows: override :meth:`process_window`.

    Declare the windows with :meth:`spec` (or with Storm's ``topology.bolts.*`` keys in the
    component config). ``process`` and ``process_tick`` belong to the window machinery; do
    not override them.
    """

    auto_anchor: ClassVar[bool] = False
    auto_ack: ClassVar[bool] = False  # tuples are acked when they leave their last window
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
        *,
        window: Count | Duration | None = None,
        slide: Count | Duration | None = None,
        timestamp_field: str | None = None,
        lag: Duration | None = None,
        watermark_interval: Duration | None = None,
        late_tuple_stream: str | None = None,
    ) -> ComponentSpec:
        """Declare this bolt with its window.

        Storm's ``withWindow``, ``withTumblingWindow``, ``withTimestampField``, ``withLag``,
        ``withWatermarkInterval``, ``withLateTupleStream``.

        Args:
            name: as :meth:`Bolt.spec`.
            inputs: as :meth:`Bolt.spec`.
            par: as :meth:`Bolt.spec`.
            num_tasks: as :meth:`Bolt.spec`.
            config: as :meth:`Bolt.spec`.
            outputs: as :meth:`Bolt.spec`.
            window: the window length; None when ``config`` has Storm's keys instead.
            slide: the sliding interval; None for a tumbling window.
            timestamp_field: input field with the event time in ms (event-time windows).
            lag: how far behind the newest timestamp the watermark stays.
            watermark_interval: how often the watermark moves.
            late_tuple_stream: emit late tuples on this stream (declared for you, with
                the single field ``late_tuple``).

        Raises:
            TopologyError: ``WINDOW_BAD_OPTION`` for a missing or contradictory window.
        """
        own = dict(config or {})
        if window is not None:
            own |= window_conf(window, slide, timestamp_field=timestamp_field, lag=lag,
                               watermark_interval=watermark_interval,
                               late_tuple_stream=late_tuple_stream)
        options = WindowOptions.from_conf(own, component=name or cls.__name__)
        period = options.tick_period_secs()
        if period is not None and (own.get(TICK_FREQ) is None or own[TICK_FREQ] > period):
            own[TICK_FREQ] = period
        streams = list(normalize_outputs(cls.outputs if outputs is None else outputs))
        late = options.late_tuple_stream
        if late is not None and all(stream.name != late for stream in streams):
            streams.append(Stream([LATE_TUPLE_FIELD], name=late))
        return super().spec(name=name, inputs=inputs, par=par, num_tasks=num_tasks,
                            config=own, outputs=streams)

    def process_window(self, window: TupleWindow) -> None:
        """Handle one window; called when it is complete, with its tuples still un-acked."""

    def now_ms(self) -> int:
        """The processing-time clock in ms (tests override it)."""
        return int(time.time() * 1000)

    def process(self, tup: Tuple) -> None:
        """File ``tup`` into the windows and fire those that became due."""
        manager = self._window_manager()
        now = self.now_ms()
        ts = self._timestamp_of(tup) if manager.options.event_time else None
        if not manager.add(tup, now, f"{tup.component}:{tup.stream}", ts):
            self._handle_late(tup, ts)
        self._run(manager.advance(now))

    def process_tick(self, tup: Tuple) -> None:
        """Let time move: fire the windows that became due without new input."""
        self._run(self._window_manager().advance(self.now_ms()))

    def emit(
        self,
        values: Any,
        stream: str | None = None,
        anchors: Any = None,
        direct_task: int | None = None,
        need_task_ids: bool = False,
    ) -> list[int] | None:
        """Emit a tuple; inside ``process_window`` it is anchored to the whole window.

        That is unless ``anchors`` are given, as in Storm's ``WindowedOutputCollector``.
        """
        if anchors is None:
            anchors = self.__dict__.get("_window_anchors")
        result: list[int] | None = self._collector.emit(
            values, stream, anchors, direct_task, need_task_ids, None)
        return result

    def _window_manager(self) -> WindowManager:
        # made on first use: the engine sets storm_conf and component_spec before
        # initialize(), which subclasses override without calling ours
        manager: WindowManager | None = self.__dict__.get("_windows")
        if manager is None:
            options = WindowOptions.from_conf(self.storm_conf, component=self.component_name)
            spec = getattr(self, "component_spec", None)
            streams = frozenset(f"{i.source}:{i.stream}" for i in spec.inputs) if spec else None
            manager = self._windows = WindowManager(options, streams or None)
        return manager

    def _timestamp_of(self, tup: Tuple) -> int:
        name = self._window_manager().options.timestamp_field or ""
        value = getattr(tup.values, name, None)
        if isinstance(value, bool) or not isinstance(value, int | float):
            msg = (
                f"windowed bolt {self.component_name!r} reads event time from field {name!r}, "
                f"but a tuple from {tup.component!r} stream {tup.stream!r} has "
                f"{value!r} there; declare the field on every input stream and put the "
                "event time in ms (an int) in it"
            )
            raise TopologyError(msg, code="WINDOW_TIMESTAMP_MISSING")
        return int(value)

    def _handle_late(self, tup: Tuple, ts: int | None) -> None:
        late = self._window_manager().options.late_tuple_stream
        if late is not None:
            record = {"component": tup.component, "stream": tup.stream, "task": tup.task,
                      "values": list(tup.values), "ts": ts}
            self.emit([record], stream=late, anchors=[tup])
        else:
            self.logger.info("late tuple from %s:%s with ts %s (watermark %s) dropped; "
                             "set %s to receive late tuples", tup.component, tup.stream, ts,
                             self._window_manager().watermark, LATE_TUPLE_STREAM)
        self.ack(tup)

    def _run(self, steps: list[Step]) -> None:
        for step in steps:
            if step.activation is not None:
                self._window_anchors: list[Tuple] | None = step.activation.events
                try:
                    self.process_window(TupleWindow(step.activation))
                finally:
                    self._window_anchors = None
            for tup in step.retired:
                self.ack(tup)
