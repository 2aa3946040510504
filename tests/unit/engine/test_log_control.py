"""Debug sampling writes the share of a component's tuples asked for to its log."""

from __future__ import annotations

import logging

import pytest

from tests.unit.engine.helpers import raiser_executor, raiser_window


def test_a_sampled_bolt_logs_its_received_tuples(caplog: pytest.LogCaptureFixture) -> None:
    host, task, src = raiser_executor()
    try:
        with caplog.at_level(logging.INFO, logger="sparkstorm.component.raiser"):
            host.run_window(raiser_window(task, src, ["a", "b"], 0))
            assert not [r for r in caplog.records if "sampled" in r.getMessage()]
            host.sample_pct = 100.0
            host.run_window(raiser_window(task, src, ["c", "d"], 10))
            host.sample_pct = 0.0
            host.run_window(raiser_window(task, src, ["e"], 20))
    finally:
        host.close()
    sampled = [r.getMessage() for r in caplog.records if "sampled" in r.getMessage()]
    assert sampled == ["sampled received tuple on stream default: ['c']",
                       "sampled received tuple on stream default: ['d']"]
