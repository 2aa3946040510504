"""The window sizer: period from the latency target, limits that follow load, bounded."""

from __future__ import annotations

import random

import pytest

from sparkstorm.config.loader import validate_conf
from sparkstorm.engine.driver import window_sizer as window_size
from sparkstorm.engine.driver.window_cost import JobCost
from sparkstorm.engine.driver.window_sizer import (
    GROWTH,
    MIN_LIMIT,
    OVERLAP_WAIT_SHARE,
    WindowSizer,
)
from sparkstorm.errors import ConfigError

BOUND = 20_000
FIXED_SECONDS = 0.2
"""A window job's fixed cost in the simulated topology."""
SECONDS_PER_TUPLE = 40e-6
"""Its cost per tuple (the word-count benchmark's order of magnitude)."""


class SimulatedSpout:
    """One spout executor offered ``demand`` tuples per window, as the driver sees it.

    The limit a window's control carries applies to the buffer the next window takes, so
    what a window hands over was filled under the limit sent one window earlier.
    """

    def __init__(self, sizer: WindowSizer) -> None:
        self.sizer = sizer
        self.filled_under = sizer.limit(0) or BOUND
        self.limits: list[int] = []

    def window(self, demand: int) -> None:
        sent = self.sizer.limit(0) or BOUND
        handed = min(demand, self.filled_under)
        full = {0} if demand >= self.filled_under else set()
        self.sizer.observe(FIXED_SECONDS + SECONDS_PER_TUPLE * handed, {0: handed}, full)
        self.filled_under = sent
        self.limits.append(self.sizer.limit(0) or BOUND)

    def run(self, demand: int, windows: int) -> list[int]:
        start = len(self.limits)
        for _ in range(windows):
            self.window(demand)
        return self.limits[start:]


def sizer(target_ms: int = 1000, window_ms: int = 500) -> WindowSizer:
    return WindowSizer(target_ms, window_ms, BOUND, [0])


def test_period_is_a_quarter_of_the_target_capped_by_window_ms() -> None:
    assert sizer(1000, 500).period_seconds == 0.25
    assert sizer(4000, 500).period_seconds == 0.5
    assert sizer(200, 500).period_seconds == 0.05


def test_target_zero_is_the_fixed_behaviour() -> None:
    fixed = sizer(0, 500)
    assert fixed.period_seconds == 0.5
    assert fixed.limit(0) is None
    fixed.observe(2.0, {0: BOUND}, {0})
    assert fixed.limit(0) is None


def test_before_any_window_carried_tuples_the_limit_is_the_bound() -> None:
    fresh = sizer()
    assert fresh.limit(0) == BOUND
    fresh.observe(0.3, {}, ())  # Spark's first, empty windows teach nothing
    assert fresh.limit(0) == BOUND


class OverlappedSpout:
    """A spout offered ``rate`` tuples per window from the start, windows overlapping.

    A window's control sets the fill the next window hands over, and the control of
    window ``w+1`` leaves before window ``w``'s result is in: what the sizer learns from a
    window limits the fill handed over three windows later. Tuples the limit holds back
    wait for later windows (a queue in front of the spout, as the benchmark's spout has).
    """

    def __init__(self, sizer: WindowSizer) -> None:
        self.sizer = sizer
        self.sent = [sizer.limit(0) or BOUND] * 3
        self.backlog = 0

    def window(self, rate: int) -> int:
        """One window; the backlog after it."""
        due = self.backlog + rate
        filled_under = self.sent.pop(0)
        handed = min(due, filled_under)
        self.backlog = due - handed
        self.sent.append(self.sizer.limit(0) or BOUND)
        self.sizer.observe(FIXED_SECONDS + SECONDS_PER_TUPLE * handed, {0: handed},
                           {0} if due >= filled_under else set())
        return self.backlog


