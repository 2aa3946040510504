"""Word-count benchmark: sparkstorm's reliable topology vs plain Python and Spark UDFs.

Runs ``_wordcount_topology.WordCountBench`` (reliable spout -> split x2 -> count x2, fields
grouping on ``word``) on a ``LocalCluster`` over ``local[2]`` until the spout has had every
sentence acked, then, in the same process and on the same SparkSession, the plain Python
dict loop and the Structured Streaming Python-UDF word count over the same sentences.

Steady state is the part of the run between 20 % and 80 % of the acked sentences, which
leaves out executor start-up, the first Spark jobs and the tail. Latencies come from the
spout's per-window statistics (each window's reservoir percentiles), collected by polling
the topology statistics every 0.5 s; the engine's running totals keep only the first
~2000 latency samples, so their percentiles are printed too but describe the start. The
steady p50 and p99 are the windows' percentiles weighed by their acks (so the p99 sits
near the worst steady window's); the line after them takes the percentiles over the
steady windows' tuples themselves, from every window's reservoir merged (each sample
weighed by the latencies it stands for), as the driver recorded them.

Run: ``cd /work/main && .venv/bin/python benchmarks/wordcount.py --sentences 1000000``
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import sys
import time
from typing import Any, NamedTuple

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _cpu_breakdown import CpuBreakdownSampler, format_breakdown, measure_core_time  # noqa: E402
from _cpu_speed import CpuSpeedProbe, mean_speed  # noqa: E402
from _memory import peak_rss_sampler  # noqa: E402
from _references import plain_python_wordcount, structured_streaming_wordcount  # noqa: E402
from _sentences import make_sentences, total_words  # noqa: E402
from _wordcount_topology import (  # noqa: E402
    BATCH_TOPOLOGY,
    BATCH_TOPOLOGY_PER_TUPLE_SPOUT,
    COUNT,
    SPLIT,
    SPOUT,
    TOPOLOGY,
    shared_spout_topology,
)

TOPOLOGY_NAME = "wordcount-bench"
POLL_SECONDS = 0.5
MIN_POLLS = 2
"""Fewer polls than this: no statistics collected, nothing to analyse."""
STEADY_FROM, STEADY_TO = 0.2, 0.8

TARGET_PER_TUPLE_UDF_RATIO = 0.75
"""Issue 12: the per-tuple Storm API on CPython, acking on, against the UDF reference."""
TARGET_BATCH_UDF_RATIO = 1.5
"""Issue 12: the batch API (or a faster interpreter) against the UDF reference."""
TARGET_CHECKPOINT_UDF_RATIO = 1.0
"""Issue 32: the per-tuple word count in checkpoint reliability against the UDF reference."""
TARGET_CHECKPOINT_BATCH_UDF_RATIO = 5.0
"""Issue 32: the batch word count in checkpoint reliability against the UDF reference."""
TARGET_P50_MS = 1000.0
TARGET_P99_MS = 2000.0
TARGET_MEMORY_BYTES = 2 * 1024**3


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line (``argv``, or ``sys.argv`` when None)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--window-ms", type=int, default=None,
                        help="topology.window.ms (default: the engine's)")
    parser.add_argument("--max-pending", type=int, default=None,
                        help="topology.max.spout.pending (default: the engine's, unbounded)")
    parser.add_argument("--buffer", type=int, default=None,
                        help="topology.spout.buffer.size (default: the engine's)")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="sentences/s the spout offers (bench.rate; 0: as fast as it may)")
    parser.add_argument("--target-latency-ms", type=int, default=None,
                        help="topology.window.target.latency.ms (default: the engine's; "
                             "0: fixed windows)")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="give up waiting for all acks after this many seconds")
    parser.add_argument("--rows-per-batch", type=int, default=100_000,
                        help="rows per micro-batch file of the Structured Streaming reference")
    parser.add_argument("--skip-references", action="store_true")
    parser.add_argument("--batch-api", action="store_true",
                        help="then run the BatchBolt word count the same way (its spout: the "
                             "columnar BatchSpout; see --per-tuple-spout)")
    parser.add_argument("--per-tuple-spout", action="store_true",
                        help="the batch API run's spout is the per-tuple SentenceSpout (one "
                             "next_tuple and message id per sentence) instead of the columnar "
                             "ColumnarSentenceSpout (a BatchSpout: Arrow slices, one id per "
                             "batch)")
    parser.add_argument("--batch-only", action="store_true",
                        help="run the BatchBolt word count only (no per-tuple run, no "
                             "references): a quick A/B of the batch API")
    parser.add_argument("--no-profile", action="store_true",
                        help="no py-spy on the executors (as the references run): the "
                             "throughput without the profiler's share of the cores, but no "
                             "user/engine split in the breakdown")
    parser.add_argument("--executor-python", default=None,
                        help="topology.executor.python: the executors' interpreter (default: "
                             "this one); for Debian 12's PyPy (3.9) run with PYTHONPATH on a "
                             "tree from benchmarks/_py39_tree.py")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="one more topology conf entry (VALUE read as JSON when it "
                             "parses, else as a string); repeatable")
    parser.add_argument("--spark", action="append", default=[], metavar="KEY=VALUE",
                        help="one more setting of the benchmark's SparkSession, over the "
                             "engine's defaults (e.g. spark.driver.extraJavaOptions= for the "
                             "JVM's own); repeatable")
    parser.add_argument("--no-overlap", action="store_true",
                        help="topology.window.overlap false: one window at a time on local[2] "
                             "(else windows overlap on local[4]: see engine.spark.session)")
    parser.add_argument("--spouts", type=int, default=1,
                        help="spout executors, sharing the sentences (bench.share); with 2, "
                             "spout -> split is chained (engine.plan.chaining)")
    parser.add_argument("--no-chain", action="store_true",
                        help="topology.window.chain false: one Spark stage per DAG level")
    parser.add_argument("--checkpoint-mode", action="store_true",
                        help="also run the same word count (and the batch one with "
                             "--batch-api) with topology.reliability checkpoint: no per-tuple "
                             "acking, window-aligned checkpoints (issue 32), against the UDF "
                             "and against the acking run")
    parser.add_argument("--compare-chain", action="store_true",
                        help="then run the same topology with topology.window.chain false and "
                             "print its figures too (a same-run comparison)")
    return parser.parse_args(argv)


def conf_entries(entries: list[str]) -> dict[str, Any]:
    """``--conf`` entries as a dict (values read as JSON when they parse)."""
    conf: dict[str, Any] = {}
    for entry in entries:
        key, sep, text = entry.partition("=")
        if not sep or not key:
            msg = f"--conf {entry!r}: expected KEY=VALUE, e.g. topology.window.overlap=false"
            raise SystemExit(msg)
        try:
            conf[key] = json.loads(text)
        except ValueError:
            conf[key] = text
    return conf


def make_spark(overlap: bool = True, settings: dict[str, str] | None = None) -> Any:
    """``_references.make_local_spark``'s session, plus no console progress bar.

    That session is local[2], no UI, 2 shuffle partitions; it is made here because the
    progress bar is a static setting.

    With ``overlap``, local[2] gets the task slots overlapping windows need
    (``engine.spark.session.overlap_master``: local[4]); the references run on it too.
    The engine's Spark defaults (``engine.spark.session.engine_spark_defaults``: the driver JVM's
    options) apply as they would to a topology's own session, but for the heap (Spark's
    default, fair to the references), unless ``settings`` (``--spark``) set the same keys.
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from sparkstorm.engine.spark.session import engine_spark_defaults, overlap_master

    builder = (
        SparkSession.builder.master(overlap_master("local[2]") if overlap else "local[2]")
        .appName("sparkstorm-wordcount-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
    )
    # Spark's own default heap (1g), not the engine's 512m: the references share this JVM,
    # and at 512m (after the batch run) the UDF reference ran 39,741 sentences/s against
    # 47,530 at 1g (without it), while the per-tuple topology did the same (30,077, 30,694;
    # 2026-11-26 in RESULTS.md)
    fair_heap = {"spark.driver.memory": "1g"}
    for key, value in (engine_spark_defaults() | fair_heap | (settings or {})).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


# --------------------------------------------------------------------------- polling


def _stats(cluster: Any, name: str) -> dict[str, Any]:
    """``get_topology_stats``, retried: the window thread may mutate a dict mid-summary."""
    for _ in range(20):
        try:
            return cluster.get_topology_stats(name)
        except RuntimeError:  # "dictionary changed size during iteration"
            time.sleep(0.01)
    return cluster.get_topology_stats(name)


def _component(stats: dict[str, Any], name: str) -> dict[str, Any]:
    return stats["components"].get(name) or {}


class Run:
    """What the poll loop saw.

    (time, acked, failed, split/count executed) per poll and every window record
    (deduplicated by window id).
    """

    def __init__(self) -> None:
        self.polls: list[tuple[float, int, int, int, int]] = []
        self.windows: dict[int, dict[str, Any]] = {}
        self.p50_per_poll: list[tuple[float, float]] = []
        self.final: dict[str, Any] = {}
        self.submitted = 0.0
        self.started = 0.0
        self.finished = 0.0
        self.first_ack: float | None = None
        self.completed = False
        self.cpu: CpuBreakdownSampler | None = None  # set by run_topology
        self.overlap: tuple[bool, int] = (False, 0)
        """Whether windows overlapped, and how many started while the previous one ran."""
        self.pushed = True
        """Whether the driver pushed verdicts to the spouts (``engine.driver.verdict_push``)."""
        self.latency_samples: dict[int, tuple[int, list[float]]] = {}
        """Window -> the spout's complete latencies counted in it and its reservoir of them
        (``keep_latency_samples``): the steady windows' tuples' own percentiles."""

    def observe(self, now: float, stats: dict[str, Any]) -> None:
        """Record one poll: its counts, the window records, the latest window's p50."""
        spout = _component(stats, SPOUT)
        acked = int(spout.get("acked", 0))
        self.polls.append((now, acked, int(spout.get("failed", 0)),
                           int(_component(stats, SPLIT).get("executed", 0)),
                           int(_component(stats, COUNT).get("executed", 0))))
        if acked and self.first_ack is None:
            self.first_ack = now
        for record in stats["recent_windows"]:
            self.windows[record["window"]] = record
        recent = [r for r in stats["recent_windows"]
                  if (r["components"].get(SPOUT) or {}).get("complete_latency_p50_ms")]
        if recent:
            self.p50_per_poll.append(
                (now, recent[-1]["components"][SPOUT]["complete_latency_p50_ms"]))


def keep_latency_samples(run: Run, stats: Any) -> None:
    """Keep each window's spout latency reservoir in ``run`` as the driver records it.

    The statistics a poll reads carry each window's p50 and p99 only; percentiles over all
    the steady windows' tuples need the samples (each a uniform sample of its window's
    latencies, weighed by how many latencies it stands for).
    """
    record = stats.record

    def keep(window: Any) -> None:
        spout = window.components.get(SPOUT)
        if spout is not None and spout.complete_values:
            run.latency_samples[window.window] = (spout.complete_count,
                                                  list(spout.complete_values))
        record(window)

    stats.record = keep


def run_topology(spark: Any,  # noqa: PLR0912, PLR0915 - one if per CLI flag, then the poll loop
                 args: argparse.Namespace, topology: Any = TOPOLOGY) -> tuple[Run, Any]:
    """Run ``topology`` until all is acked, it fails or times out: what polls saw, peak memory."""
    from sparkstorm.testing.local_cluster import LocalCluster

    conf: dict[str, Any] = {"bench.sentences": args.sentences, "bench.seed": args.seed}
    if args.window_ms is not None:
        conf["topology.window.ms"] = args.window_ms
    if args.max_pending is not None:
        conf["topology.max.spout.pending"] = args.max_pending
    if args.buffer is not None:
        conf["topology.spout.buffer.size"] = args.buffer
    if args.executor_python is not None:
        conf["topology.executor.python"] = args.executor_python
    if args.rate:
        conf["bench.rate"] = args.rate
    if args.target_latency_ms is not None:
        conf["topology.window.target.latency.ms"] = args.target_latency_ms
    if args.no_overlap:
        conf["topology.window.overlap"] = False
    if args.no_chain:
        conf["topology.window.chain"] = False
    if args.spouts > 1:
        conf["bench.share"] = True
        if topology in (TOPOLOGY, BATCH_TOPOLOGY, BATCH_TOPOLOGY_PER_TUPLE_SPOUT):
            topology = shared_spout_topology(args.spouts, topology is not TOPOLOGY,
                                             topology is BATCH_TOPOLOGY)
    conf.update(conf_entries(args.conf))
    run = Run()
    cluster = LocalCluster(conf={"spark.master": "local[2]", "spark.ui.enabled": False,
                                 "spark.ui.showConsoleProgress": False}, spark=spark)
    with peak_rss_sampler() as mem, CpuBreakdownSampler(profile=not args.no_profile) as run.cpu:
        run.submitted = time.monotonic()
        runner = cluster.submit_topology(TOPOLOGY_NAME, topology, conf=conf)
        keep_latency_samples(run, runner.stats)  # the first windows' are not steady ones
        run.started = time.monotonic()
        effective = {k: runner.conf.get(k) for k in (
            "topology.window.ms", "topology.window.target.latency.ms",
            "topology.spout.buffer.size", "topology.max.spout.pending",
            "topology.message.timeout.secs", "topology.acker.executors",
            "topology.executor.python", "topology.window.overlap", "topology.window.chain",
            "topology.window.fuse", *conf_entries(args.conf))}
        print("topology conf:", ", ".join(f"{k}={v}" for k, v in effective.items()), flush=True)
        fused = runner.placement.fused
        print(f"Spark stages per window: {1 if fused else len(runner.plan.stages)} "
              f"({'fused: one task, ' if fused else ''}levels {len(runner.plan.stages)}, "
              f"chained: {runner.plan.chain_parents or 'none'})", flush=True)
        deadline = run.started + args.timeout
        next_report = run.started + 10.0
        try:
            while True:
                time.sleep(POLL_SECONDS)
                now = time.monotonic()
                stats = _stats(cluster, TOPOLOGY_NAME)
                run.observe(now, stats)
                acked = run.polls[-1][1]
                if acked >= args.sentences:
                    run.completed = True
                    break
                if runner.failure is not None:
                    print(f"window loop failed: {runner.failure!r}", flush=True)
                    break
                if now > deadline:
                    print(f"timeout after {args.timeout:.0f} s", flush=True)
                    break
                if now >= next_report:
                    next_report += 10.0
                    print(f"  t={now - run.started:6.1f} s  acked={acked:,}  "
                          f"windows={stats['windows']}", flush=True)
            run.finished = time.monotonic()
            run.final = _stats(cluster, TOPOLOGY_NAME)
            run.overlap = (runner.overlapping, runner.overlapped_windows)
            run.pushed = runner.pushes_verdicts
        finally:
            cluster.kill_topology(TOPOLOGY_NAME)
            cluster.shutdown()
    return run, mem


# --------------------------------------------------------------------------- analysis


def _interpolate_time(polls: list[tuple[float, int, int, int, int]], target: float) -> float:
    """Time at which the acked count crossed ``target`` (linear between polls)."""
    prev_t, prev_a = polls[0][0], polls[0][1]
    for t, a, *_ in polls:
        if a >= target:
            if a == prev_a:
                return t
            return prev_t + (t - prev_t) * (target - prev_a) / (a - prev_a)
        prev_t, prev_a = t, a
    return polls[-1][0]


def _value_at(polls: list[tuple[float, int, int, int, int]], when: float, col: int) -> float:
    """Column ``col`` of the polls, linearly interpolated at time ``when``."""
    prev = polls[0]
    for row in polls:
        if row[0] >= when:
            if row[0] == prev[0]:
                return float(row[col])
            frac = (when - prev[0]) / (row[0] - prev[0])
            return prev[col] + frac * (row[col] - prev[col])
        prev = row
    return float(polls[-1][col])


def _weighted_quantile(pairs: list[tuple[float, float]], q: float) -> float | None:
    """Quantile of values weighted by counts: pairs of (value, weight)."""
    pairs = sorted((v, w) for v, w in pairs if v is not None and w > 0)
    total = sum(w for _, w in pairs)
    if not total:
        return None
    running = 0
    for value, weight in pairs:
        running += weight
        if running >= q * total:
            return value
    return pairs[-1][0]


def analyse(run: Run, n: int,  # noqa: PLR0915 - one steady-state figure after another
            span: tuple[float, float] | None = None) -> dict[str, Any]:
    """A run's steady-state figures.

    ``span``: the steady span as shares of the run's ``n`` acks (default
    ``STEADY_FROM``–``STEADY_TO``).
    """
    out: dict[str, Any] = {}
    polls = run.polls
    steady_from, steady_to = span or (STEADY_FROM, STEADY_TO)
    lo, hi = steady_from * n, steady_to * n
    t_lo, t_hi = _interpolate_time(polls, lo), _interpolate_time(polls, hi)
    out["steady_seconds"] = t_hi - t_lo
    acked_lo, acked_hi = _value_at(polls, t_lo, 1), _value_at(polls, t_hi, 1)
    words_lo, words_hi = _value_at(polls, t_lo, 4), _value_at(polls, t_hi, 4)
    out["steady_source"] = "polls"
    # Window records are more exact (the acks of a window are applied at its start).
    ids = sorted(run.windows)
    if ids and ids == list(range(ids[0], ids[-1] + 1)) and ids[0] == 0:
        cum_a = cum_w = 0
        marks = []
        for w in ids:
            rec = run.windows[w]
            cum_a += int((rec["components"].get(SPOUT) or {}).get("acked", 0))
            cum_w += int((rec["components"].get(COUNT) or {}).get("executed", 0))
            marks.append((rec["started"] + rec["seconds"], cum_a, cum_w, w))
        first = next((m for m in marks if m[1] >= lo), None)
        last = next((m for m in marks if m[1] >= hi), None)
        if first and last and last[0] > first[0]:
            out["steady_source"] = f"window records {first[3]}..{last[3]}"
            t_lo, t_hi = first[0], last[0]
            acked_lo, acked_hi, words_lo, words_hi = first[1], last[1], first[2], last[2]
            out["steady_seconds"] = t_hi - t_lo
    secs = out["steady_seconds"] or float("nan")
    # the CPU breakdown's clock is time.time(), the window records' too; the polls' is monotonic
    to_wall = 0.0 if out["steady_source"] != "polls" else time.time() - time.monotonic()
    out["steady_wall_span"] = (t_lo + to_wall, t_hi + to_wall)
    out["steady_sentences"] = acked_hi - acked_lo
    out["steady_sentences_per_sec"] = (acked_hi - acked_lo) / secs
    out["steady_words_per_sec"] = (words_hi - words_lo) / secs
    total = (run.finished - run.started) or float("nan")
    out["overall_seconds"] = total
    out["overall_sentences_per_sec"] = polls[-1][1] / total
    out["overall_words_per_sec"] = polls[-1][4] / total
    out["startup_seconds"] = run.started - run.submitted
    out["first_ack_seconds"] = (run.first_ack - run.started) if run.first_ack else None

    # Latency over the steady-state windows: each window's reservoir percentiles.
    steady = []
    cum = 0
    all_windows = []
    for w in ids:
        rec = run.windows[w]
        spout = rec["components"].get(SPOUT) or {}
        acked = int(spout.get("acked", 0))
        cum += acked
        all_windows.append(rec)
        if acked and lo <= cum and cum - acked <= hi:
            steady.append((rec, spout, acked))
    out["steady_windows"] = len(steady)
    out["steady_window_range"] = ((steady[0][0]["window"], steady[-1][0]["window"])
                                  if steady else None)
    # a run without acking (topology.acker.executors=0) records no complete latency
    timed = [(s, a) for _, s, a in steady if s.get("complete_latency_p50_ms") is not None]
    out["steady_p50_ms"] = _weighted_quantile(
        [(s["complete_latency_p50_ms"], a) for s, a in timed], 0.5)
    out["steady_p99_ms"] = _weighted_quantile(
        [(s["complete_latency_p99_ms"], a) for s, a in timed], 0.99)
    out["steady_worst_window_p99_ms"] = max(
        (s["complete_latency_p99_ms"] for s, _ in timed), default=None)
    # the steady windows' tuples' own percentiles: their reservoirs merged, each sample
    # weighed by the latencies it stands for
    merged = [(value, count / len(values)) for rec, _, _ in steady
              if (sample := run.latency_samples.get(rec["window"]))
              for count, values in (sample,) for value in values]
    out["steady_tuple_p50_ms"] = _weighted_quantile(merged, 0.5)
    out["steady_tuple_p99_ms"] = _weighted_quantile(merged, 0.99)
    out["steady_mean_ms"] = (sum(s["complete_latency_ms"] * a for s, a in timed)
                             / sum(a for _, a in timed)) if timed else None
    out["steady_window_seconds"] = (statistics.fmean(r["seconds"] for r, _, _ in steady)
                                    if steady else None)
    out["mean_window_seconds"] = (statistics.fmean(r["seconds"] for r in all_windows)
                                  if all_windows else None)
    if steady:
        gaps = [b["started"] - a["started"] for a, b in
                zip([r for r, _, _ in steady], [r for r, _, _ in steady][1:], strict=False)]
        out["steady_window_period"] = statistics.fmean(gaps) if gaps else None
        out["steady_sentences_per_window"] = statistics.fmean(a for *_, a in steady)
    poll_lo, poll_hi = _interpolate_time(polls, lo), _interpolate_time(polls, hi)
    mid = [p for t, p in run.p50_per_poll if poll_lo <= t <= poll_hi]
    out["poll_p50_median_ms"] = statistics.median(mid) if mid else None
    out["poll_p50_range_ms"] = (min(mid), max(mid)) if mid else None
    out["steady_poll_times"] = (poll_lo, poll_hi)
    return out


# --------------------------------------------------------------------------- printing


def _fmt_ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} ms"


