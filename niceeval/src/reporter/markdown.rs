//! The Markdown reporter: a summary fit for a CI job summary (`$GITHUB_STEP_SUMMARY`) or a
//! pull-request comment: totals; with `--baseline`, what changed since the baseline (the
//! regressions, then a table of every eval that changed, with its pass rate, score, metrics,
//! tokens and cost before and after); the per-eval table; the flaky evals; and each failed
//! eval's report in a collapsible block.

use std::fmt::Write as _;
use std::io::Write;

use super::Reporter;
use crate::outcome::Outcome;
use crate::report::{EvalReport, SuiteReport};

/// Writes a Markdown summary when the suite completes.
///
/// ```
/// use niceeval::reporter::{Markdown, Reporter, SuiteReport};
///
/// let mut md = Markdown::new(Vec::new());
/// md.on_run_complete(&SuiteReport::new(vec![], 0, false, 1.0)).unwrap();
/// assert!(String::from_utf8(md.into_inner()).unwrap().starts_with("## niceeval"));
/// ```
pub struct Markdown<W: Write + Send> {
    out: W,
    failures: String,
}

impl<W: Write + Send> Markdown<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Markdown {
            out,
            failures: String::new(),
        }
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl Markdown<super::ReportFile> {
    /// A reporter writing the file at `path` when the suite completes, whole or not at all
    /// (see [`super::ReportFile`]): parent directories are created and the directory's
    /// writability checked now.
    pub fn create(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        Ok(Markdown::new(super::ReportFile::create(path)?))
    }
}

/// The comparison with a baseline: the counts, the regressions, and a table of what changed.
fn comparison_markdown(c: &crate::compare::Comparison) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Compared with the baseline\n\nBaseline `{}`: {}{}\n",
        cell(&c.baseline),
        c.counts_line(),
        if c.not_run > 0 {
            format!(" ({} baseline evals not run)", c.not_run)
        } else {
            String::new()
        }
    );
    let regressions = c.regressions();
    if regressions.is_empty() {
        let _ = writeln!(md, "✅ No regression (fail on: {}).\n", c.policy());
    } else {
        let _ = writeln!(
            md,
            "❌ **{} regression(s)** (fail on: {}):\n",
            regressions.len(),
            c.policy()
        );
        for r in &regressions {
            let _ = writeln!(
                md,
                "- {} `{}`: {}",
                r.kind.name(),
                cell(&r.id),
                cell(&r.message)
            );
        }
        md.push('\n');
    }
    let changed: Vec<_> = c.changed().collect();
    if !changed.is_empty() {
        let _ = writeln!(
            md,
            "| eval | change | pass rate (Fisher's exact test) | score | metrics | tokens/run | cost/run |"
        );
        md.push_str("|---|---|---|---|---|---|---|\n");
        let dash = |s: String| if s.is_empty() { "–".to_string() } else { s };
        for e in changed {
            let icon = match e.kind {
                crate::compare::Kind::Broke | crate::compare::Kind::Worse if !e.within_chance => {
                    "🔴"
                }
                crate::compare::Kind::StillFailing => "🟠",
                crate::compare::Kind::Fixed | crate::compare::Kind::Better => "🟢",
                _ => "⚪",
            };
            let rate = e.pass_rate.as_ref().map(ToString::to_string);
            let delta = |d: &crate::compare::Delta, digits: usize| {
                if d.baseline.is_none() && d.current.is_none() {
                    String::new()
                } else {
                    d.describe(digits)
                }
            };
            let metrics: Vec<String> = e
                .metrics
                .iter()
                .map(|(name, d)| format!("{name} {}", d.describe(2)))
                .collect();
            let _ = writeln!(
                md,
                "| `{}` | {icon} {} | {} | {} | {} | {} | {} |",
                cell(&e.id),
                cell(&e.label()),
                dash(rate.unwrap_or_default()),
                dash(delta(&e.score, 2)),
                dash(cell(&metrics.join("; "))),
                dash(delta(&e.tokens, 0)),
                dash(delta(&e.cost, 4)),
            );
        }
    }
    for d in &c.datasets {
        let _ = writeln!(md, "\n- dataset `{}`: {}", cell(&d.id), cell(&d.describe()));
    }
    md
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

impl<W: Write + Send> Reporter for Markdown<W> {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        if report.outcome == Outcome::Failed {
            let _ = write!(
                self.failures,
                "<details><summary><code>{}</code></summary>\n\n```text\n{}```\n\n</details>\n\n",
                super::markup::escape(&report.id),
                report.render().replace("```", "'''")
            );
        }
        Ok(())
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        let mut md = String::from("## niceeval\n\n");
        let status = if suite.success() { "✅" } else { "❌" };
        let _ = writeln!(
            md,
            "{status} **{} passed**, **{} failed**, {} skipped{} in {:.2}s\n",
            suite.passed,
            suite.failed,
            suite.skipped,
            if suite.interrupted {
                format!(", {} not run ({})", suite.not_run, suite.interruption())
            } else {
                String::new()
            },
            suite.duration_ms / 1000.0
        );
        if let Some(spending) = suite.spending() {
            let _ = writeln!(md, "Total {spending}\n");
        }
        for dataset in &suite.datasets {
            let _ = writeln!(md, "- dataset `{}`: {}", dataset.id, dataset.counts());
        }
        if !suite.datasets.is_empty() {
            md.push('\n');
        }
        // What changed comes first: it is what a pull request's reader is there for.
        if let Some(comparison) = &suite.comparison {
            md.push_str(&comparison_markdown(comparison));
            md.push_str("\n### All evals\n\n");
        }
        if !suite.evals.is_empty() {
            md.push_str(
                "| eval | outcome | runs | pass rate | pass@k | pass^k | score | tokens | cost | time |\n",
            );
            md.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for e in &suite.evals {
                let outcome = match (e.outcome, e.error, e.below_threshold) {
                    (Outcome::Failed, true, _) => "❌ error",
                    (Outcome::Failed, false, _) => "❌ failed",
                    (Outcome::Passed, _, true) => "⚠️ passed (below threshold)",
                    (Outcome::Passed, _, false) => "✅ passed",
                    (Outcome::Skipped, _, _) => "⏭️ skipped",
                };
                let _ = writeln!(
                    md,
                    "| `{}` | {outcome} | {} |",
                    cell(&e.id),
                    e.table_cells("–").join(" | ")
                );
            }
        }
        if !suite.flaky.is_empty() {
            md.push_str("\n### Flaky\n\nEvals whose runs disagree (some passed, some failed):\n\n");
            md.push_str("| eval | passed | pass rate | 95% CI |\n|---|---:|---:|---:|\n");
            for f in &suite.flaky {
                let _ = writeln!(
                    md,
                    "| `{}` | {} of {} | {:.2} | {} |",
                    cell(&f.id),
                    f.passed,
                    f.runs,
                    f.pass_rate,
                    f.interval
                );
            }
        }
        if !suite.unfinished.is_empty() {
            let _ = writeln!(
                md,
                "\n### Did not finish\n\nThe run was {} before these evals finished:\n",
                suite.interruption()
            );
            for id in &suite.unfinished {
                let _ = writeln!(md, "- `{id}`");
            }
        }
        if !self.failures.is_empty() {
            md.push_str("\n### Failures\n\n");
            md.push_str(&self.failures);
        }
        // One write, then the flush that publishes a report file.
        self.out.write_all(md.as_bytes())?;
        self.out.flush()
    }
}
