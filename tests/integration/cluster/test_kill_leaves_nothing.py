"""After ``sparkstorm kill`` nothing of the worker stays.

Not its process group, its executors, its runner folder (``<tmp>/sparkstorm-<pid>-*``),
Spark's scratch folder nor its supervisor folder. The supervisor gives the worker its whole
shutdown (``topology.shutdown.timeout.secs`` + ``worker.shutdown.close.secs``) before
SIGKILL, and removes what a killed worker left.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster, wait_gone

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]


def _runner_folders(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"sparkstorm-{pid}-*"))


# slow (24 s in CI): test_topology_lifecycle.py::test_submit_runs_to_50_acked_then_kill_
# removes_everything kills a topology and waits for its worker to be gone
@pytest.mark.slow
def test_kill_leaves_no_process_and_no_folder(cluster: TestCluster) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    submitted = cluster.cli("submit", "examples/exclamation.py")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    wait_for(lambda: cluster.worker_records() and (cluster.local_heartbeat(
        cluster.worker_records()[0]) or {}).get("stats", {}).get("windows"), 120,
        message=f"the worker runs windows\n{cluster.logs()}")
    (record,) = cluster.worker_records()
    worker_folder = cluster.local / "supervisor" / "workers" / record["worker_id"]
    executors = psutil.Process(record["pid"]).children(recursive=True)
    assert _runner_folders(record["pid"]), "the worker's runner folder exists while it runs"
    spark_scratch_in_worker_folder = (worker_folder / "spark-local").is_dir()

    killed = cluster.cli("kill", "exclamation", "-w", "0")
    assert killed.returncode == 0, killed.stderr
    wait_gone(record["pid"], 60)
    wait_for(lambda: not worker_folder.exists(), 60,
             message=f"worker folder removed\n{cluster.logs()}")
    assert _runner_folders(record["pid"]) == []
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE
                   for p in executors if _exists(p))
    assert spark_scratch_in_worker_folder, "Spark's scratch files went with the worker"


def _exists(process: psutil.Process) -> bool:
    try:
        return process.is_running()
    except psutil.Error:
        return False
