"""The UI under trouble, in a real headless Chromium against a real cluster.

The cluster runs the trouble topology (``topologies/trouble.py``: a bolt that raises with a 2 KB
message in every window, fails every 7th tuple with a reason, and logs a line when it starts).

Checks what the UI says about it: the raising bolt's latency and capacity (against the REST
figures and the engine's own), the causes of failures, the log viewer showing the line the
bolt logged, CPU and memory of the processes, health on the cluster page, the 1366 px layout
with the long error, formatted figures and sortable tables, debug sampling (a sampled tuple in
the executor's log) and the Change log level panel (against Nimbus's logconfig). Screenshots
go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sparkstorm.testing.polling import wait_for
from tests.browser.conftest import UiCluster, running_ui, screenshot
from tests.browser.helpers import cells as _cells
from tests.browser.helpers import cells_and_texts
from tests.browser.helpers import open_page as _open
from tests.browser.helpers import question as _question
from tests.browser.helpers import texts as _texts

pytestmark = [pytest.mark.spark, pytest.mark.browser, pytest.mark.timeout(300)]

TROUBLE = Path(__file__).parent / "topologies" / "trouble.py"
HELLO = "picky bolt says hello"
SPOUT = "numbers_counted_by_a_spout_whose_component_id_is_long"


@pytest.fixture(scope="module")
def trouble(tmp_path_factory: pytest.TempPathFactory, browser: Any,
              tls_dir: Path) -> Iterator[UiCluster]:
    """Nimbus + supervisor running the trouble topology, and ``sparkstorm ui``."""
    with running_ui(tmp_path_factory.mktemp("trouble"), tls_dir, TROUBLE,
                    "-c", "topology.max.spout.pending=50",
                    ready=lambda ui: _picky(ui)["executed"] > 0 and bool(_picky(ui)["lastError"]),
                    what="the picky bolt executed and raised", **{"spark.ui.enabled": True}) as ui:
        yield ui


def _picky(ui: UiCluster) -> dict[str, Any]:
    return dict(next(b for b in ui.topology()["bolts"] if b["boltId"] == "picky"))


def _engine_summary(ui: UiCluster) -> dict[str, Any]:
    """The worker's own statistics, not Nimbus's copy.

    From its local heartbeat, written by the engine's TopologyStats.
    """
    (path,) = ui.cluster.local.glob("supervisor/workers/*/heartbeat.json")
    return dict(json.loads(path.read_text())["stats"])


def test_a_bolt_raising_in_every_window_shows_its_latency_and_capacity(
        trouble: UiCluster, page: Any) -> None:
    ui = trouble
    engine = wait_for(lambda: (s := _engine_summary(ui)["components"].get("picky")) and
                      s["errors"] > 1 and s["execute_latency_ms"] and s, 60,
                      message="the engine measured the raising bolt")
    # each tuple takes at least 2 ms (before the fix: 0, the window raised)
    assert engine["execute_latency_ms"] >= 2.0 and engine["capacity"] > 0.001, engine
    rest = _picky(ui)
    assert float(rest["executeLatency"]) >= 2.0, rest
    assert float(rest["capacity"]) > 0.001 and float(rest["processLatency"]) >= 2.0, rest
    # Nimbus's copy is an older heartbeat of the same all-time figures
    assert float(rest["executeLatency"]) == pytest.approx(engine["execute_latency_ms"],
                                                           rel=0.5)
    executors = ui.component("picky")["executorStats"]
    assert all(float(e["executeLatency"]) >= 2.0 for e in executors), executors

    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector('#bolts tr[data-id="picky"]')
    shown, text = cells_and_texts(page, '#bolts tr[data-id="picky"]')  # one refresh's
    assert float(shown["executeLatency"]) > 0 and float(shown["capacity"]) > 0, shown
    assert re.fullmatch(r"[\d.]+ (ms|s|min)", text["executeLatency"]), text
    assert re.fullmatch(r"\d[\d,]*", text["executed"]), text  # 1,234 for people
    assert f"{int(shown['executed']):,}" == text["executed"]
    # the graph colours it by a capacity above 0 (before the fix: 0.000, "idle")
    node = '#dag-svg g.node[data-component="picky"]'
    page.wait_for_function(f"""() => {{ const n = document.querySelector('{node}');
        return n && n.dataset.capacity !== '' && +n.dataset.capacity > 0; }}""")
    assert "load-0" not in page.get_attribute(node, "class")
    assert re.match(r"capacity (?!0\.000)\d+\.\d{3}", page.text_content(f"{node} text.load"))

    # and so does each of its executors on its page (one restarting shows no figures yet)
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/picky")
    page.wait_for_function("""() => {
        const cells = [...document.querySelectorAll('#executors td[data-field=capacity]')];
        return cells.length === 2 && cells.every(c => +c.dataset.value > 0); }""",
                           timeout=30_000)
    assert all(float(c) > 0 for c in page.eval_on_selector_all(
        "#executors td[data-field=capacity]", "cs => cs.map(c => c.textContent)"))


def test_failures_of_a_raising_bolt_are_errors_and_explicit_fails_not_crashes(
        trouble: UiCluster, page: Any) -> None:
    ui = trouble
    detail = wait_for(lambda: (d := ui.topology()) and d["failuresByCause"]["error"] > 0 and
                      d["failuresByCause"]["explicit"] > 0 and d, 60,
                      message="errors and explicit fails counted")
    causes = detail["failuresByCause"]
    assert causes["crash"] == 0, causes  # the rest of a window after an error is its error's
    kinds = {(r["cause"], r["reason"]) for r in detail["failureReasons"]}
    assert ("explicit", "picky: refuses word number <n>") in kinds, kinds
    assert any(c == "error" and r.startswith("picky: ValueError: cannot take word<n>")
               for c, r in kinds), kinds
    assert len(detail["failureReasons"]) <= 20

    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#failures-box[data-supported='1']")
    page.wait_for_selector("#failure-reasons td[data-field=reason]:text('refuses word number')")
    shares = page.eval_on_selector_all(
        "#failures-by-cause tbody tr", """rows => Object.fromEntries(rows.map(r =>
            [r.dataset.cause, r.querySelector('[data-field=share]').textContent]))""")
    assert shares["crash"] == "0.0 %" and shares["error"] != "0.0 %", shares
    assert page.get_attribute("#failure-reasons td[data-field=lastSeen]", "data-value")


def test_the_log_viewer_shows_the_line_the_bolt_logged(trouble: UiCluster,
                                                       page: Any) -> None:
    ui = trouble
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/picky")
    page.wait_for_selector("#executors tbody tr[data-id] td[data-field=workerLogLink] a")
    page.click("#executors tbody tr[data-id] td[data-field=workerLogLink] a")
    page.wait_for_selector("#token-dialog[open]")  # logs are read with the cluster token
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector(f"#log-text:has-text('{HELLO}')", timeout=30_000)
    assert page.url.split("source=")[1].startswith("executor-")
    assert "executor" in page.text_content("#log-title")
    options = page.eval_on_selector_all("#log-source option", "os => os.map(o => o.value)")
    assert "worker" in options and any(o.startswith("executor-") for o in options)
    # the worker's own log, picked from the list, is tailed too
    page.select_option("#log-source", "worker")
    page.wait_for_function("() => document.querySelector('#log-text').textContent"
                           ".includes('sparkstorm')", timeout=30_000)
    screenshot(page, "logs")
    # the last error links to the log of the worker that reported it
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    link = page.get_attribute('#bolts tr[data-id="picky"] td[data-field=lastError] a', "href")
    assert link and "/logs?worker=" in link


# slow (28 s): each process's resources are checked by tests/unit/cluster/worker/
# test_resources.py and tests/unit/cluster/nimbus/test_ui_trouble.py
@pytest.mark.slow
def test_resources_of_each_process_are_shown(trouble: UiCluster, page: Any) -> None:
    ui = trouble
    worker = wait_for(lambda: (w := ui.topology()["workers"]) and w[0]["memoryMb"] > 0 and
                      w[0], 60, message="the worker's resources reported")
    assert worker["processes"]["executors"], worker
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    row = f'#workers tr[data-port="{worker["port"]}"]'
    page.wait_for_selector(f"{row} td[data-field=memoryMb][data-value]")
    assert float(_cells(page, row)["memoryMb"]) > 0
    assert _texts(page, row)["memoryMb"].endswith("MB")
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/picky")
    # picky's executors restart after every raising window: a refresh may catch one
    # restarting (no figures then), and on a loaded machine both seldom run at the same
    # refresh; each shows its memory, with its unit, at some refresh while it runs
    page.wait_for_function("""() => {
        const shown = (window.memoryShown = window.memoryShown || new Map());
        const rows = [...document.querySelectorAll('#executors tr[data-id]')];
        for (const row of rows) {
            const cell = row.querySelector('td[data-field=memoryMb]');
            if (cell && +cell.dataset.value > 0) shown.set(row.dataset.id, cell.textContent);
        }
        return rows.length === 2 && shown.size === 2; }""", timeout=60_000)
    texts = page.evaluate("() => [...window.memoryShown.values()]")
    assert len(texts) == 2 and all(text.endswith("MB") for text in texts), texts


def test_the_cluster_page_shows_health_at_a_glance(trouble: UiCluster, page: Any) -> None:
    ui = trouble
    row = wait_for(lambda: (t := ui.rest("/api/v1/topology/summary")["topologies"][0]) and
                   t["health"]["failed"] > 0 and t, 60, message="failures in the last 10 min")
    assert row["health"]["state"] == "failing"  # more than 1 in 7 of its trees fail
    _open(page, ui.ui_url + "/")
    selector = f'#topologies tr[data-id="{ui.topology_id}"]'
    page.wait_for_selector(f"{selector}.health-failing")
    health = _texts(page, selector)["health"]
    assert re.search(r"\d+\.\d % failed", health), health  # after any current trouble
    assert "error" in health
    labels = page.eval_on_selector_all("#cluster-summary th", "ths => ths.map(t => t.textContent)")
    assert "Worker slots" in labels and "slotsTotal" not in labels
    spark = page.get_attribute(f"{selector} td[data-field=sparkUiUrl] a", "href")
    assert spark and spark.startswith("http")
    screenshot(page, "cluster-health")
    with httpx.Client(base_url=ui.ui_url, timeout=10, verify=ui.cluster.verify) as client:
        owners = client.get("/api/v1/owner-resources").json()["owners"]
        assert owners[0]["totalTopologies"] == 1 and owners[0]["totalMemoryUsage"] > 0


def test_a_2kb_error_wraps_within_a_laptop_screen(trouble: UiCluster, page: Any) -> None:
    ui = trouble
    page.set_viewport_size({"width": 1366, "height": 768})
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    cell = '#bolts tr[data-id="picky"] td[data-field=lastError]'
    page.wait_for_selector(f"{cell} .error-line")
    line = page.text_content(f"{cell} .error-line")
    assert line.startswith("ValueError: cannot take word") and len(line) >= 1000
    size = page.evaluate("""() => ({scroll: document.documentElement.scrollWidth,
                                    client: document.documentElement.clientWidth})""")
    assert size["scroll"] <= size["client"], size
    box = page.eval_on_selector(cell, "c => c.getBoundingClientRect().width")
    assert box < 1366 / 2, box
    # the spout's long id wraps in its table, which fits its section (no figure scrolled away)
    page.wait_for_selector(f'#spouts tr[data-id="{SPOUT}"]')
    fits = page.evaluate("""() => ['spouts', 'bolts'].map(id => {
        const table = document.getElementById(id);
        return [id, table.scrollWidth, table.parentElement.clientWidth]; })""")
    assert all(width <= room for _, width, room in fits), fits
    assert page.text_content(f'#spouts tr[data-id="{SPOUT}"] td[data-field=spoutId]') == SPOUT
    # in the graph it is shortened to its box, every node within the graph, the whole id
    # in the node's title
    page.wait_for_selector(f'#dag-svg g.node[data-component="{SPOUT}"] text.name')
    graph = page.evaluate("""() => {
        const svg = document.getElementById('dag-svg'), view = svg.viewBox.baseVal;
        return [...svg.querySelectorAll('g.node')].map(node => {
            const box = node.querySelector('rect').getBBox();
            const name = node.querySelector('text.name'), text = name.getBBox();
            const m = node.transform.baseVal.consolidate().matrix;
            return {id: node.dataset.component, name: name.textContent,
                    title: node.querySelector('title').textContent,
                    inBox: text.x >= box.x && text.x + text.width <= box.x + box.width,
                    inGraph: m.e >= view.x && m.e + box.width <= view.x + view.width}; }); }""")
    spout = next(node for node in graph if node["id"] == SPOUT)
    assert spout["name"].endswith("…") and SPOUT.startswith(spout["name"][:-1]), spout
    assert SPOUT in spout["title"], spout
    assert all(node["inBox"] and node["inGraph"] for node in graph), graph
    # back-pressure: the spout's buffer against its bound, windows against window.ms
    page.wait_for_selector(f"#windows tr[data-key='buffer.{SPOUT}'] td:has-text('of')")
    assert page.query_selector("#windows tr[data-key='lastWindowMs'] td[data-value]")
    # the spout and bolt tables come before the charts
    order = page.evaluate("""() => ['spouts', 'bolts', 'chart-emitted'].map(
        id => document.getElementById(id).getBoundingClientRect().top)""")
    assert order == sorted(order), order
    screenshot(page, "laptop-long-error")


def test_tables_sort_by_a_clicked_column(trouble: UiCluster, page: Any) -> None:
    ui = trouble
    wait_for(lambda: len(ui.component("picky")["executorStats"]) == 2, 60,
             message="both executors of picky reported")
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/picky")
    page.wait_for_selector("#executors tbody tr[data-id] + tr[data-id]")
    header = "#executors th:text-is('Executed')"

    def executed() -> list[int]:
        return list(page.eval_on_selector_all(
            "#executors tbody td[data-field=executed]", "cs => cs.map(c => +c.dataset.value)"))

    # each check reads the column once: the counts change with every refresh
    page.click(header)
    assert page.get_attribute(header, "aria-sort") == "ascending"
    shown = executed()
    assert shown == sorted(shown)
    page.click(header)
    assert page.get_attribute(header, "aria-sort") == "descending"
    shown = executed()
    assert shown == sorted(shown, reverse=True)
    # the order survives the next refresh
    before = page.get_attribute("body", "data-refreshed")
    page.wait_for_function(f"() => document.body.dataset.refreshed !== '{before}'")
    shown = executed()
    assert shown == sorted(shown, reverse=True)
    # chart points say their value on hover
    page.wait_for_selector("#chart-executed-svg circle.hit title", state="attached")
    assert "/s" in page.text_content("#chart-executed-svg circle.hit title")


def test_each_chart_point_links_to_its_windows_spark_job(trouble: UiCluster,
                                                         page: Any) -> None:
    ui = trouble
    recent = wait_for(lambda: [w for w in ui.topology()["recentWindows"] if w["jobs"]], 60,
                      message="windows with their Spark jobs")
    assert all(isinstance(j, int) for w in recent for j in w["jobs"])
    spark = wait_for(lambda: ui.topology()["workers"][0]["sparkUiUrl"], 30,
                     message="the worker's Spark UI")
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#chart-emitted-svg a.job-link", state="attached")
    links = page.eval_on_selector_all("#chart-emitted-svg a.job-link",
                                      "as => as.map(a => a.getAttribute('href'))")
    assert links and all(re.fullmatch(re.escape(spark.rstrip("/")) + r"/jobs/job/\?id=\d+", link)
                         for link in links), links
    assert httpx.get(links[-1], timeout=10, follow_redirects=True).is_success


def test_durations_read_as_people_say_them(trouble: UiCluster, page: Any) -> None:
    ui = trouble
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    # the page's own formatter, as its tables and tooltips use it
    shown = page.evaluate("""() => [86400, 2 * 86400, 86400 + 3 * 3600 + 59, 3 * 3600 + 120,
                                    305, 42, 0].map(UI.fmt.duration)""")
    assert shown == ["1 day", "2 days", "1 day 3 h", "3 h 2 min", "5 min 5 s", "42 s", "0 s"]
    # Storm's "1d 0h 0m 0s" window reads "1 day" in the stats table, its API value kept
    row = '#topology-stats tr[data-window="86400"]'
    assert _texts(page, row)["windowPretty"] == "1 day"
    assert _cells(page, row)["windowPretty"] == "1d 0h 0m 0s"
    uptime = _texts(page, "#topology-summary tbody tr")["uptime"]
    assert re.fullmatch(r"(\d+ min )?\d+ s|\d+ min", uptime), uptime


SAMPLED = "sampled received tuple on stream default"


def _debug_of(ui: UiCluster, component: str | None = None) -> tuple[bool, float]:
    body = ui.component(component) if component else ui.topology()
    return bool(body["debug"]), float(body["samplingPct"])


# slow (28 s): debug sampling reaching executors' logs is checked by
# tests/integration/spark_app/test_spark_submit_control.py (REST and CLI)
@pytest.mark.slow
def test_debug_sampling_of_a_component_shows_its_tuples_in_its_executors_log(
        trouble: UiCluster, page: Any) -> None:
    ui = trouble
    assert _debug_of(ui, "picky") == (False, 10.0)  # Storm's answer when debugging is off
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/picky")
    page.wait_for_selector("#debug-state[data-debug=off]")
    # a percentage out of range is refused before any dialog
    page.fill("#debug-pct", "0")
    page.click("button[data-action=debug]")
    page.wait_for_selector("#action-status[data-result=refused]:has-text('above 0')")
    assert page.is_hidden("#token-dialog") and _debug_of(ui, "picky")[0] is False

    page.fill("#debug-pct", "100")
    page.click("button[data-action=debug]")
    question = _question(page)  # a new session: the token is asked in the same dialog
    assert "Debug component picky of topology" in question and "100 %" in question, question
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    assert _debug_of(ui, "picky") == (True, 100.0)
    assert _debug_of(ui)[0] is False and _debug_of(ui, SPOUT)[0] is False  # picky only
    page.wait_for_selector("#debug-state[data-debug=on][data-pct='100']")
    screenshot(page, "component-debug-on")

    # the sampled tuples appear in the log of picky's executor, in the page's log viewer
    link = "#executors tbody tr[data-id] td[data-field=workerLogLink] a"
    page.wait_for_selector(link)
    source = re.search(r"source=(executor-\d+)", page.get_attribute(link, "href"))
    assert source, page.get_attribute(link, "href")
    page.click(link)  # the session keeps the token: no dialog
    page.wait_for_selector(f"#log-text:has-text('{SAMPLED}')", timeout=60_000)
    assert page.is_hidden("#token-dialog")
    assert f"source={source[1]}" in page.url
    title = page.text_content("#log-title")
    assert title == f"executor {source[1].split('-')[1]} (picky)", title
    sampled = [line for line in page.text_content("#log-text").splitlines() if SAMPLED in line]
    assert any(re.search(r"[\[(]'word\d+', \d+[\])]", line) for line in sampled), sampled[-3:]
    screenshot(page, "logs-debug-sampling")

    # Stop debug: the token is kept, so the dialog only confirms
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/picky")
    page.click("button[data-action=debug-stop]")
    assert "Stop debugging component picky" in _question(page)
    assert page.is_hidden("#token-field")
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    assert _debug_of(ui, "picky") == (False, 10.0)
    page.wait_for_selector("#debug-state[data-debug=off]")


def test_the_log_level_panel_sets_and_clears_a_level(trouble: UiCluster, page: Any) -> None:
    ui = trouble
    logconfig = f"/api/v1/topology/{ui.topology_id}/logconfig"
    logger = "sparkstorm.component.picky"
    assert ui.rest(logconfig) == {"namedLoggerLevels": {}}
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#log-levels tbody tr.none")
    suggestions = page.eval_on_selector_all("#log-level-loggers option",
                                            "os => os.map(o => o.value)")
    assert {"ROOT", logger, f"sparkstorm.component.{SPOUT}"} <= set(suggestions), suggestions
    page.fill("#log-level-logger", logger)
    page.select_option("#log-level-level", "DEBUG")
    page.fill("#log-level-timeout", "120")
    page.click("#log-level-apply")
    question = _question(page)
    assert f"Set logger {logger} to DEBUG" in question and "for 2 min" in question, question
    page.fill("#token-input", ui.cluster.token())
    before = time.time()
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    # Nimbus's own answer: the level, its timeout and when it ends
    entry = ui.rest(logconfig)["namedLoggerLevels"][logger]
    assert entry["target_level"] == "DEBUG" and entry["timeout"] == 120, entry
    assert before + 110 < entry["timeout_epoch"] < time.time() + 130, entry
    row = f'#log-levels tr[data-logger="{logger}"]'
    shown, text = wait_for(lambda: (both := cells_and_texts(page, row))[0] and both, 15,
                           message=f"the row of {logger}")
    assert shown["target_level"] == "DEBUG" and text["timeout"] == "2 min", (shown, text)

    # a level set meanwhile by someone else shows with the next refresh
    response = ui.cluster.request("POST", logconfig, json={"namedLoggerLevels": {
        "ROOT": {"target_level": "WARN", "timeout": 0}}})
    assert response.is_success, response.text
    page.wait_for_selector('#log-levels tr[data-logger="ROOT"] td[data-value=WARN]')
    assert _texts(page, '#log-levels tr[data-logger="ROOT"]')["timeout_epoch"] == "when cleared"

    for name in (logger, "ROOT"):  # cleared through the page, one at a time
        page.click(f'#log-levels tr[data-logger="{name}"] button.log-level-clear')
        assert f"Clear the level of logger {name}" in _question(page)
        page.click("#token-ok")
        page.wait_for_selector(f'#log-levels tr[data-logger="{name}"]', state="detached")
        assert name not in ui.rest(logconfig)["namedLoggerLevels"]
    page.wait_for_selector("#log-levels tbody tr.none")
    assert ui.rest(logconfig) == {"namedLoggerLevels": {}}


def test_the_topology_page_debugs_the_whole_topology(trouble: UiCluster, page: Any) -> None:
    ui = trouble
    _open(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#debug-state[data-debug=off]")
    page.fill("#debug-pct", "5")
    page.click("button[data-action=debug]")
    assert "Debug topology" in _question(page)
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    assert _debug_of(ui) == (True, 5.0) and _debug_of(ui, SPOUT) == (True, 5.0)
    page.wait_for_selector("#debug-state[data-debug=on][data-pct='5']")
    page.click("button[data-action=debug-stop]")
    assert "Stop debugging topology" in _question(page)
    page.click("#token-ok")
    page.wait_for_selector("#debug-state[data-debug=off]")
    assert _debug_of(ui) == (False, 10.0) and _debug_of(ui, "picky")[0] is False
