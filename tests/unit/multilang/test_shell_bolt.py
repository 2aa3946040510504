"""ShellBolt through real pipes to the probe: emits, anchors, task ids, acks, windows."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from sparkstorm.multilang import MultilangError, shell_bolt
from tests.unit.multilang.harness import FakeCollector, bolt, probe, tick, transcript, tup


def test_emits_anchor_to_the_inputs_and_acks_come_back(tmp_path: Path) -> None:
    shell = bolt(probe("ok"), transcript=str(tmp_path / "t"))
    collector: FakeCollector = shell._collector
    first, second = tup("echo", 1), tup("quiet", 2)
    shell.process(first)
    shell.process(second)
    shell.end_window()
    shell.close()

    assert [e["values"] for e in collector.emits] == [["echo", 1], ["tasks", [7, 8]],
                                                      ["quiet", 2]]
    assert [e["anchors"] for e in collector.emits] == [[first], [first], [second]]
    assert collector.acked == [first, second] and not collector.failed
    assert shell.pending_count == 0
    to_child = transcript(tmp_path, "to_child")
    # one task-id list per storm.py-style emit (two), none for need_task_ids=false
    messages = to_child.split(b"\nend\n")
    assert messages.count(b"[7,8]") == 2
    assert sum(m.startswith(b"[") for m in messages) == 2


def test_direct_emits_get_no_task_ids_but_task_zero_does(tmp_path: Path) -> None:
    shell = bolt(probe("ok"), transcript=str(tmp_path / "t"))
    shell.process(tup("direct", 8))
    shell.process(tup("task0", 0))
    shell.end_window()
    shell.close()
    emits = shell._collector.emits
    assert [(e["stream"], e["task"]) for e in emits] == [("direct", 8), ("default", None)]
    assert transcript(tmp_path, "to_child").split(b"\nend\n").count(b"[7,8]") == 1


def test_direct_emits_to_a_task_that_does_not_subscribe_are_dropped(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    shell = bolt(probe("ok"), transcript=str(tmp_path / "t"))
    dropped, again, delivered = tup("direct", 99), tup("direct", 99), tup("direct", 8)
    for item in (dropped, again, delivered):
        shell.process(item)
    shell.end_window()
    assert shell.subprocess.alive, "Storm drops the tuple; the component lives on"
    assert shell._collector.acked == [dropped, again, delivered]
    assert [(e["stream"], e["task"]) for e in shell._collector.emits] == [("direct", 8)]
    warnings = [r for r in caplog.records if "are dropped" in r.getMessage()]
    assert len(warnings) == 1 and "task 99" in warnings[0].getMessage()
    shell.close()
    to_child = transcript(tmp_path, "to_child").split(b"\nend\n")
    assert not [m for m in to_child if m.startswith(b"[")], "no task-id list for direct emits"


def test_tick_tuples_carry_all_four_fields(tmp_path: Path) -> None:
    shell = bolt(probe("ok"), transcript=str(tmp_path / "t"))
    shell.process_tick(tick(5))
    shell.end_window()
    shell.close()
    assert shell._collector.emits[0]["values"] == ["tick", "__system", -1, [5]]
    lines = transcript(tmp_path, "to_child").split(b"\nend\n")
    sent = [json.loads(line) for line in lines[1:] if line.startswith(b"{")]
    ticks = [m for m in sent if m.get("stream") == "__tick"]
    assert ticks and ticks[0]["comp"] == "__system" and ticks[0]["task"] == -1
    assert ticks[0]["tuple"] == [5] and isinstance(ticks[0]["id"], str)


def test_ticks_are_acked_and_anchored_to_but_never_pending() -> None:
    shell = bolt(probe("ok"))
    ticks = [tick(5) for _ in range(3)]
    for item in ticks:
        shell.process_tick(item)
    shell.end_window()
    shell.close()
    assert shell._collector.acked == ticks, "clients that ack ticks still may"
    assert [e["anchors"] for e in shell._collector.emits] == [[t] for t in ticks]
    assert shell.pending_count == 0 and not shell._collector.failed


def test_ticks_the_child_never_acks_do_not_accumulate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell_bolt, "TICKS_KEPT", 4)
    shell = bolt(probe("tick_no_ack"))
    for _ in range(5):  # windows: ticks, never acked, among ordinary inputs
        for _ in range(3):
            shell.process_tick(tick(5))
        shell.process(tup("plain", 0))
        shell.end_window()
    assert shell.pending_count == 0
    assert len(shell._ticks) == 4, "only the last TICKS_KEPT are remembered"
    assert len(shell._collector.acked) == 5 and not shell._collector.failed
    assert shell.subprocess.alive
    shell.close()


def test_heartbeats_are_answered_and_never_tracked(tmp_path: Path) -> None:
    shell = bolt(probe("ok"), transcript=str(tmp_path / "t"))
    for _ in range(3):
        shell.end_window()
    shell.close()
    sent = [json.loads(m) for m in transcript(tmp_path, "to_child").split(b"\nend\n")[1:] if m]
    assert len(sent) == 3
    for message in sent:
        assert message["stream"] == "__heartbeat" and message["task"] == -1
        assert message["comp"] is None and message["tuple"] == []
        int(message["id"])  # decimal text of a 64-bit number
        assert -2**63 <= int(message["id"]) < 2**63
    assert shell.pending_count == 0


def test_acks_may_come_windows_later() -> None:
    shell = bolt(probe("ok"))
    held = [tup("hold", n) for n in range(3)]
    for item in held:
        shell.process(item)
    shell.end_window()
    assert shell.pending_count == 3 and not shell._collector.acked
    release = tup("release", 0)
    shell.process(release)
    shell.end_window()
    shell.close()
    assert shell._collector.acked == [*held, release]


def test_fail_from_the_child_fails_the_input() -> None:
    shell = bolt(probe("ok"))
    victim = tup("failme", 1)
    shell.process(victim)
    shell.end_window()
    shell.close()
    assert shell._collector.failed == [victim] and not shell._collector.acked


def test_many_tuples_flow_in_batches() -> None:
    shell = bolt(probe("ok"), conf={"topology.shellbolt.max.pending": 10})
    inputs = [tup("w", n) for n in range(1000)]
    for item in inputs:
        shell.process(item)
    shell.end_window()
    shell.close()
    assert [e["values"][1] for e in shell._collector.emits] == list(range(1000))
    assert len(shell._collector.acked) == 1000


@pytest.mark.parametrize("mode", ["split", "ok"])
def test_messages_split_across_reads_or_merged_into_one(mode: str) -> None:
    shell = bolt(probe(mode))
    shell.process(tup("merged", 0))
    shell.process(tup("crlf", 0))
    shell.process(tup("echo", 1))
    shell.end_window()
    shell.close()
    values = [e["values"] for e in shell._collector.emits]
    assert values == [[0], [1], [2], ["crlf"], ["echo", 1], ["tasks", [7, 8]]]
    assert len(shell._collector.acked) == 3


def test_non_ascii_is_escaped_out_and_accepted_raw_or_escaped_in(tmp_path: Path) -> None:
    text = "café ☃ 𝄞 \u2028 end\nend"
    for mode in ("ok", "rawutf8"):
        shell = bolt(probe(mode), transcript=str(tmp_path / mode))
        shell.process(tup("echo", text))
        shell.end_window()
        shell.close()
        assert shell._collector.emits[0]["values"] == ["echo", text]
    to_child = transcript(tmp_path, "to_child")
    assert to_child.isascii()
    assert b"\\ud834\\udd1e" in to_child  # U+1D11E as a surrogate pair
    assert b"\n" not in to_child.replace(b"\nend\n", b"")  # one line per message
    from_child = (tmp_path / "rawutf8").parent.glob("rawutf8*.from_child")
    assert any("café".encode() in p.read_bytes() for p in from_child)


def test_big_integers_and_floats_round_trip_exactly() -> None:
    values = [2**53 + 1, 2**64 + 5, -(2**63), 1.0, 1, 1e300]
    shell = bolt(probe("ok"))
    shell.process(tup("echo", values))
    shell.end_window()
    shell.close()
    echoed = shell._collector.emits[0]["values"][1]
    assert echoed == values
    assert [type(v) for v in echoed] == [type(v) for v in values]


def test_huge_messages_in_both_directions() -> None:
    size = 16 * 1024 * 1024
    shell = bolt(probe("ok"))
    shell.process(tup("echo", "y" * size))
    shell.process(tup("huge", size))
    shell.end_window()
    shell.close()
    emits = shell._collector.emits
    assert len(emits[0]["values"][1]) == size and len(emits[2]["values"][0]) == size


def test_messages_before_the_pid_are_handled() -> None:
    shell = bolt(probe("before_pid"))
    shell.end_window()
    shell.close()
    assert shell._collector.emits[0]["values"] == ["early"]


def test_log_levels_error_and_metrics(caplog: pytest.LogCaptureFixture) -> None:
    shell = bolt(probe("ok"), metrics={"hits": "count", "level": "assignable"})
    with caplog.at_level(1, logger="sparkstorm.multilang.shell.probe"):
        shell.process(tup("log", 0))
        shell.process(tup("metrics", 0))
        shell.process(tup("error", 0))
        shell.end_window()
        # the error's extra sync (pystorm does that) may end a window early: the ack follows
        shell.end_window()
    shell.close()
    levels = {r.getMessage().rsplit(" ", 1)[-1]: r.levelno for r in caplog.records
              if "level " in r.getMessage()}
    assert levels == {"0": 5, "1": logging.DEBUG, "2": logging.INFO, "3": logging.WARNING,
                      "4": logging.ERROR, "None": logging.INFO, "9": logging.INFO}
    assert all("ShellLog pid:" in r.getMessage() for r in caplog.records if "level " in
               r.getMessage())
    errors = shell._collector.errors
    assert "'nope'" in errors[0]
    assert errors[1] == "something broke"
    assert shell.shell_metrics == {"hits": 5, "level": {"x": 1}}
    assert len(shell._collector.acked) == 3


def test_unknown_commands_from_a_bolt_are_ignored() -> None:
    shell = bolt(probe("ok"))
    shell.process(tup("unknown", 0))
    shell.end_window()
    shell.close()
    assert len(shell._collector.acked) == 1


def test_environment_overrides_and_working_directory(tmp_path: Path) -> None:
    shell = bolt(probe("ok"), conf={"topology.multilang.resources.dir": str(tmp_path)},
                 env={"PROBE_VAR": "yes", "PATH": "/opt/extra/bin"})
    shell.process(tup("env", 0))
    shell.end_window()
    shell.close()
    cwd, var, path = shell._collector.emits[0]["values"]
    assert Path(cwd) == tmp_path and var == "yes"
    assert path.endswith(":/opt/extra/bin") and len(path) > len(":/opt/extra/bin")


@pytest.mark.parametrize("task", [False, 0.0, ""])
def test_the_fast_emit_path_refuses_the_tasks_parse_emit_refuses(task: object) -> None:
    shell = bolt(probe("ok"))
    held = tup("hold", 1)
    shell.process(held)
    shell.end_window()
    (tup_id,) = shell._pending
    emit = {"command": "emit", "tuple": ["x"], "anchors": [tup_id], "task": task,
            "need_task_ids": False}
    with pytest.raises(MultilangError) as info:
        shell._handle_all([emit])  # what a window's poll() hands over: the fast path
    assert info.value.code == "MULTILANG_MALFORMED_MESSAGE"
    assert f"'task' must be an integer task id, got {task!r}" in str(info.value)
    assert not shell._collector.emits
    shell._handle_all([{**emit, "task": 0}])  # the integer 0 means "not direct"
    assert [(e["stream"], e["task"]) for e in shell._collector.emits] == [("default", None)]
    shell.close()
