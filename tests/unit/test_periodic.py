"""PeriodicThread, the timer of every background job: rounds, wake-ups, failures, stop."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from sparkstorm.periodic import PeriodicThread
from sparkstorm.testing.polling import wait_for

HOUR = 3600.0
"""An interval no test waits for: any round it sees came from a start or a wake."""


class Rounds:
    """An action that counts its rounds and can hold one round until released."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.hold = threading.Event()
        self.hold.set()
        self.inside = threading.Event()

    def __call__(self) -> None:
        self.times.append(time.monotonic())
        self.inside.set()
        assert self.hold.wait(10), "round held for too long"


def test_the_first_round_runs_at_once() -> None:
    rounds = Rounds()
    timer = PeriodicThread("t", HOUR, rounds)
    timer.start()
    try:
        wait_for(lambda: len(rounds.times) == 1, 10, message="the first round")
    finally:
        timer.stop(10)
    assert not timer.alive


def test_with_first_now_false_the_first_round_waits_one_interval() -> None:
    rounds = Rounds()
    timer = PeriodicThread("t", 0.3, rounds, first_now=False)
    started = time.monotonic()
    timer.start()
    try:
        wait_for(lambda: len(rounds.times) >= 1, 10, message="the first round")
    finally:
        timer.stop(10)
    assert rounds.times[0] - started >= 0.3


def test_wake_runs_a_round_now() -> None:
    rounds = Rounds()
    timer = PeriodicThread("t", HOUR, rounds, first_now=False)
    timer.start()
    try:
        timer.wake()
        wait_for(lambda: len(rounds.times) == 1, 10, message="the woken round")
    finally:
        timer.stop(10)


def test_a_wake_during_a_round_runs_another_right_after_it() -> None:
    rounds = Rounds()
    rounds.hold.clear()
    timer = PeriodicThread("t", HOUR, rounds)
    timer.start()
    try:
        assert rounds.inside.wait(10)
        timer.wake()  # a watch fired while the round read the old state
        rounds.hold.set()
        wait_for(lambda: len(rounds.times) == 2, 10, message="the round after the wake")
    finally:
        timer.stop(10)


def test_a_failing_round_is_logged_and_the_next_one_runs(
        caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            msg = "first round fails"
            raise RuntimeError(msg)

    timer = PeriodicThread("flaky-job", 0.01, flaky)
    with caplog.at_level(logging.ERROR, logger="sparkstorm.periodic"):
        timer.start()
        try:
            wait_for(lambda: len(calls) >= 2, 10, message="a round after the failure")
        finally:
            timer.stop(10)
    (record,) = [r for r in caplog.records if "flaky-job" in r.getMessage()]
    assert record.exc_info is not None and "first round fails" in str(record.exc_info[1])


def test_stop_interrupts_the_wait_and_ends_the_thread() -> None:
    rounds = Rounds()
    timer = PeriodicThread("t", HOUR, rounds)
    timer.start()
    wait_for(lambda: len(rounds.times) == 1, 10, message="the first round")
    timer.stop(10)  # returns long before the hour is over
    assert not timer.alive and len(rounds.times) == 1


def test_a_round_may_stop_its_own_timer() -> None:
    timer: PeriodicThread

    def stop_myself() -> None:
        timer.stop(10)  # must not wait for itself

    timer = PeriodicThread("t", 0.01, stop_myself)
    timer.start()
    wait_for(lambda: not timer.alive, 10, message="the timer ends after its own stop")
