"""What a Kafka topology with checkpoints has committed, read while it runs (kill -9 tests).

A :class:`Cut` is the newest committed checkpoint as the tests need it: the next offset of
each partition in the ``KafkaSpout``'s snapshot and the counts of a counting bolt. Each poll
of a :class:`CutWatch` also checks the property the checkpoint-aligned commits promise: the
offsets committed in Kafka are never ahead of that checkpoint's spout snapshot.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from sparkstorm.checkpoint import CheckpointError, CheckpointStore
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.engine.driver.checkpoints import WindowCheckpoints
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart, part_name
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.kafka_broker import committed

PURGE_RETRIES = 10
"""Reads of the newest checkpoint retried when a newer commit purged it meanwhile."""


@dataclass
class Cut:
    """The newest committed checkpoint: the spout's next offsets and the bolt's counts."""

    window: int | None
    points: dict[int, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def read_cut(runner: TopologyDriver, spout: str, counter: str) -> Cut:
    """The newest committed checkpoint of ``runner``: ``spout``'s offsets, ``counter``'s counts."""
    assert isinstance(runner.checkpointing, WindowCheckpoints)
    store = runner.checkpointing.store
    for _ in range(PURGE_RETRIES - 1):
        try:
            return _read(store, runner, spout, counter)
        except CheckpointError:  # purged under our feet by a newer commit
            continue
    return _read(store, runner, spout, counter)


def _read(store: CheckpointStore, runner: TopologyDriver, spout: str, counter: str) -> Cut:
    window = store.latest_committed()
    if window is None:
        return Cut(None)
    points: dict[int, int] = {}
    counts: Counter[str] = Counter()
    for executor in runner.plan.executors:
        if executor.component not in (spout, counter):
            continue
        part = ExecutorPart.decode(store.read_part(window, part_name(executor.gid)))
        for blob in part.tasks.values():
            data = read_snapshot(blob)["data"]
            if executor.component == spout:
                for (_, partition), offsets in data["parts"].items():
                    points[partition] = offsets.commit_point()
            else:
                counts.update(data)
    return Cut(window, points, dict(counts))


@dataclass
class CutWatch:
    """Polls a run's :class:`Cut`; each poll checks Kafka's offsets against it."""

    kafka: str
    runner: TopologyDriver
    group: str
    topic: str
    partitions: int
    spout: str
    counter: str
    checks: int = 0

    def cut(self) -> Cut:
        # Kafka first: an offset committed then was covered by a checkpoint committed then
        in_kafka = committed(self.kafka, self.group, self.topic, self.partitions)
        cut = read_cut(self.runner, self.spout, self.counter)
        for partition, offset in enumerate(in_kafka):
            if offset >= 0:
                assert offset <= cut.points.get(partition, -1), \
                    f"partition {partition}: Kafka at {offset}, checkpoint at {cut.points}"
        self.checks += 1
        return cut

    def until(self, condition: Callable[[Cut], bool], message: str,
              timeout: float = 90) -> Cut:
        """The first polled cut that meets ``condition`` (fails after ``timeout`` seconds)."""
        def met() -> Cut | None:
            cut = self.cut()
            return cut if condition(cut) else None
        found: Cut = wait_for(met, timeout, message=message, interval=0.3)
        return found

    def committed_offsets(self) -> list[int]:
        """The offsets committed in Kafka now, per partition (-1: none)."""
        return committed(self.kafka, self.group, self.topic, self.partitions)


def kill_executor(runner: TopologyDriver, component: str) -> None:
    """Send SIGKILL to ``component``'s first executor process."""
    gid = next(e.gid for e in runner.plan.executors if e.component == component)
    os.kill(runner.pool.pids()[gid], signal.SIGKILL)