def _mark(ok: bool) -> str:
    return "OK  " if ok else "MISS"


def report(run: Run, mem: Any, res: dict[str, Any], n: int, words: int | None) -> None:
    """Print a run's counts, checksum, throughput, latency, windows and memory vs the targets."""
    final = run.final
    spout = _component(final, SPOUT)
    split = _component(final, SPLIT)
    count = _component(final, COUNT)
    print()
    print(f"=== sparkstorm word count: {n:,} sentences"
          + (f", {words:,} words" if words is not None else "") + " ===")
    print(f"completed: {run.completed}   executor start-up {res['startup_seconds']:.1f} s, "
          f"first ack after {res['first_ack_seconds'] or float('nan'):.1f} s")
    print(f"spout  emitted={spout.get('emitted', 0):,} acked={spout.get('acked', 0):,} "
          f"failed={spout.get('failed', 0):,} timed_out={spout.get('timed_out', 0):,}")
    print(f"split  executed={split.get('executed', 0):,} emitted={split.get('emitted', 0):,} "
          f"execute_latency={split.get('execute_latency_ms') or 0:.4f} ms/tuple")
    print(f"count  executed={count.get('executed', 0):,} "
          f"execute_latency={count.get('execute_latency_ms') or 0:.4f} ms/tuple")
    if words is not None:
        ok = count.get("executed", 0) == words and spout.get("failed", 0) == 0
        print(f"checksum: count executed {count.get('executed', 0):,} vs {words:,} words "
              f"-> {'match' if ok else 'MISMATCH (replays or loss)'}")
    print(f"errors: {final.get('last_errors') or 'none'}   "
          f"executor restarts: {final.get('executor_restarts', 0)}")
    print()
    print(f"steady state (20%..80% acked, {res['steady_source']}, "
          f"{res['steady_seconds']:.1f} s):")
    print(f"  {res['steady_sentences_per_sec']:>12,.0f} sentences/s "
          f"{res['steady_words_per_sec']:>13,.0f} words/s")
    print(f"overall (submit-return to last ack, {res['overall_seconds']:.1f} s):")
    print(f"  {res['overall_sentences_per_sec']:>12,.0f} sentences/s "
          f"{res['overall_words_per_sec']:>13,.0f} words/s")
    print()
    print(f"complete latency, steady-state windows ({res['steady_windows']}):")
    print(f"  p50 {_fmt_ms(res['steady_p50_ms']):>10}   [target <= {TARGET_P50_MS:,.0f} ms] "
          f"{_mark(res['steady_p50_ms'] is not None and res['steady_p50_ms'] <= TARGET_P50_MS)}")
    print(f"  p99 {_fmt_ms(res['steady_p99_ms']):>10}   [target <= {TARGET_P99_MS:,.0f} ms] "
          f"{_mark(res['steady_p99_ms'] is not None and res['steady_p99_ms'] <= TARGET_P99_MS)}"
          f"   (worst window p99 {_fmt_ms(res['steady_worst_window_p99_ms'])}, "
          f"mean {_fmt_ms(res['steady_mean_ms'])})")
    tuple_p50, tuple_p99 = res.get("steady_tuple_p50_ms"), res.get("steady_tuple_p99_ms")
    if tuple_p99 is not None:  # over the tuples, not over the windows' percentiles
        print(f"  over the steady windows' tuples (their reservoirs merged): p50 "
              f"{_fmt_ms(tuple_p50)} {_mark(tuple_p50 is not None and tuple_p50 <= TARGET_P50_MS)}"
              f", p99 {_fmt_ms(tuple_p99)} {_mark(tuple_p99 <= TARGET_P99_MS)}")
    if res["poll_p50_range_ms"]:
        lo, hi = res["poll_p50_range_ms"]
        print(f"  p50 per poll (latest window): median {_fmt_ms(res['poll_p50_median_ms'])}, "
              f"range {lo:,.0f}..{hi:,.0f} ms over {len(run.p50_per_poll)} polls")
    print(f"  totals at end (engine keeps the first ~2000 samples only): "
          f"p50 {_fmt_ms(spout.get('complete_latency_p50_ms'))}, "
          f"p99 {_fmt_ms(spout.get('complete_latency_p99_ms'))}, "
          f"mean {_fmt_ms(spout.get('complete_latency_ms'))} (exact mean over all acks)")
    print()
    print(f"windows run: {final.get('windows', 0)}   "
          f"mean window {res['mean_window_seconds'] or 0:.3f} s"
          f" (steady: {res.get('steady_window_seconds') or 0:.3f} s job, "
          f"{res.get('steady_window_period') or 0:.3f} s period, "
          f"{res.get('steady_sentences_per_window') or 0:,.0f} sentences/window)")
    if run.cpu is not None:  # the breakdown's own figures, printed in full further on
        t_lo, t_hi = res["steady_wall_span"]
        busy = run.cpu.breakdown(t_lo, t_hi).busy
        print(f"steady state ({t_hi - t_lo:.1f} s): overlapping windows {run.overlap[0]} "
              f"({run.overlap[1]} windows started while the previous one ran), core "
              f"utilisation {100 * busy / (2 * (t_hi - t_lo)):.0f} % of 2 cores")
    ok_mem = mem.peak_bytes <= TARGET_MEMORY_BYTES
    print(f"memory [target <= 2 GiB] {_mark(ok_mem)}: {mem.report()}")


