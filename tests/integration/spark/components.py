"""Components for the Spark integration tests.

They live at module level so executor processes can import them. What happens inside an
executor process is observed through JSON-lines files under the conf's ``test.dir``: each
task appends one record per event and flushes, so the test reads exactly what happened.
"""

from __future__ import annotations

import json
import os
import signal
import time
import zlib
from pathlib import Path
from typing import Any

from sparkstorm import Bolt, Spout, Stream
from tests.jsonl import whole_records

KEYS = 7


class Recorder:
    """Appends events of one task to ``<test.dir>/<component>-<task>.jsonl``."""

    def __init__(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        directory = Path(conf["test.dir"])
        name = f"{context['componentid']}-{context['taskid']}.jsonl"
        self.handle = open(directory / name, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        self.task = context["taskid"]

    def __call__(self, event: str, **fields: Any) -> None:
        self.handle.write(json.dumps({"event": event, "task": self.task, "pid": os.getpid(),
                                      "time": time.time(), **fields}) + "\n")


def read_events(directory: Path, component: str | None = None) -> list[dict[str, Any]]:
    """Every recorded event (of ``component``'s tasks, if given)."""
    events = []
    for path in sorted(directory.glob("*.jsonl")):
        if component is None or path.name.rsplit("-", 1)[0] == component:
            events.extend(whole_records(path))
    return events


class NumberSpout(Spout):
    """Emits ``test.count`` tuples ``[n, key]`` with message id n; replays what fails.

    Records ``emit``, ``ack``, ``fail`` and the number in flight at each ``next_tuple``.
    """

    outputs = ["n", "key"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)
        self.count = int(conf["test.count"])
        self.reliable = bool(conf.get("test.reliable", True))
        self.next_n = 0
        self.in_flight: set[int] = set()
        self.replay: list[int] = []

    def next_tuple(self) -> None:
        if self.replay:
            n = self.replay.pop(0)
        elif self.next_n < self.count:
            n = self.next_n
            self.next_n += 1
        else:
            return
        self.in_flight.add(n)
        self.record("emit", n=n, in_flight=len(self.in_flight))
        self.emit(self.values(n), tup_id=n if self.reliable else None)

    def values(self, n: int) -> list[Any]:
        """The tuple emitted for ``n``."""
        return [n, f"k{n % KEYS}"]

    def ack(self, tup_id: Any) -> None:
        self.in_flight.discard(tup_id)
        self.record("ack", n=tup_id)

    def fail(self, tup_id: Any) -> None:
        self.in_flight.discard(tup_id)
        self.record("fail", n=tup_id)
        self.replay.append(tup_id)


class PacedNumberSpout(NumberSpout):
    """NumberSpout that emits number n no earlier than ``n / test.rate`` s after number 0's ack.

    A light, steady load: a spout behind a queue that receives ``test.rate`` tuples per second
    (it catches up after a pause instead of skipping). Number 0 goes first and alone, so
    that Spark's first, slow jobs are over when the paced ones start.
    """

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        super().initialize(conf, context)
        self.rate = float(conf["test.rate"])
        self.started: float | None = None

    def next_tuple(self) -> None:
        due = self.started is not None and (
            self.replay or time.monotonic() - self.started >= self.next_n / self.rate)
        if self.next_n == 0 or due:
            super().next_tuple()

    def ack(self, tup_id: Any) -> None:
        super().ack(tup_id)
        if self.started is None:
            self.started = time.monotonic() - 1.0 / self.rate


class NoReplaySpout(NumberSpout):
    """NumberSpout that records a failed number and gives it up instead of replaying it."""

    def fail(self, tup_id: Any) -> None:
        self.in_flight.discard(tup_id)
        self.record("fail", n=tup_id)


def _nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


class PoisonSpout(NoReplaySpout):
    """Every tenth number carries a key the wire cannot encode.

    In turn: a set, a string with a lone surrogate, a list nested too deep.
    """

    def values(self, n: int) -> list[Any]:
        if n % 10:
            return super().values(n)
        return [n, ({n}, "bad \udcff", _nested(5000))[n // 10 % 3]]


class SetEmittingBolt(Bolt):
    """Passes numbers on, but as a set (unencodable) for every number ending in 3.

    Records each tuple it runs.
    """

    outputs = ["n", "key"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        n = tup.values.n
        self.record("tuple", n=n)
        self.emit([n, {n}] if n % 10 == 3 else list(tup.values))


class RecordingBolt(Bolt):
    """Records every tuple it receives (task, source, stream, values)."""

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        self.record("tuple", source=tup.component, stream=tup.stream, source_task=tup.task,
                    values=list(tup.values))

    def process_tick(self, tup: Any) -> None:
        self.record("tick", source=tup.component, stream=tup.stream, values=list(tup.values))


class CheckpointedNumberSpout(NumberSpout):
    """NumberSpout whose tasks a checkpoint can keep (its recorder is made again)."""

    transient = ("record",)


class CheckpointedRecordingBolt(RecordingBolt):
    """RecordingBolt whose tasks a checkpoint can keep (its recorder is made again)."""

    transient = ("record",)


class PassBolt(Bolt):
    """Re-emits every tuple, anchored (the default), on the default stream."""

    outputs = ["n", "key"]

    def process(self, tup: Any) -> None:
        self.emit(list(tup.values))


class SlowPassBolt(PassBolt):
    """PassBolt taking ``test.delay`` seconds per tuple: a chain that outlasts its spout."""

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.delay = float(conf.get("test.delay", 0.01))

    def process(self, tup: Any) -> None:
        time.sleep(self.delay)
        self.emit(list(tup.values))


class TimedSlowBolt(Bolt):
    """Takes ``test.delay`` seconds per tuple and records when each ``process`` ran."""

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.delay = float(conf.get("test.delay", 0.01))
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        began = time.time()
        time.sleep(self.delay)
        self.record("tuple", began=began, n=tup.values[0])


class FlakyBolt(Bolt):
    """Fails every tenth number the first time it sees it; passes everything else on."""

    outputs = ["n", "key"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.seen: set[int] = set()
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        n = tup.values.n
        if n % 10 == 3 and n not in self.seen:
            self.seen.add(n)
            self.record("failed", n=n)
            self.fail(tup)
            return
        self.emit([n, tup.values.key])


class SilentBolt(Bolt):
    """Never acks: its input trees time out."""

    auto_ack = False
    outputs: list[Any] = []


class SlowBolt(Bolt):
    """Takes ``test.delay`` seconds per tuple, so tuples pile up in flight."""

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.delay = float(conf.get("test.delay", 0.01))

    def process(self, tup: Any) -> None:
        time.sleep(self.delay)


class RaiseOnceBolt(Bolt):
    """Raises on number ``test.raise_on`` the first time (marker file survives restarts)."""

    outputs = ["n", "key"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.marker = Path(conf["test.dir"]) / "raised.marker"
        self.raise_on = int(conf["test.raise_on"])
        self.record = Recorder(conf, context)
        self.record("initialize")

    def process(self, tup: Any) -> None:
        if tup.values.n == self.raise_on and not self.marker.exists():
            self.marker.write_text("x")
            msg = f"boom on {tup.values.n}"
            raise ValueError(msg)
        self.emit(list(tup.values))


class StopOnceBolt(Bolt):
    """Passes numbers on; on number ``test.stop_on`` it stops its own process (SIGSTOP).

    It does so the first time only (a marker file survives the restart), holding its
    window's input.
    """

    outputs = ["n", "key"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.marker = Path(conf["test.dir"]) / "stopped.marker"
        self.stop_on = int(conf["test.stop_on"])
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        if tup.values.n == self.stop_on and self._first_to_stop():
            self.record("stopping")
            os.kill(os.getpid(), signal.SIGSTOP)
        self.emit(list(tup.values))

    def _first_to_stop(self) -> bool:
        """Whether this is the first time any executor reached ``stop_on``.

        The marker is made exclusively: two executors given the number in the same window
        would both see no marker and both stop.
        """
        try:
            self.marker.open("x").close()
        except FileExistsError:
            return False
        return True


class RaiseOnceNoAutoFailBolt(RaiseOnceBolt):
    """RaiseOnceBolt with pystorm's ``auto_fail = False``.

    The tuple it raised on is not failed for it; its tree times out.
    """

    auto_fail = False


class DirectBolt(Bolt):
    """Sends each number directly to task ``targets[n % len(targets)]`` of 'direct_sink'.

    It also sends it to every task via the 'everyone' stream (subscribed with ALL grouping).
    """

    outputs = [Stream(["n", "target"], name="direct_out", direct=True),
               Stream(["n"], name="everyone")]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.targets = sorted(int(t) for t, c in context["task->component"].items()
                              if c == "direct_sink")

    def process(self, tup: Any) -> None:
        n = tup.values.n
        target = self.targets[n % len(self.targets)]
        sent = self.emit([n, target], stream="direct_out", direct_task=target,
                         need_task_ids=True)
        assert sent == [target]
        self.emit([n], stream="everyone")


class WrongArityBolt(Bolt):
    """Emits two values on a one-field stream: a contract violation at run time."""

    outputs = ["only"]

    def process(self, tup: Any) -> None:
        self.emit([1, 2])


class HopBolt(Bolt):
    """Receives numbers and hop counts; emits [n, hops + 1] (a cycle with 'echo')."""

    outputs = ["n", "hops"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        n = tup.values[0]
        hops = tup.values[1] if tup.component == "echo" else 0
        self.record("hop", n=n, hops=hops)
        self.emit([n, hops + 1])


class EchoBolt(Bolt):
    """Sends a tuple back to 'hop' until it has made ``test.hops`` hops."""

    outputs = ["n", "hops"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.hops = int(conf.get("test.hops", 3))

    def process(self, tup: Any) -> None:
        if tup.values.hops < self.hops:
            self.emit(list(tup.values))


class BrokenStartBolt(Bolt):
    """Raises in ``initialize``: a component that can never start."""

    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        msg = "cannot reach the database"
        raise ConnectionError(msg)


class FailSentenceOnceBolt(Bolt):
    """Fails a sentence the first time it sees it when ``crc32(sentence) % test.modulus`` is 0.

    Passes every other delivery on, anchored. Subscribe it with fields grouping on the
    sentence, so a replay reaches the task that remembers it. Records ``failed`` and
    ``passed`` with the sentence.
    """

    outputs = ["sentence"]

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.modulus = int(conf["test.modulus"])
        self.seen: set[str] = set()
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        sentence = tup.values[0]
        if zlib.crc32(sentence.encode()) % self.modulus == 0 and sentence not in self.seen:
            self.seen.add(sentence)
            self.record("failed", sentence=sentence)
            self.fail(tup)
            return
        self.record("passed", sentence=sentence)
        self.emit([sentence])


class KeepingBolt(Bolt):
    """Keeps every input unacked for ``test.hold`` seconds, then acks it on a tick.

    On each tick before that, calls ``reset_timeout`` on what it keeps when ``test.reset``
    is true. Records ``kept``, ``reset`` and ``acked`` with the number.
    """

    auto_ack = False
    outputs: list[Any] = []

    def initialize(self, conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.hold = float(conf["test.hold"])
        self.reset = bool(conf["test.reset"])
        self.kept: list[tuple[Any, float]] = []
        self.record = Recorder(conf, context)

    def process(self, tup: Any) -> None:
        self.kept.append((tup, time.monotonic()))
        self.record("kept", n=tup.values.n)

    def process_tick(self, tup: Any) -> None:
        still: list[tuple[Any, float]] = []
        for kept, since in self.kept:
            if time.monotonic() - since >= self.hold:
                self.ack(kept)
                self.record("acked", n=kept.values.n)
                continue
            if self.reset:
                self.reset_timeout(kept)
                self.record("reset", n=kept.values.n)
            still.append((kept, since))
        self.kept = still


def _write_context(conf: dict[str, Any], context: dict[str, Any]) -> None:
    path = Path(conf["test.dir"]) / f"context-{context['taskid']}.json"
    path.with_suffix(".tmp").write_text(json.dumps(context), encoding="utf-8")
    path.with_suffix(".tmp").rename(path)  # whole or absent for the reading test


class ContextSpout(Spout):
    """Writes the ``context`` its task got to ``<test.dir>/context-<task>.json``.

    Emits nothing.
    """

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        _write_context(storm_conf, context)


class ContextBolt(Bolt):
    """As :class:`ContextSpout`, for bolts."""

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        _write_context(storm_conf, context)
