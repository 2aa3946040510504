"""A streamparse project's layout (no Spark).

Quickstart, topology by name, environments, what config.json means here, and what submit ships.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path

import pytest

from sparkstorm.cli.submit import package_folder
from sparkstorm.cli.target import resolve_target
from sparkstorm.errors import TopologyError
from sparkstorm.project import find_project, quickstart
from sparkstorm.topology.spec_args import ENVIRONMENT_VAR


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "wordcount"
    quickstart(root)
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv(ENVIRONMENT_VAR, raising=False)
    for module in [m for m in sys.modules if m.split(".")[0] in
                   ("bolts", "spouts", "wordcount", "other")]:
        monkeypatch.delitem(sys.modules, module)
    return root


def args(**kwargs: object) -> argparse.Namespace:
    base = {"file": None, "topology": None, "name": None, "environment": None,
            "filter": None, "env_filter": False, "config": []}
    return argparse.Namespace(**{**base, **kwargs})


def test_quickstart_lays_out_streamparses_project(project: Path) -> None:
    files = sorted(p.relative_to(project).as_posix() for p in project.rglob("*")
                   if p.is_file())
    assert files == [".gitignore", "README.md", "config.json", "src/bolts/__init__.py",
                     "src/bolts/wordcount.py", "src/spouts/__init__.py", "src/spouts/words.py",
                     "topologies/wordcount.py", "virtualenvs/wordcount.txt"]
    with pytest.raises(TopologyError) as error:
        quickstart(project)
    assert error.value.code == "QUICKSTART_FOLDER_EXISTS"


def test_run_from_the_root_finds_the_topology_and_src(project: Path) -> None:
    target = resolve_target(args(), submitting=False)
    assert target.name == "wordcount" and target.label == "WordCount"
    assert [c.component for c in target.spec.components] == [
        "spouts.words:WordSpout", "bolts.wordcount:WordCountBolt"], "src/ is importable"
    assert target.spec.config["topology.multilang.resources.dir"] == str(project / "src")
    assert target.warnings == [] and target.code_root == project


def test_topology_by_name_and_its_refusals(project: Path) -> None:
    original = (project / "topologies" / "wordcount.py").read_text()
    (project / "topologies" / "other.py").write_text(
        original.replace("class WordCount(", "class Other("))
    with pytest.raises(TopologyError) as error:
        resolve_target(args(), submitting=False)
    assert error.value.code == "PROJECT_TOPOLOGY_AMBIGUOUS" and "-n NAME" in str(error.value)
    assert resolve_target(args(name="other"), submitting=False).label == "Other"
    with pytest.raises(TopologyError) as error:
        resolve_target(args(name="nope"), submitting=False)
    assert error.value.code == "PROJECT_TOPOLOGY_NOT_FOUND"


def test_config_json_options_environments_and_ignored_keys(project: Path) -> None:
    config = json.loads((project / "config.json").read_text())
    config["options"] = {"topology.max.spout.pending": 10, "topology.message.timeout.secs": 5}
    config["envs"]["prod"].update({
        "nimbus": "nimbus.example:7000", "workers": ["a", "b", "c"], "user": "storm",
        "use_virtualenv": True, "log": {"path": "/var/log/x", "level": "debug"},
        "options": {"topology.message.timeout.secs": 9}})
    config["envs"]["beta"] = {"workers": []}
    (project / "config.json").write_text(json.dumps(config))
    with pytest.raises(TopologyError) as error:
        resolve_target(args(), submitting=False)
    assert error.value.code == "PROJECT_ENVIRONMENT_UNKNOWN"
    target = resolve_target(args(environment="prod"), submitting=True)
    conf = target.spec.config
    assert (conf["topology.max.spout.pending"], conf["topology.message.timeout.secs"],
            conf["topology.workers"], conf["topology.executor.log.dir"]) == (10, 9, 3,
                                                                             "/var/log/x")
    assert conf["topology.code.python.paths"] == ["src", "topologies"]
    assert conf["topology.multilang.resources.dir"] == "src"
    assert sorted(w.split(" ")[0] for w in target.warnings) == [
        "config.json", "config.json", "config.json"]
    joined = "\n".join(target.warnings)
    for key in ("envs.prod.user", "envs.prod.use_virtualenv", "envs.prod.log.level"):
        assert key in joined
    project_info = find_project(project, "prod")
    assert project_info is not None
    assert project_info.nimbus_conf() == {"nimbus.host": "nimbus.example", "nimbus.port": 7000}


def test_per_environment_par_follows_the_picked_environment(project: Path) -> None:
    bolt = project / "src" / "bolts" / "wordcount.py"
    bolt.write_text(bolt.read_text().replace('    outputs = ["word", "count"]',
                                             '    outputs = ["word", "count"]\n'
                                             '    par = {"prod": 3, "beta": 1}'))
    topology = project / "topologies" / "wordcount.py"
    topology.write_text(topology.read_text().replace(", par=2)", ")"))
    config = json.loads((project / "config.json").read_text())
    config["envs"]["beta"] = {}
    (project / "config.json").write_text(json.dumps(config))
    target = resolve_target(args(environment="prod"), submitting=False)
    assert target.spec.component("count_bolt").par == 3


def test_submit_ships_the_whole_project(project: Path, tmp_path: Path) -> None:
    (project / "storm-local" / "logs").mkdir(parents=True)
    (project / "storm-local" / "logs" / "x.log").write_text("x")
    with zipfile.ZipFile(package_folder(project, tmp_path / "t.zip")) as archive:
        names = set(archive.namelist())
    assert {"config.json", "src/bolts/wordcount.py", "topologies/wordcount.py",
            "virtualenvs/wordcount.txt"} <= names
    assert not any(n.startswith("storm-local") for n in names)


def test_outside_a_project_a_file_is_needed(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TopologyError) as error:
        resolve_target(args(), submitting=False)
    assert error.value.code == "NO_TOPOLOGY_GIVEN"


def test_an_unreachable_nimbus_from_config_json_names_its_environment_and_key(
        project: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a plain Nimbus: without TLS material the CLI would stop at TLS_MATERIAL_MISSING first
    monkeypatch.setenv("SPARKSTORM_STORM_TLS_ENABLED", "false")
    import socket

    from sparkstorm.cli.main import main

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = json.loads((project / "config.json").read_text())
    config["envs"]["prod"]["nimbus"] = f"127.0.0.1:{port}"
    (project / "config.json").write_text(json.dumps(config))
    assert main(["submit", "-e", "prod"]) == 2
    err = capsys.readouterr().err
    assert "NIMBUS_UNAVAILABLE" in err
    assert f"config.json envs.prod.nimbus = '127.0.0.1:{port}'" in err, err
    assert main(["submit", "-e", "prod", "-c", f"nimbus.port={port}"]) == 2
    assert "config.json" not in capsys.readouterr().err, "-c names the address: no origin"


def test_command_line_options_beat_the_topology_and_config_json(project: Path) -> None:
    config = json.loads((project / "config.json").read_text())
    config["options"] = {"topology.message.timeout.secs": 111, "x.json": "json"}
    (project / "config.json").write_text(json.dumps(config))
    for submitting in (False, True):
        conf = resolve_target(args(config=["topology.message.timeout.secs=5"]),
                              submitting=submitting).spec.config
        assert (conf["topology.message.timeout.secs"], conf["x.json"]) == (5, "json")
    conf = resolve_target(args(config=["storm.cluster.token=secret"]),
                          submitting=True).spec.config
    assert "storm.cluster.token" not in conf, "a credential never joins the topology's conf"
