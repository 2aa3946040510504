"""Failures under a topology deployed with ``spark-submit`` on the test hosts (issue 29, §3).

A Spark standalone master runs on host A and a worker with three cores on B and on C; the
driver runs on A (client mode), the topology's executors in two shares hosted by the
application's Spark executors on B and C, each hosting task holding one CPU
(``topology.executor.hosting.cpus=1``) so that one host can take both shares and still run
windows. The workers' Python is the project's (nothing is packed: the packing is
``test_spark_submit_hosts``'s subject); nothing else of sparkstorm runs on B or C. Short
timeouts: the driver gives a silent share up after 5 s (+ two heartbeats of 0.5 s).

- an executor process killed with -9: its share restarts it where it was and reports the
  new pid, the topology rolls back to its checkpoint; every id acked exactly once;
- host C cut off from the network for 60 s, then back: the driver gives C's share up after
  its own heartbeat timeout (not Spark's 120 s), has Spark kill the executors it had there
  and starts the share on B; C's executor processes stop themselves; nothing of C's old
  share runs when the link returns; exact stateful counts in the last checkpoint;
- the driver killed with -9 (checkpoints in a folder every host sees): everything on B
  and C goes away, and the application started again with the same
  ``topology.checkpoint.id`` resumes from the committed checkpoint; exact stateful counts;
- host C killed whole (``spark.task.maxFailures=2``): Spark reruns C's hosting task on B;
  C's Spark worker comes back and B is killed whole: share 0's task is rerun on C by Spark,
  share 1's has failed twice and Spark gives up on it, so the driver starts it again in a
  new hosting job, on C; every id acked exactly once.

Each test stops its application and waits until nothing of it runs on B or C; the hosts go
down after the module, even when a test fails. The figures of a run (seconds from a fault
to acks resuming, from a cut link to the share given up) are printed (``-s``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparkstorm.checkpoint import CheckpointStore
from sparkstorm.testing.polling import wait_for
from tests.chaos.faults import TOPOLOGY as CHAOS
from tests.chaos.faults import acks, longest_ack_pause, sink_ids
from tests.integration.hosts.checkpointed import committed, expected_counts
from tests.integration.hosts.conftest import (
    HOST_A,
    HOST_B,
    HOST_C,
    MASTER,
    PREFIX,
    ROOT,
    SCRIPT,
    SHARED,
    TestHosts,
    running_test_hosts,
)

# slow (about 6 minutes with its hosts): make test keeps the hosting link's restarts and
# give-ups on one machine (tests/unit/spark_app/test_hosting_link.py) and the spark-submit
# path, hosting job and checkpoint resume in tests/integration/spark_app/
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PACED = Path(__file__).resolve().parent / "faults_topology" / "paced_count.py"
IP_OF = {"A": HOST_A, "B": HOST_B, "C": HOST_C}
REPORT = re.compile(r"share (\d) \(run (\w+)\) hosts executors \[([\d, ]*)\] on ([\d.]+)")
CONF = ("topology.workers=2", "topology.window.ms=100", "topology.message.timeout.secs=10",
        f"spark.driver.host={HOST_A}", "spark.executor.cores=3", "spark.executor.memory=1g",
        "spark.ui.enabled=false", "topology.executor.hosting.cpus=1",
        "topology.executor.hosting.heartbeat.secs=0.5",
        "topology.executor.hosting.timeout.secs=5")


@pytest.fixture(scope="module")
def fault_hosts() -> Iterator[TestHosts]:
    """Spark standalone on the test hosts: workers with three cores on B and C."""
    import pyspark

    saved = {k: os.environ.get(k) for k in ("TEST_HOSTS_CORES", "SPARK_HOME")}
    os.environ.update({"TEST_HOSTS_CORES": "3", "SPARK_HOME": os.path.dirname(pyspark.__file__)})
    try:
        with running_test_hosts("spark") as test_hosts:
            yield test_hosts
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# -- the hosts --------------------------------------------------------------------------
def _netns_pids(host: str) -> set[int]:
    listed = subprocess.run(["ip", "netns", "pids", f"{PREFIX}{host}"], capture_output=True,
                            text=True, check=False, timeout=10).stdout
    return {int(pid) for pid in listed.split()}


def _cmdlines(host: str) -> dict[int, str]:
    found = {}
    for pid in _netns_pids(host):
        try:
            process = psutil.Process(pid)
            if process.status() != psutil.STATUS_ZOMBIE:
                found[pid] = " ".join(process.cmdline())
        except psutil.Error:  # gone meanwhile
            continue
    return found


def _ours(host: str) -> list[str]:
    """What runs on ``host`` besides its anchor and its Spark worker."""
    anchor = int((SHARED / f"anchor.{host}").read_text())
    return [f"{pid}: {line[:200]}" for pid, line in _cmdlines(host).items()
            if pid != anchor and "org.apache.spark.deploy.worker.Worker" not in line]


def _executors(host: str) -> dict[int, int]:
    """The topology's executor processes on ``host``: gid -> pid."""
    found = {}
    for pid, line in _cmdlines(host).items():
        if "sparkstorm.engine.executor.main" in line and "--gid" in line:
            found[int(line.split("--gid")[1].split()[0])] = pid
    return found


