"""Topologies that run as Spark applications of their own and register with Nimbus.

Registered as a submit is checked, listed with where they run, never (re)assigned to a
supervisor by the monitor, and driven through their heartbeat answers: deactivate, kill
(``shutdown`` once due) and ``rebalance -e`` (new counts, every executor on the one slot).
"""

from __future__ import annotations

import pytest

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.records import TopologyStatus
from sparkstorm.errors import SparkstormError
from tests.fakes import FakeClock
from tests.unit.cluster.nimbus.helpers import SPEC, api_client, register, submit

WHERE = {"host": "10.0.0.5", "rest_url": "http://10.0.0.5:4100", "ui_url": "",
         "ignored": "x"}


def _register(nimbus: Nimbus, name: str = "app") -> dict[str, str]:
    return nimbus.register_application(name, SPEC, {}, WHERE)


def test_an_application_is_listed_with_where_it_runs_and_its_one_slot(
        nimbus: Nimbus) -> None:
    ids = _register(nimbus)
    base = nimbus.storm(ids["topology_id"])
    assert base.status == TopologyStatus.ACTIVE and base.name == "app"
    assert base.application == {"host": "10.0.0.5", "rest_url": "http://10.0.0.5:4100"}
    assignment = nimbus.state.get_assignment(ids["topology_id"])
    assert assignment is not None
    assert list(assignment.worker_ids.values()) == [ids["worker_id"]]
    assert assignment.node_host == {"application:10.0.0.5": "10.0.0.5"}
    assert nimbus.topology_spec(ids["topology_id"])["components"][0]["name"] == "word"


@pytest.mark.parametrize(("name", "application", "code"), [
    ("a/b", WHERE, "INVALID_TOPOLOGY_NAME"),
    ("app", {"rest_url": "http://x"}, "BAD_REQUEST"),
])
def test_a_bad_registration_is_refused_and_writes_nothing(
        nimbus: Nimbus, name: str, application: dict[str, str], code: str) -> None:
    with pytest.raises(SparkstormError) as caught:
        nimbus.register_application(name, SPEC, {}, application)
    assert caught.value.code == code
    assert nimbus.storms() == {} and nimbus.stormdist.topology_ids() == []


def test_an_application_hosted_by_spark_is_registered(nimbus: Nimbus) -> None:
    """What a submit refuses (HOSTING_NEEDS_SPARK_SUBMIT) is what an application is."""
    ids = nimbus.register_application("app", SPEC, {"topology.executor.hosting": "spark"},
                                      WHERE)
    assert nimbus.topology_conf(ids["topology_id"])["topology.executor.hosting"] == "spark"


def test_a_name_in_use_is_refused(nimbus: Nimbus) -> None:
    _register(nimbus)
    with pytest.raises(NimbusError) as caught:
        _register(nimbus)
    assert caught.value.code == "TOPOLOGY_ALREADY_ALIVE"


def test_the_monitor_never_assigns_an_application_to_a_supervisor(
        nimbus: Nimbus, clock: FakeClock) -> None:
    register(nimbus.state, "s1", 6700)
    ids = _register(nimbus)
    before = nimbus.state.get_assignment(ids["topology_id"])
    clock.advance(3600)  # no heartbeat for an hour: a worker would have been moved
    nimbus.assigner.check_all()
    assert nimbus.state.get_assignment(ids["topology_id"]) == before


def test_deactivate_and_kill_reach_the_driver_in_its_heartbeat_answers(
        nimbus: Nimbus, clock: FakeClock) -> None:
    ids = _register(nimbus)
    beat = {"topology_id": ids["topology_id"], "stats": {}}
    assert nimbus.umbilical.heartbeat(ids["worker_id"], beat)["active"] is True
    nimbus.set_active(ids["topology_id"], False)
    assert nimbus.umbilical.heartbeat(ids["worker_id"], beat)["active"] is False
    nimbus.kill(ids["topology_id"], 5)
    assert nimbus.umbilical.heartbeat(ids["worker_id"], beat)["shutdown"] is False
    clock.advance(6)
    nimbus.assigner.check_all()
    assert nimbus.umbilical.heartbeat(ids["worker_id"], beat)["shutdown"] is True


def test_rebalance_e_keeps_every_executor_on_the_drivers_slot(
        nimbus: Nimbus, two_components: None) -> None:
    ids = _register(nimbus)
    slot = next(iter(nimbus.state.get_assignment(ids["topology_id"]).worker_ids))
    nimbus.rebalance(ids["topology_id"], 0, executors={"split": 4})
    assignment = nimbus.state.get_assignment(ids["topology_id"])
    assert assignment is not None and assignment.slots() == {slot}
    assert len(assignment.executor_slots) == 5, "1 spout + 4 split executors"
    answer = nimbus.umbilical.heartbeat(ids["worker_id"], {"topology_id": ids["topology_id"],
                                                           "stats": {}})
    assert answer["executor_counts"] == {"word": 1, "split": 4}
    assert answer["active"] is True


def test_an_applications_worker_count_cannot_be_rebalanced(nimbus: Nimbus) -> None:
    ids = _register(nimbus)
    with pytest.raises(NimbusError) as caught:
        nimbus.rebalance(ids["topology_id"], 0, num_workers=3)
    assert caught.value.code == "REBALANCE_INVALID" and "-e" in str(caught.value)
    assert nimbus.storm(ids["topology_id"]).status == TopologyStatus.ACTIVE


def test_the_topology_page_says_where_an_applications_executor_logs_are(
        nimbus: Nimbus) -> None:
    ids = nimbus.register_application("app", SPEC, {"topology.executor.log.dir": "/var/log/a"},
                                      {**WHERE, "spark_ui_url": "http://10.0.0.5:4040"})
    client = api_client(nimbus)
    page = client.get(f"/api/v1/topology/{ids['topology_id']}").json()
    where = page["application"]
    assert (where["host"], where["restUrl"], where["sparkUiUrl"]) == \
        ("10.0.0.5", "http://10.0.0.5:4100", "http://10.0.0.5:4040")
    assert where["executorLogDir"] == "/var/log/a"
    assert "/var/log/a/executor-<id>.log" in where["executorLogs"]
    supervised = submit(nimbus, "plain")
    assert client.get(f"/api/v1/topology/{supervised}").json()["application"] is None
