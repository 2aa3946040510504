"""A cluster worker killed with -9 resumes from its topology's committed checkpoint.

Nimbus and a supervisor run as real processes; the worker (the topology's driver and its
executors) is killed with everything it started, the supervisor starts it again, and the
new driver rolls back to the newest committed checkpoint: the counts end exact and every
id acked, the committed window is on record in the store and in the REST API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparkstorm.checkpoint import CheckpointStore
from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster, closed_after
from tests.integration.hosts.checkpointed import committed, expected_counts

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

TOPOLOGY = Path(__file__).parent / "checkpointed" / "stateful_count.py"
COUNT = 3000
EXPECTED = expected_counts(COUNT)


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    yield from closed_after(TestCluster(tmp_path, **{
        "topology.checkpoint.windows": 3, "topology.checkpoint.dir": str(tmp_path / "cp"),
        "topology.max.spout.pending": 100}), request)



# slow (40 s): make test covers a restarted driver resuming from the committed checkpoint
# (tests/integration/spark_app/test_spark_submit_local.py::test_the_drain_commits_a_last_
# checkpoint_and_a_restart_resumes_from_it), a killed worker's executors coming back with
# every id acked once (test_workers.py) and exact counts after kill -9 in both reliability
# modes (tests/integration/spark/test_checkpoints.py)
@pytest.mark.slow
@pytest.mark.parametrize("reliability", ["acking", "checkpoint"])
def test_a_killed_worker_resumes_from_the_committed_checkpoint(cluster: TestCluster,
                                                               tmp_path: Path,
                                                               reliability: str) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = cluster.cli("submit", str(TOPOLOGY), "--name", "stateful",
                         "-c", f"stateful.count={COUNT}",
                         "-c", f"topology.reliability={reliability}")
    assert result.returncode == 0, result.stderr + cluster.logs()
    record = wait_for(lambda: (r := cluster.worker_records()) and r[0], 60,
                      message=f"worker launched\n{cluster.logs()}")
    store = CheckpointStore(str(tmp_path / "cp"), record["topology_id"])
    first = wait_for(lambda: committed(store)[0], 120,
                     message=f"a checkpoint committed\n{cluster.logs()}")

    cluster.kill_worker(record)
    second = wait_for(lambda: (r := cluster.worker_records()) and r[0]["pid"] != record["pid"]
                      and r[0], 60, message=f"the supervisor restarts the worker\n{cluster.logs()}")
    assert (second["worker_id"], second["port"]) == (record["worker_id"], record["port"]), (
        "restarted in its slot by its supervisor, not reassigned by Nimbus")
    # the new driver rolled back to the committed checkpoint instead of starting afresh
    beat = wait_for(lambda: (b := cluster.local_heartbeat(second)) and
                    b.get("time_secs", 0) > second["create_time"] and
                    (b.get("stats") or {}).get("windows") and b, 120,
                    message=f"the restarted worker runs windows\n{cluster.logs()}")
    assert beat["stats"]["rollbacks"] == 1, beat["stats"]
    assert beat["stats"]["committed_window"] >= first
    done = wait_for(lambda: (c := committed(store)) and len(c[1]) == COUNT and c, 180,
                    message=f"a checkpoint with every id acked\n{cluster.logs()}")
    window, acked, counts = done
    assert acked == set(range(COUNT)) and counts == EXPECTED
    assert window is not None and window > first
    topology = wait_for(lambda: (t := cluster.get("/api/v1/topology/summary")["topologies"])
                        and t[0], 30, message="topology listed")
    view = cluster.get(f"/api/v1/topology/{topology['id']}")
    assert view["checkpointWindows"] == 3 and view["reliability"] == reliability
    assert isinstance(view["committedWindow"], int) and view["committedWindow"] >= first
