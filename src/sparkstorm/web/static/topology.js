/* The topology page: summary, actions, DAG, live acked/s chart, spouts, bolts, workers. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const topologyId = document.body.dataset.topologyId;
  const api = "/api/v1/topology/" + encodeURIComponent(topologyId);
  const MAX_SAMPLES = 60;
  const samples = [];        // {t: heartbeat secs, acked: total acked, rate: acked/s}
  let lastBeat = null;
  let graph = null;
  let gone = false;

  /* ---- tables ------------------------------------------------------------------------- */

  function errorCell(row) {
    const text = row.lastError || "";
    const title = text && row.errorTime ? "at " + new Date(row.errorTime * 1000).toISOString() +
      (row.errorHost ? " on " + row.errorHost + ":" + row.errorPort : "") : "";
    return UI.cell(row, "lastError", {class: text ? "error" : "", title});
  }

  function render(t) {
    UI.fillBody($("topology-summary"), [UI.el("tr", {"data-id": t.id},
      UI.cell(t, "name"), UI.cell(t, "id"), UI.cell(t, "owner"),
      UI.cell(t, "status", {class: "status-" + t.status}),
      UI.cell(t, "uptime", {title: t.uptimeSeconds + " s"}), UI.cell(t, "workersTotal"),
      UI.cell(t, "executorsTotal"), UI.cell(t, "tasksTotal"), UI.cell(t, "msgTimeout"))]);
    const wait = $("kill-wait");
    if (wait && !wait.dataset.touched) wait.value = t.msgTimeout;
    UI.fillBody($("topology-stats"), (t.topologyStats || []).map((s) => UI.el("tr",
      {"data-window": s.window},
      UI.cell(s, "windowPretty"), UI.cell(s, "emitted"), UI.cell(s, "transferred"),
      UI.cell(s, "completeLatency", {num: true}), UI.cell(s, "acked"), UI.cell(s, "failed"))));
    UI.fillBody($("spouts"), t.spouts.map((s) => UI.el("tr", {"data-id": s.spoutId},
      UI.cell(s, "spoutId"), UI.cell(s, "executors"), UI.cell(s, "tasks"), UI.cell(s, "emitted"),
      UI.cell(s, "transferred"), UI.cell(s, "completeLatency", {num: true}), UI.cell(s, "acked"),
      UI.cell(s, "failed"), errorCell(s))));
    UI.fillBody($("bolts"), t.bolts.map((b) => UI.el("tr", {"data-id": b.boltId},
      UI.cell(b, "boltId"), UI.cell(b, "executors"), UI.cell(b, "tasks"), UI.cell(b, "emitted"),
      UI.cell(b, "transferred"), UI.cell(b, "capacity", {num: true}),
      UI.cell(b, "executeLatency", {num: true}), UI.cell(b, "executed"),
      UI.cell(b, "processLatency", {num: true}), UI.cell(b, "acked"), UI.cell(b, "failed"),
      errorCell(b))));
    UI.fillBody($("workers"), (t.workers || []).map((w) => UI.el("tr", {},
      UI.cell(w, "host"), UI.cell(w, "port"), UI.cell(w, "supervisorId"),
      UI.cell(w, "uptime", {title: w.uptimeSeconds + " s"}), UI.cell(w, "executorsTotal"))));
    const conf = $("configuration");
    if (conf && !conf.dataset.filled && t.configuration) {
      UI.kvRows(conf, Object.keys(t.configuration).sort().map((k) => {
        const v = t.configuration[k];
        return [k, typeof v === "object" && v !== null ? JSON.stringify(v) : v];
      }));
      conf.dataset.filled = "1";
    }
  }

  /* ---- live chart ---------------------------------------------------------------------- */

  function sample(t) {
    const beats = (t.workers || []).map((w) => w.lastHeartbeatSecs).filter((x) => x);
    const beat = beats.length ? Math.max(...beats) : Date.now() / 1000;
    if (beat === lastBeat) return;                  // no new heartbeat: nothing new to plot
    lastBeat = beat;
    const acked = t.topologyStats && t.topologyStats.length ? t.topologyStats[0].acked :
      t.spouts.reduce((sum, s) => sum + s.acked, 0);
    const previous = samples[samples.length - 1];
    let rate = 0;
    if (previous && beat > previous.t) rate = Math.max(0, acked - previous.acked) / (beat - previous.t);
    samples.push({t: beat, acked, rate});
    while (samples.length > MAX_SAMPLES) samples.shift();
    drawChart();
  }

  function niceMax(value) {
    if (value <= 1) return 1;
    const power = Math.pow(10, Math.floor(Math.log10(value)));
    for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
    return 10 * power;
  }

  function drawChart() {
    const W = 520, H = 230, L = 48, R = 12, T = 14, B = 30;
    const last = samples[samples.length - 1];
    const svg = UI.svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", id: "acked-chart",
      "aria-label": "acked tuples per second",
      "data-samples": samples.length, "data-last-rate": last ? last.rate.toFixed(3) : "0",
      "data-last-acked": last ? last.acked : 0,
      "data-max-rate": Math.max(0, ...samples.map((s) => s.rate)).toFixed(3)});
    const top = niceMax(Math.max(1, ...samples.map((s) => s.rate)));
    const x = (i) => L + (W - L - R) * (MAX_SAMPLES <= 1 ? 0 : i / (MAX_SAMPLES - 1));
    const y = (v) => H - B - (H - T - B) * (v / top);
    for (const f of [0, 0.5, 1]) {
      svg.append(UI.svg("line", {class: f ? "grid" : "axis", x1: L, x2: W - R, y1: y(top * f), y2: y(top * f)}));
      svg.append(UI.svg("text", {x: L - 6, y: y(top * f) + 4, "text-anchor": "end"},
        String(+(top * f).toFixed(2))));
    }
    svg.append(UI.svg("line", {class: "axis", x1: L, x2: L, y1: T, y2: H - B}));
    const offset = MAX_SAMPLES - samples.length;     // newest point on the right edge
    const points = samples.map((s, i) => `${x(offset + i).toFixed(1)},${y(s.rate).toFixed(1)}`);
    if (points.length) svg.append(UI.svg("polyline", {class: "line", points: points.join(" ")}));
    samples.forEach((s, i) => svg.append(UI.svg("circle", {class: "dot", r: 2.5,
      cx: x(offset + i).toFixed(1), cy: y(s.rate).toFixed(1), "data-rate": s.rate.toFixed(3),
      "data-acked": s.acked})));
    svg.append(UI.svg("text", {x: L, y: H - 8}, `${samples.length} heartbeats`));
    svg.append(UI.svg("text", {x: W - R, y: H - 8, "text-anchor": "end"},
      last ? `now ${last.rate.toFixed(1)} acked/s, ${last.acked} acked in all` : "waiting for heartbeats"));
    $("chart").replaceChildren(svg);
  }

  /* ---- DAG ----------------------------------------------------------------------------- */

  function layers(g) {
    const level = Object.fromEntries(g.nodes.map((n) => [n.id, 0]));
    for (let round = 0; round < g.nodes.length; round++) {   // longest path; cycles stop here
      let changed = false;
      for (const e of g.edges) {
        if (e.source === e.target || !(e.source in level) || !(e.target in level)) continue;
        if (level[e.target] < level[e.source] + 1) { level[e.target] = level[e.source] + 1; changed = true; }
      }
      if (!changed) break;
    }
    return level;
  }

  function drawDag(g, t) {
    const NW = 150, NH = 58, GX = 110, GY = 34, PAD = 20;
    const level = layers(g);
    const columns = [];
    for (const n of g.nodes) (columns[level[n.id]] = columns[level[n.id]] || []).push(n);
    const tallest = Math.max(1, ...columns.map((c) => (c || []).length));
    const W = PAD * 2 + columns.length * NW + (columns.length - 1) * GX;
    const H = PAD * 2 + tallest * NH + (tallest - 1) * GY + 20;
    const pos = {};
    columns.forEach((col, c) => (col || []).forEach((n, r) => {
      const offset = (tallest - col.length) * (NH + GY) / 2;
      pos[n.id] = {x: PAD + c * (NW + GX), y: PAD + 10 + offset + r * (NH + GY)};
    }));
    const svg = UI.svg("svg", {viewBox: `0 0 ${W} ${H}`, id: "dag-svg", role: "img",
      "aria-label": "topology graph", "data-nodes": g.nodes.length, "data-edges": g.edges.length});
    const defs = UI.svg("defs");
    const marker = UI.svg("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"});
    marker.append(UI.svg("path", {d: "M0,0 L10,5 L0,10 z", class: "arrow"}));
    defs.append(marker);
    svg.append(defs);
    const pairCount = {};
    for (const e of g.edges) {
      const a = pos[e.source], b = pos[e.target];
      if (!a || !b) continue;
      const key = e.source + "->" + e.target;
      const k = pairCount[key] = (pairCount[key] || 0) + 1;
      const group = UI.svg("g", {class: "edge", "data-source": e.source, "data-target": e.target,
        "data-stream": e.stream, "data-grouping": e.grouping});
      let d, lx, ly;
      if (level[e.target] > level[e.source]) {
        const x1 = a.x + NW, y1 = a.y + NH / 2, x2 = b.x, y2 = b.y + NH / 2;
        const mx = (x1 + x2) / 2;
        d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
        lx = mx; ly = (y1 + y2) / 2 - 6 + (k - 1) * 14;
      } else {                                   // back edge or self loop: arc below
        const x1 = a.x + NW / 2, y1 = a.y + NH, x2 = b.x + NW / 2, y2 = b.y + NH;
        const dip = Math.max(y1, y2) + 26 + k * 8;
        d = `M${x1},${y1} C${x1 + 40},${dip} ${x2 - 40},${dip} ${x2},${y2}`;
        lx = (x1 + x2) / 2; ly = dip - 2;
      }
      group.append(UI.svg("path", {d, "marker-end": "url(#arrow)"}));
      const label = e.stream === "default" ? e.grouping : `${e.stream}: ${e.grouping}`;
      group.append(UI.svg("text", {x: lx, y: ly, "text-anchor": "middle", class: "edge-label"}, label));
      group.append(UI.svg("title", {}, `${e.source} → ${e.target}, stream ${e.stream}, ${e.grouping}`));
      svg.append(group);
    }
    for (const n of g.nodes) {
      const p = pos[n.id];
      const group = UI.svg("g", {class: "node " + n.kind, "data-component": n.id,
        transform: `translate(${p.x},${p.y})`});
      group.append(UI.svg("rect", {width: NW, height: NH, rx: 6}));
      group.append(UI.svg("text", {x: 10, y: 19, class: "name"}, n.id));
      group.append(UI.svg("text", {x: 10, y: 35}, `${n.kind} ×${n.executors}`));
      group.append(UI.svg("text", {x: 10, y: 50, class: "load", "data-component": n.id}, ""));
      svg.append(group);
    }
    $("dag").replaceChildren(svg);
    updateDag(t);
  }

  function updateDag(t) {
    if (!graph || !t) return;
    const load = {};
    for (const s of t.spouts) load[s.spoutId] = `emitted ${s.emitted}, acked ${s.acked}`;
    for (const b of t.bolts) load[b.boltId] = `executed ${b.executed}`;
    for (const text of document.querySelectorAll("#dag-svg text.load")) {
      text.textContent = load[text.dataset.component] || "";
    }
  }

  async function loadGraph(t) {
    try {
      graph = await UI.getJson(`/ui/topology/${encodeURIComponent(topologyId)}/graph`);
      drawDag(graph, t);
    } catch (e) {
      $("dag").replaceChildren(UI.el("p", {class: "error"}, "graph unavailable: " + e.message));
      graph = null;
    }
  }

  /* ---- actions ------------------------------------------------------------------------- */

  function say(text, bad) {
    const status = $("action-status");
    status.textContent = text;
    status.classList.toggle("bad", !!bad);
    status.dataset.result = bad ? "refused" : "ok";
  }

  function askToken(why) {
    const dialog = $("token-dialog"), input = $("token-input");
    input.value = "";
    $("token-error").textContent = why || "";
    $("token-error").hidden = !why;
    return new Promise((resolve) => {
      const done = (value) => {
        $("token-form").onsubmit = null; $("token-cancel").onclick = null; dialog.onclose = null;
        if (dialog.open) dialog.close();
        resolve(value);
      };
      $("token-form").onsubmit = (event) => { event.preventDefault(); done(input.value.trim() || null); };
      $("token-cancel").onclick = () => done(null);
      dialog.onclose = () => done(null);
      dialog.showModal();
      input.focus();
    });
  }

  async function act(action) {
    let path = `${api}/${action}`;
    let question = `${action[0].toUpperCase() + action.slice(1)} topology ${topologyId}?`;
    if (action === "kill") {
      const wait = Math.max(0, parseInt($("kill-wait").value, 10) || 0);
      path += `/${wait}`;
      question = `Kill topology ${topologyId}? Its spouts are deactivated, and after ${wait} s ` +
        "its workers are stopped. This cannot be undone.";
    }
    if (!window.confirm(question)) { say(`${action} cancelled`, false); return; }
    say(`${action}…`, false);
    for (let attempt = 0; attempt < 4; attempt++) {
      const result = await UI.postJson(path);
      if (result.ok) {
        say(`${action}: ${result.body && result.body.status || "done"}`, false);
        refresh().catch(() => {});
        return;
      }
      const code = result.body && result.body.code;
      if (result.status === 401 && attempt < 3) {
        const why = code === "AUTH_TOKEN_INVALID" ? "Nimbus refused that token; try again." : "";
        const token = await askToken(why);
        if (!token) { say(`${action} refused: the cluster token is needed`, true); return; }
        const stored = await UI.postJson("/ui/session/token", {token});
        if (!stored.ok) { say(`could not keep the token: ${stored.body && stored.body.error}`, true); return; }
        continue;
      }
      say(`${action} refused: ${(result.body && result.body.error) || result.status}`, true);
      return;
    }
  }

  for (const button of document.querySelectorAll("#actions button[data-action]")) {
    button.addEventListener("click", () => act(button.dataset.action));
  }
  const wait = $("kill-wait");
  if (wait) wait.addEventListener("input", () => { wait.dataset.touched = "1"; });

  /* ---- polling ------------------------------------------------------------------------- */

  async function refresh() {
    const goneMessage = `Topology ${topologyId} no longer exists (killed?).`;
    if (gone) throw new Error(goneMessage);
    let t;
    try {
      t = await UI.getJson(api);
    } catch (e) {
      if (e.status === 404) {
        gone = true;
        document.body.dataset.gone = "1";
        throw new Error(goneMessage);
      }
      throw e;
    }
    render(t);
    sample(t);
    if (graph === null) await loadGraph(t); else updateDag(t);
    document.body.dataset.refreshed = String(Date.now());
  }

  drawChart();
  UI.poll(refresh, 1000);
})();
