/* The log page: a worker's or executor's log, tailed live. Each read asks Nimbus for the
tail, and Nimbus asks the worker at its next heartbeat, so the text follows the log about
once a second while the page is open. Below it (and alone on /logs, the daemons' logs), any
log file read page by page by byte offset, searched and downloaded through the supervisors'
logviewers (Nimbus's logfile, logsearch and logdownload calls). Logs are read with the
cluster token. */
"use strict";
/* One token dialog for the whole page: the live tail and the files panel both read with the
token, and two dialogs at once would answer only one of them. */
const askLogToken = (() => {
  let pending = null;
  return (why) => {
    if (!pending) {
      pending = Actions.askToken("Logs are shown with the cluster token.", why || "")
        .finally(() => { pending = null; });
    }
    return pending;
  };
})();

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
    const asked = source;
    const url = `/api/v1/topology/${encodeURIComponent(topologyId)}/logs?worker=` +
      `${encodeURIComponent(worker)}&source=${encodeURIComponent(source)}`;
    try {
      const body = await UI.getJson(url);
      if (asked !== source) return;  // another log was chosen meanwhile: its read shows it
      show(body);
    } catch (e) {
      if (e.status === 401) {
        asking = true;
        const why = e.body && e.body.code === "AUTH_TOKEN_INVALID" ? "Nimbus refused that token; try again." : "";
        const ok = await askLogToken(why);
        asking = false;
        if (!ok) throw new Error("the cluster token is needed to read logs");
        return;
      }
      if (e.status === 404) gone = true;
      throw e;
    }
    document.body.dataset.refreshed = String(Date.now());
  }

  if (topologyId) {
  $("log-source").addEventListener("change", (event) => {
    source = event.target.value;
    const url = new URL(location.href);
    url.searchParams.set("source", source);
    history.replaceState(null, "", url);
    $("log-text").textContent = "";
    refresh().catch((e) => UI.showError(e.message));
  });
  UI.poll(refresh, 1000);
  }
})();

