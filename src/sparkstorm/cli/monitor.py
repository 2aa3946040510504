"""``sparkstorm monitor``: Storm's ``storm monitor``, a component's throughput.

``sparkstorm monitor NAME [-m COMPONENT] [-i SECS] [-s STREAM] [-w emitted|transferred] [--count
N] [-e ENV]`` prints it every interval (Nimbus found as :mod:`sparkstorm.cli.cluster_args` says).

It reads Nimbus's REST API only: the id from ``/api/v1/topology/summary``, the components
from ``/api/v1/topology/{id}`` and, every interval, the component's all-time count on the
stream from ``/api/v1/topology/{id}/component/{component}`` (``outputStats``). Each line is
the difference between two polls, tab separated, as Storm prints it::

    topology     component  parallelism  stream   time-diff ms  emitted  throughput (tuples/s)
    exclamation  word       1            default  2003          412      205.7

Without ``-m`` the topology's only spout is watched. Counts come from the workers'
heartbeats (every ``worker.heartbeat.frequency.secs``), so an interval shorter than that
shows uneven lines. A count that went down means a restarted worker (its counters start
again from zero): the line then shows what the new worker counted.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from sparkstorm.cli.cluster_args import add_cluster_arguments, nimbus_client
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.errors import ConfigError

WATCHED = ("emitted", "transferred")
DEFAULT_INTERVAL_SECS = 4.0
"""Storm's default ``-i``."""


def register(commands: Any) -> None:
    """Add the ``monitor`` subcommand."""
    parser = commands.add_parser("monitor", help="print a component's throughput every "
                                 "interval (Storm's 'storm monitor')")
    parser.add_argument("name", help="topology name")
    parser.add_argument("-m", "--component", default=None,
                        help="component id (default: the topology's only spout)")
    parser.add_argument("-i", "--interval", type=float, default=DEFAULT_INTERVAL_SECS,
                        help=f"seconds between lines (default {DEFAULT_INTERVAL_SECS:g})")
    parser.add_argument("-s", "--stream", default="default",
                        help="output stream of the component (default: 'default')")
    parser.add_argument("-w", "--watch", choices=WATCHED, default="emitted",
                        help="which count to follow (default: emitted)")
    parser.add_argument("--count", type=int, default=None, metavar="N",
                        help="stop after N lines (default: run until Ctrl-C)")
    add_cluster_arguments(parser)
    parser.set_defaults(handler=monitor_command)


@dataclass(frozen=True)
class Sample:
    """One poll: when (monotonic seconds), the watched count and the executors."""

    at: float
    count: int
    executors: int


