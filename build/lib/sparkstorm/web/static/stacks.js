/* Stack traces of a topology's workers (Apex's stack trace request): after the request, poll
the UI server's /stacktrace (read with the session's token) until every worker answered, and
show each worker's threads and executors, collapsible, in #stacks-box. An answer counts when
it is newer than that worker's answer before the request (previousTimeSecs). */
"use strict";
const Stacks = (() => {
  const $ = (id) => document.getElementById(id);
  const PERIOD_MS = 500, GIVE_UP_MS = 60000;
  let following = 0;   // a newer request stops the polling of an older one

  function status(text, bad) {
    $("stacks-status").textContent = text;
    $("stacks-status").classList.toggle("error", !!bad);
  }

  /* The answers to this request: newer than the worker's previous answer. */
  function fresh(body, previous) {
    return (body.workers || []).filter((w) =>
      previous[w.workerId] === undefined || w.timeSecs > previous[w.workerId]);
  }

  function workerBlock(w, open) {
    const where = `${w.host}:${w.port}`;
    return UI.el("details", {"data-worker-id": w.workerId, class: "stack", open},
      UI.el("summary", {}, UI.el("strong", {}, where), ` worker ${w.workerId}, at ` +
        UI.isoTime(w.timeSecs)),
      UI.el("pre", {"data-field": "stacks"}, w.stacks || "(empty)"));
  }

  function render(workers) {
    $("stacks").replaceChildren(...workers.map((w, i) => workerBlock(w, i === 0)));
  }

  /* Poll until the `requested.workers` workers answered, or give up after GIVE_UP_MS. */
  async function follow(api, requested) {
    const mine = ++following, expected = Number(requested.workers) || 0;
    const previous = requested.previousTimeSecs || {};
    const box = $("stacks-box");
    box.hidden = false;
    box.dataset.state = "waiting";
    $("stacks").replaceChildren();
    const started = Date.now();
    let shown = "";
    while (mine === following) {
      let body;
      try { body = await UI.getJson(`${api}/stacktrace`); }
      catch (e) { status(`stack traces unavailable: ${e.message}`, true); box.dataset.state = "failed"; return; }
      const answers = fresh(body, previous);
      const key = answers.map((w) => w.workerId + "@" + w.timeSecs).join(" ");
      if (key !== shown) { render(answers); shown = key; }
      const done = answers.length >= expected && !(body.pending || []).length;
      if (done) {
        status(`${answers.length} of ${expected} workers answered.`, false);
        box.dataset.state = "done";
        return;
      }
      if (Date.now() - started > GIVE_UP_MS) {
        const missing = (body.pending || []).join(", ") || "some workers";
        status(`${answers.length} of ${expected} workers answered; no answer from ${missing}.`, true);
        box.dataset.state = "incomplete";
        return;
      }
      status(`waiting for the workers' next heartbeat: ${answers.length} of ${expected} answered…`, false);
      await new Promise((resolve) => setTimeout(resolve, PERIOD_MS));
    }
  }

  return {follow};
})();