/* Whole files: pages of PAGE bytes, search, download. */
const Files = (() => {
  const PAGE = 51200;
  const $ = (id) => document.getElementById(id);
  const enc = encodeURIComponent;
  let topologyId = "", files = [], page = null, asking = false;
  /* Each load() takes the next number; a response that comes back after a newer load began
  is dropped. The page's first load and a file chosen at once both ask for the live end of a
  log that grows: the older answer arriving last moved the page back, and "previous" then
  paged from it. */
  let loads = 0;
  let searches = 0;  // the same for searches: only the newest one's results are shown

  async function get(url) {
    for (;;) {
      try {
        return await UI.getJson(url);
      } catch (e) {
        if (e.status !== 401 || asking) throw e;
        asking = true;
        const ok = await askLogToken("");
        asking = false;
        if (!ok) throw new Error("the cluster token is needed to read logs");
      }
    }
  }

  function base(file) {
    return file.daemon
      ? `/api/v1/daemonlog?daemon=${enc(file.daemon)}&supervisor=${enc(file.supervisorId || "")}` +
        `&file=${enc(file.file)}`
      : `/api/v1/topology/${enc(topologyId)}/logfile?worker=${enc(file.workerId)}&file=${enc(file.file)}`;
  }

  function label(file) {
    const where = file.daemon ? `${file.daemon} ${file.host}` :
      `worker ${file.workerId} on ${file.host}${file.live ? "" : " (kept after the worker ended)"}`;
    return `${where}: ${file.file} (${UI.number ? UI.number(file.size) : file.size} bytes)`;
  }

  function current() { return files[Number($("file-select").value)] || null; }

  async function load(start) {
    const file = current();
    if (!file) return;
    const query = start === null ? "" : `&start=${Math.max(0, start)}`;
    const mine = ++loads;
    const got = await get(`${base(file)}${query}&length=${PAGE}`);
    if (mine !== loads) return;
    page = got;
    $("page-text").textContent = page.data;
    $("page-text").dataset.start = String(page.start);
    $("page-info").textContent = `bytes ${page.start.toLocaleString()}–` +
      `${(page.start + page.length).toLocaleString()} of ${page.size.toLocaleString()}`;
    $("page-info").dataset.size = String(page.size);
    $("page-prev").disabled = page.start === 0;
    $("page-first").disabled = page.start === 0;
    $("page-next").disabled = page.start + page.length >= page.size;
    const download = file.daemon
      ? base(file).replace("/api/v1/daemonlog?", "/api/v1/daemonlog/download?")
      : base(file).replace("/logfile?", "/logdownload?");
    $("file-download").href = download;
  }

  async function list() {
    const body = topologyId
      ? await get(`/api/v1/topology/${enc(topologyId)}/logfiles`)
      : await get("/api/v1/daemonlogs");
    files = body.files.map((f) => (topologyId ? f : {...f}));
    const select = $("file-select");
    select.replaceChildren(...files.map((f, i) => UI.el("option", {value: String(i)}, label(f))));
    if (!files.length) $("page-info").textContent = "no log files";
  }

  /* The single-file search URL of a file (a topology's, or a daemon's) from byte `from`. */
  function searchUrl(found, needle, from) {
    const tail = `&search=${enc(needle)}&startByteOffset=${from}`;
    if (found.daemon) {
      return `/api/v1/daemonlog/search?daemon=${enc(found.daemon)}` +
        `&supervisor=${enc(found.supervisorId || "")}&file=${enc(found.file)}${tail}`;
    }
    return `/api/v1/topology/${enc(topologyId)}/logsearch?worker=${enc(found.workerId)}` +
      `&file=${enc(found.file)}${tail}`;
  }

  function matchItem(found, m) {
    const link = UI.el("a", {href: "#"}, `${found.workerId || found.daemon || ""} ` +
      `${found.file} @${m.byteOffset}`);
    link.addEventListener("click", (e) => {
      e.preventDefault();
      const index = files.findIndex((f) => f.file === found.file &&
        (f.workerId || "") === (found.workerId || "") &&
        (f.supervisorId || "") === (found.supervisorId || f.supervisorId || ""));
      if (index >= 0) $("file-select").value = String(index);
      load(Math.max(0, m.byteOffset - 200)).catch((err) => UI.showError(err.message));
    });
    return UI.el("li", {}, link, ": ", m.beforeString, UI.el("mark", {}, m.matchString),
                 m.afterString);
  }

  /* Storm's search paging: a search stops after numMatches (100) in a file and says where
  it stopped (nextByteOffset); this button goes on from there, in that file, and appends. */
  function moreButton(found, needle) {
    const button = UI.el("button", {type: "button", class: "search-more",
                                    "data-file": found.file, "data-worker": found.workerId || "",
                                    "data-next": String(found.nextByteOffset)},
      `More matches in ${found.workerId ? found.workerId + " " : ""}${found.file} ` +
      `(from byte ${found.nextByteOffset.toLocaleString()})`);
    button.addEventListener("click", () => {
      button.disabled = true;
      get(searchUrl(found, needle, found.nextByteOffset)).then((body) => {
        const next = {...found, ...(body.files ? body.files[0] : body)};
        const item = button.closest("li");
        item.replaceWith(...next.matches.map((m) => matchItem(next, m)),
                         ...(next.nextByteOffset === null ? [] : [moreItem(next, needle)]));
        count(needle);
      }).catch((err) => { button.disabled = false; UI.showError(err.message); });
    });
    return button;
  }

  function moreItem(found, needle) {
    return UI.el("li", {class: "search-more-row"}, moreButton(found, needle));
  }

  function count(needle) {
    const shown = $("search-results").querySelectorAll("li:not(.search-more-row)").length;
    const more = $("search-results").querySelectorAll(".search-more").length;
    $("search-status").textContent = `${shown.toLocaleString()} match${shown === 1 ? "" : "es"}` +
      ` of "${needle}"` + (more ? `; more in ${more} file${more === 1 ? "" : "s"}` : "");
    $("search-status").dataset.matches = String(shown);
  }

  async function search(event) {
    event.preventDefault();
    const needle = $("search-input").value;
    const file = current();
    if (!needle || (!file && !$("search-all")?.checked)) return;
    let url;
    if (topologyId && $("search-all").checked) {
      url = `/api/v1/topology/${enc(topologyId)}/logsearch?search=${enc(needle)}`;
    } else {
      url = searchUrl(file, needle, 0);
    }
    $("search-status").textContent = "searching…";
    const mine = ++searches;
    const body = await get(url);
    if (mine !== searches) return;  // a newer search began meanwhile: its results are shown
    const results = body.files || [{...file, ...body}];
    const items = [];
    for (const found of results) {
      const where = {...file, ...found};
      items.push(...found.matches.map((m) => matchItem(where, m)));
      if (found.nextByteOffset !== null && found.nextByteOffset !== undefined) {
        items.push(moreItem(where, needle));
      }
    }
    $("search-results").replaceChildren(...items);
    count(needle);
  }

  function start(id) {
    topologyId = id;
    const go = (f) => () => f().catch((e) => UI.showError(e.message));
    $("file-select").addEventListener("change", go(() => load(null)));
    $("page-first").addEventListener("click", go(() => load(0)));
    $("page-last").addEventListener("click", go(() => load(null)));
    $("page-prev").addEventListener("click", go(() => load(page ? page.start - PAGE : 0)));
    $("page-next").addEventListener("click", go(() => load(page ? page.start + page.length : 0)));
    $("search-form").addEventListener("submit", (e) => search(e).catch((err) => UI.showError(err.message)));
    go(async () => { await list(); await load(null); })();
  }
  return {start};
})();

Files.start(document.body.dataset.topologyId || "");
