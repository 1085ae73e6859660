// The niceeval viewer: decodes the rows and the suite's data (gzip, base64), shows the evals in
// a virtualized list with filters and sorting kept in the URL's hash, and decodes a report's
// chunk only when the report is opened. No network, no storage. When the summary and the
// first rows are painted, <body data-ready="MS"> says after how many milliseconds
// (performance.now(), from navigation start). Served by `niceeval view` (a <script
// id="source"> says so), the same page asks the server that served it instead: the run's
// status, the rows in view, an eval's record when it is opened (see `server` below).
"use strict";
(async function () {
  const $ = (id) => document.getElementById(id);

  // el("div", {class: "x"}, "text", node, ...): an element with attributes and children.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : String(c));
    }
    return node;
  }

  // The JSON inside a <script type="application/x-niceeval-gz">: base64 of gzip.
  async function decode(node) {
    const text = node.textContent;
    let bytes;
    if (Uint8Array.fromBase64) {
      bytes = Uint8Array.fromBase64(text);
    } else {
      const binary = atob(text);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    // A stream of its own (a Blob's stream is a fetch, which a page from file:// may not do).
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }).pipeThrough(new DecompressionStream("gzip"));
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    const parts = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(decoder.decode(value, { stream: true }));
    }
    parts.push(decoder.decode());
    return JSON.parse(parts.join(""));
  }

  // Where the data comes from: the page itself (the one-file page: rows, reports and the
  // suite's data inline), or the server that served it (`niceeval view`): the run's status,
  // a window of rows at a time filtered and sorted on the server, an eval's record when it is
  // opened. Both feed the same rendering below.
  const api = $("source") ? server(JSON.parse($("source").textContent)) : null;
  function server(config) {
    const token = new URLSearchParams(location.search).get("token") || "";
    const get = async (path, params) => {
      const query = new URLSearchParams(params || {});
      query.set("token", token);
      const response = await fetch(config.api + path + "?" + query, { cache: "no-store" });
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      return response.json();
    };
    return {
      status: () => get("status"),
      rows: (params) => get("rows", params),
      report: (id) => get("eval", { id }).catch(() => null),
      distributions: (params) => get("distributions", params),
    };
  }
  const initial = api ? await api.status() : null;

  // The rows, the suite's data, and where each report of an earlier run is (`--then`); on the
  // server, the rows fetched so far.
  const [rows, suite, earlier] = api
    ? [[], { several: false, baseline: null, flaky: {}, changes: {}, datasets: {} }, {}]
    : await Promise.all([decode($("rows-data")), decode($("suite-data")), decode($("then-data"))]);
  const n = rows.length;
  // Row fields (see html.rs `row`).
  const ID = 0, OUTCOME = 1, FLAGS = 2, SCORE = 3, DURATION = 4, TOKENS = 5, COST = 6, TAGS = 7,
    DATASET = 8, CHUNK = 9, POSITION = 10, RUNS = 11, PASS_RATE = 12, TEXT = 13, MATRIX = 14;
  const BELOW = 1, ERROR = 2;
  const OUTCOMES = ["passed", "failed", "skipped"];
  const name = (id) => {
    if (suite.several) return id;
    const cut = id.indexOf("::");
    return cut < 0 ? id : id.slice(cut + 2);
  };
  const names = rows.map((r) => name(r[ID]));
  // The rows come in name order (html.rs sorts them, numbers in names as numbers): filters keep
  // this order, and sorting by a number breaks ties with it.
  // A row by its id, for the URL's open eval and clicks: made on first use, not at load.
  let ids = null;
  const byId = { get: (id) => (ids || (ids = new Map(rows.map((r, i) => [r[ID], i])))).get(id) };
  const status = (r) =>
    r[OUTCOME] === 1 ? (r[FLAGS] & ERROR ? "error" : "failed")
      : r[OUTCOME] === 2 ? "skipped"
      : r[FLAGS] & BELOW ? "below" : "passed";
  // Each row's status as a small number, worked out once: the filters compare numbers and
  // count into an array, and read a row's fields only for the filters that need them.
  const STATUSES = ["passed", "failed", "error", "below", "skipped"];
  const statusOf = new Uint8Array(n);
  for (let i = 0; i < n; i++) statusOf[i] = STATUSES.indexOf(status(rows[i]));
  const badge = { passed: "pass", failed: "FAIL", error: "error", below: "below", skipped: "skip" };
  const tone = { passed: "pass", failed: "fail", error: "fail", below: "below", skipped: "skip" };
  const fmt = (x, digits = 2) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits));
  // A cost in USD with three significant digits (two decimals at least): $2.29, $0.0123,
  // $0.0000229 — a row of a $2.29 run does not read $0.0000.
  const usd = (x) => {
    if (x === null || x === undefined) return "–";
    if (x === 0) return "$0";
    return "$" + Number(x).toFixed(Math.min(10, Math.max(2, 2 - Math.floor(Math.log10(Math.abs(x))))));
  };
  const ms = (x) => (x === null || x === undefined ? "–" : x >= 1000 ? (x / 1000).toFixed(2) + "s" : Math.round(x) + "ms");
  const baseline = suite.baseline !== null && suite.baseline !== undefined;
  // Plots (plots.js): distributions, trends from the history, the comparison's intervals.
  // Served, the page holds only the rows in view: no distributions; the trends come from
  // `/api/history` when the server has a history.
  // Served, the distributions are binned by the server over what the filters keep.
  const served = api ? () => { const { sort, ...query } = serverQuery(); return api.distributions(query); } : null;
  const plots = NiceevalPlots.viewer({ rows: api ? null : rows, distributions: served, history: initial ? initial.history : undefined, SCORE, DURATION, TOKENS, COST, ms, usd, decode, name, changes: suite.changes });
  const change = (id) => suite.changes[id];

  // The view: filters, sort and the open eval, kept in the URL's hash.
  const state = { q: "", o: "", tag: "", ds: "", flaky: false, change: "", sort: "", view: "", open: "" };
  function readHash() {
    const hash = location.hash.slice(1);
    for (const k of Object.keys(state)) state[k] = typeof state[k] === "boolean" ? false : "";
    if (hash === "changed-only") { state.change = "changed"; return; }
    const params = new URLSearchParams(hash);
    for (const [k, v] of params) {
      if (!(k in state)) continue;
      state[k] = typeof state[k] === "boolean" ? v === "1" : v;
    }
  }
  function writeHash() {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(state)) {
      if (v === "" || v === false) continue;
      params.set(k, v === true ? "1" : v);
    }
    const hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  // The filter bar.
  const unique = (values) => Array.from(new Set(values)).sort();
  const tagSet = new Set(initial ? initial.tags : []), datasetSet = new Set(initial ? initial.datasets : []);
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    if (r[TAGS]) for (const t of r[TAGS]) tagSet.add(t);
    if (r[DATASET]) datasetSet.add(r[DATASET]);
  }
  const tags = unique(tagSet);
  const datasets = unique(datasetSet);
  const select = (id, label, options) =>
    el("label", {}, label + " ", el("select", { id }, ...options.map(([v, text]) => el("option", { value: v }, text))));
  const bar = $("bar");
  bar.append(
    el("input", { id: "q", type: "search", placeholder: api ? "filter ids" : "filter names, replies, reasons; /regex/", "aria-label": "filter" }),
    select("o", "outcome", [["", "all"], ["passed", "passed"], ["failed", "failed"], ["error", "error"], ["below", "below threshold"], ["skipped", "skipped"]]),
  );
  if (tags.length) bar.append(select("tag", "tag", [["", "all"], ...tags.map((t) => [t, t])]));
  if (datasets.length) bar.append(select("ds", "dataset", [["", "all"], ...datasets.map((d) => [d, name(d)])]));
  if (Object.keys(suite.flaky).length) bar.append(el("label", {}, el("input", { id: "flaky", type: "checkbox" }), " flaky"));
  // Suite files whose cases span several prompts or providers can be seen as a matrix.
  const matrixFiles = new Map(); // file → Set of "prompt,provider" columns
  for (let i = 0; i < n; i++) {
    const m = rows[i][MATRIX];
    if (!m) continue;
    const file = rows[i][DATASET] || "";
    if (!matrixFiles.has(file)) matrixFiles.set(file, new Set());
    matrixFiles.get(file).add(m[2] + "," + m[4]);
  }
  const hasMatrix = Array.from(matrixFiles.values()).some((columns) => columns.size > 1);
  if (hasMatrix) bar.append(select("view", "view", [["", "list"], ["matrix", "matrix (tests × prompts × providers)"]]));
  if (baseline) {
    bar.append(select("change", "since baseline", [["", "all"], ["changed", "changed"], ["broke", "broke"], ["worse", "worse"],
      ["still-failing", "still failing"], ["fixed", "fixed"], ["better", "better"], ["new", "new"], ["unchanged", "unchanged"]]));
  }
  bar.append(
    select("sort", "sort", [["", "name"], ["-score", "score ↓"], ["score", "score ↑"], ["-duration", "time ↓"], ["duration", "time ↑"],
      ["-tokens", "tokens ↓"], ["tokens", "tokens ↑"], ["-cost", "cost ↓"], ["cost", "cost ↑"]]),
    el("button", { id: "home", type: "button", title: "the run's summary (Esc)" }, "summary"),
    el("span", { id: "count", class: "count" }),
    el("span", { id: "counts", class: "counts" }),
    el("span", { class: "note" }, el("kbd", {}, "↑"), el("kbd", {}, "↓"), " move ", el("kbd", {}, "/"), " filter ", el("kbd", {}, "Esc"), " close"),
  );
  const controls = ["q", "o", "tag", "ds", "flaky", "change", "sort", "view"].map($).filter((c) => c);
  $("home").addEventListener("click", () => close());
  function showState() {
    for (const c of controls) {
      if (c.type === "checkbox") c.checked = state[c.id];
      else c.value = state[c.id];
    }
  }
  for (const c of controls) {
    c.addEventListener(c.type === "search" ? "input" : "change", () => {
      state[c.id] = c.type === "checkbox" ? c.checked : c.value;
      writeHash();
      apply();
    });
  }

  // Filtering and sorting: `shown` holds the indices of the rows shown, in order.
  let hay = null; // lower-cased name and text of every row, made on the first text filter
  function haystack() {
    if (hay === null) hay = rows.map((r, i) => (names[i] + "\n" + r[TEXT]).toLowerCase());
    return hay;
  }
  function matcher(q) {
    const regex = /^\/(.+)\/([a-z]*)$/.exec(q);
    if (regex) {
      try {
        const re = new RegExp(regex[1], regex[2].includes("i") ? regex[2] : regex[2] + "i");
        $("q").classList.remove("invalid");
        return (i) => re.test(names[i]) || re.test(rows[i][TEXT]);
      } catch (e) {
        $("q").classList.add("invalid");
      }
    }
    const needle = q.toLowerCase();
    const h = haystack();
    return (i) => h[i].includes(needle);
  }
  const keys = { score: SCORE, duration: DURATION, tokens: TOKENS, cost: COST };
  let shown = new Int32Array(0);
  // `list` sorted by the row field `field` (unknown values last, ties in list order, which is
  // by name): each value becomes its rank among the sorted values, and rank and position are
  // packed into one number, so the engine's own numeric sort does the work, without a
  // comparator.
  // A number field of every row as one typed array (unknown values NaN), made on the first
  // sort by it.
  const columns = new Map();
  function column(field) {
    let values = columns.get(field);
    if (!values) {
      values = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const v = rows[i][field];
        values[i] = v === null || v === undefined ? NaN : v;
      }
      columns.set(field, values);
    }
    return values;
  }
  function sorted(list, field, down) {
    const m = list.length;
    const all = column(field);
    const values = new Float64Array(m);
    for (let j = 0; j < m; j++) values[j] = down ? -all[list[j]] : all[list[j]]; // -NaN is NaN
    const order = values.slice().sort(); // NaN last
    let span = 1;
    while (span <= m) span *= 2;
    const packed = new Float64Array(m);
    for (let j = 0; j < m; j++) {
      const v = values[j];
      let rank;
      if (Number.isNaN(v)) {
        rank = m;
      } else {
        let lo = 0, hi = m;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (order[mid] < v) lo = mid + 1;
          else hi = mid;
        }
        rank = lo;
      }
      packed[j] = rank * span + j;
    }
    packed.sort();
    const out = new Int32Array(m);
    for (let k = 0; k < m; k++) out[k] = list[packed[k] % span];
    return out;
  }
  function apply(keep) {
    if (api) return applyServer(keep);
    const started = performance.now();
    const text = state.q ? matcher(state.q) : null;
    const kept = new Int32Array(n);
    // Which statuses the outcome filter keeps ("failed" keeps errors, "passed" keeps passes
    // below a threshold), and how many rows of each status are shown.
    const wanted = STATUSES.map((s) => !state.o || s === state.o || (state.o === "failed" && s === "error") || (state.o === "passed" && s === "below"));
    const tally = new Int32Array(STATUSES.length);
    const byRow = state.tag || state.ds || state.flaky || state.change;
    let m = 0;
    for (let i = 0; i < n; i++) {
      const s = statusOf[i];
      if (!wanted[s]) continue;
      if (byRow) {
        const r = rows[i];
        if (state.tag && !(r[TAGS] || []).includes(state.tag)) continue;
        if (state.ds && r[DATASET] !== state.ds) continue;
        if (state.flaky && !(r[ID] in suite.flaky)) continue;
        if (state.change) {
          const c = change(r[ID]);
          if (!c) continue;
          if (state.change === "changed" ? c.kind === "unchanged" || c.kind === "skipped" : c.kind !== state.change) continue;
        }
      }
      if (text && !text(i)) continue;
      kept[m++] = i;
      tally[s]++;
    }
    const counts = Object.fromEntries(STATUSES.map((s, k) => [s, tally[k]]));
    shown = kept.slice(0, m);
    if (state.sort) {
      const down = state.sort.startsWith("-");
      const field = keys[state.sort.replace("-", "")];
      if (field !== undefined) shown = sorted(shown, field, down);
    }
    $("count").textContent = `${m} of ${n} evals`;
    $("counts").replaceChildren(
      ...Object.entries(counts).filter(([, c]) => c).map(([s, c]) => el("span", { class: tone[s] }, `${c} ${s}`)),
    );
    list.scrollTop = 0;
    rowsBox.style.height = m * ROW + "px";
    const asMatrix = hasMatrix && state.view === "matrix";
    list.hidden = asMatrix;
    $("matrix").hidden = !asMatrix;
    if (asMatrix) matrix();
    else paint();
    document.body.dataset.shown = String(m);
    document.body.dataset.applyMs = (performance.now() - started).toFixed(1);
    plots.filtered(shown);
  }

  // On the server: the hash's filters and sort as a query, the total and counts of what they
  // keep, and the rows in view fetched a window at a time (`shown` holds -1 for a row not
  // fetched yet; the rows fetched are kept up to a bound, then fetched again as needed).
  const WINDOW = 200;
  let generation = 0; // bumped by each query: a window of an earlier query is dropped
  const asked = new Map(); // a window's first position → its fetch
  let total = initial ? initial.evals : n;
  function serverQuery() {
    const query = { sort: state.sort || "name" };
    if (state.q) query.q = state.q;
    if (state.o) query.outcome = state.o;
    if (state.tag) query.tag = state.tag;
    if (state.ds) query.dataset = state.ds;
    return query;
  }
  function fromServer(r) {
    const outcome = r.status === "failed" || r.status === "error" ? 1 : r.status === "skipped" ? 2 : 0;
    const flags = (r.status === "below" ? BELOW : 0) | (r.status === "error" ? ERROR : 0);
    return [r.id, outcome, flags, r.score, r.duration_ms, r.tokens, r.cost_usd, r.tags, r.dataset, null, null, r.runs, r.pass_rate, "", null];
  }
  function forget() {
    rows.length = 0;
    names.length = 0;
    ids = new Map();
    asked.clear();
  }
  function place(list, offset) {
    list.forEach((r, k) => {
      if (offset + k >= shown.length) return;
      const i = rows.length;
      rows.push(fromServer(r));
      names.push(name(r.id));
      ids.set(r.id, i);
      shown[offset + k] = i;
    });
  }
  function want(p) {
    const offset = p - (p % WINDOW);
    if (asked.has(offset)) return asked.get(offset);
    if (rows.length > 100 * WINDOW) {
      forget();
      shown.fill(-1);
    }
    const mine = generation;
    const fetched = api.rows({ ...serverQuery(), offset, limit: WINDOW }).then((page) => {
      if (mine !== generation) return;
      place(page.rows, offset);
      if (!frame) frame = requestAnimationFrame(() => { frame = 0; paint(); });
    }, () => asked.delete(offset));
    asked.set(offset, fetched);
    return fetched;
  }
  async function applyServer(keep) {
    const started = performance.now();
    const mine = ++generation;
    const top = keep ? list.scrollTop : 0;
    const from = Math.max(0, Math.floor(top / ROW) - 8);
    const offset = from - (from % WINDOW);
    const page = await api.rows({ ...serverQuery(), offset, limit: 2 * WINDOW });
    if (mine !== generation) return;
    forget();
    total = page.evals;
    const m = page.total;
    shown = new Int32Array(m).fill(-1);
    place(page.rows, offset);
    asked.set(offset, Promise.resolve());
    asked.set(offset + WINDOW, Promise.resolve());
    const wanted = (s) => !state.o || s === state.o || (state.o === "failed" && s === "error") || (state.o === "passed" && s === "below");
    $("count").textContent = `${m} of ${total} evals`;
    $("counts").replaceChildren(
      ...STATUSES.filter((s) => wanted(s) && page.counts[s]).map((s) => el("span", { class: tone[s] }, `${page.counts[s]} ${s}`)),
    );
    if (!keep) list.scrollTop = 0;
    rowsBox.style.height = m * ROW + "px";
    paint();
    document.body.dataset.shown = String(m);
    document.body.dataset.applyMs = (performance.now() - started).toFixed(1);
    plots.filtered(null);
  }

  // Live, on the server: the run's status a few times a second — the totals and a progress
  // bar in the header, what is running and for how long in the summary — and, when the
  // results changed, the rows in view again (the scroll, the filters and the open eval kept).
  const ago = (ms) => (ms >= 60000 ? Math.floor(ms / 60000) + "m " + Math.floor((ms % 60000) / 1000) + "s" : (ms / 1000).toFixed(1) + "s");
  const liveBar = api ? el("span", { class: "live" }, el("progress", { id: "live-progress", max: "1", value: "0" }), el("span", { id: "live-text" })) : null;
  const runBox = api ? el("div", { class: "run" }) : null;
  if (api) {
    $("summary").prepend(runBox);
    const totalsLine = $("summary").querySelector(".totals");
    if (totalsLine) totalsLine.append(liveBar);
  }
  let version = initial ? initial.version : 0;
  function showStatus(s) {
    const c = s.counts;
    const totalsLine = document.querySelector(".totals");
    if (totalsLine) {
      totalsLine.replaceChildren(
        el("span", { class: "pass" }, `${c.passed + c.below} passed`),
        el("span", { class: "fail" }, `${c.failed + c.error} failed`),
        el("span", { class: "skip" }, `${c.skipped} skipped`),
        liveBar,
      );
    }
    const progress = $("live-progress");
    const [done, of] = s.run ? [s.run.finished, s.run.total] : [s.evals, s.expected];
    progress.max = of || 1;
    progress.value = of ? Math.min(done, of) : done ? 1 : 0;
    progress.hidden = !of;
    $("live-text").textContent = (of ? `${done} of ${of}` : `${s.evals}`) + " evals" + (s.run ? ` · ${s.running_count} running` : "");
    const running = s.running.map(({ id, ms }) => el("tr", { class: "running", "data-id": id },
      el("td", {}, el("code", {}, name(id))), el("td", { class: "num" }, ago(ms))));
    runBox.replaceChildren(
      el("h2", {}, s.run ? "Running now" : "Results"),
      s.run
        ? el("p", {}, `${s.run.finished} of ${s.run.total} evals of the run finished, ${s.running_count} running`
          + (s.running_count > s.running.length ? ` (the ${s.running.length} running longest below)` : "") + ".")
        : el("p", { class: "note" }, `No run is writing these results now: ${s.evals} evals, as the files hold them.`),
      running.length
        ? el("table", { class: "running" }, el("tr", {}, el("th", {}, "eval"), el("th", { class: "num" }, "running for")), ...running)
        : null,
    );
    document.body.dataset.liveEvals = String(s.evals);
    document.body.dataset.liveExpected = String(of || "");
    document.body.dataset.running = String(s.running_count);
  }
  async function live() {
    try {
      const s = await api.status();
      showStatus(s);
      if (s.version !== version) {
        version = s.version;
        await apply(true);
      }
      delete document.body.dataset.stopped;
    } catch (e) {
      $("live-text").textContent = "the server stopped";
      document.body.dataset.stopped = "true";
    }
    setTimeout(live, 300);
  }

  // The virtualized list: only the rows in view (and a few around them) exist.
  const ROW = 26;
  const list = $("list");
  const rowsBox = $("rows");
  const head = el("div", { class: "row head" },
    el("span", { class: "o" }, "outcome"), el("span", { class: "n" }, "eval"),
    baseline ? el("span", { class: "c", title: "since the baseline" }, "change") : null,
    ...[["score", "score"], ["runs", null], ["tokens", "tokens"], ["cost", "cost"], ["time", "duration"]].map(([label, key]) =>
      el("span", { class: "v " + label }, key ? el("button", { type: "button", "data-sort": key }, label) : label)),
  );
  head.addEventListener("click", (event) => {
    const key = event.target.dataset && event.target.dataset.sort;
    if (!key) return;
    state.sort = state.sort === "-" + key ? key : "-" + key;
    writeHash();
    showState();
    apply();
  });
  list.insertBefore(head, rowsBox);
  let selected = -1; // position in `shown`
  function paint() {
    const top = list.scrollTop;
    const height = list.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW) - 8);
    const last = Math.min(shown.length, Math.ceil((top + height) / ROW) + 8);
    const nodes = [];
    for (let p = first; p < last; p++) {
      const i = shown[p];
      if (i < 0) {
        // On the server: a row not fetched yet.
        const row = el("div", { class: "row wait", "data-p": p }, el("span", { class: "o" }, "…"));
        row.style.top = p * ROW + "px";
        nodes.push(row);
        want(p);
        continue;
      }
      const r = rows[i];
      const s = status(r);
      const c = baseline ? change(r[ID]) : null;
      const row = el("div", { class: "row" + (p === selected || (api && r[ID] === state.open) ? " sel" : ""), role: "option", "data-id": r[ID], "data-p": p },
        el("span", { class: "o " + tone[s] }, badge[s]),
        nameCell(i),
        baseline ? el("span", { class: "c " + (c ? c.tone : ""), title: c && c.details ? c.details : null }, c ? c.label : "") : null,
        el("span", { class: "v score" }, fmt(r[SCORE])),
        el("span", { class: "v runs" }, r[RUNS] > 1 ? `${fmt(r[PASS_RATE])} ×${r[RUNS]}` : "1"),
        el("span", { class: "v tokens" }, r[TOKENS] ? r[TOKENS] : "–"),
        el("span", { class: "v cost" }, usd(r[COST])),
        el("span", { class: "v time" }, ms(r[DURATION])),
      );
      row.style.top = p * ROW + "px";
      nodes.push(row);
    }
    rowsBox.replaceChildren(...nodes);
  }
  // A row's name in parts that give way in turn when the row is narrow: the module path (or
  // dataset) first, then the eval's own name — of a suite file's case, its test and its
  // `[prompt, provider]` share what is left, so its rows do not all read the same.
  function nameCell(i) {
    const r = rows[i];
    const full = names[i];
    const dataset = r[DATASET] ? name(r[DATASET]) + "::" : "";
    const last = full.lastIndexOf("::");
    const cut = dataset && full.startsWith(dataset) ? dataset.length : last < 0 ? 0 : last + 2;
    let leaf = full.slice(cut);
    let tail = "";
    const bracket = leaf.lastIndexOf(" [");
    if (r[MATRIX] && bracket > 0 && leaf.endsWith("]")) {
      tail = leaf.slice(bracket);
      leaf = leaf.slice(0, bracket);
    }
    return el("span", { class: "n", title: r[ID] },
      cut > 0 ? el("span", { class: "p" }, full.slice(0, cut)) : null,
      tail ? el("span", { class: "r" }, el("span", { class: "l" }, leaf), el("span", { class: "t" }, tail)) : el("span", { class: "l" }, leaf));
  }
  let frame = 0;
  list.addEventListener("scroll", () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; paint(); });
  });
  rowsBox.addEventListener("click", (event) => {
    const row = event.target.closest(".row");
    if (row) select_(Number(row.dataset.p));
  });
  function select_(p) {
    if (p < 0 || p >= shown.length) return;
    if (shown[p] < 0) {
      want(p).then(() => { if (shown[p] >= 0) select_(p); });
      return;
    }
    selected = p;
    const top = p * ROW;
    const visible = list.clientHeight - ROW;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top > list.scrollTop + visible) list.scrollTop = top - visible;
    paint();
    state.open = rows[shown[p]][ID];
    writeHash();
    open(state.open);
  }
  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof Element && event.target.matches("input, select");
    if (event.key === "Escape") {
      if (typing) event.target.blur();
      else close();
      return;
    }
    if (typing) return;
    if (event.key === "/") { event.preventDefault(); $("q").focus(); }
    else if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); select_(Math.min(selected + 1, shown.length - 1)); }
    else if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); select_(Math.max(selected - 1, 0)); }
    else if (event.key === "PageDown") { event.preventDefault(); select_(Math.min(selected + 20, shown.length - 1)); }
    else if (event.key === "PageUp") { event.preventDefault(); select_(Math.max(selected - 20, 0)); }
    else if (event.key === "Home") { event.preventDefault(); select_(0); }
    else if (event.key === "End") { event.preventDefault(); select_(shown.length - 1); }
  });

  // The matrix view: per suite file, one row per test and one column per prompt × provider,
  // over the rows the filters keep; each cell the verdict, score and the start of the output,
  // and a click opens the case (its conversation is the output). A file draws its first
  // MATRIX_TESTS tests; filters narrow a larger one.
  const MATRIX_TESTS = 500;
  function matrix() {
    const files = new Map();
    for (const i of shown) {
      const m = rows[i][MATRIX];
      if (!m) continue;
      const file = rows[i][DATASET] || "";
      if (!(matrixFiles.get(file).size > 1)) continue;
      if (!files.has(file)) files.set(file, { tests: new Map(), columns: new Map(), cells: new Map() });
      const f = files.get(file);
      if (!f.tests.has(m[0])) f.tests.set(m[0], m[1]);
      const column = m[2] * 1e6 + m[4];
      if (!f.columns.has(column)) f.columns.set(column, [m[3], m[5]]);
      f.cells.set(m[0] + ":" + column, i);
    }
    const box = $("matrix");
    const out = [];
    if (!files.size) out.push(el("p", { class: "note" }, "No case of a suite file matches the filters."));
    for (const [file, f] of Array.from(files).sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const columns = Array.from(f.columns).sort((a, b) => a[0] - b[0]);
      const prompts = new Set(columns.map(([, c]) => c[0])).size;
      const providers = new Set(columns.map(([, c]) => c[1])).size;
      const label = ([p, q]) => (prompts > 1 && providers > 1 ? p + " · " + q : prompts > 1 ? p : q);
      const tests = Array.from(f.tests).sort((a, b) => a[0] - b[0]);
      const table = el("table", { class: "matrix", "data-file": file },
        el("tr", {}, el("th", {}, "test"), ...columns.map(([, c]) => el("th", { title: c.join(" · ") }, label(c)))));
      for (const [test, description] of tests.slice(0, MATRIX_TESTS)) {
        const tr = el("tr", {}, el("th", { class: "t" }, description));
        for (const [column] of columns) {
          const i = f.cells.get(test + ":" + column);
          if (i === undefined) { tr.append(el("td", {}, "–")); continue; }
          const r = rows[i];
          const s = status(r);
          const reply = (r[TEXT] || "").split("\n")[0];
          tr.append(el("td", { class: "cell" + (state.open === r[ID] ? " sel" : ""), "data-id": r[ID], "data-status": s, title: r[TEXT] || null },
            el("b", { class: tone[s] }, badge[s]), r[SCORE] === null ? "" : fmt(r[SCORE]) + " ", el("span", { class: "out" }, reply.slice(0, 60))));
        }
        table.append(tr);
      }
      out.push(el("h3", {}, name(file) + ` — ${tests.length} tests × ${columns.length} prompt/provider columns`), table);
      if (tests.length > MATRIX_TESTS) out.push(el("p", { class: "note" }, `first ${MATRIX_TESTS} of ${tests.length} tests; filter to see others`));
    }
    box.replaceChildren(...out);
  }
  $("matrix").addEventListener("click", (event) => {
    const cell = event.target.closest("td.cell");
    if (!cell) return;
    for (const c of $("matrix").querySelectorAll("td.cell.sel")) c.classList.remove("sel");
    cell.classList.add("sel");
    state.open = cell.dataset.id;
    writeHash();
    open(state.open);
  });

  // Details: a report's chunk is decoded when it is opened; the last few stay decoded.
  const chunks = new Map();
  async function fromChunk(number, position) {
    let chunk = chunks.get(number);
    if (!chunk) {
      chunk = decode($("c" + number));
      chunks.set(number, chunk);
      if (chunks.size > 8) chunks.delete(chunks.keys().next().value);
    }
    return (await chunk)[position];
  }
  const report = (i) => fromChunk(rows[i][CHUNK], rows[i][POSITION]);
  async function open(id) {
    const detail = $("detail");
    const i = byId.get(id);
    if (i === undefined && !api) { home(); return; }
    const r = api ? await api.report(id) : await report(i);
    if (r === null) { if (state.open === id) home(); return; }
    if (state.open !== id) return; // another eval was opened meanwhile
    detail.replaceChildren(...details(r));
    detail.dataset.id = id;
    document.body.dataset.opened = id;
  }

  // The detail pane while no eval is open: the run's summary (totals, datasets, flaky evals,
  // the comparison with a baseline, the chart).
  const summary = $("summary");
  function home() {
    const detail = $("detail");
    detail.replaceChildren(...[summary, plots.home(), el("p", { class: "note" }, "Select an eval (click, or ↑/↓ and Enter) to see its details; Esc comes back here.")].filter((x) => x));
    delete detail.dataset.id;
  }
  function close() {
    state.open = "";
    writeHash();
    home();
    selected = -1;
    paint();
  }

  function section(title, ...children) {
    return el("section", { class: title.toLowerCase().replace(/[^a-z]+/g, "-") }, el("h3", {}, title), ...children);
  }

  function details(r) {
    const out = [];
    const s = r.outcome === "failed" ? (r.error ? "error" : "failed") : r.outcome === "skipped" ? "skipped" : r.below_threshold ? "below" : "passed";
    out.push(el("h2", {}, el("span", { class: tone[s] }, badge[s]), " ", name(r.id)));
    const usage = r.total_usage && (r.total_usage.input_tokens || r.total_usage.output_tokens) ? r.total_usage : r.usage;
    const cost = usage.cost_usd ?? r.cost_usd;
    out.push(el("p", { class: "meta" }, `${r.file}:${r.line} · ${ms(r.duration_ms)} · ${usage.input_tokens} in / ${usage.output_tokens} out tokens`
      + (cost !== null && cost !== undefined ? ` · ${usd(cost)}` : "") + (r.score !== null && r.score !== undefined ? ` · score ${fmt(r.score)}` : "")));
    if (r.tags && r.tags.length) out.push(el("p", {}, ...r.tags.map((t) => el("span", { class: "tag" }, t))));
    if (r.description) out.push(el("p", {}, r.description));
    if (r.dataset) {
      const d = suite.datasets[r.dataset];
      out.push(el("p", { class: "dataset" }, "dataset ", el("code", {}, name(r.dataset)), d ? ": " : "", d ? el("span", { class: d.passes ? "pass" : "fail" }, d.line) : null));
    }
    if (r.error) out.push(el("p", { class: "fail" }, "error: " + (r.error.message ?? JSON.stringify(r.error))));
    if (r.skip_reason) out.push(el("p", { class: "skip" }, "skipped: " + r.skip_reason));
    if (r.stopped) out.push(el("p", { class: "skip" }, "stopped at: " + r.stopped));
    if (suite.flaky[r.id]) out.push(el("p", { class: "below" }, "flaky: " + suite.flaky[r.id]));
    if (r.runs.length > 1) out.push(runs(r));
    const c = change(r.id);
    if (c) out.push(comparison(c, r));
    out.push(...plots.across(r.id));
    if (earlier[r.id]) out.push(thenAndNow(r));
    // With several runs, what follows is one run's: each title says which.
    const of = r.runs.length > 1 ? ` (run ${shownRun(r) + 1} of ${r.runs.length})` : "";
    const part = (title, ...children) => {
      const box = section(title, ...children);
      if (of) box.firstChild.append(el("span", { class: "of-run" }, of));
      return box;
    };
    const budgets = r.assertions.filter((a) => a.kind === "efficiency");
    const others = r.assertions.filter((a) => a.kind !== "efficiency");
    if (others.length) out.push(part("Assertions", assertions(others)));
    if (budgets.length) out.push(part("Budgets", assertions(budgets)));
    const spans = r.events.filter((e) => e.type === "custom" && e.name === "otel.span").map((e) => e.data);
    if (spans.length) out.push(part("Spans", waterfall(spans)));
    if (r.events.length) out.push(part("Conversation", ...conversation(r.events)));
    return out;
  }

  // Which run the report's assertions and conversation are: the first run whose outcome is the
  // eval's, else the first failed run, else the last (as the report layer chooses it,
  // `report::representative`).
  function shownRun(r) {
    let k = r.runs.findIndex((run) => run.outcome === r.outcome);
    if (k < 0) k = r.runs.findIndex((run) => run.outcome === "failed");
    return k < 0 ? r.runs.length - 1 : k;
  }

  // Then and now: what the comparison computed, and this run's reply and assertions.
  function comparison(c, r) {
    const box = section("Compared with the baseline", el("p", { class: "change " + c.tone }, c.label + (c.details ? " — " + c.details : "")));
    if (c.stats) {
      // The baseline's path apart, where it may wrap: in a header it widened the table.
      box.append(el("p", { class: "note baseline" }, "baseline ", el("code", {}, suite.baseline)));
      box.append(el("table", { class: "then-now" },
        el("tr", {}, el("th", {}, ""), el("th", {}, "then (baseline)"), el("th", {}, "now"), el("th", {}, "statistics")),
        ...c.stats.map(([what, then, now, stats]) => el("tr", {}, el("th", {}, what), el("td", { class: "then" }, then), el("td", { class: "now" }, now), el("td", {}, stats)))));
      if (c.intervals && c.intervals.length) box.append(plots.intervals(c.intervals));
      if (earlier[r.id]) return box; // the earlier run's report is shown beside this one
      const reply = lastReply(r.events);
      const failing = flat(r.assertions).filter((a) => !a.passed).map((a) => `${a.name}: ${fmt(a.score)} — ${a.error || a.reason}`);
      box.append(el("div", { class: "sides" },
        el("div", { class: "then" }, el("h4", {}, "then"), el("p", { class: "note" }, "The baseline keeps outcomes, pass rates, scores, metrics, tokens and cost (above); not replies.")),
        el("div", { class: "now" }, el("h4", {}, "now"), reply ? el("div", { class: "msg assistant" }, el("span", { class: "who" }, "reply"), reply) : el("p", { class: "note" }, "no reply"),
          ...failing.map((f) => el("p", { class: "fail" }, f)))));
    }
    return box;
  }
  // The same eval in an earlier run (`niceeval view --then`): reply, score and assertions
  // then and now, side by side.
  function thenAndNow(r) {
    const box = section("Then and now");
    const side = (title, report) => el("div", { class: title },
      el("h4", {}, title + ": ", el("span", { class: tone[report.outcome === "failed" && report.error ? "error" : report.outcome] }, report.outcome),
        report.score !== null && report.score !== undefined ? ` · score ${fmt(report.score)}` : ""),
      lastReply(report.events) !== null
        ? el("div", { class: "msg assistant" }, el("span", { class: "who" }, "reply"), lastReply(report.events))
        : el("p", { class: "note" }, "no reply"),
      assertions(report.assertions));
    fromChunk(...earlier[r.id]).then((then) => {
      box.append(el("div", { class: "sides" }, side("then", then), side("now", r)));
      box.dataset.loaded = "true";
    });
    return box;
  }
  function lastReply(events) {
    for (let i = events.length - 1; i >= 0; i--) {
      if (events[i].type === "message" && events[i].role === "assistant") return events[i].text;
    }
    return null;
  }
  function flat(list) {
    return list.flatMap((a) => [a, ...flat(a.children || [])]);
  }

  // The runs of a `runs = N` eval: one row each, with pass@k and pass^k; the run whose
  // assertions and conversation follow is marked, and each other failed run says why, as far
  // as the report kept it (the reply and reasons of the first few failed runs).
  function runs(r) {
    const shownRuns = r.runs.slice(0, 50);
    const rel = r.reliability;
    const line = rel.pass_at_k.map((p, k) => `pass@${k + 1} ${fmt(p)}`).join(" · ");
    const hat = rel.pass_hat_k.map((p, k) => `pass^${k + 1} ${fmt(p)}`).join(" · ");
    const shown = shownRun(r);
    const table = el("table", { class: "runs" }, el("tr", {}, el("th", { class: "num" }, "run"), el("th", {}, "outcome"),
      el("th", { class: "num" }, "score"), el("th", { class: "num" }, "time"), el("th", { class: "num" }, "tokens"),
      el("th", { class: "num" }, "cost"), el("th", {}, "why")));
    shownRuns.forEach((run, k) => {
      const why = [];
      if (k === shown) why.push(el("span", { class: "note" }, "shown below"));
      if (run.error) why.push(el("div", { class: "fail" }, "error: " + (run.error.message ?? "")));
      if (run.skip_reason) why.push(el("div", { class: "skip" }, "skipped: " + run.skip_reason));
      if (k !== shown && (run.reasons || []).length) why.push(el("ul", { class: "reasons" }, ...run.reasons.map((reason) => el("li", {}, reason))));
      if (k !== shown && run.reply) why.push(el("div", { class: "msg assistant" }, el("span", { class: "who" }, "reply"), run.reply));
      if (k !== shown && run.outcome === "failed" && !run.error && !run.reply && !(run.reasons || []).length) {
        why.push(el("span", { class: "note" }, "not kept (the report keeps why for the first few failed runs)"));
      }
      table.append(el("tr", { class: "run" + (k === shown ? " shown" : ""), "data-run": k + 1 },
        el("td", { class: "num" }, String(k + 1)),
        el("td", { class: tone[run.outcome === "failed" && run.error ? "error" : run.outcome] }, run.outcome),
        el("td", { class: "num" }, fmt(run.score)),
        el("td", { class: "num" }, ms(run.duration_ms)),
        el("td", { class: "num" }, String(run.usage.input_tokens + run.usage.output_tokens)),
        el("td", { class: "num" }, usd(run.cost_usd)),
        el("td", { class: "why" }, ...why)));
    });
    return section("Runs",
      el("p", {}, `${rel.c} of ${rel.n} runs passed, pass rate ${fmt(rel.pass_rate)} (needs ${fmt(r.min_pass_rate)}); the assertions and conversation below are run ${shown + 1}'s`),
      el("p", { class: "pass-at-k" }, line), el("p", { class: "note" }, hat),
      table,
      r.runs.length > shownRuns.length ? el("p", { class: "note" }, `first ${shownRuns.length} of ${r.runs.length} runs`) : null);
  }

  // The assertion tree: verdict, severity, name (indented by depth), score, threshold, reason.
  function assertions(list) {
    const table = el("table", { class: "tree" }, el("tr", {}, el("th", {}, "verdict"), el("th", {}, "severity"), el("th", {}, "assertion"),
      el("th", { class: "num" }, "score"), el("th", { class: "num" }, "threshold"), el("th", {}, "reason")));
    const add = (items, depth) => {
      for (const a of items) {
        const verdict = a.error ? "error" : a.passed ? "ok" : a.severity === "soft" ? "below" : "FAIL";
        table.append(el("tr", { class: "assertion" },
          el("td", { class: a.passed ? "pass" : a.severity === "soft" ? "below" : "fail" }, verdict),
          el("td", {}, a.severity),
          el("td", { class: "name", style: depth ? `--depth:${depth}` : null }, a.name + (a.metric ? ` [${a.metric}]` : "")),
          el("td", { class: "num" }, fmt(a.score)),
          el("td", { class: "num" }, fmt(a.threshold)),
          el("td", { class: "reason" }, ...breakable(a.error || a.reason || ""))));
        if (a.children) add(a.children, depth + 1);
      }
    };
    add(list, 0);
    return table;
  }

  // A reason's text with a line break allowed after each `/` (`<wbr>`): a path or URL wraps
  // between its parts, not in the middle of one.
  function breakable(text) {
    const out = [];
    text.split(/(?<=\/)(?!\/)/).forEach((part, k) => {
      if (k) out.push(el("wbr", {}));
      out.push(part);
    });
    return out;
  }

  // The conversation: messages, thinking, tool calls with their input and results, errors,
  // and each turn's changes to the working copy as a unified diff per file.
  function conversation(events) {
    const out = [];
    let turn = 0;
    const pretty = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));
    for (const e of events) {
      switch (e.type) {
        case "message":
          if (e.role === "user") turn++;
          out.push(el("div", { class: "msg " + e.role }, el("span", { class: "who" }, e.role), e.text));
          break;
        case "thinking":
          out.push(el("details", { class: "msg thinking" }, el("summary", { class: "who" }, "thinking"), e.text));
          break;
        case "action.called":
          out.push(el("div", { class: "msg tool" }, el("span", { class: "who" }, "tool call ", el("code", {}, e.name)), el("pre", {}, pretty(e.input))));
          break;
        case "action.result":
          out.push(el("div", { class: "msg result " + e.status }, el("span", { class: "who" }, "tool result (" + e.status + ")"), el("pre", {}, pretty(e.output))));
          break;
        case "subagent.called":
          out.push(el("p", { class: "note" }, "subagent " + e.name + " called"));
          break;
        case "subagent.completed":
          out.push(el("p", { class: "note" }, "subagent " + e.status));
          break;
        case "skill.loaded":
          out.push(el("p", { class: "note" }, "skill loaded: " + e.name));
          break;
        case "input.requested":
          out.push(el("div", { class: "msg system" }, el("span", { class: "who" }, "input requested"), el("pre", {}, pretty(e.request))));
          break;
        case "error":
          out.push(el("div", { class: "msg error" }, el("span", { class: "who" }, "error"), e.message));
          break;
        case "usage":
          out.push(el("p", { class: "note" }, `usage: ${e.input_tokens || 0} in, ${e.output_tokens || 0} out` + (e.model ? ` (${e.model})` : "") + (e.cost_usd !== undefined ? `, ${usd(e.cost_usd)}` : "")));
          break;
        case "workspace.changed":
          out.push(changes(e, Math.max(turn, 1)));
          break;
        case "custom":
          if (e.name !== "otel.span") out.push(el("details", { class: "note" }, el("summary", {}, e.name), el("pre", {}, pretty(e.data))));
          break;
        default:
          out.push(el("pre", {}, JSON.stringify(e)));
      }
    }
    return out;
  }

  // One turn's changes: each file's part of the unified diff, lines coloured.
  function changes(e, turn) {
    const box = el("div", { class: "changes" }, el("h4", {}, `Changes of turn ${turn}` + (e.partial ? " (partial diff: cut at [workspace] max_files / max_bytes)" : "")));
    const files = [];
    let current = null;
    for (const line of String(e.diff || "").split("\n")) {
      const header = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
      if (header || current === null) {
        current = { path: header ? header[2] : "", lines: [] };
        files.push(current);
        if (header) continue;
      }
      const plus = /^\+\+\+ b\/(.*)$/.exec(line);
      if (plus && !current.path) current.path = plus[1];
      current.lines.push(line);
    }
    for (const f of files) {
      if (!f.lines.some((l) => l !== "")) continue;
      const pre = el("pre", {});
      for (const line of f.lines) {
        const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : null;
        pre.append(cls ? el("span", { class: cls }, line + "\n") : line + "\n");
      }
      box.append(el("div", { class: "diff", "data-path": f.path }, el("div", { class: "file" }, f.path || "(diff)"), pre));
    }
    const listed = (e.files || []).map((f) => `${f.change} ${f.path}${f.binary ? " (binary)" : ""}`);
    if (listed.length) box.append(el("p", { class: "note" }, listed.join(" · ")));
    return box;
  }

  // The span waterfall: spans of each trace as bars on one time axis, children under their
  // parent.
  function waterfall(spans) {
    const num = (x) => Number(x);
    const start = Math.min(...spans.map((s) => num(s.start_unix_nano)));
    const end = Math.max(...spans.map((s) => num(s.end_unix_nano)));
    const total = Math.max(end - start, 1);
    const children = new Map();
    const ids = new Set(spans.map((s) => s.span_id));
    for (const s of spans) {
      const parent = s.parent_span_id && ids.has(s.parent_span_id) ? s.parent_span_id : "";
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(s);
    }
    const box = el("div", { class: "waterfall" }, axis(total / 1e6));
    const walk = (parent, depth) => {
      const list = (children.get(parent) || []).slice().sort((a, b) => num(a.start_unix_nano) - num(b.start_unix_nano));
      for (const s of list) {
        const left = ((num(s.start_unix_nano) - start) / total) * 100;
        const width = ((num(s.end_unix_nano) - num(s.start_unix_nano)) / total) * 100;
        const error = s.status && s.status.code === "error";
        const title = `${s.name} (${s.kind || "span"}, ${s.service || ""}) ${((num(s.end_unix_nano) - num(s.start_unix_nano)) / 1e6).toFixed(1)}ms`
          + (s.status && s.status.message ? "\n" + s.status.message : "") + "\n" + JSON.stringify(s.attributes || {});
        const bar = el("div", { class: "bar" + (error ? " error" : ""), title });
        bar.style.left = left.toFixed(3) + "%";
        bar.style.width = width.toFixed(3) + "%";
        box.append(el("div", { class: "span", "data-span": s.span_id },
          el("span", { class: "label", title: s.name }, "\u00a0\u00a0".repeat(depth) + s.name),
          el("span", { class: "track" }, bar),
          el("span", { class: "ms" }, ((num(s.end_unix_nano) - num(s.start_unix_nano)) / 1e6).toFixed(1) + "ms")));
        walk(s.span_id, depth + 1);
      }
    };
    walk("", 0);
    return box;
  }

  // The waterfall's time axis: ticks at a round step (1, 2 or 5 times a power of ten
  // milliseconds), about five over `span` milliseconds, each labelled from the first span's start.
  function axis(span) {
    const rough = span / 5;
    const power = Math.pow(10, Math.floor(Math.log10(rough || 1)));
    const step = [1, 2, 5, 10].map((f) => f * power).find((s) => s >= rough) || rough;
    const label = (t) => (t === 0 ? "0" : t >= 1000 ? +(t / 1000).toFixed(3) + "s" : +t.toFixed(3) + "ms");
    const track = el("span", { class: "track" });
    for (let t = 0; t <= span * 0.9 + 1e-9; t += step) {
      const tick = el("span", { class: "tick" }, label(t));
      tick.style.left = ((t / span) * 100).toFixed(3) + "%";
      track.append(tick);
    }
    return el("div", { class: "axis" }, el("span", { class: "label note" }, "time from start"), track,
      el("span", { class: "ms" }, label(span)));
  }

  // First paint: the page's frame (the header with the totals, the bar, and the two panes that
  // fill the window and scroll each on its own, the page not at all), the view of the hash,
  // the open eval or, while none is, the summary in the detail pane.
  const totals = summary && summary.querySelector(".totals");
  if (totals) $("top").append(totals);
  if (summary) summary.remove(); // shown in the detail pane by home()
  document.body.classList.add("app");
  $("app").hidden = false;
  readHash();
  showState();
  await apply();
  if (api) live();
  if (state.open) {
    const p = shown.indexOf(byId.get(state.open));
    if (p >= 0) select_(p);
    else open(state.open);
  } else {
    home();
  }
  window.addEventListener("hashchange", () => {
    readHash();
    showState();
    apply();
    if (state.open) open(state.open);
    else home();
  });
  requestAnimationFrame(() => setTimeout(() => {
    document.body.dataset.ready = performance.now().toFixed(0);
    document.body.dataset.rendered = String(n);
    // The text filter's lower-cased haystack, made while the reader looks.
    setTimeout(haystack, 0);
  }, 0));
})().catch((error) => {
  document.body.dataset.error = String(error);
  throw error;
});
