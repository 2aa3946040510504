"""Acking + checkpoints stay exact through a stall longer than the message timeout (issue 30).

The count bolt blocks for a while in one window, so no window runs, while the paced spout
keeps emitting into its buffer. The tuples that wait there longer than
``topology.message.timeout.secs`` must not time out: their trees start when the window after
the stall takes them, which counts them, so a replay would be counted twice (it was: the
chaos run with host A killed ended 9 % high). The committed counts must be exact, every id
acked once and nothing failed. The same on one executor without Spark:
``tests/unit/engine/test_spout_timeouts.py``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.checkpoint_components import PacedPositionSpout, StallingCount
from tests.integration.spark.components import KEYS, read_events
from tests.integration.spark.test_checkpoints import _committed

COUNT, RATE, STALL_AT = 100, 100, 10
"""Ids, new ids per second, and the id whose processing stalls: most ids are emitted during
the stall, and wait in the spout's buffer for up to ``STALL_SECS``."""
TIMEOUT_SECS, STALL_SECS = 1, 2.5
EXPECTED = dict(Counter(f"k{n % KEYS}" for n in range(COUNT)))


class StallTopology(Topology):
    numbers = PacedPositionSpout.spec()
    count = StallingCount.spec(inputs={numbers: Grouping.fields("key")})


def test_tuples_a_stall_held_past_the_timeout_are_counted_once(cluster: LocalCluster,
                                                               tmp_path: Path) -> None:
    runner = cluster.submit_topology("stall", StallTopology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT, "test.rate": RATE,
        "test.stall_at": STALL_AT, "test.stall_secs": STALL_SECS,
        "topology.message.timeout.secs": TIMEOUT_SECS,
        "topology.checkpoint.windows": 2, "topology.checkpoint.dir": str(tmp_path / "cp"),
        "topology.max.spout.pending": 2 * COUNT})

    def finished() -> tuple[set[int], dict[str, int]] | None:
        """Every id acked in a committed checkpoint, or (failing fast) a replay."""
        _, acked, counts = _committed(runner)
        replayed = any(e["event"] == "fail" for e in read_events(tmp_path, "numbers"))
        over = any(n > EXPECTED[key] for key, n in counts.items())
        return (acked, counts) if len(acked) == COUNT or replayed or over else None

    acked, counts = wait_for(finished, 90, message="a checkpoint with every id acked")
    spout = runner.stats.summary()["components"]["numbers"]
    cluster.kill_topology("stall")
    assert (tmp_path / "stalled").exists(), "the count bolt never stalled its window"
    events = read_events(tmp_path, "numbers")
    assert [e["n"] for e in events if e["event"] == "fail"] == [], "tuples timed out"
    assert Counter(e["n"] for e in events if e["event"] == "ack") == dict.fromkeys(
        range(COUNT), 1), "every id acked once"
    assert counts == EXPECTED, "counted twice"
    assert acked == set(range(COUNT))
    assert spout["timed_out"] == 0 and spout["failed"] == 0
    assert runner.stats.rollbacks == 0, "the stall itself must not roll back"
