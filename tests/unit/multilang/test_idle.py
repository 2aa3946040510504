"""Subprocess timeouts count from when the host starts waiting for an answer.

A healthy child left idle longer than ``topology.subprocess.timeout.secs`` keeps working (a
deactivated spout, an idle topology, windows far apart), while a child that stops answering still
times out. Idle time is skipped with a fake clock, so no test sleeps through it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest

from sparkstorm.multilang import MultilangError, process
from tests.unit.multilang.harness import bolt, probe, spout, tup

FAST = {"topology.subprocess.timeout.secs": 1}


@pytest.fixture
def idle(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[float], None]]:
    """``idle(seconds)``: from now on the subprocess clock reads ``seconds`` later."""
    skipped = [0.0]
    monkeypatch.setattr(process, "now", lambda: time.monotonic() + skipped[0])

    def skip(seconds: float) -> None:
        skipped[0] += seconds

    yield skip


def test_a_bolt_idle_longer_than_the_timeout_keeps_working(idle: Callable[[float], None]) -> None:
    shell = bolt(probe("ok"), FAST)
    first, second = tup("plain", 1), tup("plain", 2)
    shell.process(first)
    shell.end_window()
    idle(10)  # ten timeouts without a window: the child has not been asked anything
    shell.process(second)
    shell.end_window()
    assert shell._collector.acked == [first, second]
    assert shell.subprocess.alive
    shell.close()


def test_a_spout_deactivated_longer_than_the_timeout_keeps_working(
        idle: Callable[[float], None], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROBE_IDS", json.dumps([5]))
    shell = spout(probe("spout"), FAST)
    shell.activate()
    shell.deactivate()
    idle(10)
    shell.activate()
    shell.next_tuple()
    assert [e["tup_id"] for e in shell._collector.emits] == [5]
    assert shell.subprocess.alive
    shell.close()


def _times_out(call: Callable[[], None], code: str) -> float:
    """Run ``call``; it must raise ``code``; return how long it waited (real seconds)."""
    started = time.monotonic()
    with pytest.raises(MultilangError) as info:
        call()
    assert info.value.code == code
    return time.monotonic() - started


def test_an_idle_bolt_that_stops_answering_still_times_out(idle: Callable[[float], None]) -> None:
    shell = bolt(probe("no_heartbeat"), FAST)
    item = tup("hold", 0)
    idle(10)
    shell.process(item)
    waited = _times_out(shell.end_window, "MULTILANG_HEARTBEAT_TIMEOUT")
    # a full timeout from the start of the wait: not at once because of the idle time
    assert 0.9 < waited < 5
    assert shell._collector.failed == [item]


def test_an_idle_spout_that_stops_answering_still_times_out(idle: Callable[[float], None]) -> None:
    shell = spout(probe("spout_hang"), FAST)
    shell.activate()
    idle(10)
    waited = _times_out(lambda: _until_raises(shell.next_tuple), "MULTILANG_SYNC_TIMEOUT")
    assert 0.9 < waited < 5
    assert not shell.subprocess.alive


def _until_raises(call: Callable[[], None]) -> None:
    """Call ``call`` until it raises (a shell spout waits for its sync in short slices)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        call()
    pytest.fail("no error within 10 s")
