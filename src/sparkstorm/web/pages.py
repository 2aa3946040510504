"""The HTML pages: small server-rendered shells that the scripts under ``static/`` fill.

The scripts fill them from ``/api/v1`` (through this server) and keep them up to date. No inline
script or style, so the Content-Security-Policy can forbid both.
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote

from sparkstorm.web.sessions import Session


def _layout(title: str, session: Session | None, body: str, *, script: str = "",
            page_attrs: str = "") -> str:
    csrf = escape(session.csrf) if session else ""
    scripts = "".join(f'<script src="/static/{name}" defer></script>'
                      for name in ("ui.js", *script.split()))
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="{csrf}">
<title>{escape(title)} - sparkstorm UI</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/static/ui.css">
{scripts}
</head>
<body {page_attrs}>
<header class="top"><a href="/" class="brand">sparkstorm</a><span class="sub">Storm UI</span>
<span id="live" class="live" title="updated every second">live</span></header>
<main>
{body}
</main>
<footer>sparkstorm UI. Data from Nimbus's /api/v1, refreshed every second.</footer>
</body>
</html>
"""


def cluster_page(session: Session) -> str:
    """``/``: cluster summary, Nimbus, supervisors, topologies."""
    body = """
<h1>Cluster summary</h1>
<p id="error" class="error" hidden></p>
<p><a href="/logs">Nimbus and supervisor logs</a></p>
<section><h2>Cluster</h2><table id="cluster-summary" class="kv"><tbody></tbody></table></section>
<section><h2>Nimbus</h2><table id="nimbus"><thead><tr><th>Host</th><th>Port</th>
<th>Status</th><th>Version</th><th>Uptime</th></tr></thead><tbody></tbody></table></section>
<section><h2>Topologies</h2>
<table id="topologies" class="sortable"><thead><tr><th>Name</th><th>Id</th><th>Owner</th>
<th>Status</th><th title="share of tuple trees failed and errors reported in the last 10 minutes">
Health (10 min)</th><th>Uptime</th><th>Workers</th><th>Executors</th><th>Tasks</th>
<th>CPU</th><th>Memory</th><th>Spark UI</th></tr></thead><tbody></tbody>
</table></section>
<section><h2>Supervisors</h2>
<table id="supervisors" class="sortable"><thead><tr><th>Id</th><th>Host</th><th>Uptime</th>
<th>Slots</th><th>Used slots</th><th>Free slots</th><th>Version</th></tr></thead>
<tbody></tbody></table></section>
<section><h2>Cluster configuration</h2><details id="cluster-conf-box"><summary>Nimbus
configuration (secrets masked)</summary>
<table id="cluster-configuration" class="kv"><tbody></tbody></table></details></section>
"""
    return _layout("Cluster", session, body, script="cluster.js", page_attrs='data-page="cluster"')


WINDOWS = (("600", "10 min"), ("10800", "3 h"), ("86400", "1 day"), (":all-time", "All time"))
"""The statistics windows of Storm UI: ``window`` query value and button label."""

TOKEN_DIALOG = """
<dialog id="token-dialog"><form id="token-form" method="dialog">
<p id="confirm-question" class="question"></p>
<div id="token-field">
<p>This needs the cluster token (<code>storm.cluster.token</code>, or the file
<code>&lt;storm.local.dir&gt;/nimbus/token</code> on the Nimbus machine). It is kept for this
browser session by the UI server only.</p>
<label>Cluster token <input id="token-input" type="password" autocomplete="off"></label>
</div>
<p id="token-error" class="error" hidden></p>
<menu><button type="submit" value="ok" id="token-ok">OK</button>
<button type="button" id="token-cancel">Cancel</button></menu>
</form></dialog>
"""

REBALANCE_DIALOG = """
<dialog id="rebalance-dialog"><form id="rebalance-form" method="dialog" novalidate>
<h3>Rebalance topology</h3>
<p class="muted">The topology is deactivated, and after the wait time its worker restarts
with these executor counts. A component has at most as many executors as tasks.</p>
<table id="rebalance-executors"><thead><tr><th>Component</th><th>Tasks</th><th>Executors now</th>
<th>New executors</th></tr></thead><tbody></tbody></table>
<p><label>Workers <input id="rebalance-workers" type="number" min="1" step="1"></label>
<label>Wait (s) <input id="rebalance-wait" type="number" min="0" step="1" value="30"></label></p>
<p id="rebalance-error" class="error" hidden></p>
<menu><button type="submit" id="rebalance-ok" class="danger">Rebalance</button>
<button type="button" id="rebalance-cancel">Cancel</button></menu>
</form></dialog>
"""


