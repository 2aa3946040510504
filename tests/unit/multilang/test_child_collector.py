"""Every collector call a Python component makes when it runs as a multilang child.

End to end: the component in ``python -m sparkstorm.multilang`` -> real pipes -> ShellBolt or
ShellSpout -> the engine's collector, hosted by ``sparkstorm.testing``'s harness.
"""

from __future__ import annotations

import logging
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import replace

import pytest

from sparkstorm import ShellSpout as TopLevelShellSpout
from sparkstorm.multilang import ShellBolt, ShellSpout, python_command
from sparkstorm.multilang.errors import MultilangError
from sparkstorm.testing import BoltHarness, Emit, Fail, SpoutHarness
from tests.unit.multilang.harness import PROBES
from tests.unit.multilang.probes.py_components import CallsBolt, CallsSpout, ReportingSpout

SHELL_LOG = "sparkstorm.multilang.shell"


def _command(name: str, serializer: str) -> list[str]:
    return [*python_command(f"py_components:{name}", serializer=serializer),
            "--path", str(PROBES)]


@pytest.fixture(params=["json", "msgpack"])
def calls(request: pytest.FixtureRequest) -> Iterator[BoltHarness]:
    spec = ShellBolt.spec(command=_command("CallsBolt", request.param),
                          serializer=request.param, outputs=CallsBolt.outputs)
    with BoltHarness(spec, name="calls", inputs={"src": ["action", "arg"]}, target_tasks=2,
                     conf={"topology.subprocess.timeout.secs": 10}) as harness:
        yield harness


def test_ack_and_fail_with_and_without_a_reason(calls: BoltHarness) -> None:
    acked = calls.process(["ack", 0])
    assert acked.acked == [acked.input] and acked.failed == []
    failed = calls.process(["fail", 0])
    assert failed.failed == [Fail(failed.input, None, "explicit")] and failed.acked == []
    reasoned = calls.process(["fail_reason", 7])
    assert reasoned.failed == [Fail(reasoned.input, "bad input 7", "explicit")]
    assert reasoned.acked == [], "auto_ack leaves a failed tuple alone"


def _routed(harness: BoltHarness | SpoutHarness, emits: list[Emit]) -> list[Emit]:
    """``emits`` without their tasks.

    After checking each went to one stand-in task (a shuffle picks either).
    """
    assert all(len(e.tasks) == 1 and e.tasks[0] in harness.target_tasks for e in emits)
    return [replace(e, tasks=()) for e in emits]


def test_emits_anchored_unanchored_direct_and_with_task_ids(calls: BoltHarness) -> None:
    auto = calls.process(["emit_auto", "a"])
    assert _routed(calls, auto.emits) == [Emit("default", ["a"], (auto.input,))]
    anchored = calls.process(["emit_anchored", "b"])
    assert _routed(calls, anchored.emits) == [Emit("default", ["b"], (anchored.input,))]
    unanchored = calls.process(["emit_unanchored", "c"])
    assert _routed(calls, unanchored.emits) == [Emit("default", ["c"], ())]
    for target in calls.target_tasks:
        direct = calls.process(["emit_direct", target])
        assert direct.emits == [Emit("direct", [target], (direct.input,),
                                     direct_task=target, tasks=(target,))]
    ids = calls.process(["need_task_ids", "d"])
    assert [e.values for e in ids.emits] == [["d"], [list(ids.emits[0].tasks)]]
    assert [auto.acked, anchored.acked, unanchored.acked, ids.acked] == \
        [[auto.input], [anchored.input], [unanchored.input], [ids.input]]


def test_log_reset_timeout_and_ticks(calls: BoltHarness,
                                     caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=SHELL_LOG):
        calls.process(["log", 5])
    assert ("WARNING", "logged 5") in [(r.levelname, r.getMessage().split(": ", 1)[-1])
                                       for r in caplog.records if r.name.startswith(SHELL_LOG)]
    reset = calls.process(["reset_timeout", 0])
    assert reset.reset == [reset.input] and reset.acked == [reset.input]
    tick = calls.tick()
    assert [e.values for e in tick.emits] == [["tick"]] and tick.acked == [tick.input]


