"""Components of the Flux grouping tests, named by import path in ``flux/*.yaml``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Spout, Stream


class NumberSpout(Spout):
    """Emits ``flux.test.count`` numbers (tracked).

    Each is also emitted on the direct stream to the lowest task of the component
    ``flux.test.direct.target``.
    """

    outputs = [Stream(["n", "key"]), Stream(["n", "key"], name="direct", direct=True)]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.total = int(conf["flux.test.count"])
        self.next = 0
        target = conf["flux.test.direct.target"]
        self.direct_task = min(int(task) for task, component in
                               context["task->component"].items() if component == target)

    def next_tuple(self) -> None:
        if self.next >= self.total:
            return
        n, self.next = self.next, self.next + 1
        values = [n, f"k{n % 4}"]
        self.emit(values, tup_id=n)
        self.emit(values, tup_id=f"d{n}", stream="direct", direct_task=self.direct_task)


class RecordBolt(Bolt):
    """Appends ``n key`` of every tuple to ``<flux.test.out>/<component>-<task>.txt``."""

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.path = Path(conf["flux.test.out"]) / f"{self.component_name}-{context['taskid']}.txt"
        self.path.touch()

    def process(self, tup: Any) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(f"{tup.values.n} {tup.values.key}\n")
