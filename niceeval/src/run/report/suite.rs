//! The suite's data: what reporters learn when a suite starts ([`SuiteStart`], the ids it runs
//! kept compactly in [`EvalIds`]) and while it
//! runs ([`Progress`]), the compact [`EvalSummary`] a suite keeps of each finished eval, the
//! [`SuiteReport`] every reporter gets at the end (totals, datasets, flaky evals, the
//! comparison with a baseline), and the [`Signal`] that interrupted a run. Reporters render it;
//! the suite runner and the results files build it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{EvalReport, Names};
use crate::base::event::Usage;
use crate::base::excerpt::format_usd;
use crate::base::outcome::Outcome;
use crate::base::stats::Interval;
use crate::run::compare::{Baseline, BaselineEval, Comparison, Tokens, mean, sd};

/// What a reporter learns when a suite starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteStart {
    /// Ids of the evals that will run, in order.
    pub evals: EvalIds,
    /// How many evals run at once.
    pub concurrency: usize,
}

/// The ids of the evals a suite runs, in order, kept compactly: an eval's id as its text, and
/// consecutive cases of one list (a dataset's, a suite file's) as the list and a range of its
/// positions, each id made when it is read — a million dataset cases are one entry, not a
/// million strings. Built from ids as any list is (`collect()`, `Vec<String>::into()`);
/// serialized as the list of ids.
///
/// ```
/// use niceeval::reporter::EvalIds;
///
/// let ids: EvalIds = vec!["evals::a".to_string(), "evals::b".to_string()].into();
/// assert_eq!(ids.len(), 2);
/// assert_eq!(ids.iter().collect::<Vec<_>>(), ["evals::a", "evals::b"]);
/// ```
#[derive(Clone, Default)]
pub struct EvalIds {
    parts: Vec<IdPart>,
    len: usize,
}

#[derive(Clone)]
enum IdPart {
    One(String),
    Run {
        list: Arc<dyn IdList>,
        start: usize,
        len: usize,
    },
}

impl IdPart {
    fn first(&self) -> String {
        match self {
            IdPart::One(id) => id.clone(),
            IdPart::Run { list, start, .. } => list.id(*start),
        }
    }
}

impl EvalIds {
    /// How many evals.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ids, in order, each made as it is read.
    pub fn iter(&self) -> impl Iterator<Item = String> + '_ {
        self.parts.iter().flat_map(|part| {
            let ids: Box<dyn Iterator<Item = String> + '_> = match part {
                IdPart::One(id) => Box::new(std::iter::once(id.clone())),
                IdPart::Run { list, start, len } => {
                    Box::new((*start..start + len).map(|i| list.id(i)))
                }
            };
            ids
        })
    }

    /// Adds `id`.
    pub(crate) fn push(&mut self, id: String) {
        self.parts.push(IdPart::One(id));
        self.len += 1;
    }

    /// Adds the eval at `index` of `list`: it extends the last entry when that entry ends just
    /// before it in the same list.
    pub(crate) fn push_listed(&mut self, list: &Arc<dyn IdList>, index: usize) {
        self.len += 1;
        if let Some(IdPart::Run {
            list: last,
            start,
            len,
        }) = self.parts.last_mut()
            && std::ptr::addr_eq(Arc::as_ptr(last), Arc::as_ptr(list))
            && *start + *len == index
        {
            *len += 1;
            return;
        }
        self.parts.push(IdPart::Run {
            list: list.clone(),
            start: index,
            len: 1,
        });
    }

    /// How the run's outputs name these evals ([`Names`]): from the first id of each entry
    /// (the ids of one list share their test target).
    pub(crate) fn names(&self) -> Names {
        let firsts: Vec<String> = self.parts.iter().map(IdPart::first).collect();
        Names::of(firsts.iter().map(String::as_str))
    }
}

/// A list of evals named by position (a dataset's cases, a suite file's), as [`EvalIds`] keeps
/// it.
pub(crate) trait IdList: Send + Sync {
    /// The id of the eval at `index`.
    fn id(&self, index: usize) -> String;
}

