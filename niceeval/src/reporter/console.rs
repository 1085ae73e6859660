//! The console reporter: libtest-style progress lines (a live status line on a terminal), the
//! reports of failed evals, a summary table, and libtest's closing `test result:` line. Quiet
//! mode (`--quiet`, which `cargo test -q` passes) prints libtest's terse form instead: one
//! character per eval, the failures and the closing line.

use std::io::Write;

use super::{EvalSummary, Reporter, SuiteReport, SuiteStart};
use crate::outcome::Outcome;
use crate::report::EvalReport;

/// Writes progress and a summary table to `out`.
///
/// ```
/// use niceeval::reporter::{Console, Reporter, SuiteReport, SuiteStart};
///
/// let mut console = Console::new(Vec::new(), false);
/// console.on_run_start(&SuiteStart { evals: vec![], concurrency: 4 }).unwrap();
/// console.on_run_complete(&SuiteReport::new(vec![], 0, false, 10.0)).unwrap();
/// let text = String::from_utf8(console.into_inner()).unwrap();
/// assert!(text.contains("test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"));
/// ```
pub struct Console<W: Write + Send> {
    out: W,
    live: bool,
    quiet: bool,
    show_output: bool,
    total: usize,
    done: usize,
    failures: Vec<String>,
    filtered_out: usize,
    /// Evals of several targets are shown: names keep their crate segment.
    full_ids: bool,
}

impl Console<std::io::Stdout> {
    /// A console reporter on stdout; live status line when stdout is a terminal.
    pub fn stdout() -> Self {
        use std::io::IsTerminal;
        let live = std::io::stdout().is_terminal();
        Console::new(std::io::stdout(), live)
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
            filtered_out: 0,
            full_ids: false,
        }
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
    /// failures and the closing line (no table, no status line).
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        if quiet {
            self.live = false;
        }
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
            let width = 30;
            let filled = width * self.done / self.total.max(1);
            write!(
                self.out,
                "[{}{}] {}/{} evals",
                "=".repeat(filled),
                " ".repeat(width - filled),
                self.done,
                self.total
            )?;
        }
        self.out.flush()
    }
}

/// The name libtest would show: the id without its crate segment.
fn test_name(id: &str) -> &str {
    id.split_once("::").map_or(id, |(_, rest)| rest)
}

/// Whether `ids` come from more than one test target (crate segment): then names are shown
/// whole, so `smoke::order_status` and `evals::order_status` stay apart.
fn several_targets<'a>(mut ids: impl Iterator<Item = &'a str>) -> bool {
    let target = |id: &'a str| id.split_once("::").map_or("", |(target, _)| target);
    match ids.next() {
        Some(first) => ids.any(|id| target(id) != target(first)),
        None => false,
    }
}

impl<W: Write + Send> Console<W> {
    /// The name shown for `id`: libtest's, or the whole id when several targets are shown.
    fn name<'a>(&self, id: &'a str) -> &'a str {
        if self.full_ids { id } else { test_name(id) }
    }
}

impl<W: Write + Send> Reporter for Console<W> {
    fn on_run_start(&mut self, start: &SuiteStart) -> std::io::Result<()> {
        self.total = start.evals.len();
        self.full_ids = several_targets(start.evals.iter().map(String::as_str));
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
        self.done += 1;
        if self.quiet {
            let mark = match report.outcome {
                Outcome::Passed => ".",
                Outcome::Skipped => "i",
                Outcome::Failed => {
                    self.failures.push(report.render());
                    "F"
                }
            };
            write!(self.out, "{mark}")?;
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
                self.failures.push(report.render());
            }
        }
        if self.show_output && report.outcome != Outcome::Failed {
            writeln!(self.out, "{}", report.render())?;
        }
        self.status()
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        self.clear_status()?;
        if self.quiet && self.done > 0 {
            writeln!(self.out)?;
        }
        if !self.failures.is_empty() {
            writeln!(self.out, "\nfailures:\n")?;
            for failure in &self.failures {
                writeln!(self.out, "{failure}")?;
            }
        }
        if !suite.evals.is_empty() && !self.quiet {
            writeln!(self.out)?;
            write!(self.out, "{}", summary_table(&suite.evals))?;
            if let Some(spending) = suite.spending() {
                writeln!(self.out, "total {spending}")?;
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
        writeln!(
            self.out,
            "\ntest result: {}. {} passed; {} failed; {} ignored; 0 measured; {} filtered out; finished in {:.2}s\n",
            if suite.success() { "ok" } else { "FAILED" },
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
/// (pass statistics of a single run, tokens nobody reported, an unknown cost).
///
/// ```
/// use niceeval::reporter::{summary_table, EvalSummary};
/// use niceeval::{Outcome, Usage};
///
/// let row: EvalSummary = serde_json::from_value(serde_json::json!({
///     "id": "demo::refund", "outcome": Outcome::Passed, "error": false, "below_threshold": false,
///     "runs": 4, "pass_rate": 0.75, "pass_at_k": [0.75, 1.0, 1.0, 1.0],
///     "pass_hat_k": [0.75, 0.5, 0.25, 0.0], "score": 0.9, "usage": Usage::default(),
///     "cost_usd": null, "duration_ms": 1200.0, "tags": [],
/// })).unwrap();
/// let table = summary_table(&[row]);
/// let lines: Vec<&str> = table.lines().collect();
/// assert!(lines[0].starts_with("eval    outcome  runs  pass rate      pass@k      pass^k  score"));
/// let row: Vec<&str> = lines[2].split_whitespace().collect();
/// assert_eq!(
///     row,
///     ["refund", "passed", "4", "0.75", "1.00", "(k=2)", "0.50", "(k=2)", "0.90", "-", "-", "1.20s"]
/// );
/// ```
pub fn summary_table(evals: &[EvalSummary]) -> String {
    const HEADER: [&str; 10] = [
        "eval",
        "outcome",
        "runs",
        "pass rate",
        "pass@k",
        "pass^k",
        "score",
        "tokens",
        "cost",
        "time",
    ];
    let full_ids = several_targets(evals.iter().map(|e| e.id.as_str()));
    let rows: Vec<[String; 10]> = evals
        .iter()
        .map(|e| {
            let outcome = match (e.outcome, e.error, e.below_threshold) {
                (Outcome::Failed, true, _) => "error".to_string(),
                (Outcome::Passed, _, true) => "passed*".to_string(),
                (o, _, _) => o.as_str().to_string(),
            };
            let [runs, rate, at_k, hat_k, score, tokens, cost, time] = e.table_cells("-");
            [
                if full_ids {
                    e.id.clone()
                } else {
                    test_name(&e.id).to_string()
                },
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
        })
        .collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (c, w))| match i {
                0 | 1 => format!("{c:<w$}"),
                _ => format!("{c:>w$}"),
            })
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(&HEADER.map(str::to_string), &mut out);
    line(&widths.map(|w| "-".repeat(w)), &mut out);
    for row in &rows {
        line(row, &mut out);
    }
    if evals
        .iter()
        .any(|e| e.below_threshold && e.outcome == Outcome::Passed)
    {
        out.push_str("* passed with a soft assertion below its threshold (fails under --strict)\n");
    }
    out
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
            shown.starts_with("test refund ... ok\neval demo::refund passed\n"),
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
}
