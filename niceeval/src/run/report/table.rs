//! Tables as data: a header and rows of cells, built once from a suite's data and rendered by
//! each format (the Markdown and HTML reporters), so what a row says is written in one place.

use super::Names;
use super::suite::{EvalSummary, Flaky};
use crate::base::outcome::Outcome;

/// A table: its columns and its rows, each row one [`Cell`] per column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    /// The header.
    pub columns: Vec<Column>,
    /// The rows.
    pub rows: Vec<Vec<Cell>>,
}

/// A column: its title and whether it holds numbers (aligned right).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    /// The header's text.
    pub title: &'static str,
    /// Numbers, aligned right.
    pub numeric: bool,
}

impl Column {
    /// A column of text.
    pub(crate) fn text(title: &'static str) -> Self {
        Column {
            title,
            numeric: false,
        }
    }

    /// A column of numbers.
    pub(crate) fn numeric(title: &'static str) -> Self {
        Column {
            title,
            numeric: true,
        }
    }
}

/// One cell: its text, whether it is code (an eval's id), and how it reads at a glance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    /// The text.
    pub text: String,
    /// Shown as code (`` `id` ``, `<code>`).
    pub code: bool,
    /// How the cell reads at a glance; each format marks it its own way (an icon, a colour).
    pub tone: Option<Tone>,
}

impl Cell {
    /// A plain cell.
    pub(crate) fn text(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            code: false,
            tone: None,
        }
    }

    /// A cell shown as code.
    pub(crate) fn code(text: impl Into<String>) -> Self {
        Cell {
            code: true,
            ..Cell::text(text)
        }
    }

    /// The cell, marked with `tone`.
    pub(crate) fn tone(mut self, tone: Tone) -> Self {
        self.tone = Some(tone);
        self
    }
}

/// How a cell reads at a glance: an eval's outcome, or its change since the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Passed.
    Passed,
    /// Passed with a soft assertion below its threshold.
    Below,
    /// Failed.
    Failed,
    /// Skipped.
    Skipped,
    /// Worse than the baseline: what a reviewer must look at.
    Worse,
    /// Failed before and fails now.
    Failing,
    /// Better than the baseline.
    Better,
    /// Nothing to act on.
    Same,
}

/// The columns of the per-eval table, in every format that has one: the eval, its outcome, and
/// the numbers of [`EvalSummary::table_cells`].
pub(crate) const EVAL_COLUMNS: [&str; 10] = [
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

/// The per-eval table's columns ([`EVAL_COLUMNS`]): the eval and its outcome as text, the
/// rest numbers.
pub(crate) fn eval_columns() -> Vec<Column> {
    let [eval, outcome, numeric @ ..] = EVAL_COLUMNS;
    let mut columns = vec![Column::text(eval), Column::text(outcome)];
    columns.extend(numeric.into_iter().map(Column::numeric));
    columns
}

/// A row of the per-eval table: the id, the outcome, and the numbers of
/// [`EvalSummary::table_cells`] (runs, pass rate, pass@k, pass^k, score, tokens, cost, time),
/// `–` where one does not apply; the eval named by `names` (the run's). A row at a time, so a
/// report of 100,000 evals never holds the whole table.
pub(crate) fn eval_row(e: &EvalSummary, names: Names) -> Vec<Cell> {
    let (outcome, tone) = match (e.outcome, e.error, e.below_threshold) {
        (Outcome::Failed, true, _) => ("error", Tone::Failed),
        (Outcome::Failed, false, _) => ("failed", Tone::Failed),
        (Outcome::Passed, _, true) => ("passed (below threshold)", Tone::Below),
        (Outcome::Passed, _, false) => ("passed", Tone::Passed),
        (Outcome::Skipped, _, _) => ("skipped", Tone::Skipped),
    };
    let mut row = vec![
        Cell::code(names.name(&e.id)),
        Cell::text(outcome).tone(tone),
    ];
    row.extend(e.table_cells("–").into_iter().map(Cell::text));
    row
}

/// The evals whose runs disagree: passed runs of counted runs, the pass rate and its 95%
/// Wilson interval; evals named by `names` (the run's).
pub(crate) fn flaky_table(flaky: &[Flaky], names: Names) -> Table {
    Table {
        columns: vec![
            Column::text("eval"),
            Column::numeric("passed"),
            Column::numeric("pass rate"),
            Column::numeric("95% CI"),
        ],
        rows: flaky
            .iter()
            .map(|f| {
                vec![
                    Cell::code(names.name(&f.id)),
                    Cell::text(format!("{} of {}", f.passed, f.runs)),
                    Cell::text(format!("{:.2}", f.pass_rate)),
                    Cell::text(f.interval.to_string()),
                ]
            })
            .collect(),
    }
}
