//! The matrix of a suite file's cases, as promptfoo's main view shows it: one row per test, one
//! column per prompt × provider, each cell the case's verdict, score and the start of its
//! output. Built from the finished reports of the cases that carry a
//! [`MatrixCell`](crate::run::definition::MatrixCell) (a few words per case are kept, never a
//! report), one matrix per file; the console and Markdown reporters render the files with more
//! than one column. The HTML viewer draws its own from the rows' cells.

use std::collections::BTreeMap;

use super::EvalReport;
use crate::base::event::{Event, Text};
use crate::base::outcome::Outcome;

/// How much of a case's output its cell keeps, in characters.
const OUTPUT_CHARS: usize = 48;

/// A case's verdict, as a matrix cell shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Passed,
    /// Passed with a soft assertion below its threshold.
    Below,
    Failed,
    /// Failed by an execution error.
    Error,
    Skipped,
}

impl Verdict {
    fn of(report: &EvalReport) -> Self {
        match report.outcome {
            Outcome::Passed if report.below_threshold => Verdict::Below,
            Outcome::Passed => Verdict::Passed,
            Outcome::Failed if report.error.is_some() => Verdict::Error,
            Outcome::Failed => Verdict::Failed,
            Outcome::Skipped => Verdict::Skipped,
        }
    }

    /// `PASS`, `PASS*`, `FAIL`, `ERROR`, `SKIP`.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Verdict::Passed => "PASS",
            Verdict::Below => "PASS*",
            Verdict::Failed => "FAIL",
            Verdict::Error => "ERROR",
            Verdict::Skipped => "SKIP",
        }
    }
}

/// One case of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub verdict: Verdict,
    pub score: Option<f64>,
    /// The start of the case's last reply (or of its error), on one line.
    pub output: String,
}

impl Cell {
    /// The cell's text in at most `width` characters: the verdict, then the score and the
    /// start of the output as far as they fit.
    pub(crate) fn text(&self, width: usize) -> String {
        let mut text = self.verdict.word().to_string();
        if let Some(score) = self.score {
            let score = format!(" {score:.2}");
            if text.len() + score.len() <= width {
                text.push_str(&score);
            }
        }
        let room = width.saturating_sub(text.chars().count() + 1);
        if !self.output.is_empty() && room >= 4 {
            text.push(' ');
            text.push_str(&clip(&self.output, room));
        }
        text
    }
}

/// `text` in at most `width` characters, `…` marking a cut.
pub(crate) fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The cases of one suite file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Matrix {
    /// The file's cases' dataset id (`suite::promptfooconfig`).
    pub file: String,
    /// Each test's description, by position.
    pub tests: BTreeMap<usize, String>,
    /// Each column's prompt and provider labels, by (prompt, provider) position.
    pub columns: BTreeMap<(usize, usize), (String, String)>,
    /// The cells, by test and column.
    pub cells: BTreeMap<(usize, (usize, usize)), Cell>,
}

impl Matrix {
    /// Each row's label: the test's description, with `#N` when two tests share one.
    pub(crate) fn rows(&self) -> Vec<(usize, String)> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for description in self.tests.values() {
            *count.entry(description).or_default() += 1;
        }
        self.tests
            .iter()
            .map(|(test, description)| {
                let label = if count[description.as_str()] > 1 {
                    format!("{description} #{test}")
                } else {
                    description.clone()
                };
                (*test, label)
            })
            .collect()
    }

    /// Each column's position and label: the parts that differ between columns (the prompt,
    /// the provider, or both as `prompt · provider`).
    pub(crate) fn column_labels(&self) -> Vec<((usize, usize), String)> {
        let prompts = distinct(self.columns.values().map(|(p, _)| p));
        let providers = distinct(self.columns.values().map(|(_, q)| q));
        self.columns
            .iter()
            .map(|(at, (prompt, provider))| {
                let label = match (prompts > 1, providers > 1) {
                    (true, true) => format!("{prompt} · {provider}"),
                    (true, false) => prompt.clone(),
                    _ => provider.clone(),
                };
                (*at, label.replace('\n', " "))
            })
            .collect()
    }
}

fn distinct<'a>(values: impl Iterator<Item = &'a String>) -> usize {
    values.collect::<std::collections::BTreeSet<_>>().len()
}

/// The matrices of a run's suite files, built as their cases finish.
#[derive(Debug, Clone, Default)]
pub(crate) struct Matrices {
    files: BTreeMap<String, Matrix>,
}

impl Matrices {
    /// Keeps the cell of `report`, when it is a case of a suite file that may draw a matrix
    /// (one of a single column never does: its cells would be a run's worth of memory for
    /// nothing).
    pub(crate) fn add(&mut self, report: &EvalReport) {
        let Some(at) = report.matrix.as_ref().filter(|at| at.columns != 1) else {
            return;
        };
        let file = report.dataset.clone().unwrap_or_default();
        let matrix = self.files.entry(file.clone()).or_insert_with(|| Matrix {
            file,
            ..Matrix::default()
        });
        matrix
            .tests
            .entry(at.test)
            .or_insert_with(|| at.description.clone());
        let column = (at.prompt, at.provider);
        matrix
            .columns
            .entry(column)
            .or_insert_with(|| (at.prompt_label.clone(), at.provider_label.clone()));
        let output = Event::last_reply(&report.events)
            .map(Text::as_str)
            .or(report.error_message())
            .unwrap_or_default();
        let output = clip(
            &output.split_whitespace().collect::<Vec<_>>().join(" "),
            OUTPUT_CHARS,
        );
        matrix.cells.insert(
            (at.test, column),
            Cell {
                verdict: Verdict::of(report),
                score: report.score,
                output,
            },
        );
    }

    /// The matrices worth a table: the files whose cases span more than one prompt or
    /// provider.
    pub(crate) fn tables(&self) -> impl Iterator<Item = &Matrix> {
        self.files.values().filter(|m| m.columns.len() > 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_says_as_much_as_its_width_holds() {
        let cell = Cell {
            verdict: Verdict::Failed,
            score: Some(0.5),
            output: "Paris is the capital of France".into(),
        };
        assert_eq!(cell.text(4), "FAIL");
        assert_eq!(cell.text(9), "FAIL 0.50");
        assert_eq!(cell.text(16), "FAIL 0.50 Paris…");
        assert_eq!(cell.text(60), "FAIL 0.50 Paris is the capital of France");
    }
}
