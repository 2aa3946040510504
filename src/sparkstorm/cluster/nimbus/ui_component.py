"""Storm UI's component page, ``GET /api/v1/topology/{id}/component/{component}?window=``.

It has Storm's field names (shared/reference/storm-ui-rest-api.md) and our extensions
(``failuresByCause``, ``failureReasons``, ``recentWindows``).

Statistics come from the latest heartbeat of each assigned worker: per component (with the
``by_stream`` split; bolt inputs keyed ``"<source>:<stream>"``) and per executor, for each of
Storm's windows. Latencies are per component, so every stream row repeats the component's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.ui_progress import reset_fields, window_note
from sparkstorm.cluster.nimbus.ui_stats import (
    ALL_TIME,
    WINDOWS,
    TopologyStatsView,
    WorkerBeat,
    check_window,
    window_pretty,
)
from sparkstorm.cluster.nimbus.ui_views import (
    current_spec,
    debug_fields,
    failures_by_cause,
    latency,
    log_link,
    pretty_uptime,
    with_intervals,
)

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.ui_views import UiViews

_COUNTS = ("emitted", "transferred", "executed", "acked", "failed")


class ComponentPage:
    """Builds the component page of one Nimbus."""

    def __init__(self, views: UiViews) -> None:
        self.views = views
        self.topologies = views.topologies
        self.state = views.state
        self.clock = views.clock

    def page(self, topology_id: str, name: str, window: str | None = None) -> dict[str, Any]:
        """The component page for ``window`` (all time by default).

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``, ``COMPONENT_NOT_FOUND``, ``UNKNOWN_WINDOW``.
        """
        window = check_window(window)
        base = self.topologies.storm(topology_id)
        spec = current_spec(base, self.topologies.topology_spec(topology_id))
        found = [c for c in spec["components"] if c["name"] == name]
        if not found:
            names = sorted(str(c["name"]) for c in spec["components"])
            msg = f"topology {topology_id} has no component {name!r}; its components are {names}"
            raise NimbusError(msg, code="COMPONENT_NOT_FOUND")
        component = found[0]
        kind = str(component["kind"])
        view = self.views.beats(topology_id)
        by_window = {w: view.components(w).get(name, {}) for w in WINDOWS}
        totals = by_window[window]
        resets = reset_fields([w.stats for w in view.beats], self.clock())
        page = {
            "user": "", "id": name, "encodedId": quote(name, safe=""), "name": base.name,
            "executors": int(component.get("par", 1)),
            "tasks": int(component.get("num_tasks", 1)),
            "requestedMemOnHeap": 0.0, "requestedMemOffHeap": 0.0, "requestedCpu": 0.0,
            "requestedGenericResources": "", "schedulerDisplayResource": False,
            "topologyId": topology_id, "encodedTopologyId": quote(topology_id, safe=""),
            "topologyStatus": str(base.status), "window": window,
            "windowHint": window_pretty(window) + _component_note(window, resets),
            **resets, "componentType": kind,
            **debug_fields(self.views.sources.sampling(topology_id, name)),
            "profilingAndDebuggingCapable": False, "profileActionEnabled": False,
            "profilerActive": [], "componentErrors": self._errors(topology_id, name),
            "eventLogLink": "",
            "executorStats": self._executors(topology_id, view, window, name, kind),
            "recentWindows": with_intervals([_recent(r, name) for r in view.recent_windows()]),
            # sparkstorm: task id -> the gauges its component publishes (latest values)
            "componentMetrics": by_window[ALL_TIME].get("metrics") or {},
        }
        error = self.state.last_error(topology_id, name)
        last_error = error.error[:200] if error else ""
        if kind == "spout":
            page.update(self._spout(totals, by_window, last_error))
        else:
            page.update(self._bolt(totals, by_window))
        return page

    def _errors(self, topology_id: str, name: str) -> list[dict[str, Any]]:
        now = self.clock()
        return [{"error": e.error, "errorTime": int(e.time_secs), "errorHost": e.host,
                 "errorPort": e.port,
                 "errorWorkerLogLink": self.views.error_log_link(topology_id, e.port),
                 "errorLapsedSecs": int(now - e.time_secs)}
                for e in reversed(self.state.errors(topology_id, name))]  # oldest first

    @staticmethod
    def _spout(totals: dict[str, Any], by_window: dict[str, dict[str, Any]],
               last_error: str) -> dict[str, Any]:
        streams = totals.get("by_stream") or {}
        summary = [{"window": w, "windowPretty": window_pretty(w),
                    **{k: int(stats.get(k, 0)) for k in ("emitted", "transferred", "acked",
                                                         "failed")},
                    "completeLatency": latency(stats.get("complete_latency_ms")),
                    "lastError": last_error} for w, stats in by_window.items()]
        names = sorted({s for key in ("emitted", "transferred", "acked", "failed")
                        for s in streams.get(key, {})})
        completes = streams.get("complete_latency_ms") or {}
        outputs = [{"stream": s, **{k: int(streams.get(k, {}).get(s, 0)) for k in
                                    ("emitted", "transferred", "acked", "failed")},
                    "completeLatency": latency(completes.get(s))} for s in names]
        return {"spoutSummary": summary, "outputStats": outputs,
                "failuresByCause": failures_by_cause(totals),
                "failureReasons": list(totals.get("failure_reasons") or [])}

    @staticmethod
    def _bolt(totals: dict[str, Any], by_window: dict[str, dict[str, Any]]) -> dict[str, Any]:
        streams = totals.get("by_stream") or {}
        executes = streams.get("execute_latency_ms") or {}
        processes = streams.get("process_latency_ms") or {}
        summary = [{"window": w, "windowPretty": window_pretty(w),
                    **{k: int(stats.get(k, 0)) for k in _COUNTS},
                    "executeLatency": latency(stats.get("execute_latency_ms")),
                    "processLatency": latency(stats.get("process_latency_ms")),
                    "capacity": latency(stats.get("capacity"))}
                   for w, stats in by_window.items()]
        keys = sorted({s for key in ("executed", "acked", "failed")
                       for s in streams.get(key, {})})
        inputs = []
        for key in keys:
            source, _, stream = key.partition(":")
            inputs.append({"component": source, "encodedComponentId": quote(source, safe=""),
                           "stream": stream or "default",
                           "executed": int(streams.get("executed", {}).get(key, 0)),
                           "executeLatency": latency(executes.get(key)),
                           "processLatency": latency(processes.get(key)),
                           "acked": int(streams.get("acked", {}).get(key, 0)),
                           "failed": int(streams.get("failed", {}).get(key, 0))})
        names = sorted({s for key in ("emitted", "transferred") for s in streams.get(key, {})})
        outputs = [{"stream": s, "emitted": int(streams.get("emitted", {}).get(s, 0)),
                    "transferred": int(streams.get("transferred", {}).get(s, 0))}
                   for s in names]
        return {"boltStats": summary, "inputStats": inputs, "outputStats": outputs}

    def _executors(self, topology_id: str, view: TopologyStatsView, window: str, name: str,
                   kind: str) -> list[dict[str, Any]]:
        """One row per executor of ``name`` (id: its task range, as Storm's).

        Host, port, uptime, CPU and memory are those of the executor's own process, as the
        worker hosting it measured it (not the driver's worker, which counts for all of them):
        a restarted executor's uptime starts again at 0.
        """
        rows: list[dict[str, Any]] = []
        assignment = self.state.get_assignment(topology_id)  # once, not per row
        hosts = self.views.host_names(assignment)
        processes = _executor_processes(view)
        for driver, gid, stats in view.executors(window, name):
            task_range = f"[{stats.get('first_task')}-{stats.get('last_task')}]"
            worker, process = processes.get(gid, (driver, {}))
            uptime = process.get("uptimeSecs")
            if uptime is None:  # a heartbeat from before processes had an uptime
                uptime = worker.beat.uptime_secs if worker.beat else 0.0
            row: dict[str, Any] = {
                "id": task_range, "encodedId": quote(task_range, safe=""),
                "host": hosts.get(worker.slot.node, worker.slot.node),
                "port": worker.slot.port, "uptime": pretty_uptime(uptime),
                "uptimeSeconds": int(uptime), "executorId": gid,
                "workerLogLink": log_link(topology_id, worker.worker_id, f"executor-{gid}"),
                "cpuPercent": process.get("cpuPercent"), "memoryMb": process.get("memoryMb"),
                **{k: int(stats.get(k) or 0) for k in ("emitted", "transferred", "acked",
                                                       "failed")}}
            if kind == "spout":
                row["completeLatency"] = latency(stats.get("complete_latency_ms"))
            else:
                row.update({"executed": int(stats.get("executed") or 0),
                            "executeLatency": latency(stats.get("execute_latency_ms")),
                            "processLatency": latency(stats.get("process_latency_ms")),
                            "capacity": latency(stats.get("capacity"))})
            rows.append(row)
        return rows


def _executor_processes(view: TopologyStatsView
                        ) -> dict[str, tuple[WorkerBeat, dict[str, Any]]]:
    """Executor id -> the worker hosting its process and the process's figures."""
    found: dict[str, tuple[WorkerBeat, dict[str, Any]]] = {}
    for worker in view.beats:
        for gid, process in (worker.resources.get("executors") or {}).items():
            if isinstance(process, dict):
                found[str(gid)] = (worker, process)
    return found


def _component_note(window: str, resets: dict[str, Any]) -> str:
    """The window note of the topology page, and which of this page's figures it leaves out.

    Example:
        >>> _component_note(":all-time", {"statisticsResets": 2, "statisticsResetSecs": 9.0})
        ' (kept across 2 worker restarts; executor rows since their process started)'
        >>> _component_note("600", {"statisticsResets": 1, "statisticsResetSecs": 30.0})
        ' (since the worker restart 30 s ago)'
    """
    note = window_note(window, resets)
    if window == ALL_TIME and note:
        return note[:-1] + "; executor rows since their process started)"
    return note


def _recent(record: dict[str, Any], name: str) -> dict[str, Any]:
    """One chart point of component ``name``."""
    brief = (record.get("components") or {}).get(name) or {}
    return {"window": record.get("window"), "time": record.get("started"),
            "seconds": record.get("seconds"), "jobs": list(record.get("jobs") or []),
            **{k: int(brief.get(k) or 0) for k in _COUNTS},
            "completeLatency": brief.get("complete_latency_ms"),
            "executeLatency": brief.get("execute_latency_ms"),
            "capacity": brief.get("capacity")}