STACKS = """
<div id="stacks-box" class="stacks" hidden>
<h3>Stack traces of the workers</h3>
<p id="stacks-status" role="status"></p>
<div id="stacks"></div>
</div>"""


def _window_select() -> str:
    buttons = "".join(f'<button type="button" data-window="{value}" aria-pressed="false">'
                      f"{label}</button>" for value, label in WINDOWS)
    return (f'<div id="window-select" class="window-select" role="group" '
            f'aria-label="statistics window"><span>Window:</span>{buttons}'
            '<span id="window-hint" class="muted"></span></div>')


def _charts(charts: tuple[tuple[str, str], ...]) -> str:
    boxes = "".join(f'<figure class="chart" id="{cid}-box"><figcaption>{escape(title)}'
                    f'</figcaption><div id="{cid}"></div></figure>' for cid, title in charts)
    return (f'<section><h2>Recent windows</h2><div class="charts">{boxes}</div>'
            '<p class="muted" id="chart-caption">one point per statistics window, '
            "newest on the right; they keep growing while the page is open</p></section>")


FAILURES = """
<section id="failures-box"><h2>Failures explained</h2>
<p class="muted" id="failures-hint">Why tuple trees failed in the selected window.</p>
<table id="failures-by-cause"><thead><tr><th>Cause</th><th>Failed</th><th>Share</th></tr>
</thead><tbody></tbody></table>
<table id="failure-reasons"><thead><tr><th>Spout</th><th>Cause</th><th>Reason</th>
<th>Count</th><th>Last seen</th></tr></thead><tbody></tbody></table>
</section>
"""


WINDOWS_BOX = """
<section id="windows-box"><h2>Windows and back-pressure</h2>
<p class="muted">Each window is one Spark job; a window longer than
<code>topology.window.ms</code> means the job takes longer than asked (a loaded machine or a
slow bolt), and tuples wait in the spouts' buffers meanwhile.</p>
<table id="windows" class="kv"><tbody></tbody></table></section>
"""


DEBUG_CONTROLS = """
<span class="debug-controls" title="Storm's debug sampling: a share of the tuples written to
the executors' logs, read in the log viewer">
<label>Sampling (%) <input id="debug-pct" type="number" min="0" max="100" step="any"
value="10"></label>
<button type="button" data-action="debug">Debug</button>
<button type="button" data-action="debug-stop">Stop debug</button>
<span id="debug-state" class="debug-state"></span></span>"""
"""Storm UI's Debug and Stop Debug actions, with the sampling percentage."""

LEVEL_OPTIONS = "".join(f'<option{" selected" if level == "DEBUG" else ""}>{level}</option>'
                        for level in ("ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR",
                                      "FATAL", "OFF"))


def _log_levels(actions: bool) -> str:
    """Storm UI's Change Log Level panel: the levels set now and, with actions, a form."""
    form = f"""
<form id="log-level-form" class="actions log-level-form" novalidate>
<label>Logger <input id="log-level-logger" class="logger" list="log-level-loggers"
value="ROOT" autocomplete="off" spellcheck="false"></label>
<datalist id="log-level-loggers"></datalist>
<label>Level <select id="log-level-level">{LEVEL_OPTIONS}</select></label>
<label>Timeout (s) <input id="log-level-timeout" type="number" min="0" step="1"
value="30"></label>
<button type="submit" id="log-level-apply">Apply</button>
</form>""" if actions else ""
    return f"""
<section id="log-levels-box"><h2>Change log level</h2>
<p class="muted">The level of a Python logger in the topology's worker and executor processes,
for a time (0 s: until cleared). Component loggers are
<code>sparkstorm.component.&lt;name&gt;</code>; <code>ROOT</code> is the root logger. The
workers apply it at their next heartbeat.</p>
<table id="log-levels"><thead><tr><th>Logger</th><th>Level</th><th>Timeout</th>
<th>Expires</th><th></th></tr></thead><tbody></tbody></table>{form}
</section>"""