def test_a_steady_high_load_from_the_start_builds_no_backlog(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rate = 6000  # tuples per window: 80 % of the benchmark's maximum at 0.3 s periods
    backlogs = [OverlappedSpout(sizer()).window(rate) for _ in range(10)]
    assert backlogs == [0] * 10
    # the reason for the bound at the start: a ramp from 1,000 (x4 per window that waited,
    # three windows late) holds back more than three windows' tuples at that load
    monkeypatch.setattr(window_size, "INITIAL_LIMIT", 1000)
    ramped = OverlappedSpout(sizer())
    assert max(ramped.window(rate) for _ in range(10)) > 3 * rate


def test_saturation_grows_to_the_buffer_bound_within_a_few_windows() -> None:
    spout = SimulatedSpout(sizer())
    light = spout.run(demand=500, windows=30)[-1]  # learnt a light load
    assert light < BOUND // GROWTH**2
    limits = spout.run(demand=10**9, windows=6)
    assert limits[:3] == [GROWTH * light, GROWTH**2 * light, BOUND]
    assert limits[3:] == [BOUND] * 3


def test_steady_light_load_converges_without_oscillating() -> None:
    limits = SimulatedSpout(sizer()).run(demand=1000, windows=40)
    # the job budget (0.5 s at the smoothed job seconds per tuple) allows more than 2 x 1000
    budget = int(0.5 / ((FIXED_SECONDS + SECONDS_PER_TUPLE * 1000) / 1000))
    assert budget > 2000 and limits[-1] == budget
    assert len(set(limits[-10:])) == 1  # settled
    assert all(limit > 1000 for limit in limits[1:])  # not binding once it has learnt


def test_idle_windows_leave_the_limit_as_it_is() -> None:
    spout = SimulatedSpout(sizer())
    learnt = spout.run(demand=1000, windows=20)[-1]
    assert spout.run(demand=0, windows=20) == [learnt] * 20


def test_steady_moderate_load_settles_at_twice_what_a_window_carries() -> None:
    limits = SimulatedSpout(sizer()).run(demand=6000, windows=50)
    assert limits[-1] == 12_000
    assert len(set(limits[-10:])) == 1


def test_follows_a_load_step_up_then_down() -> None:
    spout = SimulatedSpout(sizer())
    light = spout.run(demand=1000, windows=20)
    heavy = spout.run(demand=10**9, windows=10)
    assert heavy[-1] == BOUND and light[-1] < BOUND // 4
    assert heavy.index(BOUND) <= 6  # up within a few windows
    down = spout.run(demand=1000, windows=30)
    # down by at most half per window, back to the light-load limit
    assert all(b >= a // 2 for a, b in zip([BOUND, *down], down, strict=False))
    assert down[-1] == light[-1]


def test_limits_stay_bounded_and_move_by_bounded_steps() -> None:
    rng = random.Random(7)
    spout = SimulatedSpout(sizer())
    for _ in range(500):
        spout.window(rng.choice([0, 50, 1000, 30_000, rng.randrange(100_000)]))
    limits = [BOUND, *spout.limits]
    assert all(MIN_LIMIT <= limit <= BOUND for limit in limits)
    assert all(a / 2 <= b <= GROWTH * a for a, b in zip(limits, limits[1:], strict=False))


def test_each_spout_executor_has_its_own_limit() -> None:
    two = WindowSizer(1000, 500, BOUND, [0, 1])
    for _ in range(10):
        two.observe(0.3, {0: 10, 1: 10}, ())
    assert two.limit(0) == two.limit(1) < BOUND // 4
    two.observe(0.3, {0: 10, 1: 10}, {0})
    assert two.limit(0) == GROWTH * two.limit(1)


def test_a_bound_below_the_smallest_limit_is_still_the_bound() -> None:
    small = WindowSizer(1000, 500, 5, [0])
    assert small.limit(0) == 5
    small.observe(0.1, {0: 1}, ())
    assert small.limit(0) == 5


def test_a_negative_target_is_a_clear_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_conf({"topology.window.target.latency.ms": -5}, where="topology conf")
    assert caught.value.code == "CONFIG_OUT_OF_RANGE"
    assert "topology.window.target.latency.ms" in str(caught.value)


def test_overlap_waits_only_for_a_job_about_to_end() -> None:
    moderate = sizer()  # period 0.25 s
    assert moderate.overlap_wait(0.25) == 0.0  # no job time learnt yet: overlap
    for _ in range(30):
        moderate.observe(0.3, {0: 3000})
    assert moderate.job_seconds == pytest.approx(0.3)
    # at the period the job has 0.05 s to go, under half a period: wait for it
    assert moderate.overlap_wait(0.25) == pytest.approx(0.05)
    assert moderate.overlap_wait(0.35) == 0.0  # late: how late is unknown, overlap


def test_overlap_goes_on_when_jobs_run_for_periods() -> None:
    heavy = sizer()
    for _ in range(30):
        heavy.observe(0.6, {0: 10_000})
    # 0.35 s to go at the period: more than half a period
    assert OVERLAP_WAIT_SHARE * heavy.period_seconds < 0.6 - 0.25
    assert heavy.overlap_wait(0.25) == 0.0
    assert sizer(0).overlap_wait(0.0) == 0.0  # the sizer off: overlap as configured


# -- saturation, the cost model's period, the automatic in-flight bound -------------------

MAX_BOUND = 100_000


class TimedSpout:
    """One spout executor offered ``rate`` tuples per second, windows one period apart.

    Each window hands over what arrived since the last (plus any backlog) up to the limit
    it was filled under; its job takes ``FIXED_SECONDS + SECONDS_PER_TUPLE * handed``; the
    next window starts a period later, or when the job ends if that is later (no overlap).
    """

    def __init__(self, sizer: WindowSizer) -> None:
        self.sizer = sizer
        self.clock = 0.0
        self.backlog = 0.0
        self.since = sizer.period_seconds
        """Seconds from the last window's start to the next's."""
        self.filled_under = sizer.limit(0) or BOUND
        self.handed: list[int] = []

    def run(self, rate: float, windows: int) -> list[int]:
        start = len(self.handed)
        for _ in range(windows):
            due = self.backlog + rate * self.since
            handed = int(min(due, self.filled_under))
            self.backlog = due - handed
            job = FIXED_SECONDS + SECONDS_PER_TUPLE * handed
            sent = self.sizer.limit(0) or BOUND
            self.sizer.observe(job, {0: handed}, {0} if due >= self.filled_under else set(),
                               started=self.clock)
            self.filled_under = sent
            self.since = max(self.sizer.period_seconds, job)
            self.clock += self.since
            self.handed.append(handed)
        return self.handed[start:]


def budget_share(sizer: WindowSizer, target_seconds: float = 1.0) -> float:
    """Tuples whose job fits the job budget, at the sizer's smoothed seconds per tuple."""
    assert sizer.seconds_per_tuple is not None
    return min(sizer.max_bound, window_size.JOB_SHARE * target_seconds / sizer.seconds_per_tuple)


def saturating(max_bound: int = MAX_BOUND, auto_pending: bool = False) -> WindowSizer:
    return WindowSizer(1000, 500, BOUND, [0], max_bound=max_bound, auto_pending=auto_pending)


def test_saturation_grows_past_the_buffer_size_until_the_fixed_cost_is_amortised() -> None:
    spout = SimulatedSpout(saturating())
    spout.run(demand=500, windows=10)  # light: learns the job's fixed cost
    spout.run(demand=5000, windows=10)  # another size: learns its cost per tuple
    limits = spout.run(demand=10**9, windows=10)
    sizer = spout.sizer
    assert sizer.cost.fixed_seconds == pytest.approx(FIXED_SECONDS, rel=0.05)
    assert sizer.cost.seconds_per_tuple == pytest.approx(SECONDS_PER_TUPLE, rel=0.05)
    # 0.2 s fixed against 40 us a tuple: a tenth of the job at 45,000 tuples
    amortised = int(FIXED_SECONDS * (1 - window_size.FIXED_SHARE)
                    / (window_size.FIXED_SHARE * SECONDS_PER_TUPLE))
    assert BOUND < limits[-1] == sizer.saturation_bound
    assert limits[-1] == pytest.approx(amortised, rel=0.05)
    assert max(limits[-3:]) - min(limits[-3:]) <= 1  # settled (but for the fit's rounding)


def test_the_saturation_bound_is_at_least_the_job_budget_s_windows() -> None:
    """The fit's fixed cost is its noisiest part; windows that fit the budget stay allowed.

    On the batch word count the fit said 0.000-0.08 s fixed from one window to the next,
    and the amortising size with it 6,000-100,000 sentences: the windows halved and grew
    back while their jobs took a third of the budget.
    """
    sizer = saturating(max_bound=200_000)
    clock = 0.0
    for handed in (40_000, 80_000) * 5:  # 3 us a tuple and (nearly) no fixed cost
        sizer.observe(0.001 + 3e-6 * handed, {0: handed}, set(), started=clock)
        clock += 0.25
    amortised = sizer.cost.amortising_size(window_size.FIXED_SHARE)
    assert amortised is not None and amortised < BOUND
    assert sizer.saturation_bound == int(budget_share(sizer)) > 100_000


def test_the_saturation_bound_is_the_memory_cap_when_the_cost_says_more() -> None:
    spout = SimulatedSpout(saturating(max_bound=30_000))
    spout.run(demand=500, windows=10)
    assert spout.run(demand=10**9, windows=8)[-1] == 30_000
    # and no growth past the buffer size when the cap is not above it (as before)
    capped = SimulatedSpout(saturating(max_bound=5_000))
    assert capped.run(demand=10**9, windows=8)[-1] == BOUND


class SizedSpout(SimulatedSpout):
    """A :class:`SimulatedSpout` whose tuples are ``tuple_bytes`` each on the wire."""

    def __init__(self, sizer: WindowSizer, tuple_bytes: int) -> None:
        super().__init__(sizer)
        self.tuple_bytes = tuple_bytes

    def window(self, demand: int) -> None:
        sent = self.sizer.limit(0) or BOUND
        handed = min(demand, self.filled_under)
        full = {0} if demand >= self.filled_under else set()
        self.sizer.observe(FIXED_SECONDS + SECONDS_PER_TUPLE * handed, {0: handed}, full,
                           handed_bytes={0: handed * self.tuple_bytes})
        self.filled_under = sent
        self.limits.append(self.sizer.limit(0) or BOUND)


def bytes_capped(max_bytes: int) -> WindowSizer:
    return WindowSizer(1000, 500, BOUND, [0], max_bound=MAX_BOUND, max_bytes=max_bytes)


def test_saturated_windows_grow_no_further_than_the_byte_cap() -> None:
    # 1,000-byte tuples under a 40 MB cap: 40,000 tuples, though the cost says 45,000 and
    # the tuple cap 100,000
    spout = SizedSpout(bytes_capped(40_000_000), tuple_bytes=1000)
    spout.run(demand=500, windows=10)
    spout.run(demand=5000, windows=10)
    limits = spout.run(demand=10**9, windows=10)
    assert spout.sizer.byte_bound(0) == 40_000
    assert limits[-3:] == [40_000] * 3
    assert max(spout.limits) <= 40_000
    # small tuples: the cap does not bind, the fixed cost's amortising size does
    small = SizedSpout(bytes_capped(40_000_000), tuple_bytes=100)
    small.run(demand=500, windows=10)
    small.run(demand=5000, windows=10)
    assert small.run(demand=10**9, windows=10)[-1] == small.sizer.saturation_bound > 40_000


def test_the_byte_cap_never_takes_windows_below_the_buffer_size() -> None:
    spout = SizedSpout(bytes_capped(1_000_000), tuple_bytes=10_000)  # 100 tuples' worth
    assert spout.run(demand=10**9, windows=8)[-1] == BOUND
    assert spout.sizer.byte_bound(0) == BOUND


def test_a_byte_cap_learnt_later_brings_grown_windows_back_by_halves() -> None:
    spout = SizedSpout(bytes_capped(30_000_000), tuple_bytes=100)
    spout.run(demand=500, windows=10)
    spout.run(demand=5000, windows=10)
    grown = spout.run(demand=10**9, windows=10)[-1]
    assert grown > 30_000
    spout.tuple_bytes = 1000  # the tuples grew: 30,000 fit now
    shrinking = spout.run(demand=10**9, windows=12)
    assert all(b >= a // 2 for a, b in zip([grown, *shrinking], shrinking, strict=False))
    assert shrinking[-1] == pytest.approx(30_000, rel=0.02)  # bytes per tuple smoothed


def test_no_byte_cap_without_bytes_reported_or_with_the_cap_off() -> None:
    unreported = SimulatedSpout(bytes_capped(1_000_000))
    unreported.run(demand=500, windows=10)
    assert unreported.run(demand=10**9, windows=10)[-1] > BOUND
    assert unreported.sizer.byte_bound(0) is None
    off = SizedSpout(bytes_capped(0), tuple_bytes=10_000)
    off.run(demand=500, windows=10)
    assert off.run(demand=10**9, windows=10)[-1] > BOUND


def test_after_saturation_the_limit_shrinks_back_when_the_load_drops() -> None:
    spout = SimulatedSpout(saturating())
    light = spout.run(demand=1000, windows=20)[-1]
    heavy = spout.run(demand=10**9, windows=10)[-1]
    assert heavy > BOUND
    down = spout.run(demand=1000, windows=40)
    assert all(b >= a // 2 for a, b in zip([heavy, *down], down, strict=False))
    assert down[-1] == light


def test_limits_stay_within_the_cap_under_any_load() -> None:
    rng = random.Random(11)
    spout = SimulatedSpout(saturating(max_bound=60_000))
    for _ in range(500):
        spout.window(rng.choice([0, 50, 1000, 30_000, rng.randrange(200_000)]))
    limits = [BOUND, *spout.limits]
    assert all(MIN_LIMIT <= limit <= 60_000 for limit in limits)
    assert all(a / 2 <= b <= GROWTH * a for a, b in zip(limits, limits[1:], strict=False))


def test_light_load_keeps_the_base_period_under_the_target() -> None:
    spout = TimedSpout(saturating())
    spout.run(rate=2000, windows=40)
    # 500 tuples a window: 0.22 s jobs in 0.25 s periods keep up within the serial capacity
    assert spout.sizer.period_seconds == 0.25
    assert spout.backlog < 1


def test_a_load_the_base_period_cannot_carry_gets_the_shortest_period_that_keeps_up() -> None:
    spout = TimedSpout(saturating())
    spout.run(rate=1000, windows=10)
    spout.run(rate=5000, windows=10)
    handed = spout.run(rate=15_000, windows=60)
    sizer = spout.sizer
    # F / (capacity - c r) = 0.2 / (0.9 - 0.6) = 0.67 s: above the base period of 0.25 s
    expected = FIXED_SECONDS / (window_size.CAPACITY_SERIAL - SECONDS_PER_TUPLE * 15_000)
    assert sizer.period_seconds == pytest.approx(expected, rel=0.1)
    assert spout.backlog < 15_000 * sizer.period_seconds  # keeps up: no growing backlog
    assert max(handed[-10:]) < sizer.limit(0)  # the limit is not what bounds the windows
    # and back to the base period when the load drops
    spout.run(rate=1000, windows=40)
    assert sizer.period_seconds == 0.25


def test_the_period_grows_at_most_twice_per_window() -> None:
    spout = TimedSpout(saturating())
    spout.run(rate=1000, windows=10)
    spout.run(rate=5000, windows=10)
    periods = []
    for _ in range(10):
        spout.run(rate=20_000, windows=1)
        periods.append(spout.sizer.period_seconds)
    assert all(b <= 2 * a + 1e-9 for a, b in zip([0.25, *periods], periods, strict=False))


def test_a_saturating_rate_leaves_the_period_and_grows_the_limit() -> None:
    spout = TimedSpout(saturating())
    spout.run(rate=1000, windows=10)
    spout.run(rate=5000, windows=10)
    spout.run(rate=40_000, windows=20)  # c r = 1.6 s per second: no period keeps up
    assert spout.sizer.period_seconds == 0.25
    assert spout.sizer.limit(0) == spout.sizer.saturation_bound > BOUND


def test_automatic_pending_is_throughput_times_a_share_of_the_target() -> None:
    spout = TimedSpout(saturating(auto_pending=True))
    assert spout.sizer.pending(0) is None  # unknown throughput: no bound yet
    spout.run(rate=12_000, windows=40)
    expected = 12_000 * window_size.PENDING_SHARE * 1.0  # above the floor of 5,000
    assert spout.sizer.pending(0) == pytest.approx(expected, rel=0.05)
    # moves by at most x2 or /2 per window, and never below MIN_LIMIT
    bounds = []
    for _ in range(10):
        spout.run(rate=100, windows=1)
        bounds.append(spout.sizer.pending(0))
    assert all(b >= a // 2 for a, b in zip([int(expected), *bounds], bounds, strict=False))
    # the floor: windows whose 0.2 s fixed cost is half their job, 0.2 / 40 us
    floor = FIXED_SECONDS / SECONDS_PER_TUPLE
    assert bounds[-1] == pytest.approx(floor, rel=0.05)


def test_one_window_takes_at_most_half_the_automatic_pending_bound() -> None:
    # with the whole bound in one window, the window beside it found the spout held by the
    # bound and carried nothing (windows alternated 14,000 and 0 sentences)
    spout = TimedSpout(saturating(auto_pending=True))
    spout.run(rate=30_000, windows=40)
    pending, limit = spout.sizer.pending(0), spout.sizer.limit(0)
    assert pending is not None and limit is not None
    assert limit == max(MIN_LIMIT, pending // window_size.PENDING_WINDOWS) < pending
    assert TimedSpout(saturating()).sizer.limit(0) == BOUND  # no automatic bound: as before


def test_a_cheap_window_may_reach_the_saturation_bound_under_the_pending_bound() -> None:
    """Each window may carry a saturated window's worth when Little's law asks for more.

    The bound is capped at ``PENDING_WINDOWS`` saturation bounds, not one: a Kafka
    pass-through (20 ms fixed, 4 us a record, 100,000 records/s) was held at half a bound
    per window and stayed under its reference loop.
    """
    sizer = saturating(max_bound=200_000, auto_pending=True)
    clock = 0.0
    for handed in (2000, 8000, 2000, 8000):  # light windows of two sizes: the fit learns both
        sizer.observe(0.02 + 4e-6 * handed, {0: handed}, set(), started=clock)
        clock += 0.25
    for _ in range(30):  # 25,000 records arrive per period: more than a window may take
        limit = sizer.limit(0) or BOUND
        handed = min(limit, 25_000)
        sizer.observe(0.02 + 4e-6 * handed, {0: handed}, {0} if handed == limit else set(),
                      started=clock)
        clock += 0.25
    bound = sizer.saturation_bound
    pending = sizer.pending(0)
    assert bound == pytest.approx(max(45_000, budget_share(sizer)), rel=0.05)  # 9 x 0.02 / 4e-6
    assert pending is not None and pending <= window_size.PENDING_WINDOWS * bound
    assert sizer.limit(0) == min(bound, pending // window_size.PENDING_WINDOWS)
    assert sizer.limit(0) >= 0.95 * 45_000  # a whole amortised window, not half of one


def test_an_unreachable_target_keeps_the_pending_bound_at_its_floor() -> None:
    slow = TimedSpout(saturating(auto_pending=True))
    slow.run(rate=2000, windows=10)
    slow.run(rate=16_000, windows=10)  # windows of 500 and 4,000: the fit has both parts
    slow.run(rate=300, windows=30)  # Little's law alone would ask for 180 in flight
    floor = slow.sizer.cost.amortising_size(window_size.PENDING_FIXED_SHARE)
    assert floor is not None and slow.sizer.pending(0) == int(floor) > MIN_LIMIT


def test_automatic_pending_is_off_unless_asked_and_with_the_sizer_off() -> None:
    plain = TimedSpout(saturating())
    plain.run(rate=8000, windows=10)
    assert plain.sizer.pending(0) is None
    off = WindowSizer(0, 500, BOUND, [0], max_bound=MAX_BOUND, auto_pending=True)
    off.observe(0.3, {0: 100}, (), started=0.0)
    off.observe(0.3, {0: 100}, (), started=0.5)
    assert off.pending(0) is None and off.limit(0) is None


def test_saturated_windows_stay_well_inside_the_message_timeout() -> None:
    slow = WindowSizer(1000, 500, BOUND, [0], max_bound=MAX_BOUND, timeout_seconds=12.0)
    spout = SimulatedSpout(slow)
    spout.run(demand=500, windows=10)
    spout.run(demand=5000, windows=10)
    limit = spout.run(demand=10**9, windows=10)[-1]
    # a tenth of 12 s: (1.2 - 0.2) s / 40 us = 25,000 tuples (amortised: 45,000)
    assert limit == pytest.approx(25_000, rel=0.02)
    assert slow.cost.job_seconds(limit) <= window_size.TIMEOUT_SHARE * 12.0 + 1e-6
    # and never below the buffer size, however slow
    slower = WindowSizer(1000, 500, BOUND, [0], max_bound=MAX_BOUND, timeout_seconds=2.0)
    spout = SimulatedSpout(slower)
    spout.run(demand=500, windows=10)
    spout.run(demand=5000, windows=10)
    assert spout.run(demand=10**9, windows=10)[-1] == BOUND


def test_jobs_seen_too_long_for_the_timeout_bring_saturated_windows_back_by_halves() -> None:
    sizer = WindowSizer(1000, 500, BOUND, [0], max_bound=MAX_BOUND, timeout_seconds=30.0)
    spout = SimulatedSpout(sizer)
    spout.run(demand=500, windows=10)
    spout.run(demand=5000, windows=10)
    grown = spout.run(demand=10**9, windows=10)[-1]
    assert grown > BOUND
    # the machine slows down: the same windows now take 5 s, above a tenth of 30 s
    limits = []
    for _ in range(10):
        sizer.observe(5.0, {0: grown}, {0}, started=None)
        limits.append(sizer.limit(0))
    steps = zip([grown, *limits], limits, strict=False)
    assert all((a + 1) // 2 <= b <= a for a, b in steps)
    assert limits[-1] == BOUND


def test_noisy_jobs_of_a_few_tuples_keep_the_base_period() -> None:
    rng = random.Random(3)
    light = saturating()
    clock = 0.0
    for _ in range(200):
        light.observe(rng.uniform(0.1, 0.35), {0: rng.randrange(3, 30)}, (), started=clock)
        clock += light.period_seconds
        assert light.period_seconds == 0.25  # the slope of a few dozen tuples is noise


def test_overlapped_chained_jobs_are_fitted_without_their_wait_for_the_window_before() -> None:
    """The fit leaves out an overlapped chained job's wait for the job before it.

    A chained spout stage's next window starts while the last one's bolts still run
    (``driver.hand_over_wait``), so each job's wall time also holds the rest of the job
    before it; the fit takes the job from the later of its start and that job's end.
    """
    def fitted(chained_overlap: bool) -> float | None:
        sizer = saturating()
        sizer.chained_overlap = chained_overlap
        clock, last_end = 0.0, 0.0
        for handed in (2000, 8000) * 10:
            own = FIXED_SECONDS + SECONDS_PER_TUPLE * handed  # what the job itself costs
            start = max(clock, last_end - 0.3)  # starts 0.3 s before the one before ends
            end = max(start, last_end) + own
            sizer.observe(end - start, {0: handed}, set(), started=start, finished=end)
            clock, last_end = start + 0.25, end
        return sizer.cost.fixed_seconds
    assert fitted(True) == pytest.approx(FIXED_SECONDS, rel=0.05)
    wall = fitted(False)
    assert wall is not None and wall > FIXED_SECONDS + 0.2  # the wait read as fixed cost


def test_the_first_window_s_job_is_left_out_of_the_cost_fit() -> None:
    """Spark's first job (workers starting) is no window's fixed cost.

    Fitted, the word-count benchmark's 2.5 s empty first window made the slope 1.4 us a
    sentence against 29 us, and the in-flight bound's floor (fixed / per tuple) jumped.
    """
    sizer = saturating(auto_pending=True)
    sizer.observe(2.5, {0: 0}, set(), started=0.0)  # the warm-up: nothing handed over
    clock = 0.25
    for handed in (6000, 9000, 6000, 12_000, 7000, 10_000):
        sizer.observe(FIXED_SECONDS + SECONDS_PER_TUPLE * handed, {0: handed}, set(),
                      started=clock)
        clock += 0.25
    assert sizer.cost.fixed_seconds == pytest.approx(FIXED_SECONDS, rel=0.05)
    assert sizer.cost.seconds_per_tuple == pytest.approx(SECONDS_PER_TUPLE, rel=0.05)


def test_the_pending_floor_is_followed_by_steps_of_at_most_twice() -> None:
    """A floor that jumps (a young fit, a slowed machine) moves the bound x2 per window."""
    sizer = saturating(auto_pending=True)
    clock = 0.0

    def window(handed: int, fixed: float = FIXED_SECONDS) -> int:
        nonlocal clock
        sizer.observe(fixed + SECONDS_PER_TUPLE * handed, {0: handed}, set(), started=clock)
        clock += 0.25
        return sizer.pending(0) or 0

    for _ in range(6):  # 1,500 tuples a window: Little's law asks for 5,400 in flight
        window(1000)
        before = window(2000)
    slowed = JobCost()  # the fit turns: its fixed cost is ten times what it was
    for handed in (1000, 4000, 1000, 4000):
        slowed.observe(handed, 10 * FIXED_SECONDS + SECONDS_PER_TUPLE * handed)
    sizer.cost = slowed
    bounds = [before] + [window(handed, 10 * FIXED_SECONDS) for handed in (1000, 4000) * 4]
    assert bounds[-1] == pytest.approx(10 * FIXED_SECONDS / SECONDS_PER_TUPLE, rel=0.1)
    assert all(b <= 2 * a for a, b in zip(bounds, bounds[1:], strict=False))  # by steps


def test_the_first_window_s_start_is_left_out_of_the_rate() -> None:
    sizer = saturating(auto_pending=True)
    sizer.observe(2.4, {0: 0}, set(), started=0.0)  # the warm-up: the next starts at 2.4 s
    for window in range(3):
        sizer.observe(0.2, {0: 10_000}, set(), started=2.4 + 0.25 * window)
    assert sizer.rate(0) == pytest.approx(40_000)


def test_a_saturated_spout_with_cheap_windows_reaches_them_in_a_few_windows() -> None:
    """Windows whose jobs fit the budget grow x2 a window, not at the rate's smoothed pace.

    A saturated spout's rate is what its bound let through, so Little's law alone grows
    the bound only as fast as the smoothed rate follows it: about x1.25 a window.
    """
    sizer = saturating(max_bound=200_000, auto_pending=True)
    clock, limits = 0.0, []
    for _ in range(20):  # light: 2,000 a window, 8,000 a second
        sizer.observe(0.02 + 2e-6 * 2000, {0: 2000}, set(), started=clock)
        clock += 0.25
    for _ in range(8):  # then more is offered than any window may take
        handed = sizer.limit(0) or BOUND
        sizer.observe(0.02 + 2e-6 * handed, {0: handed}, {0}, started=clock)
        clock += 0.25
        limits.append(sizer.limit(0) or BOUND)
    amortised = 0.9 * 0.02 / (0.1 * 2e-6)  # 90,000
    assert sizer.saturation_bound == pytest.approx(max(amortised, budget_share(sizer)), rel=0.05)
    assert limits[4] >= amortised, limits  # from 7,200: five windows
    assert all(b <= 2 * a for a, b in zip(limits, limits[1:], strict=False)), limits


def test_windows_full_at_the_memory_cap_come_as_often_as_the_jobs_allow() -> None:
    """At the memory cap only more windows a second add throughput: the period falls to 0.

    The batch word count's cores were 68-73 % busy with 100,000-sentence windows every
    0.25 s, 91-93 % every 0.125 s.
    """
    sizer = saturating(max_bound=40_000, auto_pending=True)
    clock = 0.0
    for _ in range(12):  # cheap tuples, more offered than any window may take
        handed = sizer.limit(0) or BOUND
        sizer.observe(0.02 + 2e-6 * handed, {0: handed}, {0}, started=clock)
        clock += max(sizer.period_seconds, 0.1)
    assert sizer.limit(0) == 40_000
    assert sizer.period_seconds == 0.0
    for _ in range(3):  # the load falls: windows no longer full
        sizer.observe(0.03, {0: 5000}, set(), started=clock)
        clock += 0.25
    assert sizer.period_seconds == sizer.base_period == 0.25
