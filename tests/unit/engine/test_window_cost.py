"""The window job's cost model: fixed and per-tuple seconds, fitted from past windows."""

from __future__ import annotations

import pytest

from sparkstorm.engine.driver.window_cost import JobCost


def fitted(points: list[tuple[int, float]]) -> JobCost:
    cost = JobCost()
    for tuples, seconds in points:
        cost.observe(tuples, seconds)
    return cost


def test_windows_of_several_sizes_give_both_parts() -> None:
    cost = fitted([(n, 0.3 + 20e-6 * n) for n in (1000, 5000, 20_000, 2000, 40_000)])
    assert cost.fixed_seconds == pytest.approx(0.3)
    assert cost.seconds_per_tuple == pytest.approx(20e-6)
    assert cost.job_seconds(10_000) == pytest.approx(0.5)


def test_one_size_only_keeps_the_empty_windows_fixed_cost() -> None:
    cost = fitted([(0, 0.25), (0, 0.25)] + [(20_000, 1.05)] * 10)
    assert cost.fixed_seconds == pytest.approx(0.25)
    assert cost.seconds_per_tuple == pytest.approx(40e-6, rel=0.01)


def test_nothing_learnt_means_no_constraint() -> None:
    cost = JobCost()
    assert not cost.known
    assert cost.shortest_period(rate=10_000, capacity=1.5) == 0.0
    assert cost.amortising_size(0.1) is None
    assert cost.job_seconds(10) is None


def test_shortest_period_and_saturation() -> None:
    cost = fitted([(n, 0.2 + 40e-6 * n) for n in (0, 1000, 10_000)])
    assert cost.shortest_period(rate=10_000, capacity=1.0) == pytest.approx(0.2 / 0.6)
    assert cost.shortest_period(rate=30_000, capacity=1.0) is None
    assert cost.amortising_size(0.1) == pytest.approx(0.2 * 0.9 / (0.1 * 40e-6))


def test_the_fit_follows_a_change_of_cost() -> None:
    sizes = [1000, 5000, 20_000, 10_000]
    cost = fitted([(n, 0.2 + 40e-6 * n) for n in sizes * 5])
    for n in sizes * 15:
        cost.observe(n, 0.5 + 40e-6 * n)  # the machine got busier: fixed cost up
    assert cost.fixed_seconds == pytest.approx(0.5, rel=0.02)


def test_a_few_tuples_teach_nothing_per_tuple() -> None:
    cost = fitted([(0, 2.0), (12, 2.5), (20, 3.1), (15, 2.2)])  # a slow machine, light load
    assert cost.fixed_seconds is not None and cost.seconds_per_tuple is None
    assert cost.shortest_period(rate=20, capacity=1.5) == 0.0  # no constraint known
