//! The console reporter: libtest-style progress lines (a live status line on a terminal), the
//! reports of failed evals, a summary table, and libtest's closing `test result:` line. Quiet
//! mode (`--quiet`, which `cargo test -q` passes) prints libtest's terse form instead: one
//! character per eval, the failures and the closing line — on a terminal, the status line
//! instead of the characters. Evals running past `[run] slow_after` are named once, as libtest
//! names tests running over 60 seconds; off a terminal a plain progress line is printed every
//! 30 seconds of a long suite.
//!
//! The status line is drawn by hand rather than with `indicatif`: the same writer interleaves
//! libtest's lines, failure reports and the table with it, and is any `Write` (tests capture
//! it), which `indicatif`'s draw targets (a terminal or a hidden sink) do not offer.

use std::io::Write;
use std::time::{Duration, Instant};

use super::Reporter;
use crate::base::outcome::Outcome;
use crate::run::report::matrix::{Matrices, Matrix, Verdict, clip};
use crate::run::report::{EvalReport, EvalSummary, Names, Progress, SuiteReport, SuiteStart};

/// The width the console fits a suite file's matrix to when it cannot ask the terminal.
const DEFAULT_WIDTH: usize = 120;

/// The most rows the table of evals shows: past it the table shows the first rows by id and
/// counts the rest, so the console of a run of a million evals keeps a bounded table (every
/// result is in the results file).
pub(crate) const MAX_TABLE_ROWS: usize = 10_000;

/// Writes progress and a summary table to `out`.
pub struct Console<W: Write + Send> {
    out: W,
    live: bool,
    quiet: bool,
    show_output: bool,
    total: usize,
    done: usize,
    failures: Vec<String>,
    /// Failures past [`super::MAX_FAILURE_DETAILS`]: counted, not kept.
    failures_left_out: usize,
    filtered_out: usize,
    /// How the run names its evals (see [`Names`]), from the evals it starts.
    names: Names,
    /// Evals failed so far.
    failed: usize,
    /// Evals running at the last progress report.
    running: usize,
    /// When the suite started.
    started: Option<Instant>,
    /// When the last plain progress line was printed (off a terminal), as suite time.
    last_plain: Duration,
    /// Quiet characters have been written on the current line.
    mid_line: bool,
    /// The table's rows: the summaries of the first [`MAX_TABLE_ROWS`] evals by id (the
    /// heap's top is the last of them).
    rows: std::collections::BinaryHeap<ById>,
    /// Evals past [`MAX_TABLE_ROWS`]: counted, not kept.
    rows_left_out: usize,
    /// The matrices of the suite files' cases, printed at the end.
    matrices: Matrices,
    /// The width the matrices fit in, in columns.
    width: usize,
    /// Whether verdicts are coloured (a terminal, without `NO_COLOR`).
    colour: bool,
    /// The reports come from results files, not from a run ([`Console::replay`]).
    replay: bool,
}

impl Console<std::io::Stdout> {
    /// A console reporter on stdout; live status line when stdout is a terminal.
    pub fn stdout() -> Self {
        use std::io::IsTerminal;
        let live = std::io::stdout().is_terminal();
        let width = if live {
            terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0))
        } else {
            None
        };
        let width = width.or_else(|| {
            std::env::var("COLUMNS")
                .ok()
                .and_then(|c| c.trim().parse().ok())
        });
        Console::new(std::io::stdout(), live).width(width.unwrap_or(DEFAULT_WIDTH))
    }
}

impl<W: Write + Send> Console<W> {
    /// A console reporter writing to `out`; `live` redraws a status line (for terminals).
    pub fn new(out: W, live: bool) -> Self {
        Console {
            out,
            live,
            quiet: false,
            show_output: false,
            total: 0,
            done: 0,
            failures: Vec::new(),
            failures_left_out: 0,
            filtered_out: 0,
            names: Names::default(),
            failed: 0,
            running: 0,
            started: None,
            last_plain: Duration::ZERO,
            mid_line: false,
            rows: std::collections::BinaryHeap::new(),
            rows_left_out: 0,
            matrices: Matrices::default(),
            width: DEFAULT_WIDTH,
            colour: live && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            replay: false,
        }
    }

    /// The width, in columns, a suite file's matrix is fitted to (the terminal's, for
    /// [`Console::stdout`]; 120 otherwise).
    pub fn width(mut self, columns: usize) -> Self {
        self.width = columns.max(20);
        self
    }

    /// Prints the report of every eval under its line, passing and skipped ones too (what
    /// `--nocapture` and `--show-output` ask for); failed evals' reports are listed at the end
    /// either way.
    pub fn show_output(mut self, show: bool) -> Self {
        self.show_output = show;
        self
    }

