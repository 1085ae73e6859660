//! The Markdown reporter: a summary fit for a CI job summary (`$GITHUB_STEP_SUMMARY`) or a
//! pull-request comment: totals; with `--baseline`, what changed since the baseline (the
//! regressions, then a table of every eval that changed, with its pass rate, score, metrics,
//! tokens and cost before and after); the per-eval table; each suite file's matrix of tests ×
//! prompts × providers; the flaky evals; and each failed eval's report in a collapsible block.

use std::fmt::Write as _;
use std::io::Write;

use super::Reporter;
use crate::base::outcome::Outcome;
use crate::run::compare::Comparison;
use crate::run::report::comparison_text as text;
use crate::run::report::matrix::{Matrices, Matrix, Verdict, clip};
use crate::run::report::table::{Cell, Column, Table, Tone, eval_columns, eval_row, flaky_table};
use crate::run::report::{EvalReport, Names, SuiteReport, SuiteStart};

/// Writes a Markdown summary when the suite completes.
pub struct Markdown<W: Write + Send> {
    out: W,
    /// How the run names its evals, from the evals it starts (see [`Names`]).
    names: Option<Names>,
    /// The failed evals' ids and reports, rendered once the names are known; written in id
    /// order (evals finish in any order when they run concurrently).
    failures: Vec<(String, String)>,
    /// Failed reports that finished before any start told the names (a reporter driven by
    /// hand); rendered at the end with the suite's names.
    unnamed: Vec<EvalReport>,
    /// Failed evals rendered so far, and those past [`super::MAX_FAILURE_DETAILS`].
    failed: usize,
    /// The matrices of the suite files' cases.
    matrices: Matrices,
}

impl<W: Write + Send> Markdown<W> {
    /// A reporter writing to `out`.
    pub fn new(out: W) -> Self {
        Markdown {
            out,
            names: None,
            failures: Vec::new(),
            unnamed: Vec::new(),
            failed: 0,
            matrices: Matrices::default(),
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
fn comparison_markdown(c: &Comparison, names: Names) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Compared with the baseline\n\nBaseline `{}`: {}\n",
        cell(&c.baseline),
        text::counts_and_not_run(c)
    );
    if let Some(note) = text::underpowered(c) {
        let _ = writeln!(md, "{}\n", cell(&note));
    }
    let regressions = c.regressions();
    if regressions.is_empty() {
        let _ = writeln!(md, "✅ No regression (fail on: {}).\n", text::policy(c));
    } else {
        let _ = writeln!(
            md,
            "❌ **{} regression(s)** (fail on: {}):\n",
            regressions.len(),
            text::policy(c)
        );
        for r in &regressions {
            let _ = writeln!(
                md,
                "- {} `{}`: {}",
                r.kind.name(),
                cell(names.name(&r.id)),
                cell(&text::regression(c, r))
            );
        }
        md.push('\n');
    }
    if let Some(changed) = text::comparison_table(c, names) {
        md.push_str(&table(&changed));
    }
    for d in &c.datasets {
        let _ = writeln!(
            md,
            "\n- dataset `{}`: {}",
            cell(names.name(&d.id)),
            cell(&text::dataset(d))
        );
    }
    md
}

/// A table in Markdown: numeric columns aligned right, ids as code, a change's tone as an icon.
fn table(t: &Table) -> String {
    let mut md = String::new();
    table_head(&mut md, &t.columns);
    for row in &t.rows {
        table_row(&mut md, row);
    }
    md
}

/// A table's header and the line under it.
fn table_head(md: &mut String, columns: &[Column]) {
    md.push('|');
    for column in columns {
        let _ = write!(md, " {} |", column.title);
    }
    md.push_str("\n|");
    for column in columns {
        md.push_str(if column.numeric { "---:|" } else { "---|" });
    }
    md.push('\n');
}

/// A table's row.
fn table_row(md: &mut String, row: &[Cell]) {
    md.push('|');
    for c in row {
        let icon = match c.tone {
            Some(Tone::Passed) => "✅ ",
            Some(Tone::Below) => "⚠️ ",
            Some(Tone::Failed) => "❌ ",
            Some(Tone::Skipped) => "⏭️ ",
            Some(Tone::Worse) => "🔴 ",
            Some(Tone::Failing) => "🟠 ",
            Some(Tone::Better) => "🟢 ",
            Some(Tone::Same) => "⚪ ",
            None => "",
        };
        if c.code {
            let _ = write!(md, " {icon}`{}` |", cell(&c.text));
        } else {
            let _ = write!(md, " {icon}{} |", cell(&c.text));
        }
    }
    md.push('\n');
}

/// Text in a table cell: no pipe ends the cell, no line break ends the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// How much of a case's output a matrix cell shows, in characters.
const MATRIX_OUTPUT: usize = 40;

/// A suite file's matrix: one row per test, one column per prompt × provider, each cell the
/// verdict (as an icon), the score and the start of the output.
fn matrix(m: &Matrix, names: Names) -> String {
    let columns = m.column_labels();
    let mut md = format!("\n### Matrix `{}`\n\n| test |", cell(names.name(&m.file)));
    for (_, label) in &columns {
        let _ = write!(md, " {} |", cell(label));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(columns.len()));
    md.push('\n');
    for (test, label) in m.rows() {
        let _ = write!(md, "| {} |", cell(&label));
        for (at, _) in &columns {
            let Some(c) = m.cells.get(&(test, *at)) else {
                md.push_str(" – |");
                continue;
            };
            let icon = match c.verdict {
                Verdict::Passed => "✅",
                Verdict::Below => "⚠️",
                Verdict::Failed => "❌",
                Verdict::Error => "❌ error",
                Verdict::Skipped => "⏭️",
            };
            let score = c.score.map(|s| format!(" {s:.2}")).unwrap_or_default();
            let output = if c.output.is_empty() {
                String::new()
            } else {
                format!(" {}", cell(&clip(&c.output, MATRIX_OUTPUT)))
            };
            let _ = write!(md, " {icon}{score}{output} |");
        }
        md.push('\n');
    }
    md
}

/// A failed eval's report in a collapsible block.
fn failure(out: &mut Vec<(String, String)>, report: &EvalReport, names: Names) {
    let mut text = String::new();
    let _ = write!(
        text,
        "<details><summary><code>{}</code></summary>\n\n```text\n{}```\n\n</details>\n\n",
        super::markup::escape(names.name(&report.id)),
        report.render_as(names).replace("```", "'''")
    );
    out.push((report.id.clone(), text));
}

impl<W: Write + Send> Reporter for Markdown<W> {
    fn on_run_start(&mut self, start: &SuiteStart) -> std::io::Result<()> {
        self.names = Some(start.evals.names());
        Ok(())
    }

    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        self.matrices.add(report);
        if report.outcome == Outcome::Failed {
            self.failed += 1;
            if self.failed > super::MAX_FAILURE_DETAILS {
                return Ok(());
            }
            match self.names {
                Some(names) => failure(&mut self.failures, report, names),
                None => self.unnamed.push(report.clone()),
            }
        }
        Ok(())
    }