def _line(label: str, r: dict[str, Any]) -> str:
    return (f"{label:<36} {r['sentences_per_sec']:>12,.0f} sentences/s "
            f"{r['words_per_sec']:>13,.0f} words/s {r['seconds']:>8.2f} s")


def main(argv: list[str] | None = None  # noqa: PLR0911, PLR0915 - steps in order, any may fail
         ) -> int:
    """Run the topology, the optional runs and the references, print them, return the exit code."""
    args = parse_args(argv)
    n = args.sentences
    print(f"sparkstorm word count benchmark: {n:,} sentences (seed {args.seed}), "
          f"local[2], python {sys.version.split()[0]}", flush=True)
    spark = make_spark(overlap=not args.no_overlap,
                       settings=dict(entry.partition("=")[::2] for entry in args.spark))
    probes = contextlib.ExitStack()
    # the CPUs' speed beside the runs: ours and the reference run minutes apart, and this
    # machine's virtual CPUs change speed from minute to minute (``_cpu_speed``)
    speed = probes.enter_context(CpuSpeedProbe(["0", "1"]))
    try:
        if args.batch_only:  # the words counted after the run: no sentences held during it
            code = run_batch_api(spark, args, None, None)
            return code
        run, mem = run_topology(spark, args)
        words = total_words(make_sentences(n, args.seed))
        if len(run.polls) < MIN_POLLS:
            print("no statistics collected", flush=True)
            return 1
        res = analyse(run, n)
        report(run, mem, res, n, words)
        ours = mean_speed(speed.between(*res["steady_wall_span"]))
        if ours:  # throughput per unit of it compares runs made at different CPU speeds
            print(f"CPU speed probe over the steady state: {ours:,.0f} sentences per CPU "
                  f"second; steady sentences/s per 1,000 of it: "
                  f"{1000 * res['steady_sentences_per_sec'] / ours:.1f}")
        if args.skip_references:
            _print_cpu_breakdown(run, res, [])
            if args.batch_api:
                return run_batch_api(spark, args, words, None)
            return 0 if run.completed else 1
        # the batch and checkpoint runs before the references: their Spark Python workers
        # (~150-300 MiB) and SQL classes stay alive after them and would count in those
        # runs' peak memory
        batch = run_batch_api(spark, args, words, None, keep=True) if args.batch_api else None
        if args.batch_api and batch is None:
            return 1
        checkpointed = run_checkpoint_mode(spark, args, words) if args.checkpoint_mode else []
        if checkpointed is None:
            return 1
        sentences = make_sentences(n, args.seed)
        print()
        print("=== references (same sentences, same SparkSession) ===", flush=True)
        plain, plain_cpu = measure_core_time(lambda: plain_python_wordcount(sentences))
        print(_line("plain python (1 core, dict loop)", plain), flush=True)
        with peak_rss_sampler() as ref_mem:
            structured_streaming_wordcount(spark, sentences[:2_000], rows_per_batch=1_000)
            udf_started = time.time()
            udf, udf_cpu = measure_core_time(
                lambda: structured_streaming_wordcount(spark, sentences, args.rows_per_batch))
            udf_span = (udf_started, time.time())
        print(_line("structured streaming (Python UDF)", udf))
        print(_line("sparkstorm steady state", {
            "sentences_per_sec": res["steady_sentences_per_sec"],
            "words_per_sec": res["steady_words_per_sec"], "seconds": res["steady_seconds"]}))
        print(_line("sparkstorm overall", {
            "sentences_per_sec": res["overall_sentences_per_sec"],
            "words_per_sec": res["overall_words_per_sec"], "seconds": res["overall_seconds"]}))
        print(f"structured streaming peak memory: {ref_mem.report().splitlines()[0]}")
        print()
        steady_udf = res["steady_sentences_per_sec"] / udf["sentences_per_sec"]
        overall_udf = res["overall_sentences_per_sec"] / udf["sentences_per_sec"]
        print(f"sparkstorm / UDF:   steady {steady_udf:5.2f}x   overall {overall_udf:5.2f}x   "
              f"[target >= {TARGET_PER_TUPLE_UDF_RATIO}x] "
              f"{_mark(steady_udf >= TARGET_PER_TUPLE_UDF_RATIO)}")
        _print_at_equal_speed(steady_udf, ours, mean_speed(speed.between(*udf_span)))
        print(f"sparkstorm / plain: steady "
              f"{res['steady_sentences_per_sec'] / plain['sentences_per_sec']:5.3f}x   overall "
              f"{res['overall_sentences_per_sec'] / plain['sentences_per_sec']:5.3f}x")
        print()
        # CPU figures compare with the table whatever else runs on the machine; wall ones not
        _print_cpu_breakdown(run, res, [
            ("reference: plain python, CPU", 1e6 * plain_cpu.by_class["driver"] / n),
            ("reference: plain python, 1 core x wall", 1e6 / plain["sentences_per_sec"]),
            ("reference: structured streaming UDF, CPU", 1e6 * udf_cpu.busy / n),
            ("reference: structured streaming UDF, 2 x wall", 2e6 / udf["sentences_per_sec"])])
        sentences = []  # the chain comparison's peak memory must not count them
        gc.collect()
        if batch is not None:
            _print_batch_ratio(batch, udf["sentences_per_sec"])
            if not batch["completed"]:
                return 1
        if args.compare_chain and run_unchained(spark, args, words, udf["sentences_per_sec"],
                                                1e6 * udf_cpu.busy / n):
            return 1
        if checkpointed:
            print_checkpoint_ratios(
                checkpointed, udf["sentences_per_sec"],
                {"per-tuple": res["steady_sentences_per_sec"],
                 "batch API": batch["steady_sentences_per_sec"] if batch is not None else None},
                (speed, mean_speed(speed.between(*udf_span))), not args.no_profile)
    finally:
        spark.stop()
        probes.close()
    return 0 if run.completed else 1


