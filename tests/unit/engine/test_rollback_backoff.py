"""Rollbacks in a row back off; a replay that runs long enough starts over."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from sparkstorm.engine.driver.healing import watchdog_for
from sparkstorm.engine.driver.rollback_backoff import RollbackBackoff


def _waits(backoff: RollbackBackoff, times: list[float]) -> list[float]:
    return [backoff.after_rollback(now=t) for t in times]


def test_rollbacks_in_a_row_double_their_wait_from_the_third_up_to_the_maximum() -> None:
    backoff = RollbackBackoff(initial=0.5, maximum=3.0, reset=60.0)
    # the first two at once: one kill -9 of an executor often rolls back twice
    assert _waits(backoff, [0, 1, 2, 3, 5, 9, 13]) == [0.0, 0.0, 0.5, 1.0, 2.0, 3.0, 3.0]
    assert backoff.in_a_row == 7


def test_a_replay_that_runs_past_the_reset_starts_over() -> None:
    backoff = RollbackBackoff(initial=1.0, maximum=60.0, reset=30.0)
    assert _waits(backoff, [0, 1, 2, 4]) == [0.0, 0.0, 1.0, 2.0]
    # the last replay began at 4 + 2 = 6; 30 s later is still the same run, 31 s is not
    assert _waits(backoff, [36]) == [4.0]
    assert _waits(backoff, [40 + 31]) == [0.0] and backoff.in_a_row == 1


def test_the_time_held_does_not_count_as_running() -> None:
    backoff = RollbackBackoff(initial=40.0, maximum=40.0, reset=30.0)
    assert _waits(backoff, [0, 1, 2]) == [0.0, 0.0, 40.0]
    assert _waits(backoff, [2 + 40 + 5]) == [40.0], "5 s after a 40 s hold: still in a row"


def test_an_initial_wait_of_0_replays_at_once() -> None:
    backoff = RollbackBackoff(initial=0.0, maximum=60.0, reset=60.0)
    assert _waits(backoff, [0, 1, 2, 3]) == [0.0] * 4


def test_the_conf_sets_it_and_the_defaults() -> None:
    default = RollbackBackoff.from_conf({})
    assert (default.initial, default.maximum, default.reset) == (1.0, 60.0, 60.0)
    set_ = RollbackBackoff.from_conf({"topology.rollback.backoff.initial.secs": 2,
                                      "topology.rollback.backoff.max.secs": 10,
                                      "topology.rollback.backoff.reset.secs": 5})
    assert (set_.initial, set_.maximum, set_.reset) == (2.0, 10.0, 5.0)


def test_a_held_replay_ends_early_on_stop_and_is_no_stall_for_the_watchdog() -> None:
    backoff = RollbackBackoff(initial=1.0, maximum=60.0, reset=60.0)
    driver = SimpleNamespace(
        conf={"topology.watchdog.stall.secs": 60}, _owns_spark=False, completed_windows=0,
        _spark=None, pool=SimpleNamespace(missing=list), rollback_backoff=backoff,
        cancel_windows_in_flight=lambda why: None, request_new_session=lambda why: False,
        give_up=lambda why: None, name="t")
    watchdog = watchdog_for(driver)
    assert watchdog is not None and not watchdog.hooks.waiting()
    stop = threading.Event()
    holding = threading.Thread(target=backoff.hold, args=(30.0, stop))
    started = time.monotonic()
    holding.start()
    assert backoff.holding.wait(5)
    assert watchdog.hooks.waiting(), "a held replay is not a stall"
    stop.set()
    holding.join(5)
    assert time.monotonic() - started < 5 and not backoff.holding.is_set()
    assert not watchdog.hooks.waiting() and backoff.held == 1
