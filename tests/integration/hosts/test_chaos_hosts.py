"""The chaos suite on the test hosts: a checkpointed topology through faults of a cluster.

Spark standalone (master on A, a worker on B and on C), ZooKeeper and Nimbus on A, a
supervisor on B and on C; the stateful count of ``faults_topology/paced_count.py`` with two
workers (the driver's on B or C, the other worker's executors on the other host) and a
checkpoint every two windows in a folder every host sees. Each fault must end with a
committed checkpoint in which every id is acked and the counts per key are exact (no acked
id lost, none counted twice: ``checkpointed``), and acks flowing again after it; each prints
its recovery time (``FIGURE``: seconds from the fault to acks flowing again, the longest
pause of acks from the fault on) for ``benchmarks/RESULTS.md``.

Slow (minutes each, and the hosts take a minute to start): ``make test-all`` runs them.
``make test`` covers the same ground on one machine: the watchdog's ladder of remedies
(``tests/unit/engine/test_watchdog.py``), a stall past the message timeout under acking +
checkpoints (``tests/integration/spark/test_stall_timeouts.py``), the corrupt newest
checkpoint (``tests/integration/spark/test_checkpoint_fallback.py``) and the idle
connection flood (``tests/unit/engine/test_tcp_door.py``); the one-machine kill -9 faults
are in ``tests/chaos/`` (slow).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.checkpoint.store import MARKER
from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import acks, longest_ack_pause, steady_ack_pause
from tests.integration.hosts.checkpointed import committed, expected_counts, topology_store
from tests.integration.hosts.conftest import PREFIX, ROOT, TestHosts, running_test_hosts
from tests.integration.hosts.control_plane import IP_OF, ClusterHosts, kill_topology

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PACED = Path(__file__).resolve().parent / "faults_topology" / "paced_count.py"
RATE = 50
"""Ids per second: a run of ``count`` ids lasts count / RATE seconds."""
STALL_SECS = 15
"""The topologies' ``topology.watchdog.stall.secs``: each remedy after this long stuck."""
CLEANUP_SECS = 20
"""The Spark workers' ``spark.worker.cleanup.interval`` and ``appDataTtl`` here."""
SMALL_DISK_MB = 8
"""The size of the file system the full-disk test checkpoints to."""


@pytest.fixture(scope="module")
def small_disk() -> Iterator[Path]:
    """A small tmpfs for checkpoints, mounted before the hosts so that they all see it.

    Outside ``/tmp`` (each host has its own) and ``TEST_HOSTS_DIR`` (bound into the hosts
    without what is mounted under it); unmounted and removed after the module.
    """
    folder = Path(tempfile.mkdtemp(prefix="sparkstorm-chaos-disk-", dir="/var/tmp"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK_MB}m", "tmpfs",
                              str(folder)], capture_output=True, text=True, check=False)
    try:
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs: {mounted.stderr.strip()}")
        yield folder
    finally:
        if mounted.returncode == 0:
            subprocess.run(["umount", "-l", str(folder)], check=False, timeout=30)
        folder.rmdir()


@pytest.fixture(scope="module")
def chaos_hosts(small_disk: Path) -> Iterator[TestHosts]:
    """The cluster on the test hosts, for the module: every fault leaves it whole again."""
    os.environ["TEST_HOSTS_CLEANUP_SECS"] = str(CLEANUP_SECS)
    try:
        with running_test_hosts("spark", "cluster") as test_hosts:
            yield test_hosts
    finally:
        os.environ.pop("TEST_HOSTS_CLEANUP_SECS", None)


@pytest.fixture(autouse=True)
def no_topology_left(chaos_hosts: TestHosts) -> Iterator[None]:
    """Kill what a failed test left running: the next test needs the Spark cores."""
    yield
    cluster = ClusterHosts(chaos_hosts)
    listed = chaos_hosts.run("A", "env", f"SPARKSTORM_CONF_FILE={chaos_hosts.shared}/conf/A.yaml",
                             sys.executable, "-m", "sparkstorm.cli.main", "list", timeout=120)
    for line in listed.stdout.splitlines()[1:]:
        if " ACTIVE " in f" {line} " or " INACTIVE " in f" {line} ":
            kill_topology(cluster, line.split()[0])


