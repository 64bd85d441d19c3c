// Icebatch web UI: fills the page shells from the JSON API with the signed-in key.
// The key lives in this tab's sessionStorage only; every request sends it as a bearer token.
// Polling stays cheap: in-flight rows poll with If-None-Match (304 while unchanged), finished
// rows stop, and lists ask only for what changed (`updated_since`).

import { lineChart, s, stackedBars } from "/ui/static/charts.js";

const KEY = "icebatch.key";
const POLL_MS = 2000;
const LIST_POLL_MS = 4000;
const IN_FLIGHT = new Set(["loading", "staged", "processing", "queued", "running", "submitted"]);
const BATCH_STATUSES = ["loading", "staged", "processing", "success", "failed", "aborted", "replaced", "reverted"];
const body = document.body;
const main = document.getElementById("main");

class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

// -- DOM ---------------------------------------------------------------------------------
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") { // through the CSSOM: the page's CSP forbids style attributes
      for (const decl of String(v).split(";")) {
        const at = decl.indexOf(":");
        if (at > 0) el.style.setProperty(decl.slice(0, at).trim(), decl.slice(at + 1).trim());
      }
    }
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children.flat(Infinity)) { // nested lists too (a <dl>'s [dt, dd] pairs)
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}
const pill = (status) => h("span", { class: `pill ${status} status-${status}`, "data-status": status }, status);
const num = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
const when = (t) => (t ? new Date(t).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" }) : "–");
const short = (id) => (id ? String(id).slice(0, 8) : "–");
function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}
function duration(start, end) {
  if (!start || !end) return "–";
  const secs = (new Date(end) - new Date(start)) / 1000;
  if (secs < 60) return `${secs.toFixed(1)} s`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min ${Math.round(secs % 60)} s`;
  return `${(secs / 3600).toFixed(1)} h`;
}
// fill `parent` with `nodes`, skipping the null/false of optional parts (never the text "null")
function fill(parent, ...nodes) { parent.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false)); }
function render(...nodes) { fill(main, ...nodes); }
function notice(text) {
  const el = document.getElementById("notice");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => { el.hidden = true; }, 6000);
}

// -- API ---------------------------------------------------------------------------------
const tags = new Map(); // path -> [etag, data]: the conditional GET cache

function signOut(reason) {
  sessionStorage.removeItem(KEY);
  const next = encodeURIComponent(location.pathname + location.search);
  const why = reason ? `&reason=${encodeURIComponent(reason)}` : "";
  location.assign(`/ui/login?next=${next}${why}`);
}

// snapshot ids are 64-bit: beyond 2^53 a JS number would round them, so keep their digits
function keepBigIntegers(key, value, context) {
  if (typeof value === "number" && !Number.isSafeInteger(value) && Number.isInteger(value) && context?.source) {
    return context.source;
  }
  return value;
}

async function api(path, { conditional = false, key = sessionStorage.getItem(KEY) } = {}) {
  const headers = { Authorization: `Bearer ${key}`, Accept: "application/json" };
  const known = conditional ? tags.get(path) : undefined;
  if (known) headers["If-None-Match"] = known[0];
  const response = await fetch(path, { headers, cache: "no-store" });
  if (response.status === 304 && known) return { data: known[1], changed: false };
  let data = null;
  const text = await response.text();
  try { data = text ? JSON.parse(text, keepBigIntegers) : null; } catch { data = { detail: text }; }
  if (!response.ok) throw new ApiError(response.status, data || {});
  const etag = response.headers.get("ETag");
  if (conditional && etag) tags.set(path, [etag, data]);
  return { data, changed: true };
}
const get = async (path, opts) => (await api(path, opts)).data;

async function all(path, max = 1000) {
  const items = [];
  let url = path + (path.includes("?") ? "&" : "?") + "limit=500";
  while (url && items.length < max) {
    const page = await get(url);
    items.push(...page.items);
    url = page.next ? `${path}${path.includes("?") ? "&" : "?"}limit=500&cursor=${encodeURIComponent(page.next)}` : null;
  }
  return items;
}

function failure(error) {
  if (error instanceof ApiError && error.status === 401) return signOut(error.message);
  if (error instanceof ApiError && error.status === 404) {
    render(h("section", { class: "card" }, h("h1", {}, "Not found"),
      h("p", { class: "error", id: "not-found" }, error.message),
      h("p", {}, h("a", { href: "/ui/datasets" }, "← All datasets"))));
    return;
  }
  notice(error.message || String(error));
  console.error(error);
}

// -- pages -------------------------------------------------------------------------------
async function loginPage() {
  const form = document.getElementById("login-form");
  const errorBox = document.getElementById("login-error");
  const params = new URLSearchParams(location.search);
  if (params.get("reason")) {
    errorBox.textContent = params.get("reason");
    errorBox.hidden = false;
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = document.getElementById("api-key").value.trim();
    errorBox.hidden = true;
    try {
      await api("/v1/datasets?limit=1", { key });
    } catch (error) {
      errorBox.textContent = error instanceof ApiError ? `${error.message}` : `cannot reach the API: ${error}`;
      errorBox.hidden = false;
      return;
    }
    sessionStorage.setItem(KEY, key);
    const next = params.get("next");
    location.assign(next && next.startsWith("/ui/") ? next : "/ui/datasets");
  });
}

async function datasetsPage() {
  const datasets = await all("/v1/datasets");
  const stats = await Promise.all(datasets.map((d) => get(`/v1/datasets/${d.id}/stats`)));
  const rows = datasets.map((d, i) => {
    const st = stats[i];
    const counts = BATCH_STATUSES.filter((x) => st.batches[x]).map((x) =>
      h("span", { class: `pill status-${x}`, title: x }, `${x} ${st.batches[x]}`));
    return h("tr", { "data-dataset": d.id },
      h("td", {}, h("a", { href: `/ui/datasets/${d.id}` }, d.name), h("div", { class: "muted mono" }, d.table)),
      h("td", {}, h("div", { class: "counts" }, counts.length ? counts : h("span", { class: "muted" }, "no batches"))),
      h("td", { class: "num", "data-field": "rows" }, num(st.rows)),
      h("td", { class: "num", "data-field": "rows-ingested" }, num(st.rows_ingested)),
      h("td", { class: "num" }, num(st.active_tombstones)),
      h("td", { class: "num" }, num(st.snapshots)),
      h("td", {}, when(st.last_ingest_at)));
  });
  render(
    h("div", { class: "head" }, h("div", {}, h("h1", {}, "Datasets"),
      h("p", { class: "muted" }, `${datasets.length} dataset(s) of your organization`))),
    h("section", { class: "card" }, h("table", { id: "datasets" },
      h("thead", {}, h("tr", {}, h("th", {}, "Dataset"), h("th", {}, "Batches by status"),
        h("th", { class: "num", title: "What a read of the current snapshot returns" }, "Rows"),
        h("th", { class: "num", title: "What the live batches ingested, hidden rows included" }, "Rows ingested"),
        h("th", { class: "num" }, "Active tombstones"),
        h("th", { class: "num" }, "Snapshots"), h("th", {}, "Last ingest"))),
      h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: 7, class: "empty" },
        "No dataset yet: create one with `icebatch datasets create`."))))),
  );
}

function legend() {
  return h("div", { class: "legend", id: "legend" }, h("span", {}, "Status:"),
    BATCH_STATUSES.map((x) => pill(x)));
}

function batchRow(b) {
  return h("tr", { id: `batch-${b.id}`, "data-batch": b.id, "data-status": b.status },
    h("td", {}, h("a", { class: "mono", href: `/ui/batches/${b.id}`, title: b.id }, short(b.id)),
      b.replay ? h("span", { class: "muted" }, " replay") : null),
    h("td", { class: "status" }, pill(b.status),
      b.status === "processing" && b.progress !== null ? h("span", { class: "muted" }, ` ${Math.round(100 * b.progress)}%`) : null),
    h("td", { class: "num" }, num(b.file_count)),
    h("td", { class: "num" }, num(b.row_count)),
    h("td", { class: "num" }, bytes(b.bytes)),
    h("td", {}, when(b.created_at)),
    h("td", { class: "num" }, duration(b.created_at, b.completed_at)),
    h("td", { class: "mono" }, b.snapshot_id ?? "–"));
}

function barChart(points, label) {
  const w = 560, hgt = 190, pad = 34;
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${w} ${hgt}`, role: "img", "aria-label": label });
  if (!points.length) { svg.append(s("text", { x: w / 2 - 40, y: hgt / 2 }, "nothing yet")); return svg; }
  const max = Math.max(...points.map((p) => p.value), 1);
  const bw = Math.min(48, (w - pad - 10) / points.length - 6);
  svg.append(s("line", { class: "axis", x1: pad, y1: hgt - 24, x2: w, y2: hgt - 24 }));
  svg.append(s("text", { x: 2, y: 14 }, num(max)));
  points.forEach((p, i) => {
    const x = pad + 6 + i * ((w - pad - 10) / points.length);
    const bh = ((hgt - 44) * p.value) / max;
    svg.append(s("rect", { class: "bar", x, y: hgt - 24 - bh, width: bw, height: bh, rx: 3 },
      s("title", {}, `${p.label}: ${num(p.value)} rows`)));
    if (points.length <= 14 || i % Math.ceil(points.length / 10) === 0)
      svg.append(s("text", { x, y: hgt - 8 }, p.label.slice(5)));
  });
  return svg;
}

