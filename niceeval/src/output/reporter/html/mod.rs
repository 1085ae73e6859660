//! The HTML viewer: one self-contained page per run (no network, works from `file://`, a strict
//! content-security policy), written as the run goes. Each finished eval's full report is
//! gzip-compressed into the current chunk of reports, and a chunk that is full is written out
//! at once as base64 in a `<script type="application/x-niceeval-gz">` element, to a spool
//! file (unlinked from the start: a killed run leaves nothing behind) that is copied into the
//! page when the run completes, so a report file still appears whole; each eval's row
//! (id, outcome, numbers, a short text to search) goes to a compressed list of rows kept until
//! the end. At the end of the run come the summary (totals, datasets, flaky evals, the
//! comparison with a baseline — tables of the report layer's one table model), the rows, the
//! suite's data and the script (`html/viewer.js`, style in `html/viewer.css`), which decodes
//! the rows with the browser's `DecompressionStream`, shows them in a virtualized list with
//! filters, sorting and a view kept in the URL's hash, and decodes a report's chunk only when
//! the report is opened.
//!
//! The plots (`html/plots.js`, in the script's element before the viewer) are drawn by the
//! page from its own data: the distributions from the rows, the comparison's intervals from the
//! suite's data (`change_intervals`), the trends from the run history's, embedded compressed
//! (`history-data`) when a [`HistorySource`] gives it.
//!
//! Memory does not grow with full reports: what is kept is compressed (the rows; the chunk
//! being filled) and the rest is in the spool file.

use std::fmt::Write as _;
use std::io::{Read as _, Write};

use base64::Engine as _;
use flate2::write::GzEncoder;

use super::Reporter;
use super::markup::escape;
use crate::base::assertion::AssertionResult;
use crate::base::event::Event;
use crate::base::outcome::Outcome;
use crate::run::compare::{Comparison, EvalChange, Kind};
use crate::run::report::comparison_text as text;
use crate::run::report::table::{Column, Table, Tone, flaky_table};
use crate::run::report::{EvalReport, Names, SuiteReport};

/// The page's style sheet.
const STYLE: &str = include_str!("viewer.css");
/// The page's script.
const SCRIPT: &str = include_str!("viewer.js");
/// The plots' drawing functions (SVG), in the script's element before it.
const PLOTS: &str = include_str!("plots.js");

/// Where the page's trends come from: called once, when the run completes, with the ids of the
/// evals on the page; returns the run history's trends of them in the compact form the page
/// reads (the history layer's `for_page`), or `None` when there is no history. The reporter
/// cannot read the history itself (the history's recorder is a reporter: the layer above
/// passes it in).
pub type HistorySource = Box<dyn FnOnce(&[&str]) -> Option<serde_json::Value> + Send>;

/// A chunk of reports is written out when it holds this many reports…
const CHUNK_REPORTS: usize = 64;
/// …or this many bytes of JSON, whichever comes first: opening a report decodes one chunk.
const CHUNK_BYTES: usize = 512 * 1024;
/// How much of an eval's reply and reasons its row keeps for the text filter, in characters.
const SEARCH_CHARS: usize = 400;

/// Writes the self-contained HTML viewer of a run: reports as they finish, the summary when
/// the suite completes.
pub struct Html<W: Write + Send> {
    out: W,
    /// The chunks written so far, until the page is written.
    spool: Option<std::fs::File>,
    /// The chunk of reports being filled.
    chunk: Option<Chunk>,
    /// Chunks written so far.
    chunks: usize,
    /// Every eval's row, one JSON array after another in the order evals finished,
    /// compressed; the page gets them in name order (see [`Html::rows_by_name`]).
    rows: GzEncoder<Vec<u8>>,
    /// Each row's id and the length of its JSON, in the order of `rows`.
    row_ids: Vec<(Box<str>, u32)>,
    /// Where each report of an earlier run is (`{id: [chunk, position]}`, compressed).
    earlier: GzEncoder<Vec<u8>>,
    /// Reports of an earlier run so far.
    earlier_count: usize,
    /// Assertion scores in ten buckets, for the histogram.
    scores: [usize; 10],
    /// The run history's trends, asked for when the run completes.
    history: Option<HistorySource>,
}

/// Reports being compressed into one chunk.
struct Chunk {
    gz: GzEncoder<Vec<u8>>,
    reports: usize,
    bytes: usize,
}

