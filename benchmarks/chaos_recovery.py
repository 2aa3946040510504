"""Time to recovery after each fault of the chaos suite, on this machine.

For each fault of the chaos suite (``tests/chaos/faults.py``: kill -9 of an executor, the
Spark Python workers, the worker, the supervisor, Nimbus, all of them at once, and a
ZooKeeper outage) it starts a fresh real cluster (Nimbus, one supervisor, Spark local[2],
loopback; for the outage on the ZooKeeper store, with a ZooKeeper server of its own),
submits the chaos topology (600 ids at 60 ids/s, 2700 for the outage,
``topology.message.timeout.secs=10``), waits for 240 acks, injects the fault, and waits
until every id is acked (checked exactly once, all seen by the sink, nothing left after
the kill). It prints, per fault:

- start: submit to the first ack (a Spark start plus executor start-up);
- recovery: the longest time without a new ack from the fault on (time to recovery);
- reference: the longest pause between acks before the fault, from one second after the
  first ack (the start-up burst) on, in the same run;
- all acked: from the fault to the last id's ack;
- spouts: how many spout processes committed ids (2: the worker was started again);
- api back: for the ZooKeeper outage, from ZooKeeper answering again to Nimbus listing the
  topology (its REST API reads the store).

Run: ``cd /work/main && .venv/bin/python benchmarks/chaos_recovery.py [fault ...]``
(``make bench-chaos``), from the repository root.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

from sparkstorm.testing.polling import wait_for

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.chaos.faults import (  # noqa: E402
    CONF,
    COUNT,
    COUNTS,
    FAULTS,
    ZOOKEEPER_FAULTS,
    Run,
    acks,
    longest_ack_pause,
    steady_ack_pause,
    zookeeper_cluster_conf,
    zookeeper_server,
)
from tests.integration.cluster.harness import TestCluster  # noqa: E402

STEADY_IDS = 240
"""Ids acked before the fault: the start-up burst, then about three seconds at 60 ids/s."""


def measure(fault: str) -> dict[str, float]:
    """One run with one fault; its timings in seconds."""
    with tempfile.TemporaryDirectory(prefix="chaos-bench-") as tmp, \
            contextlib.ExitStack() as stack:
        zookeeper = (stack.enter_context(zookeeper_server(Path(tmp) / "zookeeper"))
                     if fault in ZOOKEEPER_FAULTS else None)
        conf = {**CONF, **(zookeeper_cluster_conf(zookeeper) if zookeeper else {})}
        cluster = stack.enter_context(TestCluster(Path(tmp), **conf))  # closed before ZooKeeper
        run = Run(cluster, Path(tmp) / "chaos", COUNTS.get(fault, COUNT), zookeeper)
        submitted = time.time()
        run.start()
        first_ack = min(a["time"] for a in acks(run.folder))
        run.wait_acked(STEADY_IDS, 60)  # a few seconds of steady stream: the reference
        killed = FAULTS[fault](run)
        api_back = float("nan")
        if run.restored:
            wait_for(lambda: _topology_listed(cluster), 60, interval=0.05,
                     message=f"Nimbus lists the topology again\n{cluster.logs()}")
            api_back = time.time() - run.restored
        run.check_every_id_once()
        result = {"start": first_ack - submitted,
                  "recovery": longest_ack_pause(run.folder, killed),
                  "reference": steady_ack_pause(run.folder, first_ack + 1.0, killed),
                  "all acked after kill": max(a["time"] for a in acks(run.folder)) - killed,
                  "spouts": len({a["pid"] for a in acks(run.folder)}),
                  "api back": api_back}
        run.kill_and_check_nothing_left()
        return result


def _topology_listed(cluster: TestCluster) -> bool:
    try:
        return bool(cluster.get("/api/v1/topology/summary")["topologies"])
    except httpx.HTTPError:
        return False


def main() -> None:
    """Measure the faults named on the command line (all by default); print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("faults", nargs="*", help=f"some of {sorted(FAULTS)} (default: all)")
    faults = parser.parse_args().faults or sorted(FAULTS)
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown:
        parser.error(f"unknown faults {unknown}; choose from {sorted(FAULTS)}")
    os.chdir(ROOT)
    print(f"{'fault':<17} {'start s':>8} {'recovery s':>11} {'reference s':>12} "
          f"{'all acked s':>12} {'spouts':>7} {'api back s':>11}")
    for fault in faults:
        timings = measure(fault)
        print(f"{fault:<17} {timings['start']:>8.1f} {timings['recovery']:>11.1f} "
              f"{timings['reference']:>12.2f} {timings['all acked after kill']:>12.1f} "
              f"{timings['spouts']:>7.0f} {timings['api back']:>11.1f}", flush=True)


if __name__ == "__main__":
    main()