class Stateful:
    """One run of the paced stateful count on the cluster: its acks and checkpoints."""

    def __init__(self, hosts: TestHosts, name: str, count: int, *conf: str,
                 checkpoints: Path | None = None, reliability: str = "checkpoint") -> None:
        self.cluster = ClusterHosts(hosts)
        self.name, self.count = name, count
        self.results = hosts.shared / f"results-{name}"
        self.results.mkdir(parents=True)
        self.checkpoints = checkpoints or hosts.shared / f"cp-{name}"
        self.cluster.cli(
            "submit", str(PACED), "--name", name, "-c", f"paced.count={count}",
            "-c", f"paced.rate={RATE}", "-c", f"paced.dir={self.results}",
            "-c", "topology.workers=2", "-c", "topology.checkpoint.windows=2",
            # checkpoint: acks when the covering checkpoint commits, no timeouts; acking:
            # per-tuple trees and message timeouts (10 s here) beside the checkpoints
            "-c", f"topology.reliability={reliability}",
            "-c", f"topology.checkpoint.dir={self.checkpoints}",
            "-c", "topology.max.spout.pending=400",
            "-c", f"topology.watchdog.stall.secs={STALL_SECS}",
            "-c", f"topology.executor.answer.timeout.secs={STALL_SECS - 5}",
            "-c", "spark.executor.memory=1g",
            "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}:{ROOT}",
            *[arg for item in conf for arg in ("-c", item)])

    def acked(self) -> int:
        """Distinct ids acked so far (across rollbacks)."""
        return len({a["id"] for a in acks(self.results)})

    def last_ack(self) -> float:
        return max((a["time"] for a in acks(self.results)), default=0.0)

    def wait_flowing(self, at_least: int = 600, timeout: float = 300) -> None:
        """Wait until ``at_least`` ids are acked and a checkpoint committed."""
        def span() -> float:  # acks come with commits: the first ones all at once
            times = [a["time"] for a in acks(self.results)]
            return max(times) - min(times) if times else 0.0

        wait_for(lambda: self.acked() >= at_least and self.window() is not None
                 and span() >= 15, timeout,
                 message=f"acks and a committed checkpoint\n{self.cluster.logs()}")
        assert self.acked() < self.count, "ids are still to come when the fault hits"

    def reference(self, fault: float) -> None:
        """Print the longest pause of acks before ``fault`` (no fault yet): the reference.

        From two seconds after the first ack (the start-up burst) to the fault.
        """
        first = min((a["time"] for a in acks(self.results)), default=fault)
        _figure(f"{self.name}: longest pause of acks before the fault (reference, "
                f"{fault - first - 2:.0f} s)", steady_ack_pause(self.results, first + 2, fault))

    def window_at(self) -> float:
        """When the newest committed checkpoint was committed (its marker's time)."""
        store = topology_store(self.checkpoints)
        window = None if store is None else committed(store)[0]
        if store is None or window is None:
            return 0.0
        with contextlib.suppress(OSError):  # purged by a newer commit meanwhile
            return (Path(store.base) / f"{window:012d}" / MARKER).stat().st_mtime
        return 0.0

    def window(self) -> int | None:
        store = topology_store(self.checkpoints)
        return None if store is None else committed(store)[0]

    def windows_run(self) -> int:
        """Windows the driver has completed so far, as its worker's heartbeat says."""
        return int(self.cluster.driver_stats().get("windows") or 0)

    def wait_acks_after(self, since: float, timeout: float = 300) -> None:
        """Wait until ids are acked well after ``since`` (the topology moves again)."""
        wait_for(lambda: self.last_ack() > since + 2, timeout,
                 message=f"acks after the fault\n{self.cluster.logs()}")

    def check_exact(self, timeout: float = 400) -> int:
        """Wait for a committed checkpoint with every id acked; its counts exact."""
        def done() -> tuple[int | None, set[int], dict[str, int]] | None:
            store = topology_store(self.checkpoints)
            found = committed(store) if store is not None else None
            return found if found is not None and len(found[1]) == self.count else None

        found = wait_for(done, timeout, message=(
            f"a checkpoint with all {self.count} ids acked\n{self.cluster.logs()}"))
        assert found is not None
        window, acked, counts = found
        assert acked == set(range(self.count)), f"acked ids lost\n{self.events()}"
        assert counts == expected_counts(self.count), f"counts not exact\n{self.events()}"
        assert window is not None
        return window

    def kill(self) -> None:
        """Kill the topology; wait until its workers and Spark work folders are gone."""
        kill_topology(self.cluster, self.name)

    def wait_spark_work_removed(self) -> None:
        """Wait until no Spark work folder (``spark-work/app-*``) is left on B or C.

        The Spark workers remove an ended application's folder (``spark.worker.cleanup.*``,
        set by ``scripts/test-hosts.sh``); the watchdog's new application left one too.
        """
        def left() -> list[str]:
            return [f"{h}: {name}" for h in IP_OF for name in self.cluster.hosts.run(
                h, "sh", "-c", "ls /tmp/spark-work 2>/dev/null", timeout=30).stdout.split()
                    if name.startswith("app-")]

        wait_for(lambda: not left(), 6 * CLEANUP_SECS + 60,
                 message=f"Spark work folders removed: {left()}")

    def events(self) -> str:
        """The workers' log lines that say what happened (rollbacks, restarts, moves)."""
        return "\n".join(line[:300] for line in self.worker_logs().splitlines()
                         if _EVENT.search(line))

    def worker_logs(self) -> str:
        return "".join(self.cluster.hosts.run(h, "sh", "-c", "cat /tmp/storm-local/supervisor/"
                                              "workers/*/worker.log 2>/dev/null",
                                              timeout=30).stdout for h in IP_OF)


