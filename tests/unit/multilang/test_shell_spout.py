"""ShellSpout through real pipes: strict alternation, message ids echoed exactly, faults."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sparkstorm.multilang import MultilangError
from tests.unit.multilang.harness import probe, spout, transcript

FAST = {"topology.subprocess.timeout.secs": 1}
IDS = [2**53 + 1, 2**64 + 5, 1, "1", 0, "", False, 1.5, {"b": [1, 2], "a": None}, -(2**70)]


def _sent_commands(directory: Path) -> list[bytes]:
    return [m for m in transcript(directory, "to_child").split(b"\nend\n")[1:] if m]


def test_message_ids_come_back_exactly_as_emitted(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_IDS", json.dumps(IDS))
    shell = spout(probe("spout"), transcript=str(tmp_path / "t"))
    for _ in IDS:
        shell.next_tuple()
    emitted = [e["tup_id"] for e in shell._collector.emits]
    assert emitted == IDS and [type(i) for i in emitted] == [type(i) for i in IDS]
    for msg_id in reversed(emitted):
        shell.ack(msg_id)
    shell.fail(IDS[0])  # already acked: not sent to the child again
    shell.close()

    from_child = transcript(tmp_path, "from_child")
    acks = _sent_commands(tmp_path)[len(IDS) * 2:]  # after each next and its task-id list
    for raw in (b"9007199254740993", b"18446744073709551621", b"-1180591620717411303424"):
        assert raw in from_child
        assert b'{"command":"ack","id":' + raw + b"}" in acks
    assert b'{"command":"ack","id":1}' in acks and b'{"command":"ack","id":"1"}' in acks
    assert b'{"command":"ack","id":false}' in acks and b'{"command":"ack","id":""}' in acks
    assert len(acks) == len(IDS)


def test_strict_alternation_and_task_ids_answered_inline(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_IDS", json.dumps([7]))
    shell = spout(probe("spout"), transcript=str(tmp_path / "t"))
    shell.activate()
    shell.next_tuple()
    shell.next_tuple()  # nothing left: the spout syncs without emitting
    shell.deactivate()
    shell.close()
    sent = _sent_commands(tmp_path)
    assert sent == [b'{"command":"activate","id":""}', b'{"command":"next","id":""}',
                    b"[7,8]", b'{"command":"next","id":""}', b'{"command":"deactivate","id":""}']


def test_activate_commands_can_be_turned_off(tmp_path: Path) -> None:
    shell = spout(probe("spout"), transcript=str(tmp_path / "t"), activate=False)
    shell.activate()
    shell.next_tuple()
    shell.close()
    assert _sent_commands(tmp_path) == [b'{"command":"next","id":""}']


def test_direct_emits_to_a_task_that_does_not_subscribe_are_dropped_and_acked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_IDS", json.dumps([41, 42]))
    monkeypatch.setenv("PROBE_TASK", "99")
    shell = spout(probe("spout_direct"), transcript=str(tmp_path / "t"))
    shell.next_tuple()
    assert shell.emitted_in_last_call == 1
    shell.next_tuple()
    assert shell.subprocess.alive, "Storm drops the tuple; the component lives on"
    assert not shell._collector.emits, "routed to no task"
    assert not shell._pending
    shell.close()
    # routed to no task, the tuple is complete: acked after the sync, as its own command
    assert _sent_commands(tmp_path) == [
        b'{"command":"next","id":""}', b'{"command":"ack","id":41}',
        b'{"command":"next","id":""}', b'{"command":"ack","id":42}']


def test_unreliable_emits_are_not_tracked(monkeypatch: pytest.MonkeyPatch) -> None:
    shell = spout(probe("spout_unreliable"))
    shell.next_tuple()
    shell.close()
    assert shell._collector.emits[0]["tup_id"] is None


def test_a_spout_hanging_in_next_times_out() -> None:
    shell = spout(probe("spout_hang"), FAST)
    pid = shell.subprocess.proc.pid
    started = time.monotonic()
    with pytest.raises(MultilangError) as info:
        shell.next_tuple()
    assert info.value.code == "MULTILANG_SYNC_TIMEOUT"
    assert "spout 'probe' task 3" in str(info.value) and "'next'" in str(info.value)
    assert time.monotonic() - started < 5
    assert shell.subprocess.proc.poll() is not None and shell.subprocess.proc.pid == pid


def test_a_spout_sending_ack_is_a_protocol_error() -> None:
    shell = spout(probe("spout_ack_back"), FAST)
    with pytest.raises(MultilangError) as info:
        shell.next_tuple()
    assert info.value.code == "MULTILANG_UNEXPECTED_COMMAND"
    assert shell.subprocess.proc.poll() is not None


def test_a_spout_that_crashes_at_start_reports_on_first_call() -> None:
    shell = spout(probe("crash_at_start"), FAST)
    with pytest.raises(MultilangError) as info:
        shell.activate()
    assert info.value.code == "MULTILANG_SUBPROCESS_EXITED"
    assert "missing config" in str(info.value)