    fn on_run_complete(&mut self, suite: &SuiteReport) -> std::io::Result<()> {
        let names = *self.names.get_or_insert_with(|| suite.names());
        for report in std::mem::take(&mut self.unnamed) {
            failure(&mut self.failures, &report, names);
        }
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
            let _ = writeln!(
                md,
                "- dataset `{}`: {}",
                cell(names.name(&dataset.id)),
                cell(&dataset.counts())
            );
        }
        if !suite.datasets.is_empty() {
            md.push('\n');
        }
        // What changed comes first: it is what a pull request's reader is there for.
        if let Some(comparison) = &suite.comparison {
            md.push_str(&comparison_markdown(comparison, names));
            md.push_str("\n### All evals\n\n");
        }
        if !suite.evals.is_empty() {
            // A row at a time, written out in pieces: a table of 100,000 evals is never held
            // whole.
            table_head(&mut md, &eval_columns());
            for eval in &suite.evals {
                table_row(&mut md, &eval_row(eval, names));
                if md.len() >= 64 * 1024 {
                    self.out.write_all(md.as_bytes())?;
                    md.clear();
                }
            }
        }
        for m in self.matrices.tables() {
            md.push_str(&matrix(m, names));
        }
        if !suite.flaky.is_empty() {
            md.push_str("\n### Flaky\n\nEvals whose runs disagree (some passed, some failed):\n\n");
            md.push_str(&table(&flaky_table(&suite.flaky, names)));
        }
        if !suite.unfinished.is_empty() {
            let _ = writeln!(
                md,
                "\n### Did not finish\n\nThe run was {} before these evals finished:\n",
                suite.interruption()
            );
            for id in &suite.unfinished {
                let _ = writeln!(md, "- `{}`", cell(names.name(id)));
            }
        }
        if !self.failures.is_empty() {
            md.push_str("\n### Failures\n\n");
            self.failures.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, text) in &self.failures {
                md.push_str(text);
            }
            if self.failed > super::MAX_FAILURE_DETAILS {
                let _ = writeln!(
                    md,
                    "\n… and {} more failed eval(s), not shown here (the first {} are); every report is in the results file.",
                    self.failed - super::MAX_FAILURE_DETAILS,
                    super::MAX_FAILURE_DETAILS
                );
            }
        }
        // The last write, then the flush that publishes a report file.
        self.out.write_all(md.as_bytes())?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_files_cases_are_drawn_as_a_matrix() {
        let case = |p: usize, outcome: &str, reply: &str| -> EvalReport {
            serde_json::from_value(serde_json::json!({
                "id": format!("suite::promptfooconfig::paris [prompt {p}]"),
                "file": "promptfooconfig.yaml", "line": 3, "outcome": outcome,
                "assertions": [], "duration_ms": 1.0, "score": if outcome == "passed" { 1.0 } else { 0.0 },
                "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
                "events": [{"type": "message", "role": "assistant", "text": reply}],
                "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
                "min_pass_rate": 1.0, "dataset": "suite::promptfooconfig",
                "matrix": {"test": 1, "description": "paris", "prompt": p,
                  "prompt_label": format!("prompt {p}"), "provider": 1, "provider_label": "echo"},
            }))
            .expect("a report")
        };
        let reports = [
            case(1, "passed", "Paris | the capital"),
            case(2, "failed", "Lyon"),
        ];
        let mut md = Markdown::new(Vec::new());
        for r in &reports {
            md.on_eval_complete(r).expect("written");
        }
        let summaries = reports
            .iter()
            .map(crate::run::report::EvalSummary::from)
            .collect();
        md.on_run_complete(&SuiteReport::new(summaries, 0, false, 1.0))
            .expect("written");
        let text = String::from_utf8(md.into_inner()).expect("UTF-8");
        assert!(
            text.contains(
                "### Matrix `promptfooconfig`\n\n| test | prompt 1 | prompt 2 |\n|---|---|---|\n| paris | ✅ 1.00 Paris \\| the capital | ❌ 0.00 Lyon |\n"
            ),
            "{text}"
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::output::reporter::{Markdown, Reporter, SuiteReport};

        let mut md = Markdown::new(Vec::new());
        md.on_run_complete(&SuiteReport::new(vec![], 0, false, 1.0))
            .unwrap();
        assert!(
            String::from_utf8(md.into_inner())
                .unwrap()
                .starts_with("## niceeval")
        );
    }
}
