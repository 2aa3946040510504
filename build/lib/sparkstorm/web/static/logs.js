/* The log page: a worker's or executor's log, tailed live. Each read asks Nimbus for the
tail, and Nimbus asks the worker at its next heartbeat, so the text follows the log about
once a second while the page is open. Logs are read with the cluster token. */
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const topologyId = document.body.dataset.topologyId;
  const worker = document.body.dataset.worker;
  let source = document.body.dataset.source || "worker";
  let asking = false, gone = false;

  function fillSources(sources) {
    const select = $("log-source");
    const names = Object.keys(sources).sort((a, b) => (a === "worker" ? -1 : b === "worker" ? 1 :
      Number(a.split("-")[1]) - Number(b.split("-")[1])));
    if (select.dataset.names === names.join(",")) return;
    select.dataset.names = names.join(",");
    select.replaceChildren(...names.map((n) => UI.el("option", {value: n, selected: n === source},
                                                     sources[n])));
  }

  function show(body) {
    fillSources(body.sources || {});
    $("log-title").textContent = (body.sources || {})[source] || source;
    $("log-where").textContent = `worker ${body.workerId} on ${body.host}:${body.port}`;
    const text = $("log-text");
    if (body.text === null || body.text === undefined) {
      $("log-status").textContent = "asking the worker for its log (at its next heartbeat)…";
      text.dataset.state = "waiting";
      return;
    }
    const follow = $("log-follow").checked;
    if (text.textContent !== body.text) {
      text.textContent = body.text;
      if (follow) text.scrollTop = text.scrollHeight;
    }
    text.dataset.state = "shown";
    $("log-status").textContent = "updated " + UI.isoTime(body.timeSecs);
  }

  async function refresh() {
    if (gone || asking) return;
    const url = `/api/v1/topology/${encodeURIComponent(topologyId)}/logs?worker=` +
      `${encodeURIComponent(worker)}&source=${encodeURIComponent(source)}`;
    try {
      show(await UI.getJson(url));
    } catch (e) {
      if (e.status === 401) {
        asking = true;
        const why = e.body && e.body.code === "AUTH_TOKEN_INVALID" ? "Nimbus refused that token; try again." : "";
        const ok = await Actions.askToken("Logs are shown with the cluster token.", why);
        asking = false;
        if (!ok) throw new Error("the cluster token is needed to read logs");
        return;
      }
      if (e.status === 404) gone = true;
      throw e;
    }
    document.body.dataset.refreshed = String(Date.now());
  }

  $("log-source").addEventListener("change", (event) => {
    source = event.target.value;
    const url = new URL(location.href);
    url.searchParams.set("source", source);
    history.replaceState(null, "", url);
    $("log-text").textContent = "";
    refresh().catch((e) => UI.showError(e.message));
  });
  UI.poll(refresh, 1000);
})();
