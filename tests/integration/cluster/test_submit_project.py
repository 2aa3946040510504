"""``sparkstorm submit`` from a streamparse project's root.

The whole project is shipped, ``src/`` imports on the worker, shell commands and in-process
components run in ``src/`` (a spout opens its data file relative to it, as under streamparse),
config.json's options reach the topology, and the components' ``self.logger`` lines are next to
``worker.log``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]

FILES = {
    "src/data/offset.txt": "1000\n",
    "src/spouts/__init__.py": "",
    "src/spouts/numbers.py": '''
from sparkstorm import Spout


class NumberSpout(Spout):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.total, self.next = conf["numbers.count"], 0
        with open("data/offset.txt") as handle:  # relative to src/, the resources folder
            self.offset = int(handle.read())

    def next_tuple(self):
        if self.next < self.total:
            self.emit([self.offset + self.next], tup_id=self.next)
            self.next += 1
''',
    "src/bolts/__init__.py": "",
    "src/bolts/upper.py": '''
from sparkstorm import Bolt


class Double(Bolt):
    outputs = ["n"]

    def process(self, tup):
        self.emit([tup.values[0] * 2])


class Seen(Bolt):
    def process(self, tup):
        self.logger.info("seen doubled %s", tup.values[0])
''',
    "topologies/numbers.py": f'''
from bolts.upper import Seen
from spouts.numbers import NumberSpout

from sparkstorm import ShellBolt, Topology


class Numbers(Topology):
    numbers = NumberSpout.spec()
    double = ShellBolt.spec(command={sys.executable!r},
                            script="-m sparkstorm.multilang bolts.upper:Double",
                            inputs=[numbers], outputs=["n"])
    seen = Seen.spec(inputs=[double])
''',
}


def _acked(cluster: TestCluster, topology_id: str) -> int:
    spouts: list[dict[str, Any]] = cluster.get(f"/api/v1/topology/{topology_id}")["spouts"]
    return int(spouts[0]["acked"]) if spouts else 0


def test_submit_a_streamparse_project_from_its_root(cluster: TestCluster,
                                                    tmp_path: Path) -> None:
    project = tmp_path / "project"
    for relative, text in FILES.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    (project / "config.json").write_text(json.dumps({
        "topology_specs": "topologies/",
        "envs": {"prod": {"nimbus": f"127.0.0.1:{cluster.port}", "workers": [],
                          "options": {"numbers.count": 20}}}}))
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", "submit"],
                            cwd=project, env=cluster.env, capture_output=True, text=True,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    assert topology_id.startswith("numbers-1-")
    wait_for(lambda: _acked(cluster, topology_id) == 20, 120,
             message=f"20 acked\n{cluster.logs()}")

    def logged() -> str:
        return "\n".join(p.read_text(errors="replace") for local in
                         cluster.supervisor_dirs.values()
                         for p in local.glob("supervisor/workers/*/executor-*.log")
                         if (p.parent / "worker.log").exists())

    wait_for(lambda: all(f"seen doubled {2 * (1000 + n)}" in logged() for n in range(20)), 30,
             message=f"the Seen bolt's logger lines next to worker.log\n{logged()[-2000:]}")
