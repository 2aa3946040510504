/* The cluster page: summary, Nimbus, topologies, supervisors; refreshed every second. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);

  async function refresh() {
    const [summary, supervisors, topologies, nimbus] = await Promise.all([
      UI.getJson("/api/v1/cluster/summary"), UI.getJson("/api/v1/supervisor/summary"),
      UI.getJson("/api/v1/topology/summary"),
      UI.getJson("/api/v1/nimbus/summary").catch(() => null)]);
    UI.kvRows($("cluster-summary"), [
      ["stormVersion", summary.stormVersion], ["supervisors", summary.supervisors],
      ["topologies", summary.topologies], ["slotsTotal", summary.slotsTotal],
      ["slotsUsed", summary.slotsUsed], ["slotsFree", summary.slotsFree],
      ["executorsTotal", summary.executorsTotal], ["tasksTotal", summary.tasksTotal]]);
    const nimbuses = nimbus && nimbus.nimbuses ? nimbus.nimbuses : null;
    if (nimbuses) {
      UI.fillBody($("nimbus"), nimbuses.map((n) => UI.el("tr", {},
        UI.cell(n, "host"), UI.cell(n, "port"), UI.cell(n, "status"), UI.cell(n, "version"),
        UI.cell(n, "nimbusUpTime"))));
    } else {
      const where = location.hostname;
      UI.kvRows($("nimbus"), [["status", "Leader (answering)"], ["version", summary.stormVersion],
                              ["reached through", "this UI server (" + where + ")"]]);
    }
    UI.fillBody($("topologies"), topologies.topologies.map((t) => UI.el("tr",
      {"data-id": t.id},
      UI.cell(t, "name", {link: "/topology/" + encodeURIComponent(t.id)}), UI.cell(t, "id"),
      UI.cell(t, "owner"), UI.cell(t, "status", {class: "status-" + t.status}),
      UI.cell(t, "uptime", {title: t.uptimeSeconds + " s"}), UI.cell(t, "workersTotal"),
      UI.cell(t, "executorsTotal"), UI.cell(t, "tasksTotal"))));
    if (!topologies.topologies.length) {
      UI.fillBody($("topologies"), [UI.el("tr", {}, UI.el("td", {colSpan: 8, class: "muted"},
        "No topologies running"))]);
    }
    UI.fillBody($("supervisors"), supervisors.supervisors.map((s) => UI.el("tr",
      {"data-id": s.id},
      UI.cell(s, "id"), UI.cell(s, "host"), UI.cell(s, "uptime", {title: s.uptimeSeconds + " s"}),
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
