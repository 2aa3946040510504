/* Line charts of the API's recentWindows: history at once, then one more point per window.

A Series keeps the windows seen since the page opened (the API sends the last ones, oldest
first), keyed by time and window number so that a restarted worker's windows do not collide,
capped at MAX_POINTS. draw() renders one value of every window as an SVG line chart whose
data-* attributes (points, last time and value, the series as JSON) tests read. */
"use strict";
const Charts = (() => {
  const MAX_POINTS = 240;

  class Series {
    constructor() { this.windows = new Map(); }

    merge(recent) {
      for (const w of recent || []) this.windows.set(`${w.time}|${w.window}`, w);
      if (this.windows.size <= MAX_POINTS) return;
      const keep = this.sorted().slice(-MAX_POINTS);
      this.windows = new Map(keep.map((w) => [`${w.time}|${w.window}`, w]));
    }

    sorted() {
      return [...this.windows.values()].sort((a, b) => (a.time - b.time) || (a.window - b.window));
    }

    get size() { return this.windows.size; }
  }

  /* value per second of a counter in one window: over the time since the window before began
  (intervalSeconds), else over the window's own job (seconds), else the count itself */
  const rate = (field) => (w) => {
    const value = w[field];
    if (value === null || value === undefined) return null;
    const over = w.intervalSeconds > 0 ? w.intervalSeconds : w.seconds;
    return over > 0 ? value / over : value;
  };

  /* a latency (ms, or null when nothing completed) */
  const level = (field) => (w) => {
    const value = w[field];
    return value === null || value === undefined || value === "" ? null : Number(value);
  };

  function niceMax(value, floor) {
    if (!(value > 0)) return floor;
    if (value <= floor && floor >= 1) return floor;
    const power = Math.pow(10, Math.floor(Math.log10(value)));
    for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
    return 10 * power;
  }

  const clock = (t) => new Date(t * 1000).toLocaleTimeString("en-GB");
  /* "now" only while the newest point is recent (within 15 s, or two of the last gaps
  between points on a loaded machine): when windows stopped coming (a stall, a gone worker)
  the label says how old the last point is instead */
  const RECENT_SECS = 15;
  const lastLabel = (points) => {
    const t = points[points.length - 1].t;
    const gap = points.length > 1 ? t - points[points.length - 2].t : 0;
    const age = Date.now() / 1000 - t;
    return age <= Math.max(RECENT_SECS, 2 * gap) ? "now" :
      `last (${UI.fmt.duration(Math.round(age))} ago)`;
  };
  const short = (v) => Math.abs(v) >= 1000 ? (v / 1000).toFixed(1) + "k" :
    String(Math.abs(v) >= 1 || v === 0 ? +v.toFixed(2) : +v.toPrecision(2));

  /* Draw points [{t, v}] into the element of id containerId. A null value is a gap in the
  line, or skipped when opts.join (latencies: a window where nothing completed has none). */
  function draw(containerId, points, opts) {
    const W = 420, H = 170, L = 44, R = 10, T = 10, B = 30;
    const values = points.map((p) => p.v).filter((v) => v !== null && Number.isFinite(v));
    const last = points.length ? points[points.length - 1] : null;
    const top = niceMax(Math.max(0, ...values), opts.join ? 0.001 : 1);
    const slots = Math.max(points.length, 2);
    const x = (i) => L + (W - L - R) * (i / (slots - 1));
    const y = (v) => H - B - (H - T - B) * (v / top);
    const svg = UI.svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", class: "line-chart",
      id: containerId + "-svg", "aria-label": opts.label, "data-points": points.length,
      "data-last-time": last ? last.t : "", "data-last-value": last && last.v !== null ? last.v.toFixed(3) : "",
      "data-max": values.length ? Math.max(...values).toFixed(3) : "0",
      "data-series": JSON.stringify(points.map((p) => [p.t, p.key, p.v === null ? null : +p.v.toFixed(3)]))});
    for (const f of [0, 0.5, 1]) {
      svg.append(UI.svg("line", {class: f ? "grid" : "axis", x1: L, x2: W - R, y1: y(top * f), y2: y(top * f)}));
      svg.append(UI.svg("text", {x: L - 5, y: y(top * f) + 4, "text-anchor": "end"}, short(top * f)));
    }
    svg.append(UI.svg("line", {class: "axis", x1: L, x2: L, y1: T, y2: H - B}));
    let run = [];
    const flush = () => {
      if (run.length > 1) svg.append(UI.svg("polyline", {class: "line " + (opts.cls || ""), points: run.join(" ")}));
      if (run.length === 1) svg.append(UI.svg("circle", {class: "dot " + (opts.cls || ""), r: 2, cx: run[0].split(",")[0], cy: run[0].split(",")[1]}));
      run = [];
    };
    points.forEach((p, i) => {
      if (p.v === null || !Number.isFinite(p.v)) { if (!opts.join) flush(); return; }
      run.push(`${x(i).toFixed(1)},${y(p.v).toFixed(1)}`);
    });
    flush();
    // hover values: one target per point, its window's time and value in a tooltip
    points.forEach((p, i) => {
      if (p.v === null || !Number.isFinite(p.v)) return;
      const hit = UI.svg("circle", {class: "hit", r: 4, cx: x(i).toFixed(1), cy: y(p.v).toFixed(1),
        "data-key": p.key, "data-value": p.v.toFixed(3)});
      const job = opts.sparkUi && p.jobs && p.jobs.length ? p.jobs[p.jobs.length - 1] : null;
      hit.append(UI.svg("title", {}, `${clock(p.t)}: ${short(p.v)} ${opts.unit}` +
                                     (job === null ? "" : ` (Spark job ${job}: click to open)`)));
      if (job === null) { svg.append(hit); return; }
      const link = UI.svg("a", {href: `${opts.sparkUi.replace(/\/$/, "")}/jobs/job/?id=${job}`,
                                target: "_blank", rel: "noopener noreferrer", class: "job-link"});
      link.append(hit);
      svg.append(link);
    });
    if (points.length) {
      svg.append(UI.svg("text", {x: L, y: H - 8}, clock(points[0].t)));
      svg.append(UI.svg("text", {x: W - R, y: H - 8, "text-anchor": "end", class: "chart-last"},
        `${clock(last.t)}  ${lastLabel(points)} ${last.v === null ? "–" : short(last.v)} ` +
        opts.unit));
    } else {
      svg.append(UI.svg("text", {x: (W + L) / 2, y: H / 2, "text-anchor": "middle", class: "muted"},
        opts.empty || "waiting for statistics windows"));
    }
    svg.append(UI.svg("title", {}, `${opts.label}: ${points.length} windows`));
    document.getElementById(containerId).replaceChildren(svg);
  }

  /* Draw each [containerId, valueOf(window), opts] chart of a series; with sparkUi, each
  point links to its window's Spark job. */
  function drawAll(series, charts, sparkUi) {
    const windows = series.sorted();
    for (const [id, valueOf, opts] of charts) {
      if (!document.getElementById(id)) continue;
      draw(id, windows.map((w) => ({t: w.time, key: `${w.time}|${w.window}`, v: valueOf(w),
                                    jobs: w.jobs})), {...opts, sparkUi});
    }
    document.body.dataset.chartPoints = String(windows.length);
  }

  return {Series, rate, level, draw, drawAll, MAX_POINTS};
})();
