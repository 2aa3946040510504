"""The hosting link between a share's executors and the driver, without Spark.

A real :class:`ShareLink` runs a share's real executor processes (``ExecutorHostRunner``)
and talks to the driver side's real listener (:class:`SparkHosting`) over loopback, as a
hosting task does inside its Spark task: it reports where its executors answer, heartbeats,
reports again when one restarted, and stops its executors when the driver says stop, when
its link closes, or when a newer run of its share reported.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparkstorm import Topology
from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner
from sparkstorm.config import load_config
from sparkstorm.engine import (
    Endpoint,
    ExecutionPlan,
    plan_tag,
    recv_frame,
    send_frame,
    with_counts,
)
from sparkstorm.engine.spark.stage import ping
from sparkstorm.spark_app.hosting import DriverSide, SparkHosting
from sparkstorm.spark_app.link import DriverAnswer, ShareBeat, ShareReport, receive, send
from sparkstorm.spark_app.share import ShareLink, ShareSettings
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, PassBolt, RecordingBolt

pytestmark = pytest.mark.timeout(120)


class Relay(Topology):
    numbers = NumberSpout.spec()
    relay = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[relay], par=2)


Reported = dict[int, tuple[Endpoint, int]]


@pytest.fixture
def conf(tmp_path: Path) -> dict[str, Any]:
    return load_config(topology={
        "test.dir": str(tmp_path), "test.count": 0, "topology.name": "relay",
        "topology.workers": 2, "topology.executor.hosting.heartbeat.secs": 0.1,
        "topology.executor.hosting.timeout.secs": 3, "spark.master": "local[2]"})


class Driver:
    """The driver's side: a SparkHosting whose listener runs, and what it was told."""

    def __init__(self, conf: dict[str, Any]) -> None:
        self.reports: list[Reported] = []
        self.tags: list[dict[int, str] | None] = []
        self.plan = ExecutionPlan(Relay.topology_spec, conf)
        """What the driver runs; a test switches it as a rebalance -e would."""
        self.lost: list[str] = []
        self.hosting = SparkHosting("relay", Relay.topology_spec, conf, "token-1",
                                    DriverSide(self._reported, plan=lambda: self.plan,
                                               on_share_lost=self.lost.append))
        self.address = self.hosting.listen(local=True)
        self.settings = self.hosting.settings(self.address, local=True)

    def _reported(self, reported: Reported, tags: dict[int, str] | None) -> None:
        self.reports.append(reported)
        self.tags.append(tags)


class Share:
    """One hosting task's work (what ``host_share`` runs), on a thread."""

    def __init__(self, driver: Driver, index: int, conf: dict[str, Any],
                 settings: ShareSettings | None = None) -> None:
        settings = settings or driver.settings
        conf = {**conf, "storm.local.hostname": "127.0.0.1"}
        self.runner = ExecutorHostRunner("relay", Relay.topology_spec, conf,
                                         set(settings.shares[index]), settings.token)
        self.link = ShareLink(settings, index, conf, self.runner)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.link.run()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            self.error = exc

    def pids(self) -> list[int]:
        return list(self.runner.pool.pids().values())


@pytest.fixture
def driver(conf: dict[str, Any]) -> Iterator[Driver]:
    made = Driver(conf)
    yield made
    made.hosting.stop(timeout=0)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_shares_report_their_executors_and_stop_when_the_driver_says_so(
        driver: Driver, conf: dict[str, Any]) -> None:
    assert [sorted(s) for s in driver.hosting.shares] == [[0, 1, 3], [2, 4]]
    shares = [Share(driver, 0, conf), Share(driver, 1, conf)]
    wait_for(driver.hosting.reported, 60, message="both shares reported")
    reported: Reported = {}
    for report in driver.reports:
        reported.update(report)
    assert sorted(reported) == [0, 1, 2, 3, 4]
    for gid, (endpoint, pid) in reported.items():
        assert ping(endpoint, "token-1", 5.0), f"executor {gid} answers where reported"
        assert pid in shares[0].pids() + shares[1].pids()
    assert {r.share for r in driver.hosting.reports} == {0, 1}
    assert all(r.python and r.sparkstorm for r in driver.hosting.reports)
    pids = shares[0].pids() + shares[1].pids()

    driver.hosting.stop(timeout=10)  # no job: the shares hear stop at their next beat

    for share in shares:
        share.thread.join(20)
        assert not share.thread.is_alive() and share.error is None
        assert share.link.stopped_by == "driver: stop"
    assert all(_gone(pid) for pid in pids), "every executor process exited"


