"""The HTML pages: small server-rendered shells that the scripts under ``static/`` fill from
``/api/v1`` (through this server) and keep up to date. No inline script or style, so the
Content-Security-Policy can forbid both.
"""

from __future__ import annotations

from html import escape

from sparkstorm.web.sessions import Session


def _layout(title: str, session: Session | None, body: str, *, script: str = "",
            page_attrs: str = "") -> str:
    csrf = escape(session.csrf) if session else ""
    scripts = '<script src="/static/ui.js" defer></script>'
    if script:
        scripts += f'<script src="/static/{script}" defer></script>'
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="{csrf}">
<title>{escape(title)} - sparkstorm UI</title>
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
<section><h2>Cluster</h2><table id="cluster-summary" class="kv"><tbody></tbody></table></section>
<section><h2>Nimbus</h2><table id="nimbus"><tbody></tbody></table></section>
<section><h2>Topologies</h2>
<table id="topologies"><thead><tr><th>Name</th><th>Id</th><th>Owner</th><th>Status</th>
<th>Uptime</th><th>Workers</th><th>Executors</th><th>Tasks</th></tr></thead><tbody></tbody>
</table></section>
<section><h2>Supervisors</h2>
<table id="supervisors"><thead><tr><th>Id</th><th>Host</th><th>Uptime</th><th>Slots</th>
<th>Used slots</th><th>Free slots</th><th>Version</th></tr></thead><tbody></tbody></table>
</section>
"""
    return _layout("Cluster", session, body, script="cluster.js", page_attrs='data-page="cluster"')


def topology_page(session: Session, topology_id: str, name: str, actions: bool) -> str:
    """``/topology/{id}``: summary, actions, DAG, live chart, spouts and bolts."""
    tid = escape(topology_id)
    action_block = """
<div id="actions" class="actions">
<button type="button" data-action="activate">Activate</button>
<button type="button" data-action="deactivate">Deactivate</button>
<label>Kill wait (s) <input id="kill-wait" type="number" min="0" value="30"></label>
<button type="button" data-action="kill" class="danger">Kill</button>
<span id="action-status" role="status"></span>
</div>
<dialog id="token-dialog"><form id="token-form" method="dialog">
<p>This action needs the cluster token (<code>storm.cluster.token</code>, or the file
<code>&lt;storm.local.dir&gt;/nimbus/token</code> on the Nimbus machine). It is kept for this
browser session by the UI server only.</p>
<p id="token-error" class="error" hidden></p>
<label>Cluster token <input id="token-input" type="password" autocomplete="off"></label>
<menu><button type="submit" value="ok" id="token-ok">Use token</button>
<button type="button" id="token-cancel">Cancel</button></menu>
</form></dialog>
""" if actions else '<p class="muted">Actions are disabled (ui.actions.enabled: false).</p>'
    body = f"""
<p class="crumbs"><a href="/">Cluster</a> / topology</p>
<h1>Topology <span id="topology-name">{escape(name)}</span></h1>
<p id="error" class="error" hidden></p>
<section><h2>Summary</h2>
<table id="topology-summary"><thead><tr><th>Name</th><th>Id</th><th>Owner</th><th>Status</th>
<th>Uptime</th><th>Workers</th><th>Executors</th><th>Tasks</th><th>Message timeout</th></tr>
</thead><tbody></tbody></table>
{action_block}
</section>
<section><h2>Topology stats</h2>
<table id="topology-stats"><thead><tr><th>Window</th><th>Emitted</th><th>Transferred</th>
<th>Complete latency (ms)</th><th>Acked</th><th>Failed</th></tr></thead><tbody></tbody></table>
</section>
<div class="two">
<section><h2>Topology graph</h2><div id="dag" class="dag"></div></section>
<section><h2>Acked per second</h2>
<div id="chart" class="chart"></div>
<p class="muted" id="chart-caption">one point per worker heartbeat, last 60</p></section>
</div>
<section><h2>Spouts</h2>
<table id="spouts"><thead><tr><th>Id</th><th>Executors</th><th>Tasks</th><th>Emitted</th>
<th>Transferred</th><th>Complete latency (ms)</th><th>Acked</th><th>Failed</th>
<th>Last error</th></tr></thead><tbody></tbody></table></section>
<section><h2>Bolts</h2>
<table id="bolts"><thead><tr><th>Id</th><th>Executors</th><th>Tasks</th><th>Emitted</th>
<th>Transferred</th><th>Capacity</th><th>Execute latency (ms)</th><th>Executed</th>
<th>Process latency (ms)</th><th>Acked</th><th>Failed</th><th>Last error</th></tr></thead>
<tbody></tbody></table></section>
<section><h2>Workers</h2>
<table id="workers"><thead><tr><th>Host</th><th>Port</th><th>Supervisor</th><th>Uptime</th>
<th>Executors</th></tr></thead><tbody></tbody></table></section>
<section><h2>Configuration</h2><details><summary>topology configuration</summary>
<table id="configuration" class="kv"><tbody></tbody></table></details></section>
"""
    attrs = f'data-page="topology" data-topology-id="{tid}"'
    return _layout(f"Topology {name}", session, body, script="topology.js", page_attrs=attrs)


def error_page(session: Session | None, status: int, title: str, message: str) -> str:
    """A page for 404s and an unreachable Nimbus: what happened and where to go instead."""
    body = f"""
<h1 class="error-title">{status} - {escape(title)}</h1>
<p id="error-message">{escape(message)}</p>
<p><a href="/">Back to the cluster summary</a></p>
"""
    return _layout(title, session, body, page_attrs=f'data-page="error" data-status="{status}"')
