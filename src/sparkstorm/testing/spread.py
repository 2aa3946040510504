"""Run one topology's executors on chosen hosts and its driver on another, without Nimbus.

A harness for the test hosts (``scripts/test-hosts.sh``) and the scaling benchmark: it
places executors where a test wants them, which measuring window placement needs, with none
of the control plane (Nimbus, supervisors, ZooKeeper) that a real cluster uses for it.

- ``python -m sparkstorm.testing.spread host --share I/N ...`` on each executor host: runs
  the I-th of N shares of the executors (each component's executors dealt round robin over
  the hosts) and writes where they answer to ``<dir>/endpoints-I.json``; runs until
  ``<dir>/stop`` exists (or SIGTERM).
- ``python -m sparkstorm.testing.spread driver --shares N ...`` on the driver's host: a
  driver hosting no executor, calling the N hosts' executors; runs ``--seconds`` (or until
  the spouts acked ``--until-acked``, or until ``<dir>/stop`` exists), writing its
  statistics to ``<dir>/stats.json`` every second and at the end (then with
  ``shuffle_remote_bytes``: what Spark's shuffle
  fetched from other hosts, from the driver's UI), one ``progress.jsonl`` line a second
  (time, acked, windows), and ``<dir>/stop`` when it ends.

Every process of a share is a child of its ``host`` process, gone when it ends.

Supported: any topology reachable as ``module:Class`` on ``PYTHONPATH``. Not supported:
rebalance, executor moves (no Nimbus passes new endpoints).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import signal
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from sparkstorm.config import load_config, parse_cli_overrides
from sparkstorm.engine import Endpoint, ExecutionPlan, plan_shares
from sparkstorm.testing.local_cluster import topology_spec_of
from sparkstorm.topology.spec import TopologySpec

logger = logging.getLogger(__name__)
POLL_SECONDS = 0.2


def load_spec(reference: str) -> TopologySpec:
    """The spec of ``module:Class``."""
    module, _, name = reference.partition(":")
    return topology_spec_of(getattr(importlib.import_module(module), name))


def share_of(plan: ExecutionPlan, index: int, shares: int) -> set[int]:
    """The executors of share ``index`` of ``shares``: each component's dealt round robin.

    The engine's split (``plan_shares``), as the Spark application's hosting tasks take it.
    """
    return plan_shares(plan, shares)[index]


def _conf(args: argparse.Namespace, spec: TopologySpec) -> dict[str, Any]:
    return load_config(cli=parse_cli_overrides(args.conf),
                       topology={**spec.config, "topology.name": args.name})


def run_host(args: argparse.Namespace) -> None:
    """Host one share of the executors until ``<dir>/stop`` appears."""
    from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner

    spec = load_spec(args.topology)
    conf = _conf(args, spec)
    index, shares = (int(n) for n in args.share.split("/"))
    hosted = share_of(ExecutionPlan(spec, conf), index, shares)
    runner = ExecutorHostRunner(args.name, spec, conf, hosted, args.token)
    folder = Path(args.dir)
    runner.start()
    try:
        pids = runner.pool.pids()
        endpoints = {gid: [e.path, e.host, e.port, pids.get(gid, 0)]
                     for gid, e in runner.pool.endpoints.items() if gid in hosted}
        target = folder / f"endpoints-{index}.json"
        target.with_suffix(".tmp").write_text(json.dumps(endpoints))
        target.with_suffix(".tmp").rename(target)  # whole or absent for the driver
        while not (folder / "stop").exists():
            time.sleep(POLL_SECONDS)
    finally:
        runner.stop()


def run_driver(args: argparse.Namespace) -> None:
    """Run the window loop against the hosts' executors; write statistics as it goes."""
    from sparkstorm.engine import TopologyDriver

    spec = load_spec(args.topology)
    conf = _conf(args, spec)
    folder = Path(args.dir)
    spouts = {c.name for c in spec.components if c.kind == "spout" and c.name}
    driver = TopologyDriver(args.name, spec, conf, hosted=set(), token=args.token)
    try:
        driver.set_remote_endpoints(_wait_for_endpoints(folder, args.shares, args.wait))
        driver.start()
        started = time.monotonic()
        with (folder / "progress.jsonl").open("a", encoding="utf-8") as progress:
            while time.monotonic() - started < args.seconds and driver.failure is None:
                summary = driver.stats.summary()
                _write(folder / "stats.json", {"elapsed": time.monotonic() - started,
                                               **summary})
                progress.write(json.dumps({"time": time.time(), "acked": _acked(summary, spouts),
                                           "windows": summary["windows"]}) + "\n")
                progress.flush()
                if ((args.until_acked and _acked(summary, spouts) >= args.until_acked)
                        or (folder / "stop").exists()):
                    break
                time.sleep(1.0)
        _write(folder / "stats.json", {"elapsed": time.monotonic() - started,
                                       "shuffle_remote_bytes": _shuffle_remote_bytes(driver),
                                       **driver.stats.summary()})
    finally:
        driver.stop(60)
        (folder / "stop").touch()
    if driver.failure is not None:
        raise driver.failure


