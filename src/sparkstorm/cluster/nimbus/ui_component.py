"""Storm UI's component page, ``GET /api/v1/topology/{id}/component/{component}``, with
Storm's field names (shared/reference/storm-ui-rest-api.md), all-time window only.

Statistics come from the latest heartbeat of each assigned worker, whose summary carries
per-component totals and their ``by_stream`` split (bolt inputs keyed ``"<source>:<stream>"``).
Heartbeats hold no per-executor counts, so ``executorStats`` has one row per worker: the
component's executors in it as one task range, with that worker's totals. Latencies are per
component, so every stream row repeats the component's.

Example:
    >>> component_tasks({"components": [{"name": "b", "num_tasks": 4},
    ...                                  {"name": "a", "num_tasks": 2}]}, "b")
    (3, 6)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.ui_views import ALL_TIME, latency, pretty_uptime

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.service import Nimbus
    from sparkstorm.cluster.state.records import WorkerHeartbeat, WorkerSlot

_COUNTS = ("emitted", "transferred", "executed", "acked", "failed")


def component_tasks(spec: dict[str, Any], name: str) -> tuple[int, int]:
    """First and last task id of component ``name``: tasks are numbered from 1 over the
    components sorted by id (as :func:`~sparkstorm.cluster.nimbus.assigner.topology_executors`
    does)."""
    first = 1
    for component in sorted(spec["components"], key=lambda c: str(c["name"])):
        tasks = int(component.get("num_tasks", 1))
        if component["name"] == name:
            return first, first + tasks - 1
        first += tasks
    msg = f"no component {name!r}"
    raise KeyError(msg)


def _add(into: dict[str, Any], stats: dict[str, Any]) -> None:
    """Sum ``stats`` (one worker's component summary) into ``into``."""
    for key in _COUNTS:
        into[key] = into.get(key, 0) + int(stats.get(key) or 0)
        mine = into.setdefault("by_stream", {}).setdefault(key, {})
        for stream, value in ((stats.get("by_stream") or {}).get(key) or {}).items():
            mine[stream] = mine.get(stream, 0) + int(value)
    for key in ("complete_latency_ms", "execute_latency_ms", "process_latency_ms"):
        if stats.get(key) is not None:
            into[key] = stats[key]  # one worker per topology: latencies are its own


class ComponentPage:
    """Builds the component page of one Nimbus."""

    def __init__(self, nimbus: Nimbus) -> None:
        self.nimbus = nimbus

    def _beats(self, topology_id: str) -> list[tuple[WorkerSlot, str, WorkerHeartbeat | None]]:
        assignment = self.nimbus.state.get_assignment(topology_id)
        if assignment is None:
            return []
        return [(slot, wid, self.nimbus.state.get_worker_heartbeat(topology_id, wid))
                for slot, wid in sorted(assignment.worker_ids.items())]

    def page(self, topology_id: str, name: str) -> dict[str, Any]:
        """The component page.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``, ``COMPONENT_NOT_FOUND``.
        """
        base = self.nimbus.storm(topology_id)
        spec = self.nimbus.topology_spec(topology_id)
        found = [c for c in spec["components"] if c["name"] == name]
        if not found:
            names = sorted(str(c["name"]) for c in spec["components"])
            msg = f"topology {topology_id} has no component {name!r}; its components are {names}"
            raise NimbusError(msg, code="COMPONENT_NOT_FOUND")
        component = found[0]
        kind = str(component["kind"])
        totals: dict[str, Any] = {}
        per_worker = []
        for slot, worker_id, beat in self._beats(topology_id):
            mine: dict[str, Any] = {}
            stats = ((beat.executor_stats.get("components") or {}).get(name)
                     if beat else None)
            if isinstance(stats, dict):
                _add(mine, stats)
                _add(totals, stats)
            per_worker.append((slot, worker_id, beat, mine))
        page = {
            "user": "", "id": name, "encodedId": quote(name, safe=""), "name": base.name,
            "executors": int(component.get("par", 1)),
            "tasks": int(component.get("num_tasks", 1)),
            "requestedMemOnHeap": 0.0, "requestedMemOffHeap": 0.0, "requestedCpu": 0.0,
            "requestedGenericResources": "", "schedulerDisplayResource": False,
            "topologyId": topology_id, "encodedTopologyId": quote(topology_id, safe=""),
            "topologyStatus": str(base.status), "window": ALL_TIME, "windowHint": "All time",
            "componentType": kind, "debug": False, "samplingPct": 10,
            "profilingAndDebuggingCapable": False, "profileActionEnabled": False,
            "profilerActive": [], "componentErrors": self._errors(topology_id, name),
            "executorStats": self._executors(topology_id, spec, name, kind, per_worker),
        }
        if kind == "spout":
            page.update(self._spout(topology_id, name, totals))
        else:
            page.update(self._bolt(totals))
        return page

    def _errors(self, topology_id: str, name: str) -> list[dict[str, Any]]:
        now = self.nimbus.clock()
        return [{"error": e.error, "errorTime": int(e.time_secs), "errorHost": e.host,
                 "errorPort": e.port, "errorWorkerLogLink": "",
                 "errorLapsedSecs": int(now - e.time_secs)}
                for e in reversed(self.nimbus.state.errors(topology_id, name))]  # oldest first

    def _spout(self, topology_id: str, name: str, totals: dict[str, Any]) -> dict[str, Any]:
        streams = totals.get("by_stream") or {}
        complete = latency(totals.get("complete_latency_ms"))
        error = self.nimbus.state.last_error(topology_id, name)
        summary = {**ALL_TIME_ROW, **{k: int(totals.get(k, 0)) for k in
                                      ("emitted", "transferred", "acked", "failed")},
                   "completeLatency": complete, "lastError": error.error[:200] if error else ""}
        names = sorted({s for key in ("emitted", "transferred", "acked", "failed")
                        for s in streams.get(key, {})})
        outputs = [{"stream": s, **{k: int(streams.get(k, {}).get(s, 0)) for k in
                                    ("emitted", "transferred", "acked", "failed")},
                    "completeLatency": complete} for s in names]
        return {"spoutSummary": [summary], "outputStats": outputs}

    @staticmethod
    def _bolt(totals: dict[str, Any]) -> dict[str, Any]:
        streams = totals.get("by_stream") or {}
        execute = latency(totals.get("execute_latency_ms"))
        process = latency(totals.get("process_latency_ms"))
        summary = {**ALL_TIME_ROW, **{k: int(totals.get(k, 0)) for k in _COUNTS},
                   "executeLatency": execute, "processLatency": process, "capacity": "0.000"}
        keys = sorted({s for key in ("executed", "acked", "failed")
                       for s in streams.get(key, {})})
        inputs = []
        for key in keys:
            source, _, stream = key.partition(":")
            inputs.append({"component": source, "encodedComponentId": quote(source, safe=""),
                           "stream": stream or "default",
                           "executed": int(streams.get("executed", {}).get(key, 0)),
                           "executeLatency": execute, "processLatency": process,
                           "acked": int(streams.get("acked", {}).get(key, 0)),
                           "failed": int(streams.get("failed", {}).get(key, 0))})
        names = sorted({s for key in ("emitted", "transferred") for s in streams.get(key, {})})
        outputs = [{"stream": s, "emitted": int(streams.get("emitted", {}).get(s, 0)),
                    "transferred": int(streams.get("transferred", {}).get(s, 0))}
                   for s in names]
        return {"boltStats": [summary], "inputStats": inputs, "outputStats": outputs}

    def _executors(self, topology_id: str, spec: dict[str, Any], name: str, kind: str,
                   per_worker: list[tuple[WorkerSlot, str, WorkerHeartbeat | None,
                                          dict[str, Any]]]) -> list[dict[str, Any]]:
        first, last = component_tasks(spec, name)
        assignment = self.nimbus.state.get_assignment(topology_id)
        rows: list[dict[str, Any]] = []
        for slot, _worker_id, beat, stats in per_worker:
            mine = [e for e in (assignment.executors_in(slot) if assignment else ())
                    if first <= e[0] <= last]
            if not mine:
                continue
            task_range = f"[{mine[0][0]}-{mine[-1][1]}]"
            uptime = beat.uptime_secs if beat else 0.0
            row: dict[str, Any] = {
                "id": task_range, "encodedId": quote(task_range, safe=""),
                "host": assignment.node_host.get(slot.node, slot.node) if assignment else "",
                "port": slot.port, "uptime": pretty_uptime(uptime),
                "uptimeSeconds": int(uptime), "workerLogLink": "",
                **{k: int(stats.get(k, 0)) for k in ("emitted", "transferred", "acked",
                                                     "failed")}}
            if kind == "spout":
                row["completeLatency"] = latency(stats.get("complete_latency_ms"))
            else:
                row.update({"executed": int(stats.get("executed", 0)),
                            "executeLatency": latency(stats.get("execute_latency_ms")),
                            "processLatency": latency(stats.get("process_latency_ms")),
                            "capacity": "0.000"})
            rows.append(row)
        return rows


ALL_TIME_ROW = {"window": ALL_TIME, "windowPretty": "All time"}
