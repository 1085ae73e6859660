// The viewer's plots, drawn by the page itself as SVG (no request out, no library): pure
// functions from numbers to elements. A distribution of a run's numbers (bins, never an
// element per eval; a log scale where the values span two decades or more), a trend across
// runs (a point per run, the changes the history marked, each with its commit), and a
// comparison's differences with their intervals around zero. Colours are viewer.css's
// variables (classes here, `var(--…)` there). Every bar and point carries its numbers in
// data-* attributes and a <title> (the hover text), so what is drawn can be read back.
"use strict";
const NiceevalPlots = (() => {
  const NS = "http://www.w3.org/2000/svg";
  // s("rect", {x: 1}, child, ...): an SVG element.
  function s(tag, attrs, ...children) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : String(c));
    }
    return node;
  }
  const title = (text) => s("title", {}, text);
  // A number as a short text: 3 significant digits, no trailing zeros.
  const short = (x) => {
    if (x === 0) return "0";
    const a = Math.abs(x);
    if (a >= 1e6) return +(x / 1e6).toPrecision(3) + "M";
    if (a >= 1e4) return +(x / 1e3).toPrecision(3) + "k";
    return String(+x.toPrecision(3));
  };
  const plain = (x) => short(x);

  // The bins of `values` (numbers, unknown ones left out before): `bins` equal bins over
  // [lo, hi] (`domain`, else the values' range), or equal in log scale when `log` is "auto"
  // and the positive values span two decades or more (values at 0 or below are then counted
  // apart, `zeros`). Returns {edges, counts, log, zeros, n, min, max}.
  function bins(values, options) {
    const o = options || {};
    const n = values.length;
    let min = Infinity, max = -Infinity, positive = Infinity;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v < min) min = v;
      if (v > max) max = v;
      if (v > 0 && v < positive) positive = v;
    }
    if (!n) return { edges: [], counts: [], log: false, zeros: 0, n: 0, min: NaN, max: NaN };
    const log = o.log === "auto" && !o.domain && positive < Infinity && max / positive >= 100;
    let lo = o.domain ? o.domain[0] : log ? positive : min;
    let hi = o.domain ? o.domain[1] : max;
    const count = o.bins || Math.max(1, Math.min(30, Math.ceil(Math.sqrt(n))));
    if (!(hi > lo)) {
      // One value (or all equal): one bin holding them all.
      return { edges: [lo, hi], counts: [n], log: false, zeros: 0, n, min, max };
    }
    const [a, b] = log ? [Math.log10(lo), Math.log10(hi)] : [lo, hi];
    const edges = [];
    for (let k = 0; k <= count; k++) {
      const e = a + ((b - a) * k) / count;
      edges.push(log ? Math.pow(10, e) : e);
    }
    edges[0] = lo;
    edges[count] = hi;
    const counts = new Array(count).fill(0);
    let zeros = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (log && v <= 0) { zeros++; continue; }
      if (v < lo || v > hi) continue;
      let k = Math.floor((((log ? Math.log10(v) : v) - a) * count) / (b - a));
      if (k >= count) k = count - 1;
      if (k < 0) k = 0;
      // Floating point at an edge: the bin whose [lo, hi) holds it.
      while (k > 0 && v < edges[k]) k--;
      while (k < count - 1 && v >= edges[k + 1]) k++;
      counts[k]++;
    }
    return { edges, counts, log, zeros, n, min, max };
  }

  // A quantile of sorted numbers.
  const quantile = (sorted, q) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;

  // A histogram of `values` in a <figure>: `name` (its data-plot), a title, `format` for the
  // axis, options for `bins`. Bars' heights are counts (the tallest labelled), the x axis the
  // bins' edges (log scale said so), the caption the count, median and 90th percentile.
  // `values` may come binned already (the served page: the server bins the evals the filters
  // keep, the page holding only the rows in view): `{edges, counts, log, zeros, n, median,
  // p90}`, as `bins` makes them.
  function histogram(name, heading, values, format, options) {
    const f = format || plain;
    const binned = values && !ArrayBuffer.isView(values) && !Array.isArray(values) ? values : null;
    const b = binned ? { min: NaN, max: NaN, ...binned } : bins(values, options);
    const W = 300, H = 132, left = 34, right = 8, top = 14, bottom = 34;
    const plot = s("svg", { class: "plot", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": heading + " distribution" });
    const figure = document.createElement("figure");
    figure.className = "plot dist";
    figure.dataset.plot = name;
    figure.dataset.n = String(b.n);
    figure.dataset.log = String(b.log);
    const caption = document.createElement("figcaption");
    caption.append(heading);
    figure.append(caption, plot);
    if (!b.n) {
      plot.append(s("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, "no values"));
      figure.dataset.n = "0";
      return figure;
    }
    const max = Math.max(1, ...b.counts);
    const inner = W - left - right, tall = H - top - bottom;
    const bw = inner / b.counts.length;
    plot.append(
      s("line", { x1: left, x2: W - right, y1: top + tall, y2: top + tall, class: "axis" }),
      s("line", { x1: left, x2: left, y1: top, y2: top + tall, class: "axis" }),
      s("text", { x: left - 4, y: top + 4, "text-anchor": "end", class: "tick" }, short(max)),
      s("text", { x: left - 4, y: top + tall, "text-anchor": "end", class: "tick" }, "0"),
      s("text", { x: 8, y: top + tall / 2, "text-anchor": "middle", class: "label", transform: `rotate(-90 8 ${top + tall / 2})` }, "evals"),
    );
    b.counts.forEach((c, k) => {
      const h = (c / max) * tall;
      const [lo, hi] = [b.edges[k], b.edges[k + 1]];
      const last = k === b.counts.length - 1;
      plot.append(s("rect", {
        class: "bar", x: (left + k * bw + 0.5).toFixed(2), y: (top + tall - h).toFixed(2), width: Math.max(0.5, bw - 1).toFixed(2), height: h.toFixed(2),
        "data-lo": lo, "data-hi": hi, "data-count": c, "data-last": last ? "1" : null,
      }, title(`${f(lo)} – ${f(hi)}${last ? "" : " (excl.)"}: ${c} eval${c === 1 ? "" : "s"}`)));
      // A count over its bar where it fits (about 5.5 units a digit).
      if (c && bw >= 5.5 * short(c).length + 3) {
        plot.append(s("text", { x: (left + k * bw + bw / 2).toFixed(2), y: (top + tall - h - 2).toFixed(2), "text-anchor": "middle", class: "count" }, short(c)));
      }
    });
    // Ticks: the ends, and in log scale each power of ten between them.
    const x = (v) => left + (b.log ? (Math.log10(v) - Math.log10(b.edges[0])) / (Math.log10(b.edges[b.edges.length - 1]) - Math.log10(b.edges[0])) : (v - b.edges[0]) / (b.edges[b.edges.length - 1] - b.edges[0] || 1)) * inner;
    const ticks = [b.edges[0], b.edges[b.edges.length - 1]];
    if (b.log) {
      for (let p = Math.ceil(Math.log10(b.edges[0])); p <= Math.floor(Math.log10(ticks[1])); p++) ticks.push(Math.pow(10, p));
    } else if (b.edges.length > 2) {
      ticks.push((ticks[0] + ticks[1]) / 2);
    }
    let placed = [];
    for (const t of ticks.sort((p, q) => p - q)) {
      const at = x(t);
      if (placed.some((q) => Math.abs(q - at) < 34)) continue;
      placed.push(at);
      const anchor = at < left + 10 ? "start" : at > W - right - 10 ? "end" : "middle";
      plot.append(s("line", { x1: at, x2: at, y1: top + tall, y2: top + tall + 3, class: "axis" }),
        s("text", { x: at, y: top + tall + 13, "text-anchor": anchor, class: "tick" }, f(t)));
    }
    const sorted = binned ? null : Float64Array.from(values).sort();
    const [median, p90] = binned ? [binned.median, binned.p90] : [quantile(sorted, 0.5), quantile(sorted, 0.9)];
    const note = [`${b.n} eval${b.n === 1 ? "" : "s"}`, `median ${f(median)}`, `p90 ${f(p90)}`];
    if (b.log) note.push("log scale");
    if (b.zeros) note.push(`${b.zeros} at 0`);
    plot.append(s("text", { x: left, y: H - 4, class: "label" }, note.join(" · ")));
    figure.dataset.zeros = String(b.zeros);
    return figure;
  }

  // A trend across runs in a <figure>: `points` oldest first, each {x: label, y: number or
  // null, tip: hover text, mark: null or {text, tone}}; `domain` fixes the y range (e.g.
  // [0, 1] for a pass rate). A marked point is ringed and a dashed line drawn through it,
  // labelled `mark.label` (the commit) under the axis.
  function trend(name, heading, points, format, domain) {
    const f = format || plain;
    const W = 300, H = 122, right = 10, top = 10, bottom = 30;
    let left = 38;
    const plot = s("svg", { class: "plot", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": heading + " across runs" });
    const figure = document.createElement("figure");
    figure.className = "plot trend";
    figure.dataset.plot = name;
    const caption = document.createElement("figcaption");
    caption.append(heading);
    figure.append(caption, plot);
    const known = points.filter((p) => p.y !== null && p.y !== undefined && Number.isFinite(p.y));
    figure.dataset.n = String(points.length);
    if (!known.length) {
      plot.append(s("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, "no values"));
      return figure;
    }
    const least = Math.min(...known.map((p) => p.y)), most = Math.max(...known.map((p) => p.y));
    // A domain given is widened to values outside it, never narrowed.
    let [lo, hi] = domain ? [Math.min(domain[0], least), Math.max(domain[1], most)] : [least, most];
    if (!domain) {
      if (lo > 0 && lo < hi * 0.5) lo = 0;
      if (hi === lo) { hi = lo + (Math.abs(lo) || 1) * 0.5; lo = lo - (hi - lo); if (known.every((p) => p.y >= 0)) lo = Math.max(0, lo); }
    }
    // Room for the longer of the y axis's labels (about 6 units a character).
    left = Math.max(left, 10 + 6 * Math.max(f(hi).length, f(lo).length));
    const inner = W - left - right, tall = H - top - bottom;
    const x = (i) => left + (points.length > 1 ? (i / (points.length - 1)) * inner : inner / 2);
    const y = (v) => top + tall - ((v - lo) / (hi - lo || 1)) * tall;
    plot.append(
      s("line", { x1: left, x2: W - right, y1: top + tall, y2: top + tall, class: "axis" }),
      s("line", { x1: left, x2: left, y1: top, y2: top + tall, class: "axis" }),
      s("line", { x1: left, x2: W - right, y1: y(hi), y2: y(hi), class: "grid" }),
      s("text", { x: left - 4, y: y(hi) + 4, "text-anchor": "end", class: "tick" }, f(hi)),
      s("text", { x: left - 4, y: y(lo), "text-anchor": "end", class: "tick" }, f(lo)),
    );
    // Run numbers on the x axis: the first, the last, and a few between.
    const step = Math.max(1, Math.ceil(points.length / 6));
    points.forEach((p, i) => {
      if (i % step && i !== points.length - 1) return;
      if (i !== points.length - 1 && points.length - 1 - i < step / 2) return;
      plot.append(s("text", { x: x(i), y: top + tall + 11, "text-anchor": "middle", class: "tick" }, p.x));
    });
    // Marks first (under the line): a dashed line through the run, its commit under the axis.
    points.forEach((p, i) => {
      if (!p.mark) return;
      plot.append(
        s("line", { x1: x(i), x2: x(i), y1: top, y2: top + tall, class: "change " + p.mark.tone }),
        s("text", { x: x(i), y: H - 3, "text-anchor": i < points.length / 3 ? "start" : i > (2 * points.length) / 3 ? "end" : "middle", class: "commit " + p.mark.tone }, p.mark.label),
      );
    });
    // The line, broken where a value is unknown.
    let path = "";
    let pen = false;
    points.forEach((p, i) => {
      const known = p.y !== null && p.y !== undefined && Number.isFinite(p.y);
      if (!known) { pen = false; return; }
      path += (pen ? "L" : "M") + x(i).toFixed(2) + " " + y(p.y).toFixed(2);
      pen = true;
    });
    plot.append(s("path", { d: path, class: "line" }));
    points.forEach((p, i) => {
      const known = p.y !== null && p.y !== undefined && Number.isFinite(p.y);
      if (!known) return;
      plot.append(s("circle", {
        cx: x(i).toFixed(2), cy: y(p.y).toFixed(2), r: p.mark ? 4.5 : 2.6,
        class: "point" + (p.tone ? " " + p.tone : "") + (p.mark ? " marked " + p.mark.tone : ""),
        "data-run": i + 1, "data-y": p.y, "data-mark": p.mark ? "1" : null,
      }, title(p.tip)));
    });
    return figure;
  }

  // A comparison's differences (`rows`: [what, change, low, high, p-value, how]) as a forest
  // of rows, each on its own scale around zero: the interval as a bar, the change as a dot,
  // zero as a line; an interval clear of zero is toned (worse or better by `worse(what,
  // change)`), and its numbers are written beside it.
  function intervals(rows, format, worse, labelWidth) {
    const W = 460, row = 22, left = labelWidth || 96, right = 150, top = 6;
    const H = top * 2 + row * rows.length;
    const plot = s("svg", { class: "plot intervals", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "differences with their intervals" });
    const figure = document.createElement("figure");
    figure.className = "plot forest";
    figure.dataset.plot = "intervals";
    figure.append(plot);
    const inner = W - left - right;
    rows.forEach(([what, change, low, high, p, how], k) => {
      const cy = top + k * row + row / 2;
      const span = Math.max(Math.abs(change), Math.abs(low ?? 0), Math.abs(high ?? 0)) * 1.15 || 1;
      const x = (v) => left + ((v + span) / (2 * span)) * inner;
      const clear = low !== null && low !== undefined && (low > 0 || high < 0);
      const tone = clear ? (worse(what, change) ? "worse" : "better") : "same";
      const f = (v) => format(what, v);
      const text = how === "point" ? `${f(change)} (no interval)` : `${f(change)} [${f(low)}, ${f(high)}]${how === "welch" ? " ≈" : ""}`;
      const tip = `${what}: change ${f(change)}` + (how === "point" ? ", one value a side: no interval"
        : `, ${how === "welch" ? "approximate interval from Welch's p" : "Newcombe's interval"} [${f(low)}, ${f(high)}]`)
        + (p !== null && p !== undefined ? `, p = ${p < 0.0001 ? p.toExponential(1) : p.toFixed(4)}` : "");
      const g = s("g", { class: "interval " + tone, "data-what": what, "data-change": change, "data-low": low, "data-high": high }, title(tip));
      // A label longer than its room keeps its end (an id's own name).
      const room = Math.floor((left - 8) / 5.6);
      const label = what.length > room ? "…" + what.slice(what.length - room + 1) : what;
      g.append(
        s("text", { x: left - 6, y: cy + 4, "text-anchor": "end", class: "label" }, label),
        s("line", { x1: x(0), x2: x(0), y1: cy - row / 2 + 2, y2: cy + row / 2 - 2, class: "zero" }),
      );
      if (how !== "point") g.append(s("line", { x1: x(low), x2: x(high), y1: cy, y2: cy, class: "whisker" }),
        s("line", { x1: x(low), x2: x(low), y1: cy - 4, y2: cy + 4, class: "whisker" }),
        s("line", { x1: x(high), x2: x(high), y1: cy - 4, y2: cy + 4, class: "whisker" }));
      g.append(s(how === "point" ? "rect" : "circle", how === "point"
        ? { x: x(change) - 3, y: cy - 3, width: 6, height: 6, class: "dot" }
        : { cx: x(change), cy, r: 3.5, class: "dot" }),
        s("text", { x: W - right + 6, y: cy + 4, class: "value" }, text));
      plot.append(g);
    });
    return figure;
  }

  // The viewer's sections of plots, over its rows (`v`: the rows and their field numbers, its
  // formatters, `decode` for the embedded history and the page's `name` of an id):
  // `home()` the summary's "Distributions" and "Across runs" (the suite's trend), drawn after
  // the first rows are painted and again when the filters change (`filtered`); `across(id)`
  // an eval's "Across runs"; `intervals(rows)` a comparison's differences.
  function viewer(v) {
    const el = (tag, attrs, ...children) => {
      const node = document.createElement(tag);
      for (const [k, x] of Object.entries(attrs || {})) if (x !== null && x !== undefined && x !== false) node.setAttribute(k, x);
      for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
      return node;
    };
    const section = (cls, heading, ...children) => el("section", { class: cls }, el("h3", {}, heading), ...children);
    const params = new URLSearchParams(location.search);
    const served = /^https?:$/.test(location.protocol) && params.has("token") && v.history !== false;
    const node = document.getElementById("history-data");
    let history = null; // the embedded history, decoded on first use
    const embedded = () => history || (history = node ? v.decode(node) : Promise.resolve(null));
    async function ask(query) {
      const answer = await fetch("/api/history?token=" + encodeURIComponent(params.get("token")) + query);
      return answer.ok ? answer.json() : null;
    }
    const tokens = (x) => (x === null || x === undefined ? "–" : short(x));
    const signed = (x, text) => (x < 0 ? "−" + text(-x) : x > 0 ? "+" + text(x) : text(0));
    // The most evals whose pass-rate changes the summary draws.
    const FOREST = 12;
    const two = (x) => (x === null || x === undefined ? "–" : Number(x).toFixed(2));

    // Distributions of the rows the filters keep.
    let shown = null, drawn = false, timer = 0;
    const box = el("div", { class: "plots-home" });
    const dists = section("distributions", "Distributions", el("p", { class: "note" }, "drawn after the list…"));
    const suites = el("div", { class: "suite-trends" });
    box.append(...(v.rows || v.distributions ? [dists] : []), suites);
    // The comparison's pass-rate changes, largest first, with their intervals.
    function forest() {
      const changed = Object.entries(v.changes || {})
        .filter(([, c]) => c.intervals && c.intervals.length && c.intervals[0][0] === "pass rate")
        .sort((a, b) => Math.abs(b[1].intervals[0][1]) - Math.abs(a[1].intervals[0][1]));
      if (!changed.length) return;
      const shown = changed.slice(0, FOREST);
      const rows = shown.map(([id, c]) => [v.name(id), ...c.intervals[0].slice(1)]);
      const figure = intervals(rows, (what, x) => (x === null || x === undefined ? "–" : signed(x, (a) => a.toFixed(2))), (what, x) => x < 0, 190);
      box.insertBefore(section("pass-rate-changes", "Pass rates since the baseline",
        el("p", { class: "note" }, `each changed eval's pass rate, now − baseline, with Newcombe's interval` + (changed.length > FOREST ? ` (the ${FOREST} largest of ${changed.length})` : "")), figure), dists);
    }
    // Served: the server bins the evals the filters keep (`v.distributions()`).
    let asked = 0;
    async function servedDistributions() {
      const mine = ++asked;
      const d = await v.distributions().catch(() => null);
      if (mine !== asked || !d) return;
      const grid = el("div", { class: "plots" },
        histogram("score", "score", d.score, two),
        histogram("duration", "time (duration)", d.duration, v.ms),
        histogram("cost", "cost", d.cost, v.usd),
        histogram("tokens", "tokens", d.tokens, tokens));
      dists.replaceChildren(dists.firstChild, el("p", { class: "note" }, `over the ${d.evals} evals the filters keep`), grid);
      drawn = true;
      document.body.dataset.plots = String(d.evals);
      document.body.dataset.plotsMs = performance.now().toFixed(0);
    }
    function distributions() {
      if (!v.rows && v.distributions) return servedDistributions();
      const list = shown || [];
      const values = (field) => {
        const out = new Float64Array(list.length);
        let m = 0;
        for (let k = 0; k < list.length; k++) {
          const x = v.rows[list[k]][field];
          if (x !== null && x !== undefined && Number.isFinite(x)) out[m++] = x;
        }
        return out.subarray(0, m);
      };
      const grid = el("div", { class: "plots" },
        histogram("score", "score", values(v.SCORE), two, { domain: [0, 1], bins: 10 }),
        histogram("duration", "time (duration)", values(v.DURATION), v.ms, { log: "auto" }),
        histogram("cost", "cost", values(v.COST), v.usd, { log: "auto" }),
        histogram("tokens", "tokens", values(v.TOKENS), tokens, { log: "auto" }));
      dists.replaceChildren(dists.firstChild, el("p", { class: "note" }, `over the ${list.length} evals the filters keep`), grid);
      drawn = true;
      document.body.dataset.plots = String(list.length);
      document.body.dataset.plotsMs = performance.now().toFixed(0);
    }
    function schedule(delay) {
      clearTimeout(timer);
      timer = setTimeout(() => { if (box.isConnected) distributions(); }, delay);
    }
    let started = false;
    function home() {
      if (!started) {
        started = true;
        // After the first rows are painted (the page's ready mark comes first).
        requestAnimationFrame(() => setTimeout(() => setTimeout(() => {
          forest();
          distributions();
          suiteTrends();
        }, 0), 0));
      } else if (!drawn) {
        schedule(0);
      }
      return box;
    }
    function filtered(list) {
      shown = list;
      if (drawn && box.isConnected) schedule(120);
      else drawn = false;
    }

    // A history point's mark: its commit (else run) and whether it went worse or better.
    function markOf(m, run) {
      if (!m) return null;
      const shift = m.pass_rate || m.score;
      const tone = shift && shift.after < shift.before ? "worse" : "better";
      return { tone, label: run[2] ? String(run[2]).slice(0, 7) : run[0] };
    }
    function describe(m) {
      const parts = [];
      const p = (x) => (x === null || x === undefined ? "" : ` (${x < 0.0001 ? "p < 0.0001" : "p = " + x.toFixed(4)})`);
      if (m.pass_rate) parts.push(`pass rate ${m.pass_rate.after < m.pass_rate.before ? "fell" : "rose"} ${two(m.pass_rate.before)} → ${two(m.pass_rate.after)}, Fisher${p(m.pass_rate.p_value)}`);
      if (m.score) parts.push(`score ${m.score.after < m.score.before ? "fell" : "rose"} ${two(m.score.before)} → ${two(m.score.after)}, Welch${p(m.score.p_value)}`);
      return parts.join("; ");
    }
    const when = (t) => String(t).slice(0, 19).replace("T", " ");
    // The list of marked points: run, commit, time, what moved.
    function changes(points, runs) {
      const marked = points.map((p, i) => [p, i]).filter(([p]) => p[8]);
      if (!marked.length) return el("p", { class: "note no-change" }, `no change beyond chance over these ${points.length} runs`);
      return el("ul", { class: "history-changes" }, ...marked.map(([p, i]) => {
        const run = runs[p[0]] || [];
        return el("li", { class: markOf(p[8], run).tone, "data-run": i + 1 },
          `run ${i + 1} of ${points.length}, commit `, el("code", {}, run[2] ? String(run[2]).slice(0, 12) : "unknown"),
          ` (${when(run[1])}): ${describe(p[8])}`);
      }));
    }
    const tip = (run, i, text) => `#${i + 1} · ${when(run[1])} · commit ${run[2] ? String(run[2]).slice(0, 7) : "unknown"} · ${text}`;

    // Each suite's pass rate across its full runs.
    async function suiteTrends() {
      let h = await embedded();
      if ((!h || !Object.keys(h.suites || {}).length) && served) h = await ask("");
      if (!h || !Object.keys(h.suites || {}).length) return;
      const out = [];
      for (const [target, points] of Object.entries(h.suites)) {
        const rate = points.map((p, i) => {
          const run = h.runs[p[0]] || [];
          const counted = p[1] + p[2];
          return { x: String(i + 1), y: counted ? p[1] / counted : null, mark: markOf(p[8], run), tip: tip(run, i, `${p[1]} passed, ${p[2]} failed, ${p[3]} skipped`) };
        });
        const score = points.map((p, i) => ({ x: String(i + 1), y: p[4], mark: markOf(p[8], h.runs[p[0]] || []), tip: tip(h.runs[p[0]] || [], i, `mean score ${two(p[4])}`) }));
        const grid = el("div", { class: "plots" }, trend("suite-pass-rate", "pass rate", rate, two, [0, 1]));
        if (score.some((p) => p.y !== null && p.y !== undefined)) grid.append(trend("suite-score", "mean score", score, two, [0, 1]));
        const part = section("suite-trend", `Across runs: ${target}`, el("p", { class: "note" }, `the last ${points.length} full runs, oldest first; a ringed point is a change beyond chance (Fisher's exact test on the evals passed, Welch's on the mean score, at α = ${h.alpha})`), grid, changes(points, h.runs));
        part.dataset.target = target;
        out.push(part);
      }
      suites.replaceChildren(...out);
      document.body.dataset.suiteTrend = String(out.length);
    }

    // An eval's trend: its pass rate, score, time, tokens and cost over its last runs.
    function across(id) {
      if (!node && !served) return [];
      const part = section("across-runs", "Across runs", el("p", { class: "note" }, "reading the history…"));
      (async () => {
        let h = await embedded();
        let points = h && h.evals ? h.evals[id] : null;
        if (!points && served) {
          h = await ask("&eval=" + encodeURIComponent(id));
          points = h && h.evals ? h.evals[id] : null;
        }
        if (!points) {
          part.replaceChildren(part.firstChild, el("p", { class: "note" }, h && h.omitted
            ? `A page of more than 1,000 evals embeds the suites' trends only; \`niceeval history ${id}\` shows this eval's.`
            : "No run of this eval in the history yet."));
          part.dataset.loaded = "none";
          return;
        }
        const runs = h.runs;
        const series = (name, heading, y, format, domain, marked) => trend(name, heading, points.map((p, i) => ({
          x: String(i + 1), y: y(p), tone: ["pass", "fail", "skip"][p[1]],
          mark: marked ? markOf(p[8], runs[p[0]] || []) : null,
          tip: tip(runs[p[0]] || [], i, `${["passed", "failed", "skipped"][p[1]]}, ${p[2]}/${p[3]} runs passed, score ${two(p[4])}, ${v.ms(p[7])}, ${tokens(p[5])} tokens, ${v.usd(p[6])}`),
        })), format, domain);
        const grid = el("div", { class: "plots" }, series("trend-pass-rate", "pass rate", (p) => (p[3] ? p[2] / p[3] : null), two, [0, 1], true));
        if (points.some((p) => p[4] !== null)) grid.append(series("trend-score", "score", (p) => p[4], two, [0, 1], true));
        grid.append(series("trend-duration", "time", (p) => p[7], v.ms));
        if (points.some((p) => p[5])) grid.append(series("trend-tokens", "tokens", (p) => p[5], tokens));
        if (points.some((p) => p[6] !== null)) grid.append(series("trend-cost", "cost", (p) => p[6], v.usd));
        part.replaceChildren(part.firstChild, el("p", { class: "note" }, `the last ${points.length} runs of this eval, oldest first; hover a point for its run, commit and numbers`), grid, changes(points, runs));
        part.dataset.loaded = String(points.length);
      })().catch((error) => {
        part.append(el("p", { class: "note" }, "the history could not be read: " + error));
        part.dataset.loaded = "error";
      });
      return [part];
    }

    // A comparison's differences, each on its own scale around zero.
    function comparisonIntervals(list) {
      const format = (what, x) => x === null || x === undefined ? "–"
        : what.startsWith("tokens") ? signed(x, (a) => short(Math.round(a)))
        : what.startsWith("cost") ? signed(x, (a) => "$" + short(a))
        : signed(x, (a) => a.toFixed(2));
      const worse = (what, x) => (what.startsWith("tokens") || what.startsWith("cost") ? x > 0 : x < 0);
      const figure = intervals(list, format, worse);
      const wrap = el("div", { class: "comparison-intervals" }, el("p", { class: "note" },
        "Each difference (now − baseline) with its interval at the comparison's confidence, on its own scale around zero (the line); ≈ an interval from Welch's p (normal approximation)."), figure);
      return wrap;
    }
    return { home, filtered, across, intervals: comparisonIntervals };
  }

  return { bins, histogram, trend, intervals, short, viewer };
})();
