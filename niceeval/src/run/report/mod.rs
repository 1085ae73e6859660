//! What an eval produced: [`EvalReport`] (serde, the unit every reporter consumes) and its
//! plain-text rendering (`render.rs`), which is the failure message of a failed eval; what a
//! suite produced ([`SuiteReport`], `suite.rs`); the text of a comparison with a baseline
//! (`comparison.rs`), the tables reports show, as rows of cells each format renders
//! (`table.rs`), and the matrix of a suite file's cases (`matrix.rs`).

use serde::{Deserialize, Serialize};

use crate::base::assertion::AssertionResult;
use crate::base::event::{Event, Usage};
use crate::base::outcome::{Outcome, RunError};
use crate::base::stats::Reliability;

pub(crate) mod comparison_text;
pub(crate) mod matrix;
mod names;
mod render;
mod suite;
pub(crate) mod table;
pub(crate) use names::Names;
pub(crate) use render::{Style, render};
pub use suite::{
    DatasetSummary, EvalIds, EvalSummary, Flaky, Progress, Signal, SuiteReport, SuiteStart,
};
pub(crate) use suite::{IdList, Totals};

/// One run of an eval, summarized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunSummary {
    /// The run's outcome.
    pub outcome: Outcome,
    /// The execution error, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// A soft assertion fell below its threshold.
    #[serde(default)]
    pub below_threshold: bool,
    /// Why the run was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// Weighted mean score of the run's assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The run's named metrics (`.metric(name)`): the weighted mean score of the assertions
    /// carrying each name. Absent in records of versions before baselines.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub metrics: std::collections::BTreeMap<String, f64>,
    /// Wall time of the run (body and assertions), in milliseconds.
    pub duration_ms: f64,
    /// Tokens the agent spent.
    pub usage: Usage,
    /// The agent's cost in USD, when known: what it reported, else the price table's estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Tokens and cost of the run's LLM-judge calls, apart from the agent's.
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    pub judge_usage: Usage,
    /// Where the run's working copy was kept (`#[eval(workspace = ..)]` evals, by `[workspace]
    /// keep`: a failed run's by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Attempts before this one that ended in an execution error and were retried
    /// (`--retry-errors N`): they are not runs, and count in no pass rate or pass@k.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// For a failed run that is not the one the report shows (the first 3 such runs), the
    /// start of its last reply: with `reasons`, why it failed. The report keeps the events
    /// and assertions of the run it shows only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// For those runs, the assertions that did not pass, as `name: reason` (the error, for one
    /// that erred), the first 10 of them, depth first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

impl RunSummary {
    /// How many failed runs, besides the one the report shows, keep their reply and reasons.
    pub(crate) const FAILED_RUNS_KEPT: usize = 3;
    /// How many reasons such a run keeps.
    pub(crate) const REASONS_KEPT: usize = 10;
    /// How much of each kept reply and reason, in bytes (the middle elided beyond).
    const KEPT_TEXT: usize = 2048;

