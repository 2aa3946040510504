"""sparkstorm.testing's BoltHarness and SpoutHarness.

The engine's loop and collector rules as a user's unit test sees them.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm import Bolt, FailedException, ReportedFailedException, Spout, Stream
from sparkstorm.errors import TopologyError
from sparkstorm.testing import BoltHarness, Emit, Fail, SpoutHarness


class Manual(Bolt):
    """Acks by hand on a tick, anchors to everything it holds, resets timeouts."""

    auto_ack = False
    outputs = ["n", Stream(["n"], name="direct", direct=True)]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.held: list[Any] = []
        self.limit = int(storm_conf["test.limit"])
        self.direct_to: int | None = None  # set by a test

    def process(self, tup: Any) -> None:
        if tup.values.n < 0:
            msg = f"negative {tup.values.n}"
            raise ValueError(msg)
        self.held.append(tup)
        self.reset_timeout(tup)
        if tup.values.n > self.limit:
            self.fail(tup, "over the limit")

    def process_tick(self, tup: Any) -> None:
        self.emit([len(self.held)], anchors=self.held)
        if self.direct_to is not None:
            self.emit([0], stream="direct", direct_task=self.direct_to)
        for held in self.held:
            self.ack(held)
        self.logger.info("flushed %d", len(self.held))
        self.held = []


def test_a_bolt_that_acks_later_anchors_to_what_it_holds() -> None:
    harness = BoltHarness(Manual, conf={"test.limit": 10, "topology.tick.tuple.freq.secs": 5},
                          inputs={"numbers": ["n"]})
    one, two = harness.process([1]), harness.process([2])
    assert one.acked == two.acked == [] and one.reset == [one.input]
    over = harness.process([11])
    assert over.failed == [Fail(over.input, "over the limit", "explicit")]
    tick = harness.tick()
    assert tick.input is not None and tick.input.values == (5,), "the engine's tick values"
    held = (one.input, two.input, over.input)
    assert tick.emits[0] == Emit("default", [3], held, tasks=tuple(harness.target_tasks))
    assert tick.acked == [one.input, two.input], "the failed one is not acked again"
    assert tick.logs == ["INFO flushed 3"]


def test_direct_emits_name_a_stand_in_task_or_fail_with_the_engine_s_code() -> None:
    harness = BoltHarness(Manual, conf={"test.limit": 10}, target_tasks=2)
    harness.instance.direct_to = harness.target_tasks[1]
    assert harness.tick().emits[1] == Emit("direct", [0], direct_task=harness.target_tasks[1],
                                           tasks=(harness.target_tasks[1],))
    harness.instance.direct_to = harness.task  # not a subscriber of its own stream
    with pytest.raises(TopologyError) as info:
        harness.tick()
    assert info.value.code == "DIRECT_EMIT_TO_NON_SUBSCRIBER"


def test_a_raising_process_is_auto_failed_with_its_error_and_re_raised() -> None:
    harness = BoltHarness(Manual, conf={"test.limit": 10}, inputs={"numbers": ["n"]})
    with pytest.raises(ValueError, match="negative -1"):
        harness.process([-1])
    assert harness.last.failed == [Fail(harness.last.input, "ValueError: negative -1",
                                        "error")]


class Refusing(Bolt):
    """Raises Storm's FailedException for odd numbers (reported for negative ones)."""

    outputs = ["n"]

    def process(self, tup: Any) -> None:
        if tup.values.n < 0:
            msg = f"negative {tup.values.n}"
            raise ReportedFailedException(msg)
        if tup.values.n % 2:
            msg = f"odd {tup.values.n}"
            raise FailedException(msg)
        self.emit([tup.values.n])


def test_a_failed_exception_fails_the_tuple_without_raising() -> None:
    harness = BoltHarness(Refusing, inputs={"numbers": ["n"]})
    odd = harness.process([3])
    assert odd.failed == [Fail(odd.input, "FailedException: odd 3", "explicit")]
    assert not odd.acked and not odd.errors
    negative = harness.process([-2])
    assert negative.failed == [Fail(negative.input, "ReportedFailedException: negative -2",
                                    "explicit")]
    assert len(negative.errors) == 1 and "negative -2" in negative.errors[0]
    even = harness.process([4])
    assert even.acked == [even.input] and [e.values for e in even.emits] == [[4]]


def test_emits_are_checked_against_the_declared_fields() -> None:
    class Wrong(Bolt):
        outputs = ["a", "b"]

        def process(self, tup: Any) -> None:
            self.emit([1])

    with pytest.raises(TopologyError) as info:
        BoltHarness(Wrong).process(["x"])
    assert info.value.code == "TUPLE_ARITY_MISMATCH"


class Numbers(Spout):
    outputs = ["n"]

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        self.n, self.active, self.acked, self.failed = 0, False, [], []

    def activate(self) -> None:
        self.active = True

    def next_tuple(self) -> None:
        self.n += 1
        self.emit([self.n], tup_id=self.n if self.n % 2 else None)

    def ack(self, tup_id: Any) -> None:
        self.acked.append(tup_id)

    def fail(self, tup_id: Any) -> None:
        self.failed.append(tup_id)


def test_a_spout_s_tracked_emits_stay_pending_until_acked_or_failed() -> None:
    harness = SpoutHarness(Numbers)
    assert harness.instance.active
    emits = [e for _ in range(4) for e in harness.next_tuple().emits]
    assert [(e.values, e.tup_id) for e in emits] == [([1], 1), ([2], None), ([3], 3),
                                                     ([4], None)]
    assert harness.pending == [1, 3]
    harness.ack(3)
    harness.fail(1)
    assert harness.pending == [] and harness.instance.acked == [3]
    assert harness.instance.failed == [1]


def test_the_wrong_harness_for_a_component_is_refused() -> None:
    with pytest.raises(TopologyError) as info:
        SpoutHarness(Manual)
    assert info.value.code == "HARNESS_WRONG_KIND"
    with pytest.raises(TopologyError) as info:
        BoltHarness(Numbers)
    assert info.value.code == "HARNESS_WRONG_KIND"
