"""``sparkstorm spark-submit`` of a streamparse project and of a Flux file (``local`` master).

The project is shipped as the code zip; the hosting tasks unpack it, so ``src/`` imports
in the executors, the shell bolt's command and the spout's relative data file run in
``src/`` (the project's resources folder, as under streamparse), and config.json's options
reach the topology. Every number comes out doubled once. A Flux file is shipped with its
folder, whose module its ``className``s name; every id is acked once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.test_submit_project import FILES as SUBMITTED
from tests.jsonl import whole_records

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]

COUNT = 30
FILES = {
    # the spout (and its data file, read relative to src/) of the Nimbus submit test
    **{path: SUBMITTED[path] for path in ("src/data/offset.txt", "src/spouts/__init__.py",
                                          "src/spouts/numbers.py")},
    "src/bolts/__init__.py": "",
    "src/bolts/upper.py": '''
import json
import os

from sparkstorm import Bolt


class Double(Bolt):
    outputs = ["n"]

    def process(self, tup):
        self.emit([tup.values[0] * 2])


class Record(Bolt):
    def initialize(self, conf, ctx):
        self.out = open(os.path.join(conf["numbers.dir"], f"seen-{ctx['taskid']}.jsonl"),
                        "a", buffering=1)

    def process(self, tup):
        self.out.write(json.dumps({"n": tup.values[0]}) + "\\n")
''',
    "topologies/numbers.py": f'''
from bolts.upper import Record
from spouts.numbers import NumberSpout

from sparkstorm import ShellBolt, Topology


class Numbers(Topology):
    numbers = NumberSpout.spec()
    double = ShellBolt.spec(command={sys.executable!r},
                            script="-m sparkstorm.multilang bolts.upper:Double",
                            inputs=[numbers], outputs=["n"])
    seen = Record.spec(inputs=[double], par=2)
''',
}


def _python_driver(process: subprocess.Popen[bytes]) -> psutil.Process:
    for child in psutil.Process(process.pid).children(recursive=True):
        try:
            cmdline = child.cmdline()
        except psutil.Error:  # gone, or a zombie: a short-lived helper of spark-submit's
            continue
        if "python" in Path(cmdline[0]).name and any(
                arg.endswith("spark_app/__main__.py") for arg in cmdline):
            return child
    msg = "no Python driver among the command's processes"
    raise AssertionError(msg)


# slow (23 s): a streamparse project runs in tests/integration/migration/test_moving_over.py
# and spark-submit in test_spark_submit_local.py; tests/unit/cli/test_spark_submit.py builds
# the command
@pytest.mark.slow
def test_spark_submit_a_streamparse_project_from_its_root(tmp_path: Path) -> None:
    project, results = tmp_path / "project", tmp_path / "numbers"
    results.mkdir()
    for relative, text in FILES.items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text)
    (project / "config.json").write_text(json.dumps({
        "topology_specs": "topologies/",
        "envs": {"prod": {"workers": [], "options": {"numbers.count": COUNT}}}}))
    log = tmp_path / "spark-submit.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.cli.main", "spark-submit", "-e", "prod",
             "--master", "local[4]", "--staging", str(tmp_path / "staging"),
             "-c", f"numbers.dir={results}", "-c", "topology.workers=2",
             "-c", "spark.ui.enabled=false", "-c", "topology.window.ms=100"],
            cwd=project, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, "TMPDIR": str(tmp_path)}, start_new_session=True)
    try:
        def seen() -> list[int]:
            assert process.poll() is None, log.read_text()[-5000:]
            return sorted(r["n"] for p in results.glob("seen-*.jsonl")
                          for r in whole_records(p))

        wait_for(lambda: len(seen()) >= COUNT, 180, message="every number doubled")
        assert seen() == [2 * (1000 + n) for n in range(COUNT)]
        _python_driver(process).send_signal(signal.SIGTERM)
        assert process.wait(120) == 0, log.read_text()[-5000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    text = log.read_text()
    assert "topology numbers (Numbers)" in text and "hosts executors" in text, text[-3000:]
    assert not list(tmp_path.glob("sparkstorm-*")), "the shares' code and executor folders"


FLUX = """
name: "chaos-flux"
config:
  topology.workers: 2
spouts:
  - id: "ids"
    className: "components.IdSpout"
    parallelism: 1
bolts:
  - id: "relay"
    className: "components.Relay"
    parallelism: 2
  - id: "sink"
    className: "components.Sink"
    parallelism: 2
streams:
  - {from: "ids", to: "relay", grouping: {type: SHUFFLE}}
  - {from: "relay", to: "sink", grouping: {type: SHUFFLE}}
"""


# slow (CI budget): test_spark_submit_a_streamparse_project_from_its_root ships and unpacks
# code the same way; a Flux file differs only in how the driver reads the topology, which
# tests/integration/spark/flux covers
@pytest.mark.slow
def test_spark_submit_a_flux_file_with_its_folder(tmp_path: Path) -> None:
    from tests.chaos.faults import TOPOLOGY, acks

    code, results = tmp_path / "code", tmp_path / "numbers"
    code.mkdir()
    results.mkdir()
    (code / "components.py").write_text(TOPOLOGY.read_text())
    (code / "chaos.yaml").write_text(FLUX)
    log = tmp_path / "spark-submit.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.cli.main", "spark-submit",
             str(code / "chaos.yaml"), "--master", "local[4]",
             "--staging", str(tmp_path / "staging"), "-c", f"chaos.dir={results}",
             "-c", f"chaos.count={COUNT}", "-c", "spark.ui.enabled=false"],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, "TMPDIR": str(tmp_path)}, start_new_session=True)
    try:
        def acked() -> list[int]:
            assert process.poll() is None, log.read_text()[-5000:]
            return sorted(a["id"] for a in acks(results))

        wait_for(lambda: len(acked()) >= COUNT, 180, message="every id acked")
        _python_driver(process).send_signal(signal.SIGTERM)
        assert process.wait(120) == 0, log.read_text()[-5000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    assert sorted(a["id"] for a in acks(results)) == list(range(COUNT)), "each once"
    assert "topology chaos-flux" in log.read_text()
    assert not list(tmp_path.glob("sparkstorm-*"))
