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

  function errorCell(row) {
    const text = row.lastError || "";
    const title = text && row.errorTime ? "at " + UI.isoTime(row.errorTime) +
      (row.errorHost ? " on " + row.errorHost + ":" + row.errorPort : "") : "";
    return UI.cell(row, "lastError", {class: text ? "error" : "", title});
  }

  /* "explicit 3, timeout 1" for a spout row's failuresByCause */
  function causesOf(row) {
    const causes = row.failuresByCause || {};
    return Object.entries(causes).filter(([, n]) => n).map(([c, n]) => `${c} ${n}`).join(", ");
  }

  function renderSummary(t) {
    UI.fillBody($("topology-summary"), [UI.el("tr", {"data-id": t.id},
      UI.cell(t, "name"), UI.cell(t, "id"), UI.cell(t, "owner"),
      UI.cell(t, "status", {class: "status-" + t.status}),
      UI.cell(t, "uptime", {title: t.uptimeSeconds + " s"}), UI.cell(t, "workersTotal"),
      UI.cell(t, "executorsTotal"), UI.cell(t, "tasksTotal"), UI.cell(t, "msgTimeout"))]);
    const wait = $("kill-wait");
    if (wait && !wait.dataset.touched) wait.value = t.msgTimeout;
    UI.fillBody($("topology-stats"), (t.topologyStats || []).map((s) => UI.el("tr",
      {"data-window": s.window, class: String(s.window) === String(t.window) ? "selected" : ""},
      UI.cell(s, "windowPretty"), UI.cell(s, "emitted"), UI.cell(s, "transferred"),
      UI.cell(s, "completeLatency", {num: true}), UI.cell(s, "acked"), UI.cell(s, "failed"))));
  }

  function renderComponents(t) {
    UI.fillBody($("spouts"), t.spouts.map((s) => UI.el("tr", {"data-id": s.spoutId},
      UI.cell(s, "spoutId", {link: componentLink(s.spoutId)}), UI.cell(s, "executors"),
      UI.cell(s, "tasks"), UI.cell(s, "emitted"), UI.cell(s, "transferred"),
      UI.cell(s, "completeLatency", {num: true}), UI.cell(s, "acked"),
      UI.cell(s, "failed", {title: causesOf(s)}), errorCell(s))));
    UI.fillBody($("bolts"), t.bolts.map((b) => UI.el("tr", {"data-id": b.boltId},
      UI.cell(b, "boltId", {link: componentLink(b.boltId)}), UI.cell(b, "executors"),
      UI.cell(b, "tasks"), UI.cell(b, "emitted"), UI.cell(b, "transferred"),
      UI.cell(b, "capacity", {num: true, class: Dag.loadClass(Number(b.capacity))}),
      UI.cell(b, "executeLatency", {num: true}), UI.cell(b, "executed"),
      UI.cell(b, "processLatency", {num: true}), UI.cell(b, "acked"), UI.cell(b, "failed"),
      errorCell(b))));
  }

  function sparkUiCell(w) {
    const url = w.sparkUiUrl ? UI.safeUrl(w.sparkUiUrl) : null;
    if (!url) return UI.el("td", {"data-field": "sparkUiUrl", class: "muted"}, "not available");
    return UI.el("td", {"data-field": "sparkUiUrl"},
      UI.el("a", {href: url, target: "_blank", rel: "noopener noreferrer"}, "Spark UI"));
  }

  function renderWorkers(t) {
    UI.fillBody($("workers"), (t.workers || []).map((w) => UI.el("tr", {"data-port": w.port},
      UI.cell(w, "host"), UI.cell(w, "port"), UI.cell(w, "supervisorId"),
      UI.cell(w, "uptime", {title: w.uptimeSeconds + " s"}), UI.cell(w, "executorsTotal"),
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

  function drawCharts() {
    Charts.drawAll(series, [
      ["chart-emitted", Charts.rate("emitted"), {label: "tuples emitted per second", unit: "/s"}],
      ["chart-acked", Charts.rate("acked"), {label: "tuple trees acked per second", unit: "/s", cls: "ok"}],
      ["chart-failed", Charts.rate("failed"), {label: "tuple trees failed per second", unit: "/s", cls: "bad"}],
      ["chart-latency", Charts.level("completeLatency"), {label: "complete latency (ms)", unit: "ms", cls: "lat", join: true,
        empty: "no tree completed yet"}]]);
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

  async function refresh() {
    const goneMessage = `Topology ${topologyId} no longer exists (killed?).`;
    if (gone) throw new Error(goneMessage);
    const asked = UI.currentWindow();
    let t;
    try {
      t = await UI.getJson(UI.withWindow(api));
    } catch (e) {
      if (e.status === 404) {
        gone = true;
        document.body.dataset.gone = "1";
        throw new Error(goneMessage);
      }
      throw e;
    }
    if (asked !== UI.currentWindow()) return;       // the window changed meanwhile
    latest = t;
    UI.showWindow(t);
    renderSummary(t);
    renderComponents(t);
    renderWorkers(t);
    const failed = (t.spouts || []).reduce((sum, s) => sum + (s.failed || 0), 0);
    UI.renderFailures(t, failed);
    series.merge(t.recentWindows);
    drawCharts();
    if (graph === null) await loadGraph(t); else Dag.update(t);
    document.body.dataset.refreshed = String(Date.now());
  }

  if ($("actions")) {
    Actions.install({topologyId, api, topology: () => latest, graph: () => graph, refresh});
  }
  UI.windowSelect(() => refresh().catch((e) => UI.showError(e.message)));
  drawCharts();
  UI.poll(refresh, 1000);
})();