def test_a_raising_child_fails_its_tuple_with_the_error_then_exits(calls: BoltHarness) -> None:
    with pytest.raises(MultilangError) as info:
        calls.process(["raise", 3])
    assert info.value.code == "MULTILANG_SUBPROCESS_EXITED"
    raised = calls.last
    assert raised.failed == [Fail(raised.input, "ValueError: raised on 3", "error")]
    assert raised.errors == ["ValueError: raised on 3"]


def test_raise_exception_and_report_error_from_a_child_are_errors_it_survives(
        calls: BoltHarness) -> None:
    with_tuple = calls.process(["raise_exception", 3])
    assert len(with_tuple.errors) == 1, with_tuple.errors
    assert re.fullmatch(r"Python ValueError raised while processing Tuple\(id='-?\d+', "
                        r"component='src', stream='default', task=0, "
                        r"values=\['raise_exception', 3\]\)\nValueError: reported 3\n",
                        with_tuple.errors[0]), with_tuple.errors
    alone = calls.process(["raise_exception_alone", "k"])
    assert alone.errors == ["KeyError: 'k'\n"]
    reported = calls.process(["report_error", 9])
    assert reported.errors == ["report_error 9"]
    for result in (with_tuple, alone, reported):
        assert result.failed == [] and result.acked == [result.input], \
            "an error the component reports fails nothing; auto_ack acks the tuple"
    still = calls.process(["emit_auto", "after"])
    assert [e.values for e in still.emits] == [["after"]], "the child keeps running"


def test_shell_spout_takes_streamparse_command_and_script() -> None:
    """A ShellSpout takes streamparse's ``spec(command=..., script=...)``.

    The script's arguments, split as a shell splits them, follow the command.
    """
    script = (f"-m sparkstorm.multilang py_components:ReportingSpout --serializer json "
              f"--path {shlex.quote(str(PROBES))}")
    spec = TopLevelShellSpout.spec(command=sys.executable, script=script,
                                   outputs=ReportingSpout.outputs)
    assert spec.extra["command"] == [sys.executable, "-m", "sparkstorm.multilang",
                                     "py_components:ReportingSpout", "--serializer", "json",
                                     "--path", str(PROBES)]
    with SpoutHarness(spec, name="reporting", target_tasks=1) as harness:
        first = harness.next_tuple()
        assert [(e.values, e.tup_id) for e in first.emits] == [([1], 1)]
        assert first.errors == ["RuntimeError: spout trouble 1\n", "spout report 1"], \
            "raise_exception, then report_error, both reported and survived"
        harness.ack(1)
        second = harness.next_tuple()
        assert [(e.values, e.tup_id) for e in second.emits] == [([2], 2)]
        assert harness.pending == [2]


def test_spout_emits_tracked_untracked_direct_with_task_ids_and_gets_acks_and_fails(
        caplog: pytest.LogCaptureFixture) -> None:
    spec = ShellSpout.spec(command=_command("CallsSpout", "json"), outputs=CallsSpout.outputs)
    with SpoutHarness(spec, name="calls", target_tasks=2,
                      conf={"test.direct.task": 3}) as harness:
        assert 3 in harness.target_tasks, "the direct target the probe was configured with"
        emits = [e for _ in range(4) for e in harness.next_tuple().emits]
        assert _routed(harness, emits) == [
            Emit("default", [1], tup_id=1),
            Emit("default", [2]),
            Emit("direct", [3], tup_id=3, direct_task=3),
            Emit("default", [4], tup_id=4),
            Emit("default", [list(emits[3].tasks)]),
        ]
        assert emits[2].tasks == (3,)
        assert harness.pending == [1, 3, 4]
        with caplog.at_level(logging.INFO, logger=SHELL_LOG):
            harness.ack(1)
            harness.fail(3)
            harness.next_tuple()  # the child answers acks and fails on its next command
        assert harness.pending == [4, 5]
        logged = [r.getMessage() for r in caplog.records if r.name.startswith(SHELL_LOG)]
        assert any(m.endswith("acked 1") for m in logged)
        assert any(m.endswith("failed 3") for m in logged)
