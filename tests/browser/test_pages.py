"""The UI in a real headless Chromium against a real cluster running exclamation.

The tests of this module share one cluster and run in order: the pages and the chart while
the topology runs, then deactivation (refused without the token), the numbers once it is
quiet, and last activation and kill.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from sparkstorm.testing.polling import wait_for
from tests.browser.conftest import UiCluster, screenshot

pytestmark = [pytest.mark.spark, pytest.mark.browser, pytest.mark.timeout(240)]

SPOUT_FIELDS = ("executors", "tasks", "emitted", "transferred", "completeLatency", "acked",
                "failed")
BOLT_FIELDS = ("executors", "tasks", "emitted", "transferred", "capacity", "executeLatency",
               "executed", "processLatency", "acked", "failed")


def _cells(page: Any, row_selector: str) -> dict[str, str]:
    """The ``data-field`` cells of one table row, as text."""
    values = page.eval_on_selector_all(
        f"{row_selector} td[data-field]",
        "cells => cells.map(c => [c.dataset.field, c.textContent.trim()])")
    return dict(values)


def _acked(ui: UiCluster) -> int:
    return int(ui.topology()["topologyStats"][0]["acked"])


def _accept_dialogs(page: Any, seen: list[str]) -> None:
    def accept(dialog: Any) -> None:
        seen.append(dialog.message)
        dialog.accept()

    page.on("dialog", accept)


def test_cluster_page_shows_what_the_rest_api_returns(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    wait_for(lambda: ui.rest("/api/v1/cluster/summary")["slotsUsed"] == 1, 60,
             message="the worker's slot used")
    response = page.goto(ui.ui_url + "/")
    assert response.status == 200
    row = f'#topologies tr[data-id="{ui.topology_id}"]'
    page.wait_for_selector(row)
    summary = ui.rest("/api/v1/cluster/summary")
    supervisors = ui.rest("/api/v1/supervisor/summary")["supervisors"]
    topology = ui.rest("/api/v1/topology/summary")["topologies"][0]

    shown = _cells(page, "#cluster-summary")
    for key in ("supervisors", "topologies", "slotsTotal", "slotsUsed", "slotsFree",
                "executorsTotal", "tasksTotal"):
        assert shown[key] == str(summary[key]), key
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
    screenshot(page, "cluster")

    page.click(f"{row} a")  # the name links to the topology page
    page.wait_for_selector("#topology-summary tr[data-id]")
    assert page.url.endswith(f"/topology/{ui.topology_id}")


def test_topology_page_draws_every_component_and_stream(ui_cluster: UiCluster,
                                                        page: Any) -> None:
    ui = ui_cluster
    spec = ui.spec()
    components = {c["name"] for c in spec["components"]}
    streams = {(i["source"], c["name"], i["stream"], i["grouping"]["type"])
               for c in spec["components"] for i in c["inputs"]}
    assert components == {"word", "exclaim1", "exclaim2"}

    page.goto(f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#dag-svg")
    nodes = page.eval_on_selector_all("#dag-svg g.node", "g => g.map(n => n.dataset.component)")
    assert set(nodes) == components and len(nodes) == len(components)
    edges = page.eval_on_selector_all(
        "#dag-svg g.edge", "g => g.map(e => [e.dataset.source, e.dataset.target, "
        "e.dataset.stream, e.dataset.grouping, e.querySelector('text').textContent])")
    assert {tuple(e[:4]) for e in edges} == streams and len(edges) == len(streams)
    assert all(e[4] == e[3] for e in edges), "each edge is labelled with its grouping"
    assert page.is_visible('#dag-svg g.node[data-component="exclaim2"]')

    detail = ui.topology()
    assert page.eval_on_selector_all("#spouts tbody tr", "r => r.map(x => x.dataset.id)") == \
        [s["spoutId"] for s in detail["spouts"]]
    assert page.eval_on_selector_all("#bolts tbody tr", "r => r.map(x => x.dataset.id)") == \
        [b["boltId"] for b in detail["bolts"]]
    for bolt in detail["bolts"]:
        cells = _cells(page, f'#bolts tr[data-id="{bolt["boltId"]}"]')
        assert (cells["executors"], cells["tasks"]) == (str(bolt["executors"]),
                                                        str(bolt["tasks"]))
    summary = _cells(page, "#topology-summary tbody tr")
    assert summary["id"] == ui.topology_id and summary["status"] == "ACTIVE"
    assert summary["msgTimeout"] == str(detail["msgTimeout"])


def test_chart_of_acked_per_second_updates_as_heartbeats_pass(ui_cluster: UiCluster,
                                                              page: Any) -> None:
    ui = ui_cluster
    wait_for(lambda: _acked(ui) > 0, 90, message=f"tuples acked\n{ui.cluster.logs()}")
    page.goto(f"{ui.ui_url}/topology/{ui.topology_id}")
    chart = "#acked-chart"
    page.wait_for_selector(f"{chart}[data-samples='2']")
    first = page.eval_on_selector(chart, "c => ({...c.dataset})")
    reload_marker = page.evaluate("() => (window.__marker = 'same page')")
    # a few heartbeats later: more points, more acked, a positive rate, and no reload
    page.wait_for_function(
        f"() => +document.querySelector('{chart}').dataset.samples >= 5", timeout=30_000)
    later = page.eval_on_selector(chart, "c => ({...c.dataset})")
    assert page.evaluate("() => window.__marker") == reload_marker
    assert int(later["lastAcked"]) > int(first["lastAcked"])
    assert float(later["maxRate"]) > 0
    dots = page.eval_on_selector_all(f"{chart} circle.dot",
                                     "d => d.map(x => [+x.dataset.acked, +x.dataset.rate])")
    assert len(dots) == int(later["samples"])
    assert [a for a, _ in dots] == sorted(a for a, _ in dots), "acked only grows"
    assert int(later["lastAcked"]) <= _acked(ui)
    # the page's own tables moved on too, to what Nimbus says
    spout_acked = int(_cells(page, '#spouts tr[data-id="word"]')["acked"])
    assert 0 < spout_acked <= _acked(ui)
    screenshot(page, "topology")


def test_deactivate_is_refused_without_the_token_then_works_with_it(ui_cluster: UiCluster,
                                                                    page: Any) -> None:
    ui = ui_cluster
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    page.goto(f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#topology-summary tr[data-id]")

    page.click("button[data-action=deactivate]")
    page.wait_for_selector("#token-dialog[open]")
    assert confirms and "Deactivate" in confirms[-1]
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


def test_numbers_on_the_pages_are_the_rest_numbers(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    if ui.status() != "INACTIVE":  # when run alone
        response = ui.cluster.request("POST", f"/api/v1/topology/{ui.topology_id}/deactivate")
        assert response.is_success, response.text

    def counts(detail: dict[str, Any]) -> list[Any]:
        rows = [*detail["spouts"], *detail["bolts"], *detail["topologyStats"]]
        return [{k: v for k, v in r.items() if isinstance(v, int)} for r in rows]

    def quiet() -> dict[str, Any] | None:
        before = ui.topology()
        time.sleep(2.5)
        after = ui.topology()
        settled = counts(before) == counts(after) and after["topologyStats"][0]["acked"] > 0
        return after if settled else None

    detail = wait_for(quiet, 60, message="the inactive topology's counts settle")
    page.goto(f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#spouts tbody tr[data-id]")

    def shown_is_rest() -> bool:
        # bolt latencies still move a little while idle: compare until one refresh matches
        nonlocal detail
        detail = ui.topology()
        page.wait_for_function(f"() => +document.body.dataset.refreshed > {time.time() * 1000}")
        page_rows, rest_rows = [], []
        for spout in detail["spouts"]:
            cells = _cells(page, f'#spouts tr[data-id="{spout["spoutId"]}"]')
            page_rows.append([cells[k] for k in (*SPOUT_FIELDS, "lastError")])
            rest_rows.append([str(spout[k]) for k in (*SPOUT_FIELDS, "lastError")])
        for bolt in detail["bolts"]:
            cells = _cells(page, f'#bolts tr[data-id="{bolt["boltId"]}"]')
            page_rows.append([cells[k] for k in BOLT_FIELDS])
            rest_rows.append([str(bolt[k]) for k in BOLT_FIELDS])
        stats = _cells(page, "#topology-stats tbody tr")
        keys = ("emitted", "transferred", "completeLatency", "acked", "failed")
        page_rows.append([stats[k] for k in keys])
        rest_rows.append([str(detail["topologyStats"][0][k]) for k in keys])
        return page_rows == rest_rows

    wait_for(shown_is_rest, 20, interval=0.2, message="the page shows the REST numbers")
    dag_text = page.text_content('#dag-svg text.load[data-component="exclaim2"]')
    assert dag_text == f"executed {detail['bolts'][1]['executed']}"
    screenshot(page, "topology-inactive")


def test_activate_then_kill_with_confirmation(ui_cluster: UiCluster, page: Any) -> None:
    ui = ui_cluster
    confirms: list[str] = []
    _accept_dialogs(page, confirms)
    page.goto(f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#topology-summary tr[data-id]")
    page.click("button[data-action=activate]")
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    wait_for(lambda: ui.status() == "ACTIVE", 10, message="topology active again")

    # the token is asked once per session: kill goes through without the dialog
    page.fill("#kill-wait", "0")
    page.click("button[data-action=kill]")
    page.wait_for_selector("body[data-gone='1']", timeout=30_000)
    assert "Kill topology" in confirms[-1] and "0 s" in confirms[-1]
    assert not page.is_visible("#token-dialog")
    assert ui.status() is None
    page.wait_for_selector("#error:text('no longer exists')")
    screenshot(page, "topology-killed")


def test_unknown_topology_gives_a_clear_404_page(ui_cluster: UiCluster, page: Any) -> None:
    response = page.goto(f"{ui_cluster.ui_url}/topology/no-such-topology-1-1")
    assert response.status == 404
    assert "Topology not found" in page.text_content("h1")
    assert "no-such-topology-1-1" in page.text_content("#error-message")
    assert "Traceback" not in page.content()
    screenshot(page, "topology-404")
    response = page.goto(f"{ui_cluster.ui_url}/no/such/page")
    assert response.status == 404 and "Not found" in page.text_content("h1")


def test_the_ui_server_refuses_cross_site_and_tokenless_posts(ui_cluster: UiCluster) -> None:
    with httpx.Client(base_url=ui_cluster.ui_url, timeout=10) as client:
        page = client.get("/")
        assert "script-src 'self'" in page.headers["content-security-policy"]
        cookie = page.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        csrf = page.text.split('name="csrf-token" content="')[1].split('"')[0]
        action = f"/api/v1/topology/{ui_cluster.topology_id}/deactivate"
        assert client.post(action).status_code == 403  # no CSRF token
        foreign = client.post(action, headers={"X-CSRF-Token": csrf,
                                               "Origin": "http://evil.example"})
        assert foreign.status_code == 403
        tokenless = client.post(action, headers={"X-CSRF-Token": csrf})
        assert tokenless.status_code == 401 and tokenless.json()["code"] == "AUTH_TOKEN_MISSING"
        # GETs go through unchanged
        assert client.get("/api/v1/supervisor/summary").json()["supervisors"] == \
            ui_cluster.rest("/api/v1/supervisor/summary")["supervisors"]
