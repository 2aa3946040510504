"""Executor hosting benchmark: supervisor-launched workers against Spark-hosted executors.

Issue 10 §1 asks to choose between (a) executors hosted by worker processes that
supervisors launch on the hosts and (b) executors hosted by the topology's Spark application
itself as long-running tasks (``_spark_hosting``, a benchmark-only prototype). Needs root
(network namespaces: ``scripts/test-hosts.sh``). In one run, on the same test hosts and the
same Spark cluster (a master on A; a worker on B pinned to CPU 0 and one on C pinned to CPU
1, each offering 3 task slots):

1. **supervisor**: ``WordCountScaling``'s executors in two ``sparkstorm.testing.spread host``
   processes (what a supervisor-launched worker runs), on B (``taskset -c 0``) and C
   (``taskset -c 1``); the driver on A; the application takes 2 slots per host
   (``spark.executor.cores=2``);
2. **spark**: the same, the executors hosted by the driver's application: one long-running
   task per host holds a slot, so it takes 3 (2 left for windows, as in 1);
3. **spark, host loss** (``spark-loss``): as 2; once 40 % of the trees are acked, every
   process on host C is killed (its Spark worker, executor, hosting task and executors):
   Spark reruns C's hosting task on B, which reports the moved executors' endpoints; the run
   goes on to the end. The kernel closes the dead processes' connections, so Spark learns
   of the loss at once, as after a crash of the processes;
4. **spark, host cut off** (``spark-cut``): as 3, but C's link is cut first, so nothing
   tells the others (a machine that lost power or network): Spark learns of the loss from
   missing heartbeats (``spark.network.timeout``, 120 s by default).

Each run emits ``2 * --sentences`` sentences. Printed per run: start-up (launch to Spark
executors up, to every executor's endpoint known, to the first window's end), steady
sentences/s between 20 % and 80 % of the acked trees, the steady windows' median period
(start to start) and latency (start to end), the host-local share of executor calls and the
bytes across hosts per tuple (``engine/spark/locality.py``); for 3 and 4: the time from the kill
to the moved executors' report and to the acked count growing again, and whether the acks
reached the run's total (replayed and re-emitted sentences count too: not "every id once").

The supervisor way's recovery from a host loss is Nimbus's (``nimbus.task.timeout.secs``,
then the supervisor's launch): ``tests/integration/hosts/test_host_loss.py`` runs it, not
this benchmark (the ``spread`` harness has no Nimbus).

Run (as root): ``PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/hosting.py
--sentences 300000`` with ``TEST_HOSTS_SUBNET``/``_BRIDGE``/``_PREFIX``/``_DIR``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from scaling import ADDRESS, CPU, PREFIX, ROOT, SCRIPT, SHARED, TOPOLOGY, crossing, script

STEADY_FROM, STEADY_TO = 0.2, 0.8
KILL_AT = 0.4
SLOTS_PER_WORKER = 3
WINDOW_SLOTS = 2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=300_000,
                        help="sentences per spout task (two spout tasks)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--runs", default="supervisor,spark,spark-loss",
                        help="which runs, comma-separated: supervisor[-N], spark[-N], spark-loss, "
                             "spark-cut (C comes back after these)")
    parser.add_argument("--logs", type=Path, default=None,
                        help="copy each run's driver and host logs into this folder")
    return parser.parse_args(argv)


def on_host(host: str, argv: list[str], log: Path, cpu: str | None = None
            ) -> subprocess.Popen[bytes]:
    """``python ARGV`` on test host ``host`` in the background (pinned to ``cpu``)."""
    pin = ["taskset", "-c", cpu] if cpu is not None else []
    env = {**os.environ, "PYTHON": sys.executable, "TEST_HOSTS_DIR": str(SHARED),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "benchmarks")])}
    with log.open("wb") as out:
        return subprocess.Popen(["bash", str(SCRIPT), "exec", host, *pin, sys.executable,
                                 *argv], env=env, cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def run(name: str, hosting: str, args: argparse.Namespace, kill: bool = False
        ) -> dict[str, Any]:
    """One run of the word count with executors hosted the ``hosting`` way; its figures."""
    folder = SHARED / f"hosting-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    total = 2 * args.sentences
    token = secrets.token_hex(16)
    common = ["--topology", TOPOLOGY, "--dir", str(folder), "--name", f"hosting-{name}",
              "--token", token, "-c", f"bench.sentences={args.sentences}"]
    slots = WINDOW_SLOTS + (1 if hosting == "spark" else 0)
    processes: list[subprocess.Popen[bytes]] = []
    launched = time.time()
    kill_time = None
    try:
        if hosting == "supervisor":
            for index, host in enumerate(["B", "C"]):
                processes.append(on_host(host, [
                    "-m", "sparkstorm.testing.spread", "host", *common, "--share",
                    f"{index}/2", "-c", f"storm.local.hostname={ADDRESS[host]}"],
                    folder / f"host-{host}.log", CPU[host]))
        driver = on_host("A", [
            str(ROOT / "benchmarks" / "_hosting_driver.py"), "--hosting", hosting, *common,
            "--shares", "2", "--until-acked", str(total), "--seconds", str(args.timeout),
            "--launched", repr(launched),
            "-c", f"spark.master=spark://{ADDRESS['A']}:7077",
            "-c", f"spark.driver.host={ADDRESS['A']}", "-c", "spark.executor.memory=1g",
            "-c", f"spark.executor.cores={slots}",
            "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}{os.pathsep}{ROOT / 'benchmarks'}",
            "-c", "topology.stats.window.count=100000"], folder / "driver.log")
        processes.append(driver)
        if kill:
            kill_time = _kill_when_acked(folder, driver, KILL_AT * total, args.timeout,
                                         cut=name.endswith("-cut"))
        if driver.wait(args.timeout + 300) != 0:
            msg = f"{name}: driver failed: {(folder / 'driver.log').read_text()[-3000:]}"
            raise RuntimeError(msg)
    finally:
        (folder / "stop").touch()
        for process in processes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        if args.logs is not None:
            shutil.copytree(folder, args.logs / name, dirs_exist_ok=True)
    return figures(folder, total, kill_time)


def _kill_when_acked(folder: Path, driver: subprocess.Popen[bytes], acked: float,
                     timeout: float, cut: bool = False) -> float:
    """Kill every process on host C once ``acked`` trees are acked; when it was killed.

    With ``cut``, C's link to the bridge goes down first: no reset reaches the other hosts.

    Raises:
        RuntimeError: the driver ended first, or nothing reached ``acked`` in ``timeout``.
    """
    deadline = time.monotonic() + timeout
    progress = folder / "progress.jsonl"
    while time.monotonic() < deadline and driver.poll() is None:
        lines = progress.read_text().splitlines() if progress.exists() else []
        if lines and json.loads(lines[-1])["acked"] >= acked:
            killed = time.time()
            if cut:
                subprocess.run(["ip", "link", "set", f"{PREFIX}vC", "down"], check=True,
                               timeout=10)
            print(script("kill-host", "C").strip(), flush=True)
            return killed
        time.sleep(0.1)
    msg = f"the run never acked {acked:.0f} trees before the kill (driver: {driver.poll()})"
    raise RuntimeError(msg)


def figures(folder: Path, total: int, kill_time: float | None) -> dict[str, Any]:
    """Start-up, steady throughput, window period and latency, locality of one run."""
    polls = [json.loads(line) for line in (folder / "progress.jsonl").read_text().splitlines()]
    stats = json.loads((folder / "stats.json").read_text())
    events = json.loads((folder / "events.json").read_text())
    launched = events["launched"]
    begin, end = crossing(polls, STEADY_FROM * total), crossing(polls, STEADY_TO * total)
    windows = [w for w in stats["recent_windows"] if begin <= w["started"] <= end]
    calls = sum(w["locality"]["calls"] for w in windows)
    local = sum(w["locality"]["host_local_calls"] for w in windows)
    starts = [w["started"] for w in windows]
    result = {
        "acked": max(p["acked"] for p in polls),
        "spark_up_s": events["spark_ready"] - launched,
        "endpoints_known_s": events["endpoints_ready"] - launched,
        "first_window_end_s": events["first_window"] - launched,
        "steady_sentences_per_s": (STEADY_TO - STEADY_FROM) * total / max(end - begin, 1e-9),
        "steady_windows": len(windows),
        "window_period_median_s": (statistics.median(b - a for a, b in itertools.pairwise(starts))
                                   if len(starts) > 1 else None),
        "window_latency_median_s": (statistics.median(w["seconds"] for w in windows)
                                    if windows else None),
        "steady_host_local_share": local / calls if calls else None,
        "run_host_local_share": stats["locality"]["host_local_share"],
        "call_bytes_across_per_tuple": stats["locality"]["crossed_bytes_per_tuple"],
        "executor_restarts": stats.get("executor_restarts"),
    }
    if kill_time is not None:
        result.update(recovery(polls, events, kill_time, total))
    return result


def recovery(polls: list[dict[str, Any]], events: dict[str, Any], killed: float,
             total: int) -> dict[str, Any]:
    """How long the host loss held the run up."""
    at_kill = max((p["acked"] for p in polls if p["time"] <= killed), default=0)
    moved = [t for t, _share, _host in events.get("reports", []) if t > killed]
    grown = [p["time"] for p in polls if p["time"] > killed and p["acked"] > at_kill]
    # a window's worth of new acks (not the tail of windows that ran before the kill)
    resumed = [p["time"] for p in polls if p["time"] > killed
               and p["acked"] >= at_kill + 0.05 * total]
    return {
        "acked_at_kill": at_kill,
        "moved_share_reported_after_s": (min(moved) - killed) if moved else None,
        "moved_to": [host for t, _share, host in events.get("reports", []) if t > killed],
        "first_ack_after_kill_s": (min(grown) - killed) if grown else None,
        "five_pct_more_acked_after_s": (min(resumed) - killed) if resumed else None,
        "acks_reached_total": max(p["acked"] for p in polls) >= total,  # replays included
    }


def main(argv: list[str] | None = None) -> int:
    """Every run on one set of test hosts, then the table."""
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("hosting.py needs root (network namespaces for the test hosts)", file=sys.stderr)
        return 2
    os.environ["TEST_HOSTS_CORES"] = str(SLOTS_PER_WORKER)
    script("down", check=False)  # a run killed before its clean-up; fails when none was
    results: dict[str, dict[str, Any]] = {}
    try:
        print(script("up", timeout=60).strip(), flush=True)
        print(script("spark-master").strip(), flush=True)
        print(script("spark-worker", "B", CPU["B"]).strip(), flush=True)
        print(script("spark-worker", "C", CPU["C"]).strip(), flush=True)
        for name in args.runs.split(","):
            hosting = "supervisor" if name.startswith("supervisor") else "spark"
            load_before = os.getloadavg()[0]
            results[name] = run(name, hosting, args,
                                kill=name.endswith(("-loss", "-cut")))
            results[name]["load"] = [load_before, os.getloadavg()[0]]
            print(f"{name}:", json.dumps(results[name]), flush=True)
            if name.endswith(("-loss", "-cut")):  # host C back, for the runs after it
                subprocess.run(["ip", "link", "set", f"{PREFIX}vC", "up"], check=True,
                               timeout=10)
                print(script("spark-worker", "C", CPU["C"]).strip(), flush=True)
    finally:
        script("down", timeout=120)
        shutil.rmtree(SHARED, ignore_errors=True)
    table(results)
    return 0


def table(results: dict[str, dict[str, Any]]) -> None:
    """The runs side by side."""
    keys = sorted({k for r in results.values() for k in r if k != "moved_to"},
                  key=lambda k: list(next(iter(results.values()))).index(k)
                  if k in next(iter(results.values())) else 99)
    print(f"\n{'':32}" + "".join(f"{name:>16}" for name in results))
    for key in keys:
        print(f"{key:32}" + "".join(f"{_cell(r.get(key)):>16}" for r in results.values()))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool | list):
        return str(value)
    return f"{value:,.3f}" if value < 10 else f"{value:,.0f}"  # noqa: PLR2004 - layout


if __name__ == "__main__":
    sys.exit(main())
