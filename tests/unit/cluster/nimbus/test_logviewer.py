"""Logs as Storm's logviewer serves them, through Nimbus's API and a real supervisor logviewer.

A supervisor's logviewer (uvicorn on a free loopback port) serves a fake host's worker folders;
Nimbus's in-process API finds it through the supervisor's record and forwards pages, searches
and downloads. A worker's logs stay readable after its folder is gone (kept), until the
retention limits; Nimbus's and the supervisor's own logs are reachable too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from sparkstorm.cluster.supervisor.log_retention import ARTIFACTS, clean_up, keep_logs
from sparkstorm.cluster.supervisor.logviewer import LogFolders, LogviewerServer
from sparkstorm.testing.polling import wait_for
from tests.unit.cluster.nimbus.helpers import api_client

AUTH = {"Authorization": "Bearer secret"}
LINE = "2026-01-01 00:00:00 INFO line {:06d} of the worker\n"


def _big_log(path: Path, lines: int) -> bytes:
    data = "".join(LINE.format(n) for n in range(lines)).encode()
    path.write_bytes(data)
    return data


@pytest.fixture
def host(tmp_path: Path, state: ClusterState) -> Iterator[Path]:
    """A supervisor folder with one live worker of topology t-1, served by a real logviewer."""
    local = tmp_path / "local"
    root = local / "supervisor"
    worker = root / "workers" / "w-1"
    worker.mkdir(parents=True)
    (worker / "worker.json").write_text(json.dumps({"topology_id": "t-1"}))
    (local / "logs").mkdir(parents=True)
    (local / "logs" / "supervisor.log").write_text("supervisor started\n")
    (local / "logs" / "nimbus.log").write_text("nimbus started\nnimbus assigned t-1\n")
    # plain HTTP: the proxying (tests/unit/cluster/nimbus/test_nimbus_tls.py: the TLS in front)
    server = LogviewerServer({"logviewer.port": 0, "spark.master": "local[2]",
                              "storm.tls.enabled": False},
                             LogFolders(root, local / "logs"), "secret")
    server.start()
    try:
        wait_for(lambda: _up(server.url), 10, message="logviewer up")
        state.register_supervisor(SupervisorInfo("s1", "host-s1", (6700,),
                                                 logviewer_url=server.url))
        yield root
    finally:
        server.stop()


def _up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v1/files", timeout=1).status_code == 401
    except httpx.HTTPError:
        return False


def test_a_page_in_the_middle_of_a_big_log_with_its_size(nimbus: Nimbus, host: Path) -> None:
    data = _big_log(host / "workers" / "w-1" / "worker.log", 20_000)  # about 960 KB
    client = api_client(nimbus)
    files = client.get("/api/v1/topology/t-1/logfiles", headers=AUTH).json()["files"]
    assert [(f["workerId"], f["file"], f["size"], f["live"]) for f in files] == \
        [("w-1", "worker.log", len(data), True)]
    assert files[0]["supervisorId"] == "s1" and files[0]["host"] == "host-s1"
    middle = len(data) // 2
    page = client.get("/api/v1/topology/t-1/logfile", headers=AUTH, params={
        "worker": "w-1", "file": "worker.log", "start": middle, "length": 1000}).json()
    assert (page["start"], page["length"], page["size"]) == (middle, 1000, len(data))
    assert page["data"] == data[middle:middle + 1000].decode()
    last = client.get("/api/v1/topology/t-1/logfile", headers=AUTH, params={
        "worker": "w-1", "file": "worker.log"}).json()  # no start: the last page
    assert last["start"] + last["length"] == len(data) and last["length"] == 51_200


def test_search_in_one_file_and_across_the_topology(nimbus: Nimbus, host: Path) -> None:
    data = _big_log(host / "workers" / "w-1" / "worker.log", 5_000)
    (host / "workers" / "w-1" / "executor-3.log").write_text("boom: line 004242 failed\n")
    client = api_client(nimbus)
    one = client.get("/api/v1/topology/t-1/logsearch", headers=AUTH, params={
        "worker": "w-1", "file": "worker.log", "search": "line 004242"}).json()
    (match,) = one["files"][0]["matches"]
    assert match["byteOffset"] == data.index(b"line 004242")
    assert match["lineNumber"] == 4243 and match["afterString"] == " of the worker"
    deep = client.get("/api/v1/topology/t-1/logsearch", headers=AUTH,
                      params={"search": "004242"}).json()
    assert sorted((f["file"], len(f["matches"])) for f in deep["files"]) == \
        [("executor-3.log", 1), ("worker.log", 1)]
    capped = client.get("/api/v1/topology/t-1/logsearch", headers=AUTH, params={
        "worker": "w-1", "file": "worker.log", "search": "INFO", "numMatches": 10}).json()
    assert len(capped["files"][0]["matches"]) == 10
    assert capped["files"][0]["nextByteOffset"] == len(LINE.format(0)) * 10 + 20
    # Storm's paging: the next page starts where the last stopped, the last says no more
    after = client.get("/api/v1/topology/t-1/logsearch", headers=AUTH, params={
        "worker": "w-1", "file": "worker.log", "search": "INFO", "numMatches": 10,
        "startByteOffset": capped["files"][0]["nextByteOffset"]}).json()["files"][0]
    assert [m["byteOffset"] for m in after["matches"]] == \
        [len(LINE.format(0)) * n + 20 for n in range(10, 20)]
    tail = client.get("/api/v1/topology/t-1/logsearch", headers=AUTH, params={
        "worker": "w-1", "file": "worker.log", "search": "INFO", "numMatches": 10,
        "startByteOffset": len(LINE.format(0)) * 4995}).json()["files"][0]
    assert len(tail["matches"]) == 5 and tail["nextByteOffset"] is None
    deep_capped = client.get("/api/v1/topology/t-1/logsearch", headers=AUTH, params={
        "search": "INFO", "numMatches": 10}).json()
    (worker_log,) = deep_capped["files"]  # each file's own place to go on from
    assert worker_log["nextByteOffset"] == capped["files"][0]["nextByteOffset"]


def test_download_of_a_whole_file(nimbus: Nimbus, host: Path) -> None:
    data = _big_log(host / "workers" / "w-1" / "worker.log", 3_000)
    response = api_client(nimbus).get("/api/v1/topology/t-1/logdownload", headers=AUTH,
                                      params={"worker": "w-1", "file": "worker.log"})
    assert response.status_code == 200 and response.content == data
    assert "attachment" in response.headers["content-disposition"]


def test_logs_need_the_token_and_name_only_log_files(nimbus: Nimbus, host: Path) -> None:
    _big_log(host / "workers" / "w-1" / "worker.log", 10)
    client = api_client(nimbus)
    assert client.get("/api/v1/topology/t-1/logfiles").status_code == 401
    assert client.get("/api/v1/daemonlogs").status_code == 401
    for worker, file in (("w-1", "worker.json"), ("w-1", "../../x.log"), ("..", "worker.log"),
                         ("w-2", "worker.log")):
        response = client.get("/api/v1/topology/t-1/logfile", headers=AUTH,
                              params={"worker": worker, "file": file})
        assert response.status_code == 404, (worker, file, response.text)
        assert response.json()["code"] == "NOT_FOUND"
    other = client.get("/api/v1/topology/t-2/logfile", headers=AUTH,
                       params={"worker": "w-1", "file": "worker.log"})
    assert other.status_code == 404  # a worker of another topology is not this one's
    viewer = LogFolders(host, host.parent / "logs")
    with pytest.raises(Exception, match="no log"):
        viewer.path("w-1", "../worker.log")


def test_a_killed_worker_s_logs_stay_until_the_retention_limits(nimbus: Nimbus,
                                                                host: Path) -> None:
    worker = host / "workers" / "w-1"
    data = _big_log(worker / "worker.log", 100)
    (worker / "heartbeat.json").write_text("{}")
    keep_logs(worker, host / ARTIFACTS)  # what the launcher does when it stops it for good
    for path in worker.iterdir():
        path.unlink()
    worker.rmdir()
    client = api_client(nimbus)
    (entry,) = client.get("/api/v1/topology/t-1/logfiles", headers=AUTH).json()["files"]
    assert (entry["file"], entry["live"]) == ("worker.log", False)
    page = client.get("/api/v1/topology/t-1/logfile", headers=AUTH,
                      params={"worker": "w-1", "file": "worker.log", "start": 0}).json()
    assert page["data"].encode() == data and page["live"] is False
    kept = host / ARTIFACTS / "w-1"
    (kept / "executor-1.log").write_bytes(b"x" * 3000)
    os.utime(kept / "worker.log", (time.time() - 100, time.time() - 100))
    clean_up(host / ARTIFACTS, max_age_secs=3600, max_bytes=4000)  # over the size: oldest go
    assert sorted(p.name for p in kept.iterdir()) == ["executor-1.log", "worker.json"]
    assert clean_up(host / ARTIFACTS, max_age_secs=3600, max_bytes=4000) == []
    assert clean_up(host / ARTIFACTS, max_age_secs=0, max_bytes=4000,
                    now=time.time() + 10) == [kept]
    assert client.get("/api/v1/topology/t-1/logfiles", headers=AUTH).json()["files"] == []


def test_nimbus_and_supervisor_logs(nimbus: Nimbus, host: Path) -> None:
    client = api_client(nimbus)
    files = client.get("/api/v1/daemonlogs", headers=AUTH).json()["files"]
    assert sorted((f["daemon"], f["supervisorId"], f["file"]) for f in files) == \
        [("nimbus", "", "nimbus.log"), ("supervisor", "s1", "supervisor.log")]
    own = client.get("/api/v1/daemonlog", headers=AUTH,
                     params={"daemon": "nimbus", "file": "nimbus.log", "start": 0}).json()
    assert own["data"] == "nimbus started\nnimbus assigned t-1\n" and own["size"] == 35
    theirs = client.get("/api/v1/daemonlog", headers=AUTH, params={
        "daemon": "supervisor", "supervisor": "s1", "file": "supervisor.log"}).json()
    assert theirs["data"] == "supervisor started\n"
    found = client.get("/api/v1/daemonlog/search", headers=AUTH, params={
        "daemon": "nimbus", "file": "nimbus.log", "search": "assigned"}).json()
    assert [m["byteOffset"] for m in found["matches"]] == [22]
    download = client.get("/api/v1/daemonlog/download", headers=AUTH, params={
        "daemon": "supervisor", "supervisor": "s1", "file": "supervisor.log"})
    assert download.content == b"supervisor started\n"
    missing = client.get("/api/v1/daemonlog", headers=AUTH, params={
        "daemon": "supervisor", "supervisor": "s9", "file": "supervisor.log"})
    assert missing.status_code == 404 and missing.json()["code"] == "SUPERVISOR_NOT_FOUND"
