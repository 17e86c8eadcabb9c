// The tracelab explorer's page. The server reads and computes (runs,
// search, findings on spans, the critical path, TraceQL, PromQL); this
// file only draws, with no library: routes by the URL's hash, so every
// view has an address a learner can share or a test can open.
"use strict";

const main = document.getElementById("main");
const ROW = 22; // px, as --row in style.css

// ---- small helpers ----

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

async function api(path) {
  const resp = await fetch(path);
  const body = await resp.json().catch(() => ({ error: resp.statusText }));
  if (!resp.ok) throw new Error(body.error || resp.statusText);
  return body;
}

function ms(v) {
  if (v === undefined || v === null || isNaN(v)) return "–";
  if (v === 0) return "0";
  if (v >= 1000) return (v / 1000).toFixed(v >= 10000 ? 1 : 2) + " s";
  if (v >= 10) return v.toFixed(0) + " ms";
  if (v >= 1) return v.toFixed(1) + " ms";
  return (v * 1000).toFixed(0) + " µs";
}

function when(t) { return new Date(t).toLocaleString(); }

// A stable colour per service name.
function colour(name) {
  let x = 0;
  for (const c of name) x = (x * 31 + c.charCodeAt(0)) >>> 0;
  return `hsl(${x % 360} 60% 52%)`;
}

function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "" && v !== null && v !== false) p.set(k, v);
  return p.toString();
}

// fill replaces an element's children, flattening lists as h does.
function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
}

function fail(err) {
  fill(main, h("p", { class: "fail", id: "error" }, String(err.message || err)));
}

// ---- routing ----