function stepChart(points, label) {
  const w = 560, hgt = 190, pad = 34;
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${w} ${hgt}`, role: "img", "aria-label": label });
  if (!points.length) { svg.append(s("text", { x: w / 2 - 40, y: hgt / 2 }, "nothing yet")); return svg; }
  const t0 = points[0].t, t1 = Math.max(points[points.length - 1].t, t0 + 1);
  const max = Math.max(...points.map((p) => p.value), 1);
  const x = (t) => pad + ((w - pad - 8) * (t - t0)) / (t1 - t0);
  const y = (v) => hgt - 24 - ((hgt - 44) * v) / max;
  let d = `M ${x(points[0].t)} ${y(points[0].value)}`;
  for (let i = 1; i < points.length; i += 1) d += ` H ${x(points[i].t)} V ${y(points[i].value)}`;
  d += ` H ${w - 8}`;
  svg.append(s("path", { class: "area", d: `${d} V ${hgt - 24} H ${x(points[0].t)} Z` }));
  svg.append(s("path", { class: "line", d }));
  svg.append(s("line", { class: "axis", x1: pad, y1: hgt - 24, x2: w, y2: hgt - 24 }));
  svg.append(s("text", { x: 2, y: 14 }, num(max)));
  // within a day and a half the axis tells times, beyond it dates
  const brief = t1 - t0 < 36 * 3600 * 1000;
  const tick = (t) => (brief ? new Date(t).toLocaleTimeString("en-GB") : new Date(t).toLocaleDateString("en-GB"));
  svg.append(s("text", { x: pad, y: hgt - 8 }, tick(t0)));
  svg.append(s("text", { x: w - 8, y: hgt - 8, "text-anchor": "end" }, tick(t1)));
  for (const p of points) {
    svg.append(s("circle", { class: "dot", cx: x(p.t), cy: y(p.value), r: 3.5 },
      s("title", {}, `${when(p.t)}: ${num(p.value)} active`)));
  }
  return svg;
}

function timeline(snapshots) {
  const colors = { ingest: "--success", replay: "--replaced", revert: "--reverted", gdpr: "--failed",
    vacuum: "--erased", compact: "--staged" };
  return h("ul", { class: "timeline", id: "timeline" }, snapshots.slice(0, 50).map((snap) => {
    const op = snap.icebatch["icebatch.operation"] || snap.operation;
    const batch = snap.icebatch["icebatch.batch-id"];
    // a CDC merge names its run (`cdc-<job>-<sequence>`), not a batch: it links to replication
    const link = !batch ? null : op === "cdc" || batch.startsWith("cdc-")
      ? h("a", { href: "/ui/cdc", title: batch }, "CDC run")
      : h("a", { href: `/ui/batches/${batch}` }, `batch ${short(batch)}`);
    return h("li", { style: `--c: var(${colors[op] || "--accent"})` },
      h("span", { class: "op" }, op), " ",
      h("span", { class: "mono muted" }, snap.snapshot_id), " ", link,
      h("div", { class: "when" }, `${when(snap.committed_at)} · ${num(snap.tombstones.total)} tombstone(s) in force`));
  }));
}

async function datasetPage() {
  const id = body.dataset.dataset;
  const [dataset, stats, snapshots, batches, timelineOf, errorGroups, consumers] = await Promise.all([
    get(`/v1/datasets/${id}`), get(`/v1/datasets/${id}/stats`),
    all(`/v1/datasets/${id}/snapshots`, 500), all(`/v1/batches?dataset_id=${id}`, 1000),
    get(`/v1/datasets/${id}/batch-timeline?bucket=hour`), get(`/v1/datasets/${id}/errors`),
    get(`/v1/datasets/${id}/consumer-lag`)]);
  document.title = `${dataset.name} · Icebatch`;
  const known = new Map(batches.map((b) => [b.id, b]));
  let since = batches.reduce((m, b) => (b.updated_at > m ? b.updated_at : m), "");
  const tbody = h("tbody", {});
  const filter = h("select", { id: "status-filter", "aria-label": "Filter by status" },
    h("option", { value: "" }, "All statuses"), BATCH_STATUSES.map((x) => h("option", { value: x }, x)));
  const search = h("input", { id: "batch-search", type: "search", placeholder: "Search batch id…", "aria-label": "Search by batch id" });
  const count = h("span", { class: "muted", id: "batch-count" });

  function draw() {
    const wanted = filter.value, text = search.value.trim().toLowerCase();
    const rows = [...known.values()]
      .filter((b) => (!wanted || b.status === wanted) && (!text || b.id.includes(text)))
      .sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    tbody.replaceChildren(...(rows.length ? rows.map(batchRow) :
      [h("tr", {}, h("td", { colspan: 8, class: "empty" }, "No batch matches."))]));
    count.textContent = `${rows.length} of ${known.size} batch(es)`;
  }
  filter.addEventListener("change", draw);
  search.addEventListener("input", draw);

  const perDay = new Map();
  for (const b of batches) {
    if (!["success", "replaced", "reverted"].includes(b.status) || !b.completed_at) continue;
    const day = b.completed_at.slice(0, 10);
    perDay.set(day, (perDay.get(day) || 0) + (b.row_count || 0));
  }
  const days = [...perDay.keys()].sort().map((d) => ({ label: d, value: perDay.get(d) }));
  const tombs = [...snapshots].reverse().map((snap) => ({ t: new Date(snap.committed_at).getTime(), value: snap.tombstones.total || 0 }));

  render(
    h("div", { class: "crumbs" }, h("a", { href: "/ui/datasets" }, "Datasets"), " / ", dataset.name),
    h("div", { class: "head" }, h("div", {}, h("h1", { id: "dataset-name" }, dataset.name),
      h("p", { class: "muted mono" }, `${dataset.table} · ${dataset.id}`))),
    h("div", { class: "grid stats" },
      [["Rows (readable)", num(stats.rows), "stat-rows"], ["Rows ingested", num(stats.rows_ingested), "stat-rows-ingested"],
        ["Batches", num(batches.length), "stat-batches"],
        ["Active tombstones", num(stats.active_tombstones), "stat-tombstones"], ["Snapshots", num(stats.snapshots), "stat-snapshots"],
        ["Last ingest", when(stats.last_ingest_at), "stat-last"]].map(([label, value, sid]) =>
        h("div", { class: "stat", id: sid }, h("div", { class: "label" }, label),
          h("div", { class: sid === "stat-last" ? "value small" : "value" }, value)))),
    h("div", { class: "grid two" },
      h("section", { class: "card" }, h("h2", {}, "Rows ingested per day"), barChart(days, "Rows ingested per day")),
      h("section", { class: "card" }, h("h2", {}, "Active tombstones over time"), stepChart(tombs, "Active tombstones over time"))),
    h("div", { class: "grid two" },
      h("section", { class: "card", id: "batch-timeline" }, h("h2", {}, "Batches per hour, by status (48 h)"),
        stackedBars(timelineOf.buckets, BATCH_STATUSES, "Batches per hour by status", true)),
      h("section", { class: "card", id: "error-groups" }, h("h2", {}, "Row errors by reason"),
        errorGroups.groups.length ? h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Reason"),
          h("th", { class: "num" }, "Errors"), h("th", { class: "num" }, "Batches"), h("th", {}, "Newest"))),
        h("tbody", {}, errorGroups.groups.map((g) => h("tr", { "data-reason": g.reason },
          h("td", {}, g.reason), h("td", { class: "num", "data-field": "errors" }, num(g.errors)),
          h("td", { class: "num", "data-field": "batches" }, num(g.batches)),
          h("td", {}, g.batch_ids.map((b) => h("a", { class: "mono", href: `/ui/batches/${b}` }, `${short(b)} `)), when(g.last_at))))))
          : h("p", { class: "empty" }, "No row errors."))),
    h("section", { class: "card", id: "consumers" }, h("h2", {}, "Consumer checkpoints"),
      consumers.consumers.length ? h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Consumer"), h("th", {}, "Checkpoint snapshot"),
        h("th", { class: "num" }, "Snapshots behind"), h("th", { class: "num" }, "Behind"), h("th", {}, "Moved"))),
      h("tbody", {}, consumers.consumers.map((c) => h("tr", { "data-consumer": c.name },
        h("td", {}, c.name), h("td", { class: "mono" }, c.snapshot_id ?? "–"),
        h("td", { class: "num", "data-field": "snapshots-behind" }, num(c.snapshots_behind)),
        h("td", { class: "num", "data-field": "seconds-behind" }, c.seconds_behind === null ? "–" : seconds(c.seconds_behind)),
        h("td", {}, when(c.updated_at))))))
        : h("p", { class: "empty" }, "No consumer: register one with POST /v1/datasets/{id}/consumers.")),
    h("section", { class: "card" }, h("h2", {}, "Batches"),
      h("div", { class: "toolbar" }, filter, search, h("span", { class: "spacer" }), count),
      legend(),
      h("table", { id: "batches" }, h("thead", {}, h("tr", {}, ["Batch", "Status"].map((t) => h("th", {}, t)),
        h("th", { class: "num" }, "Files"), h("th", { class: "num" }, "Rows"), h("th", { class: "num" }, "Bytes"),
        h("th", {}, "Created"), h("th", { class: "num" }, "Duration"), h("th", {}, "Snapshot"))), tbody)),
    h("section", { class: "card" }, h("h2", {}, "Snapshot timeline"), snapshots.length ? timeline(snapshots) : h("p", { class: "empty" }, "No snapshot yet.")),
  );
  draw();

  // in-flight rows poll (a 304 while unchanged); finished rows stop
  setInterval(async () => {
    for (const b of [...known.values()].filter((x) => IN_FLIGHT.has(x.status))) {
      try {
        const { data, changed } = await api(`/v1/batches/${b.id}`, { conditional: true });
        if (changed) { known.set(b.id, data); draw(); }
      } catch (error) { failure(error); }
    }
  }, POLL_MS);
  // new batches (and any change) since the newest update this page has seen
  setInterval(async () => {
    try {
      const path = `/v1/batches?dataset_id=${id}` + (since ? `&updated_since=${encodeURIComponent(since)}` : "");
      const fresh = await all(path, 500);
      if (!fresh.length) return;
      for (const b of fresh) { known.set(b.id, b); if (b.updated_at > since) since = b.updated_at; }
      draw();
    } catch (error) { failure(error); }
  }, LIST_POLL_MS);
}

function errorsCsv(errors) {
  const cols = ["file", "row", "field", "value", "reason"];
  const cell = (v) => `"${String(v ?? "").replaceAll('"', '""')}"`;
  return [cols.join(","), ...errors.map((e) => cols.map((c) => cell(e[c])).join(","))].join("\n") + "\n";
}

