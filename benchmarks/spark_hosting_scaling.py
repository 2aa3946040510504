"""Spark hosting on test hosts: one host against two, against supervisor hosting, failures.

Issue 29 §4. Needs root (network namespaces: ``scripts/test-hosts.sh``). In one run, on one
Spark standalone cluster (master on A; a worker on B pinned to CPU 0 and, when the run has
two hosts, one on C pinned to CPU 1; ``--slots`` task slots each), ``WordCountScaling`` (2
spouts → 2 splits → 2 counts, fields grouping, acking on, equal fixed windows) with its
driver on A pinned to ``--driver-cpu``, its executors hosted two ways:

- **supervisor**: ``scaling.run``: the executors in ``sparkstorm.testing.spread host``
  processes on the executor hosts (what a supervisor-launched worker runs), started at the
  same moment as the driver, so Nimbus's assignment and a supervisor's launch are *not* in
  its start-up (the supervisors' way can only be slower to start than this); the
  application takes ``--slots - 1`` slots per host for windows;
- **spark**: ``sparkstorm spark-submit`` (the command ``--dry-run`` prints, run on A):
  the application's own Spark executors host the executors, one share per host
  (``topology.workers``), each hosting task holding one CPU
  (``topology.executor.hosting.cpus=1``), so windows get the same ``--slots - 1`` slots.

``--pairs N`` times: one host (B) supervisor, one host spark, then C's worker joins and two
hosts supervisor, two hosts spark. Then the failures, Spark hosting on two hosts,
``--fault-sentences`` per spout task:

- **host kill**: at 40 % of the acks every process on C is killed (``kill-host``): the time
  to the moved share's report and to acks resuming (the end of the longest stretch without
  a new ack after the kill; the first new ack too);
- **cut link**: at 40 % of the acks C's link goes down for ``--cut-secs``: the time to the
  driver's word that it gave C's share up (its log) and to C's executor processes being
  gone (the share stopping itself), against ``topology.executor.hosting.timeout.secs``.

Printed: per run steady sentences/s (50–95 % of the acks), the probe's CPU speed, start-up
(launch to the first finished window); the ratios against the targets: spark two/one ≥ 1.7,
spark/supervisor ≥ 0.9, spark's start-up ≤ the supervisors' + 20 s, host kill to acks ≤
30 s, cut to share given up ≤ 2× its timeout.

Run (as root): ``TEST_HOSTS_SUBNET=10.79.0 TEST_HOSTS_PREFIX=sb TEST_HOSTS_BRIDGE=sbbr0
TEST_HOSTS_DIR=/tmp/sparkstorm-hosts-bench PYTHONPATH=src:benchmarks .venv/bin/python
benchmarks/spark_hosting_scaling.py`` (the defaults: two pairs of 2,000,000-sentence runs
and both failures, about 30 minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import scaling
from _cpu_speed import CpuSpeedProbe, mean_speed, wait_for_readings
from _host_cpu import HostCpuSampler
from _spark_submit_run import SparkSubmitRun, read_log, share_processes, submit_command
from scaling import ADDRESS, CPU, NAMESPACES, PREFIX, ROOT, SCRIPT, SHARED, crossing, script

from sparkstorm.config import load_config

TOPOLOGY_FILE = ROOT / "benchmarks" / "_wordcount_topology.py"
TOPOLOGY_CLASS = "WordCountScaling"
FAULT_AT = 0.4
"""The failures come at this share of the run's acks."""
GIVEN_UP = re.compile(r"given up|gave up|giving up", re.IGNORECASE)
"""The driver's log line saying it gave a share up (not just that its link closed)."""
HOSTING_TIMEOUT_KEY = "topology.executor.hosting.timeout.secs"
TARGETS = {"two_over_one": 1.7, "spark_over_supervisor": 0.9, "start_up_extra_s": 20.0,
           "kill_to_acks_s": 30.0, "cut_to_given_up_timeouts": 2.0}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (``scaling.py``'s options where they mean the same)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1_000_000,
                        help="sentences per spout task (two spout tasks) of each scaling run")
    parser.add_argument("--fault-sentences", type=int, default=400_000,
                        help="sentences per spout task of each failure run")
    parser.add_argument("--pairs", type=int, default=2,
                        help="one-host and two-host runs of both hostings, this many times")
    parser.add_argument("--faults", default="kill,cut",
                        help="failure runs, comma-separated: kill, cut ('' for none)")
    parser.add_argument("--slots", type=int, default=3,
                        help="task slots of each Spark worker (windows get one less)")
    parser.add_argument("--hosting-timeout", type=float, default=None,
                        help=f"{HOSTING_TIMEOUT_KEY} of the spark runs (default: its own)")
    parser.add_argument("--cut-secs", type=float, default=75.0,
                        help="how long C's link stays down in the cut run")
    parser.add_argument("--fault-bound", type=float, default=150.0,
                        help="seconds a failure run goes on after its fault at most")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--logs", type=Path, default=None,
                        help="copy every run's folder (the drivers' logs) here at the end")
    parser.add_argument("--fixed-windows", type=int, default=30_000, metavar="N",
                        help="windows of N sentences per spout task (the sizer off)")
    parser.add_argument("--driver-cpu", default="0",
                        help="CPU for the driver and Spark master on A ('none')")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="one more topology conf entry for every run; repeatable")
    parser.add_argument("--steady", type=float, nargs=2, default=(0.5, 0.95),
                        metavar=("FROM", "TO"), help="the steady span, shares of the acks")
    args = parser.parse_args(argv)
    args.window_ms = args.buffer = None  # scaling.py's options this benchmark leaves alone
    return args


