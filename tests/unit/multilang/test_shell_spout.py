"""ShellSpout through real pipes: strict alternation, message ids echoed exactly, faults."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sparkstorm.multilang import MultilangError
from sparkstorm.testing.polling import wait_for
from tests.unit.multilang.harness import FAST, PATIENT, probe, spout, transcript

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


def _calls_until_error(call: Callable[[], None], timeout: float = 10.0
                       ) -> tuple[MultilangError, float]:
    """Call ``call`` (as the executor calls next_tuple) until it raises.

    Return the error and the longest time one call held the caller.
    """
    longest, deadline = 0.0, time.monotonic() + timeout
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            call()
        except MultilangError as exc:
            return exc, max(longest, time.monotonic() - started)
        longest = max(longest, time.monotonic() - started)
    pytest.fail(f"no error within {timeout} s")


def test_a_spout_hanging_in_next_times_out_without_holding_the_caller(tmp_path: Path) -> None:
    shell = spout(probe("spout_hang"), FAST, transcript=str(tmp_path / "t"))
    pid = shell.subprocess.proc.pid
    started = time.monotonic()
    error, longest = _calls_until_error(shell.next_tuple)
    assert error.code == "MULTILANG_SYNC_TIMEOUT"
    assert "spout 'probe' task 3" in str(error) and "'next'" in str(error)
    assert 0.9 < time.monotonic() - started < 5, "the timeout counts from the one 'next'"
    assert longest < 0.25, "each call waits one short slice, not the whole timeout"
    assert shell.subprocess.proc.poll() is not None and shell.subprocess.proc.pid == pid
    assert _sent_commands(tmp_path) == [b'{"command":"next","id":""}'], "one next only"


def test_commands_asked_for_while_a_next_is_outstanding_follow_its_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_IDS", json.dumps([1, 2]))
    shell = spout(probe("spout_slow"), transcript=str(tmp_path / "t"))
    wait_for(lambda: shell.next_tuple() or not shell.waiting_for_sync, timeout=5,
             interval=0.0, message="the first next answered")
    started = time.monotonic()
    shell.next_tuple()  # the second next: the child takes 0.3 s to answer
    assert shell.waiting_for_sync and time.monotonic() - started < 0.2
    shell.ack(1)
    shell.fail(1)  # no longer in flight: never sent
    shell.deactivate()
    assert time.monotonic() - started < 0.2, "queued behind the next, they do not wait"
    assert _sent_commands(tmp_path) == [b'{"command":"next","id":""}', b"[7,8]",
                                        b'{"command":"next","id":""}']
    calls = 0
    while shell.waiting_for_sync or shell._queued:
        shell.next_tuple()
        calls += 1
    assert calls > 1, "the sync took several slices"
    shell.close()
    assert [e["tup_id"] for e in shell._collector.emits] == [1, 2]
    assert _sent_commands(tmp_path) == [
        b'{"command":"next","id":""}', b"[7,8]", b'{"command":"next","id":""}', b"[7,8]",
        b'{"command":"ack","id":1}', b'{"command":"deactivate","id":""}']


def test_a_spout_sending_ack_is_a_protocol_error() -> None:
    shell = spout(probe("spout_ack_back"), PATIENT)
    with pytest.raises(MultilangError) as info:
        shell.next_tuple()
    assert info.value.code == "MULTILANG_UNEXPECTED_COMMAND"
    assert shell.subprocess.proc.poll() is not None


def test_a_spout_that_crashes_at_start_reports_on_first_call() -> None:
    shell = spout(probe("crash_at_start"), PATIENT)
    with pytest.raises(MultilangError) as info:
        shell.activate()
    assert info.value.code == "MULTILANG_SUBPROCESS_EXITED"
    assert "missing config" in str(info.value)


@pytest.mark.parametrize(("fault", "code", "shown"), [
    ("badjson", "MULTILANG_MALFORMED_MESSAGE", "not JSON"),
    ("garbage", "MULTILANG_MALFORMED_MESSAGE", "hello from print()"),
    ("exit", "MULTILANG_SUBPROCESS_EXITED", "probe: exiting on purpose"),
    ("nosync", "MULTILANG_SYNC_TIMEOUT", "sync after 'next'"),
    ("unknown", "MULTILANG_UNEXPECTED_COMMAND", "frobnicate"),
    ("taskids", "MULTILANG_MALFORMED_MESSAGE", "[7, 8]"),
])
def test_spout_faults_kill_the_child_and_drop_its_pending_tuples(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str, code: str,
        shown: str) -> None:
    monkeypatch.setenv("PROBE_IDS", json.dumps([1, 2, 3]))
    patience = FAST if fault == "nosync" else PATIENT  # nosync is found by the timeout
    shell = spout(probe("spout_fault") + [fault], patience, transcript=str(tmp_path / "t"))
    for _ in range(3):
        shell.next_tuple()
    shell.ack(1)
    assert len(shell._pending) == 2
    error, _ = _calls_until_error(shell.next_tuple)
    assert error.code == code
    assert shown in str(error) and "spout 'probe' task 3" in str(error)
    assert shell.subprocess.proc.poll() is not None, "the child is killed"
    assert not shell._pending, "its pending tuples die with it"
    sent = _sent_commands(tmp_path)
    shell.fail(2)  # the executor's verdicts for them are not sent anywhere, nor fatal
    shell.ack(3)
    assert _sent_commands(tmp_path) == sent
    with pytest.raises(MultilangError) as again:
        shell.next_tuple()
    assert again.value.code == "MULTILANG_SUBPROCESS_EXITED"
    if fault == "exit":
        assert "exit code 3" in str(error)
