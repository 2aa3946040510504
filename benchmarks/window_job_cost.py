"""Where a light-load window's Spark job spends its time: the fixed cost ``F`` in parts.

Runs the word count (per-tuple API) with its spout throttled to ``--rate`` sentences/s, so
that the windows carry little and their jobs are mostly the fixed cost, and times, per
steady window (after ``--skip`` windows):

- **driver before submit**: ``start_window`` (the spouts' payloads, the window's RDD built
  over py4j, the job handed to the job thread), and within it the RDD build alone;
- **submit to Spark job**: from ``start_window``'s start to the JVM's job submission time
  (the job thread's ``collect()``: pickling the closures, py4j, the DAG scheduler);
- per **stage** (from Spark's status store): submission to first task launch, the tasks'
  scheduler delay, deserialisation and run time, and the gap from one stage's end to the
  next stage's submission;
- **executor calls**: the executors' own time per window (their ``busy_ms``), against the
  tasks' run time (the rest of a task's run time is the Python worker and its shuffle);
- **job end to absorb**: from the JVM's job completion to the end of the driver's absorb.

Run: ``PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/window_job_cost.py``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import yaml

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from wordcount import make_spark  # noqa: E402

TIMES: dict[str, dict[int, float]] = defaultdict(dict)
BUSY: list[dict[int, float]] = []
"""Each absorbed window's executors' busy seconds, by gid, in window order."""
"""Per step, per window: wall-clock start (``*.at``) or duration in seconds."""
FEW_VALUES = 2
"""Up to this many values, a row's p90 is their max instead of an interpolated quantile."""


def _window_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    driver = args[0]
    return int(driver.window)


def timed(name: str, function: Callable[..., Any],
          window: Callable[..., int]) -> Callable[..., Any]:
    """``function`` recording its start and duration under ``name`` by window."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        w = window(args, kwargs)
        began, wall = time.perf_counter(), time.time()
        try:
            return function(*args, **kwargs)
        finally:
            TIMES[name][w] = time.perf_counter() - began
            TIMES[f"{name}.at"][w] = wall
    return wrapper


def _opt_ms(option: Any) -> float | None:
    """A Scala ``Option[Date]`` as epoch seconds."""
    return option.get().getTime() / 1000.0 if option.isDefined() else None


def job_parts(sc: Any, job_id: int) -> dict[str, Any] | None:
    """The status store's timing of one job and its stages (seconds)."""
    store = sc._jsc.sc().statusStore()
    try:
        job = store.job(job_id)
    except Exception:  # noqa: BLE001 - evicted
        return None
    out: dict[str, Any] = {"submitted": _opt_ms(job.submissionTime()),
                           "completed": _opt_ms(job.completionTime()), "stages": []}
    ids = job.stageIds()
    stage_ids = sorted(int(ids.apply(i)) for i in range(ids.size()))
    for sid in stage_ids:
        try:
            stage = store.lastStageAttempt(sid)
        except Exception:  # noqa: BLE001 - skipped stage or evicted
            continue
        tasks = store.taskList(sid, stage.attemptId(), 100)
        delays, deser, run, launch = [], [], [], []
        for i in range(tasks.size()):
            task = tasks.apply(i)
            delays.append(task.schedulerDelay() / 1000.0)
            launch.append(task.launchTime().getTime() / 1000.0)
            metrics = task.taskMetrics()
            if metrics.isDefined():
                m = metrics.get()
                deser.append(m.executorDeserializeTime() / 1000.0)
                run.append(m.executorRunTime() / 1000.0)
        out["stages"].append({
            "id": sid, "submitted": _opt_ms(stage.submissionTime()),
            "first_launch": _opt_ms(stage.firstTaskLaunchedTime()),
            "completed": _opt_ms(stage.completionTime()), "tasks": len(run),
            "delay": max(delays, default=0.0), "deser": max(deser, default=0.0),
            "run": max(run, default=0.0), "run_sum": sum(run),
            "last_launch": max(launch, default=0.0)})
    return out


