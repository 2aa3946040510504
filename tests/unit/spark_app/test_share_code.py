"""What a hosting task does before its executors start: the shipped code and its conf."""

from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from sparkstorm.engine import ExecutionPlan, plan_shares
from sparkstorm.errors import EngineError
from sparkstorm.spark_app.link import DriverAnswer, ShareReport, decode, encode
from sparkstorm.spark_app.share import ShareSettings, find_code, share_conf, unpack_code
from tests.unit.spark_app.test_hosting_link import Relay


def _zip(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_the_code_zip_is_found_on_sys_path_or_in_the_working_directory(
        tmp_path: Path) -> None:
    code = _zip(tmp_path / "t-code.zip", {"t.py": ""})
    assert find_code("t-code.zip", [str(code)]) == code
    assert find_code("t-code.zip", [str(tmp_path)]) == code
    assert find_code("other.zip", [str(code)]) is None


def test_unpacked_code_goes_first_on_sys_path_with_its_python_paths(tmp_path: Path) -> None:
    code = _zip(tmp_path / "p.zip", {"src/bolts.py": "X = 1\n", "topologies/t.py": "",
                                      "src/resources.txt": ""})
    saved = list(sys.path)
    folder, conf = unpack_code(code, {"topology.code.python.paths": ["src", "topologies"],
                                      "topology.multilang.resources.dir": "src"})
    try:
        assert sys.path[:3] == [str(folder / "src"), str(folder / "topologies"), str(folder)]
        assert (folder / "src" / "bolts.py").read_text() == "X = 1\n"
        assert conf["topology.multilang.resources.dir"] == str(folder / "src")
    finally:
        sys.path[:] = saved
        shutil.rmtree(folder)


def test_a_code_zip_with_a_member_outside_its_folder_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _zip(tmp_path / "bad.zip", {"../escape.py": ""})
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the refused zip's empty folder goes there
    tempfile.tempdir = None
    try:
        with pytest.raises(ValueError, match="outside"):
            unpack_code(code, {})
    finally:
        tempfile.tempdir = None


def test_executors_listen_on_the_host_s_own_address(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = ShareSettings("t", {}, {"storm.local.hostname": "submitter"}, "k",
                             ("d", 1), ())
    monkeypatch.setenv("SPARK_LOCAL_IP", "10.1.2.3")
    assert share_conf(settings)["storm.local.hostname"] == "10.1.2.3"
    assert share_conf(settings)["topology.executor.log.dir"] == str(
        Path.cwd() / "sparkstorm-logs"), "beside the Spark executor's own logs"
    local = ShareSettings("t", {}, {}, "k", ("d", 1), (), local=True)
    assert share_conf(local)["storm.local.hostname"] == "127.0.0.1"
    assert "topology.executor.log.dir" not in share_conf(local)


def test_shares_deal_each_component_s_executors_round_robin() -> None:
    plan = ExecutionPlan(Relay.topology_spec, {"topology.workers": 2})
    assert plan_shares(plan, 2) == [{0, 1, 3}, {2, 4}]
    assert plan_shares(plan, 1) == [{0, 1, 2, 3, 4}]
    assert plan_shares(plan, 3) == [{0, 1, 3}, {2, 4}, set()], "more shares than executors"


def test_link_messages_round_trip_and_a_stranger_frame_is_refused() -> None:
    report = ShareReport(0, "r", "10.0.0.2", {3: ("/tmp/e3.sock", "10.0.0.2", 4100, 77)},
                         "/env/bin/python", "/env/lib/sparkstorm")
    assert decode(encode(report)) == report
    assert decode(encode(DriverAnswer(stop=True))) == DriverAnswer(stop=True)
    for stranger in (b"{}", b"not json", b'{"type": "nope"}', b'{"type": "beat"}'):
        with pytest.raises(EngineError) as caught:
            decode(stranger)
        assert caught.value.code == "HOSTING_LINK_BAD_MESSAGE"