# -- the Spark-hosted runs ------------------------------------------------------------------
def spark_run(name: str, hosts: list[str], args: argparse.Namespace,
              fault: str | None = None) -> dict[str, Any]:
    """The word count deployed with spark-submit, hosted on ``hosts``; its figures.

    With ``fault`` (``kill`` or ``cut``), C is killed or cut off at ``FAULT_AT`` of the acks.
    """
    folder = SHARED / f"spark-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    total = 2 * args.sentences
    options = ["--master", f"spark://{ADDRESS['A']}:7077", *scaling.conf_entries(args),
               "-c", f"topology.workers={len(hosts)}",
               "-c", "topology.executor.hosting.cpus=1",
               "-c", f"spark.driver.host={ADDRESS['A']}",
               "-c", f"spark.executor.cores={args.slots}", "-c", "spark.executor.memory=1g"]
    if args.hosting_timeout is not None:
        options += ["-c", f"{HOSTING_TIMEOUT_KEY}={args.hosting_timeout:g}"]
    environment, command = submit_command(TOPOLOGY_FILE, TOPOLOGY_CLASS, f"spark-{name}",
                                          folder / "staging", options)
    pin = [] if args.driver_cpu == "none" else ["taskset", "-c", args.driver_cpu]
    launcher = ["bash", str(SCRIPT), "exec", "A", *pin]
    load_before = os.getloadavg()[0]
    with CpuSpeedProbe(sorted(CPU.values())) as probe, HostCpuSampler(NAMESPACES) as sampler:
        wait_for_readings(probe)
        app = SparkSubmitRun(launcher, {**environment, "PYTHONPATH": str(ROOT / "src")},
                             command, folder / "driver.log")
        try:
            events = _watch(app, total, args, fault)
            code = app.stop()
        finally:
            app.kill()
            _wait_shares_gone(hosts)
    log = read_log(folder / "driver.log")
    if not log.polls or (fault is None and log.acked < total):
        tail = (folder / "driver.log").read_text(errors="replace")[-4000:]
        msg = f"{name}: acked {log.acked} of {total} (exit {code}): {tail}"
        raise RuntimeError(msg)
    result = steady(log.polls, total, args.steady, probe, hosts)
    result["steady_core_seconds"] = sampler.between(*result.pop("steady_span"))
    result.update(start_up(log, app.launched, len(hosts)), exit_code=code,
                  load_before=load_before, load_after=os.getloadavg()[0])
    if fault is not None:
        result.update(after_fault(log, events, fault))
    return result


