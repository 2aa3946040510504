"""A topology that cannot start on its worker does not look ACTIVE and fine.

Its component whose import fails only on the worker (a module the submitting machine has,
the worker's host lacks) shows the error, the topology's ``workerStatus`` is FAILING in the
summary and on its page, and the supervisor's restarts back off (1 s, then 2 s, ... here).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster, closed_after

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

CLIENT_ONLY = '''
from sparkstorm import Spout


class Words(Spout):
    outputs = ["word"]

    def next_tuple(self) -> None:
        self.emit(["w"], tup_id=1)
'''

TOPOLOGY = '''
from sparkstorm import Topology

from clientonly_dep import Words  # installed where we submit, missing on the worker


class BrokenTopology(Topology):
    word = Words.spec()
'''


@pytest.fixture
def backoff_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose supervisor backs off 1 s, 2 s, 4 s (capped)."""
    cluster = TestCluster(tmp_path, **{"supervisor.worker.restart.backoff.secs": 1,
                                       "supervisor.worker.restart.backoff.max.secs": 4})
    yield from closed_after(cluster, request)


def _row(cluster: TestCluster) -> dict[str, Any] | None:
    rows = cluster.get("/api/v1/topology/summary")["topologies"]
    return next((row for row in rows if row["name"] == "broken"), None)


def _backoffs(cluster: TestCluster) -> list[float]:
    log = (cluster.tmp / "supervisor.log").read_text(errors="replace")
    return [float(s) for s in re.findall(r"starting it again in ([0-9.]+) s \(back-off\)", log)]


def test_a_component_missing_on_the_worker_shows_failing_and_restarts_back_off(
        backoff_cluster: TestCluster, tmp_path: Path) -> None:
    cluster = backoff_cluster
    client_lib = tmp_path / "client-lib"
    client_lib.mkdir()
    (client_lib / "clientonly_dep.py").write_text(CLIENT_ONLY)
    folder = tmp_path / "topology"
    folder.mkdir()
    (folder / "broken.py").write_text(TOPOLOGY)
    cluster.start_nimbus()
    cluster.start_supervisor()
    cluster.env = {**cluster.env, "PYTHONPATH": str(client_lib)}  # the submitter has it
    submitted = cluster.cli("submit", str(folder / "broken.py"), "--name", "broken")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    topology_id = submitted.stdout.strip()

    wait_for(lambda: (_row(cluster) or {}).get("workerStatus") == "FAILING", 180,
             message=f"topology shown as FAILING\n{cluster.logs()}")
    row = _row(cluster)
    assert row is not None and row["status"] == "ACTIVE"  # the user's order, unchanged
    assert "COMPONENT_CLASS_NOT_FOUND" in row["workerStatusDetail"] \
        or "EXECUTOR_START_FAILED" in row["workerStatusDetail"], row["workerStatusDetail"]
    page = cluster.get(f"/api/v1/topology/{topology_id}")
    assert page["workerStatus"] == "FAILING" and page["workers"][0]["status"] == "FAILING"
    (spout,) = page["spouts"]
    assert "COMPONENT_CLASS_NOT_FOUND" in spout["lastError"] \
        or "EXECUTOR_START_FAILED" in spout["lastError"], spout
    errors = cluster.get(f"/api/v1/topology/{topology_id}/component/word")["componentErrors"]
    assert any("clientonly_dep" in e["error"] for e in errors), errors

    wait_for(lambda: len(_backoffs(cluster)) >= 2, 180,
             message=f"two failed starts backed off\n{cluster.logs()}")
    assert _backoffs(cluster)[:2] == [1.0, 2.0]
    wait_for(lambda: "failed to start 2 time(s)" in str(
        (_row(cluster) or {}).get("workerStatusDetail")), 60,
        message="the failures are counted")


RAISING_INITIALIZE = '''
from sparkstorm import Spout, Topology


class Words(Spout):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.words = {}["missing-setting"]

    def next_tuple(self):
        pass


class RaisingTopology(Topology):
    word = Words.spec()
'''


def test_a_raising_initialize_shows_the_components_own_error(
        backoff_cluster: TestCluster, tmp_path: Path) -> None:
    cluster = backoff_cluster
    folder = tmp_path / "topology"
    folder.mkdir()
    (folder / "raising.py").write_text(RAISING_INITIALIZE)
    cluster.start_nimbus()
    cluster.start_supervisor()
    submitted = cluster.cli("submit", str(folder / "raising.py"), "--name", "broken")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()

    wait_for(lambda: (_row(cluster) or {}).get("workerStatus") == "FAILING", 180,
             message=f"topology shown as FAILING\n{cluster.logs()}")
    detail = (_row(cluster) or {})["workerStatusDetail"]
    assert "component word: EXECUTOR_START_FAILED: component 'word' task " in detail, detail
    assert "KeyError: 'missing-setting'" in detail and "executor-0.log" in detail, detail
    assert "KeyError: 1" not in detail