const routes = [
  [/^#?\/?$/, showRuns],
  [/^#\/run\/([^/?]+)$/, showRun],
  [/^#\/search\/([^/?]+)$/, showSearch],
  [/^#\/trace\/([^/?]+)\/([^/?]+)\/([0-9a-fA-F]+)$/, showTrace],
  [/^#\/compare\/([^/?]+)$/, showCompare],
  [/^#\/dashboards$/, showDashboards],
  [/^#\/dashboard\/([^/?]+)$/, showDashboard],
];

// blindRoutes are the views of a training round (status.blind): its
// traces' search, a trace and its spans, nothing that reads an answer.
const blindRoutes = new Set([showSearch, showTrace]);

function route() {
  if (status.blind && !/^#\/(search|trace)\//.test(location.hash)) {
    location.hash = "#/search/round";
    return;
  }
  const [path, query] = location.hash.split("?");
  const params = Object.fromEntries(new URLSearchParams(query || ""));
  for (const [re, view] of routes) {
    const m = path.match(re);
    if (m) {
      if (status.blind && !blindRoutes.has(view)) break;
      document.body.dataset.view = view.name;
      view(...m.slice(1).map(decodeURIComponent), params).catch(fail);
      return;
    }
  }
  fail(new Error("no such page: " + location.hash));
}

window.addEventListener("hashchange", route);

let status = {};
api("/api/status").then((s) => {
  status = s;
  if (s.blind) {
    document.querySelector("#top nav").replaceChildren(h("a", { href: "#/search/round" }, "Round"));
    document.getElementById("stack-status").textContent = `training round ${s.round}: the traces as recorded`;
    return;
  }
  const live = [s.jaeger_up ? "Jaeger live" : "Jaeger not running", s.prom_up ? "Prometheus live" : "Prometheus not running"];
  document.getElementById("stack-status").textContent = `runs from ${s.results} · ${live.join(" · ")}`;
}).catch(() => {}).finally(route);

// ---- runs ----

async function showRuns() {
  const runs = await api("/api/runs");
  const rows = runs.map((r) => h("tr", { class: "clickable", "data-run": r.id, onclick: () => (location.hash = `#/run/${r.id}`) },
    h("td", {}, when(r.started_at)),
    h("td", {}, h("b", {}, r.scenario || r.id)),
    h("td", {}, r.profile || "", " ", h("span", { class: "muted" }, r.runtime || "")),
    h("td", { class: r.verdict === "pass" ? "pass" : "fail" }, r.error ? "unreadable" : r.verdict),
    h("td", {}, (r.variants || []).map((v) => h("div", {}, h("b", {}, v.name), ` p50 ${ms(v.p50_ms)} · `,
      v.findings.length ? [...new Set(v.findings.map((f) => f.detector))].map((d) => h("span", { class: "tag finding" }, d)) : h("span", { class: "muted" }, "no finding")))),
    h("td", {}, (r.checks || []).filter((c) => c.ratio).map((c) => h("div", { class: c.ok ? "" : "fail" },
      `${c.ratio.value.toFixed(2)}× [${c.ratio.low.toFixed(2)}, ${c.ratio.high.toFixed(2)}] `, h("span", { class: "muted" }, c.name.split(":")[0]))))));
  fill(main,
    h("h1", {}, "Runs"),
    status.jaeger_up ? liveForm() : h("p", { class: "muted" }, "The stack is not running: these are the saved runs (make up, or a run with KEEP=1, adds Jaeger's live traces and Prometheus' metrics)."),
    runs.length ? h("table", { class: "grid", id: "runs" },
      h("tr", {}, ["started", "scenario", "profile", "verdict", "variants", "ratios, 95% interval"].map((t) => h("th", {}, t))), rows)
      : h("p", {}, "No runs yet under ", status.results, ". Run one: make scenario-nplus1"));
}

function liveForm() {
  const input = h("input", { name: "service", placeholder: "service, e.g. catalog", required: true });
  return h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); location.hash = `#/search/live?${qs({ variant: input.value })}`; } },
    h("label", {}, "Live traces in Jaeger (last 15 minutes)", input), h("button", {}, "Search"));
}

// ---- one run ----

async function showRun(id) {
  const r = await api(`/api/runs/${id}`);
  const base = r.variants.find((v) => v.name === "baseline");
  fill(main,
    h("h1", {}, `${r.scenario} · ${r.profile} · `, h("span", { class: r.verdict === "pass" ? "pass" : "fail" }, r.verdict)),
    h("p", { class: "muted" }, `${r.runtime} runtime, started ${when(r.started_at)} · ${id}`),
    h("div", { class: "toolbar" },
      h("a", { href: `#/search/${id}` }, "Search its traces"), " · ",
      r.variants.length > 1 && base ? [h("a", { href: `#/compare/${id}` }, "Compare the baseline's and the fix's typical traces"), " · "] : null,
      h("a", { href: `#/dashboard/${r.scenario}.json?${qs({ run: id })}` }, `The ${r.scenario} dashboard`)),
    h("h2", {}, "Checks"),
    h("table", { class: "grid" }, (r.checks || []).map((c) => h("tr", {},
      h("td", { class: c.ok ? "pass" : "fail" }, c.ok ? "ok" : "failed"), h("td", {}, c.name), h("td", { class: "muted" }, c.detail)))),
    h("h2", {}, "Variants"),
    h("div", { class: "cards" }, r.variants.map((v) => h("div", { class: "card" },
      h("h2", { style: "margin-top:0" }, v.name),
      h("div", {}, `${v.requests} requests · p50 ${ms(v.p50_ms)} · p95 ${ms(v.p95_ms)}`, v.bound ? ` · ${v.bound}` : ""),
      v.findings.length ? v.findings.map((f) => h("div", { class: "finding-box" }, h("b", {}, f.detector), " ", f.summary, " ",
        h("a", { href: `#/search/${id}?${qs({ variant: v.name, finding: f.detector })}` }, "its traces →")))
        : h("p", { class: "muted" }, "No finding."),
      v.traces ? h("a", { href: `#/search/${id}?${qs({ variant: v.name })}` }, "Search this variant's traces →") : h("p", { class: "muted" }, "Its traces file is missing.")))));
}

// ---- search ----

async function showSearch(run, params) {
  const res = await api(`/api/runs/${run}/traces?${qs(params)}`);
  const field = (name, label, options) => h("label", {}, label, h("select", { name },
    h("option", { value: "" }, "any"), options.map((o) => h("option", { value: o, selected: params[name] === o }, o))));
  const form = h("form", { class: "filters", id: "search-form", onsubmit: (e) => {
    e.preventDefault();
    const p = Object.fromEntries(new FormData(form));
    if (run === liveRun) p.variant = params.variant;
    location.hash = `#/search/${run}?${qs(p)}`;
  } },
  run === "live" ? h("label", {}, "service", h("b", {}, params.variant)) : field("variant", "variant", res.variants),
  field("service", "service", res.services),
  field("operation", "operation", res.operations),
  h("label", {}, "min duration (ms)", h("input", { type: "number", name: "min_ms", value: params.min_ms || "", step: "any" })),
  h("label", {}, "max duration (ms)", h("input", { type: "number", name: "max_ms", value: params.max_ms || "", step: "any" })),
  h("label", {}, "errors only", h("input", { type: "checkbox", name: "error", value: "1", checked: params.error === "1" })),
  status.blind ? null : field("finding", "has finding", res.findings),
  h("label", {}, "order", h("select", { name: "sort" }, ["duration", "start", "spans"].map((o) => h("option", { value: o, selected: params.sort === o }, o)))),
  h("button", { type: "submit" }, "Search"));
  const sort = params.sort || "duration";
  const key = { duration: (t) => -t.duration_ms, start: (t) => t.start_ms, spans: (t) => -t.spans }[sort];
  const traces = [...res.traces].sort((a, b) => key(a) - key(b));
  const open = (t) => (location.hash = `#/trace/${run}/${t.variant}/${t.id}${run === "live" ? "?" + qs({ lookback: params.lookback }) : ""}`);
  const shown = traces.slice(0, 200);
  fill(main,
    h("h1", {}, "Traces ", h("span", { class: "muted" }, run === "live" ? "live, from Jaeger" : run)),
    form,
    h("p", { id: "search-count" }, `${res.total} traces match`, res.total > shown.length ? `; the ${shown.length} first by ${sort} are listed, all are plotted` : "",
      ". Each dot is a trace: the time it started across, its duration up. Click one to open it."),
    scatter(traces, open),
    h("table", { class: "grid", id: "trace-list" },
      h("tr", {}, ["variant", "started", "root", "duration", "client, outside spans", "spans", status.blind ? null : "findings"].filter((t) => t).map((t) => h("th", {}, t))),
      shown.map((t) => h("tr", { class: "clickable", "data-trace": t.id, onclick: () => open(t) },
        h("td", {}, t.variant), h("td", {}, new Date(t.start_ms).toLocaleTimeString()), h("td", {}, t.root, t.error ? h("span", { class: "fail" }, " error") : ""),
        h("td", { class: "num" }, ms(t.duration_ms)),
        h("td", { class: "num" }, t.client_ms !== undefined ? `${ms(t.client_ms)}, ${ms(t.outside_ms)}` : "–"),
        h("td", { class: "num" }, t.spans), status.blind ? null : h("td", {}, t.findings.map((f) => h("span", { class: "tag finding" }, f)))))));
}
const liveRun = "live";

// A duration scatter on a canvas (thousands of dots), log scale when the
// durations spread over more than ten times.
function scatter(traces, open) {
  const c = h("canvas", { class: "scatter", id: "scatter" });
  if (!traces.length) return c;
  const variants = [...new Set(traces.map((t) => t.variant))];
  const palette = ["#2563eb", "#16a34a", "#dc2626", "#9333ea"];
  requestAnimationFrame(() => {
    const dpr = window.devicePixelRatio || 1, w = c.clientWidth, hgt = c.clientHeight;
    c.width = w * dpr; c.height = hgt * dpr;
    const g = c.getContext("2d");
    g.scale(dpr, dpr);
    const t0 = Math.min(...traces.map((t) => t.start_ms)), t1 = Math.max(...traces.map((t) => t.start_ms)) || t0 + 1;
    const d0 = Math.max(Math.min(...traces.map((t) => t.duration_ms)), 0.001), d1 = Math.max(...traces.map((t) => t.duration_ms));
    const log = d1 / d0 > 10;
    const pad = 44;
    const x = (t) => pad + ((t.start_ms - t0) / Math.max(t1 - t0, 1)) * (w - pad - 10);
    const y = (t) => {
      const f = log ? Math.log(t.duration_ms / d0) / Math.log(d1 / d0) : (t.duration_ms - d0) / Math.max(d1 - d0, 1e-9);
      return hgt - 16 - (isFinite(f) ? f : 0) * (hgt - 30);
    };
    g.font = "10px sans-serif"; g.fillStyle = "#6b7280";
    g.fillText(ms(d1), 2, 14); g.fillText(ms(d0), 2, hgt - 14);
    g.fillText(log ? "log scale" : "", 2, hgt / 2);
    variants.forEach((v, i) => { g.fillStyle = palette[i % 4]; g.fillText("● " + v, w - 120, 14 + 12 * i); });
    for (const t of traces) {
      g.fillStyle = palette[variants.indexOf(t.variant) % 4];
      g.globalAlpha = 0.6;
      g.beginPath(); g.arc(x(t), y(t), t.findings.length ? 3.5 : 2.5, 0, 7); g.fill();
    }
    c.onclick = (e) => {
      const r = c.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
      let best = null, bd = 64;
      for (const t of traces) {
        const d = (x(t) - px) ** 2 + (y(t) - py) ** 2;
        if (d < bd) { bd = d; best = t; }
      }
      if (best) open(best);
    };
  });
  return c;
}

// ---- the waterfall ----

// Waterfall draws a TraceView. Rows are positioned absolutely in a tall
// spacer and only those in view exist, so 50,000 spans cost what 40 do.
class Waterfall {
  constructor(tv, opts) {
    this.tv = tv;
    this.opts = opts || {};
    this.scale = this.opts.scaleMs || Math.max(tv.duration_ms, tv.client ? tv.client.latency_ms : 0, 0.001);
    this.collapsed = new Set();
    this.openFolds = new Set();
    this.showCritical = false;
    this.selected = -1;
    this.foldAt = new Map(tv.folds.map((f, i) => [f.from, i]));
    this.findingRows = new Map();
    for (const f of tv.findings) for (const r of f.rows) this.findingRows.set(r, f.detector);
    this.critical = new Map();
    for (const [row, start, dur] of tv.critical) {
      if (!this.critical.has(row)) this.critical.set(row, []);
      this.critical.get(row).push([start, dur]);
    }
    this.el = h("div", { class: "wf" });
    const ticks = h("div", { class: "ticks" });
    for (let i = 0; i <= 5; i++) ticks.append(h("span", { class: "tick", style: `left:${i * 19}%` }, ms((this.scale * i * 19) / 100)));
    this.scroll = h("div", { class: "wf-scroll" + (this.opts.short ? " short" : "") });
    this.spacer = h("div", { style: "position:relative" });
    this.scroll.append(this.spacer);
    this.el.append(h("div", { class: "wf-axis" }, h("div", { class: "lab" }, `${tv.spans.length} spans · ${ms(tv.duration_ms)}`), ticks), this.scroll);
    this.scroll.addEventListener("scroll", () => this.draw());
    this.layout();
  }

  // layout lists the rows to show: spans not under a collapsed span and
  // not inside a closed fold, which shows as one row.
  layout() {
    const spans = this.tv.spans, items = [];
    if (this.tv.client) items.push({ client: true });
    for (let i = 0; i < spans.length;) {
      const f = this.foldAt.get(i);
      if (f !== undefined && !this.openFolds.has(f)) {
        items.push({ fold: f });
        i = this.tv.folds[f].to + 1;
        continue;
      }
      items.push({ span: i });
      i += this.collapsed.has(i) ? spans[i].z : 1;
    }
    this.items = items;
    this.spacer.style.height = items.length * ROW + "px";
    this.drawn = null;
    this.draw();
  }

  pct(v) { return (100 * v) / this.scale; }

  draw() {
    const first = Math.max(0, Math.floor(this.scroll.scrollTop / ROW) - 10);
    const last = Math.min(this.items.length, first + Math.ceil((this.scroll.clientHeight || 600) / ROW) + 20);
    const key = first + ":" + last;
    if (this.drawn === key) return;
    this.drawn = key;
    const rows = [];
    for (let k = first; k < last; k++) rows.push(this.row(this.items[k], k));
    this.spacer.replaceChildren(...rows);
  }

  row(item, k) {
    const tv = this.tv, top = `top:${k * ROW}px`;
    if (item.client) {
      const c = tv.client;
      return h("div", { class: "wf-row client", style: top, title: "the load engine's wait for this request, drawn from the trace's start" },
        h("div", { class: "name" }, h("span", { class: "tw" }), `client: ${ms(c.latency_ms)}`, c.outside_ms !== undefined ? `, ${ms(c.outside_ms)} outside any span` : ""),
        h("div", { class: "bars" }, h("div", { class: "bar", style: `left:0;width:${this.pct(c.latency_ms)}%` })));
    }
    if (item.fold !== undefined) {
      const f = tv.folds[item.fold], s0 = tv.spans[f.from];
      let end = 0;
      for (let i = f.from; i <= f.to; i++) end = Math.max(end, tv.spans[i].t + tv.spans[i].u);
      const fr = this.findingRows.has(f.from);
      return h("div", { class: "wf-row fold" + (fr ? " finding" : ""), style: top, "data-fold": item.fold, title: "click to expand",
        onclick: () => { this.openFolds.add(item.fold); this.layout(); } },
      h("div", { class: "name", style: `padding-left:${4 + 12 * s0.d}px` }, h("span", { class: "tw" }, "▸"), `… ${f.count} more ${f.op} (click to expand)`),
      h("div", { class: "bars" }, h("div", { class: "bar", style: `left:${this.pct(s0.t)}%;width:${this.pct(end - s0.t)}%` }),
        this.showCritical ? this.critBars(f.from, f.to) : null));
    }
    const i = item.span, s = tv.spans[i], svc = tv.services[s.s];
    const finding = this.findingRows.get(i);
    const cls = "wf-row" + (finding ? " finding" : "") + (i === this.selected ? " selected" : "");
    const twisty = s.z > 1 ? h("span", { class: "tw", onclick: (e) => { e.stopPropagation(); this.toggle(i); } }, this.collapsed.has(i) ? "▸" : "▾") : h("span", { class: "tw" });
    return h("div", { class: cls, style: top, "data-row": i, "data-span": s.id, title: `${svc} ${s.o}${finding ? " — " + finding : ""}`, onclick: () => this.select(i) },
      h("div", { class: "name", style: `padding-left:${4 + 12 * Math.min(s.d, 30)}px` }, twisty,
        h("span", { class: "svc", style: `background:${colour(svc)}` }), h("span", { class: "muted" }, svc + " "), s.o),
      h("div", { class: "bars" },
        h("div", { class: "bar" + (s.e ? " err" : ""), style: `left:${this.pct(s.t)}%;width:${this.pct(s.u)}%;background:${colour(svc)}` }),
        this.showCritical ? this.critBars(i, i) : null,
        h("span", { class: "dur", style: `left:calc(${Math.min(this.pct(s.t + s.u), 90)}% + 4px)` }, ms(s.u))));
  }

  critBars(from, to) {
    const out = [];
    for (let i = from; i <= to; i++) for (const [start, dur] of this.critical.get(i) || []) out.push(h("div", { class: "crit", style: `left:${this.pct(start)}%;width:${Math.max(this.pct(dur), 0.1)}%` }));
    return out;
  }

  toggle(i) {
    if (this.collapsed.has(i)) this.collapsed.delete(i); else this.collapsed.add(i);
    this.layout();
  }

  select(i) {
    this.selected = i;
    this.drawn = null;
    this.draw();
    if (this.opts.onSelect) this.opts.onSelect(i);
  }

  setCritical(on) { this.showCritical = on; this.drawn = null; this.draw(); }
  expandAll() { this.tv.folds.forEach((_, i) => this.openFolds.add(i)); this.collapsed.clear(); this.layout(); }
  foldAll() { this.openFolds.clear(); this.layout(); }

  // reveal scrolls to a row, opening what hides it.
  reveal(i) {
    this.tv.folds.forEach((f, k) => { if (f.from <= i && i <= f.to) this.openFolds.add(k); });
    for (let p = this.tv.spans[i].p; p >= 0; p = this.tv.spans[p].p) this.collapsed.delete(p);
    this.layout();
    const k = this.items.findIndex((it) => it.span === i);
    this.scroll.scrollTop = Math.max(0, (k - 3) * ROW);
    this.select(i);
  }
}

async function showTrace(run, variant, id, params) {
  const base = `/api/runs/${run}/traces/${variant}/${id}`;
  const extra = run === "live" ? "?" + qs({ lookback: params.lookback }) : "";
  const tv = await api(base + extra);
  const details = h("div", { class: "details", id: "span-details" }, h("p", { class: "muted" }, "Click a span to read its details."));
  const wf = new Waterfall(tv, { onSelect: (i) => showSpan(details, base, tv, i, extra) });
  const crit = h("button", { id: "critical-path", onclick: () => { wf.setCritical(!wf.showCritical); crit.classList.toggle("on", wf.showCritical); } }, "Critical path");
  fill(main,
    h("h1", {}, `Trace ${tv.id} `, h("span", { class: "muted" }, `${variant} · ${ms(tv.duration_ms)} · ${tv.spans.length} spans`)),
    h("div", { class: "toolbar" },
      h("a", { href: `#/search/${run}?${qs({ variant: run === "live" ? variant : "" })}` }, "← search"),
      crit,
      h("button", { id: "expand-all", onclick: () => wf.expandAll() }, "Expand all"),
      status.blind ? null : h("button", { onclick: () => wf.foldAll() }, "Fold repeats"),
      run !== "live" && !status.blind ? h("a", { href: `#/compare/${run}?${qs({ a: `${variant}/${tv.id}` })}` }, "Compare with another trace →") : null),
    tv.client && tv.client.outside_ms !== undefined ? h("p", { id: "client-line" }, `The load engine waited ${ms(tv.client.latency_ms)} for this request; the root span lasted ${ms(tv.client.server_ms)}, so ${ms(tv.client.outside_ms)} were spent outside any span (connecting, queueing before the server's first span, the answer's way back).`) : null,
    tv.findings.map((f) => h("div", { class: "finding-box finding-line" }, h("b", {}, f.detector), ` on ${f.rows.length} span${f.rows.length > 1 ? "s" : ""}: `, f.summary, " ",
      h("button", { onclick: () => wf.reveal(f.rows[0]) }, "show the first"))),
    h("div", { class: "trace-layout" }, h("div", { class: "wf-wrap" }, wf.el), details));
  wf.draw();
  markInteractive();
}

// markInteractive records, once per page load, when the first waterfall
// could be used: what make bench reads (performance.getEntriesByName).
function markInteractive() {
  requestAnimationFrame(() => {
    if (!performance.getEntriesByName("waterfall-interactive").length) performance.mark("waterfall-interactive");
    document.body.dataset.waterfall = "ready";
  });
}

async function showSpan(box, base, tv, i, extra) {
  const s = tv.spans[i];
  fill(box, h("p", { class: "muted" }, "Loading…"));
  const d = await api(`${base}/spans/${s.id}${extra}`);
  const table = (obj) => h("table", {}, Object.keys(obj || {}).sort().map((k) => h("tr", {}, h("td", {}, k), h("td", {}, obj[k]))));
  const finding = tv.findings.filter((f) => f.rows.includes(i));
  fill(box,
    h("h3", { style: "margin-top:0" }, `${d.service} · ${d.operation}`),
    finding.map((f) => h("div", { class: "finding-box" }, h("b", {}, f.detector), " ", f.summary)),
    h("table", {},
      [["name", d.name], ["kind", d.kind], ["status", d.status + (d.status_message ? ": " + d.status_message : "")],
        ["start", `${ms(s.t)} after the trace's start`], ["duration", ms(d.duration_ms)], ["thread", s.h || "not recorded"],
        ["span id", d.span_id], ["parent id", d.parent_id || "none (a root)"], ["scope", d.scope || "–"]].map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, v)))),
    h("h3", {}, "Attributes"), h("div", { id: "span-attributes" }, table(d.attributes)),
    h("h3", {}, "Resource"), table(d.resource),
    h("h3", {}, "Events"), h("p", { class: "muted" }, "Not kept: the lab's trace files hold spans, attributes and status, not span events."));
}

