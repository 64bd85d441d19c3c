// Charts of the monitoring pages (inline SVG, no third-party code): batches over time stacked
// by status (the dataset page) and a line over time (the replication page's lag).

const svgNS = "http://www.w3.org/2000/svg";
// an SVG element (the UI's other drawings use it too)
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}
const W = 560, H = 190, PAD = 34;

// `buckets`: [{start, counts: {status: n}}], oldest first; one stacked bar per bucket
export function stackedBars(buckets, statuses, label, hourly) {
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label });
  const totals = buckets.map((b) => Object.values(b.counts).reduce((a, n) => a + n, 0));
  const max = Math.max(...totals, 0);
  if (!max) { svg.append(s("text", { x: W / 2 - 40, y: H / 2 }, "nothing yet")); return svg; }
  const step = (W - PAD - 10) / buckets.length, bw = Math.max(2, step - 2);
  svg.append(s("line", { class: "axis", x1: PAD, y1: H - 24, x2: W, y2: H - 24 }));
  svg.append(s("text", { x: 2, y: 14 }, String(max)));
  buckets.forEach((b, i) => {
    const x = PAD + 6 + i * step;
    let y = H - 24;
    const at = new Date(b.start);
    const tag = hourly ? at.toISOString().slice(11, 16) : at.toISOString().slice(5, 10);
    for (const status of statuses) {
      const n = b.counts[status] || 0;
      if (!n) continue;
      const bh = ((H - 44) * n) / max;
      y -= bh;
      svg.append(s("rect", { class: `seg status-${status}`, x, y, width: bw, height: bh, "data-status": status, "data-n": n, "data-start": b.start },
        s("title", {}, `${b.start.slice(0, 16)}: ${n} ${status}`)));
    }
    if (i % 8 === 0) svg.append(s("text", { x, y: H - 8 }, tag));
  });
  return svg;
}

// `points`: [{t (ms), value}], oldest first
export function lineChart(points, label, unit) {
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label });
  if (!points.length) { svg.append(s("text", { x: W / 2 - 40, y: H / 2 }, "no sample yet")); return svg; }
  const t0 = points[0].t, t1 = Math.max(points[points.length - 1].t, t0 + 1);
  const max = Math.max(...points.map((p) => p.value), 1);
  const x = (t) => PAD + ((W - PAD - 8) * (t - t0)) / (t1 - t0);
  const y = (v) => H - 24 - ((H - 44) * v) / max;
  const d = points.map((p, i) => `${i ? "L" : "M"} ${x(p.t)} ${y(p.value)}`).join(" ");
  svg.append(s("path", { class: "line", d }));
  svg.append(s("line", { class: "axis", x1: PAD, y1: H - 24, x2: W, y2: H - 24 }));
  svg.append(s("text", { x: 2, y: 14 }, `${max.toFixed(1)} ${unit}`));
  svg.append(s("text", { x: PAD, y: H - 8 }, new Date(t0).toLocaleTimeString("en-GB")));
  svg.append(s("text", { x: W - 8, y: H - 8, "text-anchor": "end" }, new Date(t1).toLocaleTimeString("en-GB")));
  for (const p of points) {
    svg.append(s("circle", { class: "dot", cx: x(p.t), cy: y(p.value), r: 2.5, "data-value": p.value },
      s("title", {}, `${new Date(p.t).toLocaleTimeString("en-GB")}: ${p.value.toFixed(1)} ${unit}`)));
  }
  return svg;
}
