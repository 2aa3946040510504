"""A topology on a Spark standalone cluster whose workers run on other hosts.

The driver runs on host A (``sparkstorm run`` with ``spark.master`` pointing at A's
standalone master); Spark's executors exist only on hosts B and C, whose private ``/tmp``
hides the executors' Unix sockets, so every window's tasks reach the executor processes
over TCP with the topology's token. Every id must be acked exactly once and reach the sink
once.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter

import pytest

from tests.chaos.faults import TOPOLOGY, acks, sink_ids
from tests.integration.hosts.conftest import HOST_A, HOST_B, HOST_C, MASTER, ROOT, TestHosts

COUNT = 300  # five seconds of the chaos topology's stream


# slow (CI budget, 62 s with its hosts): test_cluster_across_hosts keeps the test hosts, a Spark
# standalone cluster and executors reached over TCP in make test
@pytest.mark.slow
def test_spark_tasks_on_other_hosts_reach_the_executors_over_tcp(hosts: TestHosts) -> None:
    results = hosts.shared / "numbers"
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    run = hosts.run(
        "A", sys.executable, "-m", "sparkstorm.cli.main", "run", str(TOPOLOGY), "--time", "30",
        "-c", f"spark.master={MASTER}", "-c", f"spark.driver.host={HOST_A}",
        "-c", "spark.executor.memory=1g", "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}",
        "-c", f"chaos.dir={results}", "-c", f"chaos.count={COUNT}",
        "-c", f"storm.local.dir={hosts.shared / 'local-A'}", timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    acked = Counter(a["id"] for a in acks(results))
    assert set(acked) == set(range(COUNT)), f"never acked: {set(range(COUNT)) - set(acked)}"
    assert [i for i, n in acked.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(COUNT))
    master_log = (hosts.shared / "spark-master.log").read_text()
    assert HOST_B in master_log and HOST_C in master_log  # workers on B and C