_EVENT = re.compile(r"rolled back|watchdog|restart|failed for good|did not answer|move|"
                    r"runs topology|hosting executors|cancel|corrupt|deleted|Lost executor|"
                    r"falling back|not usable|CHECKPOINT_")


def _figure(name: str, seconds: float) -> None:
    print(f"\nFIGURE {name}: {seconds:.1f} s", file=sys.stderr)


@pytest.mark.parametrize("reliability", ["checkpoint", "acking"])
def test_host_a_killed_and_restarted_heals(chaos_hosts: TestHosts, reliability: str) -> None:
    """Issue 30, failure 1: the Spark master, ZooKeeper and Nimbus lost, then back.

    The new Spark master does not know the running application: when the Spark workers
    register with it, it has them kill the application's executors. The driver's watchdog
    finds no Spark executor for ``topology.watchdog.stall.secs`` and makes a new Spark
    application, rolling back to the committed checkpoint. With acking, the stall holds
    tuples in the spout's buffer past the message timeout: they must not be replayed beside
    the originals (the counts ended 9 % high when timeouts ran from the emit).
    """
    run = Stateful(chaos_hosts, f"host-a-{reliability}", 9000, reliability=reliability)
    run.wait_flowing()
    killed = chaos_hosts.script("kill-host", "A", timeout=60)
    assert killed.returncode == 0, killed.stderr
    lost = time.time()
    run.reference(lost)
    # the data plane goes on without A (Spark's executors keep their tasks)
    run.wait_acks_after(lost, timeout=60)
    time.sleep(max(0.0, lost + 30 - time.time()))  # A stays down 30 s
    for stage in ("spark-master", "control-plane"):
        started = chaos_hosts.script(stage, timeout=240)
        assert started.returncode == 0, started.stderr
    _figure(f"{reliability}: host A killed to its daemons serving again", time.time() - lost)

    def healed() -> list[dict[str, Any]] | None:
        """The watchdog's steps once a new Spark application healed the stall.

        Each Spark worker that registers with the new master has the application's
        executor killed; the first to go may leave windows to the other (a cancel heals
        that), the last leaves none (a new application heals that).
        """
        steps = (run.cluster.driver_stats().get("watchdog") or {}).get("steps") or []
        actions = [s["action"] for s in steps]
        return steps if actions[-2:] == ["new-session", "healed"] else None

    steps = wait_for(healed, 400, message=f"healed by a new application\n{run.events()}")
    assert steps is not None
    run.wait_acks_after(time.time())
    print(run.events(), file=sys.stderr)
    _figure(f"{reliability}: host A killed and restarted: longest pause of acks",
            longest_ack_pause(run.results, lost))
    stall = re.search(r"after (\d+) s", steps[-1]["reason"])
    assert stall is not None
    _figure(f"{reliability}: host A restarted: stall to healed by a new Spark application",
            float(stall.group(1)))
    run.check_exact()
    run.kill()
    run.wait_spark_work_removed()


def test_executor_host_link_down_and_back(chaos_hosts: TestHosts) -> None:
    """The link of the host without the driver cut for 60 s, then back.

    Nimbus moves the silent worker to the driver's host; the windows still calling the cut
    host are cancelled and the topology rolls back; the old worker, back on the network, is
    stopped by its supervisor.
    """
    run = Stateful(chaos_hosts, "link", 9000)
    run.wait_flowing()
    driver, cut = run.cluster.wait_spread()
    _link(cut, "down")
    down = time.time()
    run.reference(down)
    try:
        run.wait_acks_after(down, timeout=120)  # moved to the driver's host
        moved = run.last_ack()
        time.sleep(max(0.0, down + 60 - time.time()))  # the cut lasts 60 s
    finally:
        _link(cut, "up")
    _figure("link down: longest pause of acks", longest_ack_pause(run.results, down))
    _figure("link down to acks after the move", moved - down)
    run.wait_acks_after(time.time())
    run.check_exact()
    run.kill()