impl FromIterator<String> for EvalIds {
    fn from_iter<I: IntoIterator<Item = String>>(ids: I) -> Self {
        let mut out = EvalIds::default();
        for id in ids {
            out.push(id);
        }
        out
    }
}

impl From<Vec<String>> for EvalIds {
    fn from(ids: Vec<String>) -> Self {
        ids.into_iter().collect()
    }
}

impl std::fmt::Debug for EvalIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for EvalIds {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Serialize for EvalIds {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for EvalIds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(d).map(EvalIds::from)
    }
}

/// A suite's progress between finished evals ([`crate::output::reporter::Reporter::on_progress`]).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Time since the suite started.
    pub elapsed: std::time::Duration,
    /// The evals running now (ids), each with the time since it started, longest first.
    pub running: Vec<(String, std::time::Duration)>,
    /// The evals that passed the slow mark since the last call (ids); each is named once.
    pub newly_slow: Vec<String>,
    /// The slow mark (`[run] slow_after`).
    pub slow_after: std::time::Duration,
}

/// The compact record of one finished eval that a suite keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalSummary {
    /// `module::path::name`.
    pub id: String,
    /// Outcome over all runs.
    pub outcome: Outcome,
    /// Whether an execution error failed the eval.
    pub error: bool,
    /// Whether a soft assertion fell below its threshold.
    pub below_threshold: bool,
    /// Number of runs.
    pub runs: usize,
    /// Pass rate over non-skipped runs.
    pub pass_rate: f64,
    /// pass@k for k = 1..=n, n being the runs that were not skipped.
    pub pass_at_k: Vec<f64>,
    /// pass^k for k = 1..=n.
    #[serde(default)]
    pub pass_hat_k: Vec<f64>,
    /// Weighted mean score of the representative run.
    pub score: Option<f64>,
    /// The agent's tokens over every run.
    pub usage: Usage,
    /// The agent's cost over every run (reported, else estimated), when known.
    pub cost_usd: Option<f64>,
    /// Tokens and cost of the LLM-judge calls over every run, apart from the agent's.
    #[serde(default)]
    pub judge_usage: Usage,
    /// Total wall time, in milliseconds.
    pub duration_ms: f64,
    /// Tags.
    pub tags: Vec<String>,
    /// Named metrics of the representative run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// The dataset eval this eval is a case of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// The dataset's `min_case_pass_rate`, for a case of one that has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_case_pass_rate: Option<f64>,
    /// What a baseline keeps of this eval (counts of runs and passes, mean score and metrics
    /// over the runs, tokens): what `--save-baseline` writes and `--baseline` compares. Set by
    /// `From<&EvalReport>`; a suite runner comparing with no baseline and saving none drops
    /// it, to keep a large run's memory small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Box<BaselineEval>>,
    /// The gates of the representative run that failed (their names), for a failed eval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_gates: Vec<String>,
}

/// An eval whose runs disagree: some passed, some failed (`0 < passed < runs`). Every report
/// lists them apart, with the pass rate and its 95% Wilson score interval
/// (`crate::base::stats::wilson`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Flaky {
    /// The eval's id.
    pub id: String,
    /// Runs that counted (not skipped).
    pub runs: u64,
    /// Runs that passed.
    pub passed: u64,
    /// `passed / runs`.
    pub pass_rate: f64,
    /// The 95% Wilson score interval of the pass rate.
    pub interval: Interval,
}

impl Flaky {
    /// `15 of 20 runs passed, pass rate 0.75, 95% CI [0.53, 0.89]`.
    ///
    /// ```
    /// use niceeval::reporter::Flaky;
    ///
    /// let flaky = Flaky::new("evals::refund", 20, 15);
    /// assert_eq!(flaky.describe(), "15 of 20 runs passed, pass rate 0.75, 95% CI [0.53, 0.89]");
    /// ```
    pub fn describe(&self) -> String {
        format!(
            "{} of {} runs passed, pass rate {:.2}, 95% CI {}",
            self.passed, self.runs, self.pass_rate, self.interval
        )
    }

