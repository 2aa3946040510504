"""Threads, memory and descriptors of one executor process under a flood of idle TCP callers.

Issue 30: each idle TCP connection held a thread waiting for the token frame, with no
timeout. This starts a two-executor topology's pool (no Spark), opens ``--connections``
idle TCP connections to the bolt executor, and prints the executor's threads, RSS and open
descriptors before, during (after ``--hold`` seconds) and after the handshake deadline; and
whether a caller with the token was served during the flood, and how fast.

    .venv/bin/python benchmarks/tcp_flood.py --connections 300
"""

from __future__ import annotations

import argparse
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from _flood_topology import Pair

from sparkstorm.config import load_config
from sparkstorm.config.keys import KEYS
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import ping
from sparkstorm.engine.wire.endpoint import Endpoint


def status(pid: int) -> str:
    """Threads, resident memory and open descriptors of process ``pid``."""
    fields = dict(line.split(":", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines())
    fds = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    rss = int(fields["VmRSS"].split()[0]) / 1024
    return f"threads {int(fields['Threads']):4d}  RSS {rss:6.1f} MB  fds {fds:4d}"


def mean_ping_ms(endpoint: Endpoint, token: str, count: int = 300) -> float:
    """Mean time of a TCP connect, token and ping, in ms (a Spark task connects per call)."""
    start = time.perf_counter()
    for _ in range(count):
        assert ping(endpoint, token, 5)
    return (time.perf_counter() - start) * 1000 / count


def main() -> None:
    """Flood, measure, print."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--hold", type=float, default=1.5)
    parser.add_argument("--deadline", type=float, default=5.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tcp-flood-"))
    topology: dict[str, Any] = {"topology.name": "pair"}
    if "topology.tcp.handshake.timeout.secs" in KEYS:  # the code under test has the door
        topology["topology.tcp.handshake.timeout.secs"] = args.deadline
        topology["topology.tcp.max.connections"] = args.connections + 16
    conf = load_config(topology=topology)
    (tmp / "work").mkdir()
    pool = ExecutorPool(ExecutionPlan(Pair.topology_spec, conf), "pair", tmp / "work")
    pool.start()
    try:
        gid = pool.plan.task_executor[pool.plan.component_tasks["sink"][0]]
        here = pool.endpoints[gid]
        elsewhere = Endpoint(str(tmp / "elsewhere.sock"), here.host, here.port)
        pid = pool.pids()[gid]
        assert ping(elsewhere, pool.token, 5)
        print(f"TCP connect + token + ping, mean of 300: "
              f"{mean_ping_ms(elsewhere, pool.token):.3f} ms")
        time.sleep(0.5)
        print(f"before the flood           {status(pid)}")
        idle = [socket.create_connection((here.host, here.port), 10)
                for _ in range(args.connections)]
        time.sleep(args.hold)
        print(f"{args.connections} idle, {args.hold:g} s later   {status(pid)}")
        start = time.perf_counter()
        served = ping(elsewhere, pool.token, 10)
        print(f"a caller with the token during the flood: served={served} in "
              f"{(time.perf_counter() - start) * 1000:.1f} ms")
        time.sleep(max(0.0, args.deadline + 1.5 - args.hold))
        closed = 0
        for sock in idle:
            sock.setblocking(False)
            try:
                closed += sock.recv(1) == b""
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        print(f"{args.deadline + 1.5:g} s after opening       {status(pid)}  "
              f"(closed by the executor: {closed} of {args.connections})")
        for sock in idle:
            sock.close()
        time.sleep(1.0)
        print(f"idle ones closed by us     {status(pid)}")
    finally:
        pool.stop()


if __name__ == "__main__":
    main()