def topology_page(session: Session, topology_id: str, name: str, actions: bool) -> str:
    """``/topology/{id}``: the topology page.

    Summary and actions, window stats, DAG, failures, charts, spouts, bolts, workers, log
    levels and configuration.
    """
    tid = escape(topology_id)
    action_block = f"""
<div id="actions" class="actions">
<button type="button" data-action="activate">Activate</button>
<button type="button" data-action="deactivate">Deactivate</button>
<button type="button" data-action="rebalance">Rebalance…</button>
<label>Kill wait (s) <input id="kill-wait" type="number" min="0" value="30"></label>
<button type="button" data-action="kill" class="danger">Kill</button>
<button type="button" data-action="stacktrace">Stack traces</button>
{DEBUG_CONTROLS}
<span id="action-status" role="status"></span>
</div>
{STACKS}{TOKEN_DIALOG}{REBALANCE_DIALOG}""" if actions else \
        '<p class="muted">Actions are disabled (ui.actions.enabled: false).</p>'
    charts = _charts((("chart-emitted", "Throughput (emitted/s)"), ("chart-acked", "Acked/s"),
                      ("chart-failed", "Failed/s"),
                      ("chart-latency", "Complete latency (ms)")))
    body = f"""
<p class="crumbs"><a href="/">Cluster</a> / topology</p>
<h1>Topology <span id="topology-name">{escape(name)}</span></h1>
<p id="error" class="error" hidden></p>
<section><h2>Summary</h2>
<table id="topology-summary"><thead><tr><th>Name</th><th>Id</th><th>Owner</th><th>Status</th>
<th>Uptime</th><th>Workers</th><th>Executors</th><th>Tasks</th><th>Message timeout</th>
<th title="topology.reliability: acking (tuple trees), checkpoint (acked when the checkpoint
covering a tuple commits) or none">Reliability</th>
<th title="the newest committed checkpoint: what the topology rolls back to after a failure
(topology.checkpoint.windows)">Committed window</th>
<th title="RUNNING: every worker serves; STARTING; FAILING: a start failed (hover: why)">
Workers state</th></tr>
</thead><tbody></tbody></table>
<ul id="troubles" class="troubles" hidden></ul>
{action_block}
</section>
<section><h2>Topology stats</h2>
<table id="topology-stats"><thead><tr><th>Window</th><th>Emitted</th><th>Transferred</th>
<th>Complete latency</th><th>Acked</th><th>Failed</th></tr></thead><tbody></tbody></table>
</section>
{_window_select()}
<div class="two">
<section><h2>Topology graph</h2><div id="dag" class="dag"></div>
<p class="legend" id="dag-legend">Bolt colour = capacity (share of time busy) in the last
windows: <span class="load-0">idle</span> <span class="load-1">&lt; 0.25</span>
<span class="load-2">&lt; 0.5</span> <span class="load-3">&lt; 0.8</span>
<span class="load-4">&ge; 0.8</span>. Edges: grouping and tuples/s.</p></section>
{FAILURES}
</div>
<section><h2>Spouts <span class="window-label muted"></span></h2>
<table id="spouts" class="sortable"><thead><tr><th>Id</th><th>Executors</th><th>Tasks</th>
<th>Emitted</th><th>Transferred</th><th>Complete latency</th><th>Acked</th><th>Failed</th>
<th>Last error</th></tr></thead><tbody></tbody></table></section>
<section><h2>Bolts <span class="window-label muted"></span></h2>
<table id="bolts" class="sortable"><thead><tr><th>Id</th><th>Executors</th><th>Tasks</th>
<th>Emitted</th><th>Transferred</th><th>Capacity</th><th>Execute latency</th><th>Executed</th>
<th>Process latency</th><th>Acked</th><th>Failed</th><th>Last error</th></tr></thead>
<tbody></tbody></table></section>
{WINDOWS_BOX}
{charts}
<section><h2>Workers</h2>
<table id="workers" class="sortable"><thead><tr><th>Host</th><th>Port</th><th>Supervisor</th>
<th>Status</th><th>Uptime</th><th>Executors</th>
<th title="worker and executor processes, percent of one core">CPU</th>
<th title="resident memory of the worker and executor processes">Memory</th>
<th>Log</th><th>Spark UI</th></tr></thead><tbody></tbody></table></section>
{_log_levels(actions)}
<section><h2>Configuration</h2><details><summary>topology configuration</summary>
<table id="configuration" class="kv"><tbody></tbody></table></details></section>
"""
    attrs = f'data-page="topology" data-topology-id="{tid}"'
    return _layout(f"Topology {name}", session, body,
                   script="charts.js dag.js stacks.js actions.js topology.js", page_attrs=attrs)


