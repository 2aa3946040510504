"""Scaling benchmark: the word count on one test host with one core, then on two.

Needs root (network namespaces: ``scripts/test-hosts.sh``). In one run:

1. test hosts A, B, C; a Spark standalone master on A;
2. **one host**: a Spark worker on B pinned to CPU 0 (``taskset``, inherited by its
   executor and Python workers), every executor of ``WordCountScaling`` (2 spouts, 2 splits,
   2 counts) on B, also pinned to CPU 0 (``sparkstorm.testing.spread host`` under
   ``taskset -c 0``), the driver on A;
3. **two hosts**: a Spark worker on C pinned to CPU 1 joins; the executors are dealt over B
   (CPU 0) and C (CPU 1), one of each component on each; the driver on A.

The driver (host A: its Python process, its Spark JVM and the Spark master) is pinned to
``--driver-cpu`` (default CPU 0, B's) in both runs, so that the one-host run cannot borrow
the core the two-host run gives C: the only difference between the runs is C's core
(``--driver-cpu none`` leaves it unpinned, as the first runs did). ``--pairs N`` runs
one host, two hosts, N times in turn (C's Spark worker is taken away for each one-host run,
so no task of it runs on C), and prints each pair's ratio and their median: the other
engineers' load on the machine changes from minute to minute.

Core seconds of each host's processes (everything in its network namespace) and of each
CPU in the steady span come from ``_host_cpu``: what the run used, and what the rest of the
machine took from the same CPUs.

Each run emits ``2 * --sentences`` sentences; its steady state is the part between 50 %
and 95 % of the acked sentences (``--steady FROM TO``). Each run starts its own Spark
application, so its executor JVMs are new: their JIT compilers took 2.7–3.5 core seconds
per host in a 20–80 % span of a 1,200,000-sentence run, most of it in the first fifth of
the acks (the run prints the JIT's core seconds per tenth of the acks); a late span of a
long run leaves that warm-up out, as a topology that runs for hours would.

The machine's CPUs change speed from minute to minute (``_cpu_speed``): a probe on each CPU
times a plain-Python word count beside every run, and each pair's ratio is also printed at
equal CPU speed (the throughput ratio divided by the ratio of the probes' mean speeds on
the CPUs each run used: CPU 0 for one host, CPUs 0 and 1 for two).

Printed per run: steady sentences/s, the share of executor calls that were host-local in
the steady state, the bytes executor calls sent across hosts per transferred tuple, the
bytes Spark's shuffle fetched across hosts per transferred tuple (the driver's Spark UI),
the core seconds; then each pair's throughput ratio and their median (target at least 1.7).

``--fixed-windows N`` (default 30,000; 0: the sizer on) gives both runs the same windows (N
sentences per spout task, the window sizer off), so that their steady spans hold the same
number of windows of the same fixed cost; with the sizer on, each run grows its windows to
its own throughput.

Run (as root): ``cd /work/main && PYTHONPATH=src:benchmarks .venv/bin/python
benchmarks/scaling.py`` (the defaults are the recorded measurement's: three pairs of
4,000,000-sentence runs, about 30 minutes)
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
import time
from pathlib import Path
from typing import Any

from _cpu_speed import CpuSpeedProbe, mean_speed, wait_for_readings
from _host_cpu import HostCpuSampler, namespace_pids

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test-hosts.sh"
SHARED = Path(os.environ.get("TEST_HOSTS_DIR", "/tmp/sparkstorm-hosts"))
SUBNET = os.environ.get("TEST_HOSTS_SUBNET", "10.77.0")
ADDRESS = {"A": f"{SUBNET}.1", "B": f"{SUBNET}.2", "C": f"{SUBNET}.3"}
CPU = {"B": "0", "C": "1"}
PREFIX = os.environ.get("TEST_HOSTS_PREFIX", "ss")
NAMESPACES = {host: f"{PREFIX}{host}" for host in ("A", "B", "C")}
TOPOLOGY = "_wordcount_topology:WordCountScaling"
STEADY_FROM, STEADY_TO = 0.5, 0.95
"""The steady span's default bounds, as shares of the run's acked sentences."""
JIT_THREADS = ":jvm thread:C# CompilerThre"
"""The executor JVMs' JIT compiler threads (C1 and C2), as ``_host_cpu`` names them."""
TARGET_RATIO = 1.7
SHOWN_THREAD_SECONDS = 0.1
"""A JVM thread's row is printed from this many core seconds in either run."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=2_000_000,
                        help="sentences per spout task (two spout tasks)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--window-ms", type=int, default=None, help="topology.window.ms")
    parser.add_argument("--buffer", type=int, default=None,
                        help="topology.spout.buffer.size (sentences a spout task takes per window)")
    parser.add_argument("--fixed-windows", type=int, default=30_000, metavar="N",
                        help="windows of N sentences per spout task in both runs: the window "
                             "sizer off (topology.window.target.latency.ms=0), "
                             "topology.spout.buffer.size=N; 0: the sizer on")
    parser.add_argument("--driver-cpu", default="0",
                        help="CPU for the driver and Spark master on A in both runs ('none')")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="one more topology conf entry (spark.* too) for both runs; "
                             "repeatable")
    parser.add_argument("--steady", type=float, nargs=2, default=(STEADY_FROM, STEADY_TO),
                        metavar=("FROM", "TO"),
                        help="the steady span, as shares of the acked sentences")
    parser.add_argument("--pairs", type=int, default=3,
                        help="one-host and two-host runs, this many times in turn")
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
              "--token", secrets.token_hex(16), *conf_entries(args)]
    processes: list[subprocess.Popen[bytes]] = []
    load_before = os.getloadavg()[0]
    with CpuSpeedProbe(sorted(CPU.values())) as probe, HostCpuSampler(NAMESPACES) as sampler:
        wait_for_readings(probe)
        launched = time.time()
        _launch_and_wait(name, hosts, args, folder, common, total, processes)
    # the machine's other work shares the two cores: say how busy it was
    polls = read_polls(folder)
    result = figures(folder, polls, total, args.steady)
    result["first_window_s"] = first_window(polls) - launched
    span = result.pop("steady_span")
    result["steady_core_seconds"] = sampler.between(*span)
    speeds = probe.between(*span)
    result["cpu_speed"] = speeds
    # throughput per unit of CPU speed: what the run would do on CPUs of the probe's speed
    result["run_cpu_speed"] = mean_speed({CPU[host]: speeds[CPU[host]] for host in hosts})
    result["jit_core_seconds_by_tenth"] = jit_by_tenth(sampler, polls, total)
    return {**result, "load_before": load_before, "load_after": os.getloadavg()[0]}


def conf_entries(args: argparse.Namespace) -> list[str]:
    """A run's topology conf as ``-c KEY=VALUE`` arguments: its size, windows, ``--conf``."""
    common = ["-c", f"bench.sentences={args.sentences}"]
    if args.window_ms is not None:
        common += ["-c", f"topology.window.ms={args.window_ms}"]
    if args.buffer is not None:
        common += ["-c", f"topology.spout.buffer.size={args.buffer}"]
    if args.fixed_windows:
        # the sizer grows each run's windows to its own throughput (measured: 11-13 s windows
        # on one host against 5-8 s on two), so the runs' fixed costs per window differed and
        # their steady spans held 3-4 windows each: fixed, equal windows compare like with like
        common += ["-c", "topology.window.target.latency.ms=0",
                   "-c", f"topology.spout.buffer.size={args.fixed_windows}"]
    for entry in args.conf:
        common += ["-c", entry]
    return common


