//! The HTML reporter: one self-contained file (no external assets, opens offline) with the suite
//! summary, a chart of pass rates and of score distribution, and every eval's assertions and
//! transcript. Charts are inline SVG; a small inline script renders the per-eval details from
//! the embedded JSON data and adds filtering. Flaky evals get a table of their own; with a
//! comparison with a baseline ([`SuiteReport::comparison`]) the summary gains a "change since
//! baseline" column and a "changed only" filter (checked on load when the page's address ends
//! in `#changed-only`), and the regressions are listed under it.
//!
//! This reporter keeps every full report (with transcripts) until the suite ends.

use std::fmt::Write as _;
use std::io::Write;

use super::Reporter;
use super::markup::escape;
use crate::compare::{EvalChange, Kind};
use crate::outcome::Outcome;
use crate::report::comparison as text;
use crate::report::table::{Cell, Column, Table, Tone, evals_table, flaky_table};
use crate::report::{EvalReport, Names, SuiteReport};

/// Writes a self-contained HTML report when the suite completes.
pub struct Html<W: Write + Send> {
    out: W,
    reports: Vec<EvalReport>,
}

impl<W: Write + Send> Html<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Html {
            out,
            reports: Vec::new(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl Html<super::ReportFile> {
    /// A reporter writing the file at `path` when the suite completes, whole or not at all
    /// (see [`super::ReportFile`]): parent directories are created and the directory's
    /// writability checked now.
    pub fn create(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Ok(Html::new(super::ReportFile::create(path)?))
    }
}

impl<W: Write + Send> Reporter for Html<W> {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        self.reports.push(report.clone());
        Ok(())
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        let mut reports = std::mem::take(&mut self.reports);
        reports.sort_by(|a, b| a.id.cmp(&b.id));
        let page = render_page(&reports, suite);
        // One write, then the flush that publishes a report file.
        self.out.write_all(page.as_bytes())?;
        self.out.flush()
    }
}

/// The longest label the pass-rate chart shows whole, in characters; longer names lose their
/// middle (the full name is the label's tooltip).
const LABEL_CHARS: usize = 64;

/// Pass-rate bars, one per eval, each labelled with the eval's name (see [`Names`]): the label
/// column is as wide as the longest name (up to [`LABEL_CHARS`]), and a longer name keeps its
/// start and its end, so neither the module nor the eval is cut off.
fn pass_rate_chart(reports: &[EvalReport], names: Names) -> String {
    let row = 22;
    let longest = reports
        .iter()
        .map(|r| names.name(&r.id).chars().count())
        .max()
        .unwrap_or(0)
        .min(LABEL_CHARS);
    // About 6.5 px per character of the chart's 11 px font, and a margin.
    let label = (longest * 13 / 2 + 16).max(120);
    let bar = 360;
    let height = row * reports.len().max(1) + 10;
    let mut svg = format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"pass rate per eval\" viewBox=\"0 0 {} {height}\" width=\"{}\" height=\"{height}\">",
        label + bar + 60,
        label + bar + 60
    );
    for (i, r) in reports.iter().enumerate() {
        let y = i * row + 5;
        let rate = if r.outcome == Outcome::Skipped {
            0.0
        } else {
            r.reliability.pass_rate
        };
        let class = match r.outcome {
            Outcome::Passed => "pass",
            Outcome::Failed => "fail",
            Outcome::Skipped => "skip",
        };
        let name = names.name(&r.id);
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text><rect x=\"{label}\" y=\"{y}\" width=\"{bar}\" height=\"16\" class=\"track\"/><rect x=\"{label}\" y=\"{y}\" width=\"{:.1}\" height=\"16\" class=\"{class}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            label - 8,
            y + 13,
            escape(name),
            escape(&elide_middle(name, LABEL_CHARS)),
            rate * bar as f64,
            label + bar + 6,
            y + 13,
            if r.outcome == Outcome::Skipped {
                "skipped".to_string()
            } else {
                format!("{:.0}%", rate * 100.0)
            }
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A histogram of scores of every assertion, in ten buckets.
fn score_histogram(reports: &[EvalReport]) -> String {
    let mut buckets = [0usize; 10];
    for a in reports.iter().flat_map(|r| &r.assertions) {
        let i = ((a.score * 10.0).floor() as usize).min(9);
        buckets[i] += 1;
    }
    let max = buckets.iter().copied().max().unwrap_or(0).max(1);
    let (w, h) = (400, 140);
    let mut svg = format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"assertion score distribution\" viewBox=\"0 0 {w} {}\" width=\"{w}\" height=\"{}\">",
        h + 24,
        h + 24
    );
    for (i, count) in buckets.iter().enumerate() {
        let bh = (*count as f64 / max as f64) * h as f64;
        let x = i * (w / 10);
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{:.1}\" width=\"{}\" height=\"{bh:.1}\" class=\"bucket\"><title>{:.1}–{:.1}: {count}</title></rect><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:.1}</text>",
            x + 2,
            h as f64 - bh,
            w / 10 - 4,
            i as f64 / 10.0,
            (i + 1) as f64 / 10.0,
            x + w / 20,
            h + 16,
            i as f64 / 10.0
        );
    }
    svg.push_str("</svg>");
    svg
}