def test_packet_loss_on_the_executor_host(chaos_hosts: TestHosts) -> None:
    """30 % of the packets the host without the driver sends lost for 40 s."""
    run = Stateful(chaos_hosts, "loss", 6000)
    run.wait_flowing()
    _, lossy = run.cluster.wait_spread()
    _lose_packets(lossy, LOSS_PCT)
    began = time.time()
    run.reference(began)
    try:
        run.wait_acks_after(began, timeout=120)
        time.sleep(max(0.0, began + 40 - time.time()))
        dropped = _dropped_packets(lossy)
    finally:
        _stop_losing_packets(lossy)
    assert dropped != 0, "the rule dropped no packet: no loss was tried"
    _figure(f"{LOSS_PCT} % packet loss ({dropped} packets dropped): longest pause of acks",
            longest_ack_pause(run.results, began))
    run.wait_acks_after(time.time())
    run.check_exact()
    run.kill()


def test_corrupt_newest_checkpoint_falls_back_to_the_one_before(
        chaos_hosts: TestHosts) -> None:
    """The newest committed checkpoint corrupted, then the driver's worker killed -9.

    The restarted driver finds the newest checkpoint's part does not match its commit
    marker, falls back to the one before (``topology.checkpoint.keep``) and resumes there.
    """
    run = Stateful(chaos_hosts, "corrupt", 6000, "topology.checkpoint.keep=3")
    run.wait_flowing()
    driver, _ = run.cluster.wait_spread()
    store = topology_store(run.checkpoints)
    assert store is not None
    wait_for(lambda: len(store.committed_windows()) >= 2, 60, message="two commits kept")
    run.cluster.hosts.run(driver, "kill", "-STOP", str(_worker_pid(run, driver)))
    newest = store.committed_windows()[-1]
    part = next(p for p in (run.checkpoints / store.base.rsplit("/", 1)[-1]
                            / f"{newest:012d}").iterdir() if p.name.startswith("executor-"))
    part.write_bytes(b"corrupt" + part.read_bytes()[7:])
    assert store.problem(newest) is not None, "the part no longer matches its marker"
    acked_before = run.acked()
    killed = run.cluster.kill_worker(driver)
    lost = time.time()
    run.reference(lost)
    run.wait_acks_after(lost)
    _figure("corrupt newest checkpoint, driver killed: longest pause of acks",
            longest_ack_pause(run.results, lost))
    assert killed
    print(run.events(), file=sys.stderr)
    # the restarted driver rolled back past it (and deleted it): no corrupt checkpoint left
    assert store.problem(newest) is None or newest not in store.committed_windows()
    run.check_exact()
    # from the one before, not from the start: the ids acked again are those after it only
    # (a restored spout logs its first ack of each id again)
    again = [n for n, times in Counter(a["id"] for a in acks(run.results)).items() if times > 1]
    assert len(again) < acked_before, f"{len(again)} of {acked_before} ids acked again"
    print(f"ids acked again after the fallback: {len(again)} of {acked_before}",
          file=sys.stderr)
    run.kill()


def test_idle_connection_flood_on_an_executor(chaos_hosts: TestHosts) -> None:
    """500 idle TCP connections from host A to an executor, held for 30 s."""
    run = Stateful(chaos_hosts, "flood", 6000)
    run.wait_flowing()
    run.cluster.wait_spread()
    gid, (host, port) = next(iter(_tcp_endpoints(run).items()))
    began = time.time()
    run.reference(began)
    flood = run.cluster.hosts.run("A", sys.executable, "-c", _FLOOD, host, str(port), "500",
                                  "30", timeout=120)
    assert flood.returncode == 0, flood.stderr
    assert int(flood.stdout.split()[-1]) >= 500, f"the flood opened {flood.stdout}"
    pause = longest_ack_pause(run.results, began)
    _figure(f"idle flood of executor {gid}: longest pause of acks", pause)
    assert run.last_ack() > began + 25, "acks went on during the flood"
    run.check_exact()
    run.kill()


_FLOOD = """
import socket, sys, time
host, port, count, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
held, opened, end = [], 0, time.time() + hold
while time.time() < end:
    held = [s for s in held if s.fileno() != -1]
    while len(held) < count:  # connections the executor closed (its deadline) are opened again
        try:
            held.append(socket.create_connection((host, port), timeout=2))
            opened += 1
        except OSError:
            break
    time.sleep(0.5)
print(opened)
"""