def _head(*titles: str) -> str:
    """A table header row: ``<th>`` of each title."""
    return "".join(f"<th>{escape(t)}</th>" for t in titles)


def _window_table(title: str, table: str, head: str) -> str:
    return (f'<section><h2>{title} <span class="window-label muted"></span></h2>\n'
            f'<table id="{table}" class="sortable"><thead><tr>{head}</tr></thead><tbody></tbody>'
            "</table>"
            "</section>")


_EXECUTOR = ("Id", "Host", "Port", "Uptime", "CPU", "Memory", "Log", "Emitted",
             "Transferred")
_COMPONENT_PARTS = {
    # kind: stats header, charts, input/output tables, executor header
    "spout": (
        _head("Window", "Emitted", "Transferred", "Complete latency", "Acked", "Failed"),
        (("chart-emitted", "Emitted/s"), ("chart-acked", "Acked/s"),
         ("chart-failed", "Failed/s"), ("chart-latency", "Complete latency (ms)")),
        _window_table("Output stats", "output-stats", _head(
            "Stream", "Emitted", "Transferred", "Complete latency", "Acked", "Failed")),
        _head(*_EXECUTOR, "Complete latency", "Acked", "Failed")),
    "bolt": (
        _head("Window", "Emitted", "Transferred", "Execute latency", "Executed",
              "Process latency", "Acked", "Failed", "Capacity"),
        (("chart-emitted", "Emitted/s"), ("chart-executed", "Executed/s"),
         ("chart-failed", "Failed/s"), ("chart-latency", "Execute latency (ms)")),
        _window_table("Input stats", "input-stats", _head(
            "Component", "Stream", "Execute latency", "Executed", "Process latency",
            "Acked", "Failed"))
        + _window_table("Output stats", "output-stats", _head("Stream", "Emitted",
                                                              "Transferred")),
        _head(*_EXECUTOR, "Capacity", "Execute latency", "Executed",
              "Process latency", "Acked", "Failed")),
}


def component_page(session: Session, topology_id: str, name: str, component: str,
                   kind: str, actions: bool = False) -> str:
    """``/topology/{id}/component/{component}``: the component page.

    Window stats, debug sampling (with ``actions``), charts, failures (spouts), input and
    output stats, executors and errors.
    """
    tid, cid = escape(topology_id), escape(component)
    action_block = f"""
<div id="actions" class="actions">{DEBUG_CONTROLS}
<span id="action-status" role="status"></span>
</div>{TOKEN_DIALOG}""" if actions else ""
    spout = kind == "spout"
    stats_head, charts, streams, executor_head = _COMPONENT_PARTS["spout" if spout else "bolt"]
    topology_link = f"/topology/{escape(quote(topology_id, safe=''))}"
    body = f"""
<p class="crumbs"><a href="/">Cluster</a> / <a id="topology-link" href="{topology_link}">topology
{escape(name)}</a> / component</p>
<h1>{"Spout" if spout else "Bolt"} <span id="component-name">{cid}</span></h1>
<p id="error" class="error" hidden></p>
<section><h2>Summary</h2>
<table id="component-summary"><thead><tr>{_head("Id", "Topology", "Type", "Executors",
                                                 "Tasks", "Topology status")}</tr></thead>
<tbody></tbody></table>{action_block}</section>
<section><h2>{"Spout" if spout else "Bolt"} stats</h2>
<table id="component-stats"><thead><tr>{stats_head}</tr></thead><tbody></tbody></table>
</section>
{_window_select()}
{streams}
{_window_table("Executors", "executors", executor_head)}
<section id="metrics-box" hidden><h2>Component metrics</h2><div id="component-metrics"></div>
</section>
{FAILURES if spout else ""}
{_charts(charts)}
<section><h2>Errors</h2>
<table id="errors"><thead><tr>{_head("Time", "Host", "Port", "Log", "Error")}</tr></thead>
<tbody></tbody></table></section>
"""
    attrs = (f'data-page="component" data-topology-id="{tid}" data-component="{cid}" '
             f'data-kind="{escape(kind)}"')
    return _layout(f"{component} in {name}", session, body,
                   script="charts.js actions.js component.js",
                   page_attrs=attrs)