    /// A flaky eval's line from its counts.
    pub fn new(id: impl Into<String>, runs: u64, passed: u64) -> Self {
        Flaky {
            id: id.into(),
            runs,
            passed,
            pass_rate: if runs == 0 {
                1.0
            } else {
                passed as f64 / runs as f64
            },
            interval: crate::base::stats::wilson(passed, runs, 0.05),
        }
    }
}

/// The view of one dataset eval over its cases: how many passed, the mean score and the
/// mean of each named metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetSummary {
    /// The dataset eval's id (`evals::capitals`).
    pub id: String,
    /// Cases reported.
    pub cases: usize,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases that were skipped.
    pub skipped: usize,
    /// Mean score over the cases that have one.
    pub mean_score: Option<f64>,
    /// Mean of each named metric over the cases that have it.
    pub metrics: BTreeMap<String, f64>,
    /// `min_case_pass_rate`: the share of cases (not skipped) that must pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_case_pass_rate: Option<f64>,
}

impl DatasetSummary {
    /// Whether the dataset passes: with `min_case_pass_rate`, when that share of the cases
    /// that ran (not skipped) passed; otherwise when no case failed.
    pub fn passes(&self) -> bool {
        match self.min_case_pass_rate {
            Some(min) => {
                let counted = self.passed + self.failed;
                counted == 0 || self.passed as f64 / counted as f64 >= min
            }
            None => self.failed == 0,
        }
    }

    /// What the cases did: `18 of 20 cases passed, mean score 0.93, accuracy 0.90`, and with
    /// `min_case_pass_rate` the verdict (`; needs 0.90 of them: passes`).
    pub fn counts(&self) -> String {
        let mut line = format!("{} of {} cases passed", self.passed, self.cases);
        if self.skipped > 0 {
            line.push_str(&format!(" ({} skipped)", self.skipped));
        }
        if let Some(score) = self.mean_score {
            line.push_str(&format!(", mean score {score:.2}"));
        }
        for (name, mean) in &self.metrics {
            line.push_str(&format!(", {name} {mean:.2}"));
        }
        if let Some(min) = self.min_case_pass_rate {
            let verdict = if self.passes() { "passes" } else { "FAILED" };
            line.push_str(&format!("; needs {min:.2} of them: {verdict}"));
        }
        line
    }
}

/// A suite's totals, folded one eval's summary at a time: what a [`SuiteReport`] says besides
/// the summaries themselves (counts, tokens and cost, flaky evals, datasets). The suite runner
/// folds each eval as it finishes, so a run whose reporters read no summary
/// ([`crate::output::reporter::Reporter::reads_evals`]) keeps none.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    passed: usize,
    failed: usize,
    skipped: usize,
    usage: Usage,
    judge_usage: Usage,
    flaky: Vec<Flaky>,
    datasets: BTreeMap<String, DatasetTotals>,
}

/// One dataset's cases, folded: counts, and the sums and counts the means are made of.
#[derive(Debug, Default)]
struct DatasetTotals {
    cases: usize,
    passed: usize,
    failed: usize,
    skipped: usize,
    scores: (f64, usize),
    metrics: BTreeMap<String, (f64, usize)>,
    min_case_pass_rate: Option<f64>,
}

