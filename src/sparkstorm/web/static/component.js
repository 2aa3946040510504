/* The component page: window stats, debug sampling (actions.js), charts of the recent
windows, failures explained (spouts), input and output stats, executors and errors; refreshed
every second. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const topologyId = document.body.dataset.topologyId;
  const component = document.body.dataset.component;
  const spout = document.body.dataset.kind === "spout";
  const api = `/api/v1/topology/${encodeURIComponent(topologyId)}/component/${encodeURIComponent(component)}`;
  const series = new Charts.Series();
  let gone = false;

  const F = UI.fmt;
  const cap = {num: true, format: F.capacity};
  /* latencies: "–" where the row counted nothing they are of (UI.latencyOf) */
  const acked = (row) => UI.latencyOf(row, "acked");
  const executed = (row) => UI.latencyOf(row, "executed");
  const SPOUT_STATS = ["emitted", "transferred", ["completeLatency", acked], "acked", "failed"];
  const BOLT_STATS = ["emitted", "transferred", ["executeLatency", executed], "executed",
                      ["processLatency", executed], "acked", "failed", ["capacity", cap]];

  /* counts get thousands separators; [field, options] pairs their own format (options, or
  a function of the row that gives them) */
  const cells = (row, fields) => fields.map((f) => Array.isArray(f) ?
    UI.cell(row, f[0], typeof f[1] === "function" ? f[1](row) : f[1]) :
    UI.cell(row, f, {format: F.count}));
  const logLink = (link) => UI.el("td", {"data-field": "workerLogLink"},
    link ? UI.el("a", {href: link, class: "log-link"}, "log") : "");

  function renderSummary(c) {
    UI.fillBody($("component-summary"), [UI.el("tr", {"data-id": c.id},
      UI.cell(c, "id"), UI.cell(c, "name", {link: UI.withWindow(`/topology/${encodeURIComponent(topologyId)}`)}),
      UI.cell(c, "componentType"), UI.cell(c, "executors"), UI.cell(c, "tasks"),
      UI.cell(c, "topologyStatus", {class: "status-" + c.topologyStatus}))]);
    const rows = (spout ? c.spoutSummary : c.boltStats) || [];
    UI.fillBody($("component-stats"), rows.map((s) => UI.el("tr",
      {"data-window": s.window, class: String(s.window) === String(c.window) ? "selected" : ""},
      UI.cell(s, "windowPretty", {format: F.window}), ...cells(s, spout ? SPOUT_STATS : BOLT_STATS))));
  }

  function renderStreams(c) {
    if (spout) {
      UI.fillBody($("output-stats"), (c.outputStats || []).map((s) => UI.el("tr", {"data-stream": s.stream},
        UI.cell(s, "stream"), ...cells(s, SPOUT_STATS))));
      return;
    }
    UI.fillBody($("input-stats"), (c.inputStats || []).map((s) => UI.el("tr",
      {"data-source": s.component, "data-stream": s.stream},
      UI.cell(s, "component", {link: UI.withWindow(`/topology/${encodeURIComponent(topologyId)}/component/` +
                                                   encodeURIComponent(s.component))}),
      UI.cell(s, "stream"), UI.cell(s, "executeLatency", executed(s)), UI.cell(s, "executed", {format: F.count}),
      UI.cell(s, "processLatency", executed(s)), UI.cell(s, "acked", {format: F.count}), UI.cell(s, "failed", {format: F.count}))));
    UI.fillBody($("output-stats"), (c.outputStats || []).map((s) => UI.el("tr", {"data-stream": s.stream},
      UI.cell(s, "stream"), UI.cell(s, "emitted", {format: F.count}), UI.cell(s, "transferred", {format: F.count}))));
  }

  function renderExecutors(c) {
    const fields = spout ? ["emitted", "transferred", ["completeLatency", acked], "acked", "failed"] :
      ["emitted", "transferred", ["capacity", cap], ["executeLatency", executed], "executed",
       ["processLatency", executed], "acked", "failed"];
    UI.fillBody($("executors"), (c.executorStats || []).map((e) => UI.el("tr", {"data-id": e.id},
      UI.cell(e, "id"), UI.cell(e, "host"), UI.cell(e, "port"),
      UI.cell(e, "uptime", {format: () => F.duration(e.uptimeSeconds), title: e.uptime}),
      UI.cell(e, "cpuPercent", {format: F.cpu, num: true}),
      UI.cell(e, "memoryMb", {format: F.mb, num: true}), logLink(e.workerLogLink),
      ...cells(e, fields))));
    const errors = c.componentErrors || [];
    UI.fillBody($("errors"), errors.length ? [...errors].reverse().map((e) => UI.el("tr",
      {"data-time": e.errorTime},
      UI.el("td", {"data-field": "errorTime", "data-value": e.errorTime,
                   title: `${F.duration(e.errorLapsedSecs)} ago`}, UI.isoTime(e.errorTime)),
      UI.cell(e, "errorHost"), UI.cell(e, "errorPort"), logLink(e.errorWorkerLogLink),
      UI.el("td", {"data-field": "error", class: "error wrap"}, UI.el("pre", {}, e.error)))) :
      [UI.el("tr", {}, UI.el("td", {colSpan: 5, class: "muted"}, "no errors reported"))]);
  }

  /* componentMetrics: task -> metric -> row -> column -> value (a Kafka spout's kafkaOffset:
  partition -> offsets and lag); one table per metric, a row per task and row name */
  function renderMetrics(c) {
    const byTask = c.componentMetrics || {};
    const tables = {};
    for (const [task, metrics] of Object.entries(byTask)) {
      for (const [metric, rows] of Object.entries(metrics || {})) {
        const list = tables[metric] || (tables[metric] = []);
        const entries = rows && typeof rows === "object" ? Object.entries(rows) : [["", rows]];
        for (const [row, values] of entries) {
          list.push({task, row, values: values && typeof values === "object" ? values : {value: values}});
        }
      }
    }
    const names = Object.keys(tables).sort();
    $("metrics-box").hidden = !names.length;
    $("component-metrics").replaceChildren(...names.map((metric) => {
      const columns = [...new Set(tables[metric].flatMap((r) => Object.keys(r.values)))];
      const head = UI.el("tr", {}, ...["Task", "Name", ...columns].map((h) => UI.el("th", {}, h)));
      const body = tables[metric].map((r) => UI.el("tr", {"data-task": r.task, "data-name": r.row},
        UI.el("td", {}, r.task), UI.el("td", {}, r.row),
        ...columns.map((k) => UI.el("td", {"data-field": k, class: "num"},
          r.values[k] === null || r.values[k] === undefined ? "" : String(r.values[k])))));
      return UI.el("table", {"data-metric": metric}, UI.el("caption", {}, metric),
        UI.el("thead", {}, head), UI.el("tbody", {}, ...body));
    }));
  }

  function drawCharts() {
    Charts.drawAll(series, [
      ["chart-emitted", Charts.rate("emitted"), {label: "tuples emitted per second", unit: "/s"}],
      ["chart-acked", Charts.rate("acked"), {label: "acked per second", unit: "/s", cls: "ok"}],
      ["chart-executed", Charts.rate("executed"), {label: "tuples executed per second", unit: "/s", cls: "ok"}],
      ["chart-failed", Charts.rate("failed"), {label: "failed per second", unit: "/s", cls: "bad"}],
      ["chart-latency", Charts.level(spout ? "completeLatency" : "executeLatency"),
       {label: spout ? "complete latency (ms)" : "execute latency (ms)", unit: "ms", cls: "lat", join: true,
        empty: "no latency yet"}]]);
  }

  let refreshes = 0;  // each refresh's number: only the newest one's answer is shown
  async function refresh() {
    const goneMessage = `Topology ${topologyId} or its component ${component} no longer exists.`;
    if (gone) throw new Error(goneMessage);
    const asked = UI.currentWindow();
    const mine = ++refreshes;
    let c;
    try {
      c = await UI.getJson(UI.withWindow(api));
    } catch (e) {
      if (e.status === 404) {
        gone = true;
        document.body.dataset.gone = "1";
        Actions.setState("GONE");
        throw new Error(goneMessage);
      }
      throw e;
    }
    // the window changed meanwhile, or a newer refresh began (an action's, beside the poll):
    // an older answer would show the state before the action
    if (asked !== UI.currentWindow() || mine !== refreshes) return;
    UI.showWindow(c);
    Actions.setState(c.topologyStatus);
    Actions.showDebug(c);
    renderSummary(c);
    renderStreams(c);
    renderExecutors(c);
    renderMetrics(c);
    if (spout) {
      const rows = (c.spoutSummary || []).filter((s) => String(s.window) === String(c.window));
      UI.renderFailures(c, rows.length ? rows[0].failed : 0);
    }
    series.merge(c.recentWindows);
    drawCharts();
    document.body.dataset.refreshed = String(Date.now());
  }

  if ($("actions")) Actions.install({topologyId, component, api, refresh});
  UI.windowSelect(() => refresh().catch((e) => UI.showError(e.message)));
  drawCharts();
  UI.poll(refresh, 1000);
})();
