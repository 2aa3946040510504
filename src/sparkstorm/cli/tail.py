"""``sparkstorm tail``: streamparse's ``sparse tail``, a topology's logs from every worker.

``tail [-n NAME] [-e ENV] [--pattern REGEX] [--grep REGEX] [-l N] [-f]`` prints the last
``N`` lines (10) of each log of the topology's workers, ``tail``-style under a
``==> host:port log <==`` header: each worker's own log (``worker``) and each of its
executors' (``executor 3 (split)``). ``--pattern`` picks the logs whose header matches (as
streamparse's picks log files), ``--grep`` the lines. ``-f`` then prints new lines as they
come, until Ctrl-C.

It needs no ssh: it reads Nimbus's live log API (``GET /api/v1/topology/{id}/logs``, with
the cluster token; :mod:`sparkstorm.cluster.nimbus.log_tails`). A read asks the worker for
the log's tail at its next heartbeats (``worker.heartbeat.frequency.secs``), so the first
lines take a heartbeat or two to come, following polls every second, and a worker sends at
most the last 64 KiB of a log: with ``-f``, a log that grows faster than that between two
polls loses lines, which a ``(lines missed)`` header says.

Example:
    >>> new_lines(["a", "b", "c"], ["b", "c", "d", "e"])
    (['d', 'e'], True)
    >>> new_lines(["a", "b"], ["x", "y"])  # nothing in common: all new, some maybe missed
    (['x', 'y'], False)
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from sparkstorm.cli.cluster_args import (
    add_cluster_arguments,
    nimbus_client,
    nimbus_target,
    topology_name,
)
from sparkstorm.cli.errors import CliError

POLL_SECS = 1.0
FIRST_TAIL_BEATS = 5
"""Heartbeats to wait for the first tails (the sources' list comes with the first one)."""
REFRESH_POLLS = 10
"""Polls between two reads of the topology's workers (a rebalance moves them)."""


def register(commands: Any) -> None:
    """Add the ``tail`` subcommand."""
    parser = commands.add_parser("tail", help="print the end of a topology's worker and "
                                 "executor logs, through Nimbus (streamparse's 'sparse tail')")
    parser.add_argument("-n", "--name", help="topology name (default: the streamparse "
                                             "project's only topology)")
    parser.add_argument("--pattern", help="only the logs whose header (host:port worker, "
                                          "executor N (component)) matches this regex")
    parser.add_argument("--grep", help="only the lines matching this regex")
    parser.add_argument("-l", "--num-lines", "--num_lines", dest="num_lines",
                        type=_line_count, default=10, metavar="N",
                        help="last lines of each log (default 10)")
    parser.add_argument("-f", "--follow", action="store_true",
                        help="then print new lines as they come, until Ctrl-C")
    add_cluster_arguments(parser)
    parser.set_defaults(handler=tail_command)


def _line_count(text: str) -> int:
    if not text.isdigit():
        msg = f"expected a number of lines, 0 or more, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


@dataclass
class LogSource:
    """One log of one worker, as last read."""

    worker_id: str
    source: str
    title: str
    lines: list[str] | None = None
    """None until the worker sent its tail."""
    time_secs: float | None = None


@dataclass
class LogReader:
    """Reads a topology's log tails through Nimbus.

    Args:
        client: a :class:`~sparkstorm.cluster.nimbus.client.NimbusClient`.
        topology_id: the topology.
        pattern: picks logs by title (None: every log).
    """

    client: Any
    topology_id: str
    pattern: re.Pattern[str] | None = None
    workers: dict[str, str] = field(default_factory=dict)
    """Worker id -> ``host:port``."""
    sources: dict[tuple[str, str], LogSource] = field(default_factory=dict)

    def refresh_workers(self) -> None:
        """Read the topology's workers (``/api/v1/topology/{id}``); forget the gone ones."""
        page = self.client.call("GET", f"/api/v1/topology/{quote(self.topology_id)}")
        self.workers = {str(w["workerId"]): f"{w['host']}:{w['port']}"
                        for w in page.get("workers", [])}
        for key in [k for k in self.sources if k[0] not in self.workers]:
            del self.sources[key]

    def poll(self) -> None:
        """Read every wanted log once; learn each worker's logs from its answers."""
        for worker_id in list(self.workers):
            wanted = [s for (w, s) in self.sources if w == worker_id and self._picked(w, s)]
            for source in wanted or ["worker"]:
                answer = self._read(worker_id, source)
                if answer is None:
                    break
                for name, label in (answer.get("sources") or {}).items():
                    self._add(worker_id, str(name), str(label))
                mine = self.sources.get((worker_id, source))
                if mine is not None and answer.get("text") is not None:
                    mine.lines = str(answer["text"]).splitlines()
                    mine.time_secs = answer.get("timeSecs")

    def _read(self, worker_id: str, source: str) -> dict[str, Any] | None:
        from sparkstorm.cluster.nimbus.errors import NimbusError

        try:
            answer: dict[str, Any] = self.client.call(
                "GET", f"/api/v1/topology/{quote(self.topology_id)}/logs",
                params={"worker": worker_id, "source": source})
        except NimbusError as exc:
            if exc.code != "WORKER_NOT_ASSIGNED":  # moved by a rebalance: refreshed later
                raise
            return None
        return answer

    def _add(self, worker_id: str, source: str, label: str) -> None:
        key = (worker_id, source)
        if key not in self.sources:
            title = f"{self.workers.get(worker_id, worker_id)} {label}"
            self.sources[key] = LogSource(worker_id, source, title)

    def _picked(self, worker_id: str, source: str) -> bool:
        mine = self.sources[(worker_id, source)]
        return self.pattern is None or bool(self.pattern.search(mine.title))

    def picked(self) -> list[LogSource]:
        """The logs ``--pattern`` picks, by worker, then worker log, then executor number."""
        return sorted((s for s in self.sources.values() if self._picked(s.worker_id, s.source)),
                      key=lambda s: (self.workers.get(s.worker_id, ""), s.worker_id,
                                     _source_order(s.source)))

    def complete(self) -> bool:
        """Whether each worker listed its logs, and every picked log has come.

        A worker lists its logs with its first tail, so it has when its own log came or
        another of its logs is known.
        """
        listed = {w for (w, source), log in self.sources.items()
                  if source != "worker" or log.lines is not None}
        picked = self.picked()
        return (set(self.workers) <= listed and bool(picked)
                and all(log.lines is not None for log in picked))


def _source_order(source: str) -> tuple[int, int]:
    number = source.rpartition("-")[2]
    return (0, 0) if source == "worker" else (1, int(number) if number.isdigit() else 0)


def new_lines(before: list[str], after: list[str]) -> tuple[list[str], bool]:
    """The lines of ``after`` (a log's newer tail) past the end of ``before`` (its older one).

    The second value is False when the two tails do not overlap: lines between them may
    have been missed.
    """
    if not before or not after:
        return after, True
    for start in range(len(before)):  # the longest end of `before` that `after` starts with
        kept = before[start:]
        if kept[0] == after[0] and after[:len(kept)] == kept:
            return after[len(kept):], True
    return after, False


def _compile(pattern: str | None, flag: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        msg = f"{flag} {pattern!r} is not a regular expression: {exc}; fix or quote it"
        raise CliError(msg, code="LOG_PATTERN_INVALID") from exc


class TailPrinter:
    """Prints logs ``tail``-style: a header whenever the log changes, ``--grep``'s lines."""

    def __init__(self, grep: re.Pattern[str] | None, out: Any = None) -> None:
        self.grep = grep
        self.out = out or sys.stdout
        self.last_title: str | None = None

    def print(self, log: LogSource, lines: list[str], *, missed: bool = False) -> None:
        """Print ``lines`` of ``log`` (with its header first if another log was printed last)."""
        lines = [line for line in lines if self.grep is None or self.grep.search(line)]
        if not lines and not missed:
            return
        if log.title != self.last_title or missed:
            gap = "\n" if self.last_title is not None else ""
            note = " (lines missed)" if missed else ""
            self.out.write(f"{gap}==> {log.title}{note} <==\n")
            self.last_title = log.title
        self.out.writelines(f"{line}\n" for line in lines)
        self.out.flush()


def _first_tails(reader: LogReader, wait_secs: float) -> None:
    """Poll until every picked log has come, or ``wait_secs`` passed.

    Raises:
        CliError: ``LOGS_NOT_SENT`` when no picked log came at all.
    """
    deadline = time.monotonic() + wait_secs
    while True:
        reader.refresh_workers()  # a starting topology may have none assigned yet
        reader.poll()
        if reader.complete() or time.monotonic() >= deadline:
            break
        time.sleep(POLL_SECS)
    missing = [s.title for s in reader.picked() if s.lines is None]
    if reader.picked() and len(missing) < len(reader.picked()):
        for title in missing:
            print(f"sparkstorm tail: warning: {title}: no tail within {wait_secs:g} s",
                  file=sys.stderr)
        return
    workers = sorted(reader.workers.values())
    msg = (f"topology {reader.topology_id}: no log came within {wait_secs:g} s from its "
           f"workers {workers}" + ("" if reader.pattern is None else
                                   f" matching --pattern {reader.pattern.pattern!r}")
           + "; check that they run (sparkstorm worker_uptime, the UI's worker status) and "
           "what --pattern picks")
    raise CliError(msg, code="LOGS_NOT_SENT")


def _follow(reader: LogReader, printer: TailPrinter, num_lines: int) -> None:
    """Print new lines every poll, until Ctrl-C."""
    polls = 0
    while True:
        time.sleep(POLL_SECS)
        polls += 1
        if polls % REFRESH_POLLS == 0:
            reader.refresh_workers()
        before = {key: (s.lines, s.time_secs) for key, s in reader.sources.items()}
        reader.poll()
        for log in reader.picked():
            lines, at = before.get((log.worker_id, log.source), (None, None))
            if log.lines is None or (lines is not None and at == log.time_secs):
                continue
            if lines is None:  # a new log (an executor that came with a rebalance)
                printer.print(log, log.lines[-num_lines:] if num_lines else [])
                continue
            added, overlap = new_lines(lines, log.lines)
            printer.print(log, added, missed=not overlap)


def tail_command(args: argparse.Namespace) -> int:
    """Print the logs' last lines, then follow them with ``-f``."""
    pattern = _compile(args.pattern, "--pattern")
    grep = _compile(args.grep, "--grep")
    target = nimbus_target(args)
    name = topology_name(args, target.project, "tail")
    try:
        with nimbus_client(args, target) as client:
            topology_id = client.topology_id(name)
            reader = LogReader(client, topology_id, pattern)
            conf = client.call("GET", f"/api/v1/topology/{quote(topology_id)}/conf")
            beat = float(conf.get("worker.heartbeat.frequency.secs") or 1)
            _first_tails(reader, max(10.0, FIRST_TAIL_BEATS * beat))
            printer = TailPrinter(grep)
            for log in reader.picked():
                lines = [line for line in log.lines or []
                         if grep is None or grep.search(line)]
                printer.print(log, lines[-args.num_lines:] if args.num_lines else [])
            if args.follow:
                _follow(reader, printer, args.num_lines)
    except KeyboardInterrupt:
        return 0
    return 0
