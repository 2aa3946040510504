"""The Storm UI REST API's JSON bodies, with Storm's field names.

See shared/reference/storm-ui-rest-api.md. Statistics come from the latest heartbeat of each
assigned worker. Resource (RAS) fields are reported as zero: we do not account resources yet.

Example:
    >>> pretty_uptime(3725)
    '1h 2m 5s'
    >>> pretty_uptime(5)
    '5s'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote

import sparkstorm
from sparkstorm.cluster.nimbus.applications import application_view
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.secrets_mask import mask_secrets, secret_matcher
from sparkstorm.cluster.nimbus.ui_health import HEALTH_WINDOW, health, owner_summaries
from sparkstorm.cluster.nimbus.ui_progress import (
    health_with_troubles,
    trouble_fields,
    window_note,
)
from sparkstorm.cluster.nimbus.ui_stats import (
    SYSTEM_COMPONENTS,
    WINDOWS,
    TopologyStatsView,
    WorkerBeat,
    check_window,
    window_pretty,
)
from sparkstorm.cluster.nimbus.worker_status import topology_worker_status, worker_row_status
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import Assignment, StormBase, TopologyStatus
from sparkstorm.config import conf_int, conf_str
from sparkstorm.config.keys import MASK_PATTERNS
from sparkstorm.config.reliability import checkpoint_every, reliability_mode
from sparkstorm.engine import FAIL_CAUSES

VERSION = getattr(sparkstorm, "__version__", "0.1.0")
_RAS_DETAIL = tuple(f"{kind}{share}{heap}Mem" for kind in ("requested", "assigned")
                    for share in ("Regular", "Shared") for heap in ("OnHeap", "OffHeap"))
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def _sanitise(stream: str) -> str:
    """Storm's ``:sani-stream``: the stream id with non-word characters replaced by ``_``."""
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in stream)


def pretty_uptime(seconds: float) -> str:
    """Storm's pretty uptime: ``"1d 0h 0m 0s"``, leading zero units left out."""
    left, parts = int(seconds), list[str]()
    for name, size in _UNITS:
        value, left = divmod(left, size)
        if value or parts or size == 1:
            parts.append(f"{value}{name}")
    return " ".join(parts)


def latency(value: object) -> str:
    """A latency as Storm shows it: a string with 3 decimals, ``"0.000"`` when unknown."""
    return f"{float(value):.3f}" if isinstance(value, int | float) else "0.000"


class TopologySource(Protocol):
    """What the UI reads of Nimbus's topologies (Nimbus is one)."""

    def storms(self) -> dict[str, StormBase]:
        """Every topology's storm base, by id."""

    def storm(self, topology_id: str) -> StormBase:
        """One topology's storm base (raises ``TOPOLOGY_NOT_FOUND``)."""

    def topology_spec(self, topology_id: str) -> dict[str, Any]:
        """The submitted spec."""

    def topology_conf(self, topology_id: str) -> dict[str, Any]:
        """The conf the topology runs with."""


@dataclass(frozen=True)
class UiSources:
    """What the UI API bodies are built from.

    The topologies, the cluster state (heartbeats, assignments, supervisors, errors), Nimbus's conf,
    its clock and its start time.
    """

    topologies: TopologySource
    state: ClusterState
    conf: Mapping[str, object]
    clock: Callable[[], float]
    started: float
    sampling: Callable[[str, str | None], float | None] = lambda topology_id, component: None
    """Debug sampling percentage of a topology (component None) or component; None: off."""