    /// Keeps why this run failed — the start of its last reply and the reasons of its
    /// assertions that did not pass — from the run's `assertions` and `events`, which the
    /// report does not keep for any run but the one it shows.
    pub(crate) fn keep_failure(&mut self, assertions: &[AssertionResult], events: &[Event]) {
        let kept = |text: &str| crate::base::excerpt::cap(text, Self::KEPT_TEXT).into_owned();
        self.reply = Event::last_reply(events).map(|reply| kept(reply.as_str()));
        let mut stack: Vec<&AssertionResult> = assertions.iter().rev().collect();
        while let Some(a) = stack.pop() {
            if self.reasons.len() == Self::REASONS_KEPT {
                break;
            }
            if !a.passed || a.error.is_some() {
                let why = a.error.as_deref().unwrap_or(&a.reason);
                self.reasons.push(kept(&format!("{}: {why}", a.name)));
            }
            stack.extend(a.children.iter().rev());
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Everything about one eval: identity, outcome, the representative run's assertions and
/// transcript, and a summary of every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalReport {
    /// `module::path::name`.
    pub id: String,
    /// Source file of the eval.
    pub file: String,
    /// Source line of the eval.
    pub line: u32,
    /// Tags from `#[eval(tags = [..])]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Description from `#[eval(description = "..")]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The eval's outcome (over all runs).
    pub outcome: Outcome,
    /// Whether strict mode was on.
    #[serde(default)]
    pub strict: bool,
    /// The representative run's execution error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// A soft assertion of the representative run fell below its threshold.
    #[serde(default)]
    pub below_threshold: bool,
    /// Why the eval was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// Where the representative run's body ended early: the `t.require` whose failure stopped
    /// it (so the steps after it never ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The representative run's assertions, in the order they were recorded (value assertions
    /// as they ran, then scoped and judge assertions).
    pub assertions: Vec<AssertionResult>,
    /// The representative run's weighted mean score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The representative run's named metrics: the weighted mean score of the assertions
    /// carrying each `.metric(name)`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub metrics: std::collections::BTreeMap<String, f64>,
    /// Total wall time of all runs, in milliseconds.
    pub duration_ms: f64,
    /// Tokens spent by the representative run's agent.
    pub usage: Usage,
    /// Cost of the representative run's agent in USD, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Tokens and cost of the agent over every run (kept by [`EvalReport::recompute`]); its
    /// `cost_usd` counts reported and estimated costs, unknown only when no run's is known.
    #[serde(default)]
    pub total_usage: Usage,
    /// Tokens and cost of the LLM-judge calls over every run, apart from the agent's (kept by
    /// [`EvalReport::recompute`]).
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    pub judge_usage: Usage,
    /// The representative run's events.
    #[serde(default)]
    pub events: Vec<Event>,
    /// Every run, in order. The representative run (whose assertions, events, error and usage
    /// the fields above show) is the first run whose outcome is the eval's outcome.
    pub runs: Vec<RunSummary>,
    /// Pass rate, pass@k and pass^k over the runs that were not skipped.
    pub reliability: Reliability,
    /// Mean wall time of one run, in milliseconds (kept by [`EvalReport::recompute`]).
    #[serde(default)]
    pub mean_run_ms: f64,
    /// Longest wall time of one run, in milliseconds (kept by [`EvalReport::recompute`]).
    #[serde(default)]
    pub max_run_ms: f64,
    /// Pass rate needed for the eval to pass.
    pub min_pass_rate: f64,
    /// For a case of a dataset eval (`cases = ".."`), the dataset eval's id
    /// (`evals::capitals` for `evals::capitals::paris`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// For a case of a dataset eval with `min_case_pass_rate`, that rate: the dataset's
    /// verdict, not this case's, decides the suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_case_pass_rate: Option<f64>,
    /// For a case of a promptfoo or AgentV suite file, its test, prompt and provider: where it
    /// sits in the file's matrix (the file is [`EvalReport::dataset`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<crate::run::definition::MatrixCell>,
    /// Which run of which test target wrote this record (stamped by the results file; absent
    /// in records of older versions and in reports that were never written to one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
}

/// One run of one test target: every record a process writes to its results file carries it,
/// so merging results can tell an earlier run from the latest one
/// ([`crate::output::results::latest`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunInfo {
    /// The run's id: unique per run, and ordered like the runs' start times. All processes of
    /// one nextest run share it (`NEXTEST_RUN_ID`).
    pub id: String,
    /// When the run started, RFC 3339 in UTC (`2026-11-23T09:12:45.120Z`).
    pub started: String,
    /// The test target (the test binary's name without Cargo's hash: `evals`).
    pub target: String,
}

impl RunInfo {
    /// A run described by its parts.
    ///
    /// ```
    /// let run = niceeval::__workspace::RunInfo::new("r1", "2026-11-23T09:12:45.120Z", "evals");
    /// assert_eq!(run.target, "evals");
    /// ```
    pub fn new(
        id: impl Into<String>,
        started: impl Into<String>,
        target: impl Into<String>,
    ) -> Self {
        RunInfo {
            id: id.into(),
            started: started.into(),
            target: target.into(),
        }
    }
}

impl EvalReport {
    /// The message of the execution error that failed the eval, if any.
    pub fn error_message(&self) -> Option<&str> {
        self.error.as_ref().map(RunError::message)
    }

