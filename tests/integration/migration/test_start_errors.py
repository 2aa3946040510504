"""A component that raises while it starts is reported with its own error, everywhere.

Under ``sparkstorm run`` the error names the component, its task, its exception and its log
file (not an engine ``KeyError`` of an executor that never registered).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.migration.test_moving_over import SPARK_FLAGS, sparkstorm

pytestmark = pytest.mark.spark

RAISING = '''
from sparkstorm.bolt import Bolt
from sparkstorm.spout import Spout
from sparkstorm.topology import Topology


class WordSpout(Spout):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.words = {}["missing-setting"]

    def next_tuple(self):
        pass


class Sink(Bolt):
    outputs = []

    def process(self, tup):
        pass


class Raising(Topology):
    words = WordSpout.spec()
    sink = Sink.spec(inputs=[words])
'''


def test_a_raising_initialize_is_reported_with_component_task_error_and_log(
        tmp_path: Path) -> None:
    (tmp_path / "raising.py").write_text(RAISING)
    result = sparkstorm(tmp_path, "run", "raising.py", "--time", "5", *SPARK_FLAGS)
    assert result.returncode != 0
    err = result.stderr
    assert "EXECUTOR_START_FAILED" in err or "failed to start" in err, err[-3000:]
    first = next(line for line in err.splitlines() if "failed to start" in line)
    assert "component 'words' task " in first, first
    assert "KeyError: 'missing-setting'" in first, "the component's own error, first"
    assert "executor-0.log" in first, "and the log file to read"
    assert "self.words = {}[\"missing-setting\"]" in err or "missing-setting" in err
    assert "KeyError: 1" not in err, "no engine error in its place"
