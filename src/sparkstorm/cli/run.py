"""``sparkstorm run [FILE]``: run a topology on Spark local mode (Storm's ``storm local``).

FILE is a Python topology file, a Storm Flux ``.yaml`` file, or nothing in a streamparse
project's root (see :mod:`sparkstorm.cli.target`). Shows a live progress line and the
executors' log lines (kept in a folder it names, see :mod:`sparkstorm.cli.logs`), stops
after ``--time`` seconds or at Ctrl-C with a clean shutdown, then prints a table per
component.

streamparse's ``-a/--ackers``, ``-w/--workers`` and ``-d/--debug`` are spellings of ``-o``
options (:mod:`sparkstorm.cli.streamparse_flags`). With ``topology.debug: true`` each tuple a
spout emits or a bolt receives is written to the executor's log, from the first one on: the
topology starts deactivated, gets the debug sampling at 100 % (Storm UI's Debug), then is
activated.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from sparkstorm.cli.logs import LOG_DIR_KEY, LogFollower, executor_logs, run_log_dir
from sparkstorm.cli.streamparse_flags import DEBUG_KEY, add_streamparse_flags
from sparkstorm.cli.target import add_target_arguments, resolve_target
from sparkstorm.config import load_config, parse_cli_overrides
from sparkstorm.errors import EngineError

LIVE_SECONDS = 5.0
"""The live line's rate and latency are those of the windows of about this many seconds."""

MARK_SECONDS = 30.0
"""Without ``--time``: when the run's own latency figures start (with it: at half of it).

The first windows carry the JVM's cold jobs and the window sizer's first guesses: whole-run
figures of a short run are mostly start-up (``make demo``: p50 1.4 s over 30 s, 0.9 s after
its first 15 s)."""


