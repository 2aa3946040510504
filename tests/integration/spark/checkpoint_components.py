"""Components of the checkpoint tests (imported by class path in executor processes).

The spout keeps its position, its replay queue and the ids acked so far in its own
attributes, so a rollback rewinds all of them; the count bolt keeps its counts in its
``KeyValueState``. A committed checkpoint therefore holds both sides of the guarantee: the
ids the spout saw acked and the counts of exactly those tuples.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from sparkstorm import FailedException, Spout, StatefulBolt, WindowedBolt
from sparkstorm.state import KeyValueState
from sparkstorm.topology.windowed_bolts import Count
from tests.integration.spark.batch_components import NumberedBatchSpout
from tests.integration.spark.components import KEYS, Recorder


class PositionSpout(Spout):
    """Emits ``[n, key]`` for n in 0..test.count-1 with message id n; replays failures."""

    outputs = ["n", "key"]
    transient = ("record",)  # a file handle: re-opened by initialize() after a restore

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.count = int(conf["test.count"])
        self.next_n = 0
        self.replay: list[int] = []
        self.acked: set[int] = set()

    def next_tuple(self) -> None:
        if self.replay:
            n = self.replay.pop(0)
        elif self.next_n < self.count:
            n = self.next_n
            self.next_n += 1
        else:
            return
        self.emit([n, f"k{n % KEYS}"], tup_id=n)

    def ack(self, tup_id: Any) -> None:
        # `again`: acked before in this timeline (a rollback rewinds `acked` with the rest)
        self.record("ack", n=tup_id, again=tup_id in self.acked)
        self.acked.add(tup_id)

    def fail(self, tup_id: Any) -> None:
        self.replay.append(tup_id)
        self.record("fail", n=tup_id)

    # Storm's IStatefulComponent hooks, which any component may define (a connector commits
    # its source's offsets on pre_commit)
    def pre_prepare(self, txid: int) -> None:
        self.record("pre_prepare", txid=txid)

    def pre_commit(self, txid: int) -> None:
        self.record("pre_commit", txid=txid)

    def pre_rollback(self) -> None:
        self.record("pre_rollback")


class PositionBatchSpout(NumberedBatchSpout):
    """The columnar ``PositionSpout``: batches of ``[n, key]`` rows, one message id per batch.

    Its position, open batches, replay queue and acked numbers are attributes, so a
    rollback rewinds them together with the count bolt's state.
    """

    outputs = ["n", "key"]
    transient = ("record",)
    batch_rows_default = 25

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        super().initialize(conf, context)
        self.acked: set[int] = set()

    def columns(self, numbers: list[int]) -> pa.RecordBatch:
        return pa.RecordBatch.from_arrays(
            [pa.array(numbers, pa.int64()), pa.array([f"k{n % KEYS}" for n in numbers])],
            ["n", "key"])

    def ack(self, tup_id: Any) -> None:
        numbers = self.open.pop(tup_id)
        for n in numbers:  # as PositionSpout: `again` is an ack this timeline had seen
            self.record("ack", n=n, again=n in self.acked)
        self.acked.update(numbers)

    def fail(self, tup_id: Any) -> None:
        self.replay.append(tup_id)
        self.record("fail", n=tup_id)


class CheckpointedCount(StatefulBolt):
    """Counts tuples per key in its state; raises once at ``test.raise_at``.

    With ``test.fail_at`` it fails that tuple with Storm's ``FailedException`` instead (the
    executor lives on), ``test.fail_times`` times (1 unless set). A marker file under
    ``test.dir`` counts what it did, since its own attributes roll back.
    """

    outputs = ["key", "count"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        raise_at = conf.get("test.raise_at", conf.get("test.fail_at"))
        self.raise_at = None if raise_at is None else int(raise_at)
        self.explicit = conf.get("test.fail_at") is not None
        self.times = int(conf.get("test.fail_times", 1))
        self.marker = Path(conf["test.dir"]) / "raised"

    def init_state(self, state: KeyValueState) -> None:
        self.counts = state

    def process(self, tup: Any) -> None:
        n, key = tup.values
        if n == self.raise_at and (done := self._failed_so_far()) < self.times:
            with self.marker.open("a") as marker:
                marker.write(f"{os.getpid()}\n")
            what = "raising once" if self.times == 1 else f"failing ({done + 1} of {self.times})"
            msg = f"{what} at {n}"
            raise (FailedException if self.explicit else RuntimeError)(msg)
        self.counts.put(key, self.counts.get(key, 0) + 1)
        self.emit([key, self.counts.get(key)])

    def _failed_so_far(self) -> int:
        return len(self.marker.read_text().split()) if self.marker.exists() else 0


class PacedPositionSpout(PositionSpout):
    """:class:`PositionSpout` at ``test.rate`` new ids per second, so ids keep coming in a stall.

    Replays are not paced.
    """

    transient = ("record", "next_at")

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        super().initialize(conf, context)
        self.period = 1.0 / float(conf["test.rate"])
        self.next_at = 0.0

    def next_tuple(self) -> None:
        if not self.replay:
            now = time.monotonic()
            if now < getattr(self, "next_at", 0.0):
                return
            self.next_at = now + self.period
        super().next_tuple()


class StallingCount(CheckpointedCount):
    """:class:`CheckpointedCount` that blocks ``test.stall_secs`` once, in number ``test.stall_at``.

    Its window (and so the windows after it) stall meanwhile while the spout keeps emitting
    into its buffer. A marker file under ``test.dir`` says it did, as its attributes roll back.
    """

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        super().initialize(conf, context)
        self.stall_at = int(conf["test.stall_at"])
        self.stall_secs = float(conf["test.stall_secs"])
        self.stalled = Path(conf["test.dir"]) / "stalled"

    def process(self, tup: Any) -> None:
        if tup.values.n == self.stall_at and not self.stalled.exists():
            self.stalled.write_text(str(time.time()))
            time.sleep(self.stall_secs)  # the stall this component stands for
        super().process(tup)


class TenSums(WindowedBolt):
    """Emits the numbers of each tumbling window of 10 tuples, anchored to the window."""

    outputs = ["numbers"]

    def process_window(self, window: Any) -> None:
        self.emit([sorted(t.values.n for t in window.get())])

    @classmethod
    def declared(cls, source: Any) -> Any:
        """This bolt fed by ``source`` (one task: windows of the whole stream)."""
        return cls.spec(inputs=[source], window=Count.of(10))


class WindowRecords(StatefulBolt):
    """Keeps every window it receives in its state, under the window's arrival number."""

    outputs: list[Any] = []

    def init_state(self, state: KeyValueState) -> None:
        self.windows = state

    def process(self, tup: Any) -> None:
        self.windows.put(len(self.windows), list(tup.values.numbers))