impl Totals {
    /// Folds in `eval`.
    pub(crate) fn add(&mut self, eval: &EvalSummary) {
        match eval.outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Skipped => self.skipped += 1,
        }
        self.usage.add(&Usage {
            cost_usd: eval.cost_usd,
            ..eval.usage
        });
        self.judge_usage.add_call(&eval.judge_usage);
        let (runs, passed) = eval.counted();
        if passed > 0 && passed < runs {
            self.flaky.push(Flaky::new(eval.id.clone(), runs, passed));
        }
        if let Some(dataset) = &eval.dataset {
            let totals = match self.datasets.get_mut(dataset) {
                Some(totals) => totals,
                None => self.datasets.entry(dataset.clone()).or_default(),
            };
            totals.cases += 1;
            match eval.outcome {
                Outcome::Passed => totals.passed += 1,
                Outcome::Failed => totals.failed += 1,
                Outcome::Skipped => totals.skipped += 1,
            }
            if let Some(score) = eval.score {
                totals.scores.0 += score;
                totals.scores.1 += 1;
            }
            for (name, value) in &eval.metrics {
                let sum = match totals.metrics.get_mut(name) {
                    Some(sum) => sum,
                    None => totals.metrics.entry(name.clone()).or_default(),
                };
                sum.0 += value;
                sum.1 += 1;
            }
            totals.min_case_pass_rate = totals.min_case_pass_rate.or(eval.min_case_pass_rate);
        }
    }

    /// The report of a suite with these totals and the summaries `evals` (all the evals
    /// folded, or none when no reporter reads them), sorted by id here.
    pub(crate) fn report(
        self,
        mut evals: Vec<EvalSummary>,
        not_run: usize,
        interrupted: bool,
        duration_ms: f64,
    ) -> SuiteReport {
        // Unstable: no scratch buffer the size of the suite (ids are unique anyway).
        evals.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        let mut flaky = self.flaky;
        flaky.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        let mean = |(sum, n): (f64, usize)| sum / n as f64;
        let datasets = self
            .datasets
            .into_iter()
            .map(|(id, totals)| DatasetSummary {
                id,
                cases: totals.cases,
                passed: totals.passed,
                failed: totals.failed,
                skipped: totals.skipped,
                mean_score: (totals.scores.1 > 0).then(|| mean(totals.scores)),
                metrics: totals
                    .metrics
                    .into_iter()
                    .map(|(name, sum)| (name, mean(sum)))
                    .collect(),
                min_case_pass_rate: totals.min_case_pass_rate,
            })
            .collect();
        SuiteReport {
            flaky,
            comparison: None,
            datasets,
            usage: self.usage,
            judge_usage: self.judge_usage,
            passed: self.passed,
            failed: self.failed,
            skipped: self.skipped,
            evals,
            not_run,
            interrupted,
            duration_ms,
            signal: None,
            unfinished: Vec::new(),
        }
    }
}

impl From<&EvalReport> for EvalSummary {
    fn from(r: &EvalReport) -> Self {
        EvalSummary {
            baseline: Some(Box::new(BaselineEval::of(r))),
            ..EvalSummary::without_baseline(r)
        }
    }
}

impl EvalSummary {
    /// The summary of `r` without what a baseline keeps of it (a run that neither compares
    /// with a baseline nor saves one does not make it).
    pub(crate) fn without_baseline(r: &EvalReport) -> Self {
        EvalSummary {
            id: r.id.clone(),
            outcome: r.outcome,
            error: r.error.is_some() && r.outcome == Outcome::Failed,
            below_threshold: r.below_threshold,
            runs: r.runs.len(),
            pass_rate: r.reliability.pass_rate,
            pass_at_k: r.reliability.pass_at_k.clone(),
            pass_hat_k: r.reliability.pass_hat_k.clone(),
            score: r.score,
            usage: r.total_usage,
            cost_usd: r.total_usage.cost_usd,
            judge_usage: r.judge_usage,
            duration_ms: r.duration_ms,
            tags: r.tags.clone(),
            metrics: r.metrics.clone(),
            dataset: r.dataset.clone(),
            min_case_pass_rate: r.min_case_pass_rate,
            baseline: None,
            failed_gates: if r.outcome == Outcome::Failed {
                r.assertions
                    .iter()
                    .filter(|a| a.severity == crate::base::assertion::Severity::Gate && !a.passed)
                    .map(|a| a.name.clone())
                    .collect()
            } else {
                Vec::new()
            },
        }
    }
}