def register(commands: Any) -> None:
    """Add the ``run`` subcommand."""
    parser = commands.add_parser("run", help="run a topology on Spark local mode")
    add_target_arguments(parser)
    parser.add_argument("-t", "--time", type=float, default=None,
                        help="stop after this many seconds (default: at Ctrl-C)")
    add_streamparse_flags(parser)
    parser.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Run the topology until ``--time`` passes or Ctrl-C, then print the summary."""
    from sparkstorm.engine import stop_spark_jvm
    from sparkstorm.testing.local_cluster import LocalCluster  # starts the JVM: import late

    cli_conf = parse_cli_overrides(args.config)
    load_config(cli=cli_conf)  # fail on bad values before anything is imported or started
    target = resolve_target(args, submitting=False)
    name = target.name
    console = Console(width=max(Console().width, 140))
    for warning in target.warnings:
        console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False,
                      soft_wrap=True)
    conf = load_config(cli=cli_conf, topology=target.spec.config)
    log_dir = run_log_dir(conf, name)
    debug = bool(conf.get(DEBUG_KEY))
    follower = LogFollower(log_dir)
    stop = threading.Event()
    with LocalCluster(conf=cli_conf) as cluster:
        console.print(f"[bold]sparkstorm[/] running [cyan]{name}[/] "
                      f"({target.label}) on Spark local mode ...")
        runner = cluster.submit_topology(name, replace(target.spec, config={
            **target.spec.config, LOG_DIR_KEY: str(log_dir)}), active=not debug)
        if debug:
            _log_every_tuple(runner)
            cluster.activate(name)
            console.print(f"{DEBUG_KEY}: each tuple a spout emits or a bolt receives goes "
                          "to its executor's log", markup=False, highlight=False)
        console.print(f"executor logs (components' self.logger lines) in {log_dir}:",
                      markup=False, highlight=False, soft_wrap=True)
        for line in executor_logs(log_dir, runner.plan.executors):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        console.print(f"Spark UI: {runner.spark_ui_url or 'off (spark.ui.enabled: false)'}",
                      highlight=False, soft_wrap=True)
        # after Spark started: PySpark's own SIGINT handler would cancel the running job
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        started = time.monotonic()
        steady = _watch(runner, console, follower, stop, started, args.time)
        console.print("stopping: deactivating spouts and letting in-flight tuples finish ...")
        cluster.kill_topology(name)
        summary = runner.stats.summary()
    _print_log_lines(console, follower)
    stop_spark_jvm()  # return only once Spark's JVM is gone (make demo, scripts, tests)
    console.print(summary_table(summary, time.monotonic() - started))
    for line in latency_lines(summary, None if steady is None else steady.since):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if steady is not None:
        console.print(steady.line(), markup=False, highlight=False, soft_wrap=True)
    console.print(f"executor logs kept in {log_dir}", markup=False, highlight=False,
                  soft_wrap=True)
    if runner.failure is not None:
        console.print(f"[red]the topology stopped with an error: {runner.failure}[/]")
        return 1
    return 0


def _watch(runner: Any, console: Console, follower: LogFollower, stop: threading.Event,
           started: float, run_seconds: float | None) -> SteadyThroughput | None:
    """Show progress until ``run_seconds`` pass, Ctrl-C or a failure; mark half-way through.

    Returns the acked tuples' rate from the mark to the end (None: stopped before the mark).
    """
    mark_at = run_seconds / 2 if run_seconds else MARK_SECONDS
    marked_after: float | None = None
    acked_at_mark = 0
    with _live_display(console) as display:
        while not stop.wait(0.25):
            _print_log_lines(console, follower)
            if marked_after is None and time.monotonic() - started >= mark_at:
                runner.stats.mark()  # latency_lines: the run past its start, apart
                marked_after = time.monotonic() - started
                acked_at_mark = _spout_totals(runner.stats.summary())[1]
            display.update(progress_line(runner.stats.summary(), time.monotonic() - started))
            if runner.failure is not None or (run_seconds and
                                              time.monotonic() - started >= run_seconds):
                break
    if marked_after is None:
        return None
    return SteadyThroughput(marked_after, time.monotonic() - started, acked_at_mark,
                            _spout_totals(runner.stats.summary())[1])


def _log_every_tuple(runner: Any) -> None:
    """Debug sampling at 100 % for every executor, kept for its restarts."""
    for executor in runner.plan.executors:
        try:
            runner.pool.log_control(executor.gid, {}, 100.0)
        except (OSError, EngineError) as exc:  # it reads the setting when it starts again
            print(f"warning: executor {executor.gid} has no debug logging yet: {exc}",
                  file=sys.stderr)


def _print_log_lines(console: Console, follower: LogFollower) -> None:
    for line in follower.new_lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)


class _PlainProgress:
    """Progress for a pipe or a CI log: one plain line every few seconds."""

    def __init__(self, console: Console, every: float = 2.0) -> None:
        self.console, self.every, self.last = console, every, 0.0

    def __enter__(self) -> _PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, line: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def _live_display(console: Console) -> Any:
    """A live-updating line on a terminal, periodic plain lines otherwise."""
    if console.is_terminal:
        return Live(console=console, refresh_per_second=4, transient=False)
    return _PlainProgress(console)


def _spout_totals(summary: dict[str, Any]) -> tuple[int, int, int]:
    emitted = acked = failed = 0
    for component in summary["components"].values():
        if component.get("complete_latency_ms") is not None or component["executed"] == 0:
            emitted += component["emitted"]
            acked += component["acked"]
            failed += component["failed"]
    return emitted, acked, failed


def recent_latency(recent: list[dict[str, Any]]) -> float | None:
    """The spouts' mean complete latency over the recent windows (None: nothing acked).

    The live line shows this, as it shows the recent windows' rate: the all-time mean moves
    slowly away from the start-up's latencies, long after the topology has settled.
    """
    total_ms = acked = 0.0
    for window in recent:
        for figures in window["components"].values():
            latency, count = figures.get("complete_latency_ms"), figures.get("acked", 0)
            if latency is not None and count:
                total_ms += latency * count
                acked += count
    return total_ms / acked if acked else None


def progress_line(summary: dict[str, Any], elapsed: float) -> str:
    """One line: windows, tuples/s and complete latency of the last windows, then totals.

    The last windows are those that started within :data:`LIVE_SECONDS` of the newest.
    """
    recent = summary["recent_windows"]
    if recent:
        since = recent[-1]["started"] - LIVE_SECONDS
        recent = [w for w in recent if w["started"] >= since]
    seconds = (recent[-1]["started"] + recent[-1]["seconds"] - recent[0]["started"]) \
        if recent else 0.0
    tuples = sum(c.get("transferred", 0) for w in recent for c in w["components"].values())
    rate = tuples / seconds if seconds > 0 else 0.0
    _, acked, failed = _spout_totals(summary)
    latency = recent_latency(recent)
    latency_text = f"{latency:.0f} ms" if latency is not None else "-"
    return (f"[{elapsed:6.1f}s] windows {summary['windows']:>5}  tuples/s {rate:>10,.0f}  "
            f"acked {acked:>10,}  failed {failed:>7,}  complete latency {latency_text}  "
            f"restarts {summary['executor_restarts']}")


def summary_table(summary: dict[str, Any], elapsed: float) -> Table:
    """Per-component totals, as Storm UI's spouts and bolts tables."""
    table = Table(title=f"{summary['windows']} windows in {elapsed:.1f} s")
    for column in ("component", "emitted", "transferred", "executed", "acked", "failed",
                   "execute ms", "complete ms (avg / p50 / p99)", "last error"):
        table.add_column(column, justify="left" if column in ("component", "last error")
                         else "right")
    for name, c in summary["components"].items():
        error = summary["last_errors"].get(name, {}).get("error", "")
        table.add_row(name, f"{c['emitted']:,}", f"{c['transferred']:,}", f"{c['executed']:,}",
                      f"{c['acked']:,}", f"{c['failed']:,}", _ms(c["execute_latency_ms"]),
                      " / ".join(_ms(c[k]) for k in ("complete_latency_ms",
                                                     "complete_latency_p50_ms",
                                                     "complete_latency_p99_ms")),
                      error.strip().splitlines()[-1][:60] if error else "")
    return table


