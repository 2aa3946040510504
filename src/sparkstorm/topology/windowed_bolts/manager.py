"""The window bookkeeping of one windowed-bolt task, free of any engine.

Storm's ``WindowManager`` with its trigger and eviction policies and ``WaterMarkEventGenerator``.

Events are kept in ``(timestamp, arrival sequence)`` order with their timestamp: the arrival
time in ms for processing-time windows, the tuple's own field for event time. Time moves
when :meth:`WindowManager.advance` is called (on every tuple and every tick tuple) and fires
every window that became due since, so a window never depends on when the call came:

- count slide: a window ends at every ``slide``-th event (up to the watermark in event time);
- duration slide: windows end every ``slide`` ms (aligned to multiples of ``slide`` in event
  time, as Storm's ``WatermarkTimeTriggerPolicy``; ``slide`` ms after the first call in
  processing time); a window with no events is skipped, as Storm skips it;
- a window holds the events in ``(end - length, end]`` (duration length) or the last
  ``length`` events up to its end (count length);
- an event is *retired* (handed back to be acked) as soon as no later window can hold it.

Event time: a watermark is computed every watermark interval as the smallest of the newest
timestamps seen on each input stream, minus the lag; a tuple whose timestamp is below the
watermark is late (:meth:`WindowManager.add` refuses it). Windows whose end is *below* the
watermark fire, so a tuple stamped exactly at the watermark, which is not late, still reaches
its window (Storm fires at the watermark itself and may drop it).

Everything here is plain data (lists, dicts, sets of ints and the events themselves), so a
manager pickles with its task for checkpoints.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.topology.windowed_bolts.options import WindowOptions

Entry = tuple[int, int, Any]
"""(timestamp ms, arrival sequence, event)."""


def _key(entry: Entry) -> tuple[int, int]:
    return entry[0], entry[1]


def _ts(entry: Entry) -> int:
    return entry[0]


@dataclass
class Activation:
    """One window to hand to ``process_window``."""

    events: list[Any]
    new: list[Any]
    expired: list[Any]
    start_ts: int | None
    end_ts: int


@dataclass
class Step:
    """A window that fired (or None) and the events that can be acked after it."""

    activation: Activation | None
    retired: list[Any] = field(default_factory=list)


class WindowManager:
    """Windows of one task (see the module docstring).

    Args:
        options: the bolt's window options.
        input_streams: the ``"component:stream"`` keys the bolt subscribes to; event time
            waits for a timestamp on each before the first watermark (None: only the streams
            seen so far count).
    """

    def __init__(self, options: WindowOptions, input_streams: frozenset[str] | None = None
                 ) -> None:
        self.options = options
        self.input_streams = input_streams
        self.entries: list[Entry] = []
        self.seq = 0
        self.last_trigger: tuple[int, int] | None = None
        self.next_end: int | None = None
        self.origin: int | None = None
        self.watermark: int | None = None
        self.stream_max: dict[str, int] = {}
        self.watermark_at: int | None = None
        self.previous_window: set[int] = set()
        self.expired: list[Any] = []

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, event: Any, now_ms: int, stream: str = "", ts: int | None = None) -> bool:
        """Keep ``event``; with event time ``ts`` is its timestamp.

        Returns:
            False, keeping nothing, when the event is late (event time only).
        """
        if self.options.event_time:
            if ts is None:
                msg = "event-time windows need the tuple's timestamp"
                raise ValueError(msg)
            if self.watermark is not None and ts < self.watermark:
                return False
            if ts > self.stream_max.get(stream, ts - 1):
                self.stream_max[stream] = ts
        else:
            ts = now_ms
        self.seq += 1
        insort(self.entries, (ts, self.seq, event), key=_key)
        return True

    def advance(self, now_ms: int) -> list[Step]:
        """Move time to ``now_ms`` and fire every window that became due, in order."""
        horizon = self._horizon(now_ms)
        if horizon is None:
            return []
        if self.options.slide_count is not None:
            return self._count_triggers(horizon)
        return self._time_triggers(horizon)

    def _horizon(self, now_ms: int) -> int | None:
        """How far windows may fire: now, or the watermark in event time."""
        if not self.options.event_time:
            return now_ms
        if self.watermark_at is None:  # the watermark timer starts with the first call
            self.watermark_at = now_ms
        elif now_ms - self.watermark_at >= self.options.watermark_interval_ms:
            self.watermark_at = now_ms
            mark = self._compute_watermark()
            if mark is not None and (self.watermark is None or mark > self.watermark):
                self.watermark = mark
        return self.watermark

    def _compute_watermark(self) -> int | None:
        if not self.stream_max:
            return None
        if self.input_streams and not self.input_streams <= self.stream_max.keys():
            return None  # Storm: only once some data arrived on every input stream
        return min(self.stream_max.values()) - self.options.lag_ms

    def _count_triggers(self, horizon: int) -> list[Step]:
        slide = self.options.slide_count or 1
        steps: list[Step] = []
        while True:
            start = 0 if self.last_trigger is None else bisect_right(
                self.entries, self.last_trigger, key=_key)
            index = start + slide - 1
            if index >= len(self.entries) or self.entries[index][0] > horizon:
                return steps
            end_ts = self.entries[index][0]
            self.last_trigger = _key(self.entries[index])
            stop = index + 1
            first = self._window_start(stop, end_ts)
            activation = self._activate(self.entries[first:stop], end_ts)
            if self.options.length_count is not None:
                keep_from = min(stop, stop + slide - self.options.length_count)
            else:
                keep_from = first  # the next window ends later: nothing before it returns
            steps.append(Step(activation, self._retire(keep_from)))

    def _time_triggers(self, horizon: int) -> list[Step]:
        slide = self.options.slide_ms or 1
        if self.next_end is None:
            if self.options.event_time:
                if not self.entries:
                    return []
                self.next_end = self._aligned(self.entries[0][0])
            else:
                self.origin = horizon
                self.next_end = horizon + slide
        steps: list[Step] = []
        while self.next_end < horizon:
            end_ts = self.next_end
            stop = bisect_right(self.entries, end_ts, key=_ts)
            first = self._window_start(stop, end_ts)
            window = self.entries[first:stop]
            activation = self._activate(window, end_ts) if window else None
            if self.options.length_count is not None:
                keep_from = max(0, stop - self.options.length_count)
            else:
                keep_from = bisect_right(self.entries, min(end_ts, end_ts + slide
                                                           - (self.options.length_ms or 0)),
                                         key=_ts)
            retired = self._retire(keep_from)
            if activation is not None or retired:
                steps.append(Step(activation, retired))
            self.next_end = end_ts + slide if window else self._next_nonempty_end(end_ts, horizon)
        return steps

    def _next_nonempty_end(self, end_ts: int, horizon: int) -> int:
        """Storm's ``getNextAlignedWindowTs``: skip empty windows up to the next event."""
        later = bisect_right(self.entries, end_ts, key=_ts)
        if later < len(self.entries):
            return self._aligned(self.entries[later][0])
        return self._aligned(horizon)

    def _aligned(self, ts: int) -> int:
        """The first window end at or after ``ts``."""
        slide = self.options.slide_ms or 1
        origin = self.origin or 0
        return ts + (-(ts - origin)) % slide

    def _window_start(self, stop: int, end_ts: int) -> int:
        if self.options.length_count is not None:
            return max(0, stop - self.options.length_count)
        return bisect_right(self.entries, end_ts - (self.options.length_ms or 0), key=_ts)

    def _activate(self, window: list[Entry], end_ts: int) -> Activation:
        events = [event for _, _, event in window]
        new = [event for _, seq, event in window if seq not in self.previous_window]
        self.previous_window = {seq for _, seq, _ in window}
        expired, self.expired = self.expired, []
        length_ms = self.options.length_ms
        start_ts = end_ts - length_ms if length_ms is not None else None
        return Activation(events, new, expired, start_ts, end_ts)

    def _retire(self, keep_from: int) -> list[Any]:
        """Drop the events before ``keep_from``: no later window can hold them."""
        if keep_from <= 0:
            return []
        retired = [event for _, _, event in self.entries[:keep_from]]
        del self.entries[:keep_from]
        self.expired.extend(retired)
        return retired
