"""One word count deployed with ``sparkstorm spark-submit`` on the test hosts, watched.

``spark_hosting_scaling.py``'s Spark-hosted runs: the command line is the one ``sparkstorm
spark-submit --dry-run`` prints (the documented way; ``--status-secs 1`` added, so that the
driver logs its progress once a second), run on host A; the driver's log is the only view
of the run, as for a user: its progress lines (acked trees, windows), the shares' reports
and the hosting link's losses, each with the log's timestamp.

:class:`SparkSubmitRun` starts the command, reads the log as it grows, and stops the
application the way an operator does (SIGTERM to the ``spark-submit`` JVM: the topology
drains), or kills its process group when it does not end in time. :func:`share_processes`
counts the executor processes a host runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

STAMP = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})"
PROGRESS = re.compile(STAMP + r" .*\] windows +(\d+) .* acked +([\d,]+) +failed")
REPORT = re.compile(STAMP + r" .*share (\d+) \(run (\w+)\) hosts executors \[[\d, ]*\] on "
                    r"([\w.:-]+)")
LOSS = re.compile(STAMP + r" .*share (\d+)\b(?!.*hosts executors).*"
                  r"(link closed|given up|gave up|giving up|lost|timed out|silent|no answer|"
                  r"not heard)", re.IGNORECASE)
"""The driver's word that it lost a share's link (today ``share N's link closed``); the
words of a give-up the hosting code may log instead."""
EXECUTOR_MODULE = "sparkstorm.engine.executor.main"


def stamp_time(text: str) -> float:
    """Epoch seconds of a Python log timestamp (local time, as ``logging`` writes it)."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").timestamp()


@dataclass
class DriverLog:
    """What the driver's log says so far."""

    polls: list[dict[str, Any]] = field(default_factory=list)
    """``{"time", "windows", "acked"}`` of each progress line."""
    reports: list[tuple[float, int, str, str]] = field(default_factory=list)
    """(time, share, run, host) of each share's report."""
    losses: list[tuple[float, int, str]] = field(default_factory=list)
    """(time, share, line) of each loss of a share's link."""

    @property
    def acked(self) -> int:
        """Trees acked at the last progress line."""
        return self.polls[-1]["acked"] if self.polls else 0


def read_log(path: Path) -> DriverLog:
    """Parse the driver's log (see :class:`DriverLog`)."""
    log = DriverLog()
    text = path.read_text(errors="replace") if path.exists() else ""
    for line in text.splitlines():
        if (found := PROGRESS.match(line)) is not None:
            log.polls.append({"time": stamp_time(found[1]), "windows": int(found[2]),
                              "acked": int(found[3].replace(",", ""))})
        elif (found := REPORT.match(line)) is not None:
            log.reports.append((stamp_time(found[1]), int(found[2]), found[3], found[4]))
        elif (found := LOSS.match(line)) is not None:
            log.losses.append((stamp_time(found[1]), int(found[2]), line[24:300]))
    return log


def submit_command(topology: Path, cls: str, name: str, staging: Path,
                   options: list[str]) -> tuple[dict[str, str], list[str]]:
    """The environment and command line ``sparkstorm spark-submit --dry-run`` prints.

    Raises:
        RuntimeError: it failed.
    """
    done = subprocess.run(
        [sys.executable, "-m", "sparkstorm.cli.main", "spark-submit", str(topology),
         "--topology", cls, "--name", name, "--staging", str(staging), "--dry-run",
         *options], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        msg = f"sparkstorm spark-submit --dry-run failed: {done.stderr[-3000:]}"
        raise RuntimeError(msg)
    words = shlex.split(done.stdout.strip().splitlines()[-1])
    environment = {}
    while words and "=" in words[0] and not words[0].startswith("/"):
        key, _, value = words.pop(0).partition("=")
        environment[key] = value
    return environment, [*words, "--status-secs", "1"]


class SparkSubmitRun:
    """The application on host A, its log in ``log`` (see the module docs).

    Args:
        launcher: the command prefix that runs a command on host A (pinned where wanted).
        environment: variables the command needs (``SPARK_HOME``).
        command: the spark-submit command line.
        log: where its output goes.
    """

    def __init__(self, launcher: list[str], environment: dict[str, str], command: list[str],
                 log: Path) -> None:
        self.log = log
        self.launched = time.time()
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [*launcher, "env", *(f"{k}={v}" for k, v in environment.items()), *command],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.seen: dict[int, psutil.Process] = {}

    def read(self) -> DriverLog:
        """The log so far; also notes the application's processes (to find its JVM)."""
        try:
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self.seen.setdefault(child.pid, child)
        except psutil.Error:  # ended
            pass
        return read_log(self.log)

    def running(self) -> bool:
        """Whether the command still runs."""
        return self.process.poll() is None

    def stop(self, timeout: float = 150.0) -> int | None:
        """SIGTERM to the spark-submit JVM (the topology drains); its exit code.

        Kills the process group when it has not ended within ``timeout`` (None then).
        """
        self.read()
        jvm = next((p for p in self.seen.values() if _is_spark_submit(p)), None)
        if jvm is not None and self.running():
            with contextlib.suppress(psutil.Error):
                jvm.send_signal(signal.SIGTERM)
        elif self.running():
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self) -> None:
        """SIGKILL to the command's process group, and to every process it was seen to run."""
        if self.running():
            os.killpg(self.process.pid, signal.SIGKILL)
        for process in self.seen.values():
            with contextlib.suppress(psutil.Error):
                process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)


def _is_spark_submit(process: psutil.Process) -> bool:
    try:
        return "org.apache.spark.deploy.SparkSubmit" in " ".join(process.cmdline())
    except psutil.Error:
        return False


def share_processes(namespace: str) -> list[psutil.Process]:
    """The sparkstorm executor processes running in network namespace ``namespace``."""
    listed = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True,
                            text=True, check=False, timeout=10).stdout
    found = []
    for pid in listed.split():
        try:
            process = psutil.Process(int(pid))
            if EXECUTOR_MODULE in " ".join(process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue
    return found