def _print_at_equal_speed(ratio: float, ours: float | None, reference: float | None,
                          label: str = "sparkstorm") -> None:
    """A run's ratio to the UDF as if both had run on CPUs of the same speed (the probe's)."""
    if ours and reference:
        print(f"{label} / UDF at equal CPU speed: steady {ratio * reference / ours:5.2f}x "
              f"(probe, sentences per CPU second: ours {ours:,.0f}, UDF {reference:,.0f})",
              flush=True)


def _print_cpu_breakdown(run: Run, res: dict[str, Any], references: list[tuple[str, float]],
                         ) -> None:
    """Issue 12 section 1: core-microseconds per sentence by process class, steady state."""
    if run.cpu is not None:
        t_lo, t_hi = res["steady_wall_span"]
        print(format_breakdown(run.cpu.breakdown(t_lo, t_hi), res["steady_sentences"],
                               references), flush=True)


def run_batch_api(spark: Any, args: argparse.Namespace, words: int | None,
                  udf_rate: float | None, keep: bool = False) -> Any:
    """Run and report ``BATCH_TOPOLOGY`` (BatchBolts); its ratio to ``udf_rate`` if measured.

    ``words`` None: counted after the run (so this process holds no sentences during it).

    Returns:
        The exit code: 1 if the run did not complete; with ``keep``, the analysis instead
        (``completed`` added; None without statistics), for :func:`_print_batch_ratio` once
        the references ran.
    """
    print()
    per_tuple = getattr(args, "per_tuple_spout", False)
    spout = ("per-tuple SentenceSpout (next_tuple, one id per sentence)" if per_tuple
             else "columnar ColumnarSentenceSpout (BatchSpout, one id per batch)")
    print(f"=== batch API (BatchBolt split and count, pyarrow.compute; spout: {spout}) ===",
          flush=True)
    run, mem = run_topology(spark, args,
                            BATCH_TOPOLOGY_PER_TUPLE_SPOUT if per_tuple else BATCH_TOPOLOGY)
    if len(run.polls) < MIN_POLLS:
        print("no statistics collected", flush=True)
        return None if keep else 1
    res = analyse(run, args.sentences)
    if words is None:
        words = total_words(make_sentences(args.sentences, args.seed))
    report(run, mem, res, args.sentences, words)
    _print_cpu_breakdown(run, res, [])
    res["completed"] = run.completed
    if udf_rate:
        _print_batch_ratio(res, udf_rate)
    if keep:
        return res
    return 0 if run.completed else 1