def _watch(app: SparkSubmitRun, total: int, args: argparse.Namespace,
           fault: str | None) -> dict[str, Any]:
    """Follow the run until ``total`` acks (or its bound); cause the fault on the way."""
    events: dict[str, Any] = {}
    deadline = time.monotonic() + args.timeout
    while app.running() and time.monotonic() < deadline:
        acked = app.read().acked
        if acked >= total:
            break
        if fault is not None and "fault" not in events and acked >= FAULT_AT * total:
            events.update(fault=time.time(), acked_at_fault=acked)
            if fault == "cut":
                events["stopped_on_c"] = _cut_link(args.cut_secs)
            else:
                print(script("kill-host", "C").strip(), flush=True)
        if "fault" in events and time.time() - events["fault"] > args.fault_bound:
            break
        time.sleep(0.5)
    events["ended"] = time.time()
    return events


def _cut_link(seconds: float) -> dict[str, Any]:
    """Take C's link down for ``seconds`` (in the background); what C's share did.

    The returned dict fills in as it goes: ``gone`` (when C's executor processes were all
    gone, epoch seconds) and ``restored`` (when the link came back).
    """
    seen: dict[str, Any] = {"before": len(share_processes(NAMESPACES["C"]))}
    subprocess.run(["ip", "link", "set", f"{PREFIX}vC", "down"], check=True, timeout=10)
    cut = time.time()

    def follow() -> None:
        while time.time() - cut < seconds:
            if "gone" not in seen and not share_processes(NAMESPACES["C"]):
                seen["gone"] = time.time()
            time.sleep(0.5)
        subprocess.run(["ip", "link", "set", f"{PREFIX}vC", "up"], check=False, timeout=10)
        seen["restored"] = time.time()

    threading.Thread(target=follow, name="cut-link", daemon=True).start()
    return seen


def _wait_shares_gone(hosts: list[str], seconds: float = 60.0) -> None:
    """Wait until no executor process of the run is left on ``hosts``; kill stragglers."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for host in hosts for p in share_processes(NAMESPACES[host])]
        if not left:
            return
        time.sleep(0.5)
    for process in left:
        print(f"killing a left executor process {process.pid}", flush=True)
        process.kill()


# -- figures ------------------------------------------------------------------------------
def steady(polls: list[dict[str, Any]], total: int, span: tuple[float, float],
           probe: CpuSpeedProbe, hosts: list[str]) -> dict[str, Any]:
    """Steady sentences/s between ``span``'s shares of the acks, and the CPUs' speed."""
    begin, end = crossing(polls, span[0] * total), crossing(polls, span[1] * total)
    speeds = probe.between(begin, end)
    return {"acked": polls[-1]["acked"], "steady_span": (begin, end),
            "steady_sentences": (span[1] - span[0]) * total,
            "steady_sentences_per_s": (span[1] - span[0]) * total / max(end - begin, 1e-9),
            "run_cpu_speed": mean_speed({CPU[h]: speeds[CPU[h]] for h in hosts})}


def start_up(log: Any, launched: float, shares: int) -> dict[str, Any]:
    """Seconds from the launch to every share's first report and to the first window."""
    firsts: dict[int, float] = {}
    for when, share, _run, _host in log.reports:
        firsts.setdefault(share, when)
    return {"reported_s": (max(firsts.values()) - launched if len(firsts) >= shares
                           else None),
            "share_hosts": sorted({host for when, _s, _r, host in log.reports
                                   if when <= min(firsts.values(), default=0) + 60}),
            "first_window_s": scaling.first_window(log.polls) - launched}


def after_fault(log: Any, events: dict[str, Any], fault: str) -> dict[str, Any]:
    """What followed the fault: reports, the acks' longest stall, the share given up."""
    at = events["fault"]
    c_shares = {share for when, share, _r, host in log.reports
                if when < at and host == ADDRESS["C"]}
    moved = [when for when, share, _r, host in log.reports
             if when > at and share in c_shares and host != ADDRESS["C"]]
    lost = [(when, line) for when, share, line in log.losses if when > at and share in c_shares]
    given_up = [when for when, line in lost if GIVEN_UP.search(line)]
    result = {"fault": fault, "acked_at_fault": events["acked_at_fault"],
              "moved_share_reported_s": min(moved) - at if moved else None,
              "link_lost_s": min(when for when, _ in lost) - at if lost else None,
              "driver_gave_up_share_s": min(given_up) - at if given_up else None,
              "loss_lines": [line for when, _s, line in log.losses if when > at][:4],
              **ack_stall(log.polls, at, events["ended"])}
    if fault == "cut":
        seen = events.get("stopped_on_c", {})
        result["executors_on_c_at_cut"] = seen.get("before")
        result["share_stopped_on_c_s"] = seen["gone"] - at if "gone" in seen else None
    return result


