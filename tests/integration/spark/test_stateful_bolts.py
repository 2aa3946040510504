"""A StatefulBolt on Spark local mode counts every key exactly.

Its state is started from topology.state.provider in the executor process before the first
tuple (no failures here; recovery needs the checkpoint wiring).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import KEYS, NumberSpout, RecordingBolt, read_events
from tests.integration.spark.stateful_components import StatefulKeyCount

COUNT = 300


class StatefulCount(Topology):
    numbers = NumberSpout.spec()
    count = StatefulKeyCount.spec(inputs={numbers: Grouping.fields("key")}, par=2)
    sink = RecordingBolt.spec(inputs=[count])


def test_stateful_bolt_counts_every_key(cluster: LocalCluster, tmp_path: Path) -> None:
    cluster.submit_topology("stateful-count", StatefulCount, conf={
        "test.dir": str(tmp_path), "test.count": COUNT})

    def acked() -> int:
        return sum(e["event"] == "ack" for e in read_events(tmp_path, "numbers"))

    wait_for(lambda: acked() == COUNT, timeout=90, message="every number acked")
    cluster.kill_topology("stateful-count")
    rows = [e["values"] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"]
    final: dict[str, int] = {}
    for key, count in rows:
        final[key] = max(final.get(key, 0), count)
    assert final == dict(Counter(f"k{n % KEYS}" for n in range(COUNT)))
    assert len(rows) == COUNT  # one running count per tuple: none counted twice
