"""FileBolt on real Spark local mode, on the local disk through fsspec.

Without checkpoints every tuple is acked once its record is synced and the files hold every
record; with checkpoints every 2 windows, a kill -9 of the sink's executor mid-run still
leaves every record in the published files exactly once, and no pending file behind.
"""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from sparkstorm import Topology
from sparkstorm.connectors.files import FileBolt
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.checkpoint_components import PositionSpout
from tests.integration.spark.components import NumberSpout, read_events

pytestmark = pytest.mark.timeout(150)


def _published(folder: Path) -> list[int]:
    """The numbers in the published JSON-lines files (pending ones are hidden)."""
    numbers = []
    for path in sorted(folder.glob("*.jsonl")):
        numbers.extend(json.loads(line)["n"] for line in path.read_text().splitlines())
    return numbers


def _pending(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".*.pending"))


# slow: test_file_spout.py's test_files_are_read_once_each_and_a_bad_one_goes_to_the_bad_folder
# covers the sink without checkpoints (sync, acks, rotation, move_to) in the same way
@pytest.mark.slow
def test_the_sink_writes_every_tuple_and_acks_it_once_synced(
        cluster: LocalCluster, tmp_path: Path) -> None:
    count = 300
    out, done = tmp_path / "out", tmp_path / "done"

    class ToFiles(Topology):
        numbers = NumberSpout.spec()
        sink = FileBolt.spec(inputs=[numbers], path=str(out), sync_count=50,
                             rotate_size_bytes=2000, move_to=str(done))

    cluster.submit_topology("file-sink", ToFiles, conf={
        "test.dir": str(tmp_path), "test.count": count})
    wait_for(lambda: len({e["n"] for e in read_events(tmp_path, "numbers")
                          if e["event"] == "ack"}) == count, timeout=90,
             message="every tuple acked")
    cluster.kill_topology("file-sink")  # closes the open file, which is then rotated
    numbers = _published(done)
    assert sorted(numbers) == list(range(count))
    rotated = sorted(done.glob("*.jsonl"))
    assert len(rotated) > 1, "2000-byte files: several rotations"
    assert all(p.name.startswith("sink-") for p in rotated)
    assert {int(p.name.split("-")[2]) for p in rotated} == set(range(len(rotated)))
    assert not list(out.glob("*.jsonl")), "every closed file was moved to move_to"


def _kill(runner: TopologyDriver, component: str) -> None:
    gid = next(e.gid for e in runner.plan.executors if e.component == component)
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)


def test_with_checkpoints_a_killed_sink_leaves_every_record_exactly_once(
        cluster: LocalCluster, tmp_path: Path) -> None:
    count = 600
    out = tmp_path / "out"

    class Checkpointed(Topology):
        numbers = PositionSpout.spec()
        sink = FileBolt.spec(inputs=[numbers], path=str(out))

    runner = cluster.submit_topology("file-sink-exact", Checkpointed, conf={
        "test.dir": str(tmp_path), "test.count": count, "topology.checkpoint.windows": 2,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints"),
        "topology.max.spout.pending": 100})
    wait_for(lambda: len(_published(out)) > 0, timeout=60,
             message="a checkpoint committed and its files published")
    assert len(set(_published(out))) < count, "killed mid-run"
    _kill(runner, "sink")
    wait_for(lambda: len(set(_published(out))) == count and not _pending(out), timeout=120,
             message="every record published, nothing pending")
    assert runner.stats.rollbacks >= 1
    numbers = _published(out)
    twice = {n: c for n, c in Counter(numbers).items() if c > 1}
    assert not twice, f"records written twice: {sorted(twice)[:20]}"
    assert sorted(numbers) == list(range(count))
    cluster.kill_topology("file-sink-exact")
