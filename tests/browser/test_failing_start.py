"""A topology that cannot start, as the pages show it: where an operator looks first.

Its spout raises in ``initialize``; the supervisor keeps restarting the worker with a
back-off. The cluster page's health says the workers fail to start; the topology page
says it above everything, with the component's own error and its log file, and its
workers' state reads FAILING.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import UiCluster, running_ui
from tests.browser.helpers import open_page, texts
from tests.integration.cluster.test_start_failure import RAISING_INITIALIZE

pytestmark = [pytest.mark.spark, pytest.mark.browser, pytest.mark.timeout(400)]


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory, browser: Any,
              tls_dir: Path) -> Iterator[UiCluster]:
    folder = tmp_path_factory.mktemp("failing-start")
    topology = Path(folder) / "raising.py"
    topology.write_text(RAISING_INITIALIZE)
    with running_ui(folder, tls_dir, topology, "--name", "broken",
                    ready=lambda ui: ui.topology()["workerStatus"] == "FAILING", ready_secs=180,
                    what="the start failure reached Nimbus",
                    **{"supervisor.worker.restart.backoff.secs": 1,
                       "supervisor.worker.restart.backoff.max.secs": 4}) as ui:
        yield ui


def test_a_failing_start_is_the_first_thing_both_pages_say(failing: UiCluster,
                                                         page: Any) -> None:
    ui = failing
    open_page(page, ui.ui_url + "/")
    row = f'#topologies tr[data-id="{ui.topology_id}"]'
    page.wait_for_selector(f"{row} td[data-field=health]:text('workers failing to start')")
    assert texts(page, row)["status"] == "ACTIVE", "the user's order, not the workers' state"

    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}")
    page.wait_for_selector("#troubles li.error")
    said = page.text_content("#troubles li.error") or ""
    assert "component word" in said and "EXECUTOR_START_FAILED" in said, said
    assert "KeyError: 'missing-setting'" in said and "executor-0.log" in said, said
    page.wait_for_selector('#topology-summary td[data-field=workerStatus]:text("FAILING")')
    page.wait_for_selector('#spouts tr[data-id="word"]')
    # nothing acked: no latency to show, where Storm's API says "0.000"
    assert texts(page, '#spouts tr[data-id="word"]')["completeLatency"] == "–"
    open_page(page, f"{ui.ui_url}/topology/{ui.topology_id}/component/word")
    page.wait_for_selector("#component-stats tr[data-window]")
    shown = page.eval_on_selector_all("#component-stats td[data-field=completeLatency]",
                                      "cells => cells.map(c => c.textContent)")
    assert shown == ["–"] * 4, shown  # every window, on the component page too