    /// How many evals the filters excluded (shown in the closing line).
    pub fn filtered_out(mut self, count: usize) -> Self {
        self.filtered_out = count;
        self
    }

    /// libtest's terse form: `.` per passed eval, `F` per failure, `i` per skip, then the
    /// failures and the closing line (no table). On a terminal (`live`), the status line
    /// stands in for the characters.
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    /// The reports are read back from results files (report mode, `niceeval report`,
    /// `niceeval view`), not run: nothing says evals are running or how long the reading
    /// took, no eval gets a progress line or character, and failures are not dumped (the
    /// table, the comparison and the closing counts stay); `show_output` prints every report.
    pub fn replay(mut self, replay: bool) -> Self {
        self.replay = replay;
        self
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn clear_status(&mut self) -> std::io::Result<()> {
        if self.live {
            write!(self.out, "\r\x1b[2K")?;
        }
        Ok(())
    }

    fn status(&mut self) -> std::io::Result<()> {
        if self.live && self.done < self.total {
            let elapsed = self.started.map_or(Duration::ZERO, |s| s.elapsed());
            let line = progress_line(self.done, self.total, self.running, self.failed, elapsed);
            write!(self.out, "{line}")?;
        }
        self.out.flush()
    }

    /// Ends a line of quiet characters, so what follows starts on a line of its own.
    fn end_quiet_line(&mut self) -> std::io::Result<()> {
        if self.mid_line {
            writeln!(self.out)?;
            self.mid_line = false;
        }
        Ok(())
    }
}

/// The progress of a suite in one line: a bar, evals done of total, running, failed so far,
/// elapsed time and the estimated time left (from the mean time per finished eval).
pub fn progress_line(
    done: usize,
    total: usize,
    running: usize,
    failed: usize,
    elapsed: Duration,
) -> String {
    const WIDTH: usize = 28;
    let filled = (WIDTH * done / total.max(1)).min(WIDTH);
    format!(
        "[{}{}] {}",
        "=".repeat(filled),
        " ".repeat(WIDTH - filled),
        progress_counts(done, total, running, failed, elapsed)
    )
}

/// [`progress_line`] without the bar: the plain line printed off a terminal.
fn progress_counts(
    done: usize,
    total: usize,
    running: usize,
    failed: usize,
    elapsed: Duration,
) -> String {
    let eta = if done == 0 {
        "-".to_string()
    } else {
        let left = elapsed.as_secs_f64() / done as f64 * total.saturating_sub(done) as f64;
        clock(Duration::from_secs_f64(left))
    };
    format!(
        "{done}/{total} evals, {running} running, {failed} failed, {} elapsed, ETA {eta}",
        clock(elapsed)
    )
}

/// `1:05`, `1:02:03`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

impl<W: Write + Send> Console<W> {
    /// The name shown for `id`: libtest's, or the whole id when several targets are shown.
    fn name<'a>(&self, id: &'a str) -> &'a str {
        self.names.name(id)
    }
}

impl<W: Write + Send> Console<W> {
    /// Keeps a failed eval's rendered report for the end, up to
    /// [`super::MAX_FAILURE_DETAILS`]; past that, only counts it.
    fn keep_failure(&mut self, report: &EvalReport) {
        if self.failures.len() < super::MAX_FAILURE_DETAILS {
            self.failures.push(report.render_as(self.names));
        } else {
            self.failures_left_out += 1;
        }
    }
}

/// An eval's row of the table, ordered by its id.
struct ById(EvalSummary);

impl PartialEq for ById {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for ById {}

impl PartialOrd for ById {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ById {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.id.cmp(&other.0.id)
    }
}

impl<W: Write + Send> Console<W> {
    /// Keeps `report`'s row of the table while it is among the first [`MAX_TABLE_ROWS`] by id.
    fn keep_row(&mut self, report: &EvalReport) {
        if self.rows.len() == MAX_TABLE_ROWS {
            match self.rows.peek() {
                Some(last) if report.id < last.0.id => {
                    self.rows.pop();
                }
                _ => {
                    self.rows_left_out += 1;
                    return;
                }
            }
            self.rows_left_out += 1;
        }
        self.rows.push(ById(EvalSummary::without_baseline(report)));
    }
}

impl<W: Write + Send> Reporter for Console<W> {
    /// The console keeps its table's rows itself, bounded ([`MAX_TABLE_ROWS`]).
    fn reads_evals(&self) -> bool {
        false
    }

