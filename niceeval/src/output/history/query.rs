//! What is read back: the runs, newest first, with their totals; an eval's trend and a suite's
//! trend, oldest first, each point marked where it moved beyond chance (`marks.rs`). Shard
//! runs that were merged are shown as their merged run.

use std::collections::BTreeMap;

use rusqlite::{Row, params};
use serde::Serialize;

use super::marks::{Mark, MarkRule, Point, mark};
use super::store::{History, HistoryError};

/// A run and its totals (counted from its evals' rows).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RunRow {
    /// The run's id (shared by every process of a nextest run; a merged run's own).
    pub run: String,
    /// The test target (`evals`).
    pub target: String,
    /// When it started, RFC 3339.
    pub started: String,
    /// When its last process finished; `None` for a run killed or still running.
    pub finished: Option<String>,
    /// Wall time from start to finish, in milliseconds.
    pub duration_ms: Option<f64>,
    /// The commit it was built from.
    pub commit: Option<String>,
    /// SHA-256 of its configuration.
    pub config_hash: Option<String>,
    /// `NICEEVAL_SHARD`.
    pub shard: Option<String>,
    /// The selection of a filtered run; `None` for a full run.
    pub filter: Option<String>,
    /// The niceeval version that recorded it.
    pub niceeval: String,
    /// The shard runs a merged run was made of.
    pub merged_from: Vec<String>,
    /// Whether it was interrupted (Ctrl-C, a signal).
    pub interrupted: bool,
    /// Evals recorded.
    pub evals: u64,
    /// Evals that passed.
    pub passed: u64,
    /// Evals that failed.
    pub failed: u64,
    /// Evals skipped.
    pub skipped: u64,
    /// `passed / (passed + failed)`; `None` when nothing counted.
    pub pass_rate: Option<f64>,
    /// The agents' cost, when any eval's is known.
    pub cost_usd: Option<f64>,
    /// Input tokens of every eval.
    pub input_tokens: u64,
    /// Output tokens of every eval.
    pub output_tokens: u64,
}

/// One run of one eval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EvalPoint {
    /// The run.
    pub run: String,
    /// The test target.
    pub target: String,
    /// When the run started.
    pub started: String,
    /// The run's commit.
    pub commit: Option<String>,
    /// The run's filter (`None`: a full run).
    pub filter: Option<String>,
    /// `passed`, `failed` or `skipped`.
    pub outcome: String,
    /// Runs of the eval (`runs = N`).
    pub runs: u64,
    /// Of them passed.
    pub passed: u64,
    /// Of them not skipped.
    pub counted: u64,
    /// Pass rate over the runs not skipped.
    pub pass_rate: f64,
    /// Score of the representative run.
    pub score: Option<f64>,
    /// Named metrics.
    pub metrics: BTreeMap<String, f64>,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cost, when known.
    pub cost_usd: Option<f64>,
    /// Wall time, in milliseconds.
    pub duration_ms: f64,
    /// Set where the pass rate or the score moved beyond chance (see `marks.rs`).
    pub significant: Option<Mark>,
}

/// One full run of a suite (a target).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SuitePoint {
    /// The run and its totals.
    #[serde(flatten)]
    pub run: RunRow,
    /// Mean score over the evals that have one.
    pub mean_score: Option<f64>,
    /// Set where the suite's pass rate (evals passed of evals counted) or its mean score moved
    /// beyond chance.
    pub significant: Option<Mark>,
}

const RUN_COLUMNS: &str = "r.run, r.target, r.started, r.finished, r.duration_ms, r.commit_sha,
    r.config_hash, r.shard, r.filter, r.niceeval, r.merged_from, r.interrupted,
    count(e.eval), coalesce(sum(e.outcome = 'passed'), 0), coalesce(sum(e.outcome = 'failed'), 0),
    coalesce(sum(e.outcome = 'skipped'), 0), sum(e.cost_usd), coalesce(sum(e.input_tokens), 0),
    coalesce(sum(e.output_tokens), 0), avg(e.score)";

/// A count SQLite holds as a signed integer.
fn count(row: &Row, index: usize) -> rusqlite::Result<u64> {
    row.get::<_, i64>(index).map(|n| n.max(0) as u64)
}

fn run_row(row: &Row) -> rusqlite::Result<(RunRow, Option<f64>)> {
    let merged: Option<String> = row.get(10)?;
    let (passed, failed): (u64, u64) = (count(row, 13)?, count(row, 14)?);
    Ok((
        RunRow {
            run: row.get(0)?,
            target: row.get(1)?,
            started: row.get(2)?,
            finished: row.get(3)?,
            duration_ms: row.get(4)?,
            commit: row.get(5)?,
            config_hash: row.get(6)?,
            shard: row.get(7)?,
            filter: row.get(8)?,
            niceeval: row.get(9)?,
            merged_from: merged
                .and_then(|m| serde_json::from_str(&m).ok())
                .unwrap_or_default(),
            interrupted: row.get(11)?,
            evals: count(row, 12)?,
            passed,
            failed,
            skipped: count(row, 15)?,
            pass_rate: (passed + failed > 0).then(|| passed as f64 / (passed + failed) as f64),
            cost_usd: row.get(16)?,
            input_tokens: count(row, 17)?,
            output_tokens: count(row, 18)?,
        },
        row.get(19)?,
    ))
}

