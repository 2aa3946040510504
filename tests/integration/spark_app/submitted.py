"""Running the chaos topology with ``sparkstorm spark-submit`` on a ``local[4]`` master.

Shared by the tests of this folder: the command (its output in a log file, its own process
group, the executors' folders under ``tmp_path/tmp``) and the processes it starts.
"""

from __future__ import annotations

import os
import re
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import psutil

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY

COUNT = 120
"""Ids per run: two seconds of the spout's stream."""


def spark_submit(tmp_path: Path, hosting: str, *conf: str, log_name: str = "spark-submit"
                  ) -> tuple[subprocess.Popen[bytes], Path]:
    results, scratch = tmp_path / "numbers", tmp_path / "tmp"
    results.mkdir(exist_ok=True)
    scratch.mkdir(exist_ok=True)
    log = tmp_path / f"{log_name}.log"
    env = {**os.environ, "TMPDIR": str(scratch)}  # the executors' folders go there
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.cli.main", "spark-submit", str(TOPOLOGY),
             "--master", "local[4]", "--staging", str(tmp_path / "staging"),
             "-c", f"chaos.dir={results}", "-c", f"chaos.count={COUNT}",
             "-c", "topology.workers=2", "-c", f"topology.executor.hosting={hosting}",
             "-c", "topology.window.ms=100", "-c", "topology.message.timeout.secs=10",
             "-c", "spark.ui.enabled=false", "-c", f"spark.local.dir={scratch}",
             *[arg for item in conf for arg in ("-c", item)],
             "--", "--driver-java-options", f"-Djava.io.tmpdir={scratch}"],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    return process, log


def descendants(process: subprocess.Popen[bytes], seen: dict[int, psutil.Process]) -> None:
    try:
        for child in psutil.Process(process.pid).children(recursive=True):
            seen.setdefault(child.pid, child)
    except psutil.NoSuchProcess:
        pass


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def jvm(seen: dict[int, psutil.Process]) -> psutil.Process:
    for child in seen.values():
        try:
            if "org.apache.spark.deploy.SparkSubmit" in " ".join(child.cmdline()):
                return child
        except psutil.Error:  # gone, or a zombie
            continue
    msg = "no spark-submit JVM among the command's processes"
    raise AssertionError(msg)


def python_driver(seen: dict[int, psutil.Process]) -> psutil.Process:
    for child in seen.values():
        try:
            cmdline = child.cmdline()
            if ("python" in Path(cmdline[0]).name
                    and any(arg.endswith("spark_app/__main__.py") for arg in cmdline)):
                return child  # (the JVM's command line names the file too)
        except psutil.Error:  # gone, or a zombie
            continue
    msg = "no Python driver among the command's processes"
    raise AssertionError(msg)


ADDRESSES = re.compile(r"REST API (https?://\S+), UI (https?://\S+), token")
"""The driver's line naming its REST API and UI (``sparkstorm.spark_app.app``)."""


def driver_addresses(process: subprocess.Popen[bytes], log: Path,
                     seen: dict[int, psutil.Process],
                     verify: ssl.SSLContext | bool = True) -> tuple[str, str]:
    """The REST API's and UI's URLs the driver logs, once the topology registered there.

    ``verify``: how an ``https`` REST API is called (the application's TLS material).
    """
    def logged() -> re.Match[str] | None:
        descendants(process, seen)
        assert process.poll() is None, log.read_text()[-5000:]
        return ADDRESSES.search(log.read_text())

    found = wait_for(logged, 180, message="the driver logs its REST API and UI")
    rest_url, ui_url = found.group(1), found.group(2)
    wait_for(lambda: httpx.get(f"{rest_url}/api/v1/topology/summary", timeout=10,
                               verify=verify).json()[
        "topologies"], 30, message="the topology registered with the driver's Nimbus")
    return rest_url, ui_url
