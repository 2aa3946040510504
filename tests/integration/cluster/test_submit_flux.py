"""``sparkstorm submit FILE.yaml``: a Flux file of shell components on a real cluster.

``flux_submit/shells.yaml`` declares Flux's ``FluxShellSpout`` and ``FluxShellBolt`` with
their constructor arguments (command line, output fields): a node spout, a node bolt and a
pystorm bolt, the project's own ``examples/multilang/resources`` files, copied into a
``resources/`` folder next to the yaml (Storm's jar layout). Submitted, the topology runs on
the supervisor with its commands in the ``resources/`` folder of the supervisor's unpacked copy
of the upload, the spout's acks keep growing, and nothing fails or reports an error.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import ROOT, TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

FLUX_FILE = Path(__file__).resolve().parent / "flux_submit" / "shells.yaml"
EXAMPLES = ROOT / "examples" / "multilang" / "resources"
RESOURCES = ("multilang.js", "sentences.js", "split.js", "words.py")
COMPONENTS = ("sentences", "split-js", "split-py")
CHILDREN = {"sentences": ("node", "sentences.js"), "split-js": ("node", "split.js"),
            "split-py": (sys.executable, "words.py", "split")}
"""Each component's command line as shells.yaml declares it (Python: SPARKSTORM_FLUX_PYTHON)."""


def _upload_folder(tmp_path: Path) -> Path:
    """``shells.yaml`` with the project's multilang files in ``resources/`` next to it."""
    folder = tmp_path / "flux_submit"
    (folder / "resources").mkdir(parents=True)
    shutil.copy(FLUX_FILE, folder / FLUX_FILE.name)
    for name in RESOURCES:
        shutil.copy(EXAMPLES / name, folder / "resources" / name)
    return folder


def _topology(cluster: TestCluster, topology_id: str) -> dict[str, Any]:
    return dict(cluster.get(f"/api/v1/topology/{topology_id}"))


def _spout_acked(cluster: TestCluster, topology_id: str) -> int:
    spouts = _topology(cluster, topology_id)["spouts"]
    return int(spouts[0]["acked"]) if spouts else 0


def _acked_beyond(cluster: TestCluster, topology_id: str, floor: int) -> int:
    """The spout's acks if there are more than ``floor``, else 0."""
    acked = _spout_acked(cluster, topology_id)
    return acked if acked > floor else 0


def _children(cluster: TestCluster) -> dict[str, list[psutil.Process]]:
    """The shell children under the (one) worker, by component, from their command lines."""
    found: dict[str, list[psutil.Process]] = {name: [] for name in CHILDREN}
    for record in cluster.worker_records():
        try:
            descendants = psutil.Process(record["pid"]).children(recursive=True)
        except psutil.Error:
            continue
        for process in descendants:
            try:
                command = tuple(process.cmdline())
            except psutil.Error:
                continue
            for name, expected in CHILDREN.items():
                if command == expected:
                    found[name].append(process)
    return found


def test_submit_a_flux_file_of_shell_components(cluster: TestCluster, tmp_path: Path) -> None:
    folder = _upload_folder(tmp_path)
    cluster.start_nimbus()
    cluster.start_supervisor()
    result = subprocess.run(
        [sys.executable, "-m", "sparkstorm.cli.main", "submit", str(folder / FLUX_FILE.name),
         "--env-filter"], cwd=ROOT, env={**cluster.env, "SPARKSTORM_FLUX_PYTHON": sys.executable},
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr + cluster.logs()
    topology_id = result.stdout.strip()
    assert topology_id.startswith("flux-shells-submit-"), result.stdout

    # the spout's acks keep growing: three rises in a row after the first ack
    acked = wait_for(lambda: _spout_acked(cluster, topology_id), 180,
                     message=f"the first acks of the spout\n{cluster.logs()}")
    for _ in range(3):
        acked = wait_for(lambda floor=acked: _acked_beyond(cluster, topology_id, floor), 60,
                         message=f"acks beyond {acked}\n{cluster.logs()}")

    # the shell children run in the resources/ folder of the supervisor's unpacked upload
    resources = cluster.local / "supervisor" / "stormdist" / topology_id / "code" / "resources"
    assert sorted(p.name for p in resources.iterdir()) == sorted(RESOURCES), \
        "the supervisor unpacked the upload, resources/ included"
    children = wait_for(lambda: (found := _children(cluster)) and all(found.values()) and found,
                        30, message=f"node and python children under the worker\n"
                                    f"{cluster.logs()}")
    (record,) = cluster.worker_records()
    worker_folder = cluster.local / "supervisor" / "workers" / record["worker_id"]
    for name, processes in children.items():
        for process in processes:
            cwd = Path(process.cwd()).resolve()
            assert cwd == resources.resolve(), \
                f"{name}'s {process.cmdline()} runs in {cwd}, not in {resources}"
            assert cwd != worker_folder.resolve()
            assert cwd != (folder / "resources").resolve(), "the supervisor's copy, not ours"

    # nothing failed, no component reported an error, both bolts did their work
    topology = _topology(cluster, topology_id)
    (spout,) = topology["spouts"]
    assert spout["acked"] >= acked and spout["failed"] == 0, spout
    assert all(row["failed"] == 0 for row in topology["topologyStats"]), \
        topology["topologyStats"]
    bolts = {bolt["boltId"]: bolt for bolt in topology["bolts"]}
    assert set(bolts) == {"split-js", "split-py"}
    for bolt in bolts.values():
        assert bolt["executed"] > 0 and bolt["acked"] > 0 and bolt["failed"] == 0, bolt
    for row in (spout, *bolts.values()):
        assert row["lastError"] == "", row
    for name in COMPONENTS:
        component = cluster.get(f"/api/v1/topology/{topology_id}/component/{name}")
        assert component["componentErrors"] == [], (name, component["componentErrors"])
