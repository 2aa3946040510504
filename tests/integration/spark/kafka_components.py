"""Components of the Kafka connector's tests (module level: executor processes import them)."""

from __future__ import annotations

from typing import Any

from sparkstorm import Bolt, StatefulBolt
from sparkstorm.state import KeyValueState
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