function restatedBy(r) {
  if (!r) return "–";
  const job = r.job_id ? [" · job ", h("a", { class: "mono", href: `/ui/jobs/${r.job_id}` }, short(r.job_id))] : [];
  const what = r.kind === "replay" && r.batch_id
    ? ["replay batch ", h("a", { class: "mono", href: `/ui/batches/${r.batch_id}` }, short(r.batch_id))]
    : [h("span", { title: `restatement ${r.id}` }, r.kind)];
  return h("span", { id: "restated-by", "data-kind": r.kind }, what, ` (${r.state})`, job);
}

async function batchPage() {
  const id = body.dataset.batch;
  const path = `/v1/batches/${id}`;
  let batch = (await api(path, { conditional: true })).data;
  const dataset = await get(`/v1/datasets/${batch.dataset_id}`);
  let job = batch.job_id ? (await api(`/v1/jobs/${batch.job_id}`, { conditional: true })).data : null;
  const holder = h("div", {});

  function draw() {
    const done = !IN_FLIGHT.has(batch.status);
    const fraction = done ? 1 : (job ? job.progress : 0);
    const errors = batch.errors || [];
    const download = h("button", { class: "secondary", id: "download-errors", type: "button", onclick: () => {
      const link = h("a", { href: URL.createObjectURL(new Blob([errorsCsv(errors)], { type: "text/csv" })), download: `batch-${id}-errors.csv` });
      link.click();
    } }, "Download errors (CSV)");
    fill(holder,
      h("div", { class: "crumbs" }, h("a", { href: "/ui/datasets" }, "Datasets"), " / ",
        h("a", { href: `/ui/datasets/${dataset.id}` }, dataset.name), " / batch"),
      h("div", { class: "head" }, h("div", {}, h("h1", { class: "mono" }, id),
        h("p", {}, pill(batch.status), " ", h("span", { class: "muted" }, `${batch.format} · ${num(batch.file_count)} file(s)`)))),
      stuckFlag(batch.stuck),
      h("section", { class: "card" }, h("h2", {}, "Progress"),
        h("div", { class: `progress ${batch.status === "failed" ? "failed" : done ? "done" : ""}`, id: "progress",
          role: "progressbar", "aria-valuenow": Math.round(100 * fraction), "aria-valuemin": 0, "aria-valuemax": 100 },
        h("div", { style: `width: ${Math.round(100 * fraction)}%` })),
        h("p", { id: "stage" }, h("strong", {}, done ? batch.status : (job ? `${job.state}: ${job.stage}` : batch.status)),
          h("span", { class: "muted" }, ` · ${Math.round(100 * fraction)}%`))),
      h("section", { class: "card" }, h("h2", {}, "Details"), h("dl", { class: "fields" },
        [["Dataset", h("a", { href: `/ui/datasets/${dataset.id}` }, dataset.name)], ["Rows", num(batch.row_count)],
          ["Bytes", bytes(batch.bytes)], ["Snapshot", batch.snapshot_id ?? "–"], ["Created", when(batch.created_at)],
          ["Completed", when(batch.completed_at)], ["Duration", duration(batch.created_at, batch.completed_at)],
          ["Job", batch.job_id ? h("a", { class: "mono", href: `/ui/jobs/${batch.job_id}` }, batch.job_id) : "–"],
          ["Replaces", batch.replay ? batch.replay.predecessors.map((p) => h("a", { href: `/ui/batches/${p}`, class: "mono" }, `${short(p)} `)) : "–"],
          ["Restated", when(batch.restated_at)],
          ["Restated by", restatedBy(batch.restatement)],
          ["Files", (batch.files || []).map((f) => `${f.name} (${bytes(f.bytes)})`).join(", ") || "–"]]
          .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))),
      errors.length ? h("section", { class: "card", id: "errors" },
        h("div", { class: "toolbar" }, h("h2", {}, `Row-level errors (${errors.length})`), h("span", { class: "spacer" }), download),
        h("table", { id: "errors-table" }, h("thead", {}, h("tr", {}, ["File", "Row", "Field", "Value", "Reason"].map((t) => h("th", {}, t)))),
          h("tbody", {}, errors.map((e) => h("tr", {}, h("td", {}, e.file ?? "–"), h("td", { class: "num" }, e.row ?? "–"),
            h("td", { class: "mono" }, e.field ?? "–"), h("td", { class: "mono" }, e.value ?? "–"), h("td", {}, e.reason ?? "–")))))) : null,
    );
  }
  render(holder);
  draw();
  const timer = setInterval(async () => {
    if (!IN_FLIGHT.has(batch.status)) { clearInterval(timer); return; }
    try {
      const next = await api(path, { conditional: true });
      let moved = next.changed;
      batch = next.data;
      if (batch.job_id) {
        const j = await api(`/v1/jobs/${batch.job_id}`, { conditional: true });
        moved = moved || j.changed;
        job = j.data;
      }
      if (moved) draw();
    } catch (error) { failure(error); }
  }, POLL_MS);
}