// ---- compare ----

// The default pair: the baseline's typical trace with its finding against
// the fix's typical trace; a typical trace is the one of median duration.
async function typical(run, variant, finding) {
  const res = await api(`/api/runs/${run}/traces?${qs({ variant, finding })}`);
  const t = [...res.traces].sort((a, b) => a.duration_ms - b.duration_ms);
  return t.length ? `${variant}/${t[Math.floor(t.length / 2)].id}` : null;
}

async function showCompare(run, params) {
  const r = await api(`/api/runs/${run}`);
  const names = r.variants.map((v) => v.name);
  const baseline = r.variants.find((v) => v.name === "baseline") || r.variants[0];
  const other = r.variants.find((v) => v !== baseline);
  let a = params.a || (await typical(run, baseline.name, baseline.findings[0] && baseline.findings[0].detector));
  let b = params.b || (other ? await typical(run, other.name, "") : null);
  if (!a || !b) throw new Error("compare needs two traces: a=<variant>/<trace id>&b=<variant>/<trace id>");
  const [ta, tb] = await Promise.all([a, b].map((x) => api(`/api/runs/${run}/traces/${x}`)));
  const scale = Math.max(ta.duration_ms, tb.duration_ms, ta.client ? ta.client.latency_ms : 0, tb.client ? tb.client.latency_ms : 0);
  const side = (tv, label) => h("div", {}, h("h2", {}, `${label}: ${tv.variant} `, h("a", { href: `#/trace/${run}/${tv.variant}/${tv.id}` }, tv.id), ` · ${ms(tv.duration_ms)} · ${tv.spans.length} spans`),
    new Waterfall(tv, { scaleMs: scale, short: true }).el);
  fill(main,
    h("h1", {}, "Compare ", h("span", { class: "muted" }, `${run}; both on one time scale`)),
    h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); location.hash = `#/compare/${run}?${qs(Object.fromEntries(new FormData(e.target)))}`; } },
      h("label", {}, "A (variant/trace id)", h("input", { name: "a", value: a, size: 44 })),
      h("label", {}, "B (variant/trace id)", h("input", { name: "b", value: b, size: 44 })),
      h("button", {}, "Compare"), h("span", { class: "muted" }, `variants: ${names.join(", ")}`)),
    h("h2", {}, "What changed, by operation"),
    diffTable(ta, tb),
    h("div", { class: "compare" }, side(ta, "A"), side(tb, "B")));
  document.querySelectorAll(".wf-scroll").forEach((el) => el.dispatchEvent(new Event("scroll")));
}