class Monitor:
    """Polls one component of one topology through a Nimbus client.

    Args:
        client: a :class:`~sparkstorm.cluster.nimbus.client.NimbusClient`.
        name: the topology name.
        component: the component id, or None for the only spout.
        stream: the output stream.
        watch: ``"emitted"`` or ``"transferred"``.
    """

    def __init__(self, client: Any, name: str, component: str | None, stream: str,
                 watch: str) -> None:
        self.client = client
        self.name = name
        self.component = component or ""
        self.stream = stream
        self.watch = watch
        self.topology_id = ""

    def resolve(self) -> None:
        """Find the topology id and the component, and check the stream.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND`` or ``COMPONENT_NOT_FOUND``, listing what
                exists.
            ConfigError: ``MONITOR_COMPONENT_REQUIRED`` (no ``-m`` and several spouts),
                ``MONITOR_UNKNOWN_STREAM``.
        """
        self.topology_id = self._topology_id()
        page = self.client.call("GET", f"/api/v1/topology/{quote(self.topology_id)}")
        spouts = [str(s["spoutId"]) for s in page.get("spouts", [])]
        bolts = [str(b["boltId"]) for b in page.get("bolts", [])]
        if not self.component:
            self.component = self._only_spout(spouts)
        elif self.component not in spouts + bolts:
            msg = (f"topology {self.name!r} has no component {self.component!r}; its spouts "
                   f"are {sorted(spouts)} and its bolts {sorted(bolts)}")
            raise NimbusError(msg, code="COMPONENT_NOT_FOUND")
        self._check_stream()

    def _topology_id(self) -> str:
        rows = self.client.topologies()
        for row in rows:
            if row["name"] == self.name:
                return str(row["id"])
        names = sorted(str(row["name"]) for row in rows)
        msg = (f"no live topology named {self.name!r}; "
               + (f"the live ones are {names}" if names else "no topology is running"))
        raise NimbusError(msg, code="TOPOLOGY_NOT_FOUND")

    def _only_spout(self, spouts: list[str]) -> str:
        if len(spouts) == 1:
            return spouts[0]
        msg = (f"topology {self.name!r} has {len(spouts)} spouts {sorted(spouts)}; choose the "
               "component to watch with -m COMPONENT")
        raise ConfigError(msg, code="MONITOR_COMPONENT_REQUIRED")

    def _check_stream(self) -> None:
        """Refuse a stream the component does not declare.

        Only when the spec can be read: it needs the cluster token; without it every stream is taken
        as is.
        """
        try:
            spec = self.client.topology_spec(self.topology_id)
        except NimbusError as exc:
            if exc.code.startswith("AUTH_"):
                return
            raise
        component = next(c for c in spec["components"] if c["name"] == self.component)
        streams = sorted(str(o["name"]) for o in component.get("outputs", []))
        if self.stream not in streams:
            msg = (f"component {self.component!r} of topology {self.name!r} has no output "
                   f"stream {self.stream!r}; its streams are {streams}; pass one with -s")
            raise ConfigError(msg, code="MONITOR_UNKNOWN_STREAM")

    def sample(self) -> Sample:
        """Poll the component page once."""
        page = self.client.call("GET", f"/api/v1/topology/{quote(self.topology_id)}/component/"
                                f"{quote(self.component, safe='')}")
        count = sum(int(row.get(self.watch) or 0) for row in page.get("outputStats", [])
                    if row.get("stream") == self.stream)
        return Sample(time.monotonic(), count, int(page.get("executors") or 0))

    def header(self) -> str:
        """The first line, Storm's column names."""
        return "\t".join(("topology", "component", "parallelism", "stream", "time-diff ms",
                          self.watch, "throughput (tuples/s)"))

    def line(self, before: Sample, after: Sample) -> str:
        """One line: the difference between two polls."""
        diff_ms = max(1, round((after.at - before.at) * 1000))
        diff = after.count - before.count if after.count >= before.count else after.count
        throughput = diff * 1000 / diff_ms
        return "\t".join((self.name, self.component, str(after.executors), self.stream,
                          str(diff_ms), str(diff), f"{throughput:.1f}"))


def _check_options(args: argparse.Namespace) -> None:
    if not args.interval > 0:
        msg = f"-i {args.interval:g}: the interval must be a positive number of seconds"
        raise ConfigError(msg, code="MONITOR_BAD_OPTION")
    if args.count is not None and args.count < 1:
        msg = f"--count {args.count}: give a positive number of lines, or leave it out"
        raise ConfigError(msg, code="MONITOR_BAD_OPTION")


def monitor_command(args: argparse.Namespace) -> int:
    """Print the header, then one line every interval until ``--count`` lines or Ctrl-C."""
    _check_options(args)
    try:
        with nimbus_client(args) as client:
            monitor = Monitor(client, args.name, args.component, args.stream, args.watch)
            monitor.resolve()
            print(monitor.header(), flush=True)
            _loop(monitor, args.interval, args.count)
    except KeyboardInterrupt:
        return 0
    return 0


def _loop(monitor: Monitor, interval: float, count: int | None) -> None:
    before, lines = monitor.sample(), 0
    deadline = before.at
    while count is None or lines < count:
        deadline += interval  # paced on a fixed grid: slow polls do not drift the lines
        time.sleep(max(0.0, deadline - time.monotonic()))
        after = monitor.sample()
        print(monitor.line(before, after), flush=True)
        before, lines = after, lines + 1
