"""Spouts hear a window's verdicts as soon as it ends, not with the next window (real Spark).

Fixed windows with a long period, one at a time: the window that carried the last of the
spout's tuples ends, and the spout's ``ack`` calls follow before the next window starts.
With ``topology.window.verdicts.push: false`` they come only with the next window's spout
stage.
"""

from __future__ import annotations

from pathlib import Path

from sparkstorm import Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, RecordingBolt, read_events

COUNT = 20
PERIOD_MS = 4000
"""Far longer than a light window's job, so that the next window is seconds away."""


class NumbersToSink(Topology):
    numbers = NumberSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


def _windows_when_all_acked(cluster: LocalCluster, tmp_path: Path, push: bool | None
                            ) -> tuple[int, int]:
    """Windows started when the last ack came, and the last window that carried tuples.

    ``push`` None leaves ``topology.window.verdicts.push`` at its default.
    """
    name = f"push-{str(push).lower()}"
    conf = {"test.dir": str(tmp_path), "test.count": COUNT,
            "topology.window.ms": PERIOD_MS, "topology.window.target.latency.ms": 0,
            "topology.window.overlap": False}
    if push is not None:
        conf["topology.window.verdicts.push"] = push
    runner = cluster.submit_topology(name, NumbersToSink, conf=conf)

    def acked() -> int:
        return sum(1 for e in read_events(tmp_path, "numbers") if e["event"] == "ack")

    wait_for(lambda: acked() == COUNT, timeout=120, message="every number acked")
    started = runner.window
    windows = runner.stats.summary()["recent_windows"]
    cluster.kill_topology(name)
    carried = [w["window"] for w in windows
               if w["components"].get("numbers", {}).get("emitted")]
    assert sum(w["components"]["numbers"]["emitted"] for w in windows
               if w["window"] in carried) == COUNT
    return started, max(carried)


def test_the_spout_hears_its_acks_before_the_next_window(cluster: LocalCluster,
                                                         tmp_path: Path) -> None:
    started, carrier = _windows_when_all_acked(cluster, tmp_path, push=None)  # the default
    assert started == carrier + 1  # no window after the carrier had started


def test_without_the_push_the_acks_wait_for_the_next_window(cluster: LocalCluster,
                                                            tmp_path: Path) -> None:
    started, carrier = _windows_when_all_acked(cluster, tmp_path, push=False)
    assert started == carrier + 2


def test_acks_pushed_by_the_last_window_of_a_shutdown_are_counted(cluster: LocalCluster,
                                                                   tmp_path: Path) -> None:
    """The spout's statistics count the acks of the shutdown's last window.

    That window completes the trees still open, and the spout acks them at once (pushed);
    no window of the drain would follow to carry the spout's counts of them.
    """
    # small fixed windows: the topology is still emitting when it is killed
    conf = {"test.dir": str(tmp_path), "test.count": 5000, "topology.window.ms": 100,
            "topology.window.target.latency.ms": 0, "topology.spout.buffer.size": 100}
    runner = cluster.submit_topology("drained", NumbersToSink, conf=conf)

    def acks() -> int:
        return sum(1 for e in read_events(tmp_path, "numbers") if e["event"] == "ack")

    wait_for(lambda: acks() > 0, timeout=120, message="the first acks")
    cluster.kill_topology("drained")  # trees in flight: the drain's windows complete them
    heard = acks()
    assert heard > 0, "the spout heard acks"
    counted = runner.stats.summary()["components"]["numbers"]["acked"]
    assert counted == heard, f"the spout acked {heard} ids, its statistics say {counted}"
