"""Moving over from streamparse and Storm, as a user does it.

``sparkstorm quickstart`` and ``sparkstorm run`` in a streamparse project, and
``sparkstorm run FILE.yaml`` on a Flux file with node and Python shell children. Each run is a
real subprocess on Spark local mode; the checks read its summary table, its console and the
executor logs it names.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SPARK_FLAGS = ["-c", "spark.master=local[2]", "-c", "spark.ui.enabled=false",
               "-c", "topology.window.ms=100"]
pytestmark = pytest.mark.spark


def sparkstorm(cwd: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def table(out: str) -> dict[str, dict[str, int]]:
    """The summary table's counts.

    Component -> emitted, transferred, executed, acked, failed.
    """
    rows = {}
    columns = ("emitted", "transferred", "executed", "acked", "failed")
    for line in out[out.index("stopping"):].splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 6 and cells[2].replace(",", "").isdigit():
            rows[cells[1]] = {c: int(v.replace(",", "")) for c, v in zip(columns, cells[2:7],
                                                                          strict=True)}
    return rows


def kept_log_dir(out: str) -> Path:
    return Path(re.search(r"executor logs kept in (\S+)", out).group(1))  # type: ignore[union-attr]


def test_quickstart_project_runs_at_once_and_its_logger_lines_are_found(tmp_path: Path
                                                                        ) -> None:
    made = sparkstorm(tmp_path, "quickstart", "wordcount", timeout=60)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "wordcount"
    result = sparkstorm(project, "run", "--time", "6", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = table(result.stdout)
    emitted = rows["word_spout"]["emitted"]
    assert emitted > 1000, "the quickstart spout ran"
    assert rows["count_bolt"]["executed"] == emitted == rows["count_bolt"]["acked"], \
        "every word counted once, none lost at shutdown"
    assert rows["count_bolt"]["emitted"] == emitted
    line = re.compile(r"sparkstorm\.component\.count_bolt: counted \[1,000\] words \[pid=\d+\]")
    assert line.search(result.stdout), "self.logger.info lines reach the run's console"
    logs = kept_log_dir(result.stdout)
    assert logs.is_relative_to(project / "storm-local" / "logs")
    assert any(line.search(p.read_text()) for p in logs.glob("executor-*.log")), \
        "and stay in the executor log the run named"
    assert f"{logs / 'executor-1.log'}  (count_bolt)" in result.stdout


PROJECT = {
    "config.json": json.dumps({
        "serializer": "json", "topology_specs": "topologies/",
        "virtualenv_specs": "virtualenvs/",
        "options": {"numbers.count": 200},
        "envs": {"prod": {"user": "storm", "nimbus": "", "workers": [],
                          "options": {"topology.message.timeout.secs": 60}}}}),
    "src/spouts/__init__.py": "",
    "src/spouts/numbers.py": '''
from sparkstorm.spout import ReliableSpout


class NumberSpout(ReliableSpout):
    outputs = ["n", "word"]

    def initialize(self, conf, ctx):
        self.total, self.next = conf["numbers.count"], 0

    def next_tuple(self):
        if self.next < self.total:
            n, self.next = self.next, self.next + 1
            self.emit([n, "w%d" % (n % 5)], tup_id=n)
''',
    "src/bolts/__init__.py": "",
    "src/bolts/pipeline.py": '''
import json

from sparkstorm.bolt import BatchingBolt, Bolt


class FailOnceBolt(Bolt):
    outputs = ["n", "word"]
    par = 2

    def initialize(self, conf, ctx):
        self.seen = set()

    def process(self, tup):
        if tup.values.n not in self.seen:
            self.seen.add(tup.values.n)
            self.fail(tup)
            return
        self.emit([tup.values.n, tup.values.word])


class WordBatcher(BatchingBolt):
    outputs = ["word", "count"]
    par = 2
    config = {"topology.tick.tuple.freq.secs": 1}

    def group_key(self, tup):
        return tup.values.word

    def process_batch(self, key, tups):
        self.emit([key, len(tups)])


class TotalBolt(Bolt):
    def initialize(self, conf, ctx):
        self.totals = {}

    def process(self, tup):
        word, count = tup.values
        self.totals[word] = self.totals.get(word, 0) + count
        self.logger.info("totals %s", json.dumps(self.totals, sort_keys=True))
''',
    "topologies/pipeline.py": '''
from bolts.pipeline import FailOnceBolt, TotalBolt, WordBatcher
from spouts.numbers import NumberSpout

from sparkstorm import Grouping, Topology


class Pipeline(Topology):
    numbers = NumberSpout.spec()
    fail_once = FailOnceBolt.spec(inputs={numbers: Grouping.fields(["n"])})
    batch = WordBatcher.spec(inputs={fail_once: Grouping.fields(["word"])})
    total = TotalBolt.spec(inputs={batch: Grouping.GLOBAL})
''',
    "topologies/other.py": "raise RuntimeError('only -n pipeline is run')\n",
    "virtualenvs/pipeline.txt": "sparkstorm\n",
}


# slow (26 s, a 15 s run): make test runs a streamparse project's layout in
# test_quickstart_project_runs_at_once_and_its_logger_lines_are_found, and BatchingBolt's and
# ReliableSpout's behaviour in tests/unit/topology/test_streamparse_api.py
@pytest.mark.slow
def test_streamparse_layout_project_with_batching_and_replay(tmp_path: Path) -> None:
    for relative, text in PROJECT.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    result = sparkstorm(tmp_path, "run", "-n", "pipeline", "--time", "15", *SPARK_FLAGS)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "running pipeline (Pipeline)" in result.stdout
    assert "envs.prod.user is ignored" in result.stdout
    rows = table(result.stdout)
    assert rows["numbers"]["acked"] == 200 and rows["numbers"]["failed"] == 200, \
        "ReliableSpout replayed each failed number once and every replay was acked"
    assert rows["numbers"]["emitted"] == 400 and rows["fail_once"]["executed"] == 400
    totals = re.findall(r"totals (\{.*\})", result.stdout)
    assert totals and json.loads(totals[-1]) == {f"w{i}": 40 for i in range(5)}, \
        "the batches covered every number exactly once"


def test_flux_file_with_node_and_python_shell_children(tmp_path: Path) -> None:
    resources = tmp_path / "resources"
    resources.mkdir()
    examples = ROOT / "examples" / "multilang" / "resources"
    for name in ("multilang.js", "sentences.js", "words.py"):
        shutil.copy(examples / name, resources / name)
    (tmp_path / "counting.yaml").write_text('''
config:
  topology.max.spout.pending: 1000
bolts:
  - id: "count"
    className: "org.apache.storm.testing.TestWordCounter"
    parallelism: 2
streams:
  - from: "split"
    to: "count"
    grouping: {type: FIELDS, args: ["word"]}
''')
    (tmp_path / "shells.yaml").write_text('''
name: "flux-shells"
includes:
  - file: "counting.yaml"
config:
  topology.max.spout.pending: ${pending}
  sentences.count: ${sentences.count}
spouts:
  - id: "sentences"
    className: "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
    constructorArgs:
      - ["node", "sentences.js"]
      - ["n", "sentence"]
bolts:
  - id: "split"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    parallelism: 2
    constructorArgs:
      - ["${ENV-FLUX_TEST_PYTHON}", "words.py", "split"]
      - ["word"]
streams:
  - from: "sentences"
    to: "split"
    grouping: {type: SHUFFLE}
''')
    (tmp_path / "dev.properties").write_text("sentences.count=30\npending = 20\n")
    result = sparkstorm(tmp_path, "run", "shells.yaml", "--filter", "dev.properties",
                        "--env-filter", "--time", "10", *SPARK_FLAGS,
                        env={"FLUX_TEST_PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "running flux-shells" in result.stdout
    source = (examples / "sentences.js").read_text()
    sentences = re.findall(r"'([^']*)'", source[source.index("SENTENCES"):
                                                 source.index("];")])
    words = sum(len(sentences[n % len(sentences)].split()) for n in range(30))
    rows = table(result.stdout)
    assert (rows["sentences"]["emitted"], rows["sentences"]["acked"]) == (30, 30)
    assert rows["split"]["executed"] == 30 and rows["split"]["emitted"] == words
    assert rows["count"]["executed"] == words == rows["count"]["emitted"]