impl<W: Write + Send> Html<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Html {
            out,
            spool: None,
            chunk: None,
            chunks: 0,
            rows: GzEncoder::new(Vec::new(), flate2::Compression::default()),
            row_ids: Vec::new(),
            earlier: GzEncoder::new(Vec::new(), flate2::Compression::default()),
            earlier_count: 0,
            scores: [0; 10],
            history: None,
        }
    }

    /// Embeds the trends `source` gives (see [`HistorySource`]) when the run completes.
    pub fn with_history(mut self, source: HistorySource) -> Self {
        self.history = Some(source);
        self
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Writes the page's head and the start of its body.
    fn head(&mut self) -> std::io::Result<()> {
        // The policy forbids every load from anywhere: the page works offline because it
        // cannot do anything else, and a stray external reference shows up as an error.
        write!(
            self.out,
            r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>niceeval report</title>
<style>{STYLE}</style></head><body>
<noscript><p>The list of evals and their details need JavaScript; the summary below reads without it.</p></noscript>
<header id="top"><h1>niceeval report</h1></header>
<main id="app" hidden><div id="bar"></div><div id="panes"><div id="list" tabindex="0" role="listbox" aria-label="evals"><div id="rows"></div></div><div id="matrix" hidden></div><div id="detail" tabindex="-1"></div></div></main>
"#
        )
    }

    /// Compresses the chunk being filled and writes it out.
    fn write_chunk(&mut self) -> std::io::Result<()> {
        let Some(mut chunk) = self.chunk.take() else {
            return Ok(());
        };
        chunk.gz.write_all(b"]")?;
        let bytes = chunk.gz.finish()?;
        let spool = match &mut self.spool {
            Some(spool) => spool,
            None => self.spool.insert(tempfile::tempfile()?),
        };
        let mut spool = std::io::BufWriter::new(spool);
        writeln!(
            spool,
            "<script type=\"application/x-niceeval-gz\" id=\"c{}\">{}</script>",
            self.chunks,
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )?;
        spool.flush()?;
        self.chunks += 1;
        Ok(())
    }

    /// Compresses `report` into the chunk being filled; returns its chunk and position, and
    /// whether the chunk is full.
    fn put(&mut self, report: &EvalReport) -> std::io::Result<(usize, usize, bool)> {
        let json = serde_json::to_vec(report).map_err(std::io::Error::other)?;
        let chunk = self.chunk.get_or_insert_with(|| Chunk {
            gz: GzEncoder::new(Vec::new(), flate2::Compression::default()),
            reports: 0,
            bytes: 0,
        });
        chunk
            .gz
            .write_all(if chunk.reports == 0 { b"[" } else { b"," })?;
        chunk.gz.write_all(&json)?;
        let position = chunk.reports;
        chunk.reports += 1;
        chunk.bytes += json.len();
        let full = chunk.reports >= CHUNK_REPORTS || chunk.bytes >= CHUNK_BYTES;
        Ok((self.chunks, position, full))
    }

    fn add(&mut self, report: &EvalReport) -> std::io::Result<()> {
        let (chunk, position, full) = self.put(report)?;
        let json =
            serde_json::to_vec(&row(report, chunk, position)).map_err(std::io::Error::other)?;
        self.rows.write_all(&json)?;
        let len = u32::try_from(json.len()).map_err(std::io::Error::other)?;
        self.row_ids.push((report.id.as_str().into(), len));
        for a in flatten(&report.assertions) {
            self.scores[((a.score * 10.0).floor().max(0.0) as usize).min(9)] += 1;
        }
        if full {
            self.write_chunk()?;
        }
        Ok(())
    }

    /// Adds the reports of an earlier run (`niceeval view --then`), each shown beside the
    /// eval of the same id: reply, scores and assertions then and now. Compressed into the
    /// page's chunks as they come, like the run's own.
    pub fn then(&mut self, reports: impl IntoIterator<Item = EvalReport>) -> std::io::Result<()> {
        for report in reports {
            let (chunk, position, full) = self.put(&report)?;
            self.earlier
                .write_all(if self.earlier_count == 0 { b"{" } else { b"," })?;
            serde_json::to_writer(&mut self.earlier, &report.id).map_err(std::io::Error::other)?;
            write!(self.earlier, ":[{chunk},{position}]")?;
            self.earlier_count += 1;
            if full {
                self.write_chunk()?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        self.write_chunk()?;
        self.head()?;
        if let Some(mut spool) = self.spool.take() {
            use std::io::Seek as _;
            spool.seek(std::io::SeekFrom::Start(0))?;
            std::io::copy(&mut spool, &mut self.out)?;
        }
        let names = suite.names();
        let summary = format!(
            "<section id=\"summary\">\n{}{}{}{}<div class=\"charts\"><div><h2>Assertion scores</h2>{}</div></div></section>\n",
            totals(suite),
            datasets_section(suite, names),
            unfinished_list(suite, names),
            comparison_section(suite, names),
            score_histogram(&self.scores),
        );
        self.out.write_all(summary.as_bytes())?;
        let count = self.row_ids.len();
        let history = match self.history.take() {
            Some(source) => {
                let ids: Vec<&str> = self.row_ids.iter().map(|(id, _)| &**id).collect();
                source(&ids)
            }
            None => None,
        };
        let rows = self.rows_by_name(names)?;
        let mut earlier = std::mem::replace(
            &mut self.earlier,
            GzEncoder::new(Vec::new(), flate2::Compression::default()),
        );
        earlier.write_all(if self.earlier_count == 0 { b"{}" } else { b"}" })?;
        let earlier = earlier.finish()?;
        let mut data = GzEncoder::new(Vec::new(), flate2::Compression::default());
        serde_json::to_writer(&mut data, &suite_data(suite, names))
            .map_err(std::io::Error::other)?;
        let data = data.finish()?;
        let base64 = base64::engine::general_purpose::STANDARD;
        let history = match history {
            Some(history) => {
                let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
                serde_json::to_writer(&mut gz, &history).map_err(std::io::Error::other)?;
                format!(
                    "<script type=\"application/x-niceeval-gz\" id=\"history-data\">{}</script>\n",
                    base64.encode(gz.finish()?)
                )
            }
            None => String::new(),
        };
        write!(
            self.out,
            "<script type=\"application/x-niceeval-gz\" id=\"rows-data\" data-count=\"{}\" data-chunks=\"{}\">{}</script>\n<script type=\"application/x-niceeval-gz\" id=\"suite-data\">{}</script>\n<script type=\"application/x-niceeval-gz\" id=\"then-data\">{}</script>\n{history}<script>{PLOTS}\n{SCRIPT}</script>\n</body></html>\n",
            count,
            self.chunks,
            base64.encode(rows),
            base64.encode(data),
            base64.encode(earlier),
        )?;
        Ok(())
    }
}

impl<W: Write + Send> Html<W> {
    /// The rows as one compressed JSON array in name order, as the list shows them by default
    /// (numbers in names compare as numbers: `case_2` before `case_10`; equal names keep the
    /// order their evals finished in), so the page does not sort 100,000 rows when it opens.
    fn rows_by_name(&mut self, names: Names) -> std::io::Result<Vec<u8>> {
        let compressed = std::mem::replace(
            &mut self.rows,
            GzEncoder::new(Vec::new(), flate2::Compression::default()),
        )
        .finish()?;
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(compressed.as_slice()).read_to_end(&mut json)?;
        drop(compressed);
        let ids = std::mem::take(&mut self.row_ids);
        let mut spans = Vec::with_capacity(ids.len());
        let mut start = 0usize;
        for (_, len) in &ids {
            let end = start + *len as usize;
            spans.push(start..end);
            start = end;
        }
        let keys: Vec<String> = ids.iter().map(|(id, _)| name_key(names.name(id))).collect();
        drop(ids);
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| keys[a].cmp(&keys[b])); // stable: ties keep finishing order
        let mut out = GzEncoder::new(Vec::new(), flate2::Compression::default());
        out.write_all(b"[")?;
        for (k, &i) in order.iter().enumerate() {
            if k > 0 {
                out.write_all(b",")?;
            }
            out.write_all(&json[spans[i].clone()])?;
        }
        out.write_all(b"]")?;
        out.finish()
    }
}

/// A name's sort key: each run of digits left-padded with zeros to 12 places, so numbers
/// compare as numbers (`case_2` before `case_10`).
fn name_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len() + 8);
    let mut digits = String::new();
    let flush = |key: &mut String, digits: &mut String| {
        for _ in digits.len()..12 {
            key.push('0');
        }
        key.push_str(digits);
        digits.clear();
    };
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                flush(&mut key, &mut digits);
            }
            key.push(c);
        }
    }
    if !digits.is_empty() {
        flush(&mut key, &mut digits);
    }
    key
}