def logs_page(session: Session, topology_id: str, name: str, worker: str,
              source: str, application: dict[str, Any] | None = None) -> str:
    """``/topology/{id}/logs?worker=...&source=...``: a topology's logs; ``/logs``: the daemons'.

    A worker's or executor's log tailed live (the worker sends its tail while the page reads
    it), and any log file of the topology (live or kept after a kill) or of Nimbus and the
    supervisors read page by page (byte offsets, the file's size shown), searched (one file
    or all of them) and downloaded, through the supervisors' logviewers. A spark-submitted
    topology (``application``, from its REST page) has no supervisor: the page says where
    its executors' logs are, with a link to the Spark UI's Executors tab.
    """
    tid = escape(topology_id)
    if topology_id:
        topology_link = f"/topology/{escape(quote(topology_id, safe=''))}"
        crumbs = (f'<a id="topology-link" href="{topology_link}">topology {escape(name)}</a>'
                  " / logs")
        live = f"""
<section id="live-box"><h2>Live: <span id="log-title">{escape(source)}</span></h2>
<p class="log-bar"><label>Log <select id="log-source"></select></label>
<span id="log-where" class="muted"></span>
<label><input type="checkbox" id="log-follow" checked> follow the end</label>
<span id="log-status" role="status" class="muted"></span></p>
<pre id="log-text" class="log" tabindex="0"></pre></section>"""
        title = f"Logs of {escape(name)}"
        search_all = ('<label><input type="checkbox" id="search-all"> in every file of the '
                      "topology</label>")
    else:
        crumbs, live, title, search_all = "logs", "", "Nimbus and supervisor logs", ""
    body = f"""
<p class="crumbs"><a href="/">Cluster</a> / {crumbs}</p>
<h1>{title}</h1>
<p id="error" class="error" hidden></p>{_spark_executor_logs(application)}
<section id="file-box"><h2>Log files</h2>
<p class="log-bar"><label>File <select id="file-select"></select></label>
<button type="button" id="page-first">First</button>
<button type="button" id="page-prev">Previous</button>
<button type="button" id="page-next">Next</button>
<button type="button" id="page-last">Last</button>
<a id="file-download" href="#" download>Download</a>
<span id="page-info" role="status" class="muted"></span></p>
<form id="search-form" class="log-bar"><label>Search <input id="search-input" type="search"
maxlength="1000"></label> {search_all} <button type="submit" id="search-go">Search</button>
<span id="search-status" role="status" class="muted"></span></form>
<ol id="search-results" class="log-matches"></ol>
<pre id="page-text" class="log" tabindex="0"></pre></section>
{live}
{TOKEN_DIALOG}
"""
    attrs = (f'data-page="logs" data-topology-id="{tid}" data-worker="{escape(worker)}" '
             f'data-source="{escape(source)}"')
    return _layout(f"Logs of {name}" if topology_id else "Daemon logs", session, body,
                   script="actions.js logs.js", page_attrs=attrs)


def _spark_executor_logs(application: dict[str, Any] | None) -> str:
    """Where a spark-submitted topology's executors write their logs ("" for the others)."""
    if not application or not application.get("executorLogs"):
        return ""
    spark = str(application.get("sparkUiUrl") or "")
    link = (f' <a id="spark-executors-link" href="{escape(spark.rstrip("/"))}/executors/" '
            'rel="noreferrer">Spark UI: Executors</a>'
            if spark.startswith(("http://", "https://")) else "")
    return (f'<p id="spark-executor-logs" class="muted">Executors hosted by Spark: '
            f'{escape(str(application["executorLogs"]))}.{link}</p>')


def error_page(session: Session | None, status: int, title: str, message: str,
               link: str | None = None) -> str:
    """A page for 404s and an unreachable Nimbus: what happened and where to go instead."""
    back = f'<p><a id="error-link" href="{escape(link)}">Back to the topology</a></p>' \
        if link else ""
    body = f"""
<h1 class="error-title">{status} - {escape(title)}</h1>
<p id="error-message">{escape(message)}</p>
{back}<p><a href="/">Back to the cluster summary</a></p>
"""
    return _layout(title, session, body, page_attrs=f'data-page="error" data-status="{status}"')
