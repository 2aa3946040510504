"""``sparkstorm slot_usage`` and ``worker_uptime``: streamparse's views of the cluster's workers.

Both read ``/api/v1/supervisor/summary`` and, per supervisor, ``/api/v1/supervisor?id=ID``
(its workers, with their topology, port and uptime) from Nimbus's REST API:

- ``slot_usage [-e ENV]``: one row per supervisor host with its slots, used and free, and one
  column per topology: ``workers (executors)`` it runs on that host, as streamparse's
  "Slot (and Executor) Counts by Topology";
- ``worker_uptime [-e ENV]``: one row per worker: host, port, topology, worker id, uptime.

Example:
    >>> rows = slot_rows([{"id": "s1", "host": "a", "slotsTotal": 2, "slotsUsed": 1,
    ...                    "slotsFree": 1}],
    ...                  [{"supervisorId": "s1", "topologyName": "wc", "executorsTotal": 3}])
    >>> rows[0]["topology:wc"], rows[0]["slotsFree"]
    ('1 (3)', 1)
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from sparkstorm.cli._tables import printer, table
from sparkstorm.cli.cluster_args import add_cluster_arguments, nimbus_client


def register(commands: Any) -> None:
    """Add the ``slot_usage`` and ``worker_uptime`` subcommands (hyphenated aliases too)."""
    parser = commands.add_parser("slot_usage", aliases=["slot-usage"],
                                 help="slots used and free per supervisor host, and the "
                                      "topologies using them (streamparse's)")
    add_cluster_arguments(parser)
    parser.set_defaults(handler=slot_usage_command)
    parser = commands.add_parser("worker_uptime", aliases=["worker-uptime"],
                                 help="every worker's host, port, topology and uptime "
                                      "(streamparse's)")
    add_cluster_arguments(parser)
    parser.set_defaults(handler=worker_uptime_command)


def cluster_workers(client: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The supervisors' rows and every worker of every supervisor."""
    supervisors: list[dict[str, Any]] = client.call("GET", "/api/v1/supervisor/summary")[
        "supervisors"]
    workers: list[dict[str, Any]] = []
    for supervisor in supervisors:
        page = client.call("GET", "/api/v1/supervisor", params={"id": supervisor["id"]})
        workers.extend(page.get("workers", []))
    return supervisors, workers


def slot_rows(supervisors: list[dict[str, Any]],
              workers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per supervisor: its slots and ``workers (executors)`` per ``topology:<name>``."""
    rows = []
    for supervisor in sorted(supervisors, key=lambda s: (str(s["host"]), str(s["id"]))):
        counts: dict[str, tuple[int, int]] = {}
        for worker in workers:
            if worker.get("supervisorId") == supervisor["id"]:
                name = str(worker.get("topologyName"))
                count, executors = counts.get(name, (0, 0))
                counts[name] = (count + 1, executors + int(worker.get("executorsTotal") or 0))
        rows.append({**supervisor, **{f"topology:{name}": f"{count} ({executors})"
                                      for name, (count, executors) in counts.items()}})
    return rows


def slot_table(supervisors: list[dict[str, Any]], workers: list[dict[str, Any]]) -> Table:
    """The slot usage table (see the module docstring)."""
    names = sorted({str(w.get("topologyName")) for w in workers})
    return table("Slot (and executor) counts by topology", slot_rows(supervisors, workers), [
        ("host", "host"), ("id", "supervisor"), ("slotsTotal", "slots"),
        ("slotsUsed", "used"), ("slotsFree", "free"),
        *((f"topology:{n}", n) for n in names)])


def uptime_table(workers: list[dict[str, Any]]) -> Table:
    """One row per worker, by host and port."""
    rows = sorted(workers, key=lambda w: (str(w.get("host")), int(w.get("port") or 0)))
    return table("Worker uptime", rows, [
        ("host", "host"), ("port", "port"), ("topologyName", "topology"),
        ("workerId", "worker id"), ("uptime", "uptime"), ("uptimeSeconds", "uptime secs"),
        ("status", "status")])


def slot_usage_command(args: argparse.Namespace) -> int:
    """Print the slot usage table."""
    with nimbus_client(args) as client:
        supervisors, workers = cluster_workers(client)
    printer().print(slot_table(supervisors, workers))
    return 0


def worker_uptime_command(args: argparse.Namespace) -> int:
    """Print the worker uptime table."""
    with nimbus_client(args) as client:
        _, workers = cluster_workers(client)
    printer().print(uptime_table(workers))
    return 0
