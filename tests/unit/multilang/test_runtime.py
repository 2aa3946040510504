"""Our Python components as multilang children (``python -m sparkstorm.multilang``), driven
by the ShellBolt/ShellSpout host, in JSON and msgpack."""

from __future__ import annotations

import io
import logging

import pytest

from sparkstorm.multilang import python_command
from sparkstorm.multilang.runtime import EXIT_PARENT_GONE, run
from sparkstorm.multilang.serializer import JsonSerializer
from tests.unit.multilang.harness import PROBES, bolt, spout, tick, tup
from tests.unit.multilang.probes.py_components import SplitBolt


def _command(name: str, serializer: str) -> list[str]:
    return [*python_command(f"py_components:{name}", serializer=serializer),
            "--path", str(PROBES)]


@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_a_python_bolt_runs_as_a_subprocess(serializer: str,
                                            caplog: pytest.LogCaptureFixture) -> None:
    shell = bolt(_command("SplitBolt", serializer), serializer=serializer,
                 conf={"test.prefix": ">"})
    first, second, ticked = tup("a b", 1), tup("ids", 2), tick(3)
    with caplog.at_level(logging.INFO):
        shell.process(first)
        shell.process(second)
        shell.process_tick(ticked)
        shell.end_window()
    shell.close()
    emits = shell._collector.emits
    assert [e["values"] for e in emits] == [[">a"], [">b"], ["x"], ["tasks", [7, 8]],
                                            ["tick", 3]]
    assert [e["anchors"] for e in emits] == [[first], [first], [second], [second], [ticked]]
    assert shell._collector.acked == [first, second, ticked]
    messages = [r.getMessage() for r in caplog.records]
    assert any("split a b" in m for m in messages), "logging travels as log commands"
    assert any("processing a b" in m for m in messages), "print() goes to stderr"


def test_a_raising_python_bolt_reports_fails_and_exits() -> None:
    shell = bolt(_command("SplitBolt", "json"), {"topology.subprocess.timeout.secs": 2})
    boom = tup("boom", 1)
    shell.process(boom)
    with pytest.raises(Exception) as info:
        shell.end_window()
    assert getattr(info.value, "code", "") == "MULTILANG_SUBPROCESS_EXITED"
    assert shell._collector.failed == [boom]
    # the child reports its exception as an error command before it exits
    assert shell._collector.errors == ["ValueError: boom requested"]
    assert "exit code 1" in str(info.value)


def test_manual_acks_and_explicit_anchors() -> None:
    shell = bolt(_command("ManualBolt", "json"))
    items = [tup("w", n) for n in range(3)]
    for item in items:
        shell.process(item)
    shell.end_window()
    shell.close()
    assert shell._collector.emits[0]["anchors"] == items[:2]
    assert shell._collector.acked == items[:2] and shell.pending_count == 1


@pytest.mark.parametrize("serializer", ["json", "msgpack"])
def test_a_python_spout_runs_as_a_subprocess(serializer: str) -> None:
    shell = spout(_command("CountSpout", serializer), serializer=serializer)
    shell.activate()
    for _ in range(3):
        shell.next_tuple()
    for msg_id in (1, 2, 3):
        shell.ack(msg_id)
    shell.close()
    assert [e["tup_id"] for e in shell._collector.emits] == [1, 2, 3]


def test_the_runtime_exits_with_parent_gone_on_eof() -> None:
    serializer = JsonSerializer()
    handshake = serializer.encode({"conf": {}, "context": {"taskid": 1, "componentid": "s"},
                                   "pidDir": "/tmp"})
    heartbeat = serializer.encode({"id": "1", "comp": None, "stream": "__heartbeat",
                                   "task": -1, "tuple": []})
    out = io.BytesIO()
    handlers = list(logging.getLogger().handlers)
    code = run(SplitBolt, io.BytesIO(handshake + heartbeat), out, serializer)
    assert code == EXIT_PARENT_GONE
    messages = serializer.decoder().feed(out.getvalue())
    assert messages[0] == {"pid": __import__("os").getpid()}
    assert messages[-1] == {"command": "sync"}
    assert logging.getLogger().handlers == handlers, "run removes its log handler"
