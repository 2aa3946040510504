"""Every grouping routes as Storm's does, through real executor processes and Spark."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pytest

from sparkstorm import Grouping, Topology
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import DirectBolt, NumberSpout, RecordingBolt, read_events

COUNT = 200


class Groupings(Topology):
    numbers = NumberSpout.spec()
    shuffle = RecordingBolt.spec(inputs=[numbers], par=2, num_tasks=4)
    fields = RecordingBolt.spec(inputs={numbers: Grouping.fields("key")}, par=2, num_tasks=3)
    all_ = RecordingBolt.spec(name="all", inputs={numbers: Grouping.ALL}, par=2, num_tasks=3)
    global_ = RecordingBolt.spec(name="global", inputs={numbers: Grouping.GLOBAL}, par=2)
    none = RecordingBolt.spec(inputs={numbers: Grouping.NONE}, par=2)
    local = RecordingBolt.spec(inputs={numbers: Grouping.LOCAL_OR_SHUFFLE}, par=2)
    partial = RecordingBolt.spec(inputs={numbers: Grouping.partial_key("key")}, par=2,
                                 num_tasks=4)
    director = DirectBolt.spec(inputs=[numbers])
    direct_sink = RecordingBolt.spec(inputs={director["direct_out"]: Grouping.DIRECT}, par=2,
                                     num_tasks=3)
    everyone = RecordingBolt.spec(inputs={director["everyone"]: Grouping.ALL}, par=2,
                                  num_tasks=2)


@pytest.fixture(scope="module")
def routed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the topology once; per component: task -> list of received values."""
    directory = tmp_path_factory.mktemp("groupings")
    from tests.integration.spark.conftest import TEST_CONF

    with LocalCluster(conf=dict(TEST_CONF), spark=spark) as cluster:
        runner = cluster.submit_topology("groupings", Groupings,
                                         conf={"test.dir": str(directory), "test.count": COUNT})
        wait_for(lambda: sum(e["event"] == "ack" for e in read_events(directory, "numbers"))
                 == COUNT, timeout=90, message="all acked")
        tasks = runner.plan.component_tasks
        cluster.kill_topology("groupings")
    received: dict[str, dict[int, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for event in read_events(directory):
        if event["event"] == "tuple":
            component = runner.plan.task_component[event["task"]]
            received[component][event["task"]].append(event["values"])
    return {"received": received, "tasks": tasks}


def _numbers(per_task: dict[int, list[Any]]) -> Counter[int]:
    return Counter(values[0] for values in sum(per_task.values(), []))


def test_shuffle_delivers_each_tuple_once_evenly(routed: dict[str, Any]) -> None:
    per_task = routed["received"]["shuffle"]
    assert _numbers(per_task) == dict.fromkeys(range(COUNT), 1)
    sizes = [len(per_task[t]) for t in routed["tasks"]["shuffle"]]
    assert max(sizes) - min(sizes) <= 1, f"round robin must balance exactly: {sizes}"


def test_fields_sends_a_key_to_one_task(routed: dict[str, Any]) -> None:
    per_task = routed["received"]["fields"]
    assert _numbers(per_task) == dict.fromkeys(range(COUNT), 1)
    owners: dict[str, set[int]] = defaultdict(set)
    for task, values in per_task.items():
        for _, key in values:
            owners[key].add(task)
    assert all(len(tasks) == 1 for tasks in owners.values()), owners
    assert len(set().union(*owners.values())) > 1, "7 keys over 3 tasks must use several"


def test_all_sends_every_tuple_to_every_task(routed: dict[str, Any]) -> None:
    per_task = routed["received"]["all"]
    assert sorted(per_task) == routed["tasks"]["all"]
    for task in routed["tasks"]["all"]:
        assert sorted(v[0] for v in per_task[task]) == list(range(COUNT))


def test_global_sends_everything_to_the_lowest_task(routed: dict[str, Any]) -> None:
    per_task = routed["received"]["global"]
    assert list(per_task) == [min(routed["tasks"]["global"])]
    assert _numbers(per_task) == dict.fromkeys(range(COUNT), 1)


@pytest.mark.parametrize("component", ["none", "local"])
def test_none_and_local_or_shuffle_deliver_each_tuple_once(routed: dict[str, Any],
                                                           component: str) -> None:
    per_task = routed["received"][component]
    assert _numbers(per_task) == dict.fromkeys(range(COUNT), 1)
    assert len(per_task) == 2, "spread over both tasks"


def test_partial_key_uses_at_most_two_tasks_per_key(routed: dict[str, Any]) -> None:
    per_task = routed["received"]["partial"]
    assert _numbers(per_task) == dict.fromkeys(range(COUNT), 1)
    owners: dict[str, set[int]] = defaultdict(set)
    for task, values in per_task.items():
        for _, key in values:
            owners[key].add(task)
    assert all(1 <= len(tasks) <= 2 for tasks in owners.values()), owners


def test_direct_reaches_exactly_the_named_task(routed: dict[str, Any]) -> None:
    per_task = routed["received"]["direct_sink"]
    assert sum(len(v) for v in per_task.values()) == COUNT
    for task, values in per_task.items():
        assert all(target == task for _, target in values)
    assert len(per_task) == 3


def test_named_stream_with_all_grouping(routed: dict[str, Any]) -> None:
    per_task = routed["received"]["everyone"]
    for task in routed["tasks"]["everyone"]:
        assert sorted(v[0] for v in per_task[task]) == list(range(COUNT))
