"""Every fault ends the same way.

A MultilangError with a stable code naming component and task, the child killed, the in-flight
inputs failed, nothing acked that was not processed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest

from sparkstorm.multilang import MultilangError, ShellBolt
from sparkstorm.testing.polling import wait_for
from tests.unit.multilang.harness import FAST, PATIENT, bolt, probe, tup


def _gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def _fault(shell: ShellBolt, *words: str, acked_first: bool = False) -> MultilangError:
    """Send an 'ok' tuple, then one tuple per word; return the error end_window raised."""
    ok = tup("plain", 0)
    shell.process(ok)
    shell.end_window()
    assert shell._collector.acked == [ok]
    inputs = [tup(word, 1) for word in words] + [tup("hold", 2)]
    pid = shell.subprocess.proc.pid
    with pytest.raises(MultilangError) as info:
        for item in inputs:
            shell.process(item)
        shell.end_window()
    assert _gone(pid), "the child must be killed"
    expected = [ok, inputs[0]] if acked_first else [ok]
    assert shell._collector.acked == expected, "nothing acked but what the child acked"
    assert set(shell._collector.failed) <= set(inputs)
    assert inputs[-1] in shell._collector.failed, "in-flight inputs are failed"
    assert set(shell._collector.causes) == {"crash"}, "a dead child is a crash, not a fail"
    assert shell.pending_count == 0
    assert "bolt 'probe' task 3" in str(info.value)
    with pytest.raises(MultilangError):  # a dead instance refuses work until restarted
        shell.process(tup("plain", 3))
    return info.value


@pytest.mark.parametrize(("word", "code", "shown"), [
    ("garbage", "MULTILANG_MALFORMED_MESSAGE", "hello from print()"),
    ("badjson", "MULTILANG_MALFORMED_MESSAGE", "not JSON"),
    ("array", "MULTILANG_MALFORMED_MESSAGE", "got list"),
    ("nocommand", "MULTILANG_MALFORMED_MESSAGE", "'command'"),
    ("empty", "MULTILANG_MALFORMED_MESSAGE", "empty message"),
    ("badutf8", "MULTILANG_MALFORMED_MESSAGE", "invalid UTF-8"),
    ("badfield", "MULTILANG_MALFORMED_MESSAGE", "need_task_ids"),
    ("ackunknown", "MULTILANG_UNKNOWN_TUPLE_ID", "'12345'"),
    ("acktwice", "MULTILANG_UNKNOWN_TUPLE_ID", "already acked"),
    ("anchorunknown", "MULTILANG_UNKNOWN_TUPLE_ID", "'999'"),
    ("emptystream", "MULTILANG_UNDECLARED_STREAM", "''"),
    ("task_false", "MULTILANG_MALFORMED_MESSAGE", "'task' must be an integer task id, got False"),
    ("task_float", "MULTILANG_MALFORMED_MESSAGE", "'task' must be an integer task id, got 0.0"),
    ("task_empty", "MULTILANG_MALFORMED_MESSAGE", "'task' must be an integer task id, got ''"),
    ("exit", "MULTILANG_SUBPROCESS_EXITED", "probe: exiting on purpose"),
])
def test_protocol_faults(word: str, code: str, shown: str) -> None:
    error = _fault(bolt(probe("ok"), PATIENT), word, acked_first=word == "acktwice")
    assert error.code == code
    assert shown in str(error)


def test_exit_reports_the_exit_code_and_stderr() -> None:
    error = _fault(bolt(probe("ok"), PATIENT), "exit")
    assert "exit code 3" in str(error)


def test_a_bolt_that_stops_answering_heartbeats_times_out() -> None:
    shell = bolt(probe("no_heartbeat"), FAST)
    item = tup("hold", 0)
    shell.process(item)
    started = time.monotonic()
    with pytest.raises(MultilangError) as info:
        shell.end_window()
    assert info.value.code == "MULTILANG_HEARTBEAT_TIMEOUT"
    assert 0.9 < time.monotonic() - started < 5
    assert shell._collector.failed == [item]


def test_a_bolt_busy_longer_than_the_timeout_is_killed() -> None:
    shell = bolt(probe("ok"), FAST)
    shell.process(tup("sleep", 30))
    with pytest.raises(MultilangError) as info:
        shell.end_window()
    assert info.value.code == "MULTILANG_HEARTBEAT_TIMEOUT"


def _startup_error(shell: ShellBolt) -> MultilangError:
    """Start-up faults are kept and raised from the first call (reported like the rest).

    A tuple handed to the broken instance is failed at once, so it replays.
    """
    with pytest.raises(MultilangError) as info:
        shell.end_window()
    item = tup("plain", 0)
    with pytest.raises(MultilangError):
        shell.process(item)
    assert shell._collector.failed == [item] and shell._collector.causes == ["crash"]
    return info.value


def test_a_child_crashing_at_start_up() -> None:
    error = _startup_error(bolt(probe("crash_at_start"), PATIENT))
    assert error.code == "MULTILANG_SUBPROCESS_EXITED"
    assert "probe: cannot start, missing config" in str(error)
    assert "exit code 4" in str(error)


def test_a_child_that_never_answers_the_handshake() -> None:
    started = time.monotonic()
    shell = bolt(probe("no_handshake"), FAST)
    assert time.monotonic() - started < 5
    error = _startup_error(shell)
    assert error.code == "MULTILANG_HANDSHAKE_TIMEOUT"
    assert _gone(shell.subprocess.proc.pid)


def test_a_child_that_exits_right_after_the_handshake() -> None:
    error = _startup_error_or_first_window(bolt(probe("exit_after_handshake"), PATIENT))
    assert error.code == "MULTILANG_SUBPROCESS_EXITED"
    assert "exit code 0" in str(error)


def _startup_error_or_first_window(shell: ShellBolt) -> MultilangError:
    with pytest.raises(MultilangError) as info:
        shell.process(tup("plain", 0))
        shell.end_window()
    return info.value


def test_a_child_printing_to_stdout_before_its_pid() -> None:
    error = _startup_error(bolt(probe("stdout_first"), PATIENT))
    assert error.code == "MULTILANG_MALFORMED_MESSAGE"
    assert "Starting up..." in str(error)


def test_a_command_that_does_not_exist() -> None:
    error = _startup_error(bolt(["/nonexistent/sparkstorm-probe"], PATIENT))
    assert error.code == "MULTILANG_SPAWN_FAILED"
    assert "PATH" in str(error)


def test_a_lot_of_stderr_never_blocks_the_child(caplog: pytest.LogCaptureFixture) -> None:
    shell = bolt(probe("ok"), PATIENT)
    with caplog.at_level("INFO", logger="sparkstorm.multilang.stderr.probe"):
        shell.process(tup("stderr", 20 * 1024))  # 20 MiB of stderr, far beyond a pipe
        shell.process(tup("plain", 1))
        shell.end_window()
    shell.close()
    assert len(shell._collector.acked) == 2
    logged = [r for r in caplog.records if r.name == "sparkstorm.multilang.stderr.probe"]
    assert 0 < len(logged) < 2000, "stderr logging is rate-limited"


def test_close_kills_the_child_and_the_pid_it_reported(tmp_path: Path) -> None:
    # setsid: the reported child runs in another session, beyond the process group kill
    wrapper = ["sh", "-c", f"setsid {' '.join(probe('ok'))}; sleep 3600"]
    shell = bolt(wrapper, PATIENT)
    shell.process(tup("plain", 0))
    shell.end_window()
    spawned, reported = shell.subprocess.proc.pid, shell.subprocess.reported_pid
    pid_dir = shell.subprocess.pid_dir
    assert reported != spawned and (Path(pid_dir) / str(reported)).exists()
    shell.close()
    # SIGKILL is delivered asynchronously to a process we are not the parent of
    wait_for(lambda: _gone(spawned) and _gone(reported), timeout=5, interval=0.01,
             message="both processes gone")
    assert not os.path.exists(pid_dir)


def test_a_garbage_collected_instance_leaves_no_child() -> None:
    shell = bolt(probe("ok"), PATIENT)
    proc = shell.subprocess.proc
    del shell
    import gc

    gc.collect()
    assert proc.wait(5) is not None
