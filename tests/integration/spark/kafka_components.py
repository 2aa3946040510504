"""Components of the Kafka connector's tests (module level: executor processes import them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparkstorm import Bolt, StatefulBolt
from sparkstorm.state import KeyValueState
from tests.integration.spark.batch_components import NumberedBatchSpout
from tests.integration.spark.components import Recorder


class KafkaRecordingBolt(Bolt):
    """Records each record tuple it gets; fails some, per the conf.

    ``test.fail_first``: ``[partition, offset]`` pairs failed the first time they arrive;
    ``test.fail_always``: pairs failed every time. Reads the translator's default fields.
    """

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.fail_first = {tuple(pair) for pair in conf.get("test.fail_first", [])}
        self.fail_always = {tuple(pair) for pair in conf.get("test.fail_always", [])}
        self.seen: set[tuple[int, int]] = set()

    def process(self, tup: Any) -> None:
        topic, partition, offset, key, value = tup.values
        where = (partition, offset)
        self.record("tuple", topic=topic, partition=partition, offset=offset, key=key,
                    value=value, stream=tup.stream, source_task=tup.task)
        if where in self.fail_always or (where in self.fail_first and where not in self.seen):
            self.seen.add(where)
            self.record("failed", partition=partition, offset=offset)
            self.fail(tup)


class KafkaValueCount(StatefulBolt):
    """Counts each record's value in its ``KeyValueState`` (every value is produced once)."""

    outputs: list[Any] = []

    def init_state(self, state: KeyValueState) -> None:
        self.counts = state

    def process(self, tup: Any) -> None:
        value = tup.values.value
        self.counts.put(value, self.counts.get(value, 0) + 1)


class GatedValueBatchSpout(NumberedBatchSpout):
    """Batches of ``[n, value]`` rows (``value`` ``"v<n>"``), one id per batch, replayed whole.

    Numbers from ``test.gate_at`` on wait until the file ``<test.dir>/gate`` exists (replays
    do not wait), as ``ValueSpout`` does: a test opens it once the outage began. Records
    ``ack`` and ``fail`` per number.
    """

    outputs = ["n", "value"]
    batch_rows_default = 10

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        super().initialize(conf, context)
        self.gate_at = int(conf["test.gate_at"])
        self.gate = Path(conf["test.dir"]) / "gate"

    def columns(self, numbers: list[int]) -> dict[str, list[Any]]:  # type: ignore[override]
        return {"n": numbers, "value": [f"v{n}" for n in numbers]}

    def next_batch(self, max_rows: int) -> None:
        if not self.replay and self.next_n >= self.gate_at and not self.gate.exists():
            return
        super().next_batch(max_rows)

    def ack(self, tup_id: Any) -> None:
        for n in self.open.pop(tup_id, []):
            self.record("ack", n=n)

    def fail(self, tup_id: Any) -> None:
        if tup_id in self.open:
            self.replay.append(tup_id)
            for n in self.open[tup_id]:
                self.record("fail", n=n)