impl EvalSummary {
    /// The runs that counted (not skipped) and how many of them passed: from what a baseline
    /// keeps when the summary has it, else from the pass rate over the counted runs (one
    /// pass@k per counted run).
    pub(crate) fn counted(&self) -> (u64, u64) {
        match &self.baseline {
            Some(b) => (b.runs, b.passed),
            None => {
                let runs = self.pass_at_k.len() as u64;
                (runs, (self.pass_rate * runs as f64).round() as u64)
            }
        }
    }

    /// The `k` that summary tables show pass@k and pass^k at: half the counted runs, rounded
    /// up. At k = n both statistics degenerate (pass@n is "any run passed", pass^n "every run
    /// passed"); half the runs still averages over many subsets. `None` with a single run.
    ///
    /// ```
    /// # use niceeval::reporter::EvalSummary;
    /// # use niceeval::{Outcome, Usage};
    /// let mut s: EvalSummary = serde_json::from_value(serde_json::json!({
    ///     "id": "demo::refund", "outcome": Outcome::Passed, "error": false,
    ///     "below_threshold": false, "runs": 10, "pass_rate": 0.8, "pass_at_k": vec![0.8; 10],
    ///     "pass_hat_k": vec![0.8; 10], "score": null, "usage": Usage::default(), "cost_usd": null,
    ///     "duration_ms": 1.0, "tags": [],
    /// })).unwrap();
    /// assert_eq!(s.table_k(), Some(5));
    /// s.runs = 1;
    /// assert_eq!(s.table_k(), None);
    /// ```
    pub fn table_k(&self) -> Option<usize> {
        let n = self.pass_at_k.len();
        (self.runs > 1 && n > 0).then(|| n.div_ceil(2))
    }

    /// pass@k at [`EvalSummary::table_k`], formatted as `0.97 (k=5)`; `None` with one run.
    pub fn pass_at_k_cell(&self) -> Option<String> {
        let k = self.table_k()?;
        Some(format!("{:.2} (k={k})", self.pass_at_k.get(k - 1)?))
    }

    /// pass^k at [`EvalSummary::table_k`], formatted as `0.42 (k=5)`; `None` with one run.
    pub fn pass_hat_k_cell(&self) -> Option<String> {
        let k = self.table_k()?;
        Some(format!("{:.2} (k={k})", self.pass_hat_k.get(k - 1)?))
    }

    /// The pass rate, formatted; `None` with one run (the outcome says it all) or when every
    /// run was skipped.
    pub fn pass_rate_cell(&self) -> Option<String> {
        (self.runs > 1 && !self.pass_at_k.is_empty()).then(|| format!("{:.2}", self.pass_rate))
    }

    /// The numeric cells every summary table shows, in order: runs, pass rate, pass@k, pass^k,
    /// score, tokens, cost and time; `empty` stands for a value that does not apply. Tokens
    /// and cost are the agent's over every run, the judge's apart: `1200 (judge 300)`.
    pub fn table_cells(&self, empty: &str) -> [String; 8] {
        let empty = || empty.to_string();
        [
            self.runs.to_string(),
            self.pass_rate_cell().unwrap_or_else(empty),
            self.pass_at_k_cell().unwrap_or_else(empty),
            self.pass_hat_k_cell().unwrap_or_else(empty),
            self.score.map_or_else(empty, |s| format!("{s:.2}")),
            match (self.usage.total_tokens(), self.judge_usage.total_tokens()) {
                (0, 0) => empty(),
                (n, 0) => n.to_string(),
                (n, judge) => format!("{n} (judge {judge})"),
            },
            match (self.cost_usd, self.judge_usage.cost_usd) {
                (None, None) => empty(),
                (Some(c), None) => format_usd(c),
                (c, Some(judge)) => format!(
                    "{} (judge {})",
                    c.map_or_else(|| "unknown".to_string(), format_usd),
                    format_usd(judge)
                ),
            },
            format!("{:.2}s", self.duration_ms / 1000.0),
        ]
    }
}

