"""streamparse's and pystorm's API under sparkstorm's names.

Modules, DSL forms, component methods, and the batching bolts and reliable spout driven through a
recording collector.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

from sparkstorm.errors import TopologyError
from sparkstorm.topology.spec_args import ENVIRONMENT_VAR
from sparkstorm.topology.tuple import Tuple


class RecordingCollector:
    """What the engine's collector is to a component, recording every call."""

    def __init__(self) -> None:
        self.emitted: list[tuple[Any, Any, Any]] = []
        self.acked: list[Any] = []
        self.failed: list[tuple[Any, Any]] = []
        self.errors: list[str] = []

    def emit(self, values: Any, stream: Any, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> None:
        self.emitted.append((list(values), anchors, tup_id))

    def ack(self, tup: Tuple) -> None:
        self.acked.append(tup.id)

    def fail(self, tup: Tuple, reason: Any = None, cause: str = "explicit") -> None:
        self.failed.append((tup.id, reason))

    def report_error(self, text: str) -> None:
        self.errors.append(text)


def started(cls: type, conf: dict[str, Any] | None = None) -> Any:
    instance = cls()
    instance._collector = RecordingCollector()
    instance.storm_conf = {"topology.name": "t", **(conf or {})}
    instance.context = {"taskid": 7}
    instance.initialize(instance.storm_conf, instance.context)
    return instance


def word(tid: int, text: str) -> Tuple:
    return Tuple(tid, "words", "default", 1, [text], ("word",))


def tick() -> Tuple:
    return Tuple(0, "__system", "__tick", -1, [1])


def test_streamparse_module_names_import() -> None:
    import sparkstorm
    from sparkstorm import bolt, dsl, spout, storm
    from sparkstorm.dsl.stream import Grouping
    from sparkstorm.dsl.topology import Topology

    assert dsl.Grouping is Grouping and dsl.Topology is Topology
    for name in ("BatchingBolt", "TicklessBatchingBolt", "ShellBolt", "JavaBolt", "Bolt"):
        assert getattr(bolt, name) is getattr(storm, name) is getattr(sparkstorm, name)
    for name in ("ReliableSpout", "ShellSpout", "JavaSpout", "Spout"):
        assert getattr(spout, name) is getattr(storm, name) is getattr(sparkstorm, name)


def test_dsl_forms_streamparse_accepts() -> None:
    from sparkstorm import Bolt, Grouping, ShellBolt, Spout, Stream, Topology

    class Words(Spout):
        outputs = [Stream(["word", "n"]), Stream(["word"], name="picked", direct=True)]

    class Count(Bolt):
        outputs = ["word", "count"]
        par = 3
        config = {"topology.tick.tuple.freq.secs": 2}

    assert Grouping.fields(["word", "n"]) == Grouping.fields("word", "n")

    class T(Topology):
        words = Words.spec(par=None)
        count = Count.spec(inputs={words: Grouping.fields(["word", "n"])})
        picked = Count.spec(name="picked-count", inputs=[words["picked"]], par=1,
                            config={"x": 1})
        shell = ShellBolt.spec(command="node", script="split.js --fast",
                               inputs=[count], outputs=["w"])

    count, picked, shell = (T.topology_spec.component(n)
                            for n in ("count", "picked-count", "shell"))
    assert T.topology_spec.component("words").par == 1
    assert (count.par, count.num_tasks, count.config) == (
        3, 3, {"topology.tick.tuple.freq.secs": 2})
    assert count.inputs[0].grouping.field_names == ("word", "n")
    assert picked.inputs[0].grouping.type == "DIRECT", "a direct stream picks DIRECT"
    assert picked.config == {"x": 1}
    assert shell.extra["command"] == ["node", "split.js", "--fast"]


def test_shell_spout_takes_command_and_script_as_streamparse() -> None:
    from sparkstorm import ShellSpout, Topology

    class T(Topology):
        sentences = ShellSpout.spec(command="node", script="sentences.js --fast",
                                    outputs=["sentence"])
        words = ShellSpout.spec(command=["python3", "-u"], script="'my words.py'",
                                outputs=["word"])

    assert T.topology_spec.component("sentences").extra["command"] == [
        "node", "sentences.js", "--fast"]
    assert T.topology_spec.component("words").extra["command"] == [
        "python3", "-u", "my words.py"], "the script is split as a shell splits it"


def test_per_environment_par(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparkstorm import Bolt

    class Count(Bolt):
        par = {"prod": 4, "dev": 1}

    monkeypatch.setenv(ENVIRONMENT_VAR, "prod")
    assert Count.spec(inputs=["x"]).par == 4
    assert Count.spec(inputs=["x"], par={"prod": 2, "dev": 1}).par == 2
    monkeypatch.setenv(ENVIRONMENT_VAR, "beta")
    with pytest.raises(TopologyError) as error:
        Count.spec(inputs=["x"])
    assert error.value.code == "PAR_ENVIRONMENT_UNKNOWN" and "beta" in str(error.value)
    monkeypatch.delenv(ENVIRONMENT_VAR)
    assert Count.spec(inputs=["x"], par={"only": 5}).par == 5


def test_java_components_are_refused_with_what_to_use() -> None:
    from sparkstorm import JavaBolt, JavaSpout

    for cls in (JavaBolt, JavaSpout):
        with pytest.raises(TopologyError) as error:
            cls.spec(name="j", full_class_name="org.example.Thing", args_list=[])
        assert error.value.code == "JAVA_COMPONENT_UNSUPPORTED"
        assert "org.example.Thing" in str(error.value) and "command=" in str(error.value)


def test_component_methods(caplog: pytest.LogCaptureFixture) -> None:
    from sparkstorm import Bolt

    class B(Bolt):
        def initialize(self, conf: dict[str, Any], ctx: dict[str, Any]) -> None:
            self.pid = os.getpid()  # streamparse code assigns it

    bolt = started(B, {"topology.debug": True})
    assert (bolt.pid, bolt.task_id, bolt.topology_name, bolt.debug) == (
        os.getpid(), 7, "t", True)
    assert Bolt.is_tick(tick()) and not Bolt.is_tick(word(1, "a"))
    assert Bolt.is_heartbeat(Tuple(1, "__system", "__heartbeat", -1, []))
    with caplog.at_level(logging.DEBUG):
        bolt.log("hello there", level="warn")
        bolt.report_metric("lag", 12)
    assert ("WARNING", "hello there") in [(r.levelname, r.getMessage()) for r in caplog.records]
    assert bolt.metrics == {"lag": 12}
    try:
        msg = "missing"
        raise KeyError(msg)
    except KeyError as exc:
        bolt.raise_exception(exc, word(3, "x"))
    assert "KeyError" in bolt._collector.errors[0] and "Tuple(id=3" in bolt._collector.errors[0]
    with pytest.raises(TopologyError) as error:
        bolt.read_tuple()
    assert error.value.code == "READ_TUPLE_IN_PROCESS"


def test_batching_bolt_batches_by_key_between_ticks_and_acks_the_batch() -> None:
    from sparkstorm import BatchingBolt

    class Counter(BatchingBolt):
        outputs = ["word", "count"]
        ticks_between_batches = 2

        def group_key(self, tup: Tuple) -> Any:
            return tup.values.word

        def process_batch(self, key: Any, tups: list[Tuple]) -> None:
            self.emit([key, len(tups)])

    assert (Counter.auto_ack, Counter.batch_auto_ack) == (False, True), "engine leaves acks"
    assert Counter.spec(inputs=["w"]).config == {"topology.tick.tuple.freq.secs": 1}
    bolt = started(Counter)
    collector = bolt._collector
    for tid, text in enumerate(["a", "b", "a"], start=1):
        bolt.process(word(tid, text))
    bolt.process_tick(tick())
    bolt.process_tick(tick())
    assert collector.emitted == [], "pystorm processes after MORE than ticks_between_batches"
    bolt.process_tick(tick())
    emitted = {tuple(values): [a.id for a in anchors] for values, anchors, _ in
               collector.emitted}
    assert emitted == {("a", 2): [1, 3], ("b", 1): [2]}, "anchored to the batch's tuples"
    assert sorted(i for i in collector.acked if i) == [1, 2, 3]


def test_batching_bolt_fails_every_pending_tuple_when_process_batch_raises() -> None:
    from sparkstorm import BatchingBolt

    class Broken(BatchingBolt):
        ticks_between_batches = 0

        def group_key(self, tup: Tuple) -> Any:
            return tup.values.word

        def process_batch(self, key: Any, tups: list[Tuple]) -> None:
            msg = "db down"
            raise RuntimeError(msg)

    bolt = started(Broken)
    bolt.process(word(1, "a"))
    bolt.process(word(2, "b"))
    with pytest.raises(RuntimeError):
        bolt.process_tick(tick())
    assert sorted(i for i, _ in bolt._collector.failed) == [1, 2]
    assert "db down" in bolt._collector.failed[0][1]


def test_tickless_batching_bolt_processes_on_time_at_window_end() -> None:
    from sparkstorm import TicklessBatchingBolt

    class Summer(TicklessBatchingBolt):
        outputs = ["n"]
        secs_between_batches = 0

        def process_batch(self, key: Any, tups: list[Tuple]) -> None:
            self.emit([len(tups)])

    assert Summer.spec(inputs=["w"]).config == {}, "no ticks needed"
    bolt = started(Summer)
    bolt.process(word(1, "a"))
    bolt.process(word(2, "b"))
    bolt.end_window()
    assert [values for values, _, _ in bolt._collector.emitted] == [[2]]
    assert sorted(bolt._collector.acked) == [1, 2]


def test_reliable_spout_replays_up_to_max_fails_then_gives_up() -> None:
    from sparkstorm import ReliableSpout

    class Numbers(ReliableSpout):
        outputs = ["n"]
        max_fails = 2

    spout = started(Numbers)
    spout.emit([1], tup_id="one")
    for _ in range(3):
        spout.fail("one")
    assert [tup_id for _, _, tup_id in spout._collector.emitted] == ["one", "one", "one"]
    assert "one" not in spout.unacked_tuples, "given up after max_fails replays"
    spout.emit([2], tup_id="two")
    spout.ack("two")
    assert spout.unacked_tuples == {} and spout.failed_tuples == {}
    with pytest.raises(TopologyError) as error:
        spout.emit([3])
    assert error.value.code == "RELIABLE_SPOUT_WITHOUT_ID"


def test_write_read_and_to_flux_dict(tmp_path: Any) -> None:
    from sparkstorm import Bolt, Grouping, ShellSpout, Topology

    class Count(Bolt):
        outputs = ["word", "count"]

    class T(Topology):
        config = {"topology.max.spout.pending": 10}
        words = ShellSpout.spec(command=["node", "words.js"], outputs=["word"])
        count = Count.spec(inputs={words: Grouping.fields("word")}, par=2, num_tasks=4)

    T.write(str(tmp_path / "t.json"))
    again = T.read(str(tmp_path / "t.json"))
    assert again.topology_spec.to_dict() == T.topology_spec.to_dict()
    flux = T.to_flux_dict("wc")
    assert flux["name"] == "wc" and flux["config"] == {"topology.max.spout.pending": 10}
    assert flux["spouts"][0]["constructorArgs"] == [["node", "words.js"], ["word"]]
    assert flux["bolts"][0]["className"].endswith(".Count")
    assert (flux["bolts"][0]["parallelism"], flux["bolts"][0]["numTasks"]) == (2, 4)
    assert flux["streams"][0]["grouping"] == {"type": "FIELDS", "streamId": "default",
                                              "args": ["word"]}