// diffTable counts each service's operations in both traces: calls B
// added, removed, or made a different number of times.
function diffTable(ta, tb) {
  const count = (tv) => {
    const m = new Map();
    for (const s of tv.spans) {
      const k = `${tv.services[s.s]} ${s.o}`;
      m.set(k, (m.get(k) || 0) + 1);
    }
    return m;
  };
  const ca = count(ta), cb = count(tb);
  const keys = [...new Set([...ca.keys(), ...cb.keys()])];
  const rows = keys.map((k) => {
    const x = ca.get(k) || 0, y = cb.get(k) || 0;
    const kind = !x ? "added" : !y ? "removed" : x !== y ? "changed" : "same";
    return { k, x, y, kind };
  }).filter((r) => r.kind !== "same").sort((p, q) => Math.abs(q.y - q.x) - Math.abs(p.y - p.x));
  if (!rows.length) return h("p", { id: "diff" }, "The two traces make the same calls, the same number of times.");
  return h("table", { class: "grid diff", id: "diff" },
    h("tr", {}, h("th", {}, "service operation"), h("th", { class: "num" }, "A"), h("th", { class: "num" }, "B"), h("th", {}, "")),
    rows.map((r) => h("tr", { class: r.kind, "data-kind": r.kind }, h("td", {}, r.k), h("td", { class: "num" }, r.x), h("td", { class: "num" }, r.y),
      h("td", { class: r.kind }, r.kind === "changed" ? `${r.y > r.x ? "+" : ""}${r.y - r.x} calls` : `${r.kind}`))));
}