def _launch_and_wait(name: str, hosts: list[str], args: argparse.Namespace, folder: Path,
                     common: list[str], total: int,
                     processes: list[subprocess.Popen[bytes]]) -> None:
    """Start the hosts' executors and the driver; return when the driver is done.

    Raises:
        RuntimeError: the driver failed.
    """
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
            "-c", "topology.stats.window.count=100000"], folder / "driver.log",
            None if args.driver_cpu == "none" else args.driver_cpu)
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


def read_polls(folder: Path) -> list[dict[str, Any]]:
    """The driver's progress polls of a run (``progress.jsonl``: time, acked)."""
    return [json.loads(line) for line in (folder / "progress.jsonl").read_text().splitlines()]


def first_window(polls: list[dict[str, Any]]) -> float:
    """When the driver first counted a finished window (epoch seconds; a poll's time)."""
    return next((float(p["time"]) for p in polls if p.get("windows")), float("nan"))


def jit_by_tenth(sampler: HostCpuSampler, polls: list[dict[str, Any]],
                 total: int) -> list[float]:
    """The executor JVMs' JIT compiler core seconds (all hosts) in each tenth of the acks.

    A young JVM compiles its hot code in its first minutes: this says whether a steady span
    still holds that warm-up.
    """
    bounds = [crossing(polls, tenth / 10 * total) for tenth in range(11)]
    spans = [sampler.between(t0, t1) for t0, t1 in zip(bounds, bounds[1:], strict=False)]
    return [round(sum(v for k, v in span.items() if k.endswith(JIT_THREADS)), 2)
            for span in spans]


