"""The UI in a real headless Chromium against a real cluster running the flaky topology.

The tests of this module share one cluster and run in order: the pages, the DAG, the charts,
the window selector and the failures while the topology runs; then deactivation (refused
without the token) and the numbers of the topology and component pages once it is quiet;
then stack traces, activation, rebalance and kill (refused without the token, or with a
wrong one); last stack traces, rebalance, activation and kill.
Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from sparkstorm.testing.polling import wait_for
from tests.browser.conftest import UiCluster, screenshot
from tests.browser.helpers import VALUE as _VALUE
from tests.browser.helpers import cells as _cells
from tests.browser.helpers import fresh as _fresh
from tests.browser.helpers import open_page as _open
from tests.browser.helpers import question as _question
from tests.browser.helpers import table as _table
from tests.browser.helpers import texts as _texts

pytestmark = [pytest.mark.spark, pytest.mark.browser, pytest.mark.timeout(240)]

SPOUT_FIELDS = ("executors", "tasks", "emitted", "transferred", "completeLatency", "acked",
                "failed")
BOLT_FIELDS = ("executors", "tasks", "emitted", "transferred", "capacity", "executeLatency",
               "executed", "processLatency", "acked", "failed")
STATS_FIELDS = ("windowPretty", "emitted", "transferred", "completeLatency", "acked", "failed")
CAUSES = ("explicit", "error", "timeout", "crash")
CHARTS = ("chart-emitted", "chart-acked", "chart-failed", "chart-latency")
LOAD_CLASSES = {f"load-{n}" for n in range(5)}


def _acked(ui: UiCluster) -> int:
    return int(ui.topology()["topologyStats"][-1]["acked"])


def _needs(body: dict[str, Any], *fields: str) -> None:
    missing = [f for f in fields if f not in body]
    assert not missing, f"Nimbus's REST API no longer serves {missing}"


def _accept_dialogs(page: Any, seen: list[str]) -> None:
    def accept(dialog: Any) -> None:
        seen.append(dialog.message)
        dialog.accept()

    page.on("dialog", accept)


def _js_number(value: Any) -> str:
    """``value`` as JavaScript prints it in a template string."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "null" if value is None else str(value)