/// The signal that interrupted a suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Signal {
    /// Ctrl-C: `SIGINT` (exit code 130).
    #[serde(rename = "SIGINT")]
    Interrupt,
    /// `SIGTERM`, sent by `timeout`, CI runners cancelling a job, `docker stop`, `kill`
    /// (exit code 143). Unix only.
    #[serde(rename = "SIGTERM")]
    Terminate,
}

impl Signal {
    /// `SIGINT` or `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }

    /// How reports name it: `Ctrl-C (SIGINT)` or `SIGTERM`.
    pub fn describe(self) -> &'static str {
        match self {
            Signal::Interrupt => "Ctrl-C (SIGINT)",
            Signal::Terminate => "SIGTERM",
        }
    }

    /// The exit code of a suite it interrupted: 128 + the signal number, as a shell reports a
    /// process the signal killed (130 for SIGINT, 143 for SIGTERM).
    pub fn exit_code(self) -> i32 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        }
    }
}

/// The end of a suite: every eval's summary, sorted by id (so reports do not depend on which
/// eval happened to finish first), plus totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SuiteReport {
    /// One summary per finished eval.
    pub evals: Vec<EvalSummary>,
    /// Evals that passed.
    pub passed: usize,
    /// Evals that failed.
    pub failed: usize,
    /// Evals that were skipped.
    pub skipped: usize,
    /// Evals that did not finish because the run was interrupted.
    pub not_run: usize,
    /// Whether the run was interrupted (Ctrl-C, SIGTERM).
    pub interrupted: bool,
    /// Wall time of the suite, in milliseconds.
    pub duration_ms: f64,
    /// The signal that interrupted the run, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<Signal>,
    /// Ids of the evals that did not finish because the run was interrupted (those running and
    /// those not yet started), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
    /// The agents' tokens and cost over every eval and run.
    #[serde(default)]
    pub usage: Usage,
    /// One line per dataset eval, over its cases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datasets: Vec<DatasetSummary>,
    /// The LLM-judge calls' tokens and cost over every eval and run, apart from the agents'.
    #[serde(default)]
    pub judge_usage: Usage,
    /// The evals whose runs disagree, sorted by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<Flaky>,
    /// The comparison with a baseline, when the run was given one (`--baseline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

impl SuiteReport {
    /// Builds the totals from summaries (sorted by id here).
    pub fn new(
        mut evals: Vec<EvalSummary>,
        not_run: usize,
        interrupted: bool,
        duration_ms: f64,
    ) -> Self {
        // Folded in id order, as the report lists them.
        evals.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        let mut totals = Totals::default();
        for eval in &evals {
            totals.add(eval);
        }
        totals.report(evals, not_run, interrupted, duration_ms)
    }

