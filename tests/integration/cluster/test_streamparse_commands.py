"""streamparse's cluster commands from a project's root, against one running topology.

``list``, ``stats``, ``slot_usage``, ``worker_uptime``, ``tail`` (``-f`` too),
``remove_logs`` and ``kill`` with ``-e ENV``: Nimbus is the project's ``config.json``
``envs.prod.nimbus``; the topology's executor logs are kept in its ``log.path``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

FILES = {
    "src/counting.py": '''
import time

from sparkstorm import Bolt, Spout


class NumberSpout(Spout):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.next = 0

    def next_tuple(self):
        time.sleep(0.05)
        self.emit([self.next], tup_id=self.next)
        self.next += 1


class Seen(Bolt):
    def process(self, tup):
        self.logger.info("seen %s", tup.values[0])
''',
    "topologies/numbers.py": '''
from counting import NumberSpout, Seen

from sparkstorm import Topology


class Numbers(Topology):
    counter = NumberSpout.spec()
    seen = Seen.spec(inputs=[counter], par=2)
''',
}


def _project(root: Path, port: int, logs: Path) -> Path:
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    (root / "config.json").write_text(json.dumps({
        "topology_specs": "topologies/",
        "envs": {"prod": {"nimbus": f"127.0.0.1:{port}", "workers": [],
                          "log": {"path": str(logs)}}}}))
    return root


def _sparkstorm(cluster: TestCluster, project: Path, *args: str,
                ok: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", *args],
                            cwd=project, env=cluster.env, capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    if ok:
        assert result.returncode == 0, f"{args}: {result.stderr}\n{cluster.logs()}"
    return result


def _acked(cluster: TestCluster, topology_id: str) -> int:
    spouts: list[dict[str, Any]] = cluster.get(f"/api/v1/topology/{topology_id}")["spouts"]
    return int(spouts[0]["acked"]) if spouts else 0


# slow (33 s in CI): a streamparse project runs end to end in
# tests/integration/migration/test_moving_over.py; its flags in tests/unit/cli/
@pytest.mark.slow
def test_streamparse_cluster_commands_from_a_project(cluster: TestCluster,
                                                     tmp_path: Path) -> None:
    logs = tmp_path / "kept-logs"
    project = _project(tmp_path / "project", cluster.port, logs)
    cluster.start_nimbus()
    cluster.start_supervisor()
    topology_id = _sparkstorm(cluster, project, "submit", "-e", "prod").stdout.strip()
    wait_for(lambda: _acked(cluster, topology_id) > 20, 120,
             message=f"the topology runs\n{cluster.logs()}")

    assert topology_id in _sparkstorm(cluster, project, "list", "-e", "prod").stdout
    overview = _sparkstorm(cluster, project, "stats", "-e", "prod").stdout
    assert "Cluster summary" in overview and topology_id in overview
    seen = _sparkstorm(cluster, project, "stats", "-n", "numbers", "-c", "seen").stdout
    assert "Executors (all time): seen of numbers" in seen
    executors = [line for line in seen.split("Executors (all time)")[1].splitlines()
                 if line.startswith("│")]
    assert len(executors) == 2, seen
    slots = _sparkstorm(cluster, project, "slot_usage", "-e", "prod").stdout
    assert "numbers" in slots and "1 (" in slots, slots
    uptime = _sparkstorm(cluster, project, "worker_uptime").stdout  # the only env
    assert "numbers" in uptime and "RUNNING" in uptime, uptime

    tailed = _sparkstorm(cluster, project, "tail", "-e", "prod", "-l", "3",
                         "--pattern", r"\(seen\)").stdout
    headers = [line for line in tailed.splitlines() if line.startswith("==> ")]
    assert len(headers) == 2 and all("(seen) <==" in h for h in headers), tailed
    assert sum("seen " in line for line in tailed.splitlines()) == 6, tailed
    _follow_prints_new_lines(cluster, project)

    removed = _sparkstorm(cluster, project, "remove_logs", "-e", "prod").stdout
    assert f"removed {logs}" in removed, removed
    assert not list(logs.glob("executor-*.log")), "the kept executor logs are gone"

    killed = _sparkstorm(cluster, project, "kill", "-e", "prod", "--wait", "0").stdout
    assert killed.startswith("Killed topology: numbers"), killed
    wait_for(lambda: not cluster.get("/api/v1/topology/summary")["topologies"], 60,
             message="the topology is gone")


def _follow_prints_new_lines(cluster: TestCluster, project: Path) -> None:
    """``tail -f`` keeps printing lines the bolt logs after it started; Ctrl-C ends it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sparkstorm.cli.main", "tail", "-f", "-l", "1", "--grep",
         "seen"], cwd=project, env=cluster.env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    numbers: list[int] = []
    deadline = time.monotonic() + 60
    assert process.stdout is not None
    while len(numbers) < 6 and time.monotonic() < deadline:
        line = process.stdout.readline()
        if "seen " in line and not line.startswith("==> "):
            numbers.append(int(line.rsplit(" ", 1)[1]))
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert len(numbers) >= 6, f"new lines came while following: {numbers}\n{err}"
    assert max(numbers) > min(numbers), numbers