    /// A report for an eval that has not run: no runs, no assertions, outcome `Failed` until a
    /// caller says otherwise.
    pub fn empty(def: &crate::run::definition::EvalDefinition) -> Self {
        EvalReport {
            id: def.id(),
            file: def.file.to_string(),
            line: def.line,
            tags: def.tags.iter().map(|t| t.to_string()).collect(),
            description: def.own_description().map(str::to_string),
            outcome: Outcome::Failed,
            strict: def.strict,
            error: None,
            below_threshold: false,
            skip_reason: None,
            stopped: None,
            assertions: Vec::new(),
            score: None,
            metrics: Default::default(),
            duration_ms: 0.0,
            usage: Usage::default(),
            cost_usd: None,
            total_usage: Usage::default(),
            judge_usage: Usage::default(),
            events: Vec::new(),
            runs: Vec::new(),
            reliability: Reliability::new(0, 0),
            mean_run_ms: 0.0,
            max_run_ms: 0.0,
            min_pass_rate: def.min_pass_rate.unwrap_or(1.0),
            dataset: def.dataset_id(),
            min_case_pass_rate: def.min_case_pass_rate(),
            matrix: def.own_case().and_then(|c| c.matrix.clone()),
            run: None,
        }
    }

    /// Recomputes the eval-level fields that follow from `runs` (see [`fold_runs`]): the
    /// reliability statistics and the outcome. A report without runs (an eval that never ran,
    /// such as an `#[ignore]`d one) keeps its outcome.
    pub fn recompute(&mut self) {
        self.mean_run_ms = if self.runs.is_empty() {
            0.0
        } else {
            self.runs.iter().map(|r| r.duration_ms).sum::<f64>() / self.runs.len() as f64
        };
        self.max_run_ms = self.runs.iter().map(|r| r.duration_ms).fold(0.0, f64::max);
        self.total_usage = Usage::default();
        self.judge_usage = Usage::default();
        for run in &self.runs {
            self.total_usage.add(&Usage {
                cost_usd: run.cost_usd,
                ..run.usage
            });
            self.judge_usage.add_call(&run.judge_usage);
        }
        if self.runs.is_empty() {
            self.reliability = Reliability::new(0, 0);
            return;
        }
        let (outcome, reliability) = fold_runs(&self.runs, self.min_pass_rate);
        self.outcome = outcome;
        self.reliability = reliability;
    }

    /// Fraction of non-skipped runs that passed.
    pub fn pass_rate(&self) -> f64 {
        self.reliability.pass_rate
    }

    /// Renders the assertion report: a header with the outcome, then every assertion with its
    /// verdict, severity, score, threshold and reason. It is the failure message under
    /// `cargo test`, and what the console, JUnit, Markdown and HTML reports show; snapshots use
    /// the same renderer in its stable form ([`crate::output::snapshot::text`]).
    ///
    /// The header names the eval as libtest does, without its test target
    /// (`eval support::refund FAILED` for `evals::support::refund`); reporters of a run that
    /// shows several targets name it whole.
    pub fn render(&self) -> String {
        render(self, Style::Report)
    }

    /// [`EvalReport::render`], the eval named by `names` (the run's).
    pub(crate) fn render_as(&self, names: Names) -> String {
        render::render_named(self, Style::Report, names)
    }
}

/// Folds the runs of one eval into its outcome and reliability statistics.
///
/// Skipped runs do not count: the pass rate is passed runs over runs that passed or failed.
/// One run: the eval's outcome is that run's. Several: skipped when every run was skipped,
/// else passed when the pass rate reaches `min_pass_rate`, else failed. No run at all is a
/// failure (the eval did not run).
///
/// ```
/// use niceeval::RunSummary;
/// use niceeval::__workspace::fold_runs;
/// use niceeval::{Outcome, Usage};
///
/// let run = |outcome: Outcome| -> RunSummary {
///     serde_json::from_value(serde_json::json!({
///         "outcome": outcome, "duration_ms": 1.0,
///         "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
///     }))
///     .unwrap()
/// };
/// let runs = [run(Outcome::Passed), run(Outcome::Failed), run(Outcome::Skipped), run(Outcome::Passed)];
/// let (outcome, reliability) = fold_runs(&runs, 0.6);
/// assert_eq!((reliability.n, reliability.c), (3, 2));
/// assert_eq!(outcome, Outcome::Passed); // 2/3 ≥ 0.6
/// assert_eq!(fold_runs(&runs, 1.0).0, Outcome::Failed);
/// ```
pub fn fold_runs(runs: &[RunSummary], min_pass_rate: f64) -> (Outcome, Reliability) {
    let mut counts = RunCounts::default();
    for run in runs {
        counts.add(run.outcome);
    }
    counts.fold(min_pass_rate)
}

/// What [`fold_runs`] reads of runs, as counters: how many runs, how many counted (not
/// skipped), how many passed, and the first run's outcome. Merging results files folds the
/// runs of an eval's records from these, without holding the records.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct RunCounts {
    /// Runs.
    pub(crate) runs: u64,
    /// Runs that were not skipped.
    pub(crate) counted: u64,
    /// Runs that passed.
    pub(crate) passed: u64,
    /// The first run's outcome.
    pub(crate) first: Option<Outcome>,
}

