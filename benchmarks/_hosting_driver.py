"""The hosting benchmark's driver: a topology driver whose executors run elsewhere.

``python benchmarks/_hosting_driver.py --hosting supervisor|spark ...`` on the driver's host
(started by ``hosting.py``):

- ``supervisor``: the executors run in ``sparkstorm.testing.spread host`` processes on the
  executor hosts (what a supervisor-launched worker does), which report their endpoints in
  ``<dir>/endpoints-I.json``;
- ``spark``: the driver's own Spark application hosts them as long-running tasks, one per
  live Spark executor host (``_spark_hosting``), which report over TCP.

Either way it then runs the window loop until the spouts acked ``--until-acked`` trees (or
``--seconds`` passed, or ``<dir>/stop`` exists), writing ``progress.jsonl`` (time, acked,
windows) every ``--poll`` seconds, ``stats.json`` and ``events.json``: when it was launched
(``--launched``, the orchestrator's clock), when Spark's executors were up, when every
executor had reported, when the first window ended, and every hosting report.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import time
from pathlib import Path
from typing import Any

from _spark_hosting import SparkHosting

from sparkstorm.engine.spark.placement import live_executor_hosts
from sparkstorm.engine.spark.session import get_spark
from sparkstorm.testing import spread

logger = logging.getLogger(__name__)


def wait_for_spark_hosts(spark: Any, count: int, seconds: float) -> list[str]:
    """The live Spark executor hosts, once there are ``count`` of them.

    Raises:
        TimeoutError: fewer registered within ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while len(hosts := live_executor_hosts(spark.sparkContext)) < count:
        if time.monotonic() > deadline:
            msg = f"only Spark executors on {sorted(hosts)} after {seconds:g} s; {count} needed"
            raise TimeoutError(msg)
        time.sleep(0.05)
    return sorted(hosts)


def run(args: argparse.Namespace) -> None:
    """Start the executors the chosen way, then the window loop (see the module docs)."""
    from sparkstorm.engine.driver.loop import TopologyDriver

    spec = spread.load_spec(args.topology)
    conf = spread._conf(args, spec)
    folder = Path(args.dir)
    events: dict[str, Any] = {"launched": args.launched, "hosting": args.hosting}
    spouts = {c.name for c in spec.components if c.kind == "spout" and c.name}
    driver = TopologyDriver(args.name, spec, conf, hosted=set(), token=args.token)
    spark, _ = get_spark(conf, f"sparkstorm-{args.name}")
    hosting = None
    try:
        events["spark_hosts"] = wait_for_spark_hosts(spark, args.shares, args.wait)
        events["spark_ready"] = time.time()
        if args.hosting == "spark":
            hosting = SparkHosting(spark, args.topology, args.name, conf, args.token,
                                   driver.set_remote_endpoints)
            hosting.start(events["spark_hosts"][:args.shares])
        else:
            driver.set_remote_endpoints(spread._wait_for_endpoints(
                folder, args.shares, args.wait))
        driver.start(spark)  # returns once every executor reported where it answers
        events["endpoints_ready"] = time.time()
        _loop(args, driver, hosting, folder, spouts, events)
    finally:
        driver.stop(60)
        if hosting is not None:
            hosting.stop()
            events["reports"] = hosting.reports
        _write(folder / "events.json", events)
        spark.stop()
        (folder / "stop").touch()
    if driver.failure is not None:
        raise driver.failure


def _loop(args: argparse.Namespace, driver: Any, hosting: SparkHosting | None, folder: Path,
          spouts: set[str], events: dict[str, Any]) -> None:
    started = time.monotonic()
    with (folder / "progress.jsonl").open("a", encoding="utf-8") as progress:
        while time.monotonic() - started < args.seconds and driver.failure is None:
            summary = driver.stats.summary()
            acked = spread._acked(summary, spouts)
            if "first_window" not in events and summary["recent_windows"]:
                first = summary["recent_windows"][0]
                events["first_window"] = first["started"] + first["seconds"]
            progress.write(json.dumps({"time": time.time(), "acked": acked,
                                       "windows": summary["windows"]}) + "\n")
            progress.flush()
            if hosting is not None:
                events["reports"] = hosting.reports
            _write(folder / "events.json", events)
            if acked >= args.until_acked or (folder / "stop").exists():
                break
            time.sleep(args.poll)
    _write(folder / "stats.json", {"elapsed": time.monotonic() - started,
                                   "shuffle_remote_bytes": spread._shuffle_remote_bytes(driver),
                                   **driver.stats.summary()})


def _write(path: Path, data: dict[str, Any]) -> None:
    path.with_suffix(".tmp").write_text(json.dumps(data, default=str))
    path.with_suffix(".tmp").rename(path)


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module docs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosting", choices=["supervisor", "spark"], required=True)
    parser.add_argument("--topology", required=True, help="module:Class")
    parser.add_argument("--name", default="hosting")
    parser.add_argument("--token", required=True)
    parser.add_argument("--dir", required=True, help="a folder every host sees")
    parser.add_argument("--shares", type=int, default=2, help="executor hosts")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--until-acked", type=int, required=True)
    parser.add_argument("--wait", type=float, default=180.0,
                        help="seconds to wait for Spark executors and endpoints")
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between progress lines")
    parser.add_argument("--launched", type=float, default=time.time(),
                        help="when the orchestrator launched this run (epoch seconds)")
    parser.add_argument("-c", "--conf", action="append", default=[], help="key=value")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # finally-blocks clean up
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