impl Html<Vec<u8>> {
    /// The viewer as `niceeval view`'s server serves it: the one-file page's style and script,
    /// and no data. The script asks the server that served it (`<script id="source">`, the
    /// API's path) for the run's status, the rows in view (filtered and sorted there) and an
    /// eval's record when it is opened, so the page stays small whatever the run's size. Its
    /// policy allows requests to its own server only (`connect-src 'self'`).
    pub fn served_page() -> String {
        format!(
            r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'">
<title>niceeval</title>
<style>{STYLE}</style></head><body>
<noscript><p>The list of evals and their details need JavaScript.</p></noscript>
<header id="top"><h1>niceeval</h1></header>
<main id="app" hidden><div id="bar"></div><div id="panes"><div id="list" tabindex="0" role="listbox" aria-label="evals"><div id="rows"></div></div><div id="matrix" hidden></div><div id="detail" tabindex="-1"></div></div></main>
<section id="summary"><p class="totals"></p></section>
<script type="application/json" id="source">{{"api":"/api/"}}</script>
<script>{PLOTS}
{SCRIPT}</script>
</body></html>
"#
        )
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

/// The page written at `path` (as [`Html::create`]) with the reports of an earlier run shown
/// beside the run's own ([`Html::then`]; `niceeval view --then`).
pub fn with_earlier(
    path: impl AsRef<std::path::Path>,
    earlier: impl IntoIterator<Item = EvalReport>,
) -> std::io::Result<Box<dyn Reporter>> {
    let mut html = Html::create(path)?;
    html.then(earlier)?;
    Ok(Box::new(html))
}

impl<W: Write + Send> Reporter for Html<W> {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        self.add(report)
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        self.finish(suite)?;
        // The flush that publishes a report file.
        self.out.flush()
    }
}

/// Every assertion of a tree, depth first.
fn flatten(list: &[AssertionResult]) -> Vec<&AssertionResult> {
    let mut all = Vec::new();
    let mut stack: Vec<&AssertionResult> = list.iter().rev().collect();
    while let Some(a) = stack.pop() {
        all.push(a);
        stack.extend(a.children.iter().rev());
    }
    all
}

/// Row flags: a soft assertion fell below its threshold.
const BELOW: u32 = 1;
/// Row flags: the eval ended in an execution error.
const ERROR: u32 = 2;
/// Row flags: the working copy changed.
const DIFF: u32 = 4;
/// Row flags: the run recorded spans.
const SPANS: u32 = 8;

/// One eval's row: `[id, outcome, flags, score, duration_ms, tokens, cost, tags, dataset,
/// chunk, position in chunk, runs, pass rate, text to search, matrix cell]` (outcome 0
/// passed, 1 failed, 2 skipped; `null` where a number is unknown; the matrix cell of a suite
/// file's case is `[test, description, prompt, prompt label, provider, provider label]`, else
/// `null`).
fn row(report: &EvalReport, chunk: usize, position: usize) -> serde_json::Value {
    let mut flags = 0;
    if report.below_threshold {
        flags |= BELOW;
    }
    if report.error.is_some() {
        flags |= ERROR;
    }
    for e in &report.events {
        match e {
            Event::WorkspaceChanged { .. } => flags |= DIFF,
            Event::Custom { name, .. } if name == "otel.span" => flags |= SPANS,
            _ => {}
        }
    }
    let outcome = match report.outcome {
        Outcome::Passed => 0,
        Outcome::Failed => 1,
        Outcome::Skipped => 2,
    };
    let usage = if report.total_usage.is_zero() {
        &report.usage
    } else {
        &report.total_usage
    };
    let tokens = usage.input_tokens + usage.output_tokens;
    let cost = usage.cost_usd.or(report.cost_usd);
    serde_json::json!([
        report.id,
        outcome,
        flags,
        report.score,
        round(report.duration_ms),
        tokens,
        cost,
        report.tags,
        report.dataset,
        chunk,
        position,
        report.runs.len(),
        report.reliability.pass_rate,
        search_text(report),
        report.matrix.as_ref().map(|m| serde_json::json!([
            m.test,
            m.description,
            m.prompt,
            m.prompt_label,
            m.provider,
            m.provider_label
        ])),
    ])
}

/// A duration kept to a tenth of a millisecond.
fn round(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

/// What the text filter searches besides the eval's name: the start of its last reply, its
/// error, skip reason and the reasons of the assertions that did not pass, up to
/// [`SEARCH_CHARS`] characters.
fn search_text(report: &EvalReport) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if let Some(reply) = Event::last_reply(&report.events) {
        parts.push(reply.as_str());
    }
    if let Some(error) = report.error_message() {
        parts.push(error);
    }
    if let Some(reason) = &report.skip_reason {
        parts.push(reason);
    }
    for a in flatten(&report.assertions) {
        if !a.passed || a.error.is_some() {
            parts.push(a.error.as_deref().unwrap_or(&a.reason));
        }
    }
    let mut text = String::new();
    for part in parts {
        if text.chars().count() >= SEARCH_CHARS {
            break;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(part);
    }
    match text.char_indices().nth(SEARCH_CHARS) {
        Some((cut, _)) => text[..cut].to_string(),
        None => text,
    }
}

/// The totals line: passed, failed, skipped, an interruption, the time and the spending.
fn totals(suite: &SuiteReport) -> String {
    format!(
        "<p class=\"totals\"><span class=\"pass\">{} passed</span><span class=\"fail\">{} failed</span><span class=\"skip\">{} skipped</span>{}<span>{:.2}s</span>{}</p>\n",
        suite.passed,
        suite.failed,
        suite.skipped,
        if suite.interrupted {
            format!(
                "<span class=\"fail\">{}: {} not run</span>",
                escape(&suite.interruption()),
                suite.not_run
            )
        } else {
            String::new()
        },
        suite.duration_ms / 1000.0,
        suite
            .spending()
            .map(|s| format!("<span class=\"spending\">{}</span>", escape(&s)))
            .unwrap_or_default(),
    )
}

/// What the script needs of the suite, by eval id: how names read (`several`: ids keep their
/// target), the flaky line, the change since the baseline (its kind, words, tone and, for an
/// eval that changed, the comparison's statistics), and each dataset's line and verdict.
fn suite_data(suite: &SuiteReport, names: Names) -> serde_json::Value {
    let several = names.name("a::b") == "a::b";
    let flaky: serde_json::Map<String, serde_json::Value> = suite
        .flaky
        .iter()
        .map(|f| (f.id.clone(), f.describe().into()))
        .collect();
    let mut changes = serde_json::Map::new();
    if let Some(c) = &suite.comparison {
        for change in &c.evals {
            let mut entry = serde_json::json!({
                "kind": change.kind,
                "label": text::label(change),
                "tone": tone_class(text::tone(change)),
            });
            if change.changed() {
                entry["details"] = text::details(change).into();
                entry["stats"] = change_stats(change);
                entry["intervals"] = change_intervals(change, c.alpha);
            }
            changes.insert(change.id.clone(), entry);
        }
    }
    let datasets: serde_json::Map<String, serde_json::Value> = suite
        .datasets
        .iter()
        .map(|d| {
            (
                d.id.clone(),
                serde_json::json!({ "line": d.counts(), "passes": d.passes() }),
            )
        })
        .collect();
    serde_json::json!({
        "several": several,
        "baseline": suite.comparison.as_ref().map(|c| c.baseline.clone()),
        "flaky": flaky,
        "changes": changes,
        "datasets": datasets,
    })
}

/// The then-and-now rows of a changed eval, as the comparison computed them: `[what, then,
/// now, statistics]`.
fn change_stats(change: &EvalChange) -> serde_json::Value {
    let number = |x: Option<f64>, digits: usize| match x {
        Some(x) => format!("{x:.digits$}"),
        None => "–".to_string(),
    };
    let p = |d: &crate::run::compare::Delta| d.p_value.map(text::p_text).unwrap_or_default();
    let mut rows = vec![serde_json::json!([
        "outcome",
        change
            .baseline_outcome
            .map(|o| o.to_string())
            .unwrap_or("–".into()),
        change.outcome.map(|o| o.to_string()).unwrap_or("–".into()),
        "",
    ])];
    if let Some(r) = &change.pass_rate {
        rows.push(serde_json::json!([
            "pass rate",
            format!(
                "{:.2} ({} of {}, 95% CI {})",
                r.baseline_rate, r.baseline_passed, r.baseline_runs, r.baseline_interval
            ),
            format!(
                "{:.2} ({} of {}, 95% CI {})",
                r.rate, r.passed, r.runs, r.interval
            ),
            format!("difference {}", text::difference(r)),
        ]));
    }
    let mut delta = |name: String, d: &crate::run::compare::Delta, digits: usize| {
        if d.baseline.is_some() || d.current.is_some() {
            rows.push(serde_json::json!([
                name,
                number(d.baseline, digits),
                number(d.current, digits),
                p(d),
            ]));
        }
    };
    delta("score".into(), &change.score, 2);
    for (name, d) in &change.metrics {
        delta(format!("metric {name}"), d, 2);
    }
    delta("tokens/run".into(), &change.tokens, 0);
    delta(
        "cost/run (USD)".into(),
        &change.cost,
        text::cost_digits(&change.cost),
    );
    rows.into()
}

/// Each difference the comparison measured, for the page's interval chart: `[what, change,
/// low, high, p-value, how]` — the pass rate's with Newcombe's interval (`how` "newcombe"); a
/// score's or metric's mean with Welch's p-value, its interval the normal one that p-value
/// implies (`"welch"`: approximate, `±z(1−α/2)·|d|/z(1−p/2)`); tokens and cost per run as
/// they changed, without an interval (`"point"`: one value a side).
fn change_intervals(change: &EvalChange, alpha: f64) -> serde_json::Value {
    use crate::base::stats::normal_quantile;
    let mut rows = Vec::new();
    if let Some(r) = &change.pass_rate {
        rows.push(serde_json::json!([
            "pass rate",
            r.change(),
            r.difference.low,
            r.difference.high,
            r.p_value,
            "newcombe"
        ]));
    }
    let mut delta = |what: String, d: &crate::run::compare::Delta| {
        let Some(mut difference) = d.change() else {
            return;
        };
        // The same value a side, summed in another order: no change, not 1e-20 of one.
        let scale = d
            .baseline
            .unwrap_or(0.0)
            .abs()
            .max(d.current.unwrap_or(0.0).abs());
        if difference.abs() <= 1e-9 * scale {
            difference = 0.0;
        }
        let interval = d.p_value.and_then(|p| {
            let z = normal_quantile(1.0 - p / 2.0);
            (z.is_finite() && z > 0.0 && difference != 0.0).then(|| {
                let half = normal_quantile(1.0 - alpha / 2.0) * difference.abs() / z;
                (difference - half, difference + half)
            })
        });
        rows.push(match interval {
            Some((low, high)) => {
                serde_json::json!([what, difference, low, high, d.p_value, "welch"])
            }
            None => serde_json::json!([what, difference, null, null, d.p_value, "point"]),
        });
    };
    delta("score".into(), &change.score);
    for (name, d) in &change.metrics {
        delta(format!("metric {name}"), d);
    }
    delta("tokens/run".into(), &change.tokens);
    delta("cost/run (USD)".into(), &change.cost);
    rows.into()
}

/// Each dataset eval over its cases: cases passed, mean score, metrics and, with
/// `min_case_pass_rate`, the verdict — the line the console and Markdown print
/// ([`crate::run::report::DatasetSummary::counts`]).
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

/// The flaky evals and the comparison with a baseline: the report layer's tables (the ones the
/// Markdown summary draws), rendered here in HTML.
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
    html.push_str(&comparison_summary(c, names));
    html
}

/// The comparison's counts, its regressions, the table of what changed and each dataset's line.
fn comparison_summary(c: &Comparison, names: Names) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<h2>Compared with the baseline</h2>\n<p class=\"comparison\">Baseline <code>{}</code>: {}</p>\n",
        escape(&c.baseline),
        escape(&text::counts_and_not_run(c))
    );
    if let Some(note) = text::underpowered(c) {
        let _ = writeln!(html, "<p class=\"comparison note\">{}</p>", escape(&note));
    }
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
    if let Some(changed) = text::comparison_table(c, names) {
        html.push_str(&table(&changed, "changes"));
        html.push('\n');
    }
    for d in &c.datasets {
        let _ = writeln!(
            html,
            "<p class=\"dataset\">dataset <code>{}</code>: {}</p>",
            escape(names.name(&d.id)),
            escape(&text::dataset(d))
        );
    }
    let removed = c.evals.iter().filter(|e| e.kind == Kind::Removed).count();
    if removed > 0 {
        let _ = writeln!(
            html,
            "<p class=\"removed\">{removed} eval(s) of the baseline are not in this run.</p>"
        );
    }
    html
}

