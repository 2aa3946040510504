"""Our Python components as multilang children (``python -m sparkstorm.multilang``).

Driven by the ShellBolt/ShellSpout host on the engine's collector (``sparkstorm.testing``'s
harness), in JSON and msgpack.
"""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.multilang import ShellBolt, ShellSpout, python_command
from sparkstorm.multilang.errors import MultilangError
from sparkstorm.multilang.runtime import EXIT_PARENT_GONE, run
from sparkstorm.multilang.serializer import JsonSerializer
from sparkstorm.testing import BoltHarness, Fail, SpoutHarness
from tests.unit.multilang.harness import PROBES
from tests.unit.multilang.probes.py_components import SplitBolt


def _command(name: str, serializer: str) -> list[str]:
    return [*python_command(f"py_components:{name}", serializer=serializer),
            "--path", str(PROBES)]


def _bolt(name: str, serializer: str = "json", **conf: Any) -> BoltHarness:
    spec = ShellBolt.spec(command=_command(name, serializer), serializer=serializer,
                          outputs=["word"])
    return BoltHarness(spec, inputs={"src": ["word", "n"]},
                       conf={"topology.subprocess.timeout.secs": 5, **conf})


@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_a_python_bolt_runs_as_a_subprocess(serializer: str,
                                            caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO), _bolt("SplitBolt", serializer,
                                              **{"test.prefix": ">"}) as harness:
        result = harness.process(["a b", 1])
    assert [e.values for e in result.emits] == [[">a"], [">b"]]
    assert [e.anchors for e in result.emits] == [(result.input,), (result.input,)]
    assert result.acked == [result.input]
    messages = [r.getMessage() for r in caplog.records]
    assert any("split a b" in m for m in messages), "logging travels as log commands"
    assert any("processing a b" in m for m in messages), "print() goes to stderr"


def test_a_raising_python_bolt_reports_fails_and_exits() -> None:
    with _bolt("SplitBolt", **{"topology.subprocess.timeout.secs": 2}) as harness, \
            pytest.raises(MultilangError) as info:
        harness.process(["boom", 1])
    assert info.value.code == "MULTILANG_SUBPROCESS_EXITED"
    boom = harness.last
    assert boom.failed == [Fail(boom.input, "ValueError: boom requested", "error")]
    assert boom.errors == ["ValueError: boom requested"]


def test_manual_acks_and_explicit_anchors() -> None:
    with _bolt("ManualBolt") as harness:
        first, second, third = (harness.process(["w", n]) for n in range(3))
        held = harness.instance.pending_count
    assert first.emits == [] and first.acked == []
    assert [e.anchors for e in second.emits] == [(first.input, second.input)]
    assert second.acked == [first.input, second.input]
    assert third.acked == [] and held == 1


@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_a_python_spout_runs_as_a_subprocess(serializer: str) -> None:
    spec = ShellSpout.spec(command=_command("CountSpout", serializer), serializer=serializer,
                           outputs=["n"])
    with SpoutHarness(spec, conf={"topology.subprocess.timeout.secs": 5}) as harness:
        emits = [e for _ in range(3) for e in harness.next_tuple().emits]
        assert [(e.values, e.tup_id) for e in emits] == [([1], 1), ([2], 2), ([3], 3)]
        assert harness.pending == [1, 2, 3]
        for msg_id in (1, 2, 3):
            harness.ack(msg_id)
        assert harness.pending == []


def test_the_runtime_exits_with_parent_gone_on_eof(tmp_path: Path) -> None:
    serializer = JsonSerializer()
    handshake = serializer.encode({"conf": {}, "context": {"taskid": 1, "componentid": "s"},
                                   "pidDir": str(tmp_path)})
    heartbeat = serializer.encode({"id": "1", "comp": None, "stream": "__heartbeat",
                                   "task": -1, "tuple": []})
    out = io.BytesIO()
    handlers = list(logging.getLogger().handlers)
    code = run(SplitBolt, io.BytesIO(handshake + heartbeat), out, serializer)
    assert code == EXIT_PARENT_GONE
    messages = serializer.decoder().feed(out.getvalue())
    assert messages[0] == {"pid": os.getpid()}
    assert [p.name for p in tmp_path.iterdir()] == [str(os.getpid())], "Storm's PID file"
    assert messages[-1] == {"command": "sync"}
    assert logging.getLogger().handlers == handlers, "run removes its log handler"
