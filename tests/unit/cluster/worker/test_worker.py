"""The cluster worker hands its topology runner the conf with the code dir's defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Topology
from sparkstorm.cluster.worker.worker import ClusterWorker, with_host_settings
from sparkstorm.multilang.shell import RESOURCES_DIR_KEY


class _Source(Spout):
    outputs = ["n"]


class _Sink(Bolt):
    pass


class _Pipeline(Topology):
    source = _Source.spec()
    sink = _Sink.spec(inputs=[source])


class _FakeRunner:
    """Stands in for TopologyDriver (which would start Spark); keeps the conf it got."""

    started: list[_FakeRunner] = []

    def __init__(self, name: str, spec: Any, conf: dict[str, Any],
                 topology_id: str | None = None, *, hosted: set[int] | None = None,
                 token: str | None = None) -> None:
        self.conf = conf
        self.topology_id = topology_id
        self.spark_ui_url = None
        self.plan = type("Plan", (), {"executors": []})()
        self.pool = type("Pool", (), {"sockets": {}})()

    def set_active(self, active: bool) -> None:
        pass

    def start(self) -> None:
        _FakeRunner.started.append(self)


class _Client:
    def log(self, worker_id: str, body: dict[str, Any]) -> None:
        pass


@pytest.mark.parametrize("user_value", [None, "/srv/multilang"])
def test_the_runner_gets_the_code_dirs_resources_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_value: str | None) -> None:
    monkeypatch.setattr("sparkstorm.engine.TopologyDriver", _FakeRunner)
    (tmp_path / "resources").mkdir()
    worker = ClusterWorker(_Client(), "w1", "t-1-1", tmp_path)  # type: ignore[arg-type]
    conf = {"topology.name": "t"} if user_value is None else {RESOURCES_DIR_KEY: user_value}
    worker._start_runner({"topology_name": "t", "spec": _Pipeline.topology_spec.to_dict(),
                          "conf": conf})
    expected = user_value or str(tmp_path / "resources")
    assert _FakeRunner.started[-1].conf[RESOURCES_DIR_KEY] == expected


class _Executor:
    def __init__(self, gid: int, component: str) -> None:
        self.gid, self.component = gid, component


class _RunningRunner:
    """A runner whose executor 'processes' are this test process, with log files."""

    def __init__(self, workdir: Path) -> None:
        import os

        from sparkstorm.engine.driver.topology_stats import TopologyStats

        self.stats = TopologyStats(10)
        self.spark_ui_url = "http://h:4040"
        self.reported_errors: list[Any] = []
        self.plan = type("Plan", (), {"executors": [_Executor(3, "count")]})()
        self.pool = type("Pool", (), {
            "workdir": workdir, "pids": lambda _: {3: os.getpid()},
            "sockets": {3: str(workdir / "e3.sock"), 4: str(workdir / "e4.sock")},
            "hosted_endpoints": lambda _: {3: [str(workdir / "e3.sock"), "127.0.0.1", 4003,
                                               os.getpid()]},
            "log_path": lambda _, gid: workdir / f"executor-{gid}.log"})()


class _RecordingClient:
    def __init__(self) -> None:
        self.beats: list[dict[str, Any]] = []
        self.tails: list[dict[str, Any]] = []

    def heartbeat(self, worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        self.beats.append(body)
        return {"send_logs": ["executor-3"]}

    def report_log_tails(self, worker_id: str, body: dict[str, Any]) -> None:
        self.tails.append(body)


def test_heartbeats_carry_resources_and_the_logs_asked_for_are_sent(tmp_path: Path) -> None:
    folder, workdir = tmp_path / "worker", tmp_path / "runner"
    folder.mkdir()
    workdir.mkdir()
    (folder / "worker.log").write_text("worker line\n")
    (workdir / "executor-3.log").write_text("INFO count says hello\n")
    client = _RecordingClient()
    worker = ClusterWorker(client, "w1", "t-1-1", tmp_path, folder)  # type: ignore[arg-type]
    worker.runner = _RunningRunner(workdir)
    orders = worker._beat()
    assert client.beats[-1]["stats"]["endpoints"]["3"][1:3] == ["127.0.0.1", 4003]
    resources = client.beats[-1]["stats"]["resources"]
    assert resources["worker"]["memoryMb"] > 0 and resources["executors"]["3"]["memoryMb"] > 0
    worker._send_log_tails(orders["send_logs"])
    (sent,) = client.tails
    assert sent["sources"] == {"worker": "worker", "executor-3": "executor 3 (count)"}
    assert sent["tails"] == {"executor-3": "INFO count says hello\n"}  # only the one asked for


def test_log_control_is_applied_here_and_passed_to_each_executor(tmp_path: Path) -> None:
    import logging

    calls: list[tuple[int, dict[str, Any]]] = []
    worker = ClusterWorker(_RecordingClient(), "w1", "t-1-1", tmp_path)  # type: ignore[arg-type]
    runner = _RunningRunner(tmp_path)
    runner.plan.executors = [_Executor(3, "count"), _Executor(4, "split")]
    runner.pool.log_control = lambda gid, levels, pct: calls.append(
        (gid, {"cmd": "log_control", "levels": levels, "sample_pct": pct}))
    worker.runner = runner
    worker._log_control({"levels": {"sparkstorm.test.quiet": "WARN"},
                         "sampling": {"split": 25.0}})
    assert logging.getLogger("sparkstorm.test.quiet").level == logging.WARNING
    assert calls == [
        (3, {"cmd": "log_control", "levels": {"sparkstorm.test.quiet": "WARN"},
             "sample_pct": 0.0}),
        (4, {"cmd": "log_control", "levels": {"sparkstorm.test.quiet": "WARN"},
             "sample_pct": 25.0})]
    worker._log_control({"levels": {}, "sampling": {}})  # cleared: once more, then quiet
    worker._log_control({"levels": {}, "sampling": {}})
    assert logging.getLogger("sparkstorm.test.quiet").level == logging.NOTSET
    assert [request["sample_pct"] for _, request in calls[2:]] == [0.0, 0.0]


def test_the_workers_own_host_names_the_address_executors_listen_on() -> None:
    submitted = {"storm.local.hostname": "10.0.0.1", "topology.workers": 2}
    assert with_host_settings(submitted, {"storm.local.hostname": "10.0.0.2"}) == {
        "storm.local.hostname": "10.0.0.2", "topology.workers": 2}
    # unset on this host: the submitter's address is wrong here, so it goes
    assert with_host_settings(submitted, {"storm.local.hostname": None}) == {
        "topology.workers": 2}


def test_endpoints_in_a_heartbeat_answer_carry_the_plan_they_were_reported_under() -> None:
    from sparkstorm.cluster.worker.worker import endpoint_tags, remote_endpoints

    answer = {"3": ["/w/e3.sock", "10.0.0.2", 4003, 77, "relay=1,sink=2"],
              "4": ["/w/e4.sock", "10.0.0.2", 4004, 78]}
    found = remote_endpoints(answer)
    assert {gid: pid for gid, (_, pid) in found.items()} == {3: 77, 4: 78}
    assert endpoint_tags(answer) == {3: "relay=1,sink=2"}, "untagged: an older worker"