def _print_batch_ratio(res: dict[str, Any], udf_rate: float) -> None:
    """The batch run's throughput against the UDF reference's (``udf_rate`` sentences/s)."""
    ratio = res["steady_sentences_per_sec"] / udf_rate
    print(f"batch API / UDF:    steady {ratio:5.2f}x   overall "
          f"{res['overall_sentences_per_sec'] / udf_rate:5.2f}x   "
          f"[target >= {TARGET_BATCH_UDF_RATIO}x] {_mark(ratio >= TARGET_BATCH_UDF_RATIO)}",
          flush=True)


class CheckpointRun(NamedTuple):
    """One word count run under ``topology.reliability: checkpoint``, kept for its ratios.

    (A named tuple, not a dataclass: the tests load this file under a module name that is
    not in ``sys.modules``, where a dataclass cannot be made.)
    """

    label: str
    target: float
    """Its target against the UDF reference."""
    res: dict[str, Any]
    """:func:`analyse`'s figures."""


def run_checkpoint_mode(spark: Any, args: argparse.Namespace, words: int
                        ) -> list[CheckpointRun] | None:
    """The same word counts with ``topology.reliability: checkpoint``, before the references.

    No acker and no edges; a checkpoint every window (the mode's default) in a folder of
    its own. Prints each run's figures; :func:`print_checkpoint_ratios` prints their ratios
    once the references ran. They run before the references, as the batch run does: the
    UDF's Spark Python workers and SQL classes stay alive after it (~300 MiB) and counted in
    these runs' peak memory, past 2 GiB for the batch one. These runs go without py-spy on
    the executors, as the UDF reference does (the acking run's profile splits its
    executors' CPU into user and engine code; it costs that run 1.5-1.7 us of core time per
    sentence, ~4 %).

    Returns:
        The runs (None: one collected no statistics, or did not complete).
    """
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="wordcount-checkpoints-")
    mode = ["topology.reliability=checkpoint", f"topology.checkpoint.dir={folder}"]
    runs: list[CheckpointRun] = []
    try:
        for label, batch_api, target in (
                ("per-tuple", False, TARGET_CHECKPOINT_UDF_RATIO),
                ("batch API", True, TARGET_CHECKPOINT_BATCH_UDF_RATIO)):
            if batch_api and not args.batch_api:
                continue
            print()
            print(f"=== {label} word count, topology.reliability checkpoint ===", flush=True)
            checkpointed = argparse.Namespace(**{**vars(args), "conf": [*args.conf, *mode],
                                                 "no_profile": True})
            topology = ((BATCH_TOPOLOGY_PER_TUPLE_SPOUT if args.per_tuple_spout
                         else BATCH_TOPOLOGY) if batch_api else TOPOLOGY)
            run, mem = run_topology(spark, checkpointed, topology)
            if len(run.polls) < MIN_POLLS:
                print("no statistics collected", flush=True)
                return None
            res = analyse(run, args.sentences)
            report(run, mem, res, args.sentences, words)
            _print_cpu_breakdown(run, res, [])
            if not run.completed:
                return None
            runs.append(CheckpointRun(label, target, res))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return runs


