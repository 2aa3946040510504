"""The cluster worker hands its topology runner the conf with the code dir's defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.cluster.worker.worker import ClusterWorker
from sparkstorm.multilang.shell import RESOURCES_DIR_KEY


class _Source(Spout):
    outputs = ["n"]


class _Sink(Bolt):
    pass


class _Pipeline(Topology):
    source = _Source.spec()
    sink = _Sink.spec(inputs=[source])


class _FakeRunner:
    """Stands in for TopologyDriver (which would start Spark); keeps the conf it got."""

    started: list[_FakeRunner] = []

    def __init__(self, name: str, spec: Any, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.spark_ui_url = None
        self.plan = type("Plan", (), {"executors": []})()

    def set_active(self, active: bool) -> None:
        pass

    def start(self) -> None:
        _FakeRunner.started.append(self)


class _Client:
    def log(self, worker_id: str, body: dict[str, Any]) -> None:
        pass


@pytest.mark.parametrize("user_value", [None, "/srv/multilang"])
def test_the_runner_gets_the_code_dirs_resources_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_value: str | None) -> None:
    monkeypatch.setattr("sparkstorm.engine.driver.TopologyDriver", _FakeRunner)
    (tmp_path / "resources").mkdir()
    worker = ClusterWorker(_Client(), "w1", "t-1-1", tmp_path)  # type: ignore[arg-type]
    conf = {"topology.name": "t"} if user_value is None else {RESOURCES_DIR_KEY: user_value}
    worker._start_runner({"topology_name": "t", "spec": _Pipeline.topology_spec.to_dict(),
                          "conf": conf})
    expected = user_value or str(tmp_path / "resources")
    assert _FakeRunner.started[-1].conf[RESOURCES_DIR_KEY] == expected