    /// The suite's spending in one line, the agents' and the judges' apart
    /// (`tokens: 1200 agent + 300 judge; cost: $0.012 agent + $0.003 judge`); a cost nobody
    /// reported or priced reads `unknown (agent)`; `None` when nothing reported tokens or cost.
    ///
    /// ```
    /// use niceeval::reporter::SuiteReport;
    ///
    /// let mut suite = SuiteReport::new(vec![], 0, false, 1.0);
    /// assert_eq!(suite.spending(), None);
    /// suite.usage.input_tokens = 1000;
    /// assert_eq!(suite.spending().unwrap(), "tokens: 1000 agent; cost: unknown (agent)");
    /// suite.judge_usage.input_tokens = 300;
    /// assert_eq!(
    ///     suite.spending().unwrap(),
    ///     "tokens: 1000 agent + 300 judge; cost: unknown (agent and judge)"
    /// );
    /// suite.judge_usage.cost_usd = Some(0.003);
    /// assert_eq!(
    ///     suite.spending().unwrap(),
    ///     "tokens: 1000 agent + 300 judge; cost: unknown (agent) + $0.003 judge"
    /// );
    /// suite.usage.output_tokens = 200;
    /// suite.usage.cost_usd = Some(0.012);
    /// assert_eq!(
    ///     suite.spending().unwrap(),
    ///     "tokens: 1200 agent + 300 judge; cost: $0.012 agent + $0.003 judge"
    /// );
    /// ```
    pub fn spending(&self) -> Option<String> {
        if self.usage.is_zero() && self.judge_usage.is_zero() {
            return None;
        }
        let judged = !self.judge_usage.is_zero();
        let mut tokens = format!("tokens: {} agent", self.usage.total_tokens());
        if judged {
            tokens.push_str(&format!(" + {} judge", self.judge_usage.total_tokens()));
        }
        let known =
            |usage: &Usage, who: &str| usage.cost_usd.map(|c| format!("{} {who}", format_usd(c)));
        let spent = match (known(&self.usage, "agent"), judged) {
            (Some(agent), false) => agent,
            (None, false) => "unknown (agent)".to_string(),
            (agent, true) => match (agent, known(&self.judge_usage, "judge")) {
                (Some(agent), Some(judge)) => format!("{agent} + {judge}"),
                (Some(agent), None) => format!("{agent} + unknown (judge)"),
                (None, Some(judge)) => format!("unknown (agent) + {judge}"),
                (None, None) => "unknown (agent and judge)".to_string(),
            },
        };
        Some(format!("{tokens}; cost: {spent}"))
    }

    /// How this run's outputs name its evals (see [`super::Names`]): over the evals it
    /// finished, those it did not, and the baseline's it was compared with.
    pub(crate) fn names(&self) -> super::Names {
        let compared = self.comparison.iter().flat_map(|c| {
            c.evals
                .iter()
                .map(|e| e.id.as_str())
                .chain(c.datasets.iter().map(|d| d.id.as_str()))
        });
        super::Names::of(
            self.evals
                .iter()
                .map(|e| e.id.as_str())
                .chain(self.unfinished.iter().map(String::as_str))
                .chain(compared),
        )
    }

    /// Marks the suite interrupted by `signal` before the evals `unfinished` (ids) finished;
    /// `not_run` becomes their number.
    ///
    /// ```
    /// use niceeval::reporter::{Signal, SuiteReport};
    ///
    /// let suite = SuiteReport::new(vec![], 0, false, 1.0)
    ///     .interrupted_by(Signal::Terminate, vec!["demo::b".into(), "demo::a".into()]);
    /// assert!(suite.interrupted && !suite.success());
    /// assert_eq!(suite.not_run, 2);
    /// assert_eq!(suite.unfinished, ["demo::a", "demo::b"]);
    /// ```
    pub fn interrupted_by(mut self, signal: Signal, mut unfinished: Vec<String>) -> Self {
        unfinished.sort_unstable();
        self.interrupted = true;
        self.signal = Some(signal);
        self.not_run = unfinished.len();
        self.unfinished = unfinished;
        self
    }

    /// How the interruption is named in reports: `interrupted by SIGTERM`, or just
    /// `interrupted` when the signal is not known.
    pub fn interruption(&self) -> String {
        match self.signal {
            Some(signal) => format!("interrupted by {}", signal.describe()),
            None => "interrupted".to_string(),
        }
    }

    /// What a baseline keeps of every eval of the suite (see [`crate::run::compare::Baseline`]).
    pub fn baseline_evals(&self) -> Vec<BaselineEval> {
        self.evals
            .iter()
            .filter_map(|e| e.baseline.as_deref().cloned())
            .collect()
    }

    /// Whether the comparison with a baseline found a regression its policy fails on.
    pub fn regressed(&self) -> bool {
        self.comparison.as_ref().is_some_and(Comparison::failed)
    }

    /// Whether the suite succeeded: nothing failed and the run was not interrupted.
    pub fn success(&self) -> bool {
        self.failed == self.excused() && !self.interrupted
    }

