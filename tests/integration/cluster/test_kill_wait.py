"""``sparkstorm kill NAME -w SECS`` end to end.

During the wait the topology is listed as KILLED, its spouts stop emitting and its worker still
runs; after the wait the worker is gone and the topology is no longer listed.
"""

from __future__ import annotations

import time
from typing import Any

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster, wait_gone

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]

WAIT_SECS = 10
"""Long enough to watch the spouts stay quiet for two heartbeats on a busy machine."""


def _row(cluster: TestCluster, name: str) -> dict[str, Any] | None:
    rows = cluster.get("/api/v1/topology/summary")["topologies"]
    return next((row for row in rows if row["name"] == name), None)


def _spout_beat(cluster: TestCluster, record: dict[str, Any]) -> tuple[float, int]:
    """The worker's latest local heartbeat: its time and the spout's emitted count."""
    beat = cluster.local_heartbeat(record) or {}
    components = (beat.get("stats") or {}).get("components") or {}
    return float(beat.get("time_secs", 0.0)), int((components.get("word") or {})
                                                   .get("emitted", 0))


# slow (CI budget, 26 s): browser/test_pages.py::test_activate_then_kill_with_a_wait_time keeps
# the kill with a wait in make test
@pytest.mark.slow
def test_kill_with_a_wait_deactivates_first_and_removes_after_the_wait(
        cluster: TestCluster) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    submitted = cluster.cli("submit", "examples/exclamation.py", "-c", "exclamation.count=0")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    topology_id = submitted.stdout.strip()
    (record,) = wait_for(cluster.worker_records, 30, message=f"worker\n{cluster.logs()}")
    wait_for(lambda: _spout_beat(cluster, record)[1] > 0, 60,
             message=f"the spout emits\n{cluster.logs()}")

    killed_at = time.time()
    killed = cluster.cli("kill", "exclamation", "-w", str(WAIT_SECS))
    assert killed.returncode == 0, killed.stderr
    assert killed.stdout.strip() == f"Killed topology: exclamation ({topology_id})"
    row = _row(cluster, "exclamation")
    assert row is not None and (row["id"], row["status"]) == (topology_id, "KILLED")
    listed = cluster.cli("list")
    assert "KILLED" in listed.stdout and topology_id in listed.stdout, listed.stdout

    samples: list[tuple[float, int]] = []

    def spouts_quiet() -> bool:
        # two heartbeats at least 2 s apart, both after the kill, with the same count
        now, emitted = _spout_beat(cluster, record)
        samples.append((now, emitted))
        return any(then > killed_at and now - then >= 2 and before == emitted
                   for then, before in samples)

    wait_for(spouts_quiet, WAIT_SECS, message=f"spouts deactivated\n{cluster.logs()}")
    assert time.time() < killed_at + WAIT_SECS - 0.5, "seen during the wait"
    assert psutil.Process(record["pid"]).is_running(), "the worker runs during the wait"
    assert cluster.worker_records() == [record]
    row = _row(cluster, "exclamation")
    assert row is not None and row["status"] == "KILLED"

    wait_for(lambda: _row(cluster, "exclamation") is None, WAIT_SECS + 20,
             message=f"topology removed after the wait\n{cluster.logs()}")
    assert time.time() >= killed_at + WAIT_SECS - 1, "not before the wait is over"
    assert "No topologies running." in cluster.cli("list").stdout
    wait_gone(record["pid"])
    wait_for(lambda: not cluster.worker_records(), 30, message="worker record removed")