def test_a_restarted_executor_is_reported_again(driver: Driver, conf: dict[str, Any]) -> None:
    share = Share(driver, 1, conf)
    wait_for(lambda: len(driver.reports) == 1, 60, message="the share reported")
    (gid, (_, pid)), *_ = sorted(driver.reports[0].items())
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: any(r.get(gid, (None, pid))[1] != pid for r in driver.reports[1:]), 60,
             message="the restarted executor's new pid was reported")
    assert driver.hosting.current == {1: share.link.run_id}, "still the same run"
    driver.hosting.stop(timeout=5)
    share.thread.join(20)
    assert share.link.stopped_by == "driver: stop"


def test_a_share_that_loses_its_driver_stops_its_executors(conf: dict[str, Any]) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    settings = ShareSettings("relay", Relay.topology_spec.to_dict(), conf, "token-1",
                             listener.getsockname()[:2], (frozenset({2, 4}),), local=True)
    try:
        share = Share(Driver.__new__(Driver), 0, conf, settings)
        conn, _ = listener.accept()
        with conn:  # a driver that answers the report, then goes away (its link closes)
            conn.settimeout(60)
            assert recv_frame(conn) == b"token-1"
            report = receive(conn)
            assert isinstance(report, ShareReport) and sorted(report.executors) == [2, 4]
            send(conn, DriverAnswer(stop=False))
            pids = share.pids()
        share.thread.join(30)
        assert not share.thread.is_alive()
        assert share.link.stopped_by.startswith("lost"), share.link.stopped_by
        assert all(_gone(pid) for pid in pids)
    finally:
        listener.close()


def test_a_share_whose_driver_answers_nothing_stops_after_the_timeout(
        conf: dict[str, Any]) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    settings = ShareSettings("relay", Relay.topology_spec.to_dict(), conf, "token-1",
                             silent.getsockname()[:2], (frozenset({2, 4}),), local=True)
    try:
        share = Share(Driver.__new__(Driver), 0, conf, settings)
        share.thread.join(30)
        assert not share.thread.is_alive()
        assert share.link.stopped_by.startswith("lost: no answer")
        assert all(_gone(pid) for pid in share.pids())
    finally:
        silent.close()


def test_a_newer_run_of_a_share_retires_the_older_one(
        driver: Driver, conf: dict[str, Any]) -> None:
    first = Share(driver, 1, conf)
    wait_for(lambda: 1 in driver.hosting.current, 60, message="the first run reported")
    second = Share(driver, 1, conf)  # Spark reran the share's task elsewhere
    first.thread.join(30)
    assert first.link.stopped_by == "driver: stop", "the old run was told to stop"
    assert driver.hosting.current[1] == second.link.run_id
    assert second.thread.is_alive()
    driver.hosting.stop(timeout=5)
    second.thread.join(20)


def test_a_connection_without_the_token_is_closed_unheard(driver: Driver) -> None:
    with socket.create_connection(driver.address, 5) as sock:
        send_frame(sock, b"not-the-token")
        send(sock, ShareBeat(0, "r"))
        sock.settimeout(5)
        with pytest.raises(ConnectionError):
            receive(sock)
    assert driver.hosting.current == {} and driver.reports == []


class FakeJob:
    """A hosting job that runs nothing: the test ends it or reads what was asked of it."""

    made: list[FakeJob] = []

    def __init__(self, sc: Any, task: Any, hosts: Any, cpus: int, group: str, *,
                 dedicated: bool = False) -> None:
        self.hosts, self.group, self.dedicated = list(hosts), group, dedicated
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self.cancelled = False
        FakeJob.made.append(self)

    def start(self) -> None:
        pass

    def join(self, timeout: float | None) -> bool:
        return self.ended.wait(timeout)

    def cancel(self) -> None:
        self.cancelled = True
        self.ended.set()

    @staticmethod
    def live_hosts(sc: Any) -> list[str]:
        return ["10.0.0.2", "10.0.0.3"]

    replaced: list[str] = []

    @staticmethod
    def replace_executors_on(sc: Any, host: str) -> list[str]:
        FakeJob.replaced.append(host)
        return ["1"]


@pytest.fixture
def jobs(driver: Driver, monkeypatch: pytest.MonkeyPatch) -> list[FakeJob]:
    """The driver's hosting jobs, fake: submitted as on a cluster master."""
    import sparkstorm.spark_app.hosting as hosting_module

    FakeJob.made, FakeJob.replaced = [], []
    monkeypatch.setattr(hosting_module, "HostingJob", FakeJob)
    hosting = driver.hosting
    hosting._sc, hosting._settings, hosting._local = object(), driver.settings, False
    with hosting._lock:
        for share, host in enumerate(["10.0.0.2", "10.0.0.3"]):
            hosting._submit(share, 0, host)
    return FakeJob.made


