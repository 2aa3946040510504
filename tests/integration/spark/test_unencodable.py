"""Issue 14 §1 on real Spark: a value the wire cannot encode fails only its own tuple.

Before the fix the executor's reply failed to encode, its connection dropped, and the whole
window replayed forever: no id acked, no error shown, a bolt re-running its input hundreds
of times.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from sparkstorm import Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    NoReplaySpout,
    PoisonSpout,
    RecordingBolt,
    SetEmittingBolt,
    read_events,
)

COUNT = 60


def _events(directory: Path, component: str, event: str) -> Counter[int]:
    return Counter(e["n"] for e in read_events(directory, component) if e["event"] == event)


def _settled(directory: Path) -> bool:
    done = _events(directory, "numbers", "ack") + _events(directory, "numbers", "fail")
    return len(done) == COUNT


def _refused(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The spout's failure reasons for refused values, once they cover every poison id."""
    reasons = summary["components"]["numbers"]["failure_reasons"]
    refused = [r for r in reasons if "TUPLE_VALUE_UNENCODABLE" in r["reason"]]
    return refused if sum(r["count"] for r in refused) == COUNT // 10 else []


class PoisonTopology(Topology):
    numbers = PoisonSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


def test_a_spout_value_the_wire_cannot_encode_fails_only_its_tuple(
        cluster: LocalCluster, tmp_path: Path) -> None:
    runner = cluster.submit_topology("poison", PoisonTopology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT})
    wait_for(lambda: _settled(tmp_path), timeout=90, message="every id acked or failed")
    errors = wait_for(lambda: runner.stats.summary()["last_errors"].get("numbers"),
                      timeout=30, message="error reported")
    # the spout's fails reach the statistics with the window after they happened
    reasons = wait_for(lambda: _refused(runner.stats.summary()), timeout=30,
                       message="the refused tuples counted by reason")
    cluster.kill_topology("poison")

    poison = {n for n in range(COUNT) if n % 10 == 0}
    assert _events(tmp_path, "numbers", "ack") == Counter(set(range(COUNT)) - poison)
    assert _events(tmp_path, "numbers", "fail") == Counter(poison)
    sink = Counter(e["values"][0] for e in read_events(tmp_path, "sink") if e["event"] == "tuple")
    assert sink == Counter(set(range(COUNT)) - poison), "the rest was delivered once"
    assert "[TUPLE_VALUE_UNENCODABLE] component 'numbers'" in errors["error"]
    assert "field 'key'" in errors["error"]
    assert {r["cause"] for r in reasons} == {"error"}
    # grouped by kind (numbers folded: "UTF-<n>"), each with its latest text as example
    examples = " ".join(r["example"] for r in reasons)
    for kind in ("is a set", "UTF-8 cannot encode", "nested too deep"):
        assert kind in examples


class SetBoltTopology(Topology):
    numbers = NoReplaySpout.spec()
    setter = SetEmittingBolt.spec(inputs=[numbers])
    sink = RecordingBolt.spec(inputs=[setter])


def test_a_bolt_emitting_a_set_runs_each_input_once_and_its_tree_fails(
        cluster: LocalCluster, tmp_path: Path) -> None:
    runner = cluster.submit_topology("setbolt", SetBoltTopology, conf={
        "test.dir": str(tmp_path), "test.count": COUNT})
    wait_for(lambda: _settled(tmp_path), timeout=90, message="every id acked or failed")
    errors = wait_for(lambda: runner.stats.summary()["last_errors"].get("setter"),
                      timeout=30, message="error reported")
    cluster.kill_topology("setbolt")

    poison = {n for n in range(COUNT) if n % 10 == 3}
    assert _events(tmp_path, "setter", "tuple") == Counter(range(COUNT)), \
        "each input ran exactly once"
    assert _events(tmp_path, "numbers", "fail") == Counter(poison)
    assert _events(tmp_path, "numbers", "ack") == Counter(set(range(COUNT)) - poison)
    assert "field 'key' is a set" in errors["error"]
    assert runner.stats.restarts == 0, "a refused value is not a crash"
