/* The topology page: summary, actions, window stats, DAG, failures explained, charts of the
recent windows, spouts, bolts, workers and configuration; refreshed every second. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const topologyId = document.body.dataset.topologyId;
  const api = "/api/v1/topology/" + encodeURIComponent(topologyId);
  const series = new Charts.Series();
  let graph = null, latest = null, gone = false;

  const componentLink = (id) => UI.withWindow(`/topology/${encodeURIComponent(topologyId)}` +
                                              `/component/${encodeURIComponent(id)}`);

  const F = UI.fmt;
  const count = {format: F.count};
  /* a complete latency: none (not "0.000 ms") where nothing was acked, as Storm's "0.000"
  means */
  const completeLatency = (row) => UI.latencyOf(row, "acked");

  /* The exception line of the last error, wrapping, with its time and a link to the log of
  the worker that reported it. */
  function errorCell(row) {
    const line = row.lastErrorLine || row.lastError || "";
    const title = line && row.errorTime ? "at " + UI.isoTime(row.errorTime) +
      (row.errorHost ? " on " + row.errorHost + ":" + row.errorPort : "") : "";
    const td = UI.el("td", {"data-field": "lastError", "data-value": row.lastError || "",
                            class: line ? "error wrap last-error" : "wrap", title});
    if (line) {
      td.append(UI.el("span", {class: "error-line"}, line));
      if (row.errorWorkerLogLink) {
        td.append(" ", UI.el("a", {href: row.errorWorkerLogLink, class: "log-link"}, "log"));
      }
    }
    return td;
  }

  /* "explicit 3, timeout 1" for a spout row's failuresByCause */
  function causesOf(row) {
    const causes = row.failuresByCause || {};
    return Object.entries(causes).filter(([, n]) => n).map(([c, n]) => `${c} ${n}`).join(", ");
  }

  /* The workers' start failure and the current troubles, above everything else: what is
  wrong now, in the API's words (a failing start names the component, its error and log). */
  function renderTroubles(t) {
    const box = $("troubles");
    if (!box) return;
    const lines = [];
    if (t.workerStatus === "FAILING") lines.push(t.workerStatusDetail || "workers failing to start");
    if (t.workerStatus === "LOST") lines.push(t.workerStatusDetail || "workers lost");
    for (const trouble of t.troubles || []) lines.push(trouble);
    const facts = [];
    if (t.executorRestarts) facts.push(`executor restarts ${F.count(t.executorRestarts)}`);
    if (t.rollbacks) facts.push(`rollbacks ${F.count(t.rollbacks)}`);
    if (t.checkpointAgeSecs !== null && t.checkpointAgeSecs !== undefined) {
      facts.push(`checkpoint age ${F.duration(t.checkpointAgeSecs)}`);
    }
    box.replaceChildren(...lines.map((line) => UI.el("li", {class: "error"}, line)),
                        ...facts.map((fact) => UI.el("li", {class: "muted"}, fact)));
    box.hidden = !lines.length && !facts.length;
    box.dataset.troubles = String(lines.length);
  }

  function renderSummary(t) {
    UI.fillBody($("topology-summary"), [UI.el("tr", {"data-id": t.id},
      UI.cell(t, "name"), UI.cell(t, "id"), UI.cell(t, "owner"),
      UI.cell(t, "status", {class: "status-" + t.status}),
      UI.cell(t, "uptime", {format: () => F.duration(t.uptimeSeconds), title: t.uptime}),
      UI.cell(t, "workersTotal", count), UI.cell(t, "executorsTotal", count),
      UI.cell(t, "tasksTotal", count),
      UI.cell(t, "msgTimeout", {format: (v) => F.duration(v)}),
      UI.cell(t, "reliability"),
      UI.cell(t, "committedWindow", {format: (v) => `${v} (every ${t.checkpointWindows})`,
                                     empty: t.checkpointWindows ? "none yet" : "off"}),
      UI.cell(t, "workerStatus", {class: "worker-" + t.workerStatus,
                                  title: t.workerStatusDetail || ""}))]);
    renderTroubles(t);
    const wait = $("kill-wait");
    if (wait && !wait.dataset.touched) wait.value = t.msgTimeout;
    UI.fillBody($("topology-stats"), (t.topologyStats || []).map((s) => UI.el("tr",
      {"data-window": s.window, class: String(s.window) === String(t.window) ? "selected" : ""},
      UI.cell(s, "windowPretty", {format: F.window}), UI.cell(s, "emitted", count),
      UI.cell(s, "transferred", count), UI.cell(s, "completeLatency", completeLatency(s)),
      UI.cell(s, "acked", count), UI.cell(s, "failed", count))));
  }

  function renderComponents(t) {
    UI.fillBody($("spouts"), t.spouts.map((s) => UI.el("tr", {"data-id": s.spoutId},
      UI.cell(s, "spoutId", {link: componentLink(s.spoutId)}), UI.cell(s, "executors"),
      UI.cell(s, "tasks"), UI.cell(s, "emitted", count), UI.cell(s, "transferred", count),
      UI.cell(s, "completeLatency", completeLatency(s)), UI.cell(s, "acked", count),
      UI.cell(s, "failed", {format: F.count, title: causesOf(s)}), errorCell(s))));
    UI.fillBody($("bolts"), t.bolts.map((b) => UI.el("tr", {"data-id": b.boltId},
      UI.cell(b, "boltId", {link: componentLink(b.boltId)}), UI.cell(b, "executors"),
      UI.cell(b, "tasks"), UI.cell(b, "emitted", count), UI.cell(b, "transferred", count),
      UI.cell(b, "capacity", {format: F.capacity, num: true, class: Dag.loadClass(Number(b.capacity))}),
      UI.cell(b, "executeLatency", UI.latencyOf(b, "executed")), UI.cell(b, "executed", count),
      UI.cell(b, "processLatency", UI.latencyOf(b, "executed")), UI.cell(b, "acked", count), UI.cell(b, "failed", count),
      errorCell(b))));
  }

  function sparkUiCell(w) {
    const url = w.sparkUiUrl ? UI.safeUrl(w.sparkUiUrl) : null;
    if (!url) return UI.el("td", {"data-field": "sparkUiUrl", class: "muted"}, "not available");
    return UI.el("td", {"data-field": "sparkUiUrl"},
      UI.el("a", {href: url, target: "_blank", rel: "noopener noreferrer"}, "Spark UI"));
  }

  function logCell(link) {
    return UI.el("td", {"data-field": "workerLogLink"},
      link ? UI.el("a", {href: link, class: "log-link"}, "log") : "");
  }

  function renderWorkers(t) {
    UI.fillBody($("workers"), (t.workers || []).map((w) => UI.el("tr", {"data-port": w.port},
      UI.cell(w, "host"), UI.cell(w, "port"), UI.cell(w, "supervisorId"),
      UI.cell(w, "status", {class: "worker-" + w.status}),
      UI.cell(w, "uptime", {format: () => F.duration(w.uptimeSeconds), title: w.uptime}),
      UI.cell(w, "executorsTotal"), UI.cell(w, "cpuPercent", {format: F.cpu, num: true}),
      UI.cell(w, "memoryMb", {format: F.mb, num: true}), logCell(w.workerLogLink),
      sparkUiCell(w))));
    const conf = $("configuration");
    if (conf && !conf.dataset.filled && t.configuration) {
      UI.kvRows(conf, Object.keys(t.configuration).sort().map((k) => {
        const v = t.configuration[k];
        return [k, typeof v === "object" && v !== null ? JSON.stringify(v) : v];
      }));
      conf.dataset.filled = "1";
    }
  }

  /* Window lengths against topology.window.ms: why complete latency is what it is. */
  function renderWindows(t) {
    const box = $("windows");
    if (!box) return;
    const recent = (t.recentWindows || []).filter((w) => w.seconds > 0);
    const asked = Number((t.configuration || {})["topology.window.ms"]) || null;
    const lengths = recent.slice(-20).map((w) => w.seconds * 1000);
    const mean = lengths.length ? lengths.reduce((a, b) => a + b, 0) / lengths.length : null;
    const last = lengths.length ? lengths[lengths.length - 1] : null;
    const longest = lengths.length ? Math.max(...lengths) : null;
    const stats = (t.topologyStats || []).find((s) => String(s.window) === String(t.window));
    const complete = stats ? Number(stats.completeLatency) : null;
    const pending = (t.configuration || {})["topology.max.spout.pending"];
    const rows = [
      ["topology.window.ms", asked, "Window length asked", asked === null ? "" : F.ms(asked)],
      ["lastWindowMs", last, "Last window took", F.ms(last)],
      ["meanWindowMs", mean, `Mean of the last ${lengths.length} windows`,
       mean === null ? "" : `${F.ms(mean)}` + (asked ? ` (${(mean / asked).toFixed(1)} × asked)` : "")],
      ["longestWindowMs", longest, "Longest of them", F.ms(longest)],
      ["completeLatencyWindows", complete && mean ? complete / mean : null,
       "Complete latency in windows",
       complete && mean ? `${F.ms(complete)} ≈ ${(complete / mean).toFixed(1)} windows ` +
         "(a tuple waits in its spout's buffer for the next window, then crosses one per DAG level)" : ""],
      ...(t.spouts || []).map((sp) => {
        const last = recent.length ? (recent[recent.length - 1].components || {})[sp.spoutId] : null;
        const bound = sp.bufferBound || (last && last.buffer_bound) || 0;
        const now = last ? last.buffered || 0 : null;
        const text = bound ? `fullest ${F.count(sp.bufferedMax)} of ${F.count(bound)} ` +
          `(${F.percent(sp.bufferedMax / bound)}) in the selected window` +
          (now === null ? "" : `; ${F.count(now)} at the last window`) +
          (sp.bufferedMax >= bound ? " — full: the spout waited for windows" : "") : "not reported";
        return [`buffer.${sp.spoutId}`, sp.bufferedMax, `Spout ${sp.spoutId} buffer`, text];
      }),
      ["waitInBuffer", mean, "A tuple waits in its spout's buffer",
       mean === null ? "" : `up to ${F.ms(mean)} (one window), about ${F.ms(mean / 2)} on average`],
      ["topology.max.spout.pending", pending === undefined ? null : pending,
       "Spout pending bound", pending === null || pending === undefined ? "none" : F.count(pending)],
      ["topology.spout.buffer.size", (t.configuration || {})["topology.spout.buffer.size"],
       "Spout buffer bound", F.count((t.configuration || {})["topology.spout.buffer.size"])]];
    UI.kvRows(box, rows);
  }

  function markGone() {
    for (const id of ["spouts", "bolts", "workers", "topology-stats"]) {
      const table = $(id);
      const cols = table.tHead.rows[0].cells.length;
      UI.fillBody(table, [UI.el("tr", {class: "gone"}, UI.el("td", {colSpan: cols, class: "muted"},
        "the topology was killed: no figures"))]);
    }
    for (const id of ["failures-by-cause", "failure-reasons", "windows", "log-levels"]) {
      if ($(id)) UI.fillBody($(id), []);
    }
    for (const label of document.querySelectorAll("#dag-svg text.load, #dag-svg tspan.rate")) {
      label.textContent = "";
    }
    for (const chart of document.querySelectorAll(".charts figure.chart > div")) {
      chart.replaceChildren(UI.el("p", {class: "muted gone"}, "the topology was killed"));
    }
    setActions("KILLED");
  }

  /* Buttons that cannot apply in a status are disabled (all of them once KILLED). */
  function setActions(status) {
    Actions.setState(status);
  }

  /* The logger levels set now (Storm's logconfig): read with each refresh, since they time
  out. A failed read leaves the table as it was (the topology's own read says why). */
  async function loadLogLevels() {
    const sent = Actions.levelsSent();
    try {
      Actions.showLogLevels(await UI.getJson(`${api}/logconfig`), sent);
    } catch (e) { /* shown by the next refresh */ }
  }

  /* The Spark UI of the topology's worker (its jobs are the windows), if it has one. */
  function sparkUi() {
    const url = latest && latest.workers && latest.workers.length ? latest.workers[0].sparkUiUrl : null;
    return url ? UI.safeUrl(url) : null;
  }

  function drawCharts() {
    Charts.drawAll(series, [
      ["chart-emitted", Charts.rate("emitted"), {label: "tuples emitted per second", unit: "/s"}],
      ["chart-acked", Charts.rate("acked"), {label: "tuple trees acked per second", unit: "/s", cls: "ok"}],
      ["chart-failed", Charts.rate("failed"), {label: "tuple trees failed per second", unit: "/s", cls: "bad"}],
      ["chart-latency", Charts.level("completeLatency"), {label: "complete latency (ms)", unit: "ms", cls: "lat", join: true,
        empty: "no tree completed yet"}]], sparkUi());
  }

  async function loadGraph(t) {
    try {
      graph = await UI.getJson(`/ui/topology/${encodeURIComponent(topologyId)}/graph`);
      Dag.draw($("dag"), graph);
      Dag.update(t);
    } catch (e) {
      $("dag").replaceChildren(UI.el("p", {class: "error"}, "graph unavailable: " + e.message));
      graph = null;
    }
  }

  let refreshes = 0;  // each refresh's number: only the newest one's answer is shown
  async function refresh() {
    const goneMessage = `Topology ${topologyId} no longer exists (killed?).`;
    if (gone) throw new Error(goneMessage);
    const asked = UI.currentWindow();
    const mine = ++refreshes;
    let t;
    try {
      t = await UI.getJson(UI.withWindow(api));
    } catch (e) {
      if (e.status === 404) {
        gone = true;
        document.body.dataset.gone = "1";
        markGone();
        throw new Error(goneMessage);
      }
      throw e;
    }
    // the window changed meanwhile, or a newer refresh began (an action's, beside the poll):
    // an older answer would show the state before the action
    if (asked !== UI.currentWindow() || mine !== refreshes) return;
    latest = t;
    UI.showWindow(t);
    renderSummary(t);
    renderComponents(t);
    renderWorkers(t);
    renderWindows(t);
    setActions(t.status);
    Actions.showDebug(t);
    Actions.suggestLoggers(t);
    const levels = loadLogLevels();
    const failed = (t.spouts || []).reduce((sum, s) => sum + (s.failed || 0), 0);
    UI.renderFailures(t, failed);
    series.merge(t.recentWindows);
    drawCharts();
    if (graph === null) await loadGraph(t); else Dag.update(t);
    await levels;
    document.body.dataset.refreshed = String(Date.now());
  }

  if ($("actions")) {
    Actions.install({topologyId, api, topology: () => latest, graph: () => graph, refresh});
  }
  UI.windowSelect(() => refresh().catch((e) => UI.showError(e.message)));
  drawCharts();
  UI.poll(refresh, 1000);
})();