    /// Failed evals that do not fail the suite: the failing cases of datasets that pass their
    /// `min_case_pass_rate`.
    pub fn excused(&self) -> usize {
        self.datasets
            .iter()
            .filter(|d| d.min_case_pass_rate.is_some() && d.passes())
            .map(|d| d.failed)
            .sum()
    }
}

/// What a baseline keeps of a report: the comparison layer reads baselines, the reports are
/// made here.
impl BaselineEval {
    /// What a baseline keeps of `report` (cost and duration included; [`Baseline::new`] drops
    /// them unless asked).
    ///
    /// The score and each metric are means over the runs that have them, so an eval run 20
    /// times is compared on all 20, not on its representative run.
    pub fn of(report: &EvalReport) -> Self {
        let scores: Vec<f64> = report.runs.iter().filter_map(|r| r.score).collect();
        let score = mean(&scores).or(report.score);
        let mut values: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for run in &report.runs {
            for (name, value) in &run.metrics {
                values.entry(name).or_default().push(*value);
            }
        }
        let (metrics, metrics_sd) = if values.is_empty() {
            // Records written before runs kept their metrics: the representative run's.
            (report.metrics.clone(), BTreeMap::new())
        } else {
            (
                values
                    .iter()
                    .filter_map(|(name, v)| Some((name.to_string(), mean(v)?)))
                    .collect(),
                values
                    .iter()
                    .filter_map(|(name, v)| Some((name.to_string(), sd(v)?)))
                    .collect(),
            )
        };
        let usage = report.total_usage;
        BaselineEval {
            id: report.id.clone(),
            dataset: report.dataset.clone(),
            target: report.run.as_ref().map(|r| r.target.clone()),
            outcome: report.outcome,
            runs: report.reliability.n,
            passed: report.reliability.c,
            pass_rate: report.reliability.pass_rate,
            score,
            score_sd: sd(&scores),
            metrics,
            metrics_sd,
            tokens: Tokens {
                input: usage.input_tokens,
                output: usage.output_tokens,
                cache_read: usage.cache_read_tokens,
            },
            cost_usd: usage.cost_usd,
            mean_run_ms: (!report.runs.is_empty()).then_some(report.mean_run_ms),
        }
    }
}

impl Baseline {
    /// A baseline of reports (see [`BaselineEval::of`]).
    pub fn of_reports(reports: &[EvalReport], cost: bool, duration: bool) -> Self {
        Baseline::new(reports.iter().map(BaselineEval::of), cost, duration)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, outcome: &str, score: f64, accuracy: f64) -> EvalSummary {
        let report: EvalReport = serde_json::from_value(serde_json::json!({
            "id": id, "file": "tests/a.rs", "line": 1, "outcome": outcome,
            "assertions": [], "duration_ms": 1.0, "score": score,
            "metrics": {"accuracy": accuracy},
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0},
            "runs": [], "reliability": {"n": 1, "c": 1, "pass_rate": 1.0, "pass_at_k": [], "pass_hat_k": []},
            "min_pass_rate": 1.0,
            "dataset": id.rsplit_once("::").map(|(p, _)| p),
        }))
        .expect("a report");
        EvalSummary::from(&report)
    }

    #[test]
    fn datasets_are_summarized_over_their_cases() {
        let suite = SuiteReport::new(
            vec![
                case("evals::capitals::paris", "passed", 1.0, 1.0),
                case("evals::capitals::lima", "passed", 1.0, 0.5),
                case("evals::capitals::atlantis", "failed", 0.25, 0.0),
            ],
            0,
            false,
            1.0,
        );
        assert_eq!(suite.datasets.len(), 1);
        let dataset = &suite.datasets[0];
        assert_eq!(dataset.id, "evals::capitals");
        assert_eq!(
            dataset.counts(),
            "2 of 3 cases passed, mean score 0.75, accuracy 0.50"
        );
    }
}