// -- jobs --------------------------------------------------------------------------------
const JOB_KINDS = ["ingest", "revert", "replay", "gdpr", "vacuum", "compact", "expire", "export", "materialize", "cdc_stage", "cdc_process"];
const JOB_STATES = ["queued", "running", "succeeded", "failed"];
const secs = (n) => (n === null || n === undefined ? "–" : `${Number(n).toFixed(1)} s`);

// stuck work, as the API flags it (`stuck`: reason and the action that resolves it)
function stuckFlag(stuck) {
  if (!stuck) return null;
  return h("section", { class: "card stuck", id: "stuck", role: "alert" },
    h("h2", {}, "⚠ Stuck"), h("p", { id: "stuck-reason" }, stuck.reason),
    h("p", {}, h("strong", {}, "Action: "), h("span", { id: "stuck-action" }, stuck.action)));
}

// what a job serves, linked: its batch, privacy job (or restatement) and dataset
function jobServes(j, names = new Map()) {
  const out = [];
  if (j.batch_id) out.push(h("a", { href: `/ui/batches/${j.batch_id}`, class: "mono serves-batch" }, `batch ${short(j.batch_id)}`));
  if (j.privacy_job_id) out.push(h("a", { href: `/ui/privacy/${j.privacy_job_id}`, class: "mono serves-privacy" }, `privacy ${short(j.privacy_job_id)}`));
  else if (j.restatement_id) out.push(h("span", { class: "mono serves-restatement", title: j.restatement_id }, `${j.kind} ${short(j.restatement_id)}`));
  if (!out.length && j.dataset_id) out.push(h("a", { href: `/ui/datasets/${j.dataset_id}`, class: "serves-dataset" }, names.get(j.dataset_id) || short(j.dataset_id)));
  return out.length ? out.flatMap((x, i) => (i ? [" ", x] : [x])) : "–";
}

