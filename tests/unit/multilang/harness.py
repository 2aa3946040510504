"""Drive ShellBolt/ShellSpout through real pipes without the engine.

A fake collector in place of the executor's, the instance attributes the executor sets, and probe
commands.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from sparkstorm import Grouping, Stream
from sparkstorm.engine.executor.routing import StreamRoute
from sparkstorm.engine.plan.execution import Subscription
from sparkstorm.multilang import ShellBolt, ShellSpout
from sparkstorm.topology.tuple import Tuple

PROBES = Path(__file__).resolve().parent / "probes"
PROBE = str(PROBES / "probe.py")
TASK = 3
FAST = {"topology.subprocess.timeout.secs": 1}
"""For the tests of the subprocess timeout itself."""
PATIENT = {"topology.subprocess.timeout.secs": 30}
"""For every other test: a probe's start-up took over 1 s once on a loaded machine (CI's two
cores), and its handshake timed out before the test's fault was sent."""


def probe(mode: str) -> list[str]:
    """The command running the raw-protocol probe in ``mode``."""
    return [sys.executable, PROBE, mode]


class FakeCollector:
    """Records what the shell component does; routes every stream to tasks 7 and 8.

    Direct emits are routed as the engine does (only tasks 7 and 8 subscribe, directly, to
    ``direct``); ``nobody`` has no subscribers.
    """

    def __init__(self) -> None:
        self.emits: list[dict[str, Any]] = []
        self.acked: list[Tuple] = []
        self.failed: list[Tuple] = []
        self.causes: list[str] = []
        self.errors: list[str] = []

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: int | None,
             need_task_ids: bool, tup_id: Any) -> list[int] | None:
        if direct_task is not None:
            tasks = DIRECT_ROUTE.tasks_for(list(values), direct_task)
        elif stream == "nobody":
            tasks = NOBODY_ROUTE.tasks_for(list(values), None)
        else:
            tasks = [7, 8]
        self.emits.append({"values": values, "stream": stream, "anchors": anchors,
                           "task": direct_task, "tup_id": tup_id})
        return tasks if need_task_ids else None

    def ack(self, tup: Tuple) -> None:
        if not tup.done:
            tup.done = True
            self.acked.append(tup)

    def fail(self, tup: Tuple, reason: str | None = None, cause: str = "explicit") -> None:
        if not tup.done:
            tup.done = True
            self.failed.append(tup)
            self.causes.append(cause)

    def reset_timeout(self, tup: Tuple) -> None:
        pass

    def report_error(self, text: str) -> None:
        self.errors.append(text)


OUTPUTS = [Stream(["a", "b", "c", "d"]), Stream(["x"], name="direct", direct=True),
           Stream(["x"], name="nobody")]
DIRECT_ROUTE = StreamRoute("probe", OUTPUTS[1],
                           [Subscription("sink", Grouping.DIRECT, (7, 8))], random.Random(0))
NOBODY_ROUTE = StreamRoute("probe", OUTPUTS[2], [], random.Random(0))
"""A declared stream no component subscribes to: the engine routes its tuples nowhere."""


def context(name: str = "probe") -> dict[str, Any]:
    """A handshake context shaped as the executor's."""
    return {
        "taskid": TASK, "componentid": name,
        "task->component": {"1": "src", "3": name, "7": "sink", "8": "sink"},
        "streams": ["default", "direct", "nobody"],
        "stream->outputfields": {"default": ["a", "b", "c", "d"], "direct": ["x"],
                                 "nobody": ["x"]},
        "stream->target->grouping": {"default": {"sink": {"type": "SHUFFLE"}}},
        "source->stream->grouping": {"src": {"default": {"type": "SHUFFLE"}}},
        "source->stream->fields": {"src": {"default": ["word", "n"]}},
    }


def start(cls: type, command: list[str], conf: dict[str, Any] | None = None,
          **settings: Any) -> Any:
    """An initialized instance of ``cls`` (ShellBolt or ShellSpout) running ``command``."""
    spec = cls.spec(name="probe", command=command, outputs=OUTPUTS, **settings)
    instance = cls()
    instance._collector = FakeCollector()
    instance.component_name = "probe"
    instance.component_spec = spec
    merged = {"topology.name": "t", "topology.subprocess.timeout.secs": 5, **(conf or {})}
    instance.storm_conf = merged
    instance.context = context()
    instance.initialize(merged, instance.context)
    return instance


def bolt(command: list[str], conf: dict[str, Any] | None = None, **settings: Any) -> ShellBolt:
    """A started ShellBolt."""
    result: ShellBolt = start(ShellBolt, command, conf, **settings)
    return result


def spout(command: list[str], conf: dict[str, Any] | None = None, **settings: Any) -> ShellSpout:
    """A started ShellSpout."""
    result: ShellSpout = start(ShellSpout, command, conf, **settings)
    return result


_counter = [0]


def tup(*values: Any, stream: str = "default", component: str = "src", task: int = 1) -> Tuple:
    """An input tuple as the executor builds it."""
    _counter[0] += 1
    return Tuple(_counter[0], component, stream, task, list(values), ("word", "n"))


def tick(freq: int = 5) -> Tuple:
    """A tick tuple as the executor builds it."""
    return tup(freq, stream="__tick", component="__system", task=-1)


def transcript(directory: Path, suffix: str) -> bytes:
    """All bytes of the transcripts with ``suffix`` (``to_child`` or ``from_child``)."""
    return b"".join(p.read_bytes() for p in sorted(directory.glob(f"*.{suffix}")))