    fn on_run_start(&mut self, start: &SuiteStart) -> std::io::Result<()> {
        self.total = start.evals.len();
        self.started = Some(Instant::now());
        self.names = start.evals.names();
        if self.replay {
            return Ok(());
        }
        writeln!(
            self.out,
            "\nrunning {} eval{} (concurrency {})",
            self.total,
            if self.total == 1 { "" } else { "s" },
            start.concurrency
        )?;
        self.status()
    }

    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        // The table and the matrices under it, which a quiet console does not write.
        if !self.quiet {
            self.keep_row(report);
            self.matrices.add(report);
        }
        self.done += 1;
        self.running = self.running.saturating_sub(1);
        if report.outcome == Outcome::Failed {
            self.failed += 1;
        }
        if self.replay {
            if self.show_output {
                writeln!(self.out, "{}", report.render_as(self.names))?;
            }
            return Ok(());
        }
        if self.quiet {
            let mark = match report.outcome {
                Outcome::Passed => ".",
                Outcome::Skipped => "i",
                Outcome::Failed => {
                    self.keep_failure(report);
                    "F"
                }
            };
            if self.live {
                self.clear_status()?;
                return self.status();
            }
            write!(self.out, "{mark}")?;
            self.mid_line = true;
            return self.out.flush();
        }
        self.clear_status()?;
        let name = self.name(&report.id);
        match report.outcome {
            Outcome::Passed if report.below_threshold => {
                writeln!(self.out, "test {name} ... ok (below threshold)")?
            }
            Outcome::Passed => writeln!(self.out, "test {name} ... ok")?,
            Outcome::Skipped => writeln!(
                self.out,
                "test {name} ... ignored, {}",
                report.skip_reason.as_deref().unwrap_or("skipped")
            )?,
            Outcome::Failed => {
                writeln!(self.out, "test {name} ... FAILED")?;
                self.keep_failure(report);
            }
        }
        if self.show_output && report.outcome != Outcome::Failed {
            writeln!(self.out, "{}", report.render_as(self.names))?;
        }
        self.status()
    }

    fn on_progress(&mut self, progress: &Progress) -> std::io::Result<()> {
        self.running = progress.running.len();
        self.clear_status()?;
        if !progress.newly_slow.is_empty() {
            self.end_quiet_line()?;
            for id in &progress.newly_slow {
                let secs = progress.slow_after.as_secs();
                writeln!(
                    self.out,
                    "test {} has been running for over {secs} second{}",
                    self.name(id),
                    if secs == 1 { "" } else { "s" }
                )?;
            }
        }
        const PLAIN_EVERY: Duration = Duration::from_secs(30);
        if !self.live && !self.quiet && progress.elapsed >= self.last_plain + PLAIN_EVERY {
            self.last_plain = progress.elapsed;
            writeln!(
                self.out,
                "progress: {}",
                progress_counts(
                    self.done,
                    self.total,
                    self.running,
                    self.failed,
                    progress.elapsed
                )
            )?;
        }
        self.status()
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        self.clear_status()?;
        // The names the run started with (its failures are already written with them); a
        // console that saw no start takes the suite's.
        if self.started.is_none() {
            self.names = suite.names();
        }
        if self.quiet && self.done > 0 && !self.live && !self.replay {
            writeln!(self.out)?;
        }
        if !self.failures.is_empty() {
            writeln!(self.out, "\nfailures:\n")?;
            for failure in &self.failures {
                writeln!(self.out, "{failure}")?;
            }
            if self.failures_left_out > 0 {
                writeln!(
                    self.out,
                    "... and {} more failed eval(s), not shown (the first {} are); every report is in the results file (niceeval report --html FILE shows them all)\n",
                    self.failures_left_out,
                    super::MAX_FAILURE_DETAILS
                )?;
            }
        }
        // The rows kept as evals finished; a console that saw none takes the suite's.
        let kept: Vec<EvalSummary>;
        let rows = if self.done == 0 {
            &suite.evals
        } else {
            kept = std::mem::take(&mut self.rows)
                .into_sorted_vec()
                .into_iter()
                .map(|row| row.0)
                .collect();
            &kept
        };
        if !rows.is_empty() && !self.quiet {
            writeln!(self.out)?;
            write_table(&mut self.out, rows, self.names)?;
            if self.rows_left_out > 0 {
                writeln!(
                    self.out,
                    "... and {} more eval(s), not shown (the first {MAX_TABLE_ROWS} by id are); every result is in the results file (niceeval report --html FILE shows them all)",
                    self.rows_left_out
                )?;
            }
            for dataset in &suite.datasets {
                let name = self.name(&dataset.id).to_string();
                writeln!(self.out, "dataset {name}: {}", dataset.counts())?;
            }
            for matrix in self.matrices.tables() {
                let name = self.names.name(&matrix.file);
                write_matrix(&mut self.out, matrix, name, self.width, self.colour)?;
            }
            if let Some(spending) = suite.spending() {
                writeln!(self.out, "total {spending}")?;
            }
        }
        if !suite.flaky.is_empty() {
            writeln!(
                self.out,
                "\nflaky: {} eval(s) whose runs disagree:",
                suite.flaky.len()
            )?;
            for flaky in &suite.flaky {
                let name = self.name(&flaky.id).to_string();
                writeln!(self.out, "    {name}: {}", flaky.describe())?;
            }
        }
        if let Some(comparison) = &suite.comparison {
            writeln!(self.out)?;
            for line in crate::run::report::comparison_text::console(comparison, self.names) {
                writeln!(self.out, "{line}")?;
            }
        }
        if suite.interrupted {
            writeln!(
                self.out,
                "\n{}: {} eval(s) did not finish; finished results were reported",
                suite.interruption(),
                suite.not_run
            )?;
            if !suite.unfinished.is_empty() {
                writeln!(self.out, "\ndid not finish:")?;
                for id in &suite.unfinished {
                    writeln!(self.out, "    {}", self.name(id))?;
                }
            }
        }
        let verdict = if suite.success() { "ok" } else { "FAILED" };
        if self.replay {
            writeln!(
                self.out,
                "\ntest result: {verdict}. {} passed; {} failed; {} ignored; 0 measured; {} filtered out; read from results (nothing ran)\n",
                suite.passed, suite.failed, suite.skipped, self.filtered_out,
            )?;
            return self.out.flush();
        }
        writeln!(
            self.out,
            "\ntest result: {verdict}. {} passed; {} failed; {} ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
            suite.passed,
            suite.failed,
            suite.skipped,
            self.filtered_out,
            suite.duration_ms / 1000.0
        )?;
        self.out.flush()
    }
}