function jobRow(j, names) {
  return h("tr", { id: `job-${j.id}`, "data-state": j.state, class: j.stuck ? "stuck" : null },
    h("td", { class: "mono", title: j.id }, h("a", { href: `/ui/jobs/${j.id}` }, short(j.id))), h("td", {}, j.kind),
    h("td", {}, pill(j.state), j.stuck ? h("span", { class: "flag stuck-flag", title: `${j.stuck.reason} — ${j.stuck.action}` }, " ⚠ stuck") : null),
    h("td", { class: "dataset" }, j.dataset_id ? h("a", { href: `/ui/datasets/${j.dataset_id}` }, names.get(j.dataset_id) || short(j.dataset_id)) : "–"),
    h("td", { class: "serves" }, jobServes(j, names)),
    h("td", {}, j.stage), h("td", { class: "num" }, `${Math.round(100 * j.progress)}%`),
    h("td", { class: "num" }, j.attempt), h("td", {}, when(j.created_at)),
    h("td", { class: "num" }, j.duration_seconds === null ? "–" : `${j.duration_seconds.toFixed(1)} s`),
    h("td", { class: "error" }, j.error || ""));
}

// the filters as GET /v1/jobs's query (and this page's own URL, so a filtered view can be shared)
function jobFilters(form) {
  const q = new URLSearchParams();
  for (const name of ["kind", "state", "dataset_id"]) { const v = form.elements[name].value; if (v) q.set(name, v); }
  for (const name of ["since", "until"]) { const v = form.elements[name].value; if (v) q.set(name, new Date(v).toISOString()); }
  return q;
}

