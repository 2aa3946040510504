"""The engine's per-window messages survive the wire, and their consumers read them right."""

from __future__ import annotations

from sparkstorm.engine.driver.window_counts import window_counters
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.failures import FAIL_ERROR, FAIL_TIMEOUT, REASON_LIMIT, Failure
from sparkstorm.engine.wire.frames import pack, unpack
from sparkstorm.engine.wire.messages import ComponentError, SpoutControl, WindowMeta
from sparkstorm.engine.wire.stats import ComponentCounters
from tests.unit.engine.helpers import pipeline

ROOT = 2**63 + 5  # roots are 64-bit: the largest must survive msgpack's map keys


def test_spout_control_round_trip_keeps_every_field() -> None:
    control = SpoutControl(ack=[1, ROOT], fail=[9], fail_reasons={9: Failure("error", "x")},
                           reset=[4], active=False, fail_all=True, limit=123,
                           pending=456, ended=17)
    decoded = SpoutControl.from_wire(unpack(pack(control.to_wire())))
    assert decoded == control
    assert isinstance(decoded.fail_reasons[9], Failure)


def test_window_meta_round_trip_keeps_counters_and_errors() -> None:
    stats = ComponentCounters(
        emitted={"default": 3}, transferred={"default": 6}, executed={"s:default": 2},
        acked={"default": 1}, failed={"side": 2}, busy_ms=1.5, complete_count=1,
        complete_total_ms=7.0, complete_values=[7.0], timed_out=1,
        fail_causes={(FAIL_TIMEOUT, "late"): 1}, execute_ms={"s:default": 0.5},
        process_ms={"s:default": 0.25}, complete_ms={"default": 7.0},
        metrics={"3": {"kafkaOffset": {"t/partition_0": {"spoutLag": 4, "latestOffset": None}}}})
    error = ComponentError("split", 3, "Traceback ...", 1700000000.5)
    meta = WindowMeta(4, "split", xor={ROOT: 2**64 - 1}, inits={ROOT: 2},
                      failed={ROOT: Failure(FAIL_ERROR, "boom")}, resets=[ROOT], stats=stats,
                      errors=[error])
    decoded = WindowMeta.decode(meta.encode())
    assert decoded == meta
    assert decoded.failed[ROOT].cause == FAIL_ERROR
    assert decoded.errors[0].task == 3


def test_texts_from_user_data_cannot_break_the_meta() -> None:
    """A lone surrogate in an exception message or fail reason is spelled out, not fatal."""
    error = ComponentError.now("split", 1, "ValueError: bad \udcff")
    why = Failure.of(FAIL_ERROR, "split: \udcff" + "x" * 1000)
    meta = WindowMeta(0, "split", failed={5: why}, errors=[error])
    decoded = WindowMeta.decode(meta.encode())
    assert decoded.errors[0].error == "ValueError: bad \\udcff"
    assert decoded.failed[5].reason.startswith("split: \\udcff")
    assert len(why.reason) <= REASON_LIMIT + len("\\udcff")


def test_component_error_wire_form_is_what_reporters_read() -> None:
    error = ComponentError("count", None, "cannot start", 12.0)
    assert error.to_wire() == {"component": "count", "task": None, "error": "cannot start",
                               "time": 12.0}
    assert ComponentError.from_wire(error.to_wire()) == error


def test_the_spout_applies_control_and_counts_failures_by_their_reason() -> None:
    plan = ExecutionPlan(pipeline(), {"topology.acker.executors": 1})
    gid = next(e.gid for e in plan.executors if e.component == "sentences")
    host = SpoutExecutor(plan, gid, "t")
    try:
        collector = host.collectors[plan.executors[gid].tasks[0]]
        roots = []
        for msg_id in ("a", "b", "c"):
            before = set(collector.pending_roots)
            collector.emit(["x"], None, None, None, False, msg_id)
            (root,) = set(collector.pending_roots) - before
            roots.append(root)
        control = SpoutControl(ack=[roots[0]], fail=[roots[1], roots[2]],
                               fail_reasons={roots[1]: Failure(FAIL_ERROR, "split: boom")},
                               active=False)
        host.run_window(SpoutControl.from_wire(unpack(pack(control.to_wire()))))
        stats = host.take_stats()
        assert not host.active
        host.run_window(SpoutControl(fail_all=True))  # nothing left in flight: no change
        assert host.take_stats().failed == {}
    finally:
        host.close()
    assert stats.acked == {"default": 1}
    assert stats.failed == {"default": 2}
    assert stats.fail_causes == {(FAIL_ERROR, "split: boom"): 1,
                                 ("explicit", "failed (reason not reported)"): 1}
    assert collector.pending_roots == {}


def test_the_driver_adds_metas_per_component_and_executor() -> None:
    metas = [
        WindowMeta(1, "split", stats=ComponentCounters(executed={"s:default": 2},
                                                       complete_values=[1.0])),
        WindowMeta(2, "split", stats=ComponentCounters(executed={"s:default": 3}),
                   errors=[ComponentError("split", 7, "boom", 1.0)]),
        WindowMeta(3, "count", stats=ComponentCounters(acked={"split:default": 4})),
    ]
    components, executors = window_counters(WindowMeta.decode(m.encode()) for m in metas)
    assert components["split"].executed == {"s:default": 5}
    assert components["split"].errors == 1
    assert components["count"].acked == {"split:default": 4}
    assert executors[1].errors == 0 and executors[2].errors == 1
    assert executors[2].executed == {"s:default": 3}