/// Renders the per-eval summary table: outcome, runs, pass rate, pass@k and pass^k (at
/// [`EvalSummary::table_k`]), score, tokens, cost and wall time. `-` marks what does not apply
/// (pass statistics of a single run, tokens nobody reported, an unknown cost). Evals are named
/// as a run of just these evals names them: without their test target when they share one.
pub fn summary_table(evals: &[EvalSummary]) -> String {
    table(evals, Names::of(evals.iter().map(|e| e.id.as_str())))
}

/// [`summary_table`], evals named by `names`.
fn table(evals: &[EvalSummary], names: Names) -> String {
    let mut out = Vec::new();
    let _ = write_table(&mut out, evals, names);
    String::from_utf8(out).unwrap_or_default()
}

/// One row of the table.
fn row(e: &EvalSummary, names: Names) -> [String; 10] {
    let outcome = match (e.outcome, e.error, e.below_threshold) {
        (Outcome::Failed, true, _) => "error".to_string(),
        (Outcome::Passed, _, true) => "passed*".to_string(),
        (o, _, _) => o.as_str().to_string(),
    };
    let [runs, rate, at_k, hat_k, score, tokens, cost, time] = e.table_cells("-");
    [
        names.name(&e.id).to_string(),
        outcome,
        runs,
        rate,
        at_k,
        hat_k,
        score,
        tokens,
        cost,
        time,
    ]
}

/// Writes the table to `out` a row at a time (the widths are measured in a first pass): a
/// suite of 100,000 evals does not build its table in memory.
fn write_table(out: &mut impl Write, evals: &[EvalSummary], names: Names) -> std::io::Result<()> {
    const HEADER: [&str; 10] = crate::run::report::table::EVAL_COLUMNS;
    let mut widths = HEADER.map(|h| h.chars().count());
    for e in evals {
        for (w, cell) in widths.iter_mut().zip(row(e, names)) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    let mut line = |cells: &[String], out: &mut dyn Write| -> std::io::Result<()> {
        use std::fmt::Write as _;
        text.clear();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            let _ = match i {
                0 | 1 => write!(text, "{c:<w$}"),
                _ => write!(text, "{c:>w$}"),
            };
        }
        writeln!(out, "{}", text.trim_end())
    };
    line(&HEADER.map(str::to_string), out)?;
    line(&widths.map(|w| "-".repeat(w)), out)?;
    for e in evals {
        line(&row(e, names), out)?;
    }
    if evals
        .iter()
        .any(|e| e.below_threshold && e.outcome == Outcome::Passed)
    {
        writeln!(
            out,
            "* passed with a soft assertion below its threshold (fails under --strict)"
        )?;
    }
    Ok(())
}

/// The narrowest a matrix cell gets: a verdict (`ERROR`, `PASS*`).
const MIN_CELL: usize = 5;
/// The widest a matrix cell gets.
const MAX_CELL: usize = 48;
/// The widest the tests' column gets.
const MAX_TEST: usize = 32;