// ---- dashboards ----

async function showDashboards() {
  const ds = await api("/api/dashboards");
  fill(main, h("h1", {}, "Dashboards"),
    h("p", { class: "muted" }, "The Grafana dashboards of dashboards/, drawn here from their own JSON: PromQL from the stack's Prometheus, TraceQL on a run's saved traces."),
    h("ul", {}, ds.map((d) => h("li", {}, h("a", { href: `#/dashboard/${d.file}` }, d.title)))));
}

async function showDashboard(file, params) {
  const [d, runs] = await Promise.all([api(`/api/dashboards/${file}`), api("/api/runs")]);
  const scenario = (d.tags || []).find((t) => !["tracelab", "scenario", "overview"].includes(t)) || "";
  const candidates = runs.filter((r) => !scenario || r.scenario === scenario);
  const run = runs.find((r) => r.id === params.run) || candidates[0];
  // The run's window, with a margin; without a run, the last 30 minutes.
  let end = Date.now() / 1000, start = end - 1800;
  if (run) {
    start = new Date(run.started_at).getTime() / 1000 - 30;
    end = Math.max(...run.variants.map((v) => new Date(v.window_end || run.started_at).getTime() / 1000)) + 60;
  }
  const pick = h("select", { onchange: (e) => (location.hash = `#/dashboard/${file}?${qs({ run: e.target.value })}`) },
    candidates.map((r) => h("option", { value: r.id, selected: run && r.id === run.id }, `${r.scenario} ${r.profile} ${when(r.started_at)}`)));
  const grid = h("div", { class: "dash", id: "dashboard" });
  fill(main, h("h1", {}, d.title),
    h("div", { class: "toolbar" }, "Run: ", candidates.length ? pick : h("span", { class: "muted" }, "none of this scenario yet"),
      h("span", { class: "muted" }, `PromQL over ${new Date(start * 1000).toLocaleTimeString()}–${new Date(end * 1000).toLocaleTimeString()} from ${status.prometheus || "no Prometheus"}${status.prom_up ? "" : " (not running: start the stack with make up to see metrics)"}`)),
    grid);
  for (const p of d.panels || []) {
    const g = p.gridPos || { x: 0, y: 0, w: 12, h: 8 };
    const body = h("div", { class: "body", style: "flex:1;display:flex;flex-direction:column;min-height:0" });
    const panel = h("div", { class: "panel", "data-type": p.type, "data-title": p.title, style: `grid-column:${g.x + 1} / span ${g.w};grid-row:${g.y + 1} / span ${g.h}` },
      h("h4", { title: p.description || "" }, p.title), body);
    grid.append(panel);
    renderPanel(p, body, panel, run, start, end).catch((err) => { panel.dataset.state = "error"; body.replaceChildren(h("p", { class: "why" }, String(err.message || err))); });
  }
}

