"""What a streamparse project's virtualenv settings send with ``submit`` (no Spark, no Nimbus).

And how ``submit --wait-start`` reads the topology's ``workerStatus``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.cli.submit import wait_started
from sparkstorm.project import find_project, quickstart
from sparkstorm.project.virtualenvs import honoured_on_submit, virtualenv_conf


def project_with(tmp_path: Path, env: dict[str, Any], **config: Any) -> Any:
    root = tmp_path / "wordcount"
    quickstart(root)  # virtualenvs/wordcount.txt says "sparkstorm"
    data = json.loads((root / "config.json").read_text())
    data["envs"]["prod"].update(env)
    data.update(config)
    (root / "config.json").write_text(json.dumps(data))
    return find_project(root, None)


def test_the_requirements_file_goes_with_the_topology(tmp_path: Path) -> None:
    project = project_with(tmp_path, {})
    assert virtualenv_conf(project, "wordcount") == {
        "topology.virtualenv.requirements": "sparkstorm\n"}
    assert virtualenv_conf(project, "other") == {}, "no virtualenvs/other.txt: none"


def test_streamparses_settings_map_to_the_virtualenv_keys(tmp_path: Path) -> None:
    project = project_with(tmp_path, {"virtualenv_root": "/srv/venvs",
                                      "virtualenv_name": "wc",
                                      "virtualenv_flags": ["--prompt", "w c"]})
    assert virtualenv_conf(project, "wordcount") == {
        "topology.virtualenv.requirements": "sparkstorm\n",
        "topology.virtualenv.root": "/srv/venvs", "topology.virtualenv.name": "wc",
        "topology.virtualenv.flags": "--prompt 'w c'"}
    warnings = [w for w in project.warnings if not honoured_on_submit(w)]
    assert not any("virtualenv" in w for w in warnings), warnings


def test_use_and_install_virtualenv(tmp_path: Path) -> None:
    assert virtualenv_conf(project_with(tmp_path / "a", {"use_virtualenv": False}),
                           "wordcount") == {}
    given = project_with(tmp_path / "b", {"install_virtualenv": False,
                                          "virtualenv_root": "/srv/venvs"})
    assert virtualenv_conf(given, "wordcount") == {
        "topology.virtualenv.install": False, "topology.virtualenv.root": "/srv/venvs"}
    from_options = project_with(tmp_path / "c", {"options": {"use_virtualenv": "false"}})
    assert virtualenv_conf(from_options, "wordcount") == {}


def test_the_folder_of_requirements_is_virtualenv_specs(tmp_path: Path) -> None:
    project = project_with(tmp_path, {}, virtualenv_specs="reqs")
    assert virtualenv_conf(project, "wordcount") == {}
    (project.root / "reqs").mkdir()
    (project.root / "reqs" / "wordcount.txt").write_text("tinydep\n")
    assert virtualenv_conf(project, "wordcount") == {
        "topology.virtualenv.requirements": "tinydep\n"}


class _Summary:
    """Answers ``topologies()`` with one row per call, the last one repeated."""

    def __init__(self, *rows: dict[str, Any]) -> None:
        self.rows = list(rows)

    def topologies(self) -> list[dict[str, Any]]:
        return [self.rows.pop(0) if len(self.rows) > 1 else self.rows[0]]


@pytest.mark.parametrize(("status", "code"), [("RUNNING", 0), ("FAILING", 1)])
def test_wait_start_ends_on_running_or_failing(status: str, code: int,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    detail = ("worker w failed to start 1 time(s): component __worker: "
              "VIRTUALENV_INSTALL_FAILED: the virtualenv 'wc' could not be built")
    summary = _Summary({"id": "wc-1-1", "workerStatus": "STARTING"},
                       {"id": "wc-1-1", "workerStatus": status,
                        "workerStatusDetail": detail if status == "FAILING" else ""})
    sleeps: list[float] = []
    assert wait_started(summary, "wc-1-1", 60, sleeps.append) == code  # type: ignore[arg-type]
    assert sleeps == [1.0]
    if status == "FAILING":
        assert "VIRTUALENV_INSTALL_FAILED" in capsys.readouterr().err


def test_wait_start_gives_up_after_its_time(capsys: pytest.CaptureFixture[str]) -> None:
    summary = _Summary({"id": "wc-1-1", "workerStatus": "STARTING"})
    assert wait_started(summary, "wc-1-1", 0, lambda _: None) == 1  # type: ignore[arg-type]
    assert "still STARTING after 0 s" in capsys.readouterr().err