def _has_worker(host: str) -> bool:
    return any("org.apache.spark.deploy.worker.Worker" in line
               for line in _cmdlines(host).values())


def _ensure_workers(hosts: TestHosts) -> None:
    """A Spark worker on B and on C (a test before may have killed a host)."""
    for host in ("B", "C"):
        if not _has_worker(host):
            started = hosts.script("spark-worker", host, timeout=240)
            assert started.returncode == 0, started.stderr


def _nothing_left(hosts: TestHosts, folders: tuple[str, ...] = ("B", "C")) -> None:
    """No process of the application on B or C, no folder of ours on hosts ``folders``."""
    wait_for(lambda: _ours("B") == [] and _ours("C") == [], 90,
             message=f"the application gone from B and C: {_ours('B') + _ours('C')}")
    for host in folders:
        listing = hosts.run(host, "sh", "-c", "ls -a /tmp").stdout.split()
        ours = [n for n in listing if n.startswith("sparkstorm-") and n != SHARED.name]
        assert not ours, (host, listing)


def _link(host: str, state: str) -> None:
    subprocess.run(["ip", "-n", f"{PREFIX}{host}", "link", "set", "eth0", state], check=True,
                   timeout=10)


# -- the application --------------------------------------------------------------------
class App:
    """One ``sparkstorm spark-submit`` from host A, its log, and the processes it started."""

    def __init__(self, hosts: TestHosts, topology: Path, log: Path, *conf: str) -> None:
        self.log = log
        command = ["bash", str(SCRIPT), "exec", "A", sys.executable, "-m",
                   "sparkstorm.cli.main", "spark-submit", str(topology), "--master", MASTER,
                   "--staging", str(SHARED / f"staging-{log.stem}"),
                   *[arg for item in (*CONF, *conf) for arg in ("-c", item)]]
        with log.open("ab") as out:
            self.process = subprocess.Popen(command, env=hosts.env, cwd=ROOT, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def tail(self) -> str:
        return self.text()[-8000:]

    def running(self) -> None:
        assert self.process.poll() is None, self.tail()

    def reports(self) -> list[tuple[int, str, list[int], str]]:
        """Every report the driver took: (share, run, executors, host)."""
        return [(int(s), run, [int(g) for g in gids.split(", ") if g], host)
                for s, run, gids, host in REPORT.findall(self.text())]

    def share_hosts(self) -> dict[int, str]:
        """Where each share reported last."""
        return {share: host for share, _, _, host in self.reports()}

    def wait(self, condition: Callable[[], Any], timeout: float, message: str) -> Any:
        def met() -> Any:
            self.running()
            return condition()

        try:
            return wait_for(met, timeout, interval=0.25, message=message)
        except TimeoutError as exc:
            msg = f"{exc}\n{self.tail()}"
            raise AssertionError(msg) from exc

    def python_driver(self) -> psutil.Process:
        for child in psutil.Process(self.process.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                cmdline = child.cmdline()
                if ("python" in Path(cmdline[0]).name
                        and any(a.endswith("spark_app/__main__.py") for a in cmdline)):
                    return child
        msg = "no Python driver among the command's processes"
        raise AssertionError(msg)

    def drain(self) -> int:
        """SIGTERM to the Python driver; its exit code."""
        self.python_driver().send_signal(signal.SIGTERM)
        return self.process.wait(180)

    def kill9(self) -> None:
        """SIGKILL to everything the command started (spark-submit's JVM, the driver).

        The JVM and the Python driver run in a process group of their own.
        """
        if self.process.poll() is not None:
            return
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(self.process.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)


@contextlib.contextmanager
def application(hosts: TestHosts, topology: Path, log: Path, *conf: str,
                folders: tuple[str, ...] = ("B", "C")) -> Iterator[App]:
    """An application; killed at the end if still running, and gone from B and C.

    Its folders are checked gone from the hosts ``folders``: hosting tasks killed with -9
    (their host killed, or the driver) leave theirs in the host's ``/tmp``, which the next
    share started on that host removes.
    """
    _ensure_workers(hosts)
    app = App(hosts, topology, log, *conf)
    try:
        yield app
    finally:
        app.kill9()
    _nothing_left(hosts, folders=folders)


def _acked(results: Path) -> set[int]:
    return {a["id"] for a in acks(results)}


def _every_id_once(app: App, results: Path, count: int) -> None:
    app.wait(lambda: len(_acked(results)) >= count, 300, "every id acked")
    counted = Counter(a["id"] for a in acks(results))
    assert set(counted) == set(range(count))
    assert [i for i, n in counted.items() if n > 1] == [], "ids acked twice"
    assert sink_ids(results) >= set(range(count)), "ids the sink never saw"


def _exact_counts(app: App, store: CheckpointStore, count: int) -> int:
    """Wait for a committed checkpoint with every id acked; its counts exact; its window."""
    expected = expected_counts(count)
    window, acked, counts = app.wait(
        lambda: (c := committed(store)) and len(c[1]) == count and c, 300,
        "a checkpoint with every id acked")
    assert acked == set(range(count)) and counts == expected, (counts, expected)
    assert window is not None
    return int(window)


def _figure(name: str, seconds: float) -> None:
    print(f"\nFIGURE {name}: {seconds:.1f} s", file=sys.stderr)


# -- the tests --------------------------------------------------------------------------
def test_a_killed_executor_process_restarts_where_it_was(fault_hosts: TestHosts,
                                                          tmp_path: Path) -> None:
    count = 900
    results = SHARED / "executor-kill"
    results.mkdir(parents=True)
    with application(fault_hosts, CHAOS, tmp_path / "executor-kill.log",
                     f"chaos.dir={results}", f"chaos.count={count}",
                     "topology.checkpoint.windows=5",
                     f"topology.checkpoint.dir={SHARED / 'cp-executor-kill'}") as app:
        app.wait(lambda: len(_acked(results)) >= 100, 300, "ids acked through both hosts")
        assert app.share_hosts() == {0: HOST_B, 1: HOST_C}
        assert len(_acked(results)) < count, "ids are still to come"
        victim, pid = max(_executors("C").items())  # a sink executor
        before = len(app.reports())
        os.kill(pid, signal.SIGKILL)
        killed = time.time()
        moved = app.wait(lambda: (e := _executors("C")).get(victim, pid) != pid and e, 60,
                         f"executor {victim} restarted on C")
        app.wait(lambda: len(app.reports()) > before, 30, "the share reported again")
        share, _, gids, host = app.reports()[-1]
        assert (share, host) == (1, HOST_C) and victim in gids, "restarted where it was"
        app.wait(lambda: "rolled back to checkpoint" in app.text(), 60, "a rollback")
        _every_id_once(app, results, count)
        _figure("executor kill to acks resuming", longest_ack_pause(results, killed))
        assert moved[victim] != pid
        assert app.drain() == 0, app.tail()


def test_a_host_cut_off_is_given_up_and_its_share_hosted_elsewhere(
        fault_hosts: TestHosts, tmp_path: Path) -> None:
    count, checkpoint_id = 5000, "sf-cut"
    root = SHARED / "cp-cut"
    store = CheckpointStore(str(root), checkpoint_id)
    with application(fault_hosts, PACED, tmp_path / "link-cut.log", f"paced.count={count}",
                     "paced.rate=100", "topology.checkpoint.windows=5",
                     "topology.max.spout.pending=400", f"topology.checkpoint.id={checkpoint_id}",
                     f"topology.checkpoint.dir={root}") as app:
        app.wait(lambda: committed(store)[0], 300, "a checkpoint committed")
        assert app.share_hosts() == {0: HOST_B, 1: HOST_C}
        on_c = _executors("C")
        assert on_c, "executors on C"
        _link("C", "down")
        cut = time.monotonic()
        try:
            app.wait(lambda: "share 1 (run" in app.text() and "given up" in app.text(), 60,
                     "the driver gives C's share up")
            given_up = time.monotonic() - cut
            app.wait(lambda: app.share_hosts().get(1) == HOST_B, 120,
                     "C's share hosted on B")
            hosted_again = time.monotonic() - cut
            assert "cancelling the windows in flight" in app.text(), app.tail()
            progress = app.wait(lambda: (c := committed(store)[0]) is not None and c, 60,
                                "a checkpoint")
            app.wait(lambda: (committed(store)[0] or 0) > progress, 50,
                     "checkpoints commit again while C is still cut off")
            resumed = time.monotonic() - cut
            wait_for(lambda: not set(on_c.values()) & set(_executors("C").values()), 60,
                     message="C's executor processes stopped themselves")
            stopped = time.monotonic() - cut
            assert _executors("C") == {}, "no executor process on C"
            time.sleep(max(0.0, cut + 60 - time.monotonic()))  # the cut lasts 60 s
        finally:
            _link("C", "up")
        _figure("link cut to the share given up", given_up)
        _figure("link cut to C's executors stopped", stopped)
        _figure("link cut to the share reported from B", hosted_again)
        _figure("link cut to checkpoints committing again (link still down)", resumed)
        window = _exact_counts(app, store, count)
        assert window > 0
        assert _executors("C") == {}, "nothing of C's old share runs after the link returns"
        assert "rolled back to checkpoint" in app.text()
        assert app.drain() == 0, app.tail()


def test_a_killed_driver_resumes_from_the_committed_checkpoint(fault_hosts: TestHosts,
                                                               tmp_path: Path) -> None:
    count, checkpoint_id = 3000, "sf-resume"
    root = SHARED / "cp-resume"
    store = CheckpointStore(str(root), checkpoint_id)
    conf = (f"paced.count={count}", "paced.rate=100", "topology.checkpoint.windows=5",
            "topology.max.spout.pending=400", f"topology.checkpoint.id={checkpoint_id}",
            f"topology.checkpoint.dir={root}")
    with application(fault_hosts, PACED, tmp_path / "driver-first.log", *conf,
                     folders=()) as first:
        committed = first.wait(lambda: committed(store)[0], 300, "a checkpoint committed")
        assert len(committed(store)[1]) < count, "ids are still to come"
        first.kill9()
        killed = time.monotonic()
    _figure("driver kill to nothing left on B and C", time.monotonic() - killed)
    with application(fault_hosts, PACED, tmp_path / "driver-second.log", *conf) as second:
        rolled = second.wait(
            lambda: re.search(r"rolled back to checkpoint (\d+)", second.text()), 300,
            "the restarted application resumed from the committed checkpoint")
        assert int(rolled.group(1)) >= committed
        _figure("driver kill to the restarted driver rolled back", time.monotonic() - killed)
        _exact_counts(second, store, count)
        assert second.drain() == 0, second.tail()
    # (the first application's folders on B and C went with the second's start there)


def _spark_executor_jvms(host: str) -> list[int]:
    return [pid for pid, line in _cmdlines(host).items()
            if "CoarseGrainedExecutorBackend" in line]


def test_no_number_of_host_losses_ends_the_topology(fault_hosts: TestHosts,
                                                    tmp_path: Path) -> None:
    count = 4800
    results = SHARED / "host-kill"
    results.mkdir(parents=True)
    with application(fault_hosts, CHAOS, tmp_path / "host-kill.log", f"chaos.dir={results}",
                     f"chaos.count={count}", "spark.task.maxFailures=1",
                     "topology.executor.answer.timeout.secs=10",
                     folders=("C",)) as app:  # B is killed last: no share starts there
        app.wait(lambda: len(_acked(results)) >= 100, 300, "ids acked through both hosts")
        assert app.share_hosts() == {0: HOST_B, 1: HOST_C}

        # 1. C killed whole: Spark reruns its hosting task on B (a lost worker's tasks do
        # not count towards spark.task.maxFailures)
        killed = fault_hosts.script("kill-host", "C", timeout=60)
        assert killed.returncode == 0, killed.stderr
        c_lost = time.time()
        app.wait(lambda: app.share_hosts() == {0: HOST_B, 1: HOST_B}, 120,
                 "Spark reran C's hosting task on B")
        _figure("host C killed to its share reported from B", time.time() - c_lost)
        app.wait(lambda: max((a["time"] for a in acks(results)), default=0) > c_lost + 2, 120,
                 "acks after C was lost")
        _figure("host C killed: longest pause of acks", longest_ack_pause(results, c_lost))
        assert "started again" not in app.text(), "Spark reran it: no restart by the driver"

        # 2. C comes back, then B is killed whole: both shares go to C
        started = fault_hosts.script("spark-worker", "C", timeout=240)
        assert started.returncode == 0, started.stderr
        app.wait(lambda: "Successfully registered with driver" in fault_hosts.run(
            "C", "sh", "-c", "cat /tmp/spark-work/*/*/stderr", timeout=30).stdout, 120,
                 "a Spark executor on C registered with the driver")
        assert len(_acked(results)) < count, "ids are still to come"
        killed = fault_hosts.script("kill-host", "B", timeout=60)
        assert killed.returncode == 0, killed.stderr
        b_lost = time.time()
        app.wait(lambda: app.share_hosts() == {0: HOST_C, 1: HOST_C}, 180,
                 "both shares on C")
        _figure("host B killed to both shares reported from C", time.time() - b_lost)
        app.wait(lambda: max((a["time"] for a in acks(results)), default=0) > b_lost + 2, 120,
                 "acks after B was lost")
        _figure("host B killed: longest pause of acks", longest_ack_pause(results, b_lost))

        # 3. the Spark executor on C killed -9: a failure that counts, so Spark gives up on
        # both hosting tasks (maxFailures 1) and the driver starts both shares again
        assert len(_acked(results)) < count, "ids are still to come"
        before = len(app.reports())
        (jvm,) = _spark_executor_jvms("C")
        os.kill(jvm, signal.SIGKILL)
        jvm_lost = time.time()
        gave_up = app.wait(lambda: {int(m) for m in re.findall(
            r"share (\d) started again \(hosting job \d+, on [^)]*\): Spark gave up on its "
            r"task", app.text())} == {0, 1}, 120, "the driver started both shares again")
        assert gave_up
        app.wait(lambda: {s for s, _, _, _ in app.reports()[before:]} == {0, 1}, 180,
                 "both shares reported again")
        _figure("executor JVM killed to both shares reported again", time.time() - jvm_lost)
        _every_id_once(app, results, count)
        _figure("executor JVM killed: longest pause of acks",
                longest_ack_pause(results, jvm_lost))
        assert app.drain() == 0, app.tail()
