"""The worker's process sampler: each executor process's own uptime (no Spark)."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil

from sparkstorm.cluster.worker.resources import ResourceSampler


def test_each_process_reports_its_own_uptime() -> None:
    worker_started = psutil.Process(os.getpid()).create_time()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        sample = ResourceSampler().sample(os.getpid(), {3: child.pid})
        executor, worker = sample["executors"]["3"], sample["worker"]
        assert executor["pid"] == child.pid
        # the executor started after the worker (this test process): a smaller uptime,
        # measured from its own start
        child_started = psutil.Process(child.pid).create_time()
        assert executor["uptimeSecs"] <= worker["uptimeSecs"]
        assert abs((worker["uptimeSecs"] - executor["uptimeSecs"])
                   - (child_started - worker_started)) < 0.5
    finally:
        child.kill()
        child.wait()
