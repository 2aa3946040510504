/* Shared helpers of the sparkstorm UI pages (no framework, no external resources). */
"use strict";
const UI = (() => {
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;

  async function getJson(path) {
    const response = await fetch(path, {headers: {Accept: "application/json"},
                                        cache: "no-store", credentials: "same-origin"});
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const error = new Error((body && (body.error || body.errorMessage)) || response.statusText);
      error.status = response.status; error.body = body;
      throw error;
    }
    return body;
  }

  async function postJson(path, payload) {
    const response = await fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf()},
      body: payload === undefined ? "{}" : JSON.stringify(payload)});
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    return {status: response.status, ok: response.ok, body};
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  /* ---- numbers, durations and times for people ---------------------------------------- */

  const blank = (v) => v === null || v === undefined || v === "";
  const fmt = {
    /* 1,234,567 */
    count: (v) => blank(v) ? "" : Number(v).toLocaleString("en-US"),
    /* a latency in ms: "0.048 ms", "1.75 ms", "189 ms", "18.9 s", "2.5 min" */
    ms: (v) => {
      if (blank(v)) return "";
      const n = Number(v);
      if (!Number.isFinite(n)) return String(v);
      if (n >= 60000) return (n / 60000).toFixed(1) + " min";
      if (n >= 1000) return (n / 1000).toFixed(1) + " s";
      if (n >= 100) return n.toFixed(0) + " ms";
      if (n >= 10) return n.toFixed(1) + " ms";
      if (n >= 1) return n.toFixed(2) + " ms";
      return n.toFixed(3) + " ms";
    },
    /* seconds: "1 day", "2 days 3 h", "3 h 2 min", "5 min 3 s", "42 s" */
    duration: (secs) => {
      if (blank(secs)) return "";
      let left = Math.max(0, Math.floor(Number(secs)));
      const units = [["day", 86400], ["h", 3600], ["min", 60], ["s", 1]];
      const parts = [];
      for (const [name, size] of units) {
        const n = Math.floor(left / size);
        left -= n * size;
        if (n) parts.push(name === "day" ? `${n} day${n === 1 ? "" : "s"}` : `${n} ${name}`);
      }
      return parts.length ? parts.slice(0, 2).join(" ") : "0 s";
    },
    /* a share 0..1 as "12.5 %" */
    percent: (v) => blank(v) ? "" : (100 * Number(v)).toFixed(1) + " %",
    /* resident memory in MB: "87.4 MB", "1.23 GB" */
    mb: (v) => blank(v) ? "" : Number(v) >= 1024 ? (Number(v) / 1024).toFixed(2) + " GB" :
      Number(v).toFixed(1) + " MB",
    /* CPU, percent of one core */
    cpu: (v) => blank(v) ? "" : Number(v).toFixed(1) + " %",
    /* Storm's windowPretty ("10m 0s") as people say it ("10 minutes") */
    window: (pretty) => ({"10m 0s": "10 minutes", "3h 0m 0s": "3 hours",
                          "1d 0h 0m 0s": "1 day"})[pretty] || pretty,
    /* Storm's capacity (share of time busy) */
    capacity: (v) => blank(v) ? "" : Number(v).toFixed(3),
  };

  /* A table cell holding one field of an API row: data-field names the field and
  data-value keeps the API's value (tests and sorting read it); opts.format renders it
  for people. */
  /* Options of a latency cell: "–" (not Storm's "0.000 ms") where the row counted nothing
  the latency is of (its acked trees for a complete latency, its executed tuples for an
  execute or process latency) */
  function latencyOf(row, countField) {
    const counted = Number(row[countField]) > 0;
    return {num: true, format: (v) => counted ? fmt.ms(v) : "–",
            title: counted ? "" : `nothing ${countField} in this window`};
  }

  function cell(row, field, options) {
    const opts = options || {};
    const value = row[field];
    const shown = opts.format && !blank(value) ? opts.format(value) : value;
    const text = blank(shown) ? (opts.empty || "") : shown;
    const attrs = {"data-field": field, class: (typeof value === "number" || opts.num) ? "num" : ""};
    if (!blank(value) && typeof value !== "object") attrs["data-value"] = String(value);
    if (opts.class) attrs.class += " " + opts.class;
    if (opts.title) attrs.title = opts.title;
    return el("td", attrs, opts.link ? el("a", {href: opts.link}, text) : text);
  }

  /* ---- sortable tables (class "sortable"): click a header; the order survives refreshes -- */

  function sortKey(row, index) {
    const c = row.cells[index];
    if (!c) return "";
    const raw = c.dataset.value !== undefined ? c.dataset.value : c.textContent.trim();
    const n = Number(raw);
    return raw !== "" && Number.isFinite(n) ? n : raw.toLowerCase();
  }

  function applySort(table) {
    const index = table.dataset.sortColumn;
    if (index === undefined) return;
    const dir = table.dataset.sortDir === "desc" ? -1 : 1;
    const body = table.tBodies[0];
    const rows = [...body.rows];
    if (rows.some((r) => r.cells.length === 1 && r.cells[0].colSpan > 1)) return;
    rows.sort((a, b) => {
      const x = sortKey(a, +index), y = sortKey(b, +index);
      if (typeof x === typeof y) return (x < y ? -1 : x > y ? 1 : 0) * dir;
      return (typeof x === "number" ? -1 : 1) * dir;
    });
    body.append(...rows);
  }

  function wireSort(table) {
    if (table.dataset.sortWired) return;
    table.dataset.sortWired = "1";
    const heads = table.tHead ? [...table.tHead.rows[0].cells] : [];
    heads.forEach((th, index) => {
      th.classList.add("sort");
      th.setAttribute("aria-sort", "none");
      th.addEventListener("click", () => {
        const again = table.dataset.sortColumn === String(index);
        table.dataset.sortDir = again && table.dataset.sortDir !== "desc" ? "desc" : "asc";
        table.dataset.sortColumn = String(index);
        for (const other of heads) other.setAttribute("aria-sort", "none");
        th.setAttribute("aria-sort", table.dataset.sortDir === "desc" ? "descending" : "ascending");
        applySort(table);
      });
    });
  }

  function fillBody(table, rows) {
    const body = table.tBodies[0];
    body.replaceChildren(...rows);
    if (table.classList.contains("sortable")) { wireSort(table); applySort(table); }
  }

  /* Key-value rows: [key, value] or [key, value, label for people, value for people]. */
  function kvRows(table, pairs) {
    fillBody(table, pairs.map(([key, value, label, shown]) => el("tr", {"data-key": key},
      el("th", {title: label ? key : null}, label || key),
      el("td", {"data-field": key, "data-value": blank(value) ? null : String(value)},
         shown !== undefined ? shown : value === null ? "" : String(value)))));
  }

  function showError(message) {
    const box = document.getElementById("error");
    if (!box) return;
    box.hidden = !message;
    box.textContent = message || "";
    const live = document.getElementById("live");
    if (live) { live.classList.toggle("stale", !!message); live.textContent = message ? "stale" : "live"; }
  }

  /* Call refresh() now and every periodMs, never two at once. */
  function poll(refresh, periodMs) {
    let running = false;
    const tick = async () => {
      if (running) return;
      running = true;
      try { await refresh(); showError(null); }
      catch (e) { showError(e.message || String(e)); }
      finally { running = false; }
    };
    tick();
    return setInterval(tick, periodMs);
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /* ---- statistics window (?window=600|10800|86400|:all-time, kept in the URL) -------- */

  const WINDOWS = ["600", "10800", "86400", ":all-time"];
  function currentWindow() {
    const asked = new URLSearchParams(location.search).get("window");
    return WINDOWS.includes(asked) ? asked : ":all-time";
  }

  /* Wire the #window-select buttons; onChange(window) runs after each choice. */
  function windowSelect(onChange) {
    const box = document.getElementById("window-select");
    const mark = () => {
      for (const b of box.querySelectorAll("button[data-window]")) {
        b.setAttribute("aria-pressed", String(b.dataset.window === currentWindow()));
      }
    };
    for (const button of box.querySelectorAll("button[data-window]")) {
      button.addEventListener("click", () => {
        const url = new URL(location.href);
        if (button.dataset.window === ":all-time") url.searchParams.delete("window");
        else url.searchParams.set("window", button.dataset.window);
        history.replaceState(null, "", url);
        mark();
        onChange(currentWindow());
      });
    }
    mark();
  }

  /* Show the window the API answered for (windowHint) next to the tables it drives. */
  function showWindow(body) {
    const asked = currentWindow();
    const answered = body && body.window !== undefined ? String(body.window) : ":all-time";
    /* the API's hint starts with Storm's windowPretty ("10m 0s"): shown as people say it */
    let hint = (body && body.windowHint) || "All time";
    const pretty = hint.match(/^(10m 0s|3h 0m 0s|1d 0h 0m 0s)/);
    if (pretty) hint = fmt.window(pretty[1]) + hint.slice(pretty[1].length);
    if (answered !== asked) hint += " (Nimbus ignored the window asked for)";
    document.body.dataset.window = answered;
    document.getElementById("window-hint").textContent = "showing " + hint;
    for (const label of document.querySelectorAll(".window-label")) label.textContent = "(" + hint + ")";
  }

  function withWindow(path) {
    const w = currentWindow();
    return w === ":all-time" ? path : path + "?window=" + encodeURIComponent(w);
  }

  /* Local time with its zone, e.g. "23 Nov 2026, 19:50:01 UTC" */
  function isoTime(epochSecs) {
    if (epochSecs === null || epochSecs === undefined) return "";
    return new Date(epochSecs * 1000).toLocaleString("en-GB", {
      day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit",
      second: "2-digit", timeZoneName: "short"});
  }

  /* Only http(s) links from the API become hrefs. */
  function safeUrl(url) {
    try {
      const parsed = new URL(url, location.href);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (e) { return null; }
  }

  /* ---- failures explained ----------------------------------------------------------- */

  const CAUSES = [
    ["explicit", "Failed by a bolt", "a bolt called fail() on a tuple of the tree (its reason is below)"],
    ["error", "Bolt raised an error", "process() raised; that tuple and the rest of its window failed, and the executor restarted"],
    ["timeout", "Timed out", "the tree did not complete within topology.message.timeout.secs"],
    ["crash", "Executor or worker crashed", "a window's Spark job or a worker was lost with the tree in flight"]];

  function renderFailures(body, failedTotal) {
    const byCause = body.failuresByCause;
    const hint = document.getElementById("failures-hint");
    const box = document.getElementById("failures-box");
    if (!byCause) {
      box.dataset.supported = "0";
      hint.textContent = `${failedTotal} failed; Nimbus does not report failure causes yet.`;
      fillBody(document.getElementById("failures-by-cause"), []);
      fillBody(document.getElementById("failure-reasons"), []);
      return;
    }
    box.dataset.supported = "1";
    const total = CAUSES.reduce((sum, [key]) => sum + (byCause[key] || 0), 0);
    hint.textContent = total ? `${total} failed tuple trees, by cause:` :
      "No tuple tree failed in this window.";
    fillBody(document.getElementById("failures-by-cause"), CAUSES.map(([key, label, meaning]) => {
      const count = byCause[key] || 0;
      return el("tr", {"data-cause": key, class: count ? "has-failures" : ""},
        el("th", {class: "wrap", title: meaning}, label, el("small", {class: "meaning"}, meaning)),
        el("td", {class: "num", "data-field": "count", "data-value": count}, fmt.count(count)),
        el("td", {class: "num", "data-field": "share"}, total ? (100 * count / total).toFixed(1) + " %" : ""));
    }));
    // a component page's reasons are its own: their spout is the page's component
    const reasons = (body.failureReasons || []).map((r) =>
      ({...r, spoutId: r.spoutId || document.body.dataset.component || ""}));
    fillBody(document.getElementById("failure-reasons"), reasons.length ? reasons.map((r) =>
      el("tr", {"data-cause": r.cause},
        cell(r, "spoutId"), cell(r, "cause"),
        cell(r, "reason", {class: "wrap", title: r.example ? "latest: " + r.example : ""}),
        cell(r, "count", {format: fmt.count}),
        cell(r, "lastSeen", {format: isoTime,
                             title: r.firstSeen ? "first seen " + isoTime(r.firstSeen) : ""}))) :
      [el("tr", {}, el("td", {colSpan: 5, class: "muted"}, "no reasons recorded"))]);
  }

  return {csrf, getJson, postJson, el, cell, latencyOf, fillBody, kvRows, showError, poll, svg, fmt,
          currentWindow, windowSelect, showWindow, withWindow, isoTime, safeUrl, renderFailures};
})();
