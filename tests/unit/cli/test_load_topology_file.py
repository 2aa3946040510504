"""``sparkstorm run`` / ``submit`` load a topology file: every way that goes wrong has a code."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from sparkstorm.cli.topology_file import load_topology_file
from sparkstorm.errors import TopologyError

COMPONENTS = (
    "from sparkstorm import Bolt, Spout, Topology\n"
    "class S(Spout):\n    outputs = ['a']\n"
    "class B(Bolt):\n    outputs = ['b']\n"
)
ONE = "class T(Topology):\n    s = S.spec()\n    b = B.spec(inputs=[s])\n"
TWO = ONE + "class U(Topology):\n    s = S.spec()\n"


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / f"topo_{uuid.uuid4().hex}.py"  # a fresh module name per test
    path.write_text(text)
    return str(path)


def _code(path: str, class_name: str | None = None) -> str:
    with pytest.raises(TopologyError) as caught:
        load_topology_file(path, class_name)
    return caught.value.code


def test_the_only_topology_of_a_file_is_found(tmp_path: Path) -> None:
    assert load_topology_file(_file(tmp_path, COMPONENTS + ONE), None).__name__ == "T"


def test_several_topologies_need_a_name(tmp_path: Path) -> None:
    path = _file(tmp_path, COMPONENTS + TWO)
    assert _code(path) == "AMBIGUOUS_TOPOLOGY"
    assert load_topology_file(path, "U").__name__ == "U"
    assert _code(path, "V") == "NO_TOPOLOGY_IN_FILE"


def test_a_file_without_a_topology(tmp_path: Path) -> None:
    assert _code(_file(tmp_path, COMPONENTS)) == "NO_TOPOLOGY_IN_FILE"


def test_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = _file(tmp_path, COMPONENTS + "class T(Topology:\n")
    with pytest.raises(TopologyError) as caught:
        load_topology_file(path, None)
    assert caught.value.code == "TOPOLOGY_FILE_SYNTAX_ERROR"
    assert f"{path}:6" in str(caught.value)


def test_an_import_error_is_reported_not_a_traceback(tmp_path: Path) -> None:
    path = _file(tmp_path, "import not_a_module_anywhere\n" + COMPONENTS + ONE)
    with pytest.raises(TopologyError) as caught:
        load_topology_file(path, None)
    assert caught.value.code == "TOPOLOGY_FILE_IMPORT_FAILED"
    assert "ModuleNotFoundError" in str(caught.value) and f"{path}:1" in str(caught.value)


def test_a_basic_bolt_that_turns_acking_off_keeps_its_own_code(tmp_path: Path) -> None:
    text = ("from sparkstorm import BasicBolt\n"
            "class Quiet(BasicBolt):\n    auto_ack = False\n")
    assert _code(_file(tmp_path, text)) == "BASIC_BOLT_AUTO_DISABLED"