def _shuffle_remote_bytes(driver: Any) -> int | None:
    """Bytes Spark's shuffle fetched from other hosts over the run (None: no UI to ask)."""
    base = driver.spark_ui_url
    if not base:
        return None
    try:
        with urllib.request.urlopen(f"{base}/api/v1/applications", timeout=10) as answer:
            app = json.load(answer)[0]["id"]
        with urllib.request.urlopen(f"{base}/api/v1/applications/{app}/stages",
                                    timeout=30) as answer:
            stages = json.load(answer)
    except (OSError, ValueError, LookupError) as exc:
        logger.warning("no shuffle figures from the Spark UI at %s: %s", base, exc)
        return None
    return sum(int(stage.get("shuffleRemoteBytesRead") or 0) for stage in stages)


def _acked(summary: dict[str, Any], spouts: set[str]) -> int:
    """Trees the spouts had acked."""
    return sum(int(c.get("acked") or 0) for name, c in summary["components"].items()
               if name in spouts)


def _write(path: Path, data: dict[str, Any]) -> None:
    path.with_suffix(".tmp").write_text(json.dumps(data, default=str))
    path.with_suffix(".tmp").rename(path)


def _wait_for_endpoints(folder: Path, shares: int, seconds: float
                        ) -> dict[int, tuple[Endpoint, int]]:
    """Every share's reported endpoints, once all are there.

    Raises:
        TimeoutError: a share did not report within ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while True:
        files = [folder / f"endpoints-{i}.json" for i in range(shares)]
        if all(f.exists() for f in files):
            break
        if time.monotonic() > deadline:
            missing = [f.name for f in files if not f.exists()]
            msg = f"executor hosts did not report within {seconds:g} s: no {missing} in {folder}"
            raise TimeoutError(msg)
        time.sleep(POLL_SECONDS)
    reported = {}
    for file in files:
        for gid, (path, host, port, pid) in json.loads(file.read_text()).items():
            reported[int(gid)] = (Endpoint(path, host, int(port)), int(pid))
    return reported


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module docs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=["host", "driver"])
    parser.add_argument("--topology", required=True, help="module:Class")
    parser.add_argument("--name", default="spread")
    parser.add_argument("--token", required=True, help="the topology's token, shared by all")
    parser.add_argument("--dir", required=True, help="a folder every host sees")
    parser.add_argument("--share", default="0/1", help="host: which share (I/N)")
    parser.add_argument("--shares", type=int, default=1, help="driver: how many hosts")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--until-acked", type=int, default=0)
    parser.add_argument("--wait", type=float, default=120.0,
                        help="driver: seconds to wait for the hosts' endpoints")
    parser.add_argument("-c", "--conf", action="append", default=[], help="key=value")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # finally-blocks clean up
    (run_host if args.role == "host" else run_driver)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
