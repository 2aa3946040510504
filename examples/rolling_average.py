"""Rolling average per sensor over a sliding event-time window (Storm's windowed bolts).

``SensorSpout`` emits readings ``[sensor, ts, value]`` stamped with their own event time (ms),
a little out of order, as readings from the field arrive. ``AverageBolt`` is a
``WindowedBolt`` with a 5 s window sliding every second on the ``ts`` field, a watermark
1 s behind the newest reading and a ``late`` stream for readings that come after it; for
every window it emits each sensor's average. ``PrinterBolt`` logs them.

Run it with ``sparkstorm run examples/rolling_average.py --time 20``.
"""

from __future__ import annotations

import random
from typing import Any

from sparkstorm import Bolt, Grouping, Spout, Topology
from sparkstorm.topology.windowed_bolts import Duration, TupleWindow, WindowedBolt

SENSORS = ("north", "south", "east")
START_TS = 1_700_000_000_000
"""Event time of the first reading (ms): readings carry their own clock, not ours."""
STEP_MS = 100
"""Event time between two readings."""


def reading(i: int) -> list[Any]:
    """The ``i``-th reading: which sensor, when (event time), and what it measured."""
    sensor = SENSORS[i % len(SENSORS)]
    return [sensor, START_TS + i * STEP_MS, round(20 + 5 * ((i * 37) % 11) / 11, 3)]


class SensorSpout(Spout):
    """Emits ``rolling.readings`` readings (unbounded if unset) with message id ``i``,
    shuffled within batches of 8 so the event times arrive out of order (by at most
    800 ms, under the bolt's 1 s lag), and replays any that fail."""

    outputs = ["sensor", "ts", "value"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.limit = storm_conf.get("rolling.readings")
        self.rng = random.Random(7)
        self.next_i = 0
        self.queue: list[int] = []

    def next_tuple(self) -> None:
        if not self.queue:
            if self.limit is not None and self.next_i >= self.limit:
                return
            batch = list(range(self.next_i, self.next_i + 8))
            if self.limit is not None:
                batch = [i for i in batch if i < self.limit]
            self.rng.shuffle(batch)
            self.queue, self.next_i = batch, self.next_i + 8
        i = self.queue.pop()
        self.emit(reading(i), tup_id=i)

    def fail(self, tup_id: Any) -> None:
        self.queue.append(tup_id)


class AverageBolt(WindowedBolt):
    """Each sensor's average over each window: ``[sensor, window_end, average, count]``."""

    outputs = ["sensor", "window_end", "average", "count"]

    def process_window(self, window: TupleWindow) -> None:
        values: dict[str, list[float]] = {}
        for tup in window.get():
            values.setdefault(tup.values.sensor, []).append(tup.values.value)
        for sensor, readings in sorted(values.items()):
            self.emit([sensor, window.end_ts, sum(readings) / len(readings), len(readings)])


class PrinterBolt(Bolt):
    """Logs every average (and every late reading)."""

    outputs: list[Any] = []

    def process(self, tup: Any) -> None:
        self.logger.info("%s %s", tup.stream, list(tup.values))


WINDOW = {
    "window": Duration.seconds(5), "slide": Duration.seconds(1), "timestamp_field": "ts",
    "lag": Duration.seconds(1), "watermark_interval": Duration.millis(500),
    "late_tuple_stream": "late",
}
"""The averages' window: 5 s sliding every 1 s in event time, the watermark 1 s behind."""


class RollingAverage(Topology):
    readings = SensorSpout.spec()
    average = AverageBolt.spec(inputs={readings: Grouping.fields("sensor")}, par=2, **WINDOW)
    printer = PrinterBolt.spec(inputs=[average, average["late"]])
