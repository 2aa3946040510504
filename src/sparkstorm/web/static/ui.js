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

  /* A table cell holding one field of an API row: data-field names the field for tests. */
  function cell(row, field, options) {
    const opts = options || {};
    const value = row[field];
    const text = value === null || value === undefined || value === "" ? (opts.empty || "") : value;
    const attrs = {"data-field": field, class: (typeof value === "number" || opts.num) ? "num" : ""};
    if (opts.class) attrs.class += " " + opts.class;
    if (opts.title) attrs.title = opts.title;
    return el("td", attrs, opts.link ? el("a", {href: opts.link}, text) : text);
  }

  function fillBody(table, rows) {
    const body = table.tBodies[0];
    body.replaceChildren(...rows);
  }

  function kvRows(table, pairs) {
    fillBody(table, pairs.map(([key, value]) => el("tr", {"data-key": key},
      el("th", {}, key), el("td", {"data-field": key}, value === null ? "" : String(value)))));
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
    let hint = (body && body.windowHint) || "All time";
    if (answered !== asked) hint += " (Nimbus ignored the window asked for)";
    document.body.dataset.window = answered;
    document.getElementById("window-hint").textContent = "showing " + hint;
    for (const label of document.querySelectorAll(".window-label")) label.textContent = "(" + hint + ")";
  }

  function withWindow(path) {
    const w = currentWindow();
    return w === ":all-time" ? path : path + "?window=" + encodeURIComponent(w);
  }

  function isoTime(epochSecs) {
    if (epochSecs === null || epochSecs === undefined) return "";
    return new Date(epochSecs * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
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
    ["error", "Bolt raised an error", "process() raised; the tuple was failed and the executor restarted"],
    ["timeout", "Timed out", "the tree did not complete within topology.message.timeout.secs"],
    ["crash", "Executor or worker crashed", "an executor or worker died with the tree in flight"]];

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
        el("td", {class: "num", "data-field": "count"}, count),
        el("td", {class: "num"}, total ? (100 * count / total).toFixed(1) + " %" : ""));
    }));
    // a component page's reasons are its own: their spout is the page's component
    const reasons = (body.failureReasons || []).map((r) =>
      ({...r, spoutId: r.spoutId || document.body.dataset.component || ""}));
    fillBody(document.getElementById("failure-reasons"), reasons.length ? reasons.map((r) =>
      el("tr", {"data-cause": r.cause},
        cell(r, "spoutId"), cell(r, "cause"), cell(r, "reason", {class: "wrap"}), cell(r, "count"))) :
      [el("tr", {}, el("td", {colSpan: 4, class: "muted"}, "no reasons recorded"))]);
  }

  return {csrf, getJson, postJson, el, cell, fillBody, kvRows, showError, poll, svg,
          currentWindow, windowSelect, showWindow, withWindow, isoTime, safeUrl, renderFailures};
})();
