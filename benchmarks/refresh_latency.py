"""How long a window's task takes to follow a moved executor (connection refresh, issue 10 §1).

One real executor process (the chaos topology's relay, hosted by an ``ExecutorPool`` as a
worker hosts it) and the driver's real endpoint lookup. Each trial starts a task's call
(``engine.stage.call_refreshing``) at an address where nothing listens any more, as a
window in flight after its executor moved; the lookup first says "where it was" (the
driver has not heard yet), then, after a random delay, the executor's real address (the
heartbeat arrived). Measured: from that update to the reply (the refresh latency), against
the reference of a direct call to the same executor in the same run; and how long a task
waits before giving up when no new address comes (bounded by
``topology.executor.answer.timeout.secs``).

Usage: ``python benchmarks/refresh_latency.py [--trials 20] [--give-up-timeout 2]``
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import shutil
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

from sparkstorm.config import load_config
from sparkstorm.engine.endpoint import Endpoint
from sparkstorm.engine.endpoint_lookup import EndpointLookup
from sparkstorm.engine.plan import ExecutionPlan
from sparkstorm.engine.pool import ExecutorPool
from sparkstorm.engine.stage import ExecutorUnreachable, StageInfo, call_executor, call_refreshing
from sparkstorm.testing.spread import load_spec

TOPOLOGY = "tests.chaos.topology.chaos:ChaosTopology"


def _gone_address() -> Endpoint:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return Endpoint("/nonexistent/refresh-bench.sock", "127.0.0.1", port)


def main() -> None:
    """Run the trials and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--give-up-timeout", type=float, default=2.0)
    args = parser.parse_args()
    spec = load_spec(TOPOLOGY)
    folder = Path(tempfile.mkdtemp(prefix="refresh-bench-"))
    conf = load_config(topology={**spec.config, "chaos.dir": str(folder), "chaos.count": 1})
    plan = ExecutionPlan(spec, conf)
    gid = next(e.gid for e in plan.executors if e.component == "relay")
    token = secrets.token_hex(16)
    pool = ExecutorPool(plan, "refresh-bench", folder, hosted={gid}, token=token)
    entries: dict[int, tuple[int, Endpoint, int]] = {}
    lookup = EndpointLookup("127.0.0.1", token, entries.get)
    try:
        pool.start()
        real = pool.endpoints[gid]
        # over TCP, as a task on another host reaches it: the socket path is not "here"
        real = Endpoint("/nonexistent/refresh-bench-real.sock", real.host, real.port)
        pid = pool.pids()[gid]
        window = 0

        def request() -> dict[str, object]:
            nonlocal window
            window += 1
            return {"cmd": "window", "w": window, "rows": []}

        direct = []
        for _ in range(50):
            began = time.perf_counter()
            call_executor(real, token, request(), 10.0)
            direct.append(time.perf_counter() - began)
        refresh = []
        for _ in range(args.trials):
            gone = _gone_address()
            entries[gid] = (1, gone, pid)
            stage = StageInfo(1, (gid,), {gid: 1}, {gid: gone}, token, 10.0, 30.0,
                              {gid: "relay"}, lookup.address, {gid: pid})
            updated: list[float] = []

            def heartbeat(gone_for: float) -> None:
                time.sleep(gone_for)
                entries[gid] = (2, real, pid)
                updated.append(time.perf_counter())

            arrival = threading.Thread(target=heartbeat, args=(random.uniform(0.5, 2.5),))
            arrival.start()
            refreshed: list[str] = []
            call_refreshing(stage, gid, request(), [], refreshed)
            done = time.perf_counter()
            arrival.join()
            assert refreshed, "the call followed the executor"
            refresh.append(done - updated[0])
        gone = _gone_address()
        entries[gid] = (3, gone, pid)
        stage = StageInfo(1, (gid,), {gid: 1}, {gid: gone}, token, 10.0,
                          args.give_up_timeout, {gid: "relay"}, lookup.address, {gid: pid})
        began = time.perf_counter()
        try:
            call_refreshing(stage, gid, request(), [], [])
        except ExecutorUnreachable:
            gave_up = time.perf_counter() - began
        load = os.getloadavg()[0]
        print(f"load average (1 min) at the end: {load:.2f}")
        print(f"reference: direct call over TCP, median of 50: "
              f"{statistics.median(direct) * 1000:.1f} ms")
        print(f"refresh latency (new address known -> reply), {args.trials} trials: median "
              f"{statistics.median(refresh) * 1000:.0f} ms, max {max(refresh) * 1000:.0f} ms "
              f"({statistics.median(refresh) / statistics.median(direct):.0f}x the reference)")
        print(f"no new address: gave up after {gave_up:.2f} s "
              f"(answer timeout {args.give_up_timeout:g} s)")
    finally:
        lookup.close()
        pool.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