/// `text` in at most `max` characters: whole when it fits, else its start and its end around
/// an ellipsis (`support::refu…::escalates_to_a_manager`); the end keeps the last segment (the
/// eval's own name) whole when it leaves room for a start.
fn elide_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max || max < 10 {
        return text.to_string();
    }
    let keep = max - 1;
    let last = text
        .rsplit_once("::")
        .map_or(0, |(_, name)| name.chars().count() + 2);
    let tail = (keep - keep * 2 / 5).max(last).min(keep - 8);
    let head = keep - tail;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}…{end}")
}

/// Embeds JSON in a `<script>` element safely.
fn script_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "[]".to_string())
        .replace("</", "<\\/")
        .replace("<!--", "<\\!--")
}

/// The page's style sheet.
const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:2rem}
.totals span{margin-right:1.2rem} .pass{fill:#2e9d57;color:#2e9d57} .fail{fill:#d23c3c;color:#d23c3c} .skip{fill:#999;color:#777}
.track{fill:#e7e7e7} .bucket{fill:#4a78c2} svg text{font-size:11px;fill:#333}
.charts{display:flex;gap:2rem;flex-wrap:wrap}
details.eval{background:#fff;border:1px solid #ddd;border-radius:6px;margin:.5rem 0;padding:.4rem .8rem}
details.eval summary{cursor:pointer;font-weight:600}
table{border-collapse:collapse;margin:.5rem 0} td,th{border-bottom:1px solid #eee;padding:.2rem .6rem;text-align:left;vertical-align:top}
td.reason,details.eval p{white-space:pre-wrap;overflow-wrap:anywhere}
td.reason{max-width:60rem}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f3f3;padding:.5rem;border-radius:4px;max-height:30rem;overflow:auto}
#filter{padding:.3rem;width:20rem}
td.change .details{font-size:12px;color:#555;max-width:40rem}
td.change.worse,p.change.worse{color:#d23c3c} td.change.better,p.change.better{color:#2e9d57} td.change.same,p.change.same{color:#777}
label.changed-only{display:inline-block;margin:.5rem 0}
";

/// The page's script: renders each eval's assertions and transcript from the embedded JSON and
/// filters them by id. Uses no network and no storage; marks `<body data-rendered>` when done.
const SCRIPT: &str = r##"
"use strict";
(function () {
  const reports = JSON.parse(document.getElementById("data").textContent);
  // Per eval id: what changed since the baseline, and the flaky line.
  const notes = JSON.parse(document.getElementById("notes").textContent);
  const root = document.getElementById("evals");
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  };
  const fmt = (x) => (x === null || x === undefined ? "–" : Number(x).toFixed(2));
  root.replaceChildren();
  for (const r of reports) {
    const cls = r.outcome === "passed" ? "pass" : r.outcome === "failed" ? "fail" : "skip";
    const box = el("details", { class: "eval", "data-id": r.id });
    if (r.outcome === "failed") box.open = true;
    const note = notes[r.id] || {};
    box.append(el("summary", {}, el("span", { class: cls }, r.outcome.toUpperCase()), " ", note.name ?? r.id));
    if (r.description) box.append(el("p", {}, r.description));
    box.append(el("p", {}, `${r.file}:${r.line}`));
    if (r.error) box.append(el("p", { class: "fail" }, "error: " + (r.error.message ?? r.error)));
    if (r.skip_reason) box.append(el("p", { class: "skip" }, "skipped: " + r.skip_reason));
    if (r.stopped) box.append(el("p", { class: "skip" }, "stopped: " + r.stopped));
    for (const line of note.partial || []) box.append(el("p", { class: "partial fail" }, line));
    if (note && note.change) box.append(el("p", { class: "change " + note.class }, `since the baseline: ${note.change}`));
    if (note && note.flaky) box.append(el("p", { class: "flaky" }, `flaky: ${note.flaky}`));
    if (r.runs.length > 1) {
      const rel = r.reliability;
      const ks = rel.pass_at_k.map((p, i) => `pass@${i + 1} ${fmt(p)} · pass^${i + 1} ${fmt(rel.pass_hat_k[i])}`);
      box.append(el("p", {}, `runs: ${r.runs.length}, pass rate ${fmt(rel.pass_rate)} (needs ${fmt(r.min_pass_rate)})`));
      box.append(el("p", {}, ks.join("; ")));
    }
    const table = el("table", {}, el("tr", {}, el("th", {}, "verdict"), el("th", {}, "severity"), el("th", {}, "assertion"), el("th", { class: "num" }, "score"), el("th", { class: "num" }, "threshold"), el("th", {}, "reason")));
    const rows = (list, depth) => {
      for (const a of list) {
        const verdict = a.error ? "error" : a.passed ? "ok" : a.severity === "soft" ? "below" : "FAIL";
        table.append(el("tr", {}, el("td", { class: a.passed ? "pass" : "fail" }, verdict), el("td", {}, a.severity), el("td", {}, "\u00a0\u00a0".repeat(depth) + a.name), el("td", { class: "num" }, fmt(a.score)), el("td", { class: "num" }, fmt(a.threshold)), el("td", { class: "reason" }, a.error || a.reason || "")));
        if (a.children) rows(a.children, depth + 1);
      }
    };
    rows(r.assertions, 0);
    box.append(table);
    if (r.events.length) {
      // A workspace change cut at [workspace] max_files / max_bytes says so on its line.
      const lines = r.events.map((e) => (e.type === "workspace.changed" && e.partial ? "(partial diff) " : "") + JSON.stringify(e)).join("\n");
      const partial = note.partial ? ", partial diff" : "";
      box.append(el("details", {}, el("summary", {}, `transcript (${r.events.length} events${partial})`), el("pre", {}, lines)));
    }
    root.append(box);
  }
  const filter = document.getElementById("filter");
  const changedOnly = document.getElementById("changed-only");
  const changed = new Set(
    Array.from(document.querySelectorAll("table.summary tr[data-changed='true']"), (row) => row.dataset.id)
  );
  const apply = () => {
    const q = filter.value.toLowerCase();
    const only = changedOnly !== null && changedOnly.checked;
    for (const box of root.querySelectorAll("details.eval")) {
      box.hidden = !box.dataset.id.toLowerCase().includes(q) || (only && !changed.has(box.dataset.id));
    }
    for (const row of document.querySelectorAll("table.summary tr[data-id]")) {
      row.hidden = only && row.dataset.changed !== "true";
    }
  };
  filter.addEventListener("input", apply);
  if (changedOnly !== null) {
    changedOnly.addEventListener("change", apply);
    // A link to the page ending in #changed-only opens it filtered (for CI job links).
    if (location.hash === "#changed-only") {
      changedOnly.checked = true;
      apply();
    }
  }
  document.body.dataset.rendered = String(reports.length);
})();
"##;

/// The summary table ([`evals_table`]), rendered on the server side so it reads without
/// scripts. With a comparison, each row has a `change` cell (what happened since the baseline,
/// and what moved) and says whether it changed (`data-changed`), for the "changed only" filter;
/// removed evals, which have no summary, get a row of their own. Rows are keyed by the whole
/// id (`data-id`), and show the eval's name (see [`Names`]).
fn summary_table(suite: &SuiteReport, names: Names) -> String {
    let table = evals_table(&suite.evals, names);
    let comparison = suite.comparison.as_ref();
    let mut html = format!(
        "<table class=\"summary\"><tr>{}{}</tr>",
        header_cells(&table.columns),
        if comparison.is_some() {
            "<th>change since baseline</th>"
        } else {
            ""
        }
    );
    for (e, row) in suite.evals.iter().zip(&table.rows) {
        let change = comparison.map(|c| match c.eval(&e.id) {
            Some(change) => (
                change.changed(),
                format!(
                    "<td class=\"change {}\">{}<div class=\"details\">{}</div></td>",
                    change_class(change),
                    escape(&text::label(change)),
                    escape(&text::details(change))
                ),
            ),
            None => (false, "<td class=\"change\">–</td>".to_string()),
        });
        let _ = write!(
            html,
            "<tr data-id=\"{}\"{}>{}{}</tr>",
            escape(&e.id),
            match &change {
                Some((changed, _)) => format!(" data-changed=\"{changed}\""),
                None => String::new(),
            },
            row_cells(&table.columns, row),
            change.map(|(_, cell)| cell).unwrap_or_default()
        );
    }
    for change in comparison
        .iter()
        .flat_map(|c| c.evals.iter())
        .filter(|c| c.kind == Kind::Removed)
    {
        let mut row = vec![
            Cell::code(names.name(&change.id)),
            Cell::text("removed").tone(Tone::Skipped),
        ];
        row.resize(table.columns.len(), Cell::text("–"));
        let _ = write!(
            html,
            "<tr data-id=\"{}\" data-changed=\"true\">{}<td class=\"change {}\">removed</td></tr>",
            escape(&change.id),
            row_cells(&table.columns, &row),
            change_class(change),
        );
    }
    html.push_str("</table>");
    html
}

/// A table in HTML: numeric columns aligned right (`num`), ids as code, a cell's tone as its
/// class.
fn table(t: &Table, class: &str) -> String {
    let mut html = format!(
        "<table class=\"{class}\"><tr>{}</tr>",
        header_cells(&t.columns)
    );
    for row in &t.rows {
        let _ = write!(html, "<tr>{}</tr>", row_cells(&t.columns, row));
    }
    html.push_str("</table>");
    html
}

/// The header cells of a table's columns.
fn header_cells(columns: &[Column]) -> String {
    columns
        .iter()
        .map(|column| {
            let class = if column.numeric { " class=\"num\"" } else { "" };
            format!("<th{class}>{}</th>", escape(column.title))
        })
        .collect()
}

/// The cells of one row.
fn row_cells(columns: &[Column], row: &[Cell]) -> String {
    let mut html = String::new();
    for (column, cell) in columns.iter().zip(row) {
        let classes: Vec<&str> = [column.numeric.then_some("num"), cell.tone.map(tone_class)]
            .into_iter()
            .flatten()
            .collect();
        let class = if classes.is_empty() {
            String::new()
        } else {
            format!(" class=\"{}\"", classes.join(" "))
        };
        if cell.code {
            let _ = write!(html, "<td{class}><code>{}</code></td>", escape(&cell.text));
        } else {
            let _ = write!(html, "<td{class}>{}</td>", escape(&cell.text));
        }
    }
    html
}

/// The class of a change cell: `worse` (red), `better` (green), `same`.
fn change_class(change: &EvalChange) -> &'static str {
    match text::tone(change) {
        Tone::Same if change.kind == Kind::Removed => "worse",
        tone => tone_class(tone),
    }
}

/// The class a tone gives a cell.
fn tone_class(tone: Tone) -> &'static str {
    match tone {
        Tone::Passed | Tone::Below => "pass",
        Tone::Failed => "fail",
        Tone::Skipped => "skip",
        Tone::Worse | Tone::Failing => "worse",
        Tone::Better => "better",
        Tone::Same => "same",
    }
}

/// Per eval id, what the script adds to its details: the eval's name (see [`Names`]), the
/// change since the baseline (with its class), the flaky line, and the lines that say a
/// workspace change was cut (partial).
fn notes(
    reports: &[EvalReport],
    suite: &SuiteReport,
    names: Names,
) -> serde_json::Map<String, serde_json::Value> {
    let mut notes = serde_json::Map::new();
    for r in reports {
        let mut note = serde_json::json!({ "name": names.name(&r.id) });
        let partial = crate::report::partial_changes(&r.events);
        if !partial.is_empty() {
            note["partial"] = partial.into();
        }
        notes.insert(r.id.clone(), note);
    }
    if let Some(c) = &suite.comparison {
        for change in c.changed() {
            let entry = notes
                .entry(change.id.clone())
                .or_insert_with(|| serde_json::json!({ "name": names.name(&change.id) }));
            entry["change"] = match text::details(change) {
                details if details.is_empty() => text::label(change),
                details => format!("{} — {details}", text::label(change)),
            }
            .into();
            entry["class"] = change_class(change).into();
        }
    }
    for flaky in &suite.flaky {
        let entry = notes
            .entry(flaky.id.clone())
            .or_insert_with(|| serde_json::json!({ "name": names.name(&flaky.id) }));
        entry["flaky"] = flaky.describe().into();
    }
    notes
}

/// Each dataset eval over its cases: cases passed, mean score, metrics and, with
/// `min_case_pass_rate`, the verdict — the line the console and Markdown print
/// ([`crate::report::DatasetSummary::counts`]).
fn datasets_section(suite: &SuiteReport, names: Names) -> String {
    if suite.datasets.is_empty() {
        return String::new();
    }
    let mut html = String::from("<h2>Datasets</h2>\n<ul class=\"datasets\">");
    for d in &suite.datasets {
        let class = if d.passes() { "pass" } else { "fail" };
        let _ = write!(
            html,
            "<li class=\"dataset\">dataset <code>{}</code>: <span class=\"{class}\">{}</span></li>",
            escape(names.name(&d.id)),
            escape(&d.counts())
        );
    }
    html.push_str("</ul>\n");
    html
}

/// The flaky evals and the comparison with a baseline, under the summary table.
fn comparison_section(suite: &SuiteReport, names: Names) -> String {
    let mut html = String::new();
    if !suite.flaky.is_empty() {
        html.push_str(
            "<h2>Flaky</h2>\n<p>Evals whose runs disagree (some passed, some failed):</p>\n",
        );
        html.push_str(&table(&flaky_table(&suite.flaky, names), "flaky"));
        html.push('\n');
    }
    let Some(c) = &suite.comparison else {
        return html;
    };
    let _ = write!(
        html,
        "<h2>Compared with the baseline</h2>\n<p class=\"comparison\">Baseline <code>{}</code>: {}</p>\n",
        escape(&c.baseline),
        escape(&text::counts(c))
    );
    let regressions = c.regressions();
    if regressions.is_empty() {
        let _ = writeln!(
            html,
            "<p class=\"pass regressions\">No regression (fail on: {}).</p>",
            escape(&text::policy(c))
        );
    } else {
        let _ = write!(
            html,
            "<p class=\"fail regressions\">{} regression(s) (fail on: {}):</p>\n<ul class=\"regressions\">",
            regressions.len(),
            escape(&text::policy(c))
        );
        for r in &regressions {
            let _ = write!(
                html,
                "<li>{} <code>{}</code>: {}</li>",
                r.kind.name(),
                escape(names.name(&r.id)),
                escape(&text::regression(c, r))
            );
        }
        html.push_str("</ul>\n");
    }
    for d in &c.datasets {
        let _ = writeln!(
            html,
            "<p class=\"dataset\">dataset <code>{}</code>: {}</p>",
            escape(names.name(&d.id)),
            escape(&text::dataset(d))
        );
    }
    html
}

/// The evals an interruption left unfinished, named under the summary table.
fn unfinished_list(suite: &SuiteReport, names: Names) -> String {
    if suite.unfinished.is_empty() {
        return String::new();
    }
    let mut html = format!(
        "<h2>Did not finish</h2>\n<p class=\"fail\">The run was {} before these evals finished:</p>\n<ul class=\"unfinished\">",
        escape(&suite.interruption())
    );
    for id in &suite.unfinished {
        let _ = write!(html, "<li><code>{}</code></li>", escape(names.name(id)));
    }
    html.push_str("</ul>\n");
    html
}

fn render_page(reports: &[EvalReport], suite: &SuiteReport) -> String {
    let names = suite.names();
    let mut page = String::with_capacity(16 * 1024);
    // The policy forbids every load from anywhere: the page works offline because it cannot
    // do anything else, and a stray external reference shows up as a console error.
    let _ = write!(
        page,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>niceeval report</title>
<style>{STYLE}</style></head><body>
<h1>niceeval report</h1>
<p class="totals"><span class="pass">{passed} passed</span><span class="fail">{failed} failed</span><span class="skip">{skipped} skipped</span>{interrupted}<span>{secs:.2}s</span>{spending}</p>
{changed_only}{summary}
{datasets}{unfinished}{comparison}<div class="charts"><div><h2>Pass rate</h2>{rates}</div><div><h2>Assertion scores</h2>{hist}</div></div>
<h2>Evals</h2>
<input id="filter" type="search" placeholder="filter evals" aria-label="filter evals">
<div id="evals">"#,
        passed = suite.passed,
        failed = suite.failed,
        skipped = suite.skipped,
        interrupted = if suite.interrupted {
            format!(
                "<span class=\"fail\">{}: {} not run</span>",
                escape(&suite.interruption()),
                suite.not_run
            )
        } else {
            String::new()
        },
        secs = suite.duration_ms / 1000.0,
        spending = suite
            .spending()
            .map(|s| format!("<span class=\"spending\">{}</span>", escape(&s)))
            .unwrap_or_default(),
        summary = summary_table(suite, names),
        datasets = datasets_section(suite, names),
        changed_only = if suite.comparison.is_some() {
            "<label class=\"changed-only\"><input id=\"changed-only\" type=\"checkbox\"> changed only</label>\n"
        } else {
            ""
        },
        comparison = comparison_section(suite, names),
        unfinished = unfinished_list(suite, names),
        rates = pass_rate_chart(reports, names),
        hist = score_histogram(reports),
    );
    // Without scripts, the plain-text reports; the script replaces them with richer details.
    for r in reports {
        let _ = write!(page, "<pre>{}</pre>", escape(&r.render_as(names)));
    }
    let _ = write!(
        page,
        "</div>\n<script id=\"data\" type=\"application/json\">{data}</script>\n<script id=\"notes\" type=\"application/json\">{notes}</script>\n<script>{SCRIPT}</script>\n</body></html>\n",
        data = script_json(&reports),
        notes = script_json(&notes(reports, suite, names)),
    );
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(id: &str, dataset: Option<&str>, outcome: &str) -> EvalReport {
        serde_json::from_value(serde_json::json!({
            "id": id, "file": "tests/evals.rs", "line": 1, "outcome": outcome,
            "assertions": [], "duration_ms": 1.0, "score": 0.5,
            "metrics": {"accuracy": 0.5},
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
            "min_pass_rate": 1.0, "dataset": dataset,
        }))
        .expect("a report")
    }

    #[test]
    fn long_names_lose_their_middle_not_their_start() {
        let name = "support::refund_requests_of_customers_abroad::escalates_to_a_manager_on_the_second_turn";
        let short = elide_middle(name, 64);
        assert_eq!(short.chars().count(), 64);
        assert!(short.starts_with("support:"), "{short}");
        assert!(
            short.ends_with("…::escalates_to_a_manager_on_the_second_turn"),
            "{short}"
        );
        assert!(short.contains('…'), "{short}");
        assert_eq!(elide_middle("evals::a", 40), "evals::a");

        let reports = [report(&format!("evals::{name}"), None, "passed")];
        let chart = pass_rate_chart(&reports, Names::default());
        // The label starts with the name's start, and its tooltip holds all of it.
        assert!(
            chart.contains(&format!("<title>{name}</title>support::refund_")),
            "{chart}"
        );
        assert!(!chart.contains(">…"), "not cut from the left: {chart}");
    }

    #[test]
    fn each_dataset_has_its_line() {
        let reports = [
            report("evals::capitals::paris", Some("evals::capitals"), "passed"),
            report(
                "evals::capitals::atlantis",
                Some("evals::capitals"),
                "failed",
            ),
        ];
        let suite = SuiteReport::new(
            reports
                .iter()
                .map(crate::report::EvalSummary::from)
                .collect(),
            0,
            false,
            1.0,
        );
        let page = render_page(&reports, &suite);
        assert!(
            page.contains(
                "<h2>Datasets</h2>\n<ul class=\"datasets\"><li class=\"dataset\">dataset <code>capitals</code>: <span class=\"fail\">1 of 2 cases passed, mean score 0.50, accuracy 0.50</span></li></ul>"
            ),
            "{page}"
        );
    }

    #[test]
    fn script_data_cannot_close_the_script_element() {
        let text = script_json(&serde_json::json!({"reason": "</script><script>alert(1)"}));
        assert!(!text.contains("</script>"));
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::reporter::{Html, Reporter, SuiteReport};

        let mut html = Html::new(Vec::new());
        html.on_run_complete(&SuiteReport::new(vec![], 0, false, 1.0))
            .unwrap();
        let page = String::from_utf8(html.into_inner()).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"));
    }
}