impl RunCounts {
    /// Counts one more run.
    pub(crate) fn add(&mut self, outcome: Outcome) {
        self.runs += 1;
        self.counted += u64::from(outcome != Outcome::Skipped);
        self.passed += u64::from(outcome == Outcome::Passed);
        self.first.get_or_insert(outcome);
    }

    /// Counts the runs of `other` after these.
    pub(crate) fn extend(&mut self, other: &RunCounts) {
        self.runs += other.runs;
        self.counted += other.counted;
        self.passed += other.passed;
        if self.first.is_none() {
            self.first = other.first;
        }
    }

    /// The outcome and reliability statistics of the runs counted ([`fold_runs`]).
    pub(crate) fn fold(&self, min_pass_rate: f64) -> (Outcome, Reliability) {
        let reliability = Reliability::new(self.counted, self.passed);
        // c / n and a decimal min_pass_rate are both rounded; 4/5 must meet 0.8.
        const EPSILON: f64 = 1e-9;
        let outcome = match (self.runs, self.first) {
            (0, _) | (_, None) => Outcome::Failed,
            (1, Some(only)) => only,
            _ if self.counted == 0 => Outcome::Skipped,
            _ if reliability.pass_rate + EPSILON >= min_pass_rate => Outcome::Passed,
            _ => Outcome::Failed,
        };
        (outcome, reliability)
    }
}

/// Index of the run a report shows for an eval whose outcome over all runs is `outcome`: the
/// first run with that outcome (so a failed eval shows a failure, a passed one a pass, and the
/// report's error, skip reason and assertions agree with its outcome), else the first failed
/// run, else the last.
pub(crate) fn representative(runs: &[RunSummary], outcome: Outcome) -> usize {
    runs.iter()
        .position(|r| r.outcome == outcome)
        .or_else(|| runs.iter().position(|r| r.outcome == Outcome::Failed))
        .unwrap_or(runs.len().saturating_sub(1))
}

/// The version of the record format written to results files and JSONL reports: every line is
/// an [`EvalReport`] with a `"schema"` field holding this number. Readers (`niceeval report`)
/// reject a line whose schema is newer than theirs, naming the file and line; a line without
/// the field comes from a niceeval that predates versioned records and is read as version 1.
pub const SCHEMA_VERSION: u32 = 1;

/// One record as written: the schema version, then the report's fields.
#[derive(Serialize)]
pub(crate) struct Versioned<'a> {
    schema: u32,
    #[serde(flatten)]
    report: &'a EvalReport,
    /// The run that writes the record, when the report does not carry one already.
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a RunInfo>,
    /// When the record was written (RFC 3339, UTC): with its run's start, the run's wall time
    /// as report mode shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    finished: Option<String>,
}

impl<'a> Versioned<'a> {
    /// `report`, tagged with [`SCHEMA_VERSION`].
    pub(crate) fn new(report: &'a EvalReport) -> Self {
        Versioned {
            schema: SCHEMA_VERSION,
            report,
            run: None,
            finished: None,
        }
    }

    /// `report`, tagged with [`SCHEMA_VERSION`], with `run` unless it names its own run, and
    /// with the time it is written when it is `run`'s.
    pub(crate) fn stamped(report: &'a EvalReport, run: &'a RunInfo) -> Self {
        let own = report.run.is_none();
        Versioned {
            schema: SCHEMA_VERSION,
            report,
            run: own.then_some(run),
            finished: own.then(|| {
                humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
            }),
        }
    }
}

