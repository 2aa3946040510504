"""Scaling benchmark: the word count on one test host with one core, then on two.

Needs root (network namespaces: ``scripts/test-hosts.sh``). In one run:

1. test hosts A, B, C; a Spark standalone master on A;
2. **one host**: a Spark worker on B pinned to CPU 0 (``taskset``, inherited by its
   executor and Python workers), every executor of ``WordCountScaling`` (2 spouts, 2 splits,
   2 counts) on B, also pinned to CPU 0 (``sparkstorm.testing.spread host`` under
   ``taskset -c 0``), the driver on A;
3. **two hosts**: a Spark worker on C pinned to CPU 1 joins; the executors are dealt over B
   (CPU 0) and C (CPU 1), one of each component on each; the driver on A.

The driver (host A) is not pinned: it is the same in both runs, and it shares the machine's
two cores with them. Each run emits ``2 * --sentences`` sentences; its steady state is the
part between 20 % and 80 % of the acked sentences. Printed per run: steady sentences/s, the
share of executor calls that were host-local in the steady state, the bytes executor calls
sent across hosts per transferred tuple, and the bytes Spark's shuffle fetched across hosts
per transferred tuple (the driver's Spark UI); then the ratio of the two runs' throughput
(target at least 1.7).

Run (as root): ``cd /work/main && .venv/bin/python benchmarks/scaling.py --sentences 150000``
with ``TEST_HOSTS_SUBNET``/``_BRIDGE``/``_PREFIX``/``_DIR`` to keep off other test hosts.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test-hosts.sh"
SHARED = Path(os.environ.get("TEST_HOSTS_DIR", "/tmp/sparkstorm-hosts"))
SUBNET = os.environ.get("TEST_HOSTS_SUBNET", "10.77.0")
ADDRESS = {"A": f"{SUBNET}.1", "B": f"{SUBNET}.2", "C": f"{SUBNET}.3"}
CPU = {"B": "0", "C": "1"}
TOPOLOGY = "_wordcount_topology:WordCountScaling"
STEADY_FROM, STEADY_TO = 0.2, 0.8
TARGET_RATIO = 1.7


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=150_000,
                        help="sentences per spout task (two spout tasks)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--window-ms", type=int, default=None, help="topology.window.ms")
    parser.add_argument("--buffer", type=int, default=None,
                        help="topology.spout.buffer.size (sentences a spout task takes per window)")
    return parser.parse_args(argv)


def script(*args: str, timeout: float = 300, check: bool = True) -> str:
    """``scripts/test-hosts.sh ARGS``; its output.

    Raises:
        RuntimeError: it failed (with ``check``).
    """
    env = {**os.environ, "PYTHON": sys.executable, "TEST_HOSTS_DIR": str(SHARED)}
    done = subprocess.run(["bash", str(SCRIPT), *args], env=env, cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        msg = f"test-hosts.sh {' '.join(args)} failed: {done.stderr.strip()}"
        raise RuntimeError(msg)
    return done.stdout


def spread(host: str, args: list[str], log: Path, cpu: str | None) -> subprocess.Popen[bytes]:
    """``sparkstorm.testing.spread ARGS`` on ``host`` in the background (pinned to ``cpu``)."""
    pin = ["taskset", "-c", cpu] if cpu is not None else []
    env = {**os.environ, "PYTHON": sys.executable, "TEST_HOSTS_DIR": str(SHARED),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "benchmarks")])}
    with log.open("wb") as out:
        return subprocess.Popen(
            ["bash", str(SCRIPT), "exec", host, *pin, sys.executable, "-m",
             "sparkstorm.testing.spread", *args], env=env, cwd=ROOT, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True)


def run(name: str, hosts: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """One run of the word count with its executors on ``hosts``; its figures."""
    folder = SHARED / f"scaling-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    total = 2 * args.sentences
    common = ["--topology", TOPOLOGY, "--dir", str(folder), "--name", f"scaling-{name}",
              "--token", secrets.token_hex(16), "-c", f"bench.sentences={args.sentences}"]
    if args.window_ms is not None:
        common += ["-c", f"topology.window.ms={args.window_ms}"]
    if args.buffer is not None:
        common += ["-c", f"topology.spout.buffer.size={args.buffer}"]
    processes = []
    load_before = os.getloadavg()[0]
    try:
        for index, host in enumerate(hosts):
            processes.append(spread(host, [
                "host", *common, "--share", f"{index}/{len(hosts)}",
                "-c", f"storm.local.hostname={ADDRESS[host]}"], folder / f"host-{host}.log",
                CPU[host]))
        driver = spread("A", [
            "driver", *common, "--shares", str(len(hosts)), "--until-acked", str(total),
            "--seconds", str(args.timeout), "-c", f"spark.master=spark://{ADDRESS['A']}:7077",
            "-c", f"spark.driver.host={ADDRESS['A']}", "-c", "spark.executor.memory=1g",
            "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}{os.pathsep}{ROOT / 'benchmarks'}",
            "-c", "topology.stats.window.count=100000"], folder / "driver.log", None)
        processes.append(driver)
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
    # the machine's other work shares the two cores: say how busy it was
    return {**figures(folder, total), "load_before": load_before,
            "load_after": os.getloadavg()[0]}


def figures(folder: Path, total: int) -> dict[str, Any]:
    """Steady-state throughput and locality of one run from the driver's files."""
    polls = [json.loads(line) for line in (folder / "progress.jsonl").read_text().splitlines()]
    stats = json.loads((folder / "stats.json").read_text())
    begin, end = crossing(polls, STEADY_FROM * total), crossing(polls, STEADY_TO * total)
    windows = [w for w in stats["recent_windows"] if begin <= w["started"] <= end]
    calls = sum(w["locality"]["calls"] for w in windows)
    local = sum(w["locality"]["host_local_calls"] for w in windows)
    transferred = stats["locality"]["tuples"]
    shuffle = stats.get("shuffle_remote_bytes")
    return {
        "acked": max(p["acked"] for p in polls),
        "steady_sentences_per_s": (STEADY_TO - STEADY_FROM) * total / max(end - begin, 1e-9),
        "steady_windows": len(windows),
        "steady_window_median_s": (sorted(w["seconds"] for w in windows)[len(windows) // 2]
                                   if windows else None),
        "steady_host_local_share": local / calls if calls else None,
        "run_host_local_share": stats["locality"]["host_local_share"],
        "call_bytes_across_per_tuple": stats["locality"]["crossed_bytes_per_tuple"],
        "shuffle_bytes_across_per_tuple": (shuffle / transferred
                                           if shuffle is not None and transferred else None),
        "shuffle_bytes_across": shuffle,
    }


def crossing(polls: list[dict[str, Any]], target: float) -> float:
    """When the acked count crossed ``target`` (epoch seconds, linear between polls)."""
    previous = polls[0]
    for poll in polls:
        if poll["acked"] >= target:
            if poll["acked"] == previous["acked"]:
                return float(poll["time"])
            share = (target - previous["acked"]) / (poll["acked"] - previous["acked"])
            return float(previous["time"] + share * (poll["time"] - previous["time"]))
        previous = poll
    return float(polls[-1]["time"])


def main(argv: list[str] | None = None) -> int:
    """Both runs, then the table and the ratio."""
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("scaling.py needs root (network namespaces for the test hosts)", file=sys.stderr)
        return 2
    script("down", check=False)  # a run killed before its clean-up; fails when none was
    try:
        print(script("up", timeout=60).strip(), flush=True)
        print(script("spark-master").strip(), flush=True)
        print(script("spark-worker", "B", CPU["B"]).strip(), flush=True)
        one = run("one-host", ["B"], args)
        print("one host (B, CPU 0):", json.dumps(one), flush=True)
        print(script("spark-worker", "C", CPU["C"]).strip(), flush=True)
        two = run("two-hosts", ["B", "C"], args)
        print("two hosts (B CPU 0, C CPU 1):", json.dumps(two), flush=True)
    finally:
        script("down", timeout=120)
        shutil.rmtree(SHARED, ignore_errors=True)
    ratio = two["steady_sentences_per_s"] / one["steady_sentences_per_s"]
    print(f"\n{'':32}{'one host':>14}{'two hosts':>14}")
    for key in ("steady_sentences_per_s", "steady_host_local_share",
                "call_bytes_across_per_tuple", "shuffle_bytes_across_per_tuple"):
        print(f"{key:32}{_cell(one[key]):>14}{_cell(two[key]):>14}")
    verdict = "meets" if ratio >= TARGET_RATIO else "misses"
    print(f"throughput ratio two/one: {ratio:.2f} ({verdict} the {TARGET_RATIO} target)")
    return 0


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.3f}" if value < 10 else f"{value:,.0f}"  # noqa: PLR2004 - layout


if __name__ == "__main__":
    sys.exit(main())