/// Writes a suite file's matrix: one row per test, one column per prompt × provider, each
/// cell the verdict, then the score and the start of the output as far as `width` allows.
/// Columns that do not fit side by side go on in a further block; headers cut to fit are
/// numbered and listed in full under the table. `colour` colours the verdicts.
fn write_matrix(
    out: &mut impl Write,
    matrix: &Matrix,
    name: &str,
    width: usize,
    colour: bool,
) -> std::io::Result<()> {
    let rows = matrix.rows();
    let columns = matrix.column_labels();
    writeln!(
        out,
        "\nmatrix {name}: {} test{} × {} prompt/provider columns",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        columns.len()
    )?;
    let test_width = rows
        .iter()
        .map(|(_, label)| label.chars().count())
        .chain([4])
        .max()
        .unwrap_or(4)
        .min(MAX_TEST);
    // What each column would like: its header and its widest cell, whole.
    let wanted: Vec<usize> = columns
        .iter()
        .map(|(at, label)| {
            matrix
                .cells
                .iter()
                .filter(|((_, c), _)| c == at)
                .map(|(_, cell)| cell.text(MAX_CELL).chars().count())
                .chain([label.chars().count()])
                .max()
                .unwrap_or(MIN_CELL)
                .clamp(MIN_CELL, MAX_CELL)
        })
        .collect();
    let room = width.saturating_sub(test_width);
    let per_block = (room / (MIN_CELL + 2)).clamp(1, columns.len().max(1));
    let mut numbered = false;
    let blocks: Vec<std::ops::Range<usize>> = (0..columns.len())
        .step_by(per_block)
        .map(|start| start..(start + per_block).min(columns.len()))
        .collect();
    let mut legend = Vec::new();
    for block in blocks {
        if block.start > 0 {
            writeln!(out)?;
        }
        // Share the room: each column its wish, if all fit; else an even share.
        let n = block.len();
        let share = (room / n).saturating_sub(2).max(MIN_CELL);
        let widths: Vec<usize> = block.clone().map(|i| wanted[i].min(share)).collect();
        let headers: Vec<String> = block
            .clone()
            .zip(&widths)
            .map(|(i, w)| {
                let label = &columns[i].1;
                if label.chars().count() <= *w {
                    label.clone()
                } else {
                    numbered = true;
                    legend.push(format!("  #{} = {label}", i + 1));
                    clip(&format!("#{} {label}", i + 1), *w)
                }
            })
            .collect();
        let mut line = format!("{:<test_width$}", "test");
        for (header, w) in headers.iter().zip(&widths) {
            line.push_str(&format!("  {header:<w$}"));
        }
        writeln!(out, "{}", line.trim_end())?;
        let mut line = "-".repeat(test_width);
        for w in &widths {
            line.push_str("  ");
            line.push_str(&"-".repeat(*w));
        }
        writeln!(out, "{line}")?;
        for (test, label) in &rows {
            let mut line = format!("{:<test_width$}", clip(label, test_width));
            for (i, w) in block.clone().zip(&widths) {
                line.push_str("  ");
                let Some(cell) = matrix.cells.get(&(*test, columns[i].0)) else {
                    line.push_str(&format!("{:<w$}", "-"));
                    continue;
                };
                let text = cell.text(*w);
                let pad = w.saturating_sub(text.chars().count());
                let word = cell.verdict.word();
                if colour {
                    let code = match cell.verdict {
                        Verdict::Passed => "32",
                        Verdict::Failed | Verdict::Error => "31",
                        Verdict::Below | Verdict::Skipped => "33",
                    };
                    line.push_str(&format!("\x1b[{code}m{word}\x1b[0m{}", &text[word.len()..]));
                } else {
                    line.push_str(&text);
                }
                line.push_str(&" ".repeat(pad));
            }
            writeln!(out, "{}", line.trim_end())?;
        }
    }
    if numbered {
        writeln!(out, "columns:")?;
        for line in legend {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(id: &str, outcome: &str) -> EvalReport {
        serde_json::from_value(serde_json::json!({
            "id": id, "file": "tests/demo.rs", "line": 3, "outcome": outcome,
            "assertions": [{"name": "includes(\"refund\")", "kind": "value", "severity": "gate",
              "score": 1.0, "passed": true, "reason": "found at \"refund\""}],
            "duration_ms": 1.0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
            "min_pass_rate": 1.0
        }))
        .expect("a report")
    }

    /// Past [`MAX_TABLE_ROWS`] the table shows the first rows by id, whatever order the evals
    /// finish in, and counts the rest; up to it, every row.
    #[test]
    fn the_table_keeps_its_first_rows_by_id_and_counts_the_rest() {
        for (count, left_out) in [(MAX_TABLE_ROWS, 0), (MAX_TABLE_ROWS + 3, 3)] {
            let mut console = Console::new(Vec::new(), false);
            let ids: Vec<String> = (0..count)
                .rev()
                .map(|i| format!("evals::e{i:05}"))
                .collect();
            console
                .on_run_start(&SuiteStart {
                    evals: ids.clone().into(),
                    concurrency: 1,
                })
                .expect("written");
            let mut summaries = Vec::new();
            for id in &ids {
                let report = report(id, "passed");
                console.on_eval_complete(&report).expect("written");
                summaries.push(EvalSummary::from(&report));
            }
            // The suite's own summaries are not read: the console kept its rows.
            let suite = SuiteReport::new(Vec::new(), 0, false, 1.0);
            console.on_run_complete(&suite).expect("written");
            let out = String::from_utf8(console.into_inner()).expect("UTF-8");
            let table = out
                .split("\n\n")
                .find(|block| block.starts_with("eval "))
                .expect("a table");
            let rows: Vec<&str> = table.lines().skip(2).collect();
            assert_eq!(
                rows.len(),
                MAX_TABLE_ROWS + usize::from(left_out > 0),
                "{count}"
            );
            assert!(rows[0].starts_with("e00000 "), "{}", rows[0]);
            assert!(rows[MAX_TABLE_ROWS - 1].starts_with("e09999 "));
            if left_out > 0 {
                assert_eq!(
                    rows[MAX_TABLE_ROWS],
                    "... and 3 more eval(s), not shown (the first 10000 by id are); every result is in the results file (niceeval report --html FILE shows them all)"
                );
            } else {
                // Up to the bound, the table is the one every summary makes.
                let whole = table_of(&summaries);
                assert!(table.starts_with(whole.trim_end()), "{count}");
            }
        }
    }

    fn table_of(summaries: &[EvalSummary]) -> String {
        let mut sorted = summaries.to_vec();
        sorted.sort_by(|a, b| a.id.cmp(&b.id));
        summary_table(&sorted)
    }

    /// A case of `suite::promptfooconfig`: test `test` with prompt `p` and provider `q`.
    fn case(test: usize, p: usize, q: usize, outcome: &str, reply: &str) -> EvalReport {
        let description = ["capital of France", "capital of Italy", "capital of France"][test - 1];
        let prompt = [
            "Answer briefly: {{question}}",
            "Respond in JSON: {{question}}",
        ][p - 1];
        let provider = ["openai:chat:gpt-4o-mini", "anthropic:messages:claude-haiku"][q - 1];
        let mut r = report(
            &format!("suite::promptfooconfig::{description} [prompt {p}, {provider}]"),
            outcome,
        );
        r.dataset = Some("suite::promptfooconfig".into());
        r.score = Some(if outcome == "passed" { 1.0 } else { 0.5 });
        r.events = vec![crate::base::event::Event::Message {
            role: crate::base::event::Role::Assistant,
            text: reply.into(),
        }];
        if reply.is_empty() {
            r.events.clear();
            r.error = Some(crate::base::outcome::RunError::new(
                crate::base::outcome::RunErrorKind::Agent,
                "connection refused",
            ));
        }
        r.matrix = Some(crate::run::definition::MatrixCell::new(
            test,
            description,
            (p, prompt.to_string()),
            (q, provider.to_string()),
        ));
        r
    }

    #[test]
    fn replayed_results_say_nothing_of_running_and_dump_no_failure() {
        for quiet in [false, true] {
            let mut console = Console::new(Vec::new(), false).quiet(quiet).replay(true);
            let reports = [report("demo::ok", "passed"), report("demo::bad", "failed")];
            let suite = SuiteReport::new(
                reports
                    .iter()
                    .map(crate::run::report::EvalSummary::from)
                    .collect(),
                0,
                false,
                2.0,
            );
            console
                .on_run_start(&SuiteStart {
                    evals: reports.iter().map(|r| r.id.clone()).collect(),
                    concurrency: 1,
                })
                .expect("written");
            for r in &reports {
                console.on_eval_complete(r).expect("written");
            }
            console.on_run_complete(&suite).expect("written");
            let text = String::from_utf8(console.into_inner()).expect("UTF-8");
            for said in [
                "running",
                "finished in",
                "failures:",
                "eval demo::bad FAILED",
            ] {
                assert!(!text.contains(said), "quiet {quiet}: {said:?} in\n{text}");
            }
            assert!(
                text.contains("test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; read from results (nothing ran)"),
                "{text}"
            );
        }
    }

    fn matrix_run(width: usize) -> String {
        let mut reports = Vec::new();
        for test in 1..=3 {
            for p in 1..=2 {
                for q in 1..=2 {
                    let (outcome, reply) = match (test, p, q) {
                        (2, 2, 1) => ("failed", "Rome is the capital of Italy."),
                        (3, 1, 2) => ("failed", ""),
                        (_, 2, _) => ("passed", "{\"answer\": \"Paris\"}\n"),
                        _ => ("passed", "Paris is the capital of France, on the Seine."),
                    };
                    reports.push(case(test, p, q, outcome, reply));
                }
            }
        }
        // A Rust eval beside them has no cell.
        reports.push(report("suite::refund", "passed"));
        let mut console = Console::new(Vec::new(), false).width(width);
        for r in &reports {
            console.on_eval_complete(r).expect("written");
        }
        let summaries = reports.iter().map(EvalSummary::from).collect();
        console
            .on_run_complete(&SuiteReport::new(summaries, 0, false, 1000.0))
            .expect("written");
        let text = String::from_utf8(console.into_inner()).expect("UTF-8");
        // The matrix, without the failures and the summary table above it.
        let start = text.find("\nmatrix ").expect("a matrix");
        let end = text.find("\ntest result:").expect("the closing line");
        text[start..end].to_string()
    }

    #[test]
    fn a_suite_files_cases_are_a_matrix_fitted_to_the_width() {
        insta::assert_snapshot!("matrix_wide", matrix_run(160));
        // Narrow: the columns go on in a second block, cut headers numbered in a legend.
        insta::assert_snapshot!("matrix_narrow", matrix_run(40));
        // Off a terminal, no colour; on one, the verdicts are coloured.
        assert!(!matrix_run(160).contains('\x1b'));
    }

    #[test]
    fn on_a_terminal_the_verdicts_are_coloured() {
        let mut console = Console::new(Vec::new(), true).width(100);
        if !console.colour {
            return; // NO_COLOR is set in this environment: nothing to colour
        }
        let reports = [
            case(1, 1, 1, "passed", "Paris."),
            case(1, 2, 1, "failed", "Paris."),
        ];
        for r in &reports {
            console.on_eval_complete(r).expect("written");
        }
        let summaries = reports.iter().map(EvalSummary::from).collect();
        console
            .on_run_complete(&SuiteReport::new(summaries, 0, false, 1.0))
            .expect("written");
        let text = String::from_utf8(console.into_inner()).expect("UTF-8");
        assert!(text.contains("\x1b[32mPASS\x1b[0m 1.00 Paris."), "{text:?}");
        assert!(text.contains("\x1b[31mFAIL\x1b[0m 0.50 Paris."), "{text:?}");
    }

    #[test]
    fn one_prompt_and_one_provider_draw_no_matrix() {
        let mut console = Console::new(Vec::new(), false);
        let reports = [
            case(1, 1, 1, "passed", "Paris."),
            case(2, 1, 1, "passed", "Rome."),
        ];
        for r in &reports {
            console.on_eval_complete(r).expect("written");
        }
        let summaries = reports.iter().map(EvalSummary::from).collect();
        console
            .on_run_complete(&SuiteReport::new(summaries, 0, false, 1.0))
            .expect("written");
        let text = String::from_utf8(console.into_inner()).expect("UTF-8");
        assert!(!text.contains("matrix"), "{text}");
    }

    #[test]
    fn show_output_prints_passing_reports_under_their_line() {
        let passed = report("demo::refund", "passed");
        let mut plain = Console::new(Vec::new(), false);
        plain.on_eval_complete(&passed).unwrap();
        let plain = String::from_utf8(plain.into_inner()).unwrap();
        assert_eq!(plain, "test refund ... ok\n");

        let mut shown = Console::new(Vec::new(), false).show_output(true);
        shown.on_eval_complete(&passed).unwrap();
        let shown = String::from_utf8(shown.into_inner()).unwrap();
        assert!(
            // One name for the eval: the progress line's and the report header's.
            shown.starts_with("test refund ... ok\neval refund passed\n"),
            "{shown}"
        );
        assert!(shown.contains("includes(\"refund\")"), "{shown}");
    }

    #[test]
    fn evals_of_several_targets_keep_their_full_ids() {
        let summary = |id: &str| EvalSummary::from(&report(id, "passed"));
        let one = summary_table(&[summary("evals::order_status"), summary("evals::refund")]);
        assert!(
            one.lines()
                .nth(2)
                .is_some_and(|l| l.starts_with("order_status ")),
            "{one}"
        );
        let two = summary_table(&[
            summary("evals::order_status"),
            summary("smoke::order_status"),
        ]);
        let rows: Vec<&str> = two.lines().skip(2).collect();
        assert!(rows[0].starts_with("evals::order_status "), "{two}");
        assert!(rows[1].starts_with("smoke::order_status "), "{two}");
    }

    fn progress(elapsed: u64, running: &[&str], newly_slow: &[&str]) -> Progress {
        Progress {
            elapsed: Duration::from_secs(elapsed),
            running: running
                .iter()
                .map(|id| (id.to_string(), Duration::from_secs(elapsed)))
                .collect(),
            newly_slow: newly_slow.iter().map(|id| id.to_string()).collect(),
            slow_after: Duration::from_secs(60),
        }
    }

    fn start(console: &mut Console<Vec<u8>>, evals: &[&str]) {
        let start = SuiteStart {
            evals: evals.iter().map(|e| e.to_string()).collect(),
            concurrency: 2,
        };
        console.on_run_start(&start).expect("written");
    }

    #[test]
    fn evals_running_long_are_named_once_as_libtest_does() {
        let mut console = Console::new(Vec::new(), false);
        start(&mut console, &["evals::slow", "evals::quick"]);
        console
            .on_progress(&progress(61, &["evals::slow"], &["evals::slow"]))
            .expect("written");
        console
            .on_progress(&progress(62, &["evals::slow"], &[]))
            .expect("written");
        let text = String::from_utf8(console.into_inner()).expect("UTF-8");
        assert_eq!(
            text.matches("test slow has been running for over 60 seconds\n")
                .count(),
            1,
            "{text}"
        );
        // Off a terminal, a plain progress line every 30 seconds; no escape codes.
        assert!(
            text.contains("progress: 0/2 evals, 1 running, 0 failed, 1:01 elapsed, ETA -\n"),
            "{text}"
        );
        assert_eq!(text.matches("progress:").count(), 1, "{text}");
        assert!(!text.contains('\x1b'), "{text}");
    }

    #[test]
    fn quiet_on_a_terminal_draws_the_status_line_instead_of_characters() {
        let mut console = Console::new(Vec::new(), true).quiet(true);
        start(&mut console, &["evals::a", "evals::b", "evals::c"]);
        console
            .on_progress(&progress(1, &["evals::a", "evals::b"], &[]))
            .expect("written");
        console
            .on_eval_complete(&report("evals::a", "failed"))
            .expect("written");
        let text = String::from_utf8(console.into_inner()).expect("UTF-8");
        let last = text.rsplit("\r\x1b[2K").next().unwrap_or_default();
        assert!(
            last.starts_with("[=========                   ] 1/3 evals, 1 running, 1 failed,"),
            "{text:?}"
        );
        assert!(
            !text.contains('F'),
            "no terse characters on a terminal: {text:?}"
        );
    }

    #[test]
    fn quiet_off_a_terminal_keeps_libtests_characters() {
        let mut console = Console::new(Vec::new(), false).quiet(true);
        start(&mut console, &["evals::a", "evals::b"]);
        console
            .on_eval_complete(&report("evals::a", "passed"))
            .expect("written");
        console
            .on_progress(&Progress {
                newly_slow: vec!["evals::b".into()],
                ..progress(61, &["evals::b"], &[])
            })
            .expect("written");
        let text = String::from_utf8(console.into_inner()).expect("UTF-8");
        assert!(
            text.ends_with(".\ntest b has been running for over 60 seconds\n"),
            "{text:?}"
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::output::reporter::{Console, Reporter, SuiteReport, SuiteStart};

        let mut console = Console::new(Vec::new(), false);
        console
            .on_run_start(&SuiteStart {
                evals: Default::default(),
                concurrency: 4,
            })
            .unwrap();
        console
            .on_run_complete(&SuiteReport::new(vec![], 0, false, 10.0))
            .unwrap();
        let text = String::from_utf8(console.into_inner()).unwrap();
        assert!(text.contains(
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
        ));
    }

    #[test]
    fn example_2() {
        use crate::output::reporter::console::progress_line;
        use std::time::Duration;

        assert_eq!(
            progress_line(10, 40, 4, 1, Duration::from_secs(30)),
            "[=======                     ] 10/40 evals, 4 running, 1 failed, 0:30 elapsed, ETA 1:30"
        );
        assert!(progress_line(0, 40, 4, 0, Duration::from_secs(3)).ends_with("ETA -"));
    }

    #[test]
    fn example_3() {
        use crate::output::reporter::EvalSummary;
        use crate::output::reporter::console::summary_table;
        use crate::{Outcome, Usage};

        let row: EvalSummary = serde_json::from_value(serde_json::json!({
            "id": "demo::refund", "outcome": Outcome::Passed, "error": false, "below_threshold": false,
            "runs": 4, "pass_rate": 0.75, "pass_at_k": [0.75, 1.0, 1.0, 1.0],
            "pass_hat_k": [0.75, 0.5, 0.25, 0.0], "score": 0.9, "usage": Usage::default(),
            "cost_usd": null, "duration_ms": 1200.0, "tags": [],
        })).unwrap();
        let table = summary_table(&[row]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("eval    outcome  runs  pass rate      pass@k      pass^k  score")
        );
        let row: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            row,
            [
                "refund", "passed", "4", "0.75", "1.00", "(k=2)", "0.50", "(k=2)", "0.90", "-",
                "-", "1.20s"
            ]
        );
    }
}
