/* The topology graph: components as nodes (bolts coloured by capacity), streams as edges
labelled with their grouping and tuples per second. Layers are longest paths from the spouts;
back edges and self loops arc below. Rates come from the last RECENT windows of the API's
recentWindows, over the real time between them (intervalSeconds, as the charts). A bolt's
capacity is the bolts table's, for the window the page shows: one figure, computed once by
Nimbus (its busiest executor's busy time over the wall-clock time of that window). */
"use strict";
const Dag = (() => {
  const RECENT = 10;
  const NW = 170, NH = 62, GX = 120, GY = 34, PAD = 20;

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

  function positions(g, level) {
    const columns = [];
    for (const n of g.nodes) (columns[level[n.id]] = columns[level[n.id]] || []).push(n);
    const tallest = Math.max(1, ...columns.map((c) => (c || []).length));
    const pos = {};
    columns.forEach((col, c) => (col || []).forEach((n, r) => {
      const offset = (tallest - col.length) * (NH + GY) / 2;
      pos[n.id] = {x: PAD + c * (NW + GX), y: PAD + 10 + offset + r * (NH + GY)};
    }));
    return {pos, width: PAD * 2 + columns.length * NW + (columns.length - 1) * GX,
            height: PAD * 2 + tallest * NH + (tallest - 1) * GY + 30};
  }

  function edgePath(a, b, forward, k) {
    if (forward) {
      const x1 = a.x + NW, y1 = a.y + NH / 2, x2 = b.x, y2 = b.y + NH / 2, mx = (x1 + x2) / 2;
      return {d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, lx: mx,
              ly: (y1 + y2) / 2 - 6 + (k - 1) * 30};
    }
    const x1 = a.x + NW / 2, y1 = a.y + NH, x2 = b.x + NW / 2, y2 = b.y + NH;
    const dip = Math.max(y1, y2) + 26 + k * 8;
    return {d: `M${x1},${y1} C${x1 + 40},${dip} ${x2 - 40},${dip} ${x2},${y2}`,
            lx: (x1 + x2) / 2, ly: dip - 2};
  }

  function draw(container, g) {
    const level = layers(g);
    const {pos, width, height} = positions(g, level);
    const svg = UI.svg("svg", {viewBox: `0 0 ${width} ${height}`, id: "dag-svg", role: "img",
      "aria-label": "topology graph", "data-nodes": g.nodes.length, "data-edges": g.edges.length});
    const marker = UI.svg("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"});
    marker.append(UI.svg("path", {d: "M0,0 L10,5 L0,10 z", class: "arrow"}));
    const defs = UI.svg("defs");
    defs.append(marker);
    svg.append(defs);
    const pairCount = {};
    for (const e of g.edges) {
      const a = pos[e.source], b = pos[e.target];
      if (!a || !b) continue;
      const key = e.source + "->" + e.target;
      const k = pairCount[key] = (pairCount[key] || 0) + 1;
      const {d, lx, ly} = edgePath(a, b, level[e.target] > level[e.source], k);
      const group = UI.svg("g", {class: "edge", "data-source": e.source, "data-target": e.target,
        "data-stream": e.stream, "data-grouping": e.grouping});
      group.append(UI.svg("path", {d, "marker-end": "url(#arrow)"}));
      const label = e.stream === "default" ? e.grouping : `${e.stream}: ${e.grouping}`;
      const text = UI.svg("text", {x: lx, y: ly - 4, "text-anchor": "middle", class: "edge-label",
        "data-label": label});
      text.append(UI.svg("tspan", {x: lx, class: "grouping"}, label));
      text.append(UI.svg("tspan", {x: lx, dy: 14, class: "rate"}, ""));
      group.append(text);
      group.append(UI.svg("title", {}, `${e.source} → ${e.target}, stream ${e.stream}, ${e.grouping}`));
      svg.append(group);
    }
    for (const n of g.nodes) {
      const p = pos[n.id];
      const group = UI.svg("g", {class: "node " + n.kind, "data-component": n.id,
        transform: `translate(${p.x},${p.y})`});
      const link = UI.svg("a", {href: `/topology/${encodeURIComponent(document.body.dataset.topologyId)}` +
        `/component/${encodeURIComponent(n.id)}`});
      link.append(UI.svg("rect", {width: NW, height: NH, rx: 6}));
      link.append(UI.svg("text", {x: 10, y: 19, class: "name"}, n.id));
      link.append(UI.svg("text", {x: 10, y: 35, class: "par", "data-component": n.id},
        `${n.kind} ×${n.executors}`));
      link.append(UI.svg("text", {x: 10, y: 52, class: "load", "data-component": n.id}, ""));
      link.append(UI.svg("title", {}, `${n.kind} ${n.id}: open its page`));
      group.append(link);
      svg.append(group);
    }
    container.replaceChildren(svg);
    for (const name of svg.querySelectorAll("g.node text.name")) fitText(name, NW - 20);
  }

  /* Shorten a node's name to width (user units) with an ellipsis: a long component id would
  run out of its box, over the edges and off the graph. The node's title keeps the whole id. */
  function fitText(text, width) {
    const whole = text.textContent;
    if (text.getComputedTextLength() <= width) return;
    let keep = whole.length;
    while (keep > 1) {
      keep -= 1;
      text.textContent = whole.slice(0, keep) + "…";
      if (text.getComputedTextLength() <= width) break;
    }
    text.classList.add("shortened");
  }

  /* Sums over the last RECENT windows: seconds (since the window before each began, else
  its job's length), per component counts, per input executed. */
  function recentLoad(recent) {
    const windows = (recent || []).slice(-RECENT);
    const load = {seconds: 0, components: {}, windows: windows.length};
    for (const w of windows) {
      load.seconds += w.intervalSeconds > 0 ? w.intervalSeconds : w.seconds || 0;
      for (const [name, c] of Object.entries(w.components || {})) {
        const mine = load.components[name] = load.components[name] ||
          {emitted: 0, executed: 0, inputs: {}};
        mine.emitted += c.emitted || 0;
        mine.executed += c.executed || 0;
        for (const [input, n] of Object.entries(c.inputs || {})) mine.inputs[input] = (mine.inputs[input] || 0) + n;
      }
    }
    return load;
  }

  function loadClass(capacity) {
    if (capacity === null || !(capacity > 0)) return "load-0";
    if (capacity < 0.25) return "load-1";
    if (capacity < 0.5) return "load-2";
    if (capacity < 0.8) return "load-3";
    return "load-4";
  }

  const perSec = (n, secs) => secs > 0 ? n / secs : null;
  const fmtRate = (r) => r === null ? "no windows yet" :
    `${r >= 100 ? Math.round(r).toLocaleString("en-US") : +r.toFixed(1)} tuples/s`;

  /* Colour the nodes and label the edges from the topology body t. */
  function update(t) {
    const svg = document.getElementById("dag-svg");
    if (!svg || !t) return;
    const load = recentLoad(t.recentWindows);
    const bolts = Object.fromEntries((t.bolts || []).map((b) => [b.boltId, b]));
    for (const node of svg.querySelectorAll("g.node")) {
      const name = node.dataset.component;
      const mine = load.components[name];
      let capacity = null, text;
      if (node.classList.contains("bolt")) {
        const shown = bolts[name] ? bolts[name].capacity : null;
        if (shown !== null && shown !== undefined && shown !== "") capacity = Number(shown);
        const executed = mine ? perSec(mine.executed, load.seconds) : null;
        text = (capacity === null ? "capacity not measured yet" : `capacity ${capacity.toFixed(3)}`) +
          (executed === null ? "" : ` · ${fmtRate(executed).replace(" tuples", "")}`);
      } else {
        text = mine ? `emitting ${fmtRate(perSec(mine.emitted, load.seconds))}` : "spout";
      }
      for (const c of ["load-0", "load-1", "load-2", "load-3", "load-4"]) node.classList.remove(c);
      if (node.classList.contains("bolt")) node.classList.add(loadClass(capacity));
      node.dataset.capacity = capacity === null ? "" : capacity.toFixed(3);
      node.querySelector("text.load").textContent = text;
      const par = node.querySelector("text.par");
      const row = bolts[name] || (t.spouts || []).find((s) => s.spoutId === name);
      if (row) par.textContent = `${node.classList.contains("bolt") ? "bolt" : "spout"} ×${row.executors}`;
    }
    for (const edge of svg.querySelectorAll("g.edge")) {
      const target = load.components[edge.dataset.target];
      const executed = target ? target.inputs[`${edge.dataset.source}:${edge.dataset.stream}`] : undefined;
      // a window's brief leaves zeros out: no count for an input over measured windows is 0
      const r = load.seconds > 0 ? perSec(executed || 0, load.seconds) : null;
      edge.dataset.rate = r === null ? "" : r.toFixed(3);
      edge.querySelector("tspan.rate").textContent = fmtRate(r);
    }
  }

  return {draw, update, loadClass, recentLoad};
})();