def ack_stall(polls: list[dict[str, Any]], at: float, ended: float) -> dict[str, Any]:
    """The acks after ``at``: the first new one, and the longest stretch without one.

    ``acks_resumed_s`` is when that stretch ended, from ``at``: the acks resumed then. A
    stretch still open at the run's end (``ended``) means they never did (None).
    """
    acked = max((p["acked"] for p in polls if p["time"] <= at), default=0)
    last, longest, resumed, first = at, 0.0, None, None
    for poll in (p for p in polls if p["time"] > at):
        if poll["acked"] > acked:
            first = first if first is not None else poll["time"] - at
            if poll["time"] - last > longest:
                longest, resumed = poll["time"] - last, poll["time"] - at
            last, acked = poll["time"], poll["acked"]
    if ended - last > longest:
        longest, resumed = ended - last, None
    return {"first_ack_after_s": first, "longest_ack_stall_s": longest,
            "acks_resumed_s": resumed}


# -- the whole run ------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """Hosts up, the pairs, the failures, hosts down; then the table and the verdicts."""
    args = parse_args(argv)
    if os.geteuid() != 0:
        print("spark_hosting_scaling.py needs root (test hosts)", file=sys.stderr)
        return 2
    os.environ["TEST_HOSTS_CORES"] = str(args.slots)
    supervisor_args = argparse.Namespace(**{**vars(args), "conf": [
        *args.conf, f"spark.executor.cores={args.slots - 1}"]})
    results: dict[str, dict[str, Any]] = {}
    script("down", check=False)  # a run killed before its clean-up; fails when none was
    try:
        print(script("up", timeout=60).strip(), flush=True)
        print(script("spark-master").strip(), flush=True)
        if args.driver_cpu != "none":
            scaling.pin_host("A", args.driver_cpu)
        print(script("spark-worker", "B", CPU["B"]).strip(), flush=True)
        c_up = False
        for n in range(args.pairs):
            if c_up:
                print(script("kill-host", "C").strip(), flush=True)
            _record(results, f"supervisor-one-{n}", scaling.run, ["B"], supervisor_args)
            _record(results, f"spark-one-{n}", spark_run, ["B"], args)
            print(script("spark-worker", "C", CPU["C"]).strip(), flush=True)
            c_up = True
            _record(results, f"supervisor-two-{n}", scaling.run, ["B", "C"], supervisor_args)
            _record(results, f"spark-two-{n}", spark_run, ["B", "C"], args)
        fault_args = argparse.Namespace(**{**vars(args), "sentences": args.fault_sentences})
        for fault in filter(None, args.faults.split(",")):
            if not c_up:
                print(script("spark-worker", "C", CPU["C"]).strip(), flush=True)
            _record(results, f"spark-{fault}", spark_run, ["B", "C"], fault_args, fault)
            subprocess.run(["ip", "link", "set", f"{PREFIX}vC", "up"], check=False,
                           timeout=10)
            print(script("kill-host", "C").strip(), flush=True)  # what is left of it
            c_up = False
    finally:
        if args.logs is not None:
            shutil.copytree(SHARED, args.logs, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("staging", "anchor.*"))
        script("down", timeout=120, check=False)
        shutil.rmtree(SHARED, ignore_errors=True)
    report(results, args)
    return 0


def _record(results: dict[str, dict[str, Any]], name: str, how: Any, hosts: list[str],
            args: argparse.Namespace, *more: Any) -> None:
    """Run one, print its figures as they come, keep them (or the failure) for the table."""
    try:
        results[name] = how(name, hosts, args, *more)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        results[name] = {"failed": str(exc)[-2000:]}
    shown = {k: v for k, v in results[name].items() if k not in ("steady_core_seconds",
                                                                 "cpu_speed")}
    print(f"{name}:", json.dumps(shown, default=str), flush=True)


