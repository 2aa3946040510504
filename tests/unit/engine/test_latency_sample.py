"""The spout's latency reservoir: exact count and sum, a bounded and uniform sample."""

from __future__ import annotations

import random

from sparkstorm.engine import stats
from sparkstorm.engine.stats import LatencySample


def test_count_and_sum_are_exact_and_the_sample_is_bounded() -> None:
    sample = LatencySample()
    for value in range(10_000):
        sample.add(float(value))
    count, total, values = sample.take()
    assert count == 10_000
    assert total == sum(range(10_000))
    assert len(values) == stats._SAMPLE_LIMIT
    assert sample.take() == (0, 0.0, [])  # taken: reset


def test_the_sample_stays_uniform_over_every_value_added() -> None:
    random.seed(7)
    n = 200_000
    halves = []
    for _ in range(5):
        sample = LatencySample()
        for value in range(n):
            sample.add(float(value))
        _, _, values = sample.take()
        assert len(set(values)) == stats._SAMPLE_LIMIT
        halves.append(sum(1 for v in values if v < n / 2) / len(values))
        # late values get in too (a reservoir that stopped replacing would keep the first)
        assert max(values) > 0.9 * n
    assert all(0.45 < share < 0.55 for share in halves), halves


def test_a_sample_under_the_limit_keeps_every_value() -> None:
    sample = LatencySample()
    for value in (3.0, 1.0, 2.0):
        sample.add(value)
    assert sample.take() == (3, 6.0, [3.0, 1.0, 2.0])
