/* Topology actions: activate, deactivate, rebalance (dialog with executor counts bounded by
tasks, and a wait time), kill (wait time) and stack traces (shown by stacks.js). Each asks for
confirmation in one dialog of the page, which also asks for the cluster token while the
session has none (the UI server keeps it for the session). */
"use strict";
const Actions = (() => {
  const $ = (id) => document.getElementById(id);

  function say(text, bad) {
    const status = $("action-status");
    status.textContent = text;
    status.classList.toggle("bad", !!bad);
    status.dataset.result = bad ? "refused" : "ok";
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
      say(`${action}…`, false);
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

  /* ---- wiring ---------------------------------------------------------------------- */

  /* ctx: {topologyId, api, topology() (latest body), graph() (latest graph), refresh()} */
  function install(ctx) {
    const wait = $("kill-wait");
    if (wait) wait.addEventListener("input", () => { wait.dataset.touched = "1"; });

    async function act(action) {
      const id = ctx.topologyId;
      let path = `${ctx.api}/${action}`, payload, question;
      if (action === "kill") {
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
          " It is deactivated until its worker restarts.";
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
  }

  return {install, say, askToken};
})();
