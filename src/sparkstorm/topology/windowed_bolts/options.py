"""How a windowed bolt's windows are declared.

Storm's ``Count`` and ``Duration``, and the ``topology.bolts.*`` config keys that carry them.

A window has a length and a sliding interval, each a :class:`Count` of tuples or a
:class:`Duration`; a tumbling window slides by its own length. Time is the tuples' arrival
time unless a timestamp field is named, which makes it event time with watermarks.

Example:
    >>> conf = window_conf(length=Duration.seconds(10), slide=Duration.seconds(2),
    ...                    timestamp_field="ts", lag=Duration.seconds(1))
    >>> conf[LENGTH_MS], conf[SLIDE_MS]
    (10000, 2000)
    >>> WindowOptions.from_conf(conf).event_time
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sparkstorm.config.access import conf_bool, conf_int, conf_optional_int, conf_optional_str
from sparkstorm.errors import TopologyError

LENGTH_COUNT = "topology.bolts.window.length.count"
LENGTH_MS = "topology.bolts.window.length.duration.ms"
SLIDE_COUNT = "topology.bolts.sliding.interval.count"
SLIDE_MS = "topology.bolts.sliding.interval.duration.ms"
TIMESTAMP_FIELD = "topology.bolts.tuple.timestamp.field.name"
MAX_LAG_MS = "topology.bolts.tuple.timestamp.max.lag.ms"
WATERMARK_INTERVAL_MS = "topology.bolts.watermark.event.interval.ms"
LATE_TUPLE_STREAM = "topology.bolts.late.tuple.stream"
WINDOW_KEYS = (LENGTH_COUNT, LENGTH_MS, SLIDE_COUNT, SLIDE_MS, TIMESTAMP_FIELD, MAX_LAG_MS,
               WATERMARK_INTERVAL_MS, LATE_TUPLE_STREAM)
LATE_TUPLE_FIELD = "late_tuple"
"""The single field of the late-tuple stream, as Storm names it."""


@dataclass(frozen=True)
class Count:
    """A number of tuples (Storm's ``BaseWindowedBolt.Count``)."""

    value: int

    @classmethod
    def of(cls, value: int) -> Count:
        """Storm's ``Count.of(n)``."""
        return cls(value)


@dataclass(frozen=True)
class Duration:
    """A length of time in milliseconds (Storm's ``BaseWindowedBolt.Duration``).

    Example:
        >>> Duration.seconds(2), Duration.minutes(1).value
        (Duration(value=2000), 60000)
    """

    value: int

    @classmethod
    def of(cls, ms: int) -> Duration:
        """Storm's ``Duration.of(ms)``."""
        return cls(ms)

    @classmethod
    def millis(cls, ms: int) -> Duration:
        """A duration of ``ms`` milliseconds."""
        return cls(ms)

    @classmethod
    def seconds(cls, secs: float) -> Duration:
        """A duration of ``secs`` seconds."""
        return cls(round(secs * 1000))

    @classmethod
    def minutes(cls, mins: float) -> Duration:
        """A duration of ``mins`` minutes."""
        return cls(round(mins * 60_000))


def _size_key(size: Count | Duration, count_key: str, ms_key: str, what: str) -> dict[str, int]:
    if isinstance(size, Count):
        return {count_key: size.value}
    if isinstance(size, Duration):
        return {ms_key: size.value}
    msg = (
        f"window {what} {size!r} is neither a Count nor a Duration; use Count(100) or "
        "Duration.seconds(10) from sparkstorm.topology.windowed_bolts"
    )
    raise TopologyError(msg, code="WINDOW_BAD_OPTION")


def window_conf(
    length: Count | Duration,
    slide: Count | Duration | None = None,
    *,
    timestamp_field: str | None = None,
    lag: Duration | None = None,
    watermark_interval: Duration | None = None,
    late_tuple_stream: str | None = None,
) -> dict[str, Any]:
    """The component config of a window.

    Storm's ``withWindow``/``withTumblingWindow``, ``withTimestampField``, ``withLag``,
    ``withWatermarkInterval``, ``withLateTupleStream``.

    Args:
        length: the window length.
        slide: the sliding interval; None makes a tumbling window (slides by ``length``).
        timestamp_field: the input field with each tuple's event time in ms.
        lag: how far the watermark stays behind the newest event time seen.
        watermark_interval: how often a watermark is computed.
        late_tuple_stream: the stream late tuples are emitted on.

    Raises:
        TopologyError: ``WINDOW_BAD_OPTION`` for a size that is not a Count or a Duration.
    """
    conf: dict[str, Any] = _size_key(length, LENGTH_COUNT, LENGTH_MS, "length")
    conf |= _size_key(length if slide is None else slide, SLIDE_COUNT, SLIDE_MS, "slide")
    optional = {TIMESTAMP_FIELD: timestamp_field, LATE_TUPLE_STREAM: late_tuple_stream,
                MAX_LAG_MS: lag.value if lag is not None else None,
                WATERMARK_INTERVAL_MS: (watermark_interval.value
                                        if watermark_interval is not None else None)}
    return conf | {key: value for key, value in optional.items() if value is not None}


@dataclass(frozen=True)
class WindowOptions:
    """A windowed bolt's effective options, read from its merged config.

    Exactly one of ``length_count``/``length_ms`` and at most one of ``slide_count``/
    ``slide_ms`` are set; an unset slide means tumbling (slide = length).
    """

    length_count: int | None
    length_ms: int | None
    slide_count: int | None
    slide_ms: int | None
    timestamp_field: str | None
    lag_ms: int
    watermark_interval_ms: int
    late_tuple_stream: str | None

    @property
    def event_time(self) -> bool:
        """True when time comes from a tuple field (with watermarks)."""
        return self.timestamp_field is not None

    @classmethod
    def from_conf(cls, conf: Mapping[str, object], *, component: str = "?") -> WindowOptions:
        """Read and check the window keys of ``conf`` (topology conf + component config).

        Raises:
            TopologyError: ``WINDOW_BAD_OPTION`` when no length or two lengths/slides are set.
            ConfigError: ``CONFIG_WRONG_TYPE`` for a key of the wrong type.
        """
        length_count, length_ms = conf_optional_int(conf, LENGTH_COUNT), conf_optional_int(
            conf, LENGTH_MS)
        slide_count, slide_ms = conf_optional_int(conf, SLIDE_COUNT), conf_optional_int(
            conf, SLIDE_MS)
        _check_one(component, "window length", LENGTH_COUNT, length_count, LENGTH_MS, length_ms,
                   required=True)
        _check_one(component, "sliding interval", SLIDE_COUNT, slide_count, SLIDE_MS, slide_ms,
                   required=False)
        if slide_count is None and slide_ms is None:  # tumbling
            slide_count, slide_ms = length_count, length_ms
        for key, value in ((LENGTH_COUNT, length_count), (LENGTH_MS, length_ms),
                           (SLIDE_COUNT, slide_count), (SLIDE_MS, slide_ms)):
            if value is not None and value < 1:
                msg = (f"windowed bolt {component!r} sets {key} = {value!r}; window sizes must "
                       "be at least 1")
                raise TopologyError(msg, code="WINDOW_BAD_OPTION")
        return cls(length_count, length_ms, slide_count, slide_ms,
                   conf_optional_str(conf, TIMESTAMP_FIELD), conf_int(conf, MAX_LAG_MS),
                   conf_int(conf, WATERMARK_INTERVAL_MS),
                   conf_optional_str(conf, LATE_TUPLE_STREAM))

    def tick_period_secs(self) -> int | None:
        """Seconds between the tick tuples this window needs to advance without input.

        The watermark interval in event time, the sliding interval for processing-time duration
        slides, none for count slides in processing time (tuples drive them). Tick periods are whole
        seconds (``topology.tick.tuple.freq.secs``), so a shorter interval is served at the next
        tick, with every window that became due.
        """
        if self.event_time:
            period_ms: int | None = self.watermark_interval_ms
        else:
            period_ms = self.slide_ms
        return None if period_ms is None else max(1, math.ceil(period_ms / 1000))


def _check_one(component: str, what: str, count_key: str, count: int | None, ms_key: str,
               ms: int | None, *, required: bool) -> None:
    if count is not None and ms is not None:
        msg = (
            f"windowed bolt {component!r} sets both {count_key} ({count}) and {ms_key} ({ms}); "
            f"a {what} is either a count of tuples or a duration: keep one"
        )
        raise TopologyError(msg, code="WINDOW_BAD_OPTION")
    if required and count is None and ms is None:
        msg = (
            f"windowed bolt {component!r} has no {what}: set {count_key} or {ms_key}, e.g. "
            "MyBolt.spec(window=Duration.seconds(10), ...)"
        )
        raise TopologyError(msg, code="WINDOW_BAD_OPTION")


def is_windowed(component_config: Mapping[str, object]) -> bool:
    """True when a component's own config declares a window (Storm's keys)."""
    return any(component_config.get(key) is not None for key in (LENGTH_COUNT, LENGTH_MS))


def check_window_fits_timeouts(options: WindowOptions, conf: Mapping[str, object], *,
                               component: str) -> None:
    """Storm's ``WindowedBoltExecutor.validate``: a window must fit in the message timeout.

    A window's tuples stay un-acked for up to its length plus its slide, so that must fit in the
    message timeout (and, for count windows, in ``topology.max.spout.pending``), or every tree would
    time out and replay forever.

    Raises:
        TopologyError: ``WINDOW_EXCEEDS_MESSAGE_TIMEOUT`` or ``WINDOW_EXCEEDS_MAX_SPOUT_PENDING``.
    """
    if conf_bool(conf, "topology.enable.message.timeouts"):
        timeout_ms = conf_int(conf, "topology.message.timeout.secs") * 1000
        duration = (options.length_ms or 0) + (options.slide_ms or 0)
        if duration > timeout_ms:
            msg = (
                f"windowed bolt {component!r}: window duration (length + sliding interval) "
                f"{duration} ms is more than topology.message.timeout.secs "
                f"({timeout_ms // 1000} s); its tuples would time out before their window "
                "ends; raise topology.message.timeout.secs or shorten the window"
            )
            raise TopologyError(msg, code="WINDOW_EXCEEDS_MESSAGE_TIMEOUT")
    max_pending = conf_optional_int(conf, "topology.max.spout.pending")
    count = (options.length_count or 0) + (options.slide_count or 0)
    if max_pending is not None and count > max_pending:
        msg = (
            f"windowed bolt {component!r}: window count (length + sliding interval) {count} "
            f"is more than topology.max.spout.pending ({max_pending}); the spouts would stop "
            "before a window fills; raise topology.max.spout.pending or shrink the window"
        )
        raise TopologyError(msg, code="WINDOW_EXCEEDS_MAX_SPOUT_PENDING")