async function renderPanel(p, body, panel, run, start, end) {
  const targets = p.targets || [];
  if (p.type === "text") {
    body.append(h("pre", {}, ((p.options || {}).content || "").replace(/[*`#]/g, "")));
    panel.dataset.state = "text";
    return;
  }
  if (targets.some((t) => t.queryType === "serviceMap") || p.type === "nodeGraph") {
    panel.dataset.state = "unrenderable";
    body.append(h("p", { class: "why" }, "Not drawn here: the service graph is made by Tempo's metrics-generator, which runs on kind and EKS, not on the local runtime."));
    return;
  }
  const traceql = targets.filter((t) => t.queryType === "traceql");
  if (traceql.length) {
    if (!run) throw new Error("TraceQL panels read a run's traces: run the scenario first");
    const res = await api(`/api/runs/${run.id}/traceql?${qs({ q: traceql[0].query })}`);
    const list = [...res.traces].sort((a, b) => b.duration_ms - a.duration_ms).slice(0, 50);
    panel.dataset.state = list.length ? "traces" : "empty";
    body.append(h("div", { class: "why" }, `${res.total} traces of the run match `, h("code", {}, traceql[0].query)),
      h("table", { class: "grid" }, list.map((t) => h("tr", { class: "clickable", "data-trace": t.id, onclick: () => (location.hash = `#/trace/${run.id}/${t.variant}/${t.id}`) },
        h("td", {}, t.variant), h("td", {}, t.root), h("td", { class: "num" }, ms(t.duration_ms)), h("td", { class: "num" }, `${t.spans} spans`)))));
    return;
  }
  const series = [];
  for (const t of targets.filter((t) => t.expr)) {
    const res = await api(`/api/promql?${qs({ expr: t.expr, start: Math.floor(start), end: Math.ceil(end) })}`);
    for (const s of res.series) series.push({ name: legend(t.legendFormat, s.labels), points: s.points });
  }
  const points = series.reduce((n, s) => n + s.points.length, 0);
  panel.dataset.state = points ? "data" : "empty";
  if (!points) { body.append(h("p", { class: "why" }, "No data over this range: Prometheus holds no sample of these series for the run's window.")); return; }
  if (p.type === "stat" || p.type === "table") {
    body.append(h("table", { class: "grid" }, series.map((s) => h("tr", {}, h("td", {}, s.name), h("td", { class: "num" }, fmt(s.points[s.points.length - 1][1]))))));
    return;
  }
  body.append(lineChart(series, start, end));
}

