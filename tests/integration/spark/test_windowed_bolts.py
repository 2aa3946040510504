"""The rolling-average example (a windowed bolt in event time) on Spark local mode.

Every average it emits is the average a reference computes here, for every window the
watermark has passed, and no reading is late.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import RecordingBolt, read_events

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

from rolling_average import (  # noqa: E402 - examples/ is put on the path just above
    START_TS,
    WINDOW,
    AverageBolt,
    SensorSpout,
    reading,
)

READINGS = 600
LENGTH_MS, SLIDE_MS, LAG_MS = 5000, 1000, 1000


class RecordedAverage(Topology):
    readings = SensorSpout.spec()
    average = AverageBolt.spec(inputs={readings: Grouping.fields("sensor")}, par=2, **WINDOW)
    sink = RecordingBolt.spec(inputs=[average, average["late"]])


def expected_rows(sensors_of_task: dict[int, set[str]]) -> set[tuple[Any, ...]]:
    """Each sensor's average over each window its task's watermark has passed."""
    readings = [reading(i) for i in range(READINGS)]
    rows = set()
    for sensors in sensors_of_task.values():
        mine = sorted((r for r in readings if r[0] in sensors), key=lambda r: r[1])
        watermark = max(r[1] for r in mine) - LAG_MS
        for end in range(START_TS, watermark, SLIDE_MS):  # windows end below the watermark
            for sensor in sorted(sensors):
                values = [r[2] for r in mine if r[0] == sensor and end - LENGTH_MS < r[1] <= end]
                if values:
                    rows.add((sensor, end, round(sum(values) / len(values), 9), len(values)))
    return rows


def test_rolling_average_example_matches_reference(cluster: LocalCluster,
                                                   tmp_path: Path) -> None:
    cluster.submit_topology("rolling-average", RecordedAverage, conf={
        "test.dir": str(tmp_path), "rolling.readings": READINGS,
        "topology.message.timeout.secs": 120})  # no replay while the test runs

    def received() -> list[dict[str, Any]]:
        return [e for e in read_events(tmp_path, "sink") if e["event"] == "tuple"]

    def sensors_of_task() -> dict[int, set[str]]:
        tasks: dict[int, set[str]] = {}
        for event in received():
            if event["stream"] == "default":
                tasks.setdefault(event["source_task"], set()).add(event["values"][0])
        return tasks

    def complete() -> bool:
        tasks = sensors_of_task()
        if sum(len(sensors) for sensors in tasks.values()) < 3:
            return False
        want = expected_rows(tasks)
        return len(want) <= len({tuple(e["values"]) for e in received()})

    wait_for(complete, timeout=120, message="every due window's averages")
    cluster.kill_topology("rolling-average")
    events = received()
    assert [e for e in events if e["stream"] == "late"] == []
    got = [(v[0], v[1], round(v[2], 9), v[3]) for v in (e["values"] for e in events)]
    assert len(got) == len(set(got)), "a window fired twice"
    assert set(got) == expected_rows(sensors_of_task())


