"""A spark-submitted topology with Spark's dynamic allocation on (issue 29, §1).

Common on YARN and managed Spark. The application starts with no Spark executor at all; the
hosting tasks ask Spark for executors of their own (one core each here, a resource profile
of theirs), the windows' tasks for executors of the default profile (two cores), and Spark
requests both from the standalone master on A as tasks wait. Checked: both shares report,
the driver says it runs under dynamic allocation, every id is acked exactly once, and the
drain leaves nothing on B or C. The same hosts as the fault tests, which this module reuses.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.faults import TOPOLOGY as CHAOS
from tests.integration.hosts.conftest import SHARED, TestHosts
from tests.integration.hosts.test_spark_submit_faults import (
    _acked,
    _every_id_once,
    application,
    fault_hosts,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

__all__ = ["fault_hosts"]  # the module-scoped hosts fixture, reused

DYNAMIC = ("spark.dynamicAllocation.enabled=true",
           "spark.dynamicAllocation.shuffleTracking.enabled=true",
           "spark.dynamicAllocation.minExecutors=0", "spark.dynamicAllocation.maxExecutors=4",
           "spark.executor.cores=2")
"""Dynamic allocation with shuffle tracking (no external shuffle service on the hosts):
default executors of two cores, so that a host's three take one of them beside a
one-core hosting executor."""


def test_dynamic_allocation_hosts_the_shares_on_executors_of_their_own(
        fault_hosts: TestHosts, tmp_path: Path) -> None:
    count = 300
    results = SHARED / "dynamic"
    results.mkdir(parents=True)
    with application(fault_hosts, CHAOS, tmp_path / "dynamic.log", f"chaos.dir={results}",
                     f"chaos.count={count}", *DYNAMIC) as app:
        app.wait(lambda: len(_acked(results)) >= 50, 300, "ids acked")
        assert "dynamic allocation is on" in app.text(), app.tail()
        assert sorted(share for share, *_ in app.reports()) == [0, 1], app.tail()
        _every_id_once(app, results, count)
        assert app.drain() == 0, app.tail()