async function jobsPage() {
  const datasets = await all("/v1/datasets", 1000);
  const names = new Map(datasets.map((d) => [d.id, d.name]));
  const wanted = new URLSearchParams(location.search);
  const select = (name, label, options) => h("label", {}, label, " ", h("select", { name, id: `filter-${name}` }, h("option", { value: "" }, "all"),
    options.map(([v, t]) => h("option", { value: v, selected: wanted.get(name) === v }, t))));
  const local = (iso) => { if (!iso) return ""; const d = new Date(iso); return new Date(d - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19); };
  const form = h("form", { id: "job-filters", class: "toolbar" },
    select("kind", "Kind", JOB_KINDS.map((k) => [k, k])), select("state", "State", JOB_STATES.map((k) => [k, k])),
    select("dataset_id", "Dataset", datasets.map((d) => [d.id, d.name])),
    h("label", {}, "From ", h("input", { type: "datetime-local", step: "1", name: "since", id: "filter-since", value: local(wanted.get("since")) })),
    h("label", {}, "To ", h("input", { type: "datetime-local", step: "1", name: "until", id: "filter-until", value: local(wanted.get("until")) })));
  const tbody = h("tbody", {});
  const count = h("span", { id: "jobs-count", class: "muted" });
  let known = new Map();
  let since = "";
  let query = jobFilters(form);
  const draw = () => {
    const rows = [...known.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    tbody.replaceChildren(...(rows.length ? rows.map((j) => jobRow(j, names)) : [h("tr", {}, h("td", { colspan: 11, class: "muted" }, "No job matches."))]));
    count.textContent = `${rows.length} job(s)`;
  };
  let loads = 0; // a filter changed again while a list was loading: only the last one counts
  const load = async () => {
    const mine = ++loads;
    query = jobFilters(form);
    history.replaceState(null, "", `/ui/jobs${query.size ? `?${query}` : ""}`);
    const jobs = await all(`/v1/jobs${query.size ? `?${query}` : ""}`, 500);
    if (mine !== loads) return;
    known = new Map(jobs.map((j) => [j.id, j]));
    since = jobs.reduce((m, j) => (j.updated_at > m ? j.updated_at : m), "");
    draw();
    body.dataset.loaded = query.toString() || "all";
  };
  form.addEventListener("change", () => load().catch(failure));
  render(h("div", { class: "head" }, h("div", {}, h("h1", {}, "Jobs"), h("p", { class: "muted" }, "Ingests, restatements, vacuums, exports: newest first"))),
    h("section", { class: "card" }, form, count, h("table", { id: "jobs" }, h("thead", {}, h("tr", {},
      ["Job", "Kind", "State", "Dataset", "Serves", "Stage"].map((t) => h("th", {}, t)), h("th", { class: "num" }, "Progress"),
      h("th", { class: "num" }, "Attempt"), h("th", {}, "Created"), h("th", { class: "num" }, "Duration"), h("th", {}, "Error"))), tbody)));
  await load();
  setInterval(async () => {
    try {
      for (const j of [...known.values()].filter((x) => IN_FLIGHT.has(x.state))) {
        const { data, changed } = await api(`/v1/jobs/${j.id}`, { conditional: true });
        if (changed) known.set(j.id, data);
      }
      const q = new URLSearchParams(query);
      if (since) q.set("updated_since", since);
      const seen = loads;
      const fresh = await all(`/v1/jobs${q.size ? `?${q}` : ""}`, 500);
      if (seen !== loads) return; // the filters changed meanwhile: that load has the list
      for (const j of fresh) { known.set(j.id, j); if (j.updated_at > since) since = j.updated_at; }
      draw();
    } catch (error) { failure(error); }
  }, POLL_MS);
}

async function jobPage() {
  const id = body.dataset.job;
  const path = `/v1/jobs/${id}`;
  let job = (await api(path, { conditional: true })).data;
  const dataset = job.dataset_id ? await get(`/v1/datasets/${job.dataset_id}`).catch(() => null) : null;
  const names = new Map(dataset ? [[dataset.id, dataset.name]] : []);
  const holder = h("div", {});
  const draw = () => fill(holder,
    h("div", { class: "crumbs" }, h("a", { href: "/ui/jobs" }, "Jobs"), " / ", short(id)),
    h("div", { class: "head" }, h("div", {}, h("h1", {}, `${job.kind} job`), h("p", { class: "mono muted" }, id),
      h("p", {}, pill(job.state), h("span", { class: "muted" }, ` · ${job.stage} · ${Math.round(100 * job.progress)}%`)))),
    stuckFlag(job.stuck),
    h("section", { class: "card" }, h("h2", {}, "Details"), h("dl", { class: "fields", id: "job-fields" },
      [["State", pill(job.state)], ["Attempts", `${job.attempt} of ${job.max_attempts}`],
        ["Dataset", job.dataset_id ? h("a", { href: `/ui/datasets/${job.dataset_id}`, id: "job-dataset" }, names.get(job.dataset_id) || job.dataset_id) : "–"],
        ["Serves", jobServes(job, names)],
        ["Request id", h("span", { class: "mono", id: "job-request" }, job.request_id)],
        ["Key id", h("span", { class: "mono", id: "job-key" }, job.key_id || "– (scheduler or system)")],
        ["Worker", job.worker || "–"], ["Created", when(job.created_at)], ["Started", when(job.started_at)],
        ["Last heartbeat", when(job.heartbeat_at)], ["Finished", when(job.finished_at)], ["Duration", secs(job.duration_seconds)]]
        .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))),
    h("section", { class: "card" }, h("h2", {}, "Stages"), h("table", { id: "job-stages" },
      h("thead", {}, h("tr", {}, ["Stage", "Started", "Ended"].map((t) => h("th", {}, t)), h("th", { class: "num" }, "Seconds"))),
      h("tbody", {}, job.stages.map((st) => h("tr", { "data-stage": st.stage }, h("td", {}, st.stage), h("td", {}, when(st.started_at)),
        h("td", {}, st.ended_at ? when(st.ended_at) : "…"), h("td", { class: "num" }, st.seconds === null ? "…" : st.seconds.toFixed(3))))))),
    job.error ? h("section", { class: "card" }, h("h2", {}, "Error"), h("pre", { class: "error", id: "job-error" }, job.error)) : null,
    job.result ? h("section", { class: "card" }, h("h2", {}, "Result"), h("pre", { class: "json" }, JSON.stringify(job.result, null, 2))) : null);
  render(holder);
  draw();
  const timer = setInterval(async () => {
    if (!IN_FLIGHT.has(job.state)) { clearInterval(timer); return; }
    try {
      const next = await api(path, { conditional: true });
      job = next.data;
      if (next.changed) draw();
    } catch (error) { failure(error); }
  }, POLL_MS);
}

