"""``sparkstorm stats``: streamparse's ``sparse stats``, Storm UI's numbers as terminal tables.

``stats [-n NAME] [-c COMPONENT] [--all] [-e ENV]`` reads Nimbus's REST API only:

- no name: the cluster (``/api/v1/cluster/summary``, ``/api/v1/nimbus/summary``), its
  topologies (``/api/v1/topology/summary``) and supervisors (``/api/v1/supervisor/summary``);
  with ``--all``, then every topology as below;
- ``-n NAME``: the topology's summary, its stats per window, its spouts and bolts (all time,
  ``/api/v1/topology/{id}``); with ``--all``, then every component as below;
- ``-n NAME -c COMPONENT``: the component's stats per window, its input and output streams
  and one row per executor (``/api/v1/topology/{id}/component/{component}``).

``-c`` is streamparse's ``--component`` here: configuration overrides are ``--config``.
"""

from __future__ import annotations

import argparse
from typing import Any
from urllib.parse import quote

from rich.table import Table

from sparkstorm.cli._tables import printer, table
from sparkstorm.cli.cluster_args import (
    add_cluster_arguments,
    nimbus_client,
    nimbus_target,
    topology_name,
)

_TOPOLOGY = [("name", "name"), ("id", "id"), ("status", "status"), ("uptime", "uptime"),
             ("workersTotal", "workers"), ("executorsTotal", "executors"),
             ("tasksTotal", "tasks")]
_WINDOW_COUNTS = [("emitted", "emitted"), ("transferred", "transferred")]
_ACKS = [("acked", "acked"), ("failed", "failed")]


def register(commands: Any) -> None:
    """Add the ``stats`` subcommand."""
    parser = commands.add_parser("stats", help="print a topology's or the cluster's "
                                 "statistics as tables (streamparse's 'sparse stats')")
    parser.add_argument("-n", "--name", help="topology name (default: the cluster summary)")
    parser.add_argument("-c", "--component", help="one component's stats and executors")
    parser.add_argument("--all", action="store_true",
                        help="with -n: every component of the topology; without: every "
                             "topology of the cluster")
    add_cluster_arguments(parser, config_flags=("--config",))
    parser.set_defaults(handler=stats_command)


def stats_command(args: argparse.Namespace) -> int:
    """Print the tables the arguments ask for."""
    target = nimbus_target(args)
    name = args.name
    if name is None and args.component is not None:
        name = topology_name(args, target.project, "stats -c COMPONENT")
    console = printer()
    with nimbus_client(args, target) as client:
        for item in _tables(client, name, args.component, every=args.all):
            console.print(item)
            console.print()
    return 0


def _tables(client: Any, name: str | None, component: str | None, *,
            every: bool) -> list[Table]:
    if name is None:
        tables = cluster_tables(client.call("GET", "/api/v1/cluster/summary"),
                                client.call("GET", "/api/v1/nimbus/summary"),
                                client.topologies(),
                                client.call("GET", "/api/v1/supervisor/summary")[
                                    "supervisors"])
        if every:
            for row in client.topologies():
                tables += _topology(client, str(row["id"]), None, every=False)
        return tables
    return _topology(client, client.topology_id(name), component, every=every)


def _topology(client: Any, topology_id: str, component: str | None, *,
              every: bool) -> list[Table]:
    base = f"/api/v1/topology/{quote(topology_id, safe='')}"
    if component is not None:
        return component_tables(client.call("GET", f"{base}/component/"
                                            f"{quote(component, safe='')}"))
    page = client.call("GET", base)
    tables = topology_tables(page)
    if every:
        for name in [s["spoutId"] for s in page.get("spouts", [])] + [
                b["boltId"] for b in page.get("bolts", [])]:
            tables += component_tables(client.call(
                "GET", f"{base}/component/{quote(str(name), safe='')}"))
    return tables


