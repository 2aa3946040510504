"""How long a window's task takes to follow a moved executor (connection refresh, issue 10 §1).

One real executor process (the chaos topology's relay, hosted by an ``ExecutorPool`` as a
worker hosts it) and the driver's real endpoint lookup. Each trial starts a task's call
(``engine.spark.stage.call_refreshing``) at an address where nothing listens any more, as a
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
import contextlib
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
from sparkstorm.engine.driver.endpoint_lookup import EndpointLookup
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import (
    ExecutorUnreachable,
    StageInfo,
    call_executor,
    call_refreshing,
)
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.testing.spread import load_spec

TOPOLOGY = "tests.chaos.topology.chaos:ChaosTopology"


def _gone_address() -> Endpoint:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return Endpoint("/nonexistent/refresh-bench.sock", "127.0.0.1", port)


class Bench:
    """One relay executor process, the lookup, and a task's view of them."""

    def __init__(self, folder: Path) -> None:
        spec = load_spec(TOPOLOGY)
        conf = load_config(topology={**spec.config, "chaos.dir": str(folder),
                                     "chaos.count": 1})
        plan = ExecutionPlan(spec, conf)
        self.gid = next(e.gid for e in plan.executors if e.component == "relay")
        self.token = secrets.token_hex(16)
        self.pool = ExecutorPool(plan, "refresh-bench", folder, hosted={self.gid},
                                 token=self.token)
        self.entries: dict[int, tuple[int, Endpoint, int]] = {}
        self.lookup = EndpointLookup("127.0.0.1", self.token, self.entries.get)
        self.window = 0
        self.real = Endpoint("", "", 0)
        self.pid = 0

    def start(self) -> None:
        """Start the executor; over TCP, as a task on another host reaches it."""
        self.pool.start()
        endpoint = self.pool.endpoints[self.gid]
        self.real = Endpoint("/nonexistent/refresh-bench-real.sock", endpoint.host,
                             endpoint.port)
        self.pid = self.pool.pids()[self.gid]

    def request(self) -> dict[str, object]:
        """The next window's (empty) request."""
        self.window += 1
        return {"cmd": "window", "w": self.window, "rows": []}

    def stage(self, gone: Endpoint, answer_timeout: float) -> StageInfo:
        """A stage built while the executor answered at ``gone``."""
        return StageInfo(1, (self.gid,), {self.gid: 1}, {self.gid: gone}, self.token, 10.0,
                         answer_timeout, {self.gid: "relay"}, self.lookup.address,
                         {self.gid: self.pid})

    def direct(self) -> float:
        """Seconds of one direct call (the reference)."""
        began = time.perf_counter()
        call_executor(self.real, self.token, self.request(), 10.0)
        return time.perf_counter() - began

    def refresh(self) -> float:
        """Seconds from the new address reaching the driver to the task's reply."""
        gone = _gone_address()
        self.entries[self.gid] = (1, gone, self.pid)
        updated: list[float] = []

        def heartbeat(gone_for: float) -> None:
            time.sleep(gone_for)
            self.entries[self.gid] = (2, self.real, self.pid)
            updated.append(time.perf_counter())

        arrival = threading.Thread(target=heartbeat, args=(random.uniform(0.5, 2.5),))
        arrival.start()
        refreshed: list[str] = []
        call_refreshing(self.stage(gone, 30.0), self.gid, self.request(), [], refreshed)
        done = time.perf_counter()
        arrival.join()
        assert refreshed, "the call followed the executor"
        return done - updated[0]

    def give_up(self, answer_timeout: float) -> float:
        """Seconds until a task gives up when no new address comes."""
        gone = _gone_address()
        self.entries[self.gid] = (3, gone, self.pid)
        began = time.perf_counter()
        with contextlib.suppress(ExecutorUnreachable):
            call_refreshing(self.stage(gone, answer_timeout), self.gid, self.request(), [], [])
        return time.perf_counter() - began

    def close(self) -> None:
        """Stop the lookup and the executor."""
        self.lookup.close()
        self.pool.stop()


def main() -> None:
    """Run the trials and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--give-up-timeout", type=float, default=2.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="refresh-bench-"))
    bench = Bench(folder)
    try:
        bench.start()
        direct = [bench.direct() for _ in range(50)]
        refresh = [bench.refresh() for _ in range(args.trials)]
        gave_up = bench.give_up(args.give_up_timeout)
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
        print(f"reference: direct call over TCP, median of 50: "
              f"{statistics.median(direct) * 1000:.1f} ms")
        print(f"refresh latency (new address known -> reply), {args.trials} trials: median "
              f"{statistics.median(refresh) * 1000:.0f} ms, max {max(refresh) * 1000:.0f} ms "
              f"({statistics.median(refresh) / statistics.median(direct):.0f}x the reference)")
        print(f"no new address: gave up after {gave_up:.2f} s "
              f"(answer timeout {args.give_up_timeout:g} s)")
    finally:
        bench.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