async function privacyPage() {
  const id = body.dataset.job;
  const path = `/v1/privacy/jobs/${id}`;
  let job = (await api(path, { conditional: true })).data;
  const holder = h("div", {});
  const draw = () => fill(holder,
    h("div", { class: "head" }, h("div", {}, h("div", { class: "crumbs" }, h("a", { href: "/ui/privacy" }, "Privacy jobs"), " / ", short(id)),
      h("h1", {}, "Privacy job"), h("p", { class: "mono muted" }, id))),
    h("section", { class: "card" }, h("dl", { class: "fields" },
      [["Status", pill(job.status)], ["Identity column", job.column], ["Identities", num(job.value_count)],
        ["Tombstones written", num(job.tombstones_written)], ["Rows hidden", num(job.rows_hidden)],
        ["Submitted", when(job.created_at)], ["Complete", when(job.completed_at)], ["Erased", when(job.erased_at)]]
        .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))),
    h("section", { class: "card" }, h("h2", {}, "Datasets"), h("table", { id: "privacy-datasets" },
      h("thead", {}, h("tr", {}, ["Dataset", "Status"].map((t) => h("th", {}, t)),
        ["Rows hidden", "Tombstones"].map((t) => h("th", { class: "num" }, t)), h("th", {}, "Snapshot"))),
      h("tbody", {}, job.datasets.map((d) => h("tr", {}, h("td", {}, h("a", { href: `/ui/datasets/${d.dataset_id}` }, short(d.dataset_id))),
        h("td", {}, pill(d.status)), h("td", { class: "num" }, num(d.rows_hidden)), h("td", { class: "num" }, num(d.tombstones_written)),
        h("td", { class: "mono" }, d.snapshot_id ?? "–")))))),
    h("section", { class: "card", id: "receipt" }, h("h2", {}, "Erasure receipt"),
      job.receipt ? h("pre", { class: "json" }, JSON.stringify(job.receipt, null, 2))
        : h("p", { class: "muted" }, "Not erased yet: rows are hidden from every read; a vacuum and snapshot expiry remove them physically.")));
  render(holder);
  draw();
  const timer = setInterval(async () => {
    if (["erased", "failed"].includes(job.status)) { clearInterval(timer); return; }
    try {
      const next = await api(path, { conditional: true });
      job = next.data;
      if (next.changed) draw();
    } catch (error) { failure(error); }
  }, job.status === "complete" ? 10000 : POLL_MS);
}

function privacyRow(p) {
  return h("tr", { id: `privacy-${p.id}`, "data-status": p.status },
    h("td", { class: "mono", title: p.id }, h("a", { href: `/ui/privacy/${p.id}` }, short(p.id))),
    h("td", {}, pill(p.status)), h("td", {}, p.column), h("td", { class: "num" }, num(p.value_count)),
    h("td", { class: "num" }, num(p.datasets.length)), h("td", { class: "num" }, num(p.rows_hidden)),
    h("td", { class: "num" }, num(p.tombstones_written)), h("td", {}, when(p.created_at)),
    h("td", {}, p.receipt ? "erased " + when(p.erased_at) : "–"));
}

async function privacyJobsPage() {
  const known = new Map((await all("/v1/privacy/jobs", 500)).map((p) => [p.id, p]));
  const tbody = h("tbody", {});
  const draw = () => {
    const rows = [...known.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1)).map(privacyRow);
    tbody.replaceChildren(...(rows.length ? rows
      : [h("tr", {}, h("td", { colspan: 9, class: "muted" }, "No privacy job yet: POST /v1/privacy/jobs (or icebatch privacy delete)."))]));
  };
  render(h("div", { class: "head" }, h("div", {}, h("h1", {}, "Privacy jobs"),
      h("p", { class: "muted" }, "GDPR deletes: rows hidden at once, erased physically by vacuum and expiry"))),
    h("section", { class: "card" }, h("table", { id: "privacy-jobs" }, h("thead", {}, h("tr", {},
      ["Job", "Status", "Column"].map((t) => h("th", {}, t)),
      ["Identities", "Datasets", "Rows hidden", "Tombstones"].map((t) => h("th", { class: "num" }, t)),
      h("th", {}, "Submitted"), h("th", {}, "Erasure receipt"))), tbody)));
  draw();
  // in-flight jobs poll with If-None-Match; finished ones stay as they are
  const timer = setInterval(async () => {
    const moving = [...known.values()].filter((p) => ["submitted", "processing"].includes(p.status));
    if (!moving.length) { clearInterval(timer); return; }
    try {
      let changed = false;
      for (const p of moving) {
        const next = await api(`/v1/privacy/jobs/${p.id}`, { conditional: true });
        if (next.changed) { known.set(p.id, next.data); changed = true; }
      }
      if (changed) draw();
    } catch (error) { failure(error); }
  }, POLL_MS);
}