impl History {
    /// The latest `last` runs, newest first (of `target` when given), without the shard runs
    /// a merge replaced.
    pub fn runs(&self, last: usize, target: Option<&str>) -> Result<Vec<RunRow>, HistoryError> {
        self.run_rows(last, target, false)
            .map(|rows| rows.into_iter().map(|(row, _)| row).collect())
    }

    fn run_rows(
        &self,
        last: usize,
        target: Option<&str>,
        full_only: bool,
    ) -> Result<Vec<(RunRow, Option<f64>)>, HistoryError> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r LEFT JOIN evals e ON e.run = r.run AND e.target = r.target
             WHERE r.merged_into IS NULL AND (?1 IS NULL OR r.target = ?1)
               AND (NOT ?2 OR r.filter IS NULL)
             GROUP BY r.run, r.target ORDER BY r.started DESC, r.run DESC LIMIT ?3"
        );
        let mut statement = self.connection.prepare(&sql).map_err(|e| self.sqlite(e))?;
        statement
            .query_map(params![target, full_only, last as i64], run_row)
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.sqlite(e))
    }

    /// The recorded evals `name` can mean: its exact id, else every id that ends with
    /// `::name` — the console shows ids without their crate's name (`suite::test 2` for
    /// `suite::suite::test 2`). Sorted.
    pub fn evals_named(&self, name: &str) -> Result<Vec<String>, HistoryError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT DISTINCT eval FROM evals
                 WHERE eval = ?1 OR substr(eval, -length(?1) - 2) = '::' || ?1
                 ORDER BY eval = ?1 DESC, eval",
            )
            .map_err(|e| self.sqlite(e))?;
        let found = statement
            .query_map(params![name], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.sqlite(e))?;
        Ok(match found.first() {
            Some(exact) if exact == name => vec![exact.clone()],
            _ => found,
        })
    }

    /// The targets recorded, most recently run first.
    pub fn targets(&self) -> Result<Vec<String>, HistoryError> {
        let mut statement = self
            .connection
            .prepare("SELECT target FROM runs GROUP BY target ORDER BY max(started) DESC")
            .map_err(|e| self.sqlite(e))?;
        statement
            .query_map([], |row| row.get(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
            .map_err(|e| self.sqlite(e))
    }

    /// The eval's latest `last` runs, oldest first, marked by `rule`. The runs before them
    /// are read too, so the first points are compared with what came before.
    pub fn trend(
        &self,
        eval: &str,
        last: usize,
        rule: &MarkRule,
    ) -> Result<Vec<EvalPoint>, HistoryError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT e.run, e.target, r.started, r.commit_sha, r.filter, e.outcome, e.runs,
                        e.passed, e.counted, e.pass_rate, e.score, e.metrics, e.input_tokens,
                        e.output_tokens, e.cost_usd, e.duration_ms
                 FROM evals e JOIN runs r ON e.run = r.run AND e.target = r.target
                 WHERE e.eval = ?1 AND r.merged_into IS NULL
                 ORDER BY r.started DESC, r.run DESC LIMIT ?2",
            )
            .map_err(|e| self.sqlite(e))?;
        let mut points = statement
            .query_map(params![eval, (last + rule.window) as i64], |row| {
                let metrics: Option<String> = row.get(11)?;
                Ok(EvalPoint {
                    run: row.get(0)?,
                    target: row.get(1)?,
                    started: row.get(2)?,
                    commit: row.get(3)?,
                    filter: row.get(4)?,
                    outcome: row.get(5)?,
                    runs: count(row, 6)?,
                    passed: count(row, 7)?,
                    counted: count(row, 8)?,
                    pass_rate: row.get(9)?,
                    score: row.get(10)?,
                    metrics: metrics
                        .and_then(|m| serde_json::from_str(&m).ok())
                        .unwrap_or_default(),
                    input_tokens: count(row, 12)?,
                    output_tokens: count(row, 13)?,
                    cost_usd: row.get(14)?,
                    duration_ms: row.get(15)?,
                    significant: None,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.sqlite(e))?;
        points.reverse();
        let marks = mark(
            &points
                .iter()
                .map(|p| Point {
                    passed: p.passed,
                    counted: p.counted,
                    score: p.score,
                })
                .collect::<Vec<_>>(),
            rule,
        );
        for (point, mark) in points.iter_mut().zip(marks) {
            point.significant = mark;
        }
        let skip = points.len().saturating_sub(last);
        Ok(points.split_off(skip))
    }

    /// The suite `target`'s latest `last` full runs (filtered runs left out: their totals
    /// are not the suite's), oldest first, marked by `rule` on the evals passed of those
    /// counted and on the mean score.
    pub fn suite_trend(
        &self,
        target: &str,
        last: usize,
        rule: &MarkRule,
    ) -> Result<Vec<SuitePoint>, HistoryError> {
        let mut rows = self.run_rows(last + rule.window, Some(target), true)?;
        rows.reverse();
        let marks = mark(
            &rows
                .iter()
                .map(|(row, mean)| Point {
                    passed: row.passed,
                    counted: row.passed + row.failed,
                    score: *mean,
                })
                .collect::<Vec<_>>(),
            rule,
        );
        let mut points: Vec<SuitePoint> = rows
            .into_iter()
            .zip(marks)
            .map(|((run, mean_score), significant)| SuitePoint {
                run,
                mean_score,
                significant,
            })
            .collect();
        let skip = points.len().saturating_sub(last);
        Ok(points.split_off(skip))
    }
}