def _tcp_endpoints(run: Stateful) -> dict[int, tuple[str, int]]:
    return {int(gid): (str(where[1]), int(where[2])) for host in IP_OF
            for worker in run.cluster.workers(host)
            for gid, where in (worker["beat"].get("stats") or {}).get("endpoints", {}).items()
            if int(where[2] or 0) > 0}


def _worker_pid(run: Stateful, host: str) -> int:
    (worker,) = run.cluster.workers(host)
    return int(worker["record"]["pid"])


def _link(host: str, state: str) -> None:
    subprocess.run(["ip", "-n", f"{PREFIX}{host}", "link", "set", "eth0", state], check=True,
                   timeout=10)


LOSS_PCT = 30
LOSS_TABLE = "sparkstorm_chaos_loss"
"""The nft table (family netdev) that drops a host's packets at random."""


def _in_host(host: str, *command: str, stdin: str | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", f"{PREFIX}{host}", *command], input=stdin,
                          capture_output=True, text=True, check=False, timeout=10)


def _lose_packets(host: str, percent: int) -> None:
    """Drop ``percent`` % of what ``host`` sends on eth0, at random.

    With nftables (``scripts/install-nftables.sh``) first: ``tc netem`` needs the
    ``sch_netem`` kernel module, which sandboxed kernels lack; the rule sits on eth0's
    egress hook, where netem's loss would be. Skips, saying why, when neither can run.
    """
    if shutil.which("nft") is None:
        subprocess.run(["bash", str(ROOT / "scripts" / "install-nftables.sh")], check=False,
                       timeout=300)
    nft = "nft is missing"
    if shutil.which("nft") is not None:
        added = _in_host(host, "nft", "-f", "-", stdin=(  # nft 1.0.6 wants the newlines
            f"table netdev {LOSS_TABLE} {{\n chain out {{\n  type filter hook egress device "
            f"eth0 priority 0;\n  numgen random mod 100 < {percent} counter drop\n }}\n}}\n"))
        if added.returncode == 0:
            return
        nft = added.stderr.strip()
    netem = _in_host(host, "tc", "qdisc", "add", "dev", "eth0", "root", "netem", "loss",
                     f"{percent}%")
    if netem.returncode != 0:
        pytest.skip(f"no packet loss here: nft says {nft!r}, tc netem says "
                    f"{netem.stderr.strip()!r}")


def _stop_losing_packets(host: str) -> None:
    _in_host(host, "nft", "delete", "table", "netdev", LOSS_TABLE)
    _in_host(host, "tc", "qdisc", "del", "dev", "eth0", "root")


def _dropped_packets(host: str) -> int | None:
    """Packets the nft loss rule on ``host`` dropped so far (None: netem's, not counted)."""
    listed = _in_host(host, "nft", "list", "table", "netdev", LOSS_TABLE)
    found = re.search(r"counter packets (\d+)", listed.stdout)
    return int(found.group(1)) if found else None


def test_full_checkpoint_disk_then_space_again(chaos_hosts: TestHosts, small_disk: Path) -> None:
    """The checkpoints' file system full for 30 s: processing goes on, commits resume.

    With ``topology.reliability: checkpoint`` a tuple is acked when the checkpoint covering
    it commits, so acks stop with the commits: progress during the fault is read from the
    driver's windows, and the figure is from space back to the first commit (acks again).
    """
    run = Stateful(chaos_hosts, "disk", 6000, checkpoints=small_disk / "cp")
    run.wait_flowing()
    filler = small_disk / "filler"
    with filler.open("wb", buffering=0) as out, contextlib.suppress(OSError):
        while True:  # every byte left
            out.write(b"\0" * 65536)
    full = time.time()
    run.reference(full)
    stuck = run.window()
    wait_for(lambda: "CHECKPOINT_WRITE_FAILED" in run.worker_logs(), 120,
             message=f"checkpoint writes failing\n{run.events()}")
    windows = run.windows_run()
    # processing goes on without checkpoints: windows keep completing
    wait_for(lambda: run.windows_run() >= windows + 20, 60,
             message=f"windows during the full disk\n{run.events()}")
    time.sleep(max(0.0, full + 30 - time.time()))  # the disk stays full 30 s
    assert run.window() == stuck, "a checkpoint committed on a full disk"
    filler.unlink()
    freed = time.time()
    wait_for(lambda: (run.window() or -1) > (stuck or -1) and run.window_at() > freed, 180,
             message=f"checkpoints committing again\n{run.events()}")
    _figure("space back to a checkpoint committed", run.window_at() - freed)
    run.wait_acks_after(freed)
    _figure("disk full 30 s: longest pause of acks (they come with commits)",
            longest_ack_pause(run.results, full))
    run.check_exact()
    run.kill()