// -- replication ---------------------------------------------------------------------------
function seconds(value) {
  if (!value) return "0 s";
  if (value < 120) return `${value.toFixed(1)} s`;
  if (value < 7200) return `${(value / 60).toFixed(1)} min`;
  return `${(value / 3600).toFixed(1)} h`;
}

function lagCard(lag) {
  const of = (n) => (lag.accepted ? Math.min(100, (100 * n) / lag.accepted) : 100);
  const meter = (label, n) => {
    const bar = h("span", { class: "meter-fill" });
    bar.style.width = `${of(n).toFixed(1)}%`; // the CSP allows CSSOM, not style attributes
    return h("div", { class: "meter-row" }, h("span", {}, label), h("span", { class: "meter" }, bar),
      h("span", { class: "num", "data-stage": label.toLowerCase() }, num(n)));
  };
  const behind = lag.processed < lag.accepted;
  return h("section", { class: "card", id: `lag-${lag.tenant}`, "data-behind": String(behind) },
    h("h2", {}, `Tenant ${lag.tenant} `, pill(behind ? "processing" : "success")),
    h("div", { class: "meters" }, meter("Accepted", lag.accepted), meter("Staged", lag.staged), meter("Processed", lag.processed)),
    h("dl", { class: "fields" },
      [["Staging lag", seconds(lag.staging_lag_seconds)], ["Oldest unstaged event", seconds(lag.oldest_unstaged_age_seconds)],
        ["Replication lag", seconds(lag.replication_lag_seconds)], ["Oldest unapplied event", seconds(lag.oldest_unprocessed_age_seconds)],
        ["Newest applied event", when(lag.newest_processed_timestamp)], ["Last processed", when(lag.processed_at)]]
        .map(([k, v]) => [h("dt", {}, k), h("dd", { "data-field": k }, v)])),
    streamsTable(lag.streams || []));
}

// the Debezium Redis streams the tenant reads: pending, undelivered, oldest entry's age
function streamsTable(streams) {
  if (!streams.length) return null;
  return h("table", { id: "cdc-streams" },
    h("thead", {}, h("tr", {}, ["Stream", "Entries", "Pending", "Undelivered", "Oldest waiting", "Set aside", ""]
      .map((c) => h("th", {}, c)))),
    h("tbody", {}, streams.map((s) => h("tr", { "data-stream": s.stream },
      h("td", {}, s.stream), h("td", { class: "num" }, num(s.length)), h("td", { class: "num", "data-col": "pending" }, num(s.pending)),
      h("td", { class: "num", "data-col": "undelivered" }, s.undelivered === null ? "?" : num(s.undelivered)),
      h("td", { class: "num" }, seconds(Math.max(s.oldest_pending_age_seconds, s.oldest_undelivered_age_seconds))),
      h("td", { class: "num", "data-col": "dead" }, num(s.dead_letters)),
      h("td", { class: "muted" }, s.error || "")))));
}

async function cdcPage() {
  const config = (await api("/v1/cdc/config")).data;
  const card = h("div", {});
  const history = h("div", {});
  const found = h("div", {});
  const input = h("input", { id: "profile-id", placeholder: "entity id", required: true });
  const form = h("form", { id: "profile-form", class: "inline" }, input, h("button", { type: "submit" }, "Show profile"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const p = (await api(`/v1/cdc/profiles/${encodeURIComponent(input.value.trim())}`)).data;
      fill(found, h("dl", { class: "fields" }, [["Cluster", p.cluster_id], ["Members", p.members.join(", ")],
        ["Records", num(p.records.length)]].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
        h("pre", { class: "json", id: "profile-merged" }, JSON.stringify(p.merged, null, 2)));
    } catch (error) {
      fill(found, h("p", { class: "muted" }, error.status === 404 ? "No record or link of that identity." : String(error.message || error)));
    }
  });
  render(h("div", { class: "head" }, h("div", {}, h("h1", {}, "Replication"),
      h("p", { class: "muted" }, "Change events → staging → the raw table",
        config.raw_dataset_id ? [" (", h("a", { href: `/ui/datasets/${config.raw_dataset_id}` }, config.raw_table), ")"] : ""))),
    card, h("section", { class: "card", id: "replication-history" }, h("h2", {}, "Replication lag over time"), history),
    h("section", { class: "card" }, h("h2", {}, "Merged profile"), form, found));
  const draw = async () => {
    fill(card, lagCard((await api("/v1/cdc/lag")).data));
    const samples = (await api("/v1/cdc/lag/history")).data;
    fill(history, lineChart(samples.samples.map((p) => ({ t: new Date(p.at).getTime(), value: p.replication_lag_seconds })),
      `Replication lag of tenant ${samples.tenant}`, "s"),
    h("p", { class: "muted", id: "lag-samples", "data-count": String(samples.samples.length) },
      `${samples.samples.length} sample(s), one per ${samples.sample_seconds} s at most, kept ${seconds(samples.retention_seconds)}`));
  };
  await draw();
  setInterval(() => draw().catch(failure), POLL_MS);
}

// -- start -------------------------------------------------------------------------------
const pages = { datasets: datasetsPage, dataset: datasetPage, batch: batchPage, jobs: jobsPage, job: jobPage,
  privacy: privacyPage, "privacy-jobs": privacyJobsPage, cdc: cdcPage };
const name = body.dataset.page;
if (name === "login") {
  loginPage();
} else if (!sessionStorage.getItem(KEY)) {
  signOut("");
} else {
  const key = sessionStorage.getItem(KEY);
  document.getElementById("who").textContent = `key ${key.split("_")[1] || ""}…`;
  document.getElementById("sign-out").addEventListener("click", () => signOut(""));
  pages[name]().catch(failure);
}
