"""On a cluster, shell commands run in the uploaded code's ``resources/`` folder by default.

That folder is Storm's code dir; the user's ``topology.multilang.resources.dir`` always wins.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sparkstorm.multilang.shell import RESOURCES_DIR_KEY, with_code_resources
from tests.unit.multilang.harness import bolt, probe, tup


def test_defaults_to_the_code_dirs_resources_folder(tmp_path: Path) -> None:
    (tmp_path / "resources").mkdir()
    conf = {"topology.name": "t"}
    resolved = with_code_resources(conf, tmp_path)
    assert resolved == {"topology.name": "t", RESOURCES_DIR_KEY: str(tmp_path / "resources")}
    assert conf == {"topology.name": "t"}, "the caller's conf is not changed"
    # declared keys come with their default None: that is unset too
    assert with_code_resources({RESOURCES_DIR_KEY: None}, tmp_path)[RESOURCES_DIR_KEY] == \
        str(tmp_path / "resources")


def test_a_relative_code_dir_gives_an_absolute_folder(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "code" / "resources").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    resolved = with_code_resources({}, "code")[RESOURCES_DIR_KEY]
    assert os.path.isabs(resolved) and Path(resolved) == tmp_path / "code" / "resources"


def test_the_users_setting_wins(tmp_path: Path) -> None:
    (tmp_path / "resources").mkdir()
    conf = {RESOURCES_DIR_KEY: "/srv/multilang"}
    assert with_code_resources(conf, tmp_path) == conf


def test_no_resources_folder_leaves_the_conf_alone(tmp_path: Path) -> None:
    (tmp_path / "resources").write_text("a file, not a folder")
    assert with_code_resources({"a": 1}, tmp_path) == {"a": 1}
    assert with_code_resources({"a": 1}, tmp_path / "missing") == {"a": 1}


def test_shell_commands_run_there(tmp_path: Path) -> None:
    (tmp_path / "resources").mkdir()
    shell = bolt(probe("ok"), conf=with_code_resources({}, tmp_path))
    shell.process(tup("env", 0))
    shell.end_window()
    shell.close()
    cwd = shell._collector.emits[0]["values"][0]
    assert Path(cwd) == tmp_path / "resources"