def print_checkpoint_ratios(runs: list[CheckpointRun], udf_rate: float,
                            acking: dict[str, float | None],
                            udf_speed: tuple[CpuSpeedProbe, float | None] | None = None,
                            acking_profiled: bool = True) -> None:
    """Each checkpoint run's ratio to the UDF reference and to its topology's acking run.

    Args:
        runs: :func:`run_checkpoint_mode`'s.
        udf_rate: the UDF reference's sentences/s.
        acking: the acking runs' steady sentences/s by label (None: not run).
        udf_speed: the CPU speed probe and its reading over the UDF's run (the ratios at
            equal CPU speed).
        acking_profiled: whether the acking runs carried py-spy.
    """
    print()
    print("=== topology.reliability checkpoint against the references ===", flush=True)
    for run in runs:
        res, label, target = run.res, run.label, run.target
        ratio = res["steady_sentences_per_sec"] / udf_rate
        print(f"{label} checkpoint mode / UDF: steady {ratio:5.2f}x   overall "
              f"{res['overall_sentences_per_sec'] / udf_rate:5.2f}x   "
              f"[target >= {target}x] {_mark(ratio >= target)}", flush=True)
        if udf_speed is not None:
            probe, reference = udf_speed
            _print_at_equal_speed(ratio, mean_speed(probe.between(*res["steady_wall_span"])),
                                  reference, f"{label} checkpoint mode")
        acking_rate = acking.get(label)
        if acking_rate:
            print(f"{label} checkpoint mode / acking: steady "
                  f"{res['steady_sentences_per_sec'] / acking_rate:5.2f}x (the acking run "
                  f"{'carried py-spy' if acking_profiled else 'unprofiled too'})", flush=True)


def run_unchained(spark: Any, args: argparse.Namespace, words: int, udf_rate: float,
                  udf_cpu_us: float) -> int:
    """Run the same topology again with ``topology.window.chain`` false; report it alike.

    Returns:
        The exit code: 1 if the run did not complete.
    """
    print()
    print("=== the same topology, topology.window.chain false ===", flush=True)
    unchained = argparse.Namespace(**{**vars(args), "no_chain": True})
    run, mem = run_topology(spark, unchained)
    if len(run.polls) < MIN_POLLS:
        print("no statistics collected", flush=True)
        return 1
    res = analyse(run, args.sentences)
    report(run, mem, res, args.sentences, words)
    _print_cpu_breakdown(run, res, [("reference: structured streaming UDF, CPU (above)",
                                     udf_cpu_us)])
    ratio = res["steady_sentences_per_sec"] / udf_rate
    print(f"unchained / UDF:    steady {ratio:5.2f}x   overall "
          f"{res['overall_sentences_per_sec'] / udf_rate:5.2f}x")
    return 0 if run.completed else 1


if __name__ == "__main__":
    sys.exit(main())