/// The evals an interruption left unfinished.
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

/// A table of the report layer's model in HTML: numeric columns aligned right (`num`), ids as
/// code, a cell's tone as its class; a column with nothing in it (every cell empty or `–`) is
/// left out, so the table fits a narrow pane.
fn table(t: &Table, class: &str) -> String {
    let shown: Vec<bool> = (0..t.columns.len())
        .map(|i| {
            t.rows.iter().any(|row| {
                row.get(i)
                    .is_some_and(|cell| !matches!(cell.text.as_str(), "" | "–"))
            })
        })
        .collect();
    let mut html = format!("<table class=\"{class}\"><tr>");
    for (column, _) in t.columns.iter().zip(&shown).filter(|(_, shown)| **shown) {
        let _ = write!(html, "<th{}>{}</th>", numeric(column), escape(column.title));
    }
    html.push_str("</tr>");
    for row in &t.rows {
        html.push_str("<tr>");
        for ((column, cell), _) in t
            .columns
            .iter()
            .zip(row)
            .zip(&shown)
            .filter(|(_, shown)| **shown)
        {
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
                // An id may wrap after each `::` in a narrow pane, and nowhere else.
                let _ = write!(
                    html,
                    "<td{class}><code>{}</code></td>",
                    escape(&cell.text).replace("::", "::<wbr>")
                );
            } else {
                let _ = write!(html, "<td{class}>{}</td>", escape(&cell.text));
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>");
    html
}

/// The class of a numeric column's cells.
fn numeric(column: &Column) -> &'static str {
    if column.numeric { " class=\"num\"" } else { "" }
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

/// A histogram of the scores of every assertion, in ten buckets.
fn score_histogram(buckets: &[usize; 10]) -> String {
    let max = buckets.iter().copied().max().unwrap_or(0).max(1);
    let (w, h) = (300, 60);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::event::Role;

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

    fn page(reports: &[EvalReport]) -> String {
        let mut html = Html::new(Vec::new());
        for r in reports {
            html.on_eval_complete(r).expect("eval");
        }
        let suite = SuiteReport::new(
            reports
                .iter()
                .map(crate::run::report::EvalSummary::from)
                .collect(),
            0,
            false,
            1.0,
        );
        html.on_run_complete(&suite).expect("complete");
        String::from_utf8(html.into_inner()).expect("UTF-8")
    }

    /// The JSON inside the element with `id`: base64 of gzip.
    fn decoded(page: &str, id: &str) -> serde_json::Value {
        let start = page.find(&format!("id=\"{id}\"")).expect("the element");
        let body = &page[start..];
        let body = &body[body.find('>').expect("tag end") + 1..];
        let body = &body[..body.find("</script>").expect("script end")];
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(body)
            .expect("base64");
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .expect("gzip");
        serde_json::from_str(&text).expect("JSON")
    }

    #[test]
    fn each_dataset_has_its_line() {
        let page = page(&[
            report("evals::capitals::paris", Some("evals::capitals"), "passed"),
            report(
                "evals::capitals::atlantis",
                Some("evals::capitals"),
                "failed",
            ),
        ]);
        assert!(
            page.contains(
                "<h2>Datasets</h2>\n<ul class=\"datasets\"><li class=\"dataset\">dataset <code>capitals</code>: <span class=\"fail\">1 of 2 cases passed, mean score 0.50, accuracy 0.50</span></li></ul>"
            ),
            "{page}"
        );
    }

    #[test]
    fn rows_come_in_name_order_with_numbers_as_numbers() {
        // Finished out of order, as a concurrent run finishes them; `case_2` twice (the second
        // finished later stays second).
        let ids = [
            "evals::case_10",
            "evals::b::x",
            "evals::case_2",
            "evals::case_1",
            "evals::a",
            "evals::case_2",
        ];
        let reports: Vec<EvalReport> = ids
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let mut r = report(id, None, "passed");
                r.duration_ms = k as f64;
                r
            })
            .collect();
        let rows = decoded(&page(&reports), "rows-data");
        let order: Vec<(&str, f64)> = rows
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| (r[0].as_str().expect("id"), r[4].as_f64().expect("ms")))
            .collect();
        assert_eq!(
            order,
            [
                ("evals::a", 4.0),
                ("evals::b::x", 1.0),
                ("evals::case_1", 3.0),
                ("evals::case_2", 2.0),
                ("evals::case_2", 5.0),
                ("evals::case_10", 0.0),
            ]
        );
        // Each row still points at its own report.
        assert_eq!(rows[5][10], 0);
        assert_eq!(
            name_key("case 7 of 12"),
            "case 000000000007 of 000000000012"
        );
    }

    #[test]
    fn reports_go_out_in_chunks_as_they_finish_and_rows_point_at_them() {
        let reports: Vec<EvalReport> = (0..CHUNK_REPORTS + 3)
            .map(|i| report(&format!("evals::case_{i:03}"), None, "passed"))
            .collect();
        let mut html = Html::new(Vec::new());
        for r in &reports[..CHUNK_REPORTS] {
            html.on_eval_complete(r).expect("eval");
        }
        // The first chunk is out of memory before the run ends, the page not begun.
        assert_eq!(html.chunks, 1);
        assert!(html.chunk.is_none());
        assert!(html.out.is_empty());
        drop(html);

        let page = page(&reports);
        let first = decoded(&page, "c0");
        assert_eq!(first.as_array().map(Vec::len), Some(CHUNK_REPORTS));
        let second = decoded(&page, "c1");
        assert_eq!(second[2]["id"], "evals::case_066");
        let rows = decoded(&page, "rows-data");
        assert_eq!(rows.as_array().map(Vec::len), Some(CHUNK_REPORTS + 3));
        // [id, outcome, flags, score, duration, tokens, cost, tags, dataset, chunk, position, ..]
        assert_eq!(rows[66][0], "evals::case_066");
        assert_eq!(rows[66][9], 1);
        assert_eq!(rows[66][10], 2);
        assert!(page.contains("data-count=\"67\" data-chunks=\"2\""));
    }

    #[test]
    fn rows_carry_flags_and_the_text_to_search() {
        let mut r = report("evals::edits", None, "failed");
        r.events = vec![
            Event::Message {
                role: Role::Assistant,
                text: "Your refund is on its way.".into(),
            },
            Event::WorkspaceChanged {
                files: vec![],
                diff: "".into(),
                partial: false,
            },
            Event::Custom {
                name: "otel.span".into(),
                data: serde_json::json!({}),
            },
        ];
        let page = page(&[r]);
        let rows = decoded(&page, "rows-data");
        assert_eq!(rows[0][2], DIFF | SPANS);
        assert_eq!(rows[0][13], "Your refund is on its way.");
        let long = "x".repeat(SEARCH_CHARS * 2);
        let mut r = report("evals::long", None, "passed");
        r.events = vec![Event::Message {
            role: Role::Assistant,
            text: long.as_str().into(),
        }];
        assert_eq!(search_text(&r).chars().count(), SEARCH_CHARS);
    }

    #[test]
    fn a_suite_files_case_carries_its_matrix_cell_in_its_row() {
        let mut case = report("suite::promptfooconfig::paris [prompt 2]", None, "passed");
        case.matrix = Some(crate::run::definition::MatrixCell::new(
            1,
            "paris",
            (2, "prompt 2".into()),
            (1, "echo".into()),
        ));
        let page = page(&[case, report("evals::x", None, "passed")]);
        let rows = decoded(&page, "rows-data");
        // In name order: `evals::x` first.
        assert_eq!(rows[1][0], "suite::promptfooconfig::paris [prompt 2]");
        assert_eq!(
            rows[1][14],
            serde_json::json!([1, "paris", 2, "prompt 2", 1, "echo"])
        );
        assert_eq!(rows[0][14], serde_json::Value::Null);
    }

    #[test]
    fn a_history_source_is_asked_with_the_pages_ids_and_its_trends_embedded() {
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = std::sync::Arc::clone(&asked);
        let mut html = Html::new(Vec::new()).with_history(Box::new(move |ids: &[&str]| {
            seen.lock()
                .expect("not poisoned")
                .extend(ids.iter().map(|s| s.to_string()));
            Some(serde_json::json!({"runs": [["r1", "2026-01-01T00:00:00Z", "abc", null]]}))
        }));
        for id in ["evals::b", "evals::a"] {
            html.on_eval_complete(&report(id, None, "passed"))
                .expect("eval");
        }
        html.on_run_complete(&SuiteReport::new(vec![], 0, false, 1.0))
            .expect("complete");
        let page = String::from_utf8(html.into_inner()).expect("UTF-8");
        assert_eq!(
            *asked.lock().expect("not poisoned"),
            ["evals::b", "evals::a"]
        );
        assert_eq!(decoded(&page, "history-data")["runs"][0][2], "abc");
        // Without a source (or without a history) the page has no such element.
        assert!(!page_without_history().contains("id=\"history-data\""));
    }

    fn page_without_history() -> String {
        page(&[report("evals::a", None, "passed")])
    }

    #[test]
    fn a_changed_pass_rate_has_its_newcombe_interval_and_a_score_its_welch_one() {
        let change: EvalChange = serde_json::from_value(serde_json::json!({
            "id": "evals::a", "kind": "worse",
            "pass_rate": crate::run::compare::PassRateChange::new(18, 20, 6, 20, 0.05),
            "score": {"baseline": 0.9, "current": 0.5, "p_value": 0.01},
            "tokens": {"baseline": 100.0, "current": 150.0},
            "cost": {},
        }))
        .expect("a change");
        let rows = change_intervals(&change, 0.05);
        assert_eq!(rows[0][0], "pass rate");
        let (d, low, high) = (
            rows[0][1].as_f64().expect("a change"),
            rows[0][2].as_f64().expect("low"),
            rows[0][3].as_f64().expect("high"),
        );
        assert!(
            (d + 0.6).abs() < 1e-9 && low < d && d < high && high < 0.0,
            "{rows}"
        );
        assert_eq!(rows[1][0], "score");
        assert_eq!(rows[1][5], "welch");
        // p = 0.01 < 0.05: the interval is clear of zero; its half-width 1.96/2.576 of |d|.
        let (low, high) = (
            rows[1][2].as_f64().expect("low"),
            rows[1][3].as_f64().expect("high"),
        );
        assert!(high < 0.0, "{rows}");
        assert!(
            ((high - low) / 2.0 - 0.4 * 1.959_964 / 2.575_829).abs() < 1e-3,
            "{rows}"
        );
        assert_eq!(rows[2][0], "tokens/run");
        assert_eq!(rows[2][5], "point");
        assert_eq!(
            rows.as_array().map(Vec::len),
            Some(3),
            "no cost known: no row"
        );
    }

    #[test]
    fn script_data_cannot_close_the_script_element() {
        let mut r = report("evals::x", None, "passed");
        r.description = Some("</script><script>alert(1)".into());
        let page = page(&[r]);
        assert_eq!(
            page.matches("<script>").count(),
            1,
            "only the viewer's script"
        );
        assert!(!page.contains("alert(1)"));
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::output::reporter::{Html, Reporter, SuiteReport};

        let mut html = Html::new(Vec::new());
        html.on_run_complete(&SuiteReport::new(vec![], 0, false, 1.0))
            .unwrap();
        let page = String::from_utf8(html.into_inner()).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"));
    }
}
