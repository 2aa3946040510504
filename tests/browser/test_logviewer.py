"""The log viewer in Chromium on a real cluster: paging a big log, search, download.

The worker's ``worker.log`` gets 400 KB of numbered lines; the page pages through it by byte
offset (its size shown), finds a line by search and jumps to it, pages through the matches of
a search with 8,000 (Storm's ``nextByteOffset``), and downloads the whole file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.browser.conftest import UiCluster

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

LINE = "browser-logviewer line {:06d} padding padding padding\n"


def _worker_log(ui: UiCluster) -> tuple[str, Path]:
    wait_for(lambda: ui.cluster.worker_records(), 60, message="a worker")
    record = ui.cluster.worker_records()[0]
    return record["worker_id"], (ui.cluster.local / "supervisor" / "workers" /
                                 record["worker_id"] / "worker.log")


def _open_logs(ui: UiCluster, page: Any, worker: str) -> None:
    """The worker's log page, the cluster token given, its first file shown."""
    page.goto(f"{ui.ui_url}/topology/{ui.topology_id}/logs?worker={worker}")
    page.wait_for_selector("#token-dialog[open]")
    page.fill("#token-input", ui.cluster.token())
    page.click("#token-ok")
    page.wait_for_function("() => document.getElementById('page-text').dataset.start")


def _hold_reads(page: Any, fragment: str) -> None:
    """Hold the page's reads of URLs that contain ``fragment``.

    They wait in ``window.heldReads`` until the test answers them, in the order it chooses;
    the other reads (the live tail's, every second) go on as they are.
    """
    page.evaluate("""(fragment) => {
        window.heldReads = [];
        const read = UI.getJson;
        UI.getJson = (url) => url.includes(fragment)
            ? new Promise((answer) => window.heldReads.push({url, answer})) : read(url);
    }""", fragment)


def test_paging_search_and_download(ui_cluster: UiCluster, page: Any, tmp_path: Path) -> None:
    worker, log = _worker_log(ui_cluster)
    with log.open("a") as handle:
        handle.write("".join(LINE.format(n) for n in range(8000)))
    # the page shows its first file, then the test chooses worker.log: the size read below
    # must be that choice's (the log grows between the two loads)
    _open_logs(ui_cluster, page, worker)
    page.evaluate("() => { delete document.getElementById('page-info').dataset.size; }")
    page.select_option("#file-select", label=next(
        o for o in page.eval_on_selector_all("#file-select option", "os => os.map(o => o.text)")
        if o.startswith(f"worker {worker}") and ": worker.log" in o))
    page.wait_for_function("() => +document.getElementById('page-info').dataset.size > 400000")
    size, last_start = page.evaluate("() => [+document.getElementById('page-info').dataset.size,"
                                     " +document.getElementById('page-text').dataset.start]")
    assert last_start == max(0, size - 51_200)
    page.click("#page-prev")
    page.wait_for_function("() => document.getElementById('page-text').dataset.start == "
                           f"'{last_start - 51_200}'")
    grown = int(page.get_attribute("#page-info", "data-size"))  # the worker writes on
    assert grown >= size and f"of {grown:,}" in page.inner_text("#page-info")
    page.fill("#search-input", "line 001234 ")
    page.click("#search-go")
    page.wait_for_selector("#search-results li a")
    assert page.inner_text("#search-status") == '1 match of "line 001234 "'
    page.click("#search-results li a")
    page.wait_for_function("() => document.getElementById('page-text').textContent"
                           ".includes('line 001234 ')")
    # 8,000 matches: the first 100, then the next 100 from where the first page stopped
    page.fill("#search-input", "browser-logviewer line 00")
    page.click("#search-go")
    page.wait_for_function("() => document.getElementById('search-status').dataset.matches"
                           " === '100'")
    assert page.inner_text("#search-status").endswith("; more in 1 file")
    first = page.eval_on_selector_all("#search-results li a", "as => as.map(a => a.text)")
    assert first[-1].endswith(f"@{log.read_bytes().index(LINE.format(99).encode())}")
    page.click(".search-more")
    page.wait_for_function("() => document.getElementById('search-status').dataset.matches"
                           " === '200'")
    links = page.eval_on_selector_all("#search-results li a", "as => as.map(a => a.text)")
    assert links[:100] == first and links[100].endswith(
        f"@{log.read_bytes().index(LINE.format(100).encode())}")
    assert page.locator(".search-more").count() == 1  # still more after 200
    with page.expect_download() as info:
        page.click("#file-download")
    saved = tmp_path / "worker.log"
    info.value.save_as(saved)
    # the worker writes on beside us (a JVM's start-up lines came after ours once, and the
    # download then ended before them): the download is the log's start, with every line
    # this test wrote
    got, now = saved.read_bytes(), log.read_bytes()
    ours_end = now.index(LINE.format(7999).encode()) + len(LINE.format(7999))
    assert len(got) >= ours_end and now.startswith(got)
    page.goto(f"{ui_cluster.ui_url}/logs")  # the daemons' own logs
    page.wait_for_function("() => [...document.getElementById('file-select').options]"
                           ".some(o => o.text.startsWith('supervisor'))")


def test_an_older_page_answering_last_does_not_replace_the_newer(
        ui_cluster: UiCluster, page: Any) -> None:
    """Two loads in flight (the page's own first load and a click): the newer one is shown."""
    worker, _ = _worker_log(ui_cluster)
    _open_logs(ui_cluster, page, worker)
    _hold_reads(page, "/logfile?")
    page.dispatch_event("#file-select", "change")  # the first load, answered last
    page.click("#page-last")  # the newer load (never disabled), answered first
    page.wait_for_function("() => window.heldReads.length === 2")
    page.evaluate("() => window.heldReads[1].answer({start: 0, length: 5, size: 900, "
                  "data: 'first'})")
    page.wait_for_function("() => document.getElementById('page-text').textContent === 'first'")
    # the older answer's continuation runs in the microtasks before the next timer
    page.evaluate("""() => {
        window.heldReads[0].answer({start: 800, length: 100, size: 900, data: "older"});
        return new Promise((done) => setTimeout(done, 0));
    }""")
    assert page.inner_text("#page-text") == "first"
    assert page.get_attribute("#page-text", "data-start") == "0"


def test_an_older_search_answering_last_does_not_replace_the_newer(
        ui_cluster: UiCluster, page: Any) -> None:
    """Two searches in flight: the results of the one typed last stay."""
    worker, _ = _worker_log(ui_cluster)
    _open_logs(ui_cluster, page, worker)
    _hold_reads(page, "/logsearch?")
    for needle in ("first needle", "second needle"):
        page.fill("#search-input", needle)
        page.click("#search-go")
    page.wait_for_function("() => window.heldReads.length === 2")
    page.evaluate("() => window.heldReads[1].answer({matches: [], nextByteOffset: null})")
    page.wait_for_function("() => document.getElementById('search-status').textContent"
                           ".includes('second needle')")
    page.evaluate("""() => {
        window.heldReads[0].answer({matches: [], nextByteOffset: null});
        return new Promise((done) => setTimeout(done, 0));  // after its microtasks
    }""")
    assert page.inner_text("#search-status") == '0 matches of "second needle"'
