"""Two workers, a kill -9 under checkpoints and a ``rebalance -e``, as the UI shows them.

The chaos topology (spout ``ids``, 2 ``relay``, 2 ``sink``: ``tests/chaos/topology``) runs on
two workers of one supervisor with checkpoints every 5 windows, in a real cluster with
``sparkstorm ui`` in front, and Chromium reads the pages while it goes through what issue 31
saw the UI get wrong:

- on two workers it is RUNNING (it read STARTING forever: the worker without the driver runs
  no windows), and each executor row shows the host and port of the worker whose process
  runs it;
- a worker that stops heartbeating (SIGSTOP) is LOST, named on both pages, until it beats
  again;
- the driver's worker killed with -9 and started again by its supervisor: the all-time counts
  go on from where they were, and both pages' window hints say they were kept (the rolling
  windows since the restart);
- a sink executor killed with -9 shows as a restart and a rollback with its cause, on the
  topology page and the cluster page, and its row's uptime is its new process's;
- ``rebalance -e relay=1`` through the UI's dialog (which says the workers regroup in place)
  gives the relay one row keyed by both its tasks, with a fresh uptime, and leaves the sinks
  their own figures (a bolt with no outputs emits nothing; the rows never add up to more than
  the component).

Slow (a two-worker cluster with Spark: two to six minutes). What ``make test`` covers of the
same ground: the REST fields from fake heartbeats in
``tests/unit/cluster/nimbus/test_ui_trouble.py``
(``test_restarts_rollbacks_and_a_stall_are_told_with_when``),
``tests/unit/cluster/nimbus/test_workers.py`` and
``tests/unit/cluster/nimbus/test_start_failure_status.py``; the rollback cause from a real
kill -9 in ``tests/integration/spark/test_checkpoints.py``
(``test_kill_9_of_an_executor_rolls_back_to_exact_counts``); the troubles box in Chromium
in ``test_failing_start.py``; a rebalance through the dialog in ``test_pages.py``
(``test_rebalance_through_the_ui_changes_executor_counts``).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.browser.conftest import UiCluster, running_ui, screenshot
from tests.browser.helpers import open_page, question, table, texts
from tests.chaos.faults import TOPOLOGY

pytestmark = [pytest.mark.spark, pytest.mark.browser, pytest.mark.slow,
              pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory, browser: Any,
                tls_dir: Path) -> Iterator[UiCluster]:
    """Nimbus, a supervisor running the chaos topology on two workers, ``sparkstorm ui``."""
    tmp = tmp_path_factory.mktemp("two-workers")
    (tmp / "results").mkdir()
    with running_ui(tmp, tls_dir, TOPOLOGY, "--name", "two-workers",
                    "-c", "topology.workers=2", "-c", f"chaos.dir={tmp / 'results'}",
                    "-c", "chaos.count=1000000", "-c", "topology.checkpoint.windows=5",
                    "-c", f"topology.checkpoint.dir={tmp / 'checkpoints'}",
                    "-c", "topology.message.timeout.secs=10",
                    "-c", "topology.executor.start.timeout.secs=20",
                    ready=lambda ui: ui.topology()["workerStatus"] == "RUNNING"
                    and ui.topology()["committedWindow"] is not None, ready_secs=300,
                    what="running on two workers, a checkpoint committed") as ui:
        yield ui


def _hosting(ui: UiCluster) -> dict[int, tuple[int, int]]:
    """Executor id -> (port of the worker whose process runs it, pid), from the workers."""
    found: dict[int, tuple[int, int]] = {}
    for record in ui.cluster.worker_records():
        beat = ui.cluster.local_heartbeat(record) or {}
        for gid, where in ((beat.get("stats") or {}).get("endpoints") or {}).items():
            found[int(gid)] = (int(record["port"]), int(where[3]))
    return found


def _hosted(ui: UiCluster, executors: int) -> dict[int, tuple[int, int]] | None:
    """:func:`_hosting` once the workers report ``executors`` executors, else None."""
    found = _hosting(ui)
    return found if len(found) == executors else None


def _rows(page: Any, component: str, ui: UiCluster) -> dict[str, dict[str, str]]:
    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/{component}")
    page.wait_for_selector("#executors tbody tr[data-id]")
    return table(page, "executors", "id")


def test_two_workers_are_running_and_each_executor_shows_its_own_worker(
        two_workers: UiCluster, page: Any) -> None:
    ui = two_workers
    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector('#topology-summary td[data-field=workerStatus]:text("RUNNING")')
    page.wait_for_selector("#workers tbody tr[data-port]")
    ports = {int(p) for p in page.eval_on_selector_all(
        "#workers tbody tr[data-port]", "rows => rows.map(r => r.dataset.port)")}
    assert ports == {int(r["port"]) for r in ui.cluster.worker_records()} and len(ports) == 2
    page.wait_for_function("() => [...document.querySelectorAll('#workers td[data-field="
                           "status]')].every(c => c.dataset.value === 'RUNNING')")
    hosting = wait_for(lambda: _hosted(ui, 5), 60, message="both workers report executors")
    assert {port for port, _ in hosting.values()} == ports, "executors on both workers"
    for component in ("ids", "relay", "sink"):
        rest = {e["id"]: int(e["executorId"]) for e in ui.component(component)["executorStats"]}
        for row_id, row in _rows(page, component, ui).items():
            assert int(row["port"]) == hosting[rest[row_id]][0], (component, row_id, row)
    screenshot(page, "two-workers-sink")


def test_an_executor_killed_with_9_shows_as_a_restart_and_a_rollback(
        two_workers: UiCluster, page: Any) -> None:
    ui = two_workers
    sink = {int(e["executorId"]): e for e in ui.component("sink")["executorStats"]}
    victim = max(sink)
    _, pid = _hosting(ui)[victim]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: ui.topology()["rollbacks"] >= 1 and ui.topology()["executorRestarts"] >= 1,
             120, message=f"the restart and the rollback reached Nimbus\n{ui.cluster.logs()}")
    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#troubles li.error")
    said = page.eval_on_selector_all("#troubles li", "lis => lis.map(li => li.textContent)")
    restarts = next(s for s in said if s.startswith("executors restarting"))
    assert "1 restart(s)" in restarts, said
    rolled = next(s for s in said if s.startswith("rolled back"))
    assert "died and restarted" in rolled or f"executor {victim} (sink)" in rolled, said
    assert "executor restarts 1" in said, said
    screenshot(page, "two-workers-after-kill-9")

    open_page(page, ui.ui_url + "/")
    row = f'#topologies tr[data-id="{ui.topology_id}"]'
    page.wait_for_selector(f"{row} td[data-field=health]")
    assert "executors restarting" in texts(page, row)["health"], texts(page, row)

    wait_for(lambda: _hosting(ui).get(victim, (0, pid))[1] != pid, 60,
             message="the killed executor runs again in a new process")
    rows = {int(e["executorId"]): e for e in ui.component("sink")["executorStats"]}
    restarted, other = rows[victim], rows[min(rows)]
    assert restarted["uptimeSeconds"] < other["uptimeSeconds"], (restarted, other)
    assert set(_rows(page, "sink", ui)) == {restarted["id"], other["id"]}


def test_rebalance_e_through_the_dialog_gives_each_executor_its_own_row(
        two_workers: UiCluster, page: Any) -> None:
    ui = two_workers
    page.on("dialog", lambda dialog: dialog.accept())
    relay_tasks = sorted(int(n) for e in ui.component("relay")["executorStats"]
                         for n in e["id"].strip("[]").split("-"))
    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.click("button[data-action=rebalance]")
    page.wait_for_selector("#rebalance-dialog[open]")
    page.fill('#rebalance-executors input[data-component="relay"]', "1")
    page.fill("#rebalance-wait", "0")
    page.click("#rebalance-ok")
    asked = question(page)
    assert "relay → 1 executors" in asked and "regroup their executors in place" in asked
    assert "replaced" not in asked, asked
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    merged = f"[{relay_tasks[0]}-{relay_tasks[-1]}]"
    wait_for(lambda: [e["id"] for e in ui.component("relay")["executorStats"]] == [merged]
             and _hosted(ui, 4) is not None, 120,
             message=f"the relay's tasks in one executor\n{ui.cluster.logs()}")
    wait_for(lambda: ui.component("relay")["executorStats"][0]["executed"] > 0, 60,
             message="the regrouped relay executes")
    (relay,) = _rows(page, "relay", ui).values()
    sinks = _rows(page, "sink", ui)
    uptimes = {c: [e["uptimeSeconds"] for e in ui.component(c)["executorStats"]]
               for c in ("relay", "sink")}
    assert uptimes["relay"][0] < min(uptimes["sink"]), uptimes  # a new process; sinks stay
    assert all(s["emitted"] == "0" for s in sinks.values()), sinks  # no outputs, no emits
    totals = {c: next(s for s in ui.component(c)["boltStats"] if s["window"] == ":all-time")
              for c in ("relay", "sink")}
    assert int(relay["executed"]) <= totals["relay"]["executed"]
    assert sum(int(s["executed"]) for s in sinks.values()) <= totals["sink"]["executed"]
    screenshot(page, "two-workers-after-rebalance-e")


def test_a_worker_that_stops_heartbeating_shows_as_lost(two_workers: UiCluster,
                                                        page: Any) -> None:
    ui = two_workers
    # the worker without the driver (it runs no windows); stopped, its executors (processes
    # of their own) go on answering the driver, but it sends no heartbeat
    (other,) = [r for r in ui.cluster.worker_records()
                if not ((ui.cluster.local_heartbeat(r) or {}).get("stats") or {}).get("windows")]
    os.kill(other["pid"], signal.SIGSTOP)
    try:
        wait_for(lambda: ui.topology()["workerStatus"] == "LOST", 60,
                 message=f"the silent worker is lost\n{ui.cluster.logs()}")
        open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}")
        page.wait_for_selector('#topology-summary td[data-field=workerStatus]:text("LOST")')
        said = page.text_content("#troubles li.error") or ""
        assert f"worker {other['worker_id']} (port {other['port']}) sent no heartbeat" in said
        lost = page.get_attribute(f'#workers tr[data-port="{other["port"]}"] '
                                  "td[data-field=status]", "data-value")
        assert lost == "LOST"
        open_page(page, ui.ui_url + "/")
        row = f'#topologies tr[data-id="{ui.topology_id}"]'
        assert "workers lost" in texts(page, row)["health"], texts(page, row)
    finally:
        os.kill(other["pid"], signal.SIGCONT)
    wait_for(lambda: ui.topology()["workerStatus"] == "RUNNING", 60,
             message=f"the worker beats again\n{ui.cluster.logs()}")


def test_all_time_counts_survive_a_worker_restart_and_both_pages_say_so(
        two_workers: UiCluster, page: Any) -> None:
    ui = two_workers
    (driver,) = [r for r in ui.cluster.worker_records()
                 if ((ui.cluster.local_heartbeat(r) or {}).get("stats") or {}).get("windows")]
    before = ui.topology()["spouts"][0]["emitted"]
    ui.cluster.kill_worker(driver)  # its supervisor starts it again, with a new driver
    wait_for(lambda: ui.topology()["statisticsResets"] == 1
             and ui.topology()["workerStatus"] == "RUNNING", 240,
             message=f"the worker runs again\n{ui.cluster.logs()}")
    wait_for(lambda: ui.topology()["spouts"][0]["emitted"] > before, 60,
             message="all-time counts go on from where they were")
    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    hint = page.text_content("#window-hint") or ""
    assert hint == "showing All time (kept across 1 worker restart)", hint
    assert int(texts(page, '#spouts tr[data-id="ids"]')["emitted"].replace(",", "")) > before
    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/sink")
    hint = page.text_content("#window-hint") or ""
    assert hint == ("showing All time (kept across 1 worker restart; executor rows since "
                    "their process started)"), hint
    page.click("#window-select button[data-window='600']")
    page.wait_for_function("() => document.getElementById('window-hint').textContent"
                           ".startsWith('showing 10 minutes (since the worker restart')")
    screenshot(page, "two-workers-after-worker-restart")