/// The schema version of a written record (`1` when it has none); see [`SCHEMA_VERSION`].
pub(crate) fn schema_of(line: &str) -> Result<u32, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Schema {
        #[serde(default)]
        schema: Option<u32>,
    }
    serde_json::from_str::<Schema>(line).map(|s| s.schema.unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(outcome: Outcome, ms: f64) -> RunSummary {
        RunSummary {
            outcome,
            error: (outcome == Outcome::Failed).then(|| {
                RunError::new(
                    crate::base::outcome::RunErrorKind::Body,
                    format!("run of {ms} ms failed"),
                )
            }),
            below_threshold: false,
            skip_reason: (outcome == Outcome::Skipped).then(|| "no key".to_string()),
            score: None,
            metrics: Default::default(),
            duration_ms: ms,
            usage: Usage::default(),
            judge_usage: Usage::default(),
            cost_usd: None,
            workspace: None,
            retries: 0,
            reply: None,
            reasons: Vec::new(),
        }
    }

    #[test]
    fn a_failed_run_keeps_its_last_reply_and_the_reasons_it_failed_bounded() {
        let failed = |name: &str| {
            serde_json::json!({"name": name, "kind": "value", "severity": "gate", "score": 0.0,
                "passed": false, "reason": format!("{name} not found")})
        };
        let assertions: Vec<AssertionResult> = serde_json::from_value(serde_json::json!([
            {"name": "all_of", "kind": "value", "severity": "gate", "score": 0.5, "passed": false,
             "reason": "1 of 2 passed", "children": [
                {"name": "includes(\"a\")", "kind": "value", "severity": "gate", "score": 1.0, "passed": true, "reason": "found"},
                failed("includes(\"b\")"),
             ]},
            {"name": "judge", "kind": "judge", "severity": "soft", "score": 0.0, "passed": true,
             "reason": "", "error": "the judge did not answer"},
        ]))
        .expect("assertions");
        let events = vec![
            Event::assistant("first"),
            Event::user("again"),
            Event::assistant("last"),
        ];
        let mut summary = run(Outcome::Failed, 1.0);
        summary.keep_failure(&assertions, &events);
        assert_eq!(summary.reply.as_deref(), Some("last"));
        assert_eq!(
            summary.reasons,
            [
                "all_of: 1 of 2 passed",
                "includes(\"b\"): includes(\"b\") not found",
                "judge: the judge did not answer"
            ]
        );
        // Bounded: ten reasons, each reply and reason cut to 2 KiB.
        let many: Vec<AssertionResult> = (0..30)
            .map(|i| serde_json::from_value(failed(&format!("check {i}"))).expect("one"))
            .collect();
        let long = "x".repeat(100_000);
        let mut summary = run(Outcome::Failed, 1.0);
        summary.keep_failure(&many, &[Event::assistant(long.as_str())]);
        assert_eq!(summary.reasons.len(), RunSummary::REASONS_KEPT);
        assert!(summary.reply.as_ref().is_some_and(|r| r.len() < 2100));
        let json = serde_json::to_value(&summary).expect("serializes");
        assert_eq!(json["reasons"][9], "check 9: check 9 not found");
        // A summary without them writes neither.
        let json = serde_json::to_value(run(Outcome::Failed, 1.0)).expect("serializes");
        assert!(json.get("reply").is_none() && json.get("reasons").is_none());
    }

    #[test]
    fn the_representative_run_agrees_with_the_eval_outcome() {
        use Outcome::*;
        let runs = [run(Failed, 1.0), run(Passed, 2.0), run(Passed, 3.0)];
        assert_eq!(fold_runs(&runs, 0.5).0, Passed);
        assert_eq!(crate::run::report::representative(&runs, Passed), 1);
        assert_eq!(fold_runs(&runs, 1.0).0, Failed);
        assert_eq!(crate::run::report::representative(&runs, Failed), 0);
        // Every run skipped: skipped, showing the first skipped run.
        let skipped = [run(Skipped, 1.0), run(Skipped, 1.0)];
        assert_eq!(fold_runs(&skipped, 1.0).0, Skipped);
        assert_eq!(crate::run::report::representative(&skipped, Skipped), 0);
    }

    #[test]
    fn pass_rate_counts_only_runs_that_were_not_skipped() {
        use Outcome::*;
        let runs = [
            run(Skipped, 1.0),
            run(Passed, 1.0),
            run(Failed, 1.0),
            run(Passed, 1.0),
        ];
        let (outcome, reliability) = fold_runs(&runs, 0.6);
        assert_eq!((reliability.n, reliability.c), (3, 2));
        assert!((reliability.pass_rate - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(outcome, Passed);
        // 4 of 5 must meet 0.8 exactly, despite rounding.
        let runs = [
            run(Passed, 1.0),
            run(Passed, 1.0),
            run(Passed, 1.0),
            run(Passed, 1.0),
            run(Failed, 1.0),
        ];
        assert_eq!(fold_runs(&runs, 0.8).0, Passed);
        assert_eq!(fold_runs(&runs, 0.81).0, Failed);
        // No run at all: the eval did not run.
        assert_eq!(fold_runs(&[], 0.0).0, Failed);
    }

    #[test]
    fn a_report_without_runs_keeps_its_outcome() {
        let mut report: EvalReport = serde_json::from_value(serde_json::json!({
            "id": "a::ignored", "file": "t.rs", "line": 1, "outcome": "skipped",
            "skip_reason": "#[ignore]d", "assertions": [], "duration_ms": 0.0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 0, "c": 0, "pass_rate": 1.0, "pass_at_k": [], "pass_hat_k": []},
            "min_pass_rate": 1.0
        }))
        .expect("a report");
        report.recompute();
        assert_eq!(report.outcome, Outcome::Skipped);
    }

    #[test]
    fn render_names_the_run_it_shows() {
        use Outcome::*;
        let mut report: EvalReport = serde_json::from_value(serde_json::json!({
            "id": "a::flaky", "file": "t.rs", "line": 1, "outcome": "failed",
            "assertions": [], "duration_ms": 6.0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 0, "c": 0, "pass_rate": 1.0, "pass_at_k": [], "pass_hat_k": []},
            "min_pass_rate": 0.5
        }))
        .expect("a report");
        report.runs = vec![run(Failed, 1.0), run(Passed, 2.0), run(Passed, 3.0)];
        report.recompute();
        let text = report.render();
        // Named as libtest names it: without the test target.
        assert!(text.starts_with("eval flaky passed\n"), "{text}");
        let several = Names::of(["a::flaky", "b::flaky"]);
        assert!(
            report
                .render_as(several)
                .starts_with("eval a::flaky passed\n"),
            "{text}"
        );
        assert!(
            text.contains("runs: 2/3 passed, pass rate 0.67 (needs 0.50); showing run 2"),
            "{text}"
        );
        assert!(text.contains("run time: mean 2 ms, max 3 ms"), "{text}");
        assert!(
            text.contains("run outcomes: failed, passed, passed\n"),
            "{text}"
        );
        // k = 2 of 3: pass@2 = 1 − C(1,2)/C(3,2) = 1, pass^2 = C(2,2)/C(3,2) = 1/3
        assert!(
            text.contains("pass@2 1.00, pass^2 0.33 (k = 2 of 3 counted runs)"),
            "{text}"
        );
        let json = serde_json::to_value(&report).expect("serializes");
        assert_eq!(json["mean_run_ms"], 2.0);
        assert_eq!(json["max_run_ms"], 3.0);
    }

    #[test]
    fn a_cut_workspace_change_reads_partial_in_the_report_and_its_snapshot() {
        use crate::base::event::{Change, FileChange};
        let mut report: EvalReport = serde_json::from_value(serde_json::json!({
            "id": "a::edits", "file": "t.rs", "line": 1, "outcome": "passed",
            "assertions": [], "duration_ms": 1.0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [1.0], "pass_hat_k": [1.0]},
            "min_pass_rate": 1.0
        }))
        .expect("a report");
        let change = |partial| Event::WorkspaceChanged {
            files: vec![FileChange {
                path: "z00.txt".into(),
                change: Change::Created,
                binary: false,
            }],
            diff: "+a\n".into(),
            partial,
        };
        report.events = vec![change(false)];
        assert!(!report.render().contains("partial"), "{}", report.render());
        report.events = vec![change(false), change(true)];
        let text = report.render();
        assert!(
            text.contains(
                "  partial diff: the working copy's change 2 of 2 was over [workspace] \
                 max_files / max_bytes; the report and the checks saw only its first part\n"
            ),
            "{text}"
        );
        let snapshot = render(&report, Style::Snapshot { reasons: true });
        assert!(
            snapshot.contains("partial diff: the working copy's change 2 of 2"),
            "{snapshot}"
        );
        report.events = vec![change(true)];
        assert!(
            report
                .render()
                .contains("partial diff: the working copy's change was over"),
            "{}",
            report.render()
        );
    }
}
