"""A topology on a Spark standalone cluster whose workers run on other hosts.

The driver runs on host A (``sparkstorm run`` with ``spark.master`` pointing at A's
standalone master); Spark's executors exist only on hosts B and C, whose private ``/tmp``
hides the executors' Unix sockets, so every window's tasks reach the executor processes
over TCP with the topology's token. Every id must be acked exactly once and reach the sink
once.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

from tests.integration.hosts.conftest import MASTER, ROOT, TestHosts

TOPOLOGY = Path(__file__).parent / "numbers.py"
COUNT = 500


def _ids(folder: Path, prefix: str) -> Counter[int]:
    return Counter(json.loads(line) for path in folder.glob(f"{prefix}-*.jsonl")
                   for line in path.read_text().splitlines() if line.strip())


def test_spark_tasks_on_other_hosts_reach_the_executors_over_tcp(hosts: TestHosts) -> None:
    results = hosts.shared / "numbers"
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    run = hosts.run(
        "A", sys.executable, "-m", "sparkstorm.cli.main", "run", str(TOPOLOGY), "--time", "30",
        "-c", f"spark.master={MASTER}", "-c", "spark.driver.host=10.77.0.1",
        "-c", "spark.executor.memory=1g", "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}",
        "-c", f"hosts.dir={results}", "-c", f"hosts.count={COUNT}",
        "-c", f"storm.local.dir={hosts.shared / 'local-A'}", timeout=240)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    acks, sink = _ids(results, "acks"), _ids(results, "sink")
    assert set(acks) == set(range(COUNT)), f"ids never acked: {set(range(COUNT)) - set(acks)}"
    assert [i for i, n in acks.items() if n > 1] == [], "ids acked twice"
    assert set(sink) >= set(range(COUNT))
    master_log = (hosts.shared / "spark-master.log").read_text()
    assert "10.77.0.2" in master_log and "10.77.0.3" in master_log  # workers on B and C
