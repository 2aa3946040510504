"""The driver's watchdog (``engine.driver.watchdog``): when it acts, and in what order.

A fake clock and a fake driver: the remedies are recorded, not applied (the host-A chaos
test, ``tests/integration/hosts/test_chaos_hosts.py``, applies them to a real one).
"""

from __future__ import annotations

from sparkstorm.engine.driver.healing import stall_bound
from sparkstorm.engine.driver.watchdog import (
    CANCEL,
    EXIT,
    FIRST_WINDOW_SECS,
    NEW_SESSION,
    DriverHooks,
    Watchdog,
)


class FakeDriver:
    def __init__(self, executors: int | None = 2, can_renew: bool = True) -> None:
        self.windows = 0
        self.executors = executors
        self.waiting = False
        self.done: list[str] = []
        self.can_renew = can_renew

    def hooks(self) -> DriverHooks:
        return DriverHooks(
            windows=lambda: self.windows, executors=lambda: self.executors,
            waiting=lambda: self.waiting,
            cancel=lambda reason: self.done.append(CANCEL),
            renew=(lambda reason: self.done.append(NEW_SESSION) is None)
            if self.can_renew else None,
            give_up=lambda reason: self.done.append(EXIT))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _watch(driver: FakeDriver, clock: Clock) -> Watchdog:
    watchdog = Watchdog(10.0, driver.hooks(), "t", clock=clock)
    watchdog.check()  # the first look
    driver.windows += 1  # the application's first window completed
    watchdog.check()
    return watchdog


def _run(watchdog: Watchdog, clock: Clock, until: float) -> None:
    while clock.now < until:
        clock.now += 1.0
        watchdog.check()


def test_a_driver_that_completes_windows_is_left_alone() -> None:
    driver, clock = FakeDriver(), Clock()
    watchdog = _watch(driver, clock)
    for _ in range(100):
        clock.now += 1.0
        driver.windows += 1
        watchdog.check()
    assert driver.done == [] and watchdog.summary()["remedies"] == 0


def test_a_stall_gets_each_remedy_one_interval_after_the_other() -> None:
    driver, clock = FakeDriver(), Clock()
    watchdog = _watch(driver, clock)
    _run(watchdog, clock, 9.0)
    assert driver.done == [], "not before the bound"
    _run(watchdog, clock, 10.0)
    assert driver.done == [CANCEL]
    _run(watchdog, clock, 20.0)
    assert driver.done == [CANCEL, NEW_SESSION]
    _run(watchdog, clock, 20.0 + FIRST_WINDOW_SECS - 1)
    assert driver.done == [CANCEL, NEW_SESSION], "a new application's first window takes long"
    _run(watchdog, clock, 20.0 + FIRST_WINDOW_SECS)
    assert driver.done == [CANCEL, NEW_SESSION, EXIT]
    summary = watchdog.summary()
    assert summary["stalled"] and summary["remedies"] == 3
    assert [s["action"] for s in summary["steps"]] == [CANCEL, NEW_SESSION, EXIT]
    assert summary["steps"][0]["reason"] == "no window completed for 10 s"


def test_no_spark_executor_goes_to_a_new_application_first() -> None:
    driver, clock = FakeDriver(executors=0), Clock()
    watchdog = _watch(driver, clock)
    _run(watchdog, clock, 10.0)
    assert driver.done == [NEW_SESSION]
    assert "has no executor" in watchdog.summary()["steps"][0]["reason"]
    _run(watchdog, clock, 10.0 + FIRST_WINDOW_SECS)
    assert driver.done == [NEW_SESSION, EXIT]


def test_a_driver_that_cannot_renew_cancels_then_exits() -> None:
    driver, clock = FakeDriver(can_renew=False), Clock()
    watchdog = _watch(driver, clock)
    _run(watchdog, clock, 20.0)
    assert driver.done == [CANCEL, EXIT]


def test_progress_after_a_remedy_heals_and_starts_over() -> None:
    driver, clock = FakeDriver(executors=0), Clock()
    watchdog = _watch(driver, clock)
    _run(watchdog, clock, 10.0)
    assert driver.done == [NEW_SESSION]
    clock.now += 2.0
    driver.windows += 1  # the new application runs windows
    watchdog.check()
    summary = watchdog.summary()
    assert not summary["stalled"]
    assert summary["steps"][-1]["action"] == "healed"
    assert "windows complete again after 12 s" in summary["steps"][-1]["reason"]
    _run(watchdog, clock, 22.0)  # a new stall: the ladder starts again
    assert driver.done == [NEW_SESSION, NEW_SESSION]


def test_the_first_window_gets_longer() -> None:
    driver, clock = FakeDriver(), Clock()
    watchdog = Watchdog(10.0, driver.hooks(), "t", clock=clock)
    _run(watchdog, clock, FIRST_WINDOW_SECS - 1)
    assert driver.done == []
    _run(watchdog, clock, FIRST_WINDOW_SECS + 1)
    assert driver.done == [CANCEL]


def test_waiting_for_other_workers_is_not_a_stall() -> None:
    driver, clock = FakeDriver(), Clock()
    watchdog = _watch(driver, clock)
    driver.waiting = True
    _run(watchdog, clock, 60.0)
    assert driver.done == []
    driver.waiting = False
    _run(watchdog, clock, 70.0)
    assert driver.done == [CANCEL]


def test_the_bound_leaves_a_silent_executor_to_the_engine_first() -> None:
    assert stall_bound({"topology.watchdog.stall.secs": 60,
                        "topology.executor.answer.timeout.secs": 30}) == 60.0
    assert stall_bound({"topology.watchdog.stall.secs": 10,
                        "topology.executor.answer.timeout.secs": 30}) == 35.0
    assert stall_bound({"topology.watchdog.stall.secs": 0}) == 0.0
