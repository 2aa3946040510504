/* Topology actions: activate, deactivate, rebalance (dialog with executor counts bounded by
tasks, and a wait time), kill (wait time), stack traces (shown by stacks.js), debug sampling
of the topology or of one component (Storm's debug/enable|disable/<pct>) and dynamic log
levels (Storm's logconfig). Each asks for confirmation in one dialog of the page, which also
asks for the cluster token while the session has none (the UI server keeps it for the
session). */
"use strict";
const Actions = (() => {
  const $ = (id) => document.getElementById(id);

  /* The action's outcome in the status line; data-result is "pending" while the request is
  out, so that "ok" means Nimbus answered (tests and people read it). */
  function say(text, bad, pending) {
    const status = $("action-status");
    status.textContent = text;
    status.classList.toggle("bad", !!bad);
    status.dataset.result = pending ? "pending" : bad ? "refused" : "ok";
  }

  /* The one dialog of an action: its question and, when the session has no token yet (or
  Nimbus refused it), the token field. Resolves {token} (null when not asked) on OK, null on
  Cancel. */
  function confirmDialog(question, needToken, why) {
    const dialog = $("token-dialog"), input = $("token-input");
    $("confirm-question").textContent = question;
    $("confirm-question").hidden = !question;
    $("token-field").hidden = !needToken;
    input.value = "";
    const showError = (text) => { $("token-error").textContent = text || ""; $("token-error").hidden = !text; };
    showError(why);
    return new Promise((resolve) => {
      const done = (value) => {
        $("token-form").onsubmit = null; $("token-cancel").onclick = null; dialog.onclose = null;
        if (dialog.open) dialog.close();
        resolve(value);
      };
      $("token-form").onsubmit = (event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (needToken && !token) { showError("Enter the cluster token, or cancel."); return; }
        done({token: needToken ? token : null});
      };
      $("token-cancel").onclick = () => done(null);
      dialog.onclose = () => done(null);
      dialog.showModal();
      (needToken ? input : $("token-ok")).focus();
    });
  }

  async function hasToken() {
    try { return !!(await UI.getJson("/ui/session")).hasToken; } catch (e) { return false; }
  }

  /* Ask for the token alone (no action to confirm); true once the session keeps it. */
  async function askToken(question, why) {
    const answer = await confirmDialog(question, true, why);
    if (!answer || !answer.token) return false;
    const stored = await UI.postJson("/ui/session/token", {token: answer.token});
    return stored.ok;
  }

  /* Confirm the action (with the token when needed) in one dialog, then POST path; a token
  Nimbus refuses is asked for again. Returns the answer (an object) when it worked, else
  null. */
  async function post(action, question, path, payload) {
    let needToken = !(await hasToken()), why = "";
    for (let attempt = 0; attempt < 4; attempt++) {
      const answer = await confirmDialog(question, needToken, why);
      if (!answer) {
        if (needToken) say(`${action} refused: the cluster token is needed`, true);
        else say(`${action} cancelled`, false);
        return null;
      }
      if (answer.token) {
        const stored = await UI.postJson("/ui/session/token", {token: answer.token});
        if (!stored.ok) { say(`could not keep the token: ${stored.body && stored.body.error}`, true); return null; }
      }
      say(`${action}…`, false, true);
      const result = await UI.postJson(path, payload);
      if (result.ok) {
        say(`${action}: ${result.body && result.body.status || "done"}`, false);
        return result.body || {};
      }
      const code = result.body && result.body.code;
      if (result.status === 401) {
        needToken = true;
        why = code === "AUTH_TOKEN_INVALID" ? "Nimbus refused that token; try again." : "";
        continue;
      }
      say(`${action} refused: ${(result.body && result.body.error) || result.status}`, true);
      return null;
    }
    return null;
  }

  /* ---- rebalance dialog ------------------------------------------------------------ */

  function fillRebalance(t, graph) {
    const tasks = Object.fromEntries(((graph && graph.nodes) || []).map((n) => [n.id, n.tasks]));
    const rows = [...(t.spouts || []).map((s) => [s.spoutId, s]), ...(t.bolts || []).map((b) => [b.boltId, b])];
    UI.fillBody($("rebalance-executors"), rows.map(([name, row]) => {
      const max = row.tasks || tasks[name] || row.executors;
      const input = UI.el("input", {type: "number", min: 1, max, step: 1, value: row.executors,
        "data-component": name, "data-current": row.executors, "data-tasks": max});
      input.setAttribute("aria-label", `executors of ${name}`);
      return UI.el("tr", {"data-component": name}, UI.el("th", {}, name),
        UI.el("td", {class: "num"}, max), UI.el("td", {class: "num"}, row.executors), UI.el("td", {}, input));
    }));
    $("rebalance-workers").value = t.workersTotal || 1;
    $("rebalance-wait").value = t.msgTimeout === undefined ? 30 : t.msgTimeout;
    $("rebalance-error").hidden = true;
  }

  /* The rebalance body from the dialog, or an error message. */
  function rebalanceOptions() {
    const executors = {};
    for (const input of $("rebalance-executors").querySelectorAll("input[data-component]")) {
      const n = Number(input.value), max = Number(input.dataset.tasks);
      if (!Number.isInteger(n) || n < 1 || n > max) {
        return {error: `${input.dataset.component}: executors must be 1 to ${max} (its task count)`};
      }
      if (n !== Number(input.dataset.current)) executors[input.dataset.component] = n;
    }
    const options = {executors};
    const workers = Number($("rebalance-workers").value);
    if (!Number.isInteger(workers) || workers < 1) return {error: "workers must be a positive integer"};
    options.numWorkers = workers;
    const wait = Number($("rebalance-wait").value);
    if (!Number.isInteger(wait) || wait < 0) return {error: "the wait time must be 0 or more seconds"};
    return {options, wait};
  }

  function rebalanceDialog(t, graph) {
    fillRebalance(t, graph);
    const dialog = $("rebalance-dialog");
    return new Promise((resolve) => {
      const done = (value) => {
        $("rebalance-form").onsubmit = null; $("rebalance-cancel").onclick = null; dialog.onclose = null;
        if (dialog.open) dialog.close();
        resolve(value);
      };
      $("rebalance-form").onsubmit = (event) => {
        event.preventDefault();
        const chosen = rebalanceOptions();
        if (chosen.error) { $("rebalance-error").textContent = chosen.error; $("rebalance-error").hidden = false; return; }
        done(chosen);
      };
      $("rebalance-cancel").onclick = () => done(null);
      dialog.onclose = () => done(null);
      dialog.showModal();
    });
  }

  /* ---- debug sampling ---------------------------------------------------------------- */

  /* The sampling percentage typed next to the Debug button, or null when it is not above 0
  and at most 100. */
  function samplingPct() {
    const text = String($("debug-pct").value).trim();
    const pct = Number(text);
    return text !== "" && Number.isFinite(pct) && pct > 0 && pct <= 100 ? pct : null;
  }

  /* Show whether debug sampling is on for the page's topology or component (the API's debug
  and samplingPct), and keep the percentage field on it until someone types there. */
  function showDebug(body) {
    const state = $("debug-state");
    if (!state || !body) return;
    const on = !!body.debug;
    state.dataset.debug = on ? "on" : "off";
    state.dataset.pct = on ? String(body.samplingPct) : "";
    state.textContent = on ? `debug: sampling ${body.samplingPct} % of tuples to the log` : "debug: off";
    state.classList.toggle("on", on);
    const field = $("debug-pct");
    if (field && !field.dataset.touched && on) field.value = body.samplingPct;
  }

  /* ---- states in which an action cannot apply --------------------------------------- */

  const OFF = {REBALANCING: ["activate", "deactivate", "rebalance"],
               ACTIVE: ["activate"], INACTIVE: ["deactivate"]};

  /* Disable the buttons that cannot apply while the topology is in status (all of them once
  it is KILLED or gone). */
  function setState(status) {
    const off = OFF[status] || [];
    const all = status === "KILLED" || status === "GONE";
    for (const button of document.querySelectorAll("#actions button[data-action], #log-levels-box button")) {
      button.disabled = all || off.includes(button.dataset.action);
      button.title = button.disabled ? `not possible while the topology is ${status}` : "";
    }
    for (const input of document.querySelectorAll("#actions input, #log-level-form input, #log-level-form select")) {
      input.disabled = all;
    }
  }

  /* ---- dynamic log levels (topology page) ------------------------------------------- */

  const LEVELS = ["ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"];

  /* The loggers set now (Storm's {"namedLoggerLevels": {name: {target_level, timeout,
  timeout_epoch}}}), each with a Clear button when actions are on. */
  function renderLogLevels(body, clear) {
    const table = $("log-levels");
    if (!table || !body) return;
    const named = body.namedLoggerLevels || {};
    const names = Object.keys(named).sort();
    const shape = JSON.stringify([named, !!clear]);
    if (table.dataset.shown === shape) return;  // unchanged: keep the buttons under the mouse
    table.dataset.shown = shape;
    UI.fillBody(table, names.length ? names.map((name) => {
      const entry = named[name] || {};
      const expires = Number(entry.timeout_epoch) || 0;
      return UI.el("tr", {"data-logger": name},
        UI.el("td", {"data-field": "logger", "data-value": name}, name),
        UI.el("td", {"data-field": "target_level", "data-value": entry.target_level}, entry.target_level),
        UI.el("td", {"data-field": "timeout", "data-value": entry.timeout, class: "num"},
              entry.timeout ? UI.fmt.duration(entry.timeout) : "none"),
        UI.el("td", {"data-field": "timeout_epoch", "data-value": expires},
              expires ? UI.isoTime(expires) : "when cleared"),
        UI.el("td", {}, clear ? UI.el("button", {type: "button", class: "log-level-clear",
                                                 "data-logger": name,
                                                 onclick: () => clear(name)}, "Clear") : ""));
    }) : [UI.el("tr", {class: "none"}, UI.el("td", {colSpan: 5, class: "muted"},
                                             "no logger level set: each logger has its own"))]);
  }

  /* The loggers people may want, for the logger field's suggestions. */
  function suggestLoggers(t) {
    const list = $("log-level-loggers");
    if (!list || !t) return;
    const names = ["ROOT", "sparkstorm", ...[...(t.spouts || []).map((s) => s.spoutId),
      ...(t.bolts || []).map((b) => b.boltId)].map((c) => `sparkstorm.component.${c}`)];
    if (list.dataset.names === names.join(",")) return;
    list.dataset.names = names.join(",");
    list.replaceChildren(...names.map((n) => UI.el("option", {value: n})));
  }

  /* ---- wiring ---------------------------------------------------------------------- */

  /* ctx: {topologyId, api, topology() (latest body), graph() (latest graph), refresh()};
  on a component page also component (its id; api is the component's). */
  function install(ctx) {
    for (const id of ["kill-wait", "debug-pct"]) {
      const field = $(id);
      if (field) field.addEventListener("input", () => { field.dataset.touched = "1"; });
    }
    const what = ctx.component ? `component ${ctx.component} of topology ${ctx.topologyId}` :
      `topology ${ctx.topologyId}`;

    async function act(action) {
      const id = ctx.topologyId;
      let path = `${ctx.api}/${action}`, payload, question;
      if (action === "debug") {
        const pct = samplingPct();
        if (pct === null) { say("debug: the sampling percentage must be above 0 and at most 100", true); return; }
        path = `${ctx.api}/debug/enable/${pct}`;
        question = `Debug ${what}: write ${pct} % of ${ctx.component ? "its" : "every component's"} ` +
          "tuples to the executors' logs (each executor's log on this UI)? Sampling starts with " +
          "the next heartbeat and lasts until debugging is stopped.";
      } else if (action === "debug-stop") {
        path = `${ctx.api}/debug/disable/0`;
        question = ctx.component ? `Stop debugging ${what}?` :
          `Stop debugging ${what} and every one of its components?`;
      } else if (action === "kill") {
        const secs = Math.max(0, parseInt($("kill-wait").value, 10) || 0);
        path += `/${secs}`;
        question = `Kill topology ${id}? Its spouts are deactivated, and after ${secs} s its ` +
          "workers are stopped. This cannot be undone.";
      } else if (action === "rebalance") {
        const t = ctx.topology();
        if (!t) return;
        const chosen = await rebalanceDialog(t, ctx.graph());
        if (!chosen) { say("rebalance cancelled", false); return; }
        path += `/${chosen.wait}`;
        payload = {rebalanceOptions: chosen.options};
        const changes = Object.entries(chosen.options.executors).map(([c, n]) => `${c} → ${n} executors`);
        question = `Rebalance topology ${id} after ${chosen.wait} s` +
          (changes.length ? ` (${changes.join(", ")})?` : " (same executor counts)?") +
          ` Its spouts are deactivated for ${chosen.wait} s; then ` +
          (changes.length ? "its workers regroup their executors in place (executors of " +
                            "unchanged components keep running)." :
                            "workers that move are replaced.");
      } else if (action === "stacktrace") {
        question = `Take stack traces of topology ${id}? Each worker sends its threads and ` +
          "every executor's at its next heartbeat; the topology keeps running.";
      } else {
        question = `${action[0].toUpperCase() + action.slice(1)} topology ${id}?`;
      }
      const answer = await post(action, question, path, payload);
      if (answer && action === "stacktrace") Stacks.follow(ctx.api, answer);
      else if (answer) ctx.refresh().catch(() => {});
    }

    for (const button of document.querySelectorAll("#actions button[data-action]")) {
      button.addEventListener("click", () => act(button.dataset.action));
    }
    if ($("log-level-form")) installLogLevels(ctx);
  }

  /* ---- Change log level form (topology page) ----------------------------------------- */

  let levelsPath = null;  // the topology's logconfig, once the form is wired
  let levelsPosts = 0;  // level changes answered on this page: a read begun before one is old

  /* POST named levels (confirmed in the page's dialog) and show the answer: the levels now. */
  async function sendLevels(question, named) {
    const answer = await post("log level", question, levelsPath, {namedLoggerLevels: named});
    levelsPosts += 1;  // a read begun before this answer may hold the levels before the change
    if (answer) renderLogLevels(answer, clearLevel);
    return answer;
  }

  function clearLevel(name) {
    return sendLevels(`Clear the level of logger ${name}? It goes back to its own level in ` +
                      "the topology's workers and executors.",
                      {[name]: {target_level: null, timeout: 0}});
  }

  /* The form: the logger, its level and how long (0: until cleared). */
  function installLogLevels(ctx) {
    levelsPath = `/api/v1/topology/${encodeURIComponent(ctx.topologyId)}/logconfig`;
    $("log-level-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const name = $("log-level-logger").value.trim();
      const level = $("log-level-level").value;
      const timeoutText = String($("log-level-timeout").value).trim();
      const timeout = timeoutText === "" ? 0 : Number(timeoutText);
      if (!name) { say("log level: enter a logger name (ROOT for the root logger)", true); return; }
      if (!LEVELS.includes(level)) { say(`log level: choose one of ${LEVELS.join(", ")}`, true); return; }
      if (!Number.isInteger(timeout) || timeout < 0) {
        say("log level: the timeout must be 0 or more whole seconds", true); return;
      }
      sendLevels(`Set logger ${name} to ${level} in the workers and executors of topology ` +
                 `${ctx.topologyId} ` + (timeout ? `for ${UI.fmt.duration(timeout)}?` : "until it is cleared?"),
                 {[name]: {target_level: level, timeout}});
    });
  }

  /* How many level changes this page has had answered: give it back to showLogLevels with
  the read begun then. */
  function levelsSent() { return levelsPosts; }

  /* The current levels (GET logconfig), with Clear buttons when the form is there; a read
  begun before a change's answer came is dropped (it may not hold the change). */
  function showLogLevels(body, sent) {
    if (sent !== undefined && sent !== levelsPosts) return;
    renderLogLevels(body, levelsPath ? clearLevel : null);
  }

  return {install, say, askToken, showDebug, setState, showLogLevels, levelsSent,
          suggestLoggers};
})();
