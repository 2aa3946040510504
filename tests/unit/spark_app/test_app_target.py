"""The application finds its topology: here (client mode) or in the shipped code (cluster)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from sparkstorm.cli.submit import package_folder
from sparkstorm.spark_app.app import build_parser, load_target

ROOT = Path(__file__).resolve().parents[3]
CHAOS = ROOT / "tests" / "chaos" / "topology"


def test_a_client_mode_driver_loads_the_file_where_it_is() -> None:
    args = build_parser().parse_args([str(CHAOS / "chaos.py"), "--code", "chaos-code.zip"])
    target, unpacked = load_target(args)
    assert target.name == "chaos" and target.label == "ChaosTopology"
    assert unpacked is None


def test_a_cluster_mode_driver_finds_the_topology_in_the_shipped_zip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = package_folder(CHAOS, tmp_path / "chaos-code.zip")
    monkeypatch.chdir(tmp_path)  # where the cluster puts --py-files
    saved = list(sys.path)
    unpacked = None
    try:
        args = build_parser().parse_args(["chaos.py", "--code", code.name, "-n", "ids"])
        target, unpacked = load_target(args)
        assert target.name == "ids"
        assert unpacked is not None and Path(args.file).parent == unpacked
        assert unpacked.name.startswith(f"sparkstorm-{os.getpid()}-code-"), "unpacked here"
    finally:
        sys.path[:] = saved
        if unpacked is not None:
            shutil.rmtree(unpacked)


def test_the_application_prints_the_file_spark_submit_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    from sparkstorm.spark_app.app import main

    assert main(["--path"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.name == "__main__.py" and path.parent.name == "spark_app" and path.is_file()