def test_cluster_page_shows_what_the_rest_api_returns(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    wait_for(lambda: ui.rest("/api/v1/cluster/summary")["slotsUsed"] == 1, 60,
             message="the worker's slot used")
    _open(page, ui.ui_url + "/")
    row = f'#topologies tr[data-id="{ui.topology_id}"]'
    page.wait_for_selector(row)
    summary = ui.rest("/api/v1/cluster/summary")
    supervisors = ui.rest("/api/v1/supervisor/summary")["supervisors"]
    topology = ui.rest("/api/v1/topology/summary")["topologies"][0]

    shown = _cells(page, "#cluster-summary")
    for key in ("supervisors", "topologies", "slotsTotal", "slotsUsed", "slotsFree",
                "executorsTotal", "tasksTotal"):
        assert shown[key] == str(summary[key]), key
    headers = page.eval_on_selector_all("#nimbus thead th", "ths => ths.map(t => t.textContent)")
    assert headers == ["Host", "Port", "Status", "Version", "Uptime"], headers
    supervisor = _cells(page, f'#supervisors tr[data-id="{supervisors[0]["id"]}"]')
    for key in ("id", "host", "slotsTotal", "slotsUsed", "slotsFree"):
        assert supervisor[key] == str(supervisors[0][key]), key
    assert (supervisor["slotsTotal"], supervisor["slotsUsed"], supervisor["slotsFree"]) == \
        ("2", "1", "1")
    assert supervisor["uptime"].endswith("s")
    cells = _cells(page, row)
    for key in ("name", "id", "status", "workersTotal", "executorsTotal", "tasksTotal"):
        assert cells[key] == str(topology[key]), key
    assert cells["status"] == "ACTIVE" and cells["executorsTotal"] == "5"
    assert cells["uptime"].endswith("s")
    page.wait_for_selector("#cluster-configuration[data-filled]", state="attached")
    conf = _cells(page, "#cluster-configuration")
    assert conf["nimbus.port"] == str(ui.cluster.conf["nimbus.port"])
    assert conf["storm.cluster.token"] in ("", "********")  # masked, never shown
    page.click("#cluster-conf-box summary")
    screenshot(page, "cluster")

    page.click(f"{row} a")  # the name links to the topology page
    page.wait_for_selector("#topology-summary tr[data-id]")
    assert page.url.endswith(f"/topology/{ui.topology_id}")
    assert page.text_content("#topology-summary td[data-field=reliability]") == "acking"


def _nimbus_rows(page: Any) -> list[dict[str, str]]:
    return list(page.eval_on_selector_all(
        "#nimbus tbody tr", f"""rows => rows.map(r => Object.fromEntries(
            [...r.querySelectorAll('td[data-field]')].map({_VALUE})))"""))


def _seconds(pretty: str) -> int:
    """Storm's pretty duration (``"1h 2m 5s"``) in seconds."""
    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    return sum(int(part[:-1]) * units[part[-1]] for part in pretty.split())


def _nimbus_table_is_rest(ui: UiCluster, page: Any) -> bool:
    nimbuses = ui.rest("/api/v1/nimbus/summary")["nimbuses"]
    _fresh(page)  # a refresh that ended after the REST answer (its callers retry)
    shown = _nimbus_rows(page)
    fields = ("host", "port", "status", "version")
    if [{k: row[k] for k in fields} for row in shown] != \
            [{k: str(n[k]) for k in fields} for n in nimbuses]:
        return False
    # the refresh ran up to a couple of seconds after the REST call (longer on a busy
    # machine): its uptime may be that much later, never earlier
    return all(0 <= _seconds(row["nimbusUpTime"]) - n["nimbusUpTimeSeconds"] <= 3
               for row, n in zip(shown, nimbuses, strict=True))


def _shown_as_in_js(shown: str, value: Any) -> bool:
    """Whether ``shown`` is how the page prints a conf value.

    ``JSON.stringify`` for objects and arrays, ``String`` otherwise, null as empty.
    """
    if isinstance(value, dict | list):
        try:
            return bool(json.loads(shown) == value)
        except ValueError:
            return False
    if value is None:
        return shown == ""
    if isinstance(value, bool):
        return shown == str(value).lower()
    if isinstance(value, int | float):
        return shown == _js_number(value)
    return shown == str(value).strip()


def test_nimbus_and_topology_configuration_tables_are_the_rest_ones(
        ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    nimbuses = ui.rest("/api/v1/nimbus/summary")["nimbuses"]
    assert len(nimbuses) == 1 and nimbuses[0]["status"] == "Leader", nimbuses
    _open(page, ui.ui_url + "/")
    page.wait_for_selector("#nimbus tbody tr td[data-field=host]")  # not the fallback rows
    assert page.eval_on_selector_all("#nimbus tbody tr[data-key]", "rows => rows.length") == 0
    # the uptime moves every second: compare until one refresh matches Nimbus's answer
    wait_for(lambda: _nimbus_table_is_rest(ui, page), 20, interval=0.2,
             message=f"the Nimbus table shows /api/v1/nimbus/summary: {_nimbus_rows(page)}")
    row = _nimbus_rows(page)[0]
    assert row["port"] == str(ui.cluster.conf["nimbus.port"]) and row["status"] == "Leader"
    assert row["nimbusUpTime"].endswith("s")

    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#configuration[data-filled]", state="attached")
    conf = ui.topology()["configuration"]
    shown = page.eval_on_selector_all(
        "#configuration tbody tr", """rows => rows.map(r => [r.dataset.key,
            r.querySelector('th').textContent, r.querySelector('td').textContent.trim()])""")
    assert [key for key, _, _ in shown] == sorted(conf), "every conf key, sorted"
    assert all(key == header for key, header, _ in shown)
    wrong = {key: (text, conf[key]) for key, _, text in shown
             if not _shown_as_in_js(text, conf[key])}
    assert not wrong, f"shown differently from /api/v1/topology/:id configuration: {wrong}"
    # the topology's own conf (submitted with -c), not Nimbus's
    assert _cells(page, "#configuration")["topology.max.spout.pending"] == "20"
    assert conf.get("storm.cluster.token") in (None, "", "********")


def test_the_dag_shows_every_component_and_stream_with_load_and_rates(
        ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    spec = ui.spec()
    components = {c["name"]: c["kind"] for c in spec["components"]}
    streams = {(i["source"], c["name"], i["stream"], i["grouping"]["type"])
               for c in spec["components"] for i in c["inputs"]}
    assert set(components) == {"word", "exclaim1", "exclaim2"}
    wait_for(lambda: _acked(ui) > 0, 90, message=f"tuples acked\n{ui.cluster.logs()}")

    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#dag-svg")
    nodes = page.eval_on_selector_all(
        "#dag-svg g.node", "g => g.map(n => [n.dataset.component, [...n.classList]])")
    assert {n for n, _ in nodes} == set(components) and len(nodes) == len(components)
    for name, classes in nodes:
        assert components[name] in classes
        if components[name] == "bolt":  # coloured by capacity
            assert len(LOAD_CLASSES & set(classes)) == 1, (name, classes)
    edges = page.eval_on_selector_all(
        "#dag-svg g.edge", "g => g.map(e => [e.dataset.source, e.dataset.target, "
        "e.dataset.stream, e.dataset.grouping, e.querySelector('text').textContent, "
        "e.dataset.rate])")
    assert {tuple(e[:4]) for e in edges} == streams and len(edges) == len(streams)
    for edge in edges:
        assert edge[4].startswith(edge[3]) and edge[4].endswith("tuples/s"), edge
    if "recentWindows" in ui.topology():  # rates from the windows: real numbers
        page.wait_for_function("() => [...document.querySelectorAll('#dag-svg g.edge')]"
                               ".every(e => e.dataset.rate !== '')")
        rates = page.eval_on_selector_all("#dag-svg g.edge", "g => g.map(e => +e.dataset.rate)")
        assert all(r >= 0 for r in rates) and any(r > 0 for r in rates)
    capacity = page.get_attribute('#dag-svg g.node[data-component="exclaim2"]', "data-capacity")
    assert capacity != "" and 0 <= float(capacity) < 5
    # the graph's capacity is the bolts table's, for every bolt (issue 31: 0.950 against 0.682)
    shown = page.evaluate("""() => [...document.querySelectorAll('#bolts tbody tr[data-id]')]
        .map(r => [r.dataset.id, r.querySelector('td[data-field=capacity]').textContent.trim(),
                   document.querySelector(`#dag-svg g.node[data-component="${r.dataset.id}"]`)
                     .dataset.capacity])""")
    assert {name for name, _, _ in shown} == {"exclaim1", "exclaim2"}, shown
    for name, table_capacity, graph_capacity in shown:
        assert table_capacity == graph_capacity, (name, table_capacity, graph_capacity)

    # a node links to its component page
    page.click('#dag-svg g.node[data-component="exclaim1"] a')
    page.wait_for_selector("#component-summary tr[data-id]")
    assert page.url.endswith(f"/topology/{ui.topology_id}/component/exclaim1")
    assert page.text_content("#component-name") == "exclaim1"
    if "recentWindows" in ui.component("exclaim1"):  # its own charts grow as windows pass
        page.wait_for_function("() => +document.body.dataset.chartPoints > 0")
        first = int(page.get_attribute("body", "data-chart-points"))
        page.wait_for_function(f"() => +document.body.dataset.chartPoints > {first}",
                               timeout=20_000)


def test_charts_show_recent_windows_at_once_and_grow(ui_cluster: UiCluster,
                                                     page: Any) -> None:
    ui = ui_cluster
    _needs(ui.topology(), "recentWindows")
    wait_for(lambda: len(ui.topology()["recentWindows"]) >= 3, 60, message="windows recorded")
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_function("() => +document.body.dataset.chartPoints >= 3")
    first = int(page.get_attribute("body", "data-chart-points"))
    marker = page.evaluate("() => (window.__marker = 'same page')")
    page.wait_for_function(f"() => +document.body.dataset.chartPoints > {first + 2}",
                           timeout=30_000)
    assert page.evaluate("() => window.__marker") == marker, "no reload"
    # one read: the topology runs on, and a refresh between reads redraws every chart
    counts = page.evaluate("charts => Object.fromEntries(charts.map(c => "
                           "[c, +document.getElementById(`${c}-svg`).dataset.points]))",
                           list(CHARTS))
    assert len(set(counts.values())) == 1, counts

    # the points are the REST windows' values per second: over the time since the window
    # before began (not over the window's Spark job, which is far shorter)
    recent = ui.topology()["recentWindows"]
    series = json.loads(page.get_attribute("#chart-emitted-svg", "data-series"))
    shown = {key: value for _, key, value in series}
    compared = 0
    for window in recent[1:]:  # the oldest has no window before it in this answer
        key = f"{_js_number(window['time'])}|{_js_number(window['window'])}"
        if key in shown and window["intervalSeconds"]:
            assert shown[key] == pytest.approx(window["emitted"] / window["intervalSeconds"],
                                               abs=1e-3)
            compared += 1
    assert compared >= 2, (list(shown)[-3:], recent[-3:])
    failed = json.loads(page.get_attribute("#chart-failed-svg", "data-series"))
    assert any(v for _, _, v in failed), "the flaky bolt fails tuples"
    latency = json.loads(page.get_attribute("#chart-latency-svg", "data-series"))
    assert any(v for _, _, v in latency), "complete latencies are drawn"
    screenshot(page, "topology")
    # the last point is "now" while windows come; seen ten minutes later, it says how old
    assert "now" in page.text_content("#chart-emitted-svg .chart-last")
    page.evaluate("() => { const real = Date.now; Date.now = () => real() + 600000; }")
    page.wait_for_function("() => document.querySelector('#chart-emitted-svg .chart-last')"
                           ".textContent.includes('last (10 min')")


def test_workers_link_to_their_spark_ui(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    workers = wait_for(lambda: ui.topology()["workers"], 30, message="a worker listed")
    _needs(workers[0], "sparkUiUrl")
    url = wait_for(lambda: ui.topology()["workers"][0]["sparkUiUrl"], 30,
                   message="the worker reports its Spark UI (spark.ui.enabled: true)")
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    cells = _table(page, "workers", "port")
    assert cells[str(workers[0]["port"])]["host"] == workers[0]["host"]
    link = page.get_attribute(
        f'#workers tr[data-port="{workers[0]["port"]}"] td[data-field=sparkUiUrl] a', "href")
    assert link.rstrip("/") == url.rstrip("/")
    assert httpx.get(link, timeout=10, follow_redirects=True).is_success


def test_the_window_selector_drives_the_tables(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    detail = ui.topology("600")
    _needs(detail, "window", "windowHint")
    assert detail["window"] == "600", "Nimbus ignores ?window="
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("body[data-window=':all-time']")
    stats = ui.topology()["topologyStats"]
    assert [r["window"] for r in stats] == ["600", "10800", "86400", ":all-time"]
    shown = _table(page, "topology-stats", "window")
    assert list(shown) == [r["window"] for r in stats]
    assert [shown[r["window"]]["windowPretty"] for r in stats] == \
        ["10m 0s", "3h 0m 0s", "1d 0h 0m 0s", "All time"]
    assert "All time" in page.text_content("#window-hint")

    page.click("#window-select button[data-window='600']")
    page.wait_for_selector("body[data-window='600']")
    assert page.url.endswith("?window=600")
    assert page.get_attribute("#window-select button[data-window='600']",
                              "aria-pressed") == "true"
    # Storm's windowPretty ("10m 0s") in the API, as people say it on the page
    assert page.text_content("#window-hint").startswith("showing 10 minutes")
    assert "(10 minutes)" in page.text_content("h2:has(+ #spouts) .window-label")
    assert page.get_attribute("#topology-stats tr.selected", "data-window") == "600"
    link = page.get_attribute('#spouts tr[data-id="word"] a', "href")
    assert link.endswith("/component/word?window=600"), link

    page.click("#window-select button[data-window='10800']")
    page.wait_for_selector("body[data-window='10800']")
    assert page.text_content("#window-hint").startswith("showing 3 hours")
    page.reload()  # the window is kept in the URL
    page.wait_for_selector("body[data-window='10800']")


def test_an_older_topology_answer_coming_last_is_not_shown(ui_cluster: UiCluster,
                                                           page: Any) -> None:
    """Refreshes in flight at once (the poll's, a click's): only the newest answer is drawn.

    Before, an older answer drawn last showed the state before an action the page had
    already shown (REBALANCING, then ACTIVE again for a second).
    """
    ui = ui_cluster
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    # the topology's reads are held (really read, answered when the test says), in order
    page.evaluate("""(api) => {
        window.heldReads = [];
        const read = UI.getJson;
        UI.getJson = (url) => url.split("?")[0] === api
            ? new Promise((answer) => window.heldReads.push({answer, body: read(url)}))
            : read(url);
    }""", f"/api/v1/topology/{ui.topology_id}")
    selected = "#window-select button[aria-pressed=true]"
    page.click(selected)
    page.click(selected)  # two refreshes of the same window, beside the poll's
    page.wait_for_function("() => window.heldReads.length >= 2")
    page.evaluate("""() => {
        const reads = window.heldReads, newest = reads[reads.length - 1];
        newest.answer(newest.body.then((t) => ({...t, status: "REBALANCING"})));
    }""")
    status = '#topology-summary td[data-field=status]'
    page.wait_for_function(f"() => document.querySelector('{status}').textContent"
                           ".includes('REBALANCING')")
    page.evaluate("""() => Promise.all(window.heldReads.slice(0, -1).map((read) => {
        read.answer(read.body.then((t) => ({...t, status: "KILLED"})));
        return read.body;
    })).then(() => new Promise((done) => setTimeout(done, 0)))""")  # after their microtasks
    assert "REBALANCING" in page.text_content(status), "an older answer was drawn"


def test_failures_are_explained_by_cause(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    _needs(ui.topology(), "failuresByCause")
    wait_for(lambda: ui.topology()["failuresByCause"]["explicit"] > 0, 60,
             message="explicit failures counted")
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#failures-box[data-supported='1']")
    rows = _table(page, "failures-by-cause", "cause")
    assert list(rows) == list(CAUSES)
    assert int(rows["explicit"]["count"]) > 0
    reasons = ui.topology()["failureReasons"]
    if any(r["reason"] for r in reasons):
        page.wait_for_selector("#failure-reasons td[data-field=reason]:text('picky bolt')")


def test_deactivate_is_refused_without_the_token_then_works_with_it(ui_cluster: UiCluster,
                                                                    page: Any) -> None:
    ui = ui_cluster
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")

    page.click("button[data-action=deactivate]")
    assert "Deactivate" in _question(page) and not confirms
    page.click("#token-cancel")
    page.wait_for_selector("#action-status[data-result=refused]")
    assert "token" in page.text_content("#action-status")
    assert ui.status() == "ACTIVE"

    # a wrong token is refused by Nimbus, forgotten, and asked for again
    page.click("button[data-action=deactivate]")
    page.fill("#token-input", "not-the-token")
    page.click("#token-ok")
    page.wait_for_selector("#token-error:text('refused that token')")
    assert page.is_visible("#token-dialog")
    assert ui.status() == "ACTIVE"
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    wait_for(lambda: ui.status() == "INACTIVE", 10, message="topology inactive")
    page.wait_for_selector('#topology-summary td[data-field=status]:text("INACTIVE")')


def _quiet(ui: UiCluster) -> dict[str, Any]:
    """The topology once deactivated and its counts stopped moving."""
    if ui.status() != "INACTIVE":  # when run alone
        wait_for(lambda: _acked(ui) > 0 and ui.topology()["failuresByCause"]["explicit"] > 0,
                 90, message=f"tuples acked and failed\n{ui.cluster.logs()}")
        response = ui.cluster.request("POST", f"/api/v1/topology/{ui.topology_id}/deactivate")
        assert response.is_success, response.text

    def counts(detail: dict[str, Any]) -> list[Any]:
        rows = [*detail["spouts"], *detail["bolts"], *detail["topologyStats"]]
        return [{k: v for k, v in r.items() if isinstance(v, int) and k != "errorLapsedSecs"}
                for r in rows]

    def settled() -> dict[str, Any] | None:
        before = ui.topology()
        time.sleep(2.5)
        after = ui.topology()
        return after if counts(before) == counts(after) and _acked(ui) > 0 else None

    return dict(wait_for(settled, 60, message="the inactive topology's counts settle"))


def _topology_page_is_rest(ui: UiCluster, page: Any, window: str | None) -> bool:
    detail = ui.topology(window)
    _fresh(page)
    page_rows, rest_rows = [], []
    for spout in detail["spouts"]:
        cells = _cells(page, f'#spouts tr[data-id="{spout["spoutId"]}"]')
        page_rows.append([cells[k] for k in (*SPOUT_FIELDS, "lastError")])
        rest_rows.append([str(spout[k]) for k in (*SPOUT_FIELDS, "lastError")])
    for bolt in detail["bolts"]:
        cells = _cells(page, f'#bolts tr[data-id="{bolt["boltId"]}"]')
        page_rows.append([cells[k] for k in (*BOLT_FIELDS, "lastError")])
        rest_rows.append([str(bolt[k]) for k in (*BOLT_FIELDS, "lastError")])
    stats = _table(page, "topology-stats", "window")
    for row in detail["topologyStats"]:
        page_rows.append([stats[str(row["window"])][k] for k in STATS_FIELDS])
        rest_rows.append([str(row[k]) for k in STATS_FIELDS])
    if "failuresByCause" in detail:
        causes = _table(page, "failures-by-cause", "cause")
        page_rows.append([causes[c]["count"] for c in CAUSES])
        rest_rows.append([str(detail["failuresByCause"].get(c, 0)) for c in CAUSES])
    return page_rows == rest_rows


def test_topology_page_numbers_are_the_rest_numbers_in_each_window(ui_cluster: UiCluster,
                                                                   page: Any) -> None:
    ui = ui_cluster
    _quiet(ui)
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#spouts tbody tr[data-id]")
    # latencies may still move a little while idle: compare until one refresh matches
    wait_for(lambda: _topology_page_is_rest(ui, page, None), 20, interval=0.2,
             message="the page shows the REST numbers (all time)")
    detail = ui.topology()
    if "failuresByCause" in detail:
        assert detail["failuresByCause"]["explicit"] > 0
        assert int(_table(page, "failures-by-cause", "cause")["explicit"]["count"]) > 0
    if ui.topology("600").get("window") == "600":
        page.click("#window-select button[data-window='600']")
        page.wait_for_selector("body[data-window='600']")
        wait_for(lambda: _topology_page_is_rest(ui, page, "600"), 20, interval=0.2,
                 message="the page shows the REST numbers (10 minutes)")
    screenshot(page, "topology-inactive")


def _component_page_is_rest(ui: UiCluster, page: Any, name: str, window: str | None) -> bool:
    body = ui.component(name, window)
    _fresh(page)
    spout = body["componentType"] == "spout"
    summary_rows = body["spoutSummary"] if spout else body["boltStats"]
    shown = _table(page, "component-stats", "window")
    assert list(shown) == [str(r["window"]) for r in summary_rows]
    page_rows: list[Any] = [list(shown[str(r["window"])].values()) for r in summary_rows]
    rest_rows: list[Any] = [[str(r[k]) for k in shown[str(r["window"])]] for r in summary_rows]
    executors = _table(page, "executors", "id")
    for row in body["executorStats"]:
        cells = executors.get(row["id"], {})
        # resources move with every heartbeat; the log cell shows a link
        keys = [k for k in cells if k not in ("uptime", "cpuPercent", "memoryMb",
                                              "workerLogLink")]
        page_rows.append([cells[k] for k in keys])
        rest_rows.append([str(row[k]) for k in keys])
    assert len(executors) == len(body["executorStats"])
    outputs = _table(page, "output-stats", "stream")
    page_rows.append(outputs)
    rest_rows.append({r["stream"]: {k: str(r[k]) for k in outputs.get(r["stream"], {})}
                      for r in body["outputStats"]})
    if not spout:
        inputs = page.eval_on_selector_all(
            "#input-stats tbody tr", f"""rows => rows.map(r => Object.fromEntries(
                [...r.querySelectorAll('td[data-field]')].map({_VALUE})))""")
        page_rows.append(inputs)
        rest_rows.append([{k: str(r[k]) for k in ("component", "stream", "executeLatency",
                                                  "executed", "processLatency", "acked",
                                                  "failed")} for r in body["inputStats"]])
    if spout and "failuresByCause" in body:
        causes = _table(page, "failures-by-cause", "cause")
        page_rows.append([causes[c]["count"] for c in CAUSES])
        rest_rows.append([str(body["failuresByCause"].get(c, 0)) for c in CAUSES])
    return bool(page_rows == rest_rows)


def test_component_pages_show_the_rest_numbers(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    _quiet(ui)
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.click('#spouts tr[data-id="word"] a')  # the topology tables link to components
    page.wait_for_selector("#component-summary tr[data-id='word']")
    assert page.text_content("h1").startswith("Spout")
    wait_for(lambda: _component_page_is_rest(ui, page, "word", None), 20, interval=0.2,
             message="the spout page shows the REST numbers")
    body = ui.component("word")
    summary = _cells(page, "#component-summary tbody tr")
    assert (summary["executors"], summary["tasks"]) == (str(body["executors"]),
                                                        str(body["tasks"]))
    executor = _table(page, "executors", "id")
    assert all(row["host"] and row["port"] for row in executor.values())
    if "failuresByCause" in body:
        assert int(_table(page, "failures-by-cause", "cause")["explicit"]["count"]) > 0
        spouts = page.eval_on_selector_all("#failure-reasons td[data-field=spoutId]",
                                           "cells => cells.map(c => c.textContent)")
        assert spouts and set(spouts) == {"word"}
    if "recentWindows" in body:
        page.wait_for_function("() => +document.body.dataset.chartPoints > 0")
    screenshot(page, "component-spout")

    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/exclaim2")
    page.wait_for_selector("#input-stats tbody tr")
    assert page.text_content("h1").startswith("Bolt")
    wait_for(lambda: _component_page_is_rest(ui, page, "exclaim2", None), 20, interval=0.2,
             message="the bolt page shows the REST numbers")
    if ui.component("exclaim2", "600").get("window") == "600":
        page.click("#window-select button[data-window='600']")
        page.wait_for_selector("body[data-window='600']")
        assert "(10 minutes)" in page.text_content("h2:has(+ #executors) .window-label")
        wait_for(lambda: _component_page_is_rest(ui, page, "exclaim2", "600"), 20,
                 interval=0.2, message="the bolt page shows the REST numbers (10 minutes)")
    # the "boom" the bolt raised on: with its time, host and port
    errors = ui.component("exclaim2")["componentErrors"]
    assert errors and "boom" in errors[-1]["error"], errors
    newest = errors[-1]
    row = _cells(page, f'#errors tr[data-time="{newest["errorTime"]}"]')
    assert row["errorTime"] == str(newest["errorTime"])
    # shown in the browser's local time (the tests' browser runs in UTC) with its zone
    when = datetime.fromtimestamp(newest["errorTime"], UTC)
    shown = _texts(page, f'#errors tr[data-time="{newest["errorTime"]}"]')["errorTime"]
    assert shown == f"{when.day} {when:%b %Y}, {when:%H:%M:%S} UTC", shown
    assert (row["errorHost"], row["errorPort"]) == (newest["errorHost"],
                                                    str(newest["errorPort"]))
    assert "ValueError: boom" in row["error"]
    screenshot(page, "component-bolt")


def test_pages_fit_a_laptop_screen_without_horizontal_scrolling(ui_cluster: UiCluster,
                                                                page: Any) -> None:
    """At 1366x768 the document never scrolls sideways, with the configuration tables open too.

    Wide tables scroll in their section.
    """
    ui = ui_cluster
    page.set_viewport_size({"width": 1366, "height": 768})
    wait_for(lambda: ui.topology()["workers"] and ui.component("exclaim2")["executorStats"],
             60, message="the worker and its executors reported")
    base = f"{ui.ui_url}/topology/{ui.topology_id}"
    pages = (("cluster", ui.ui_url + "/", "#topologies tbody tr[data-id]", "#cluster-conf-box"),
             ("topology", base, "#bolts tbody tr[data-id]", "details:has(#configuration)"),
             ("spout", f"{base}/component/word", "#executors tbody tr[data-id]", None),
             ("bolt", f"{base}/component/exclaim2", "#input-stats tbody tr", None))
    for name, url, filled, details in pages:
        _open(page, url)
        page.wait_for_selector(filled)
        if details:
            page.eval_on_selector(details, "d => { d.open = true; }")
        if name == "topology":
            page.wait_for_selector("#dag-svg")
            page.wait_for_selector("#configuration[data-filled]")
        _fresh(page)
        size = page.evaluate("""() => {
            const root = document.documentElement, width = root.clientWidth;
            const wide = [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > width + 0.5
                             && !(e.parentElement && e.parentElement.closest('section')))
                .map(e => e.tagName + (e.id ? '#' + e.id : '')).slice(0, 10);
            return {scroll: root.scrollWidth, client: width, inner: window.innerWidth,
                    body: document.body.scrollWidth, wide};
        }""")
        assert size["inner"] == 1366
        assert size["scroll"] <= size["client"] and size["body"] <= size["client"], \
            f"the {name} page scrolls sideways at 1366x768: {size}"
        screenshot(page, f"laptop-{name}")


def test_unknown_topologies_and_components_give_clear_404_pages(ui_cluster: UiCluster,
                                                                page: Any) -> None:
    ui = ui_cluster
    response = page.goto(f"{ui.ui_url}/topology/no-such-topology-1-1")
    assert response.status == 404
    assert "Topology not found" in page.text_content("h1")
    assert "no-such-topology-1-1" in page.text_content("#error-message")
    assert "Traceback" not in page.content()
    assert page.get_attribute("body", "data-status") == "404"
    screenshot(page, "topology-404")
    response = page.goto(f"{ui.ui_url}/topology/{ui.topology_id}/component/nope")
    assert response.status == 404
    assert "Component not found" in page.text_content("h1")
    assert "'nope'" in page.text_content("#error-message")
    assert page.get_attribute("body", "data-status") == "404"
    screenshot(page, "component-404")
    page.click("#error-link")
    page.wait_for_selector("#topology-summary tr[data-id]")
    response = page.goto(f"{ui.ui_url}/topology/no-such-1-1/component/word")
    assert response.status == 404 and "Topology not found" in page.text_content("h1")
    response = page.goto(f"{ui.ui_url}/no/such/page")
    assert response.status == 404 and "Not found" in page.text_content("h1")


def test_the_ui_server_refuses_cross_site_and_tokenless_posts(ui_cluster: UiCluster) -> None:
    ui = ui_cluster
    with httpx.Client(base_url=ui.ui_url, timeout=10, verify=ui.cluster.verify) as client:
        page = client.get("/")
        assert "script-src 'self'" in page.headers["content-security-policy"]
        cookie = page.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        csrf = page.text.split('name="csrf-token" content="')[1].split('"')[0]
        base = f"/api/v1/topology/{ui.topology_id}"
        assert client.post(f"{base}/deactivate").status_code == 403  # no CSRF token
        foreign = client.post(f"{base}/deactivate", headers={"X-CSRF-Token": csrf,
                                                             "Origin": "http://evil.example"})
        assert foreign.status_code == 403
        for action in ("activate", "deactivate", "rebalance/0", "kill/0"):
            tokenless = client.post(f"{base}/{action}", headers={"X-CSRF-Token": csrf})
            assert tokenless.status_code == 401, action
            assert tokenless.json()["code"] == "AUTH_TOKEN_MISSING"
        bad = client.post(f"{base}/rebalance/0", headers={"X-CSRF-Token": csrf},
                          json={"rebalanceOptions": {"executors": {"exclaim1": "two"}}})
        assert bad.status_code == 422 and "exclaim1" in bad.json()["error"]
        # GETs go through unchanged (but for the uptime, which may tick between the reads)
        def steady(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [{k: v for k, v in r.items() if not k.startswith("uptime")} for r in rows]

        proxied = client.get("/api/v1/supervisor/summary").json()["supervisors"]
        direct = ui.rest("/api/v1/supervisor/summary")["supervisors"]
        assert steady(proxied) == steady(direct)
        assert all(0 <= d["uptimeSeconds"] - p["uptimeSeconds"] <= 2
                   for p, d in zip(proxied, direct, strict=True))
    assert ui.status() is not None


def test_stack_traces_are_refused_without_the_token(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.click("button[data-action=stacktrace]")
    assert "stack traces" in _question(page) and not confirms
    page.click("#token-cancel")
    page.wait_for_selector("#action-status[data-result=refused]")
    assert "token" in page.text_content("#action-status")
    assert page.is_hidden("#stacks-box")

    path = f"/api/v1/topology/{ui.topology_id}/stacktrace"
    with httpx.Client(base_url=ui.ui_url, timeout=10, verify=ui.cluster.verify) as client:
        assert client.get(path).status_code == 403  # no UI session
        csrf = client.get("/").text.split('name="csrf-token" content="')[1].split('"')[0]
        for response in (client.get(path), client.post(path, headers={"X-CSRF-Token": csrf})):
            assert response.status_code == 401 and \
                response.json()["code"] == "AUTH_TOKEN_MISSING", response.text
        assert client.post(path).status_code == 403  # no CSRF token
        foreign = client.post(path, headers={"X-CSRF-Token": csrf,
                                             "Origin": "http://evil.example"})
        assert foreign.status_code == 403


def _rest_state(ui: UiCluster) -> dict[str, Any]:
    """What an accepted activate, rebalance or kill would change at once."""
    detail = ui.topology()
    return {"status": ui.status(), "detailStatus": detail["status"],
            "executorsTotal": detail["executorsTotal"], "workersTotal": detail["workersTotal"],
            "executors": {c.get("spoutId", c.get("boltId")): c["executors"]
                          for c in [*detail["spouts"], *detail["bolts"]]}}


def _start(page: Any, action: str) -> None:
    """Click an action and go through its own dialog, up to the token dialog.

    Rebalance: exclaim1 -> 1 executor, no wait; kill: no wait.
    """
    if action == "kill":
        page.fill("#kill-wait", "0")
    page.click(f"button[data-action={action}]")
    if action == "rebalance":
        page.wait_for_selector("#rebalance-dialog[open]")
        page.fill('#rebalance-executors input[data-component="exclaim1"]', "1")
        page.fill("#rebalance-wait", "0")
        page.click("#rebalance-ok")
    page.wait_for_selector("#token-dialog[open]")


def test_activate_rebalance_and_kill_are_refused_without_the_right_token(
        ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    if ui.status() != "INACTIVE":  # when run alone: so that activating would show
        response = ui.cluster.request("POST", f"/api/v1/topology/{ui.topology_id}/deactivate")
        assert response.is_success, response.text
        wait_for(lambda: ui.status() == "INACTIVE", 10, message="topology inactive")
    before = _rest_state(ui)
    assert before["status"] == "INACTIVE" and before["executors"]["exclaim1"] == 2, before
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#bolts tbody tr[data-id]")
    questions = {"activate": "Activate topology", "rebalance": "Rebalance topology",
                 "kill": "Kill topology"}
    for action, question in questions.items():
        refused = f"#action-status[data-result=refused]:text('{action} refused')"
        # no token: cancelled
        _start(page, action)
        assert question in _question(page) and not confirms
        page.click("#token-cancel")
        page.wait_for_selector(refused)
        assert "token is needed" in page.text_content("#action-status")
        assert _rest_state(ui) == before, action

        # a wrong token: Nimbus refuses it, the UI forgets it and asks again
        _start(page, action)
        page.fill("#token-input", "not-the-token")
        page.click("#token-ok")
        page.wait_for_selector("#token-dialog[open] #token-error:text('refused that token')")
        assert _rest_state(ui) == before, action
        page.click("#token-cancel")
        page.wait_for_selector(refused)
        session = page.evaluate("() => fetch('/ui/session').then(r => r.json())")
        assert session["hasToken"] is False, session
        assert _rest_state(ui) == before, action
    page.wait_for_selector('#topology-summary td[data-field=status]:text("INACTIVE")')
    assert _rest_state(ui) == before


def test_stack_traces_show_each_workers_threads_and_executors(ui_cluster: UiCluster,
                                                             page: Any) -> None:
    ui = ui_cluster
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    # a worker still starting answers "(starting)": wait until its executors run
    wait_for(lambda: _acked(ui) > 0, 90, message=f"tuples acked\n{ui.cluster.logs()}")
    worker = ui.topology()["workers"][0]
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.click("button[data-action=stacktrace]")
    # a new session: the token is asked for in the same dialog
    assert "Take stack traces" in _question(page) and page.is_visible("#token-input")
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    page.wait_for_selector("#stacks-box[data-state=done]", timeout=60_000)
    blocks = page.eval_on_selector_all(
        "#stacks details[data-worker-id]",
        "ds => ds.map(d => [d.querySelector('summary').textContent, "
        "d.querySelector('pre').textContent, d.open])")
    assert len(blocks) == 1, blocks
    summary, text, opened = blocks[0]
    assert summary.startswith(f"{worker['host']}:{worker['port']}") and opened
    assert 'Thread "worker-heartbeat"' in text, text[:2000]
    assert "executor/main.py" in text, text[:2000]
    assert "1 of 1 workers answered" in page.text_content("#stacks-status")
    page.click("#stacks details summary")  # collapsible
    assert page.eval_on_selector("#stacks details", "d => d.open") is False
    page.click("#stacks details summary")
    page.eval_on_selector("#stacks-box", "box => box.scrollIntoView()")
    screenshot(page, "topology-stacktraces")


def test_rebalance_through_the_ui_changes_executor_counts(ui_cluster: UiCluster,
                                                          page: Any) -> None:
    ui = ui_cluster
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    before = ui.topology()
    previous_status = ui.status()
    executors = wait_for(lambda: ui.component("exclaim1")["executorStats"], 60,
                         message="exclaim1's executors reported")
    ranges = [e["id"].strip("[]").split("-") for e in executors]
    assert len(ranges) == 2
    merged = f"[{min(int(r[0]) for r in ranges)}-{max(int(r[1]) for r in ranges)}]"
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.click("button[data-action=rebalance]")
    page.wait_for_selector("#rebalance-dialog[open]")
    field = '#rebalance-executors input[data-component="exclaim1"]'
    assert page.get_attribute(field, "max") == "2"  # bounded by the component's tasks
    page.fill(field, "3")
    page.fill("#rebalance-wait", "1")
    page.click("#rebalance-ok")
    page.wait_for_selector("#rebalance-error:text('1 to 2')")
    screenshot(page, "topology-rebalance-dialog")
    assert page.is_hidden("#token-dialog") and page.is_visible("#rebalance-dialog")
    page.fill(field, "1")
    # long enough a wait for the page to show the topology REBALANCING meanwhile
    page.fill("#rebalance-wait", "6")
    page.click("#rebalance-ok")
    question = _question(page)  # a new session: the token is asked for too
    assert "exclaim1 → 1 executors" in question and "after 6 s" in question
    assert "regroup their executors in place" in question  # -e: no worker restarts
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    # REBALANCING: activate, deactivate and rebalance cannot apply, kill and the rest can
    # the status and the buttons of one refresh, read at once (the next may come between reads)
    shown = page.wait_for_function("""() => {
        const status = document.querySelector('#topology-summary td[data-field=status]');
        if (!status || !status.textContent.includes('REBALANCING')) return null;
        const buttons = [...document.querySelectorAll('#actions button[data-action]')];
        return {states: Object.fromEntries(buttons.map(b => [b.dataset.action, b.disabled])),
                title: document.querySelector('button[data-action=rebalance]').title};
    }""").json_value()
    assert ui.status() == "REBALANCING"
    assert shown["states"] == {"activate": True, "deactivate": True, "rebalance": True,
                               "kill": False, "stacktrace": False, "debug": False,
                               "debug-stop": False}, shown
    assert "REBALANCING" in shown["title"]
    screenshot(page, "topology-rebalancing")

    wait_for(lambda: ui.topology()["executorsTotal"] == before["executorsTotal"] - 1, 60,
             message=f"executors rebalanced\n{ui.cluster.logs()}")
    wait_for(lambda: ui.status() == previous_status, 60,
             message=f"back to {previous_status} after the rebalance")
    # the actions its status allows are back
    page.wait_for_selector("button[data-action=rebalance]:enabled")
    assert page.is_enabled("button[data-action=activate]") != \
        page.is_enabled("button[data-action=deactivate]")
    page.wait_for_selector(f'#topology-summary td[data-field=executorsTotal]'
                           f':text("{before["executorsTotal"] - 1}")')
    # exclaim1's two tasks now run in one executor: one row on its page, as in REST
    wait_for(lambda: [e["id"] for e in ui.component("exclaim1")["executorStats"]] == [merged],
             60, message=f"exclaim1 in one executor\n{ui.cluster.logs()}")
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/exclaim1")
    page.wait_for_selector("#executors tbody tr[data-id]")
    assert list(_table(page, "executors", "id")) == [merged]


# slow (CI budget, 36-40 s: a second topology's Spark start): test_checkpoint_recovery checks
# the REST committedWindow this cell shows, in make test
@pytest.mark.slow
def test_the_committed_window_of_a_checkpointing_topology_is_shown(ui_cluster: UiCluster,
                                                                    page: Any) -> None:
    ui = ui_cluster
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#topology-summary td[data-field=committedWindow]:text('off')")
    example = Path(__file__).parents[2] / "examples" / "exclamation.py"
    result = ui.cluster.cli("submit", str(example), "--name", "checkpointed",
                            "-c", "topology.checkpoint.windows=5",
                            "-c", "topology.reliability=checkpoint")
    assert result.returncode == 0, result.stderr + ui.cluster.logs()
    topology_id = result.stdout.strip()
    try:
        committed = wait_for(lambda: isinstance(
            w := ui.rest(f"/api/v1/topology/{topology_id}")["committedWindow"], int) and w, 120,
            message=f"a checkpoint committed\n{ui.cluster.logs()}")
        _open(page, f"{ui.ui_url}/topology/{topology_id}")
        cell = "#topology-summary td[data-field=committedWindow]"
        page.wait_for_selector(f"{cell}[data-value]")
        assert int(page.get_attribute(cell, "data-value") or -1) >= committed
        assert page.text_content(cell).endswith("(every 5)")
        reliability = "#topology-summary td[data-field=reliability]"
        assert page.text_content(reliability) == "checkpoint"
    finally:
        ui.cluster.cli("kill", "checkpointed", "-w", "0")
        wait_for(lambda: all(t["name"] != "checkpointed" for t in
                             ui.rest("/api/v1/topology/summary")["topologies"]), 60,
                 message="the checkpointing topology is gone")


def test_activate_then_kill_with_a_wait_time(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.click("button[data-action=activate]")
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    wait_for(lambda: ui.status() == "ACTIVE", 10, message="topology active again")

    # the token is asked once per session: kill's dialog only asks to confirm
    page.fill("#kill-wait", "3")
    page.click("button[data-action=kill]")
    question = _question(page)
    assert "Kill topology" in question and "after 3 s" in question
    assert page.is_hidden("#token-field")
    page.click("#token-ok")
    killed_at = time.monotonic()
    page.wait_for_selector('#topology-summary td[data-field=status]:text("KILLED")')
    assert not page.is_visible("#token-dialog") and not confirms
    # KILLED: every action is disabled and no worker links to a Spark UI any more
    page.wait_for_selector("button[data-action=kill]:disabled")
    assert page.eval_on_selector_all("#actions button[data-action]",
                                     "bs => bs.every(b => b.disabled)")
    page.wait_for_selector("#workers td[data-field=sparkUiUrl]:text('not available')")
    page.wait_for_selector("body[data-gone='1']", timeout=30_000)
    assert time.monotonic() - killed_at >= 2.5, "the kill waited"
    assert ui.status() is None
    page.wait_for_selector("#error:text('no longer exists')")
    # gone: no stale figures left on the page, the actions stay disabled
    for table in ("spouts", "bolts", "workers", "topology-stats"):
        assert page.eval_on_selector_all(f"#{table} tbody tr", "rs => rs.map(r => r.className)") \
            == ["gone"], table
    assert page.eval_on_selector_all("#workers a", "links => links.length") == 0
    assert page.eval_on_selector_all(".charts figure.chart p.gone", "ps => ps.length") == 4
    assert page.eval_on_selector_all("#dag-svg tspan.rate", "ts => ts.map(t => t.textContent)") \
        == ["", ""], "no stale rates on the graph"
    assert page.eval_on_selector_all("#actions button[data-action]",
                                     "bs => bs.every(b => b.disabled)")
    screenshot(page, "topology-killed")
