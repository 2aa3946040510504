"""Executor processes start with the lean malloc settings unless the environment has its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.executor.process_memory import LEAN_MALLOC
from sparkstorm.engine.plan.execution import ExecutionPlan
from tests.unit.engine.helpers import pipeline


def test_executors_get_the_lean_malloc_settings(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")  # an operator's tuning wins
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")  # replaced by the executors' own
    pool = ExecutorPool(ExecutionPlan(pipeline(), {}), "t", tmp_path)
    env = pool._environment()
    assert env["MALLOC_MMAP_THRESHOLD_"] == LEAN_MALLOC["MALLOC_MMAP_THRESHOLD_"]
    assert env["MALLOC_ARENA_MAX"] == "8"
    assert env["PYTHONPATH"] == ":".join(pool.sys_path)