def report(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    """The runs side by side, then each target's figure and verdict."""
    keys = ["steady_sentences_per_s", "run_cpu_speed", "first_window_s", "reported_s",
            "acked", "load_before", "load_after", "moved_share_reported_s",
            "first_ack_after_s", "longest_ack_stall_s", "acks_resumed_s", "link_lost_s",
            "driver_gave_up_share_s", "share_stopped_on_c_s", "failed"]
    names = list(results)
    print(f"\n{'':26}" + "".join(f"{n:>20}" for n in names))
    for key in keys:
        if any(key in r for r in results.values()):
            print(f"{key:26}" + "".join(f"{_cell(results[n].get(key)):>20}" for n in names))
    for name in names:
        for line in results[name].get("loss_lines", []):
            print(f"{name} driver log: {line}")
    for line in verdicts(results, args):
        print(line)


def verdicts(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> list[str]:
    """One line per target: the figure of each pair (or run) and met or missed."""
    rate = "steady_sentences_per_s"
    lines = []

    def ratio(a: str, b: str, key: str = rate) -> float | None:
        x, y = results.get(a, {}).get(key), results.get(b, {}).get(key)
        return x / y if x and y else None

    for n in range(args.pairs):
        for label, (a, b), target in (
                ("spark two/one hosts", (f"spark-two-{n}", f"spark-one-{n}"),
                 TARGETS["two_over_one"]),
                ("spark/supervisor, two hosts", (f"spark-two-{n}", f"supervisor-two-{n}"),
                 TARGETS["spark_over_supervisor"]),
                ("spark/supervisor, one host", (f"spark-one-{n}", f"supervisor-one-{n}"),
                 TARGETS["spark_over_supervisor"])):
            value, speed = ratio(a, b), ratio(a, b, "run_cpu_speed")
            lines.append(_verdict(f"pair {n}: {label}", value, target, at_least=True))
            if value is not None and speed is not None:  # the CPUs ran at other speeds
                lines.append(_verdict(f"pair {n}: {label} at equal CPU speed", value / speed,
                                      target, at_least=True))
            projected = by_core_seconds(results.get(a, {}), results.get(b, {}))
            if projected is not None:  # others' work took shares of the CPUs
                lines.append(_verdict(f"pair {n}: {label} by core seconds per sentence",
                                      projected, target, at_least=True))
        spark = results.get(f"spark-two-{n}", {}).get("first_window_s")
        sup = results.get(f"supervisor-two-{n}", {}).get("first_window_s")
        lines.append(_verdict(f"pair {n}: start-up to the first window, spark - supervisor "
                              "(two hosts), s", spark - sup if spark and sup else None,
                              TARGETS["start_up_extra_s"], at_least=False))
    kill = results.get("spark-kill", {}).get("acks_resumed_s")
    lines.append(_verdict("host kill to acks resuming, s", kill, TARGETS["kill_to_acks_s"],
                          at_least=False))
    timeout = args.hosting_timeout or float(load_config()[HOSTING_TIMEOUT_KEY])
    for key, label in (("driver_gave_up_share_s", "the driver gave the share up"),
                       ("share_stopped_on_c_s", "C's share stopped its executors")):
        cut = results.get("spark-cut", {}).get(key)
        lines.append(_verdict(f"cut link to {label}, s (timeout {timeout:g} s)", cut,
                              TARGETS["cut_to_given_up_timeouts"] * timeout, at_least=False))
    return lines


def by_core_seconds(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """Run ``a``'s throughput over ``b``'s if each pinned CPU ran nothing but the run.

    ``scaling.projected_ratio``'s measure: the busiest CPU's core seconds per steady
    sentence bound what a whole CPU would carry, whatever share of it the machine's other
    work left the run.
    """
    if "steady_core_seconds" not in a or "steady_core_seconds" not in b:
        return None
    hosts = {id(r): ["B", "C"] if r["steady_core_seconds"].get("C") else ["B"]
             for r in (a, b)}
    return (scaling.busiest_cpu_seconds_per_sentence(b, hosts[id(b)])
            / scaling.busiest_cpu_seconds_per_sentence(a, hosts[id(a)]))


def _verdict(label: str, value: float | None, target: float, at_least: bool) -> str:
    if value is None:
        return f"{label}: not measured (see the runs above)"
    met = value >= target if at_least else value <= target
    sign = ">=" if at_least else "<="
    return f"{label}: {value:.2f} (target {sign} {target:g}: {'met' if met else 'MISSED'})"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value[:18]
    return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"  # noqa: PLR2004 - layout


if __name__ == "__main__":
    sys.exit(main())
