"""Storm's topology commands: list, kill, activate, deactivate and rebalance.

``sparkstorm list``, ``kill [NAME] [-n NAME] [-w secs]``, ``activate NAME``, ``deactivate NAME``
and ``rebalance NAME [-w secs] [-n workers] [-e component=n]``. Each finds Nimbus as
:mod:`sparkstorm.cli.cluster_args` says: ``-c nimbus.host=...``, streamparse's ``-e ENV``
(``--environment ENV`` for ``rebalance``, whose ``-e`` is Storm's ``--executor``), or the
configuration. ``kill`` without a name kills the streamparse project's only topology, as
``sparse kill`` does.
"""

from __future__ import annotations

import argparse
from typing import Any

from sparkstorm.cli.cluster_args import (
    add_cluster_arguments,
    nimbus_client,
    nimbus_target,
    topology_name,
)
from sparkstorm.errors import ConfigError


def register(commands: Any) -> None:
    """Add the ``list``, ``kill``, ``rebalance``, ``activate`` and ``deactivate`` subcommands."""
    parser = commands.add_parser("list", help="list the topologies Nimbus runs")
    add_cluster_arguments(parser)
    parser.set_defaults(handler=list_command)
    parser = commands.add_parser("kill", help="kill a topology (deactivate, wait, remove)")
    parser.add_argument("topology_name", nargs="?", metavar="NAME",
                        help="topology name (default: -n, else the streamparse project's "
                             "only topology)")
    parser.add_argument("-n", "--name", help="topology name (streamparse's spelling)")
    parser.add_argument("-w", "--wait", type=int, default=None,
                        help="seconds between deactivation and removal "
                             "(default: the topology's topology.message.timeout.secs)")
    add_cluster_arguments(parser)
    parser.set_defaults(handler=kill_command)
    parser = commands.add_parser("rebalance", help="change a topology's executors per "
                                 "component (up to its task count) and restart its worker")
    parser.add_argument("name", help="topology name")
    parser.add_argument("-w", "--wait", type=int, default=None,
                        help="seconds the spouts stay deactivated before the rebalance "
                             "(default: the topology's topology.message.timeout.secs)")
    parser.add_argument("-n", "--num-workers", type=int, default=None,
                        help="number of worker processes to spread the executors over")
    parser.add_argument("-e", "--executor", action="append", default=[],
                        metavar="COMPONENT=N", help="new executor count of a component")
    add_cluster_arguments(parser, environment_flags=("--environment",))
    parser.set_defaults(handler=rebalance_command)
    for action in ("activate", "deactivate"):
        parser = commands.add_parser(action, help=f"{action} a topology's spouts")
        parser.add_argument("name", help="topology name")
        add_cluster_arguments(parser)
        parser.set_defaults(handler=action_command, action=action)


def list_command(args: argparse.Namespace) -> int:
    """Print one line per topology, as ``storm list`` does."""
    with nimbus_client(args) as client:
        rows = client.topologies()
    if not rows:
        print("No topologies running.")
        return 0
    header = ("Topology_name", "Status", "Num_tasks", "Num_workers", "Uptime_secs",
              "Topology_id")
    lines = [header] + [(r["name"], r["status"], str(r["tasksTotal"]), str(r["workersTotal"]),
                         str(r["uptimeSeconds"]), r["id"]) for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        cells = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        print("  ".join(cells).rstrip())
    return 0


def kill_command(args: argparse.Namespace) -> int:
    """Kill the named topology (positional, ``-n``, or the project's only one)."""
    target = nimbus_target(args)
    name = topology_name(args, target.project, "kill")
    with nimbus_client(args, target) as client:
        topology_id = client.topology_id(name)
        client.action(topology_id, "kill" if args.wait is None else f"kill/{args.wait}")
    print(f"Killed topology: {name} ({topology_id})")
    return 0


def action_command(args: argparse.Namespace) -> int:
    """Activate or deactivate the named topology."""
    with nimbus_client(args) as client:
        topology_id = client.topology_id(args.name)
        client.action(topology_id, args.action)
    print(f"{args.action.capitalize()}d topology: {args.name} ({topology_id})")
    return 0


def parse_executors(pairs: list[str]) -> dict[str, int]:
    """``["split=4", "count=2"]`` -> ``{"split": 4, "count": 2}``.

    Raises:
        ConfigError: ``BAD_EXECUTOR_OPTION`` for a pair that is not ``COMPONENT=N``.
    """
    counts: dict[str, int] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            msg = f"-e {pair!r}: expected COMPONENT=N with N a positive integer, e.g. -e split=4"
            raise ConfigError(msg, code="BAD_EXECUTOR_OPTION")
        counts[name.strip()] = int(value)
    return counts


def rebalance_command(args: argparse.Namespace) -> int:
    """Rebalance the named topology."""
    executors = parse_executors(args.executor)
    with nimbus_client(args) as client:
        topology_id = client.topology_id(args.name)
        client.rebalance(topology_id, args.wait, args.num_workers, executors)
    print(f"Topology {args.name} ({topology_id}) is rebalancing")
    return 0
