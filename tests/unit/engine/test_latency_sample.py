"""The spout's latency reservoir: exact count and sum, a bounded and uniform sample."""

from __future__ import annotations

import math
import random
from collections import Counter

from sparkstorm.engine.wire import stats
from sparkstorm.engine.wire.stats import LatencySample


def test_count_and_sum_are_exact_and_the_sample_is_bounded() -> None:
    sample = LatencySample()
    for value in range(10_000):
        sample.add(float(value))
    count, total, values = sample.take()
    assert count == 10_000
    assert total == sum(range(10_000))
    assert len(values) == stats._SAMPLE_LIMIT
    assert sample.take() == (0, 0.0, [])  # taken: reset


# Uniformity, and how far a bin's count may stray. Each reservoir is a uniform sample, without
# replacement, of _SAMPLE_LIMIT of the n values; a bin (1/BINS of the values) then holds a
# hypergeometric count, whose exponential moments are at most the binomial's (Hoeffding 1963,
# theorem 4), so Bernstein's inequality bounds the count pooled over RUNS independent
# reservoirs (N = RUNS * _SAMPLE_LIMIT draws, p = 1/BINS):
#     P(|count - N p| >= t) <= 2 exp(-t^2 / (2 (N p (1 - p) + t / 3))).
# bin_tolerance() picks the least t for which that, summed over the BINS bins, is below
# FALSE_ALARM: a correct reservoir fails this test for fewer than one seed in a million.
# (N = 10,000, 50 bins: 200 expected per bin, tolerance 92.) A sample skewed 4x toward any
# 1.5 % of the values, even split over two bins, puts about 407 in each: it fails (checked
# below). The old check, the share under n/2 within 0.45-0.55, let such a skew pass.
BINS = 50
RUNS = 5
FALSE_ALARM = 1e-6


def bin_tolerance(sampled: int, bins: int) -> int:
    """The least t with ``2 bins exp(-t^2 / (2 (variance + t/3))) < FALSE_ALARM``."""
    p = 1 / bins
    variance = sampled * p * (1 - p)
    t = 1
    while 2 * bins * math.exp(-t * t / (2 * (variance + t / 3))) >= FALSE_ALARM:
        t += 1
    return t


def stray_bins(values: list[float], n: int) -> dict[int, int]:
    """The bins of ``range(n)`` whose count of ``values`` strays beyond the tolerance."""
    counts = Counter(int(v * BINS // n) for v in values)
    expected, tolerance = len(values) / BINS, bin_tolerance(len(values), BINS)
    return {b: counts[b] for b in range(BINS) if abs(counts[b] - expected) > tolerance}


def test_the_sample_stays_uniform_over_every_value_added() -> None:
    random.seed(7)
    n = 200_000
    pooled: list[float] = []
    for _ in range(RUNS):
        sample = LatencySample()
        for value in range(n):
            sample.add(float(value))
        _, _, values = sample.take()
        assert len(set(values)) == stats._SAMPLE_LIMIT
        # late values get in too (a reservoir that stopped replacing would keep the first)
        assert max(values) > 0.9 * n
        pooled += values
    assert bin_tolerance(len(pooled), BINS) == 92
    assert stray_bins(pooled, n) == {}


def test_the_uniformity_check_catches_a_4x_skew() -> None:
    n, sampled = 200_000, RUNS * stats._SAMPLE_LIMIT
    edge, half = n * 10 // BINS, n * 15 // 2000  # 1.5 % of the values, across a bin edge
    weights = [4 if edge - half <= v < edge + half else 1 for v in range(n)]
    skewed = random.Random(11).choices(range(n), weights, k=sampled)
    assert set(stray_bins([float(v) for v in skewed], n)) == {9, 10}


def test_a_sample_under_the_limit_keeps_every_value() -> None:
    sample = LatencySample()
    for value in (3.0, 1.0, 2.0):
        sample.add(value)
    assert sample.take() == (3, 6.0, [3.0, 1.0, 2.0])


def test_merged_samples_weigh_each_value_by_the_tuples_it_stands_for() -> None:
    # a start-up window's 2,000 latencies of 2,000 tuples, then busy windows' 2,000 of 50,000
    # each: the whole run's median is the busy windows' (it was the start-up's)
    random.seed(3)
    run = stats.ComponentCounters()
    windows = [([1000.0] * 2000, 2000)] + [([100.0] * 2000, 50_000)] * 20
    for values, count in windows:
        window = stats.ComponentCounters()
        window.complete_values, window.complete_count = list(values), count
        run.add(window)
    assert run.complete_count == 1_002_000 and len(run.complete_values) == stats._SAMPLE_LIMIT
    start_up = run.complete_values.count(1000.0)
    assert start_up < 40  # 0.2 % of the tuples: about 4 of 2,000 expected
    assert stats.percentile(run.complete_values, 0.5) == 100.0


def test_add_many_is_the_same_as_adding_one_by_one() -> None:
    """The same random draws in the same order: with one seed, the same reservoir.

    Runs of identical values, as a spout's tuples moved into its buffer together wait
    alike, crossing the reservoir's fill and many replacements.
    """
    runs = [(float(n % 97), n * 37 % 1_500 + 1) for n in range(40)]
    random.seed(7)
    one_by_one = LatencySample()
    for value, times in runs:
        for _ in range(times):
            one_by_one.add(value)
    random.seed(7)
    grouped = LatencySample()
    for value, times in runs:
        grouped.add_many(value, times)
    count, total, values = grouped.take()
    expected_count, expected_total, expected_values = one_by_one.take()
    assert count == expected_count == sum(times for _, times in runs)
    assert math.isclose(total, expected_total)
    assert values == expected_values
    assert len(values) == stats._SAMPLE_LIMIT