class UiViews:
    """Builds the UI API bodies from :class:`UiSources`."""

    def __init__(self, sources: UiSources) -> None:
        self.sources = sources
        self.topologies = sources.topologies
        self.state = sources.state
        self.clock = sources.clock
        self.secrets = secret_matcher(sources.conf.get("ui.conf.mask.patterns")  # type: ignore[arg-type]
                                      or MASK_PATTERNS)

    def _used_slots(self) -> dict[str, int]:
        used: dict[str, int] = {}
        for topology_id in self.state.assignments():
            assignment = self.state.get_assignment(topology_id)
            for slot in assignment.slots() if assignment else ():
                used[slot.node] = used.get(slot.node, 0) + 1
        return used

    def cluster_summary(self) -> dict[str, Any]:
        """``GET /api/v1/cluster/summary``."""
        supervisors = self.state.all_supervisor_info()
        total = sum(len(s.ports) for s in supervisors.values())
        used = sum(self._used_slots().values())
        storms = self.topologies.storms()
        executors = sum(sum(b.component_executors.values()) for b in storms.values())
        tasks = sum(self._tasks(tid) for tid in storms)
        return {"stormVersion": VERSION, "user": "", "supervisors": len(supervisors),
                "topologies": len(storms), "slotsTotal": total, "slotsUsed": used,
                "slotsFree": total - used, "executorsTotal": executors, "tasksTotal": tasks,
                "totalMem": 0.0, "totalCpu": 0.0, "availMem": 0.0, "availCpu": 0.0,
                "fragmentedMem": 0.0, "fragmentedCpu": 0.0,
                "memAssignedPercentUtil": "0.0", "cpuAssignedPercentUtil": "0.0",
                "availGenerics": "", "totalGenerics": "",
                "stormVersionInfo": {"version": VERSION, "revision": "", "branch": "",
                                     "date": "", "srcChecksum": ""},
                "schedulerDisplayResource": False, "bugtracker-url": None,
                "central-log-url": None}

    def nimbus_summary(self) -> dict[str, Any]:
        """``GET /api/v1/nimbus/summary``: this Nimbus, the leader (no HA yet)."""
        conf = self.sources.conf
        uptime = max(0.0, self.clock() - self.sources.started)
        host = conf_str(conf, "nimbus.host")
        return {"nimbuses": [{"host": host, "port": conf_int(conf, "nimbus.port"),
                              "status": "Leader", "version": VERSION,
                              "nimbusUpTime": pretty_uptime(uptime),
                              "nimbusUpTimeSeconds": int(uptime), "nimbusLogLink": ""}]}

    def cluster_configuration(self) -> dict[str, Any]:
        """``GET /api/v1/cluster/configuration`` (also ``/api/v1/nimbus/conf``).

        Nimbus's effective conf, secrets masked.
        """
        return mask_secrets(dict(self.sources.conf), self.secrets)

    def topology_conf(self, topology_id: str) -> dict[str, Any]:
        """``GET /api/v1/topology/{id}/conf``: the conf the topology runs with, secrets masked.

        None is stored with it; masked again in case.
        """
        self.topologies.storm(topology_id)
        return mask_secrets(self.topologies.topology_conf(topology_id), self.secrets)

    def visualization(self, topology_id: str) -> dict[str, Any]:
        """``GET /api/v1/topology/{id}/visualization``: the DAG, open to read.

        ``components`` has the spec's shape (name, kind, par, num_tasks, inputs with their
        groupings, outputs) without code references or component configs, so the web UI
        draws it without the token; ``visualization`` is Storm's map (component id to
        ``:type`` and ``:inputs`` of ``:component``, ``:stream``, ``:sani-stream``,
        ``:grouping``).
        """
        spec = current_spec(self.topologies.storm(topology_id),
                            self.topologies.topology_spec(topology_id))
        components, storm_map = [], {}
        for c in spec["components"]:
            inputs = [{"source": i["source"], "stream": i.get("stream", "default"),
                       "grouping": i.get("grouping") or {}} for i in c.get("inputs", [])]
            outputs = [{"name": o.get("name", "default"), "fields": list(o.get("fields", [])),
                        "direct": bool(o.get("direct", False))} for o in c.get("outputs", [])]
            components.append({"name": c["name"], "kind": c["kind"],
                               "par": int(c.get("par", 1)),
                               "num_tasks": int(c.get("num_tasks", 1)),
                               "inputs": inputs, "outputs": outputs})
            storm_map[c["name"]] = {
                ":type": c["kind"], ":capacity": 0.0, ":latency": None, ":transferred": None,
                ":stats": [], ":link": f"/component.html?id={quote(c['name'], safe='')}"
                                       f"&topology_id={quote(topology_id, safe='')}",
                ":inputs": [{":component": i["source"], ":stream": i["stream"],
                             ":sani-stream": _sanitise(i["stream"]),
                             ":grouping": str(i["grouping"].get("type", "")).lower()}
                            for i in inputs]}
        return {"topologyId": topology_id, "components": components,
                "visualization": storm_map}

    def supervisor_summary(self) -> dict[str, Any]:
        """``GET /api/v1/supervisor/summary``."""
        used = self._used_slots()
        rows = [{"id": sid, "host": info.hostname, "uptime": pretty_uptime(info.uptime_secs),
                 "uptimeSeconds": int(info.uptime_secs), "slotsTotal": len(info.ports),
                 "slotsUsed": used.get(sid, 0), "slotsFree": len(info.ports) - used.get(sid, 0),
                 "totalMem": 0.0, "totalCpu": 0.0, "usedMem": 0.0, "usedCpu": 0.0,
                 "availMem": 0.0, "availCpu": 0.0, "version": info.version,
                 "blacklisted": False, "logLink": "", "totalGenericResources": "",
                 "usedGenericResources": "", "availGenericResources": ""}
                for sid, info in sorted(self.state.all_supervisor_info().items())]
        return {"supervisors": rows, "schedulerDisplayResource": False, "logviewerPort": 0,
                "logviewerScheme": "http"}

    def supervisor(self, supervisor_id: str | None, host: str | None) -> dict[str, Any]:
        """``GET /api/v1/supervisor?id=...|host=...``: the matching supervisors with their workers.

        Raises:
            NimbusError: ``SUPERVISOR_NOT_FOUND`` when none matches.
        """
        every = self.supervisor_summary()["supervisors"]
        if supervisor_id:  # as Storm: the id wins over the host
            rows = [r for r in every if r["id"] == supervisor_id]
        elif host:
            rows = [r for r in every if r["host"] == host]
        else:
            msg = "give ?id=<supervisor id> or ?host=<host name>; see /api/v1/supervisor/summary"
            raise NimbusError(msg, code="BAD_REQUEST")
        if not rows:
            msg = (f"no supervisor with id {supervisor_id!r}" if supervisor_id is not None
                   else f"no supervisor on host {host!r}") + \
                "; see GET /api/v1/supervisor/summary for the ones alive"
            raise NimbusError(msg, code="SUPERVISOR_NOT_FOUND")
        ids = {r["id"] for r in rows}
        workers: list[dict[str, Any]] = []
        for topology_id, base in sorted(self.topologies.storms().items()):
            assignment = self.state.get_assignment(topology_id)
            view = self.beats(topology_id)
            workers.extend(w for w in self._workers(topology_id, base, assignment, view)
                           if w["supervisorId"] in ids)
        return {"supervisors": rows, "workers": workers, "schedulerDisplayResource": False,
                "logviewerPort": 0, "logviewerScheme": "http"}

    def topology_workers(self, topology_id: str) -> dict[str, Any]:
        """``GET /api/v1/topology-workers/{id}``: its workers' distinct host/port pairs."""
        self.topologies.storm(topology_id)
        assignment = self.state.get_assignment(topology_id)
        slots = list(assignment.worker_ids) if assignment else []
        hosts = self.host_names(assignment)
        pairs = sorted({(hosts.get(slot.node, slot.node), slot.port) for slot in slots})
        return {"hostPortList": [{"host": h, "port": p} for h, p in pairs],
                "logviewerPort": 0, "logviewerScheme": "http"}

    def worker_ids(self, topology_id: str) -> list[str]:
        """The ids of the workers assigned to ``topology_id``."""
        assignment = self.state.get_assignment(topology_id)
        return list(assignment.worker_ids.values()) if assignment else []

    def host_names(self, assignment: Assignment | None) -> dict[str, str]:
        """The host name of each supervisor (node) id.

        The assignment's, else the one the supervisor reports (a worker's host is its supervisor's,
        not the supervisor id).
        """
        hosts = {sid: info.hostname for sid, info in self.state.all_supervisor_info().items()}
        if assignment is not None:
            hosts.update(assignment.node_host)
        return hosts

    def topology_summary(self) -> dict[str, Any]:
        """``GET /api/v1/topology/summary``."""
        rows = [self._topology_row(tid, base)
                for tid, base in sorted(self.topologies.storms().items())]
        return {"topologies": rows, "schedulerDisplayResource": False}

    def _spec(self, topology_id: str) -> dict[str, Any]:
        try:
            return self.topologies.topology_spec(topology_id)
        except OSError:
            return {"components": []}

    def _tasks(self, topology_id: str) -> int:
        return sum(int(c.get("num_tasks", 1)) for c in self._spec(topology_id)["components"])

    def owner_resources(self, owner: str | None = None) -> dict[str, Any]:
        """``GET /api/v1/owner-resources[/{owner}]``: Storm's per-owner summary.

        One owner's with its topologies when ``owner`` is given; zeros for an owner without any.
        """
        rows = [self._topology_row(tid, base)
                for tid, base in sorted(self.topologies.storms().items())]
        if owner is None:
            return {"owners": owner_summaries(rows), "schedulerDisplayResource": False}
        mine = [r for r in rows if r["owner"] == owner]
        summary = owner_summaries(mine) or owner_summaries([{"owner": owner}])
        if not mine:
            summary[0]["totalTopologies"] = 0
        return {**summary[0], "topologies": mine, "schedulerDisplayResource": False}

    def _topology_row(self, topology_id: str, base: StormBase,
                      conf: dict[str, Any] | None = None) -> dict[str, Any]:
        """One topology's summary row (``conf``: its conf, when the caller read it)."""
        assignment = self.state.get_assignment(topology_id)
        uptime = max(0.0, self.clock() - base.launch_time_secs)
        view = self.beats(topology_id)
        spouts = {str(c["name"]) for c in self._spec(topology_id)["components"]
                  if c["kind"] == "spout"}
        totals = [w.process_totals() for w in view.beats]
        spark = next((w.stats.get("spark_ui_url") for w in view.beats
                      if w.stats.get("spark_ui_url")), None)
        workers = topology_worker_status(view.beats, self.clock())
        trouble = trouble_fields(
            [w.stats for w in view.beats], self.clock(),
            running=workers["workerStatus"] == "RUNNING" and base.status != TopologyStatus.KILLED,
            checkpoint_windows=checkpoint_every(self.topologies.topology_conf(topology_id)
                                                if conf is None else conf))
        return {"id": topology_id, "encodedId": quote(topology_id, safe=""),
                "health": health_with_troubles(health(view.components(HEALTH_WINDOW), spouts),
                                               trouble["troubles"]),
                **trouble,
                "sparkUiUrl": None if base.status == TopologyStatus.KILLED else spark,
                "cpuPercent": round(sum(t["cpuPercent"] for t in totals), 1),
                "memoryMb": round(sum(t["memoryMb"] for t in totals), 1),
                "name": base.name, "owner": base.owner, "status": str(base.status),
                "uptime": pretty_uptime(uptime), "uptimeSeconds": int(uptime),
                "tasksTotal": self._tasks(topology_id),
                "workersTotal": len(assignment.worker_ids) if assignment else 0,
                "executorsTotal": sum(base.component_executors.values()),
                "replicationCount": 1, "schedulerInfo": None,
                "requestedMemOnHeap": 0.0, "requestedMemOffHeap": 0.0,
                "requestedTotalMem": 0.0, "requestedCpu": 0.0, "assignedMemOnHeap": 0.0,
                "assignedMemOffHeap": 0.0, "assignedTotalMem": 0.0, "assignedCpu": 0.0,
                "requestedGenericResources": "", "assignedGenericResources": "",
                "topologyVersion": None, "stormVersion": VERSION, **workers}

    def beats(self, topology_id: str) -> TopologyStatsView:
        """The latest heartbeat of each worker assigned to ``topology_id``."""
        assignment = self.state.get_assignment(topology_id)
        if assignment is None:
            return TopologyStatsView([])
        return TopologyStatsView([
            WorkerBeat(slot, wid, self.state.get_worker_heartbeat(topology_id, wid))
            for slot, wid in sorted(assignment.worker_ids.items())])

    def topology(self, topology_id: str, window: str | None = None) -> dict[str, Any]:
        """``GET /api/v1/topology/{id}?window=...`` (all time by default)."""
        window = check_window(window)
        base = self.topologies.storm(topology_id)
        spec = current_spec(base, self.topologies.topology_spec(topology_id))
        conf = self.topologies.topology_conf(topology_id)
        assignment = self.state.get_assignment(topology_id)
        view = self.beats(topology_id)
        stats = view.components(window)
        spouts = [self._spout(topology_id, c, stats.get(c["name"], {}))
                  for c in spec["components"] if c["kind"] == "spout"]
        bolts = [self._bolt(topology_id, c, stats.get(c["name"], {}))
                 for c in spec["components"] if c["kind"] == "bolt"]
        spout_names = {c["name"] for c in spec["components"] if c["kind"] == "spout"}
        causes: dict[str, int] = {}
        reasons: list[dict[str, Any]] = []
        for spout in spouts:
            for cause, n in spout["failuresByCause"].items():
                causes[cause] = causes.get(cause, 0) + n
            reasons.extend({"spoutId": spout["spoutId"], **r}
                           for r in stats.get(spout["spoutId"], {}).get("failure_reasons", []))
        row = self._topology_row(topology_id, base, conf)
        return {**row, "user": "", "window": window,
                "windowHint": window_pretty(window) + window_note(window, row),
                "msgTimeout": conf_int(conf, "topology.message.timeout.secs"),
                # Apex's committed window: the newest checkpoint the topology rolls back to
                "checkpointWindows": checkpoint_every(conf),
                "reliability": reliability_mode(conf),
                "application": application_view(base, conf),
                "committedWindow": self.state.committed_window(topology_id),
                **debug_fields(self.sources.sampling(topology_id, None)),
                "configuration": mask_secrets(conf, self.secrets),
                "schedulerDisplayResource": False, "visualizationTable": [],
                "bugtracker-url": None, "central-log-url": None,
                **dict.fromkeys(_RAS_DETAIL, 0.0),
                "topologyStats": [self._totals(w, view.components(w), spout_names)
                                  for w in WINDOWS],
                "workers": self._workers(topology_id, base, assignment, view),
                "spouts": spouts, "bolts": bolts,
                "failuresByCause": causes,
                # executor calls over a Unix socket (task on its executor's host) vs TCP
                "hostLocality": view.locality(),
                "failureReasons": sorted(reasons, key=lambda r: (
                    -int(r["count"]), -float(r.get("lastSeen") or 0.0)))[:20],
                "recentWindows": with_intervals([recent_window(r, spout_names)
                                                 for r in view.recent_windows()])}

    def _last_error(self, topology_id: str, component: str) -> dict[str, Any]:
        error = self.state.last_error(topology_id, component)
        if error is None:
            return {"lastError": "", "lastErrorLine": "", "errorHost": "", "errorPort": None,
                    "errorWorkerLogLink": "", "errorTime": None, "errorLapsedSecs": None}
        return {"lastError": error.error[:200], "lastErrorLine": exception_line(error.error),
                "errorHost": error.host,
                "errorPort": error.port,
                "errorWorkerLogLink": self.error_log_link(topology_id, error.port),
                "errorTime": int(error.time_secs),
                "errorLapsedSecs": int(self.clock() - error.time_secs)}

    def error_log_link(self, topology_id: str, port: int | None) -> str:
        """The log of the worker on ``port`` that reported an error ("" when it is gone)."""
        assignment = self.state.get_assignment(topology_id)
        for slot, worker_id in (assignment.worker_ids.items() if assignment else ()):
            if slot.port == port:
                return log_link(topology_id, worker_id)
        return ""

    def _common(self, topology_id: str, component: dict[str, Any],
                stats: dict[str, Any]) -> dict[str, Any]:
        return {"executors": int(component.get("par", 1)),
                "tasks": int(component.get("num_tasks", 1)),
                "emitted": int(stats.get("emitted", 0)),
                "transferred": int(stats.get("transferred", 0)),
                "acked": int(stats.get("acked", 0)), "failed": int(stats.get("failed", 0)),
                **self._last_error(topology_id, component["name"])}

    def _spout(self, topology_id: str, component: dict[str, Any],
               stats: dict[str, Any]) -> dict[str, Any]:
        name = component["name"]
        return {"spoutId": name, "encodedSpoutId": quote(name, safe=""),
                **self._common(topology_id, component, stats),
                "completeLatency": latency(stats.get("complete_latency_ms")),
                "failuresByCause": failures_by_cause(stats),
                "bufferedMax": int(stats.get("buffered_max") or 0),
                "bufferBound": int(stats.get("buffer_bound") or 0)}

    def _bolt(self, topology_id: str, component: dict[str, Any],
              stats: dict[str, Any]) -> dict[str, Any]:
        name = component["name"]
        return {"boltId": name, "encodedBoltId": quote(name, safe=""),
                **self._common(topology_id, component, stats),
                "executed": int(stats.get("executed", 0)),
                "executeLatency": latency(stats.get("execute_latency_ms")),
                "processLatency": latency(stats.get("process_latency_ms")),
                "capacity": latency(stats.get("capacity"))}

    @staticmethod
    def _totals(window: str, stats: dict[str, dict[str, Any]],
                spouts: set[str]) -> dict[str, Any]:
        """One ``topologyStats`` row, as Storm makes it.

        Emitted and transferred over every component (system ones left out); acked, failed and
        complete latency over the spouts.
        """
        users = [s for name, s in stats.items() if name not in SYSTEM_COMPONENTS]
        mine = [s for name, s in stats.items() if name in spouts]
        acked = sum(int(s.get("acked", 0)) for s in mine)
        weighted = sum(float(s["complete_latency_ms"]) * int(s.get("acked", 0))
                       for s in mine if s.get("complete_latency_ms") is not None)
        return {"window": window, "windowPretty": window_pretty(window),
                "emitted": sum(int(s.get("emitted", 0)) for s in users),
                "transferred": sum(int(s.get("transferred", 0)) for s in users),
                "acked": acked, "failed": sum(int(s.get("failed", 0)) for s in mine),
                "completeLatency": latency(weighted / acked if acked else None)}

    def _workers(self, topology_id: str, base: StormBase, assignment: Assignment | None,
                 view: TopologyStatsView) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        if assignment is None:
            return rows
        spec = self._spec(topology_id)
        tasks = {str(c["name"]): int(c.get("num_tasks", 1)) for c in spec["components"]}
        hosts = self.host_names(assignment)
        killed = base.status == TopologyStatus.KILLED  # its Spark UI goes (or went) away
        for worker in view.beats:
            slot, worker_id, beat = worker.slot, worker.worker_id, worker.beat
            uptime = beat.uptime_secs if beat else 0.0
            rows.append({"supervisorId": slot.node,
                         "host": hosts.get(slot.node, slot.node),
                         "port": slot.port, "workerId": worker_id, "topologyId": topology_id,
                         "topologyName": base.name,
                         "executorsTotal": len(assignment.executors_in(slot)),
                         "assignedMemOnHeap": 0.0, "assignedMemOffHeap": 0.0,
                         "assignedCpu": 0.0, "componentNumTasks": tasks,
                         "workerLogLink": log_link(topology_id, worker_id),
                         "owner": base.owner,
                         "uptime": pretty_uptime(uptime), "uptimeSeconds": int(uptime),
                         "lastHeartbeatSecs": beat.time_secs if beat else None,
                         **worker.process_totals(),
                         "processes": worker.resources,
                         "status": worker_row_status(worker, self.clock()),
                         "sparkUiUrl": None if killed else
                         worker.stats.get("spark_ui_url") or None})
        return rows