function legend(format, labels) {
  if (format && format !== "__auto") return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k) => labels[k] || "");
  const parts = Object.entries(labels).filter(([k]) => k !== "__name__").map(([k, v]) => `${k}=${v}`);
  return parts.join(", ") || "value";
}

function fmt(v) { return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(2); }

// lineChart draws series in SVG across [start, end].
function lineChart(series, start, end) {
  const W = 600, H = 200, L = 46, B = 16;
  let lo = Infinity, hi = -Infinity;
  for (const s of series) for (const [, v] of s.points) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (lo > 0) lo = 0;
  if (hi === lo) hi = lo + 1;
  const x = (t) => L + ((t - start) / (end - start)) * (W - L - 4);
  const y = (v) => H - B - ((v - lo) / (hi - lo)) * (H - B - 6);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const add = (tag, attrs, text) => {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    svg.append(el);
  };
  for (const v of [lo, (lo + hi) / 2, hi]) {
    add("line", { x1: L, x2: W, y1: y(v), y2: y(v), stroke: "#e3e6ec" });
    add("text", { x: 2, y: y(v) + 4, "font-size": 10, fill: "#6b7280" }, fmt(v));
  }
  add("text", { x: L, y: H - 2, "font-size": 10, fill: "#6b7280" }, new Date(start * 1000).toLocaleTimeString());
  add("text", { x: W - 60, y: H - 2, "font-size": 10, fill: "#6b7280" }, new Date(end * 1000).toLocaleTimeString());
  const items = [];
  series.forEach((s, i) => {
    const c = `hsl(${(i * 67) % 360} 65% 45%)`;
    add("polyline", { fill: "none", stroke: c, "stroke-width": 1.6, "vector-effect": "non-scaling-stroke", points: s.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ") });
    items.push(h("span", {}, h("i", { style: `background:${c}` }), s.name));
  });
  const wrap = h("div", { style: "flex:1;display:flex;flex-direction:column;min-height:0" });
  wrap.append(svg, h("div", { class: "legend" }, items));
  return wrap;
}