def _report(share: int, run: str, host: str, job: int = 0) -> ShareReport:
    return ShareReport(share, run, host, {}, job=job)


def test_a_share_whose_job_ended_after_it_reported_is_started_again(
        driver: Driver, jobs: list[FakeJob]) -> None:
    hosting = driver.hosting
    assert hosting._take(_report(0, "a", "10.0.0.2")) is False
    assert hosting._take(_report(1, "b", "10.0.0.3")) is False
    jobs[1].error = RuntimeError("Job aborted due to stage failure: Task 0 failed 2 times")
    jobs[1].ended.set()  # Spark gave up on share 1's task
    hosting.check_shares()
    assert hosting.failure is None, "started again, not a failure"
    (restart,) = hosting.restarts
    assert (restart.share, restart.generation) == (1, 1)
    assert restart.reason.startswith("Spark gave up")
    new = jobs[-1]
    assert new.group.endswith("-1.1") and new.hosts == ["10.0.0.3"], "the host with fewest"
    assert hosting._take(_report(1, "c", "10.0.0.3", job=0)) is True, "the old job's run stops"
    assert hosting._take(_report(1, "d", "10.0.0.2", job=1)) is False
    assert hosting.current[1] == "d"


def test_a_silent_share_is_given_up_and_its_host_avoided(driver: Driver,
                                                         jobs: list[FakeJob]) -> None:
    hosting = driver.hosting
    hosting._take(_report(0, "a", "10.0.0.2"))
    hosting._take(_report(1, "b", "10.0.0.3"))
    hosting.check_shares(now=hosting.heard[1] + hosting.give_up_after / 2)
    assert hosting.restarts == [] and driver.lost == [], "heard recently"
    hosting.heard[0] = hosting.heard[1] + hosting.give_up_after  # share 0 beats on
    hosting.check_shares(now=hosting.heard[1] + hosting.give_up_after + 0.1)
    (restart,) = hosting.restarts
    assert restart.share == 1 and restart.host == "10.0.0.2", "not on the silent host"
    assert driver.lost == ["share 1 on 10.0.0.3 was given up"], "the windows in flight end"
    assert jobs[1].cancelled and FakeJob.replaced == ["10.0.0.3"]
    assert hosting._take(ShareBeat(1, "b")) is True, "the link came back: told to stop"


def test_a_share_whose_job_failed_before_reporting_fails_the_topology(
        driver: Driver, jobs: list[FakeJob]) -> None:
    hosting = driver.hosting
    hosting._take(_report(0, "a", "10.0.0.2"))
    jobs[1].error = RuntimeError("EXECUTOR_PYTHON_NOT_FOUND")
    jobs[1].ended.set()
    hosting.check_shares()
    assert hosting.restarts == []
    failure = hosting.failure
    assert failure is not None and getattr(failure, "code", None) == "HOSTING_JOB_ENDED"


def test_shares_follow_the_drivers_new_executor_counts_in_place(
        driver: Driver, conf: dict[str, Any]) -> None:
    shares = [Share(driver, 0, conf), Share(driver, 1, conf)]
    wait_for(driver.hosting.reported, 60, message="both shares reported")
    spout_pid = shares[0].runner.pool.pids()[0]
    old_tag = plan_tag(driver.plan)
    assert all(tags == dict.fromkeys(report, old_tag)
               for report, tags in zip(driver.reports, driver.tags, strict=True))

    # rebalance -e relay=1: the driver switched between windows and now runs new counts
    driver.plan = ExecutionPlan(with_counts(Relay.topology_spec, {"numbers": 1, "relay": 1,
                                                                  "sink": 2}), conf)
    new_tag = plan_tag(driver.plan)

    def reported_under_new_plan() -> set[int]:
        return {gid for report, tags in zip(driver.reports, driver.tags, strict=True)
                for gid in report if tags and tags.get(gid) == new_tag}

    wait_for(lambda: reported_under_new_plan() == {0, 1, 2, 3}, 60,
             message="every executor of the new counts reported under the new plan's tag")
    assert [sorted(s) for s in driver.hosting.shares] == [[0, 1, 2], [3]]
    assert driver.hosting.spec.component("relay").par == 1, "a restarted share gets it"
    assert shares[0].runner.pool.pids()[0] == spout_pid, "the spout kept its process"
    assert sorted(shares[1].runner.pool.sockets) == [3]
    driver.hosting.stop(timeout=10)
    for share in shares:
        share.thread.join(20)
        assert share.error is None