def figures(folder: Path, polls: list[dict[str, Any]], total: int,
            steady: tuple[float, float] = (STEADY_FROM, STEADY_TO)) -> dict[str, Any]:
    """Steady-state throughput and locality of one run from the driver's files."""
    stats = json.loads((folder / "stats.json").read_text())
    steady_from, steady_to = steady
    begin, end = crossing(polls, steady_from * total), crossing(polls, steady_to * total)
    windows = [w for w in stats["recent_windows"] if begin <= w["started"] <= end]
    calls = sum(w["locality"]["calls"] for w in windows)
    local = sum(w["locality"]["host_local_calls"] for w in windows)
    transferred = stats["locality"]["tuples"]
    shuffle = stats.get("shuffle_remote_bytes")
    return {
        "steady_span": (begin, end),
        "steady_seconds": end - begin,
        "steady_sentences": (steady_to - steady_from) * total,
        "acked": max(p["acked"] for p in polls),
        "steady_sentences_per_s": (steady_to - steady_from) * total / max(end - begin, 1e-9),
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
    """The runs (``--pairs`` times one host then two), then the table and the ratios."""
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("scaling.py needs root (network namespaces for the test hosts)", file=sys.stderr)
        return 2
    script("down", check=False)  # a run killed before its clean-up; fails when none was
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    try:
        print(script("up", timeout=60).strip(), flush=True)
        print(script("spark-master").strip(), flush=True)
        if args.driver_cpu != "none":
            pin_host("A", args.driver_cpu)
        print(script("spark-worker", "B", CPU["B"]).strip(), flush=True)
        for n in range(args.pairs):
            if n:  # C's Spark worker goes: the one-host run's tasks can only run on B
                print(script("kill-host", "C").strip(), flush=True)
            one = run(f"one-host-{n}", ["B"], args)
            print(f"pair {n} one host (B, CPU 0):", json.dumps(one), flush=True)
            print(script("spark-worker", "C", CPU["C"]).strip(), flush=True)
            two = run(f"two-hosts-{n}", ["B", "C"], args)
            print(f"pair {n} two hosts (B CPU 0, C CPU 1):", json.dumps(two), flush=True)
            pairs.append((one, two))
    finally:
        script("down", timeout=120)
        shutil.rmtree(SHARED, ignore_errors=True)
    report(pairs)
    return 0


def pin_host(host: str, cpu: str) -> None:
    """Pin every process (every thread) now on ``host`` to ``cpu``; later children inherit."""
    for pid in namespace_pids(NAMESPACES[host]):
        subprocess.run(["taskset", "-a", "-p", "-c", cpu, str(pid)], capture_output=True,
                       check=False, timeout=10)


def report(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Each pair's figures side by side, its ratio, and the median ratio."""
    ratios, normalised = [], []
    for n, (one, two) in enumerate(pairs):
        ratio = two["steady_sentences_per_s"] / one["steady_sentences_per_s"]
        ratios.append(ratio)
        print(f"\npair {n}{'':33}{'one host':>14}{'two hosts':>14}")
        print(f"{'JIT core s by tenth of acks, one host':40}"
              f"{one['jit_core_seconds_by_tenth']}\n{'... two hosts':40}"
              f"{two['jit_core_seconds_by_tenth']}")
        for key in ("steady_sentences_per_s", "steady_window_median_s", "steady_windows",
                    "steady_host_local_share", "call_bytes_across_per_tuple",
                    "shuffle_bytes_across_per_tuple", "load_before", "load_after"):
            print(f"{key:40}{_cell(one[key]):>14}{_cell(two[key]):>14}")
        cores_one, cores_two = one["steady_core_seconds"], two["steady_core_seconds"]
        for key in sorted(set(cores_one) | set(cores_two)):
            busiest = max(cores_one.get(key, 0.0), cores_two.get(key, 0.0))
            if ":jvm thread:" in key and busiest < SHOWN_THREAD_SECONDS:
                continue  # the JVMs' idle threads: dozens of rows of nothing
            print(f"{'core s ' + key:40}{_cell(one['steady_core_seconds'].get(key)):>14}"
                  f"{_cell(two['steady_core_seconds'].get(key)):>14}")
        print(f"throughput ratio two/one: {ratio:.2f}; with each CPU to itself "
              f"(projected from core seconds per sentence): {projected_ratio(one, two):.2f}")
        if one["run_cpu_speed"] and two["run_cpu_speed"]:
            speed_ratio = two["run_cpu_speed"] / one["run_cpu_speed"]
            normalised.append(ratio / speed_ratio)
            print(f"the CPUs' speed (probe, sentences per CPU second) one: "
                  f"{one['run_cpu_speed']:,.0f}, two: {two['run_cpu_speed']:,.0f}; "
                  f"ratio at equal CPU speed: {ratio / speed_ratio:.2f}")
    median = _median(ratios)
    verdict = "meets" if median >= TARGET_RATIO else "misses"
    print(f"\nratios {', '.join(f'{r:.2f}' for r in ratios)}; median {median:.2f} "
          f"({verdict} the {TARGET_RATIO} target)")
    if normalised:
        at_equal = _median(normalised)
        verdict = "meets" if at_equal >= TARGET_RATIO else "misses"
        print(f"at equal CPU speed: {', '.join(f'{r:.2f}' for r in normalised)}; median "
              f"{at_equal:.2f} ({verdict} the {TARGET_RATIO} target)")


def busiest_cpu_seconds_per_sentence(run: dict[str, Any], hosts: list[str]) -> float:
    """Core seconds per steady sentence on the run's busiest CPU (the driver's on CPU 0).

    CPU 0 carries host B and, pinned there (the default ``--driver-cpu 0``), the driver on
    A; CPU 1 carries host C.
    """
    cores, sentences = run["steady_core_seconds"], run["steady_sentences"]
    on_cpu = {"0": cores["A"] + cores["B"], "1": cores["C"] if "C" in hosts else 0.0}
    return max(on_cpu.values()) / sentences


def projected_ratio(one: dict[str, Any], two: dict[str, Any]) -> float:
    """The two-host/one-host ratio if each pinned CPU ran nothing but the run.

    On a shared machine the other engineers' processes take most of each CPU (the
    ``cpu0``/``cpu1`` figures stay near 100 % busy while the hosts use a fraction): the
    throughput follows the share each run got. Each CPU's core seconds per sentence do not
    depend on that share, so the busiest CPU's bounds what a whole CPU would carry.
    """
    return (busiest_cpu_seconds_per_sentence(one, ["B"])
            / busiest_cpu_seconds_per_sentence(two, ["B", "C"]))


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.3f}" if value < 10 else f"{value:,.0f}"  # noqa: PLR2004 - layout


if __name__ == "__main__":
    sys.exit(main())