def debug_fields(pct: float | None) -> dict[str, Any]:
    """Storm's ``debug`` and ``samplingPct`` (10 when debugging is off)."""
    return {"debug": pct is not None, "samplingPct": pct if pct is not None else 10}


def exception_line(error: str) -> str:
    r"""The line of a traceback that says what was raised: its last non-empty line.

    The whole text's first 200 characters, Storm's ``lastError``, are the traceback's head.

    Example:
        >>> exception_line("Traceback (most recent call last):\n  File x\nValueError: boom")
        'ValueError: boom'
    """
    lines = [line for line in error.splitlines() if line.strip()]
    return lines[-1].strip()[:1000] if lines else ""


def log_link(topology_id: str, worker_id: str, source: str = "worker") -> str:
    """Storm's ``workerLogLink``: the web UI's live view of a worker's log.

    Or of one of its executors' logs, with ``source="executor-<id>"``.

    Example:
        >>> log_link("wc-1-2", "w 1", "executor-3")
        '/topology/wc-1-2/logs?worker=w%201&source=executor-3'
    """
    return (f"/topology/{quote(topology_id, safe='')}/logs?worker={quote(worker_id, safe='')}"
            f"&source={quote(source, safe='')}")


def current_spec(base: StormBase, spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with each component's ``par`` as it runs now.

    A rebalance changes it; the stored spec keeps what was submitted.
    """
    return {**spec, "components": [
        {**c, "par": int(base.component_executors.get(str(c["name"]), c.get("par", 1)))}
        for c in spec["components"]]}


def failures_by_cause(stats: dict[str, Any]) -> dict[str, int]:
    """A spout's failed trees by cause, every cause present."""
    found = stats.get("failures_by_cause") or {}
    return {cause: int(found.get(cause, 0)) for cause in FAIL_CAUSES}


_BRIEF_DEFAULTS: dict[str, Any] = {
    "emitted": 0, "transferred": 0, "executed": 0, "acked": 0, "failed": 0, "capacity": None,
    "execute_latency_ms": None, "complete_latency_ms": None, "buffered": 0, "buffer_bound": 0}
"""What a heartbeat's brief leaves out (zeros and unknowns)."""


MAX_INTERVAL_SECS = 60.0
"""A longer gap between two recent windows is a restart, not a window's time."""


def with_intervals(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``points`` (oldest first) with ``intervalSeconds``: since the window before began.

    What a rate divides by: a window's count arrived over the time between two windows'
    starts, not over its Spark job's duration (a 20 tuples/s topology whose windows last
    19 ms would plot at 1,000/s). The first point, and one after a gap of more than a minute
    (a restart), has none: the chart then falls back to the job's duration.

    Example:
        >>> [p["intervalSeconds"] for p in with_intervals(
        ...     [{"time": 10.0}, {"time": 10.5}, {"time": 200.0}])]
        [None, 0.5, None]
    """
    previous = None
    for point in points:
        began = point.get("time")
        gap = (began - previous) if isinstance(began, int | float) and isinstance(
            previous, int | float) else None
        point["intervalSeconds"] = (round(gap, 3) if gap is not None
                                    and 0 < gap <= MAX_INTERVAL_SECS else None)
        previous = began
    return points


def recent_window(record: dict[str, Any], spouts: set[str]) -> dict[str, Any]:
    """One ``recentWindows`` point.

    Topology totals as in ``topologyStats`` plus each component's brief figures.
    """
    components = {name: {**_BRIEF_DEFAULTS, "inputs": {}, **brief}
                  for name, brief in (record.get("components") or {}).items()}
    users = [c for name, c in components.items() if name not in SYSTEM_COMPONENTS]
    mine = [c for name, c in components.items() if name in spouts]
    acked = sum(int(c["acked"] or 0) for c in mine)
    weighted = sum(float(c["complete_latency_ms"]) * int(c["acked"] or 0)
                   for c in mine if c["complete_latency_ms"] is not None)
    return {"window": record.get("window"), "time": record.get("started"),
            "seconds": record.get("seconds"), "jobs": list(record.get("jobs") or []),
            "emitted": sum(int(c["emitted"] or 0) for c in users),
            "transferred": sum(int(c["transferred"] or 0) for c in users),
            "acked": acked, "failed": sum(int(c["failed"] or 0) for c in mine),
            "completeLatency": weighted / acked if acked else None,
            "components": components}
