"""The cluster on the test hosts: ZooKeeper and Nimbus on A, a supervisor on B and on C.

``scripts/test-hosts.sh cluster`` starts them (after ``spark``: the standalone master on A,
a worker on B and on C). Each supervisor keeps its ``storm.local.dir`` in its host's private
``/tmp``, so what its workers wrote (records, local heartbeats with the endpoints of their
executors) is read on that host, through :meth:`ClusterHosts.workers`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import acks, sink_ids
from tests.integration.hosts.conftest import HOST_B, HOST_C, ROOT, TestHosts

IP_OF = {"B": HOST_B, "C": HOST_C}

_READ_WORKERS = """
import json, pathlib
found = []
for folder in pathlib.Path('/tmp/storm-local/supervisor/workers').glob('*'):
    try:
        record = json.loads((folder / 'worker.json').read_text())
        beat = json.loads((folder / 'heartbeat.json').read_text())
    except (OSError, ValueError):
        continue
    alive = pathlib.Path(f"/proc/{record['pid']}").exists()  # not on a host taken away
    if alive and beat.get('time_secs', 0) >= record['create_time']:
        found.append({'record': record, 'beat': beat})
print(json.dumps(found))
"""


class ClusterHosts:
    """Submits topologies to Nimbus on A and reads what the workers on B and C report."""

    def __init__(self, hosts: TestHosts) -> None:
        self.hosts = hosts
        self.shared = hosts.shared

    def cli(self, *args: str, timeout: float = 120) -> str:
        """``sparkstorm ARGS`` on host A with A's conf; its output (asserts it succeeded)."""
        run = self.hosts.run("A", "env", f"SPARKSTORM_CONF_FILE={self.shared}/conf/A.yaml",
                             sys.executable, "-m", "sparkstorm.cli.main", *args,
                             timeout=timeout)
        assert run.returncode == 0, f"sparkstorm {args}: {run.stdout}{run.stderr}{self.logs()}"
        return run.stdout

    def submit(self, topology: Path, name: str, results: Path, count: int,
               *conf: str) -> None:
        """Submit the chaos topology on the standalone master, its ids in ``results``."""
        self.cli("submit", str(topology), "--name", name, "-c", f"chaos.dir={results}",
                 "-c", f"chaos.count={count}", "-c", "spark.executor.memory=1g",
                 "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}:{ROOT}",
                 *[arg for item in conf for arg in ("-c", item)])

    def workers(self, host: str) -> list[dict[str, Any]]:
        """The running workers of ``host`` (B or C): record and this incarnation's heartbeat."""
        run = self.hosts.run(host, sys.executable, "-c", _READ_WORKERS, timeout=30)
        assert run.returncode == 0, run.stderr
        return list(json.loads(run.stdout or "[]"))

    def executor_hosts(self) -> dict[int, str]:
        """Each executor's gid and the address it reports (where its TCP listener is)."""
        return {int(gid): where[1] for host in IP_OF for worker in self.workers(host)
                for gid, where in (worker["beat"].get("stats") or {}).get("endpoints",
                                                                           {}).items()}

    def driver_host(self) -> str | None:
        """B or C: where the worker that runs the driver (and windows) is, once it runs them."""
        for host in IP_OF:
            for worker in self.workers(host):
                if (worker["beat"].get("stats") or {}).get("windows"):
                    return host
        return None

    def driver_stats(self) -> dict[str, Any]:
        """The statistics the driver's worker last heartbeat ({} before it runs windows)."""
        for host in IP_OF:
            for worker in self.workers(host):
                stats = worker["beat"].get("stats") or {}
                if stats.get("windows"):
                    return dict(stats)
        return {}

    def refreshed_calls(self) -> int:
        """Executor calls the driver's windows retried at a refreshed address."""
        return int((self.driver_stats().get("locality") or {}).get("refreshed_calls") or 0)

    def wait_spread(self, timeout: float = 180) -> tuple[str, str]:
        """Wait until executors answer on both B and C; (driver's host, the other host)."""
        wait_for(lambda: set(self.executor_hosts().values()) == {HOST_B, HOST_C}, timeout,
                 message=f"executors on B and C\n{self.logs()}")
        driver = wait_for(self.driver_host, timeout, message=f"a driver\n{self.logs()}")
        return driver, "C" if driver == "B" else "B"

    def kill_worker(self, host: str) -> int:
        """SIGKILL the worker process(es) on ``host``; the pid killed."""
        (worker,) = self.workers(host)
        pid = int(worker["record"]["pid"])
        run = self.hosts.run(host, "kill", "-KILL", str(pid), timeout=30)
        assert run.returncode == 0, run.stderr
        return pid

    def logs(self) -> str:
        """The daemons' logs on the shared folder, and each host's worker logs (tails)."""
        texts = [f"--- {p.name} ---\n{p.read_text(errors='replace')[-3000:]}"
                 for p in sorted(self.shared.glob("*.log"))]
        for host in IP_OF:
            run = self.hosts.run(host, "sh", "-c", "tail -n 40 /tmp/storm-local/supervisor/"
                                 "workers/*/worker.log 2>/dev/null", timeout=30)
            texts.append(f"--- workers on {host} ---\n{run.stdout[-4000:]}")
        return "\n".join(texts)


def acked(results: Path) -> Counter[int]:
    """How often each id was committed by the spout."""
    return Counter(a["id"] for a in acks(results))


def wait_every_id_once(cluster: ClusterHosts, results: Path, count: int,
                       timeout: float = 240) -> None:
    """Wait until every id is committed; each exactly once, and seen by a sink."""
    wait_for(lambda: len(acked(results)) >= count, timeout,
             message=f"{count} ids acked\n{cluster.logs()}")
    counts = acked(results)
    assert set(counts) == set(range(count)), f"never acked: {set(range(count)) - set(counts)}"
    assert [i for i, n in counts.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(count)), "ids the sink never saw"


def kill_topology(cluster: ClusterHosts, name: str) -> None:
    """``sparkstorm kill NAME -w 0``, then wait until no worker runs on B or C."""
    cluster.cli("kill", name, "-w", "0")
    wait_for(lambda: not any(cluster.workers(h) for h in IP_OF), 90,
             message=f"the workers of {name} gone\n{cluster.logs()}")
