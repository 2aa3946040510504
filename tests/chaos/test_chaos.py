"""Chaos: kill -9 of one process while a topology runs on a real cluster.

Loopback only, Spark local[2]; each fault must lose no id, ack none twice, and leave nothing
behind. Slow (a Spark start per fault): ``make test-all`` runs them, ``make test`` does not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.faults import CONF, FAULTS, Run
from tests.integration.cluster.harness import TestCluster, closed_after

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(420)]


@pytest.fixture
def run(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Run]:
    """A chaos run on its own cluster (closed, with every process, after the test)."""
    cluster = TestCluster(tmp_path, **CONF)
    closing = closed_after(cluster, request)
    next(closing)
    try:
        yield Run(cluster, tmp_path / "chaos")
    finally:
        closing.close()  # prints the logs of a failed test, stops every process


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_kill9_loses_no_id_acks_none_twice_and_leaves_nothing(run: Run, fault: str) -> None:
    run.start()
    FAULTS[fault](run)
    run.check_every_id_once()
    run.kill_and_check_nothing_left()