def latency_lines(summary: dict[str, Any], marked_after: float | None = None) -> list[str]:
    """Per spout with acked tuples, the complete latency the run reached (p50, p99, mean).

    Percentiles of a uniform sample of every acked tuple's latency (``make demo`` prints
    these: the latency its defaults gave): over the whole run, start-up included, then over
    the run since :meth:`TopologyStats.mark` when it was marked, ``marked_after`` seconds
    into it.
    """
    lines = []
    since = summary.get("since_mark")
    later = since["components"] if since else {}
    for name, c in summary["components"].items():
        if c.get("complete_latency_p50_ms") is None or not c["acked"]:
            continue
        lines.append(f"latency reached by {name}, whole run (start-up included): "
                     f"complete latency p50 {_latency_figures(c)}")
        mark = later.get(name)
        if mark and mark.get("complete_latency_p50_ms") is not None and mark["acked"]:
            lines.append(f"latency reached by {name}, from {marked_after or 0:.0f} s on: "
                         f"complete latency p50 {_latency_figures(mark)}")
    return lines


@dataclass(frozen=True)
class SteadyThroughput:
    """Tuples the spouts had acked from the mark until they were told to stop, per second.

    The throughput to compare settings by: the totals also count what was in flight at the
    stop and finished after it, which is seconds of tuples under a setting that runs at
    seconds of latency (a throughput-first run acked 617,000 sentences by 28.7 s and
    878,000 once drained; the rate from 15 s to 28.7 s was 26,600 a second either way).
    """

    since: float
    until: float
    acked_since: int
    acked_until: int

    def line(self) -> str:
        """``throughput from 15 s until the spouts stopped at 30 s: 26,574 acked tuples/s``."""
        seconds = self.until - self.since
        rate = (self.acked_until - self.acked_since) / seconds if seconds > 0 else 0.0
        return (f"throughput from {self.since:.0f} s until the spouts stopped at "
                f"{self.until:.0f} s: {rate:,.0f} acked tuples/s")


def _latency_figures(c: dict[str, Any]) -> str:
    return (f"{c['complete_latency_p50_ms']:,.0f} ms, p99 {c['complete_latency_p99_ms']:,.0f} "
            f"ms, mean {c['complete_latency_ms']:,.0f} ms over {c['acked']:,} acked tuples")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}" if value < 1 else f"{value:.1f}"
