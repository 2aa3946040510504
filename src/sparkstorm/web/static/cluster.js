/* The cluster page: summary, Nimbus, topologies (with their health over the last 10 minutes,
resources and Spark UI), supervisors; refreshed every second. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const F = UI.fmt;

  /* "12.5 % failed, 3 errors" in the last 10 minutes, classed by the API's health state */
  function healthCell(t) {
    const h = t.health;
    if (!h) return UI.el("td", {"data-field": "health"}, "");
    const parts = [];
    if (h.failedShare === null || h.failedShare === undefined) parts.push("no trees completed");
    else parts.push(`${F.percent(h.failedShare)} failed`);
    if (h.errors) parts.push(`${F.count(h.errors)} error${h.errors === 1 ? "" : "s"}`);
    /* what an operator must see first: workers failing to start, a stall, restarts... */
    if (t.workerStatus === "FAILING") parts.unshift("workers failing to start");
    else if (t.workerStatus === "LOST") parts.unshift("workers lost");
    else if (t.workerStatus === "STARTING") parts.unshift("starting");
    const troubles = (h.troubles || []).map((x) => x.split(":")[0]);
    return UI.el("td", {"data-field": "health", "data-value": h.state, class: "health-" + h.state,
                        title: [`last 10 minutes: ${F.count(h.acked)} acked, ${F.count(h.failed)} failed`,
                                t.workerStatusDetail || "", ...(h.troubles || [])].filter((x) => x).join("\n")},
                 [...troubles, ...parts].join(", "));
  }

  function sparkCell(t) {
    const url = t.sparkUiUrl ? UI.safeUrl(t.sparkUiUrl) : null;
    if (!url) return UI.el("td", {"data-field": "sparkUiUrl", class: "muted"}, "not available");
    return UI.el("td", {"data-field": "sparkUiUrl"},
      UI.el("a", {href: url, target: "_blank", rel: "noopener noreferrer"}, "Spark UI"));
  }

  async function refresh() {
    const [summary, supervisors, topologies, nimbus] = await Promise.all([
      UI.getJson("/api/v1/cluster/summary"), UI.getJson("/api/v1/supervisor/summary"),
      UI.getJson("/api/v1/topology/summary"),
      UI.getJson("/api/v1/nimbus/summary").catch(() => null)]);
    UI.kvRows($("cluster-summary"), [
      ["stormVersion", summary.stormVersion, "Version"],
      ["supervisors", summary.supervisors, "Supervisors", F.count(summary.supervisors)],
      ["topologies", summary.topologies, "Topologies", F.count(summary.topologies)],
      ["slotsTotal", summary.slotsTotal, "Worker slots", F.count(summary.slotsTotal)],
      ["slotsUsed", summary.slotsUsed, "Slots used", F.count(summary.slotsUsed)],
      ["slotsFree", summary.slotsFree, "Slots free", F.count(summary.slotsFree)],
      ["executorsTotal", summary.executorsTotal, "Executors", F.count(summary.executorsTotal)],
      ["tasksTotal", summary.tasksTotal, "Tasks", F.count(summary.tasksTotal)]]);
    const nimbuses = nimbus && nimbus.nimbuses ? nimbus.nimbuses : null;
    if (nimbuses) {
      UI.fillBody($("nimbus"), nimbuses.map((n) => UI.el("tr", {},
        UI.cell(n, "host"), UI.cell(n, "port"), UI.cell(n, "status"), UI.cell(n, "version"),
        UI.cell(n, "nimbusUpTime", {format: () => F.duration(n.nimbusUpTimeSeconds), title: n.nimbusUpTime}))));
    } else {
      const where = location.hostname;
      UI.kvRows($("nimbus"), [["status", "Leader (answering)"], ["version", summary.stormVersion],
                              ["reached through", "this UI server (" + where + ")"]]);
    }
    UI.fillBody($("topologies"), topologies.topologies.map((t) => UI.el("tr",
      {"data-id": t.id, class: t.health ? "health-" + t.health.state : ""},
      UI.cell(t, "name", {link: "/topology/" + encodeURIComponent(t.id)}), UI.cell(t, "id"),
      UI.cell(t, "owner"), UI.cell(t, "status", {class: "status-" + t.status}), healthCell(t),
      UI.cell(t, "uptime", {format: () => F.duration(t.uptimeSeconds), title: t.uptime}),
      UI.cell(t, "workersTotal", {format: F.count}), UI.cell(t, "executorsTotal", {format: F.count}),
      UI.cell(t, "tasksTotal", {format: F.count}), UI.cell(t, "cpuPercent", {format: F.cpu}),
      UI.cell(t, "memoryMb", {format: F.mb}), sparkCell(t))));
    if (!topologies.topologies.length) {
      UI.fillBody($("topologies"), [UI.el("tr", {}, UI.el("td", {colSpan: 12, class: "muted"},
        "No topologies running"))]);
    }
    UI.fillBody($("supervisors"), supervisors.supervisors.map((s) => UI.el("tr",
      {"data-id": s.id},
      UI.cell(s, "id"), UI.cell(s, "host"), UI.cell(s, "uptime", {format: () => F.duration(s.uptimeSeconds), title: s.uptime}),
      UI.cell(s, "slotsTotal"), UI.cell(s, "slotsUsed"), UI.cell(s, "slotsFree"),
      UI.cell(s, "version"))));
    const conf = $("cluster-configuration");
    if (!conf.dataset.filled) {
      const values = await UI.getJson("/api/v1/cluster/configuration").catch(() => null);
      if (values) {
        UI.kvRows(conf, Object.keys(values).sort().map((k) => {
          const v = values[k];
          return [k, typeof v === "object" && v !== null ? JSON.stringify(v) : v];
        }));
        conf.dataset.filled = "1";
      }
    }
    document.body.dataset.refreshed = String(Date.now());
  }

  UI.poll(refresh, 1000);
})();
