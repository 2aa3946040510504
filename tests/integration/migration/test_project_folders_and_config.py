"""A streamparse project's working folder and config order under ``sparkstorm run``.

Under Storm and streamparse a component runs in the topology's resources folder (streamparse
packs ``src/`` there), so it opens data files relative to it; config applies as streamparse
resolves it: command line > the topology's ``config`` > ``config.json``; and a local run does
not write to the environment's production ``log.path`` unless told to. Each run is a real
``sparkstorm run`` subprocess on Spark local mode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.migration.test_moving_over import (
    SPARK_FLAGS,
    kept_log_dir,
    sparkstorm,
    table,
)

pytestmark = pytest.mark.spark

NUMBERS = 25

FILES = {
    "src/data/numbers.txt": "\n".join(str(n) for n in range(NUMBERS)) + "\n",
    "src/spouts/__init__.py": "",
    "src/spouts/from_file.py": '''
from sparkstorm.spout import Spout


class FileSpout(Spout):
    """Reads a data file relative to its working folder, as streamparse spouts do."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        with open("data/numbers.txt") as handle:
            self.pending = [int(line) for line in handle if line.strip()]
        for key in ("topology.message.timeout.secs", "order.label", "order.json_only",
                    "order.topology_vs_json"):
            self.logger.info("conf %s=%s", key, conf.get(key))

    def next_tuple(self):
        if self.pending:
            n = self.pending.pop(0)
            self.emit([n], tup_id=n)
''',
    "src/bolts/__init__.py": "",
    "src/bolts/sink.py": '''
from sparkstorm.bolt import Bolt


class Sink(Bolt):
    outputs = []

    def process(self, tup):
        pass
''',
    "topologies/numbers.py": '''
from bolts.sink import Sink
from spouts.from_file import FileSpout

from sparkstorm.topology import Topology


class Numbers(Topology):
    config = {"order.label": "topology", "order.topology_vs_json": "topology"}
    numbers = FileSpout.spec()
    sink = Sink.spec(inputs=[numbers])
''',
}


def make_project(root: Path) -> Path:
    project = root / "project"
    for relative, text in FILES.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    (project / "config.json").write_text(json.dumps({
        "topology_specs": "topologies/",
        "options": {"topology.message.timeout.secs": 111, "order.label": "json",
                    "order.json_only": "json", "order.topology_vs_json": "json"},
        "envs": {"prod": {"nimbus": "", "workers": [],
                          "log": {"path": str(root / "var-log-storm")}}}}))
    return project


def test_a_spout_opens_its_data_relative_to_src_and_config_order_is_streamparses(
        tmp_path: Path) -> None:
    project = make_project(tmp_path)
    result = sparkstorm(project, "run", "--time", "6", "-o", "topology.message.timeout.secs=5",
                        "-o", "order.label=cli", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = table(result.stdout)
    assert rows["numbers"]["emitted"] == NUMBERS == rows["numbers"]["acked"], \
        "initialize read src/data/numbers.txt from its working folder, src/"
    out = result.stdout
    assert "conf topology.message.timeout.secs=5" in out, "-o beats config.json's options"
    assert "conf order.label=cli" in out, "-o beats the topology's config"
    assert "conf order.topology_vs_json=topology" in out, "the topology beats config.json"
    assert "conf order.json_only=json" in out
    logs = kept_log_dir(out)
    assert logs.is_relative_to(project / "storm-local" / "logs"), \
        "a run without -e keeps its logs in the project, not the environment's log.path"
    assert not (tmp_path / "var-log-storm").exists()


# slow (33 s in CI): the environment's options are merged in
# tests/unit/cli/test_streamparse_project.py; this file's other test runs a project
@pytest.mark.slow
def test_the_environments_log_path_applies_with_e_and_yields_to_the_command_line(
        tmp_path: Path) -> None:
    project = make_project(tmp_path)
    named = sparkstorm(project, "run", "-e", "prod", "--time", "3", *SPARK_FLAGS)
    assert named.returncode == 0, named.stderr[-3000:]
    assert kept_log_dir(named.stdout).is_relative_to(tmp_path / "var-log-storm")
    elsewhere = tmp_path / "my-logs"
    redirected = sparkstorm(project, "run", "-e", "prod", "--time", "3",
                            "-o", f"topology.executor.log.dir={elsewhere}", *SPARK_FLAGS)
    assert redirected.returncode == 0, redirected.stderr[-3000:]
    assert kept_log_dir(redirected.stdout).is_relative_to(elsewhere), "-o wins over log.path"
