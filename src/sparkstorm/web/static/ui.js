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

  return {csrf, getJson, postJson, el, cell, fillBody, kvRows, showError, poll, svg};
})();
