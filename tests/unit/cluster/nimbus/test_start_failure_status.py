"""A worker's start failure as Nimbus sees it.

Nimbus keeps it while the next attempt starts, counts the failures, shows the topology's
``workerStatus`` FAILING, and does not reassign the worker for its silence while its
supervisor backs off. Embedded store, fake clock, no Spark.
"""

from __future__ import annotations

import hashlib
import io
import zipfile

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.nimbus.ui_views import UiSources, UiViews
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import SPEC

FAILED = {"component": "word", "code": "EXECUTOR_START_FAILED",
          "error": "[EXECUTOR_START_FAILED] executor 0 ('word') did not start\n"
                   "TopologyError: [COMPONENT_CLASS_NOT_FOUND] component 'word'"}


def _submit(nimbus: Nimbus) -> tuple[str, str]:
    nimbus.state.register_supervisor(SupervisorInfo("s1", "host-s1", (6700,)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("t.py", "")
    upload_id = nimbus.inbox.begin()
    nimbus.inbox.chunk(upload_id, buffer.getvalue())
    nimbus.inbox.finish(upload_id, hashlib.sha256(buffer.getvalue()).hexdigest())
    topology_id = nimbus.submit("t", upload_id, SPEC, {})
    assignment = nimbus.state.get_assignment(topology_id)
    assert assignment is not None
    (worker_id,) = assignment.worker_ids.values()
    return topology_id, worker_id


def test_a_start_failure_shows_failing_until_a_start_runs_windows(
        nimbus: Nimbus, state: ClusterState, clock: FakeClock) -> None:
    topology_id, worker_id = _submit(nimbus)
    umbilical = nimbus.umbilical
    views = UiViews(UiSources(nimbus, nimbus.state, nimbus.conf, nimbus.clock, nimbus.started))

    def beat(stats: dict[str, object]) -> dict[str, object]:
        umbilical.heartbeat(worker_id, {"topology_id": topology_id, "stats": stats})
        (row,) = views.topology_summary()["topologies"]
        return row

    assert beat({})["workerStatus"] == "STARTING"
    row = beat({"start_failure": FAILED})
    assert (row["status"], row["workerStatus"]) == ("ACTIVE", "FAILING")
    assert "COMPONENT_CLASS_NOT_FOUND" in row["workerStatusDetail"]
    assert "1 time(s)" in row["workerStatusDetail"]
    assert beat({})["workerStatus"] == "FAILING", "the next attempt is starting: still failing"
    assert "2 time(s)" in beat({"start_failure": FAILED})["workerStatusDetail"]
    page = views.topology(topology_id)
    assert page["workerStatus"] == "FAILING" and page["workers"][0]["status"] == "FAILING"

    clock.now += 1000  # far past nimbus.task.timeout.secs: its supervisor is backing off
    nimbus.assigner.check_all()
    assignment = state.get_assignment(topology_id)
    assert assignment is not None and list(assignment.worker_ids.values()) == [worker_id]

    assert beat({"windows": 3})["workerStatus"] == "RUNNING"
    assert beat({})["workerStatus"] == "STARTING", "a later restart starts afresh"
    # a worker that hosts executors for another worker's driver runs no windows of its own
    assert beat({"windows": 0, "serving": True})["workerStatus"] == "RUNNING"