def main(argv: list[str] | None = None) -> int:  # noqa: PLR0915 - one run, then its report
    """Run the throttled word count once; print the parts of its steady windows' jobs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--skip", type=int, default=8)
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--spark", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)

    from _wordcount_topology import TOPOLOGY

    from sparkstorm.engine.driver import loop as driver_module
    from sparkstorm.engine.driver.loop import TopologyDriver
    from sparkstorm.testing.local_cluster import LocalCluster

    TopologyDriver.start_window = timed("start", TopologyDriver.start_window, _window_of)  # type: ignore[method-assign]
    placement_rdd = driver_module.Placement.window_rdd
    def rdd_window(args_: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        return int(args_[4])
    driver_module.Placement.window_rdd = timed("rdd", placement_rdd, rdd_window)  # type: ignore[method-assign]
    absorb = TopologyDriver._absorb
    def absorb_window(args_: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        return int(args_[1])
    TopologyDriver._absorb = timed("absorb", absorb, absorb_window)  # type: ignore[method-assign]
    counters = TopologyDriver._counters
    def busy_counters(self: Any, metas: list[Any]) -> Any:
        BUSY.append({m.gid: m.stats.busy_ms / 1000.0 for m in metas})
        return counters(self, metas)
    TopologyDriver._counters = busy_counters  # type: ignore[method-assign]

    settings = dict(entry.split("=", 1) for entry in args.spark)
    spark = make_spark(settings=settings)
    sc = spark.sparkContext
    sentences = int(args.rate * args.seconds)
    conf: dict[str, Any] = {"bench.sentences": sentences, "bench.rate": args.rate}
    for entry in args.conf:
        key, value = entry.split("=", 1)
        conf[key] = yaml.safe_load(value)
    cpu0 = os.times()
    try:
        cluster = LocalCluster(conf={"spark.master": "local[2]", "spark.ui.enabled": False},
                               spark=spark)
        runner = cluster.submit_topology("jobcost", TOPOLOGY, conf=conf)
        try:
            while True:
                time.sleep(0.5)
                spout = runner.stats.summary()["components"].get("sentences") or {}
                if int(spout.get("acked", 0)) >= sentences or runner.failure:
                    break
            windows = list(runner.stats.summary()["recent_windows"])
            parts = {w["window"]: [job_parts(sc, j) for j in w.get("jobs", [])]
                     for w in windows}
        finally:
            cluster.kill_topology("jobcost")
            cluster.shutdown()
    finally:
        spark.stop()
    cpu1 = os.times()
    report(windows, parts, args.skip)
    report_tail(windows, args.skip)
    print(f"driver process CPU (user+sys, incl. children reaped): "
          f"{cpu1.user - cpu0.user + cpu1.system - cpu0.system:.1f} s")
    return 0


def report(windows: list[dict[str, Any]],  # noqa: PLR0912 - a row per part, where Spark timed it
           parts: dict[int, list[Any]], skip: int) -> None:
    """Per-part means and p90s over the steady windows."""
    rows: dict[str, list[float]] = defaultdict(list)
    windows = [w for w in windows if w["window"] >= skip]
    for record in windows:
        w = record["window"]
        jobs = [p for p in parts.get(w, []) if p]
        if not jobs or w not in TIMES["start"]:
            continue
        job = jobs[-1]
        began = TIMES["start.at"][w]
        rows["job (driver record)"].append(record["seconds"])
        rows["driver: start_window"].append(TIMES["start"][w])
        rows["  of which: RDD build"].append(TIMES["rdd"].get(w, 0.0))
        if job["submitted"]:
            rows["start -> JVM job submitted"].append(job["submitted"] - began)
        previous_end = job["submitted"]
        for n, stage in enumerate(job["stages"]):
            label = f"stage {n}"
            if stage["submitted"] and previous_end:
                rows[f"{label}: prev end -> submitted"].append(stage["submitted"] - previous_end)
            if stage["first_launch"] and stage["submitted"]:
                rows[f"{label}: submitted -> 1st task"].append(
                    stage["first_launch"] - stage["submitted"])
            rows[f"{label}: task deserialize (max)"].append(stage["deser"])
            rows[f"{label}: task run (max)"].append(stage["run"])
            rows[f"{label}: sched. delay (max)"].append(stage["delay"])
            if stage["completed"] and stage["submitted"]:
                rows[f"{label}: submitted -> completed"].append(
                    stage["completed"] - stage["submitted"])
            previous_end = stage["completed"]
        if job["completed"] and previous_end:
            rows["last stage end -> job end"].append(job["completed"] - previous_end)
        if job["completed"] and w in TIMES["absorb.at"]:
            rows["JVM job end -> absorb start"].append(TIMES["absorb.at"][w] - job["completed"])
            rows["absorb"].append(TIMES["absorb"][w])
        if w < len(BUSY):
            for gid, busy in BUSY[w].items():
                rows[f"executor {gid} busy"].append(busy)
    print(f"{len(windows)} steady windows; times in ms, mean / p90")
    for name, values in rows.items():
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > FEW_VALUES else max(values)
        print(f"  {name:<38} {1000 * statistics.fmean(values):7.1f} {1000 * p90:7.1f}")
    starts = [w["started"] for w in windows]
    if len(starts) > 1:
        period = statistics.fmean(b - a for a, b in zip(starts, starts[1:], strict=False))
        print(f"  mean period {1000 * period:.0f} ms")


def report_tail(windows: list[dict[str, Any]], skip: int) -> None:
    """Per steady window: its job, which later window carried its verdicts, its acks' latency.

    A window's verdicts ride the first window submitted after its job ended: the next one
    (``+1``) when it ended before the next was submitted, else a later one (``+2``...).
    The acks a window's spout stage applies are those of the window whose verdicts it carries,
    so each row's latency figures are of the tuples of the window ``carried`` windows before.
    """
    by_id = {w["window"]: w for w in windows}
    ids = sorted(w for w in by_id if w >= skip)
    print("window   job ms  verdicts in  acked  mean ms   p50 ms   p99 ms")
    carried: dict[int, int] = {}
    for w in ids:
        record = by_id[w]
        end = record["started"] + record["seconds"]
        later = next((v for v in sorted(by_id) if v > w and by_id[v]["started"] >= end), None)
        if later is not None:
            carried[later] = w
    for w in ids:
        record = by_id[w]
        spout = record["components"].get("sentences") or {}
        source = carried.get(w)
        gap = f"+{w - source}" if source is not None else "-"
        print(f"{w:>6} {1000 * record['seconds']:8.0f} {gap:>12} {spout.get('acked', 0):>6} "
              f"{spout.get('complete_latency_ms', 0):8.0f} "
              f"{spout.get('complete_latency_p50_ms', 0):8.0f} "
              f"{spout.get('complete_latency_p99_ms', 0):8.0f}")
    gaps = [w - carried[w] for w in ids if w in carried]
    for gap in sorted(set(gaps)):
        print(f"verdicts carried +{gap}: {gaps.count(gap)} windows")


if __name__ == "__main__":
    sys.exit(main())
