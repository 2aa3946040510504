"""What goes over the wire.

The handshake as written, transcripts, the serializer chosen by topology config, empty task-id
lists, and the values and replies the host refuses.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import msgpack
import pytest

from sparkstorm.multilang import MultilangError, python_command
from sparkstorm.multilang.shell_base import TRANSCRIPT_DIR_KEY
from tests.unit.multilang.harness import PATIENT, PROBES, bolt, probe, spout, transcript, tup

CONTEXT_KEYS = {"task->component", "taskid", "componentid", "streams", "stream->outputfields",
                "stream->target->grouping", "source->stream->grouping",
                "source->stream->fields"}


def _messages(data: bytes) -> list[Any]:
    return [json.loads(m) for m in data.split(b"\nend\n") if m]


def test_the_handshake_on_the_wire(tmp_path: Path) -> None:
    shell = bolt(probe("ok"), {"custom.key": [1, "x"]}, transcript=str(tmp_path / "t"))
    pid_dir = shell.subprocess.pid_dir
    shell.close()
    setup = _messages(transcript(tmp_path, "to_child"))[0]
    assert set(setup) == {"pidDir", "conf", "context"}
    assert os.path.isabs(setup["pidDir"]) and setup["pidDir"] == pid_dir
    assert setup["conf"] == shell.storm_conf and setup["conf"]["custom.key"] == [1, "x"]
    assert set(setup["context"]) == CONTEXT_KEYS
    assert setup["context"] == shell.context
    assert setup["context"]["taskid"] == 3 and setup["context"]["componentid"] == "probe"
    reply = _messages(transcript(tmp_path, "from_child"))[0]
    assert reply == {"pid": shell.subprocess.reported_pid}


def test_topology_transcript_dir_writes_both_directions(tmp_path: Path) -> None:
    directory = tmp_path / "transcripts"
    shell = bolt(probe("ok"), {TRANSCRIPT_DIR_KEY: str(directory)})
    item = tup("plain", 1)
    shell.process(item)
    shell.end_window()
    pid = shell.subprocess.proc.pid
    shell.close()
    names = sorted(p.name for p in directory.iterdir())
    assert names == [f"probe-3-{pid}.from_child", f"probe-3-{pid}.to_child"]
    to_child = _messages(transcript(directory, "to_child"))
    assert to_child[1]["tuple"] == ["plain", 1]
    assert {"command": "ack", "id": to_child[1]["id"]} in _messages(
        transcript(directory, "from_child"))


@pytest.mark.parametrize("name", ["msgpack", "com.yelp.pyleus.serializer.MessagePackSerializer"])
def test_topology_wide_serializer_selects_msgpack(tmp_path: Path, name: str) -> None:
    command = [*python_command("py_components:SplitBolt", serializer="msgpack"),
               "--path", str(PROBES)]
    shell = bolt(command, {"topology.multilang.serializer": name},
                 transcript=str(tmp_path / "t"))
    item = tup("a b", 1)
    shell.process(item)
    shell.end_window()
    shell.close()
    assert shell._collector.acked == [item]
    assert [e["values"] for e in shell._collector.emits] == [["a"], ["b"]]
    to_child = transcript(tmp_path, "to_child")
    assert b"\nend\n" not in to_child
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(to_child)
    sent = list(unpacker)
    assert set(sent[0]) == {"pidDir", "conf", "context"}
    assert sent[1]["tuple"] == ["a b", 1]


def test_an_emit_on_a_stream_without_subscribers_gets_an_empty_task_list(
        tmp_path: Path) -> None:
    shell = bolt(probe("ok"), transcript=str(tmp_path / "t"))
    item = tup("nobody", 1)
    shell.process(item)
    shell.end_window()
    shell.close()
    assert [(e["stream"], e["values"]) for e in shell._collector.emits] == [
        ("nobody", ["n"]), ("default", ["tasks", []])]
    assert shell._collector.acked == [item]
    replies = [m for m in _messages(transcript(tmp_path, "to_child")) if isinstance(m, list)]
    assert replies == [[], [7, 8]]


def _handshake_error(shell: Any) -> MultilangError:
    with pytest.raises(MultilangError) as info:
        shell.end_window()
    assert shell.subprocess.proc.poll() is not None, "the child is killed"
    return info.value


@pytest.mark.parametrize("pid", ['"4242"', "42.0", "true", "null", "[4242]"])
def test_a_pid_that_is_not_an_integer_fails_the_handshake(
        monkeypatch: pytest.MonkeyPatch, pid: str) -> None:
    monkeypatch.setenv("PROBE_PID", pid)
    error = _handshake_error(bolt(probe("bad_pid"), PATIENT))
    assert error.code == "MULTILANG_HANDSHAKE_FAILED"
    assert f"pid is {json.loads(pid)!r}, not an integer" in str(error)


def test_a_first_message_that_is_not_an_object_fails_the_handshake() -> None:
    error = _handshake_error(bolt(probe("pid_in_array"), PATIENT))
    assert error.code == "MULTILANG_HANDSHAKE_FAILED"
    assert "got '[" in str(error) and "bolt 'probe' task 3" in str(error)


@pytest.mark.parametrize(("serializer", "value", "shown"), [
    ("json", b"raw", "bytes"),
    ("msgpack", 2**64, "18446744073709551616"),
])
def test_values_the_serializer_cannot_carry_are_refused(serializer: str, value: Any,
                                                        shown: str) -> None:
    command = [*python_command("py_components:SplitBolt", serializer=serializer),
               "--path", str(PROBES)]
    shell = bolt(command, PATIENT, serializer=serializer)
    ok, bad = tup("fine", 1), tup(value, 2)
    shell.process(ok)
    with pytest.raises(MultilangError) as info:
        shell.process(bad)
    assert info.value.code == "MULTILANG_UNENCODABLE_VALUE"
    assert shown in str(info.value) and serializer in str(info.value)
    assert shell._collector.failed == [ok, bad], "the queued tuple and the refused one fail"
    assert shell.subprocess.proc.poll() is not None


def test_a_spout_pid_reply_in_an_array_fails_too() -> None:
    shell = spout(probe("pid_in_array"), PATIENT)
    with pytest.raises(MultilangError) as info:
        shell.activate()
    assert info.value.code == "MULTILANG_HANDSHAKE_FAILED"
    assert "spout 'probe' task 3" in str(info.value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_never_sent_as_json(tmp_path: Path, value: float) -> None:
    shell = bolt(probe("ok"), PATIENT, transcript=str(tmp_path / "t"))
    ok, bad = tup("fine", 1), tup("x", [1, value])
    shell.process(ok)
    with pytest.raises(MultilangError) as info:
        shell.process(bad)
    assert info.value.code == "MULTILANG_NON_FINITE_NUMBER"
    text = str(info.value)
    assert "bolt 'probe' task 3" in text and f"cannot send {value!r} (message.tuple[1][1])" in text
    assert shell._collector.failed == [ok, bad]
    assert shell.subprocess.proc.poll() is not None
    to_child = transcript(tmp_path, "to_child")
    assert b"NaN" not in to_child and b"Infinity" not in to_child


def test_a_spout_message_id_that_is_nan_cannot_be_acked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_IDS", "[NaN]")  # a Python child may send it; we accept it
    shell = spout(probe("spout"), PATIENT)
    shell.next_tuple()
    msg_id = shell._collector.emits[0]["tup_id"]
    assert math.isnan(msg_id)
    with pytest.raises(MultilangError) as info:
        shell.ack(msg_id)
    assert info.value.code == "MULTILANG_NON_FINITE_NUMBER"
    assert "spout 'probe' task 3" in str(info.value) and "nan" in str(info.value)


def test_non_finite_numbers_in_the_handshake_conf_go_as_text(tmp_path: Path) -> None:
    shell = bolt(probe("ok"), {"my.ratio": math.inf, "my.list": [math.nan]},
                 transcript=str(tmp_path / "t"))
    assert shell.subprocess.alive
    shell.close()
    setup = _messages(transcript(tmp_path, "to_child"))[0]
    assert setup["conf"]["my.ratio"] == "inf" and setup["conf"]["my.list"] == ["nan"]


def test_msgpack_carries_non_finite_floats(tmp_path: Path) -> None:
    command = [*python_command("py_components:SplitBolt", serializer="msgpack"),
               "--path", str(PROBES)]
    shell = bolt(command, PATIENT, serializer="msgpack")
    item = tup(math.inf, 1)
    shell.process(item)
    shell.end_window()
    shell.close()
    assert shell._collector.acked == [item]
    assert [e["values"] for e in shell._collector.emits] == [["inf"]]
