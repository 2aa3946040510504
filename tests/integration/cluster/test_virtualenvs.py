"""A streamparse project's ``virtualenvs/NAME.txt`` on a real cluster.

The supervisor's worker builds the topology's virtualenv from it and runs the topology
there: a bolt imports a package the supervisor's environment lacks (a wheel made on the
spot, so pip needs no network). The submitter has its own version of it, as the submitting
machine of a streamparse project has the requirements to import the topology. A restarted
worker reuses the virtualenv. Requirements that cannot be installed show as the topology's
start failure (``VIRTUALENV_INSTALL_FAILED``, in ``submit --wait-start``'s output and the
summary), and the build is tried again only after the supervisor's back-off.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster, closed_after
from tests.wheels import TINY_PACKAGE, tiny_wheel

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

FILES = {
    "src/spouts/__init__.py": "",
    "src/spouts/numbers.py": '''
from sparkstorm import Spout


class NumberSpout(Spout):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.total, self.next = conf["numbers.count"], 0

    def next_tuple(self):
        if self.next < self.total:
            self.emit([self.next], tup_id=self.next)
            self.next += 1
''',
    "src/bolts/__init__.py": "",
    "src/bolts/tiny.py": f'''
from {TINY_PACKAGE} import VALUE  # only the topology's virtualenv has it

from sparkstorm import Bolt


class Tiny(Bolt):
    def process(self, tup):
        self.logger.info("tiny value %s for %s", VALUE, tup.values[0])
''',
    "topologies/numbers.py": '''
from bolts.tiny import Tiny
from spouts.numbers import NumberSpout

from sparkstorm import Topology


class Numbers(Topology):
    numbers = NumberSpout.spec()
    tiny = Tiny.spec(inputs=[numbers])
''',
}


@pytest.fixture
def backoff_cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[TestCluster]:
    """A cluster whose supervisor backs off 1 s, 2 s, 4 s (capped)."""
    cluster = TestCluster(tmp_path, **{"supervisor.worker.restart.backoff.secs": 1,
                                       "supervisor.worker.restart.backoff.max.secs": 4})
    yield from closed_after(cluster, request)


def _project(cluster: TestCluster, tmp_path: Path, requirements: str) -> Path:
    project = tmp_path / "project"
    for relative, text in {**FILES, "virtualenvs/numbers.txt": requirements}.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    (project / "config.json").write_text(json.dumps({
        "topology_specs": "topologies/", "virtualenv_specs": "virtualenvs/",
        "envs": {"prod": {"nimbus": f"127.0.0.1:{cluster.port}", "workers": [],
                          "options": {"numbers.count": 20}}}}))
    return project


def _submit(cluster: TestCluster, project: Path,
            submitter_has: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``sparkstorm submit --wait-start`` from the project's root.

    ``submitter_has``: a wheel on the submitter's ``PYTHONPATH`` only (the daemons, started
    before, do not have it).
    """
    env = {**cluster.env, "PYTHONPATH": str(submitter_has)} if submitter_has else cluster.env
    return subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", "submit",
                           "--wait-start", "180"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=240,
                          stdin=subprocess.DEVNULL)


def _acked(cluster: TestCluster, topology_id: str) -> int:
    spouts: list[dict[str, Any]] = cluster.get(f"/api/v1/topology/{topology_id}")["spouts"]
    return int(spouts[0]["acked"]) if spouts else 0


def _row(cluster: TestCluster) -> dict[str, Any]:
    rows = cluster.get("/api/v1/topology/summary")["topologies"]
    return next((row for row in rows if row["name"] == "numbers"), {})


# slow (25 s): the virtualenv settings are tested in tests/unit/cli/test_project_virtualenvs.py
@pytest.mark.slow
def test_the_topology_runs_in_its_virtualenv(cluster: TestCluster, tmp_path: Path) -> None:
    wheel = tiny_wheel(tmp_path / "wheels", value=42)
    project = _project(cluster, tmp_path, f"sparkstorm\n{wheel}\n")
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = _submit(cluster, project, tiny_wheel(tmp_path / "submitter", value=1))
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    assert f"{topology_id} runs" in result.stderr
    wait_for(lambda: _acked(cluster, topology_id) == 20, 120,
             message=f"20 acked\n{cluster.logs()}")

    venvs = list((cluster.local / "supervisor" / "virtualenvs").glob("numbers-*/"))
    assert len(venvs) == 1 and (venvs[0] / ".sparkstorm-installed").is_file(), venvs
    workers = cluster.local / "supervisor" / "workers"
    logs = "\n".join(p.read_text(errors="replace") for p in workers.glob("*/worker.log"))
    assert f"running the worker again in virtualenv {venvs[0]}" in logs
    wait_for(lambda: "tiny value 42 for 19" in "\n".join(
        p.read_text(errors="replace") for p in workers.glob("*/executor-*.log")), 30,
        message="the bolt imported the virtualenv's package")

    (record,) = cluster.worker_records()
    cluster.kill_worker(record)  # the supervisor starts it again: in the same virtualenv

    def worker_log() -> str:
        return "\n".join(p.read_text(errors="replace") for p in workers.glob("*/worker.log"))

    wait_for(lambda: worker_log().count(f"runs topology {topology_id}") == 2, 120,
             message=f"the worker ran again\n{cluster.logs()}")
    assert worker_log().count("running the worker again in virtualenv") == 2
    assert worker_log().count("building virtualenv") == 1, "reused, not built again"


def _backoffs(cluster: TestCluster) -> list[float]:
    log = (cluster.tmp / "supervisor.log").read_text(errors="replace")
    return [float(s) for s in re.findall(r"starting it again in ([0-9.]+) s \(back-off\)", log)]


def test_requirements_that_cannot_be_installed_fail_the_start_clearly(
        backoff_cluster: TestCluster, tmp_path: Path) -> None:
    cluster = backoff_cluster
    missing = tmp_path / "no-such-package-here"
    project = _project(cluster, tmp_path, f"{missing}\n")
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = _submit(cluster, project, tiny_wheel(tmp_path / "submitter"))
    assert result.returncode == 1, result.stderr + cluster.logs()
    assert "failed to start" in result.stderr and "VIRTUALENV_INSTALL_FAILED" in result.stderr
    assert str(missing) in result.stderr, "pip's complaint names the requirement"

    row = _row(cluster)
    assert row["status"] == "ACTIVE" and row["workerStatus"] == "FAILING", row
    assert "VIRTUALENV_INSTALL_FAILED" in row["workerStatusDetail"], row
    wait_for(lambda: len(_backoffs(cluster)) >= 2, 120,
             message=f"two failed starts backed off\n{cluster.logs()}")
    assert _backoffs(cluster)[:2] == [1.0, 2.0], "tried again only after the back-off"
    wait_for(lambda: "failed to start 2 time(s)" in str(_row(cluster).get(
        "workerStatusDetail")), 60, message="the failures are counted")
    venvs = cluster.local / "supervisor" / "virtualenvs"
    assert not list(venvs.glob("numbers-*/.sparkstorm-installed")), "never marked complete"
    assert list(venvs.glob("numbers-*.failed"))