def cluster_tables(cluster: dict[str, Any], nimbus: dict[str, Any],
                   topologies: list[dict[str, Any]],
                   supervisors: list[dict[str, Any]]) -> list[Table]:
    """Cluster summary, topology summary and supervisor summary, as streamparse prints them."""
    uptime = next((n.get("nimbusUpTime") for n in nimbus.get("nimbuses", [])), None)
    summary = {**cluster, "nimbusUptime": uptime}
    return [
        table("Cluster summary", [summary], [
            ("stormVersion", "version"), ("nimbusUptime", "nimbus uptime"),
            ("supervisors", "supervisors"), ("topologies", "topologies"),
            ("slotsTotal", "slots"), ("slotsUsed", "used"), ("slotsFree", "free"),
            ("executorsTotal", "executors"), ("tasksTotal", "tasks")]),
        table("Topology summary", topologies, _TOPOLOGY),
        table("Supervisor summary", supervisors, [
            ("id", "id"), ("host", "host"), ("uptime", "uptime"), ("slotsTotal", "slots"),
            ("slotsUsed", "used"), ("slotsFree", "free")]),
    ]


def topology_tables(page: dict[str, Any]) -> list[Table]:
    """A topology page's summary, stats per window, spouts and bolts."""
    name = page.get("name", "?")
    return [
        table(f"Topology summary: {name}", [page], _TOPOLOGY),
        table(f"Topology stats: {name}", page.get("topologyStats", []), [
            ("windowPretty", "window"), *_WINDOW_COUNTS,
            ("completeLatency", "complete latency ms"), *_ACKS]),
        table(f"Spouts (all time): {name}", page.get("spouts", []), [
            ("spoutId", "spout"), ("executors", "executors"), ("tasks", "tasks"),
            *_WINDOW_COUNTS, ("completeLatency", "complete latency ms"), *_ACKS,
            ("lastError", "last error")]),
        table(f"Bolts (all time): {name}", page.get("bolts", []), [
            ("boltId", "bolt"), ("executors", "executors"), ("tasks", "tasks"),
            *_WINDOW_COUNTS, ("capacity", "capacity"),
            ("executeLatency", "execute latency ms"), ("executed", "executed"),
            ("processLatency", "process latency ms"), *_ACKS, ("lastError", "last error")]),
    ]


def component_tables(page: dict[str, Any]) -> list[Table]:
    """A component page's stats per window, its streams and its executors."""
    where = f"{page.get('id', '?')} of {page.get('name', '?')}"
    tables = [table(f"Component summary: {where}", [page], [
        ("id", "component"), ("componentType", "type"), ("name", "topology"),
        ("executors", "executors"), ("tasks", "tasks")])]
    if page.get("componentType") == "spout":
        latency = [("completeLatency", "complete latency ms")]
        tables += [
            table(f"Spout stats: {where}", page.get("spoutSummary", []), [
                ("windowPretty", "window"), *_WINDOW_COUNTS, *latency, *_ACKS]),
            table(f"Output stats (all time): {where}", page.get("outputStats", []), [
                ("stream", "stream"), *_WINDOW_COUNTS, *latency, *_ACKS])]
    else:
        latency = [("capacity", "capacity"), ("executeLatency", "execute latency ms"),
                   ("executed", "executed"), ("processLatency", "process latency ms")]
        tables += [
            table(f"Bolt stats: {where}", page.get("boltStats", []), [
                ("windowPretty", "window"), *_WINDOW_COUNTS, *latency, *_ACKS]),
            table(f"Input stats (all time): {where}", page.get("inputStats", []), [
                ("component", "component"), ("stream", "stream"), *latency[1:], *_ACKS]),
            table(f"Output stats (all time): {where}", page.get("outputStats", []), [
                ("stream", "stream"), *_WINDOW_COUNTS])]
    tables.append(table(f"Executors (all time): {where}", page.get("executorStats", []), [
        ("id", "tasks"), ("executorId", "executor"), ("host", "host"), ("port", "port"),
        ("uptime", "uptime"), *_WINDOW_COUNTS, *latency, *_ACKS]))
    return tables
