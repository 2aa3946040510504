"""``topology.executor.python``: executors under another interpreter, and a wrong one refused.

The interpreters are real: virtual environments of this test's Python made in the test's
temporary folder, one with sparkstorm's dependencies reachable and one without.
"""

from __future__ import annotations

import site
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import sparkstorm
from sparkstorm import Topology
from sparkstorm.config import load_config
from sparkstorm.engine.executor.interpreter import executor_sys_path
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import call_executor
from sparkstorm.engine.wire.frames import pack
from sparkstorm.engine.wire.protocol import WindowRequest
from sparkstorm.errors import EngineError
from tests.integration.spark.components import NumberSpout, RecordingBolt, read_events


class Pair(Topology):
    numbers = NumberSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


def make_pool(tmp_path: Path, python: str) -> ExecutorPool:
    conf = load_config(topology={"test.dir": str(tmp_path), "test.count": 0,
                                 "topology.name": "pair", "topology.executor.python": python})
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    return ExecutorPool(ExecutionPlan(Pair.topology_spec, conf), "pair", workdir)


def make_venv(folder: Path, *, with_our_packages: bool) -> str:
    """A venv of this Python; with our site-packages on its path (a .pth) when asked."""
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    if with_our_packages:
        # the venv's own site-packages folder, named by the interpreter itself
        purelib = Path(sysconfig.get_paths(vars={"base": str(folder),
                                                 "platbase": str(folder)})["purelib"])
        (purelib / "our-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(python)


def test_executors_run_under_the_configured_interpreter(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "other-python", with_our_packages=True)
    pool = make_pool(tmp_path, python)
    try:
        pool.start()
        plan = pool.plan
        sink_task = plan.component_tasks["sink"][0]
        gid = plan.task_executor[sink_task]
        command = Path(f"/proc/{pool.pids()[gid]}/cmdline").read_bytes().split(b"\0")
        assert command[0].decode() == python
        batch = pack([[sink_task, plan.component_tasks["numbers"][0], "default", [[1, "k1"]],
                       [None], [None]]])
        call_executor(pool.endpoints[gid], pool.token,
                      WindowRequest(1, rows=[batch]), 30)
        received = [e["values"] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"]
        assert received == [[1, "k1"]]
    finally:
        pool.stop()
    assert all(p.poll() is not None for p in pool.processes.values())


def test_a_missing_interpreter_is_refused_before_any_executor_starts(tmp_path: Path) -> None:
    pool = make_pool(tmp_path, str(tmp_path / "no-such-python"))
    with pytest.raises(EngineError) as caught:
        pool.start()
    assert caught.value.code == "EXECUTOR_PYTHON_NOT_FOUND"
    assert "topology.executor.python" in str(caught.value)
    assert pool.processes == {}


def test_an_interpreter_without_our_packages_is_refused(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "bare-python", with_our_packages=False)
    pool = make_pool(tmp_path, python)
    with pytest.raises(EngineError) as caught:
        pool.start()
    assert caught.value.code == "EXECUTOR_PYTHON_UNUSABLE"
    assert "No module named" in str(caught.value), "the interpreter's own error is shown"
    assert pool.processes == {}


def test_another_interpreter_gets_our_source_folders_but_not_our_installation() -> None:
    ours = executor_sys_path(sys.executable)
    assert ours == [p for p in sys.path if p]
    other = executor_sys_path("/usr/bin/some-other-python")
    source = str(Path(sparkstorm.__file__).parents[1])  # where sparkstorm is imported from
    assert source in other
    for installed in (sysconfig.get_paths()["stdlib"], *site.getsitepackages()):
        assert installed not in other
