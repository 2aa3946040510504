"""Time to recovery after kill -9 of each process of a running topology, on this machine.

For each fault of the chaos suite (``tests/chaos/faults.py``: an executor, the Spark Python
workers, the worker, the supervisor, Nimbus) it starts a fresh real cluster (Nimbus, one
supervisor, Spark local[2], loopback), submits the chaos topology (600 ids at 60 ids/s,
``topology.message.timeout.secs=10``), waits for 240 acks, kills the process, and waits
until every id is acked (checked exactly once, all seen by the sink, nothing left after
the kill). It prints, per fault:

- start: submit to the first ack (a Spark start plus executor start-up);
- recovery: the longest time without a new ack from the kill on (time to recovery);
- reference: the longest pause between acks before the fault, from one second after the
  first ack (the start-up burst) on, in the same run.

Run: ``cd /work/main && .venv/bin/python benchmarks/chaos_recovery.py [fault ...]``
(``make bench-chaos``), from the repository root.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.chaos.faults import (  # noqa: E402
    CONF,
    FAULTS,
    Run,
    acks,
    longest_ack_pause,
    steady_ack_pause,
)
from tests.integration.cluster.harness import TestCluster  # noqa: E402


STEADY_IDS = 240
"""Ids acked before the fault: the start-up burst, then about three seconds at 60 ids/s."""


def measure(fault: str) -> dict[str, float]:
    """One run with one fault; its timings in seconds."""
    with tempfile.TemporaryDirectory(prefix="chaos-bench-") as tmp, \
            TestCluster(Path(tmp), **CONF) as cluster:
        run = Run(cluster, Path(tmp) / "chaos")
        submitted = time.time()
        run.start()
        first_ack = min(a["time"] for a in acks(run.folder))
        run.wait_acked(STEADY_IDS, 60)  # a few seconds of steady stream: the reference
        killed = FAULTS[fault](run)
        run.check_every_id_once()
        result = {"start": first_ack - submitted,
                  "recovery": longest_ack_pause(run.folder, killed),
                  "reference": steady_ack_pause(run.folder, first_ack + 1.0, killed),
                  "all acked after kill": max(a["time"] for a in acks(run.folder)) - killed}
        run.kill_and_check_nothing_left()
        return result


def main() -> None:
    """Measure the faults named on the command line (all by default); print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("faults", nargs="*", help=f"some of {sorted(FAULTS)} (default: all)")
    faults = parser.parse_args().faults or sorted(FAULTS)
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown:
        parser.error(f"unknown faults {unknown}; choose from {sorted(FAULTS)}")
    os.chdir(ROOT)
    print(f"{'fault':<14} {'start s':>8} {'recovery s':>11} {'reference s':>12} "
          f"{'all acked s':>12}")
    for fault in faults:
        timings = measure(fault)
        print(f"{fault:<14} {timings['start']:>8.1f} {timings['recovery']:>11.1f} "
              f"{timings['reference']:>12.2f} {timings['all acked after kill']:>12.1f}",
              flush=True)


if __name__ == "__main__":
    main()
