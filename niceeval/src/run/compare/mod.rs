//! Comparing runs: a [`Baseline`] saved from one run (meant to be committed), and the
//! [`Comparison`] of a later run with it — per eval and per dataset case: new, removed, fixed,
//! broke, still failing, better or worse — with the change of pass rate, mean score, each
//! named metric, tokens and cost, and the [`Regression`]s the `[compare]` policy of
//! `niceeval.toml` fails a run on.
//!
//! # Deciding with statistics
//!
//! An agent is nondeterministic: an eval run 20 times that passed 16 times last week and 14
//! times today may not have changed at all. For an eval with several runs on either side,
//! the change of pass rate is tested with **Fisher's exact test** (two-sided) on the 2×2 table
//! of passes and failures, at the level `alpha` of `[compare]` (default 0.05): a drop is
//! *beyond chance* when `p < alpha` and the pass rate fell. Fisher's test is exact at any
//! number of runs — the counts here are small and rates sit near 0 or 1, where the normal
//! approximation of a z-test is wrong — and it errs on the side of calling a change noise.
//! Reports show each pass rate with its **Wilson score interval** and the difference with
//! **Newcombe's hybrid score interval** (both at confidence `1 − alpha`), so a reviewer sees
//! how large the change could be, not only whether it is significant. See
//! `crate::base::stats::fisher_exact`, `crate::base::stats::wilson`, `crate::base::stats::newcombe`.
//!
//! An eval whose runs disagree (`0 < passed < runs`) is **flaky**; every report lists flaky
//! evals apart, with their pass rate and Wilson interval, whether or not there is a baseline.
//!
//! # Regressions and the policy
//!
//! `[compare] fail_on` names what fails a compared run (exit code 3 when no eval failed;
//! 101 from a failed eval wins):
//!
//! - `"broken-gate"`: an eval or dataset case that passed in the baseline fails now. For an
//!   eval run several times on both sides, only when its pass-rate drop is beyond chance —
//!   otherwise it is reported as "broke (within chance)".
//! - `"pass-rate-drop"`: an eval run several times whose pass rate fell beyond chance, even if
//!   it still meets its `min_pass_rate`.
//! - `"metric-drop"`: a named metric, or the mean score of an eval that passes on both sides,
//!   fell by more than `metric_margin` (default 0.05) — and, for means over several runs on
//!   both sides, beyond chance by **Welch's t-test** at `alpha` (baselines keep each mean's
//!   standard deviation for it). A score that is each run's pass/fail (every run scores 0 or
//!   1, as many 1s as passes) *is* the pass rate: Fisher's test of the pass rate decides about
//!   it, and it is not tested again as a mean, so one drop is never counted twice.
//! - `"tokens-rise"`: the tokens (input + output) per run of an eval that passes on both sides
//!   rose by more than `tokens_margin`, a fraction of the baseline's (default 0.1: 10% more).
//! - `"cost-rise"`: the cost per run of an eval that passes on both sides rose by more than
//!   `cost_margin` (default 0.1); the baseline must record cost (`baseline_include =
//!   ["cost"]`).
//!
//! The first three by default; the rises when named; `fail_on = []` reports and never fails.
//!
//! # Whose baseline
//!
//! A baseline records each eval's test target. A suite compares only the baseline's evals of
//! its own target, and a baseline none of whose evals belongs to the target running (or, from
//! results, to the results' targets) is an error (exit code 2): compared, every eval
//! would be new and nothing a regression. A filtered run — a name filter, `--limit`,
//! `--sample` — counts the baseline's evals and dataset cases it defines but did not run as
//! not run, not removed.

pub(crate) mod baseline;

pub(crate) use baseline::Baseline;
pub use baseline::BaselineEval;
pub(crate) use baseline::Tokens;
pub(crate) use baseline::{mean, sd};

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::base::outcome::Outcome;
use crate::base::stats::{Interval, fisher_exact, newcombe, wilson};
use crate::config::CompareConfig;

/// What happened to one eval between the baseline and this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Kind {
    /// Passed in the baseline, fails now.
    Broke,
    /// Still passes, but worse: its pass rate fell beyond chance, or its score or a metric by
    /// more than the margin.
    Worse,
    /// Failed in the baseline and fails now.
    StillFailing,
    /// Not in the baseline.
    New,
    /// In the baseline, no longer defined (or not in the results compared).
    Removed,
    /// Failed in the baseline, passes now.
    Fixed,
    /// Still passes, and better: its pass rate rose beyond chance, or its score or a metric by
    /// more than the margin (and nothing fell).
    Better,
    /// Skipped in the baseline or now.
    Skipped,
    /// Passes as before, within chance and the margin.
    Unchanged,
}

/// The kinds of regression a `[compare] fail_on` policy names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RegressionKind {
    /// An eval or case that passed fails now (beyond chance, for evals run several times).
    BrokenGate,
    /// A pass rate fell beyond chance.
    PassRateDrop,
    /// The mean score or a named metric fell by more than the margin.
    MetricDrop,
    /// Tokens per run of an eval passing on both sides rose by more than `tokens_margin` (a
    /// fraction of the baseline's).
    TokensRise,
    /// Cost per run of an eval passing on both sides rose by more than `cost_margin` (a
    /// fraction of the baseline's).
    CostRise,
}

impl RegressionKind {
    /// The name `fail_on` uses: `broken-gate`, `pass-rate-drop`, `metric-drop`,
    /// `tokens-rise`, `cost-rise`.
    pub fn name(self) -> &'static str {
        match self {
            RegressionKind::BrokenGate => "broken-gate",
            RegressionKind::PassRateDrop => "pass-rate-drop",
            RegressionKind::MetricDrop => "metric-drop",
            RegressionKind::TokensRise => "tokens-rise",
            RegressionKind::CostRise => "cost-rise",
        }
    }

    /// Every kind, in the order reports list them.
    pub(crate) const ALL: [RegressionKind; 5] = [
        RegressionKind::BrokenGate,
        RegressionKind::PassRateDrop,
        RegressionKind::MetricDrop,
        RegressionKind::TokensRise,
        RegressionKind::CostRise,
    ];
}

/// A value in the baseline and now.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Delta {
    /// The baseline's value.
    pub baseline: Option<f64>,
    /// This run's value.
    pub current: Option<f64>,
    /// For a mean over several runs on both sides (the score, a metric): Welch's t-test of the
    /// change, two-sided (`crate::base::stats::welch_t_test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
}

impl Delta {
    /// `current − baseline`, when both are known.
    pub fn change(&self) -> Option<f64> {
        Some(self.current? - self.baseline?)
    }

    /// `current / baseline − 1` (`0.25` for a quarter more), when both are known and the
    /// baseline's is above 0.
    pub(crate) fn relative_change(&self) -> Option<f64> {
        let baseline = self.baseline.filter(|b| *b > 0.0)?;
        Some(self.current? / baseline - 1.0)
    }

    /// Whether the value rose by more than `margin`, a fraction of the baseline's.
    pub(crate) fn rose_beyond(&self, margin: f64) -> bool {
        self.relative_change().is_some_and(|r| r > margin + 1e-9)
    }
}

/// The change of an eval's pass rate, with its test and intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PassRateChange {
    /// Counted runs in the baseline.
    pub baseline_runs: u64,
    /// Passed runs in the baseline.
    pub baseline_passed: u64,
    /// Counted runs now.
    pub runs: u64,
    /// Passed runs now.
    pub passed: u64,
    /// The baseline's pass rate.
    pub baseline_rate: f64,
    /// This run's pass rate.
    pub rate: f64,
    /// The Wilson interval of the baseline's pass rate.
    pub baseline_interval: Interval,
    /// The Wilson interval of this run's pass rate.
    pub interval: Interval,
    /// Newcombe's hybrid interval of `rate − baseline_rate`.
    pub difference: Interval,
    /// Fisher's exact test, two-sided.
    pub p_value: f64,
    /// `p_value < alpha`: the change is beyond chance.
    pub beyond_chance: bool,
    /// The level of the test; the intervals are at confidence `1 − alpha`.
    pub alpha: f64,
}

impl PassRateChange {
    /// Compares `passed` of `runs` now with `baseline_passed` of `baseline_runs` at `alpha`.
    ///
    /// ```
    /// use niceeval::compare::PassRateChange;
    ///
    /// let c = PassRateChange::new(18, 20, 6, 20, 0.05);
    /// assert!(c.beyond_chance && c.change() < 0.0);
    /// assert_eq!((c.baseline_rate, c.rate), (0.9, 0.3));
    /// assert!(c.p_value < 0.001 && c.difference.high < 0.0);
    /// ```
    pub fn new(
        baseline_passed: u64,
        baseline_runs: u64,
        passed: u64,
        runs: u64,
        alpha: f64,
    ) -> Self {
        let rate = |c: u64, n: u64| if n == 0 { 1.0 } else { c as f64 / n as f64 };
        let p_value = fisher_exact(passed, runs, baseline_passed, baseline_runs);
        PassRateChange {
            baseline_runs,
            baseline_passed,
            runs,
            passed,
            baseline_rate: rate(baseline_passed, baseline_runs),
            rate: rate(passed, runs),
            baseline_interval: wilson(baseline_passed, baseline_runs, alpha),
            interval: wilson(passed, runs, alpha),
            difference: newcombe(passed, runs, baseline_passed, baseline_runs, alpha),
            p_value,
            beyond_chance: p_value < alpha,
            alpha,
        }
    }

    /// `rate − baseline_rate`.
    pub fn change(&self) -> f64 {
        self.rate - self.baseline_rate
    }

    /// Whether the pass rate fell beyond chance.
    pub fn dropped(&self) -> bool {
        self.beyond_chance && self.change() < 0.0
    }
}

/// One eval compared with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalChange {
    /// The eval's id.
    pub id: String,
    /// For a dataset case, the dataset eval's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// What happened to it.
    pub kind: Kind,
    /// The baseline's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_outcome: Option<Outcome>,
    /// This run's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The pass-rate change, with its test, when either side ran more than once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_rate: Option<PassRateChange>,
    /// The mean score.
    pub score: Delta,
    /// Every run's score is its pass/fail (0 or 1), on both sides: the score's change is the
    /// pass rate's, tested once (Fisher's exact test), not again as a mean (no Welch's test,
    /// never a `metric-drop`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub score_is_pass_fail: bool,
    /// Each named metric of either side.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, Delta>,
    /// Tokens (input + output) per run.
    pub tokens: Delta,
    /// Cost per run in USD.
    pub cost: Delta,
    /// The regressions found in this eval, whether or not the policy fails on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regressions: Vec<RegressionKind>,
    /// For an eval that broke with several runs on both sides: the drop is within chance.
    #[serde(default)]
    pub within_chance: bool,
    /// For an eval that fails now, the gates of its representative run that failed (their
    /// names), when the run's reports are known ([`Comparison::name_failed_gates`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_gates: Vec<String>,
}

impl EvalChange {
    /// Whether anything a reviewer should see changed (anything but `unchanged`).
    pub fn changed(&self) -> bool {
        self.kind != Kind::Unchanged
    }
}

/// One dataset eval compared over its cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DatasetChange {
    /// The dataset eval's id.
    pub id: String,
    /// Cases that passed / cases, in the baseline.
    pub baseline: (usize, usize),
    /// Cases that passed / cases, now.
    pub current: (usize, usize),
    /// The mean score over the cases.
    pub score: Delta,
    /// Cases of each kind (`fixed`, `broke`, ...), only kinds that occur.
    pub kinds: BTreeMap<Kind, usize>,
}

/// A regression the policy fails the run on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Regression {
    /// The eval.
    pub id: String,
    /// Which kind.
    pub kind: RegressionKind,
}

/// A run compared with a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Comparison {
    /// Where the baseline came from (its path), for reports.
    #[serde(default)]
    pub baseline: String,
    /// The level of the pass-rate test; intervals are at confidence `1 − alpha`.
    pub alpha: f64,
    /// How far a score or metric may fall before it is a drop.
    pub metric_margin: f64,
    /// How far tokens per run may rise, as a fraction of the baseline's, before it is a rise.
    #[serde(default)]
    pub tokens_margin: f64,
    /// How far the cost per run may rise, as a fraction of the baseline's, before it is a rise.
    #[serde(default)]
    pub cost_margin: f64,
    /// The kinds of regression that fail the run (`fail_on`).
    pub fail_on: Vec<RegressionKind>,
    /// Every eval of either side, sorted by id.
    pub evals: Vec<EvalChange>,
    /// Every dataset of either side, over its cases, sorted by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datasets: Vec<DatasetChange>,
    /// Baseline evals this run defines but did not select (a filtered run): left out.
    #[serde(default)]
    pub not_run: usize,
    /// Evals compared over several runs at run counts where even the largest change (every
    /// run passed, then none) cannot be beyond chance at `alpha`: Fisher's test can never call
    /// their pass-rate change a drop.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub underpowered: usize,
    /// The runs (baseline, now) of the first of the [`Comparison::underpowered`] evals, and
    /// the p of their largest change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub underpowered_runs: Option<(u64, u64, f64)>,
    /// The fewest runs on each side at which a change can be beyond chance at `alpha`, when
    /// some evals are [`Comparison::underpowered`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_needed: Option<u64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The p of the largest change of pass rate between `baseline_runs` and `runs` runs (every run
/// passed, then none): no change at these counts has a smaller one.
pub(crate) fn smallest_p(baseline_runs: u64, runs: u64) -> f64 {
    fisher_exact(0, runs, baseline_runs, baseline_runs)
}

/// The fewest runs on each side at which the largest change is beyond chance at `alpha` (4 at
/// 0.05: 4/4 → 0/4 has p = 0.029); `None` past 1,000.
pub(crate) fn runs_needed(alpha: f64) -> Option<u64> {
    (2..=1000).find(|&n| smallest_p(n, n) < alpha)
}

impl Comparison {
    /// Compares `current` (this run's evals, e.g. [`BaselineEval::of`] each report) with
    /// `baseline` under the `[compare]` settings. Every baseline eval missing from `current`
    /// is `removed`; see [`Comparison::with_known`] for a filtered run.
    pub fn new(baseline: &Baseline, current: &[BaselineEval], config: &CompareConfig) -> Self {
        Comparison::with_known(baseline, current, config, None, None)
    }

    /// As [`Comparison::new`], for a run that may not have run everything: a baseline eval
    /// missing from `current` whose id is in `defined` (the suite binary defines it, the run
    /// did not select it) is counted in `not_run`, not `removed`; with `target` given,
    /// baseline evals of another test target are left out.
    pub fn with_known(
        baseline: &Baseline,
        current: &[BaselineEval],
        config: &CompareConfig,
        defined: Option<&BTreeSet<String>>,
        target: Option<&str>,
    ) -> Self {
        let fail_on: Vec<RegressionKind> = RegressionKind::ALL
            .into_iter()
            .filter(|k| config.fails_on(k.name()))
            .collect();
        let policy = Policy {
            alpha: config.alpha(),
            metric_margin: config.metric_margin(),
            tokens_margin: config.tokens_margin(),
            cost_margin: config.cost_margin(),
            fail_on: &fail_on,
        };
        let now: BTreeMap<&str, &BaselineEval> =
            current.iter().map(|e| (e.id.as_str(), e)).collect();
        let before: BTreeMap<&str, &BaselineEval> = baseline
            .evals
            .iter()
            .filter(|e| match (target, &e.target) {
                (Some(mine), Some(theirs)) => mine == theirs,
                _ => true,
            })
            .map(|e| (e.id.as_str(), e))
            .collect();
        let mut not_run = 0;
        let ids: BTreeSet<&str> = now.keys().chain(before.keys()).copied().collect();
        let mut evals = Vec::with_capacity(ids.len());
        for id in ids {
            let (b, c) = (before.get(id).copied(), now.get(id).copied());
            if c.is_none() && defined.is_some_and(|d| d.contains(id)) {
                not_run += 1;
                continue;
            }
            evals.push(compare_one(id, b, c, &policy));
        }
        let datasets = datasets(&evals, &before, &now);
        let weak: Vec<(u64, u64, f64)> = evals
            .iter()
            .filter_map(|e| e.pass_rate.as_ref())
            .map(|r| (r.baseline_runs, r.runs, smallest_p(r.baseline_runs, r.runs)))
            .filter(|(_, _, p)| *p >= policy.alpha)
            .collect();
        Comparison {
            underpowered: weak.len(),
            underpowered_runs: weak.first().copied(),
            runs_needed: (!weak.is_empty())
                .then(|| runs_needed(policy.alpha))
                .flatten(),
            baseline: String::new(),
            alpha: policy.alpha,
            metric_margin: policy.metric_margin,
            tokens_margin: policy.tokens_margin,
            cost_margin: policy.cost_margin,
            fail_on,
            evals,
            datasets,
            not_run,
        }
    }

    /// Sets where the baseline came from.
    pub fn from_file(mut self, path: impl std::fmt::Display) -> Self {
        self.baseline = path.to_string();
        self
    }

    /// Names, for each eval that fails now, the gates that failed (`gates(id)`: the failed
    /// gates of the eval's representative run), so "broke" says which gate broke.
    pub fn name_failed_gates<'a>(&mut self, gates: impl Fn(&str) -> Option<&'a [String]>) {
        for e in &mut self.evals {
            if e.outcome == Some(Outcome::Failed)
                && let Some(names) = gates(&e.id)
            {
                e.failed_gates = names.to_vec();
            }
        }
    }

    /// The change of eval `id` (a binary search: `evals` is sorted by id).
    pub fn eval(&self, id: &str) -> Option<&EvalChange> {
        self.evals
            .binary_search_by(|e| e.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.evals[i])
    }

    /// The evals that changed (all but `unchanged`).
    pub fn changed(&self) -> impl Iterator<Item = &EvalChange> {
        self.evals.iter().filter(|e| e.changed())
    }

    /// How many evals of each kind.
    pub fn counts(&self) -> BTreeMap<Kind, usize> {
        let mut counts = BTreeMap::new();
        for e in &self.evals {
            *counts.entry(e.kind).or_insert(0) += 1;
        }
        counts
    }

    /// The regressions the policy (`fail_on`) fails the run on, in eval order.
    pub fn regressions(&self) -> Vec<Regression> {
        self.evals
            .iter()
            .flat_map(|e| {
                e.regressions
                    .iter()
                    .filter(|kind| self.fail_on.contains(kind))
                    .map(|kind| Regression {
                        id: e.id.clone(),
                        kind: *kind,
                    })
            })
            .collect()
    }

    /// Whether the policy fails the run.
    pub fn failed(&self) -> bool {
        !self.regressions().is_empty()
    }

    /// Whether `delta` fell by more than the margin, and for a mean over several runs, beyond
    /// chance.
    pub(crate) fn dropped(&self, delta: &Delta) -> bool {
        delta
            .change()
            .is_some_and(|c| c < -self.metric_margin - 1e-9)
            && delta.p_value.is_none_or(|p| p < self.alpha)
    }
}

/// The `[compare]` settings one eval is compared under.
struct Policy<'a> {
    alpha: f64,
    metric_margin: f64,
    tokens_margin: f64,
    cost_margin: f64,
    fail_on: &'a [RegressionKind],
}

/// Whether every run's score of `e` is its pass/fail: 0 or 1, as many 1s as passed runs.
///
/// A baseline keeps the mean and the standard deviation of the scores, not each run's; they
/// tell it. Scores lie in [0, 1], so `x² ≤ x` for each, and the sum of squares around the mean
/// `m` is at most `n·m·(1 − m)`, reached only when every score is 0 or 1: with the mean equal
/// to the pass rate and the sample deviation equal to `√(n·m·(1 − m)/(n − 1))` (to the 6
/// decimals a baseline keeps), the scores are the runs' passes and failures.
pub(crate) fn score_is_pass_fail(e: &BaselineEval) -> bool {
    let Some(score) = e.score else {
        return false;
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5;
    if e.runs == 0 || !close(score, e.pass_rate) {
        return false;
    }
    if e.runs == 1 {
        return close(score, 0.0) || close(score, 1.0);
    }
    let n = e.runs as f64;
    let bernoulli = (n * score * (1.0 - score).max(0.0) / (n - 1.0)).sqrt();
    e.score_sd.is_some_and(|sd| close(sd, bernoulli))
}

fn compare_one(
    id: &str,
    before: Option<&BaselineEval>,
    now: Option<&BaselineEval>,
    policy: &Policy<'_>,
) -> EvalChange {
    let (alpha, margin) = (policy.alpha, policy.metric_margin);
    // A score that is each run's pass/fail on both sides is the pass rate: Fisher's test of
    // the pass rate decides about it, once.
    let score_is_pass_fail =
        before.is_some_and(score_is_pass_fail) && now.is_some_and(score_is_pass_fail);
    let delta = |f: &dyn Fn(&BaselineEval) -> Option<f64>| Delta {
        baseline: before.and_then(f),
        current: now.and_then(f),
        p_value: None,
    };
    // A mean over several runs on both sides, with the spread of each: Welch's t-test.
    let tested = |f: &dyn Fn(&BaselineEval) -> Option<f64>,
                  spread: &dyn Fn(&BaselineEval) -> Option<f64>| {
        let mut d = delta(f);
        if let (Some(b), Some(c)) = (before, now)
            && let (Some(mb), Some(sb), Some(mc), Some(sc)) = (f(b), spread(b), f(c), spread(c))
            && b.runs >= 2
            && c.runs >= 2
        {
            d.p_value = Some(crate::base::stats::welch_t_test(
                mc, sc, c.runs, mb, sb, b.runs,
            ));
        }
        d
    };
    let names: BTreeSet<&String> = before
        .iter()
        .chain(now.iter())
        .flat_map(|e| e.metrics.keys())
        .collect();
    let metrics: BTreeMap<String, Delta> = names
        .into_iter()
        .map(|name| {
            (
                name.clone(),
                tested(&|e| e.metrics.get(name).copied(), &|e| {
                    e.metrics_sd.get(name).copied()
                }),
            )
        })
        .collect();
    let mut change = EvalChange {
        id: id.to_string(),
        dataset: now.or(before).and_then(|e| e.dataset.clone()),
        kind: Kind::Unchanged,
        baseline_outcome: before.map(|e| e.outcome),
        outcome: now.map(|e| e.outcome),
        pass_rate: None,
        score: if score_is_pass_fail {
            delta(&|e| e.score)
        } else {
            tested(&|e| e.score, &|e| e.score_sd)
        },
        score_is_pass_fail,
        metrics,
        tokens: delta(&|e| e.tokens_per_run().filter(|_| !e.tokens.is_zero())),
        cost: delta(&|e| e.cost_per_run()),
        regressions: Vec::new(),
        within_chance: false,
        failed_gates: Vec::new(),
    };
    let (Some(b), Some(c)) = (before, now) else {
        change.kind = if now.is_some() {
            Kind::New
        } else {
            Kind::Removed
        };
        return change;
    };
    let several = b.runs > 1 || c.runs > 1;
    if several && b.runs > 0 && c.runs > 0 {
        change.pass_rate = Some(PassRateChange::new(
            b.passed, b.runs, c.passed, c.runs, alpha,
        ));
    }
    let rate = change.pass_rate.as_ref();
    let dropped = rate.is_some_and(PassRateChange::dropped);
    let rose = rate.is_some_and(|r| r.beyond_chance && r.change() > 0.0);
    // Beyond the margin, and for means over several runs, beyond chance.
    let chance = |d: &Delta| d.p_value.is_none_or(|p| p < alpha);
    let fell = |d: &Delta| d.change().is_some_and(|x| x < -margin - 1e-9) && chance(d);
    let grew = |d: &Delta| d.change().is_some_and(|x| x > margin + 1e-9) && chance(d);
    // The score of an eval whose outcome flipped moved with the gate that flipped it: that is
    // the broken gate (or the fix), not a metric drop of its own.
    // A score that is the pass/fail moved with the pass rate: counted there.
    let both_passed = b.outcome == Outcome::Passed && c.outcome == Outcome::Passed;
    let score_counts = !score_is_pass_fail;
    let metric_fell =
        (score_counts && both_passed && fell(&change.score)) || change.metrics.values().any(fell);
    let metric_grew = (score_counts && grew(&change.score)) || change.metrics.values().any(grew);
    // Tokens and cost per run rising beyond their margin, for an eval passing on both sides (a
    // failed run's spending is no measure: a fix may well cost more than giving up); it gets
    // worse by them only under a policy that fails on them (tokens vary from run to run, and a
    // reviewer asked about them or not).
    let tokens_rose = both_passed && change.tokens.rose_beyond(policy.tokens_margin);
    let cost_rose = both_passed && change.cost.rose_beyond(policy.cost_margin);
    let costlier = (tokens_rose && policy.fail_on.contains(&RegressionKind::TokensRise))
        || (cost_rose && policy.fail_on.contains(&RegressionKind::CostRise));
    change.kind = match (b.outcome, c.outcome) {
        (Outcome::Skipped, _) | (_, Outcome::Skipped) => Kind::Skipped,
        (Outcome::Passed, Outcome::Failed) => Kind::Broke,
        (Outcome::Failed, Outcome::Passed) => Kind::Fixed,
        (Outcome::Failed, Outcome::Failed) => Kind::StillFailing,
        (Outcome::Passed, Outcome::Passed) if dropped || metric_fell || costlier => Kind::Worse,
        (Outcome::Passed, Outcome::Passed) if rose || metric_grew => Kind::Better,
        (Outcome::Passed, Outcome::Passed) => Kind::Unchanged,
    };
    // An eval run several times on both sides whose outcome flipped with a pass-rate change
    // within chance: said, and not a broken gate.
    let both_several = b.runs > 1 && c.runs > 1;
    if change.kind == Kind::Broke {
        if both_several && !dropped {
            change.within_chance = true;
        } else {
            change.regressions.push(RegressionKind::BrokenGate);
        }
    }
    if dropped {
        change.regressions.push(RegressionKind::PassRateDrop);
    }
    if metric_fell {
        change.regressions.push(RegressionKind::MetricDrop);
    }
    if tokens_rose {
        change.regressions.push(RegressionKind::TokensRise);
    }
    if cost_rose {
        change.regressions.push(RegressionKind::CostRise);
    }
    change
}

fn datasets(
    evals: &[EvalChange],
    before: &BTreeMap<&str, &BaselineEval>,
    now: &BTreeMap<&str, &BaselineEval>,
) -> Vec<DatasetChange> {
    let mut by: BTreeMap<&str, Vec<&EvalChange>> = BTreeMap::new();
    for e in evals {
        if let Some(dataset) = &e.dataset {
            by.entry(dataset).or_default().push(e);
        }
    }
    by.into_iter()
        .map(|(id, cases)| {
            let side = |map: &BTreeMap<&str, &BaselineEval>| {
                let entries: Vec<&BaselineEval> = cases
                    .iter()
                    .filter_map(|c| map.get(c.id.as_str()).copied())
                    .collect();
                let passed = entries
                    .iter()
                    .filter(|e| e.outcome == Outcome::Passed)
                    .count();
                let scores: Vec<f64> = entries.iter().filter_map(|e| e.score).collect();
                let mean =
                    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
                ((passed, entries.len()), mean)
            };
            let (baseline, baseline_score) = side(before);
            let (current, current_score) = side(now);
            let mut kinds = BTreeMap::new();
            for case in &cases {
                *kinds.entry(case.kind).or_insert(0) += 1;
            }
            DatasetChange {
                id: id.to_string(),
                baseline,
                current,
                score: Delta {
                    baseline: baseline_score,
                    current: current_score,
                    p_value: None,
                },
                kinds,
            }
        })
        .collect()
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() -> Result<(), Box<dyn std::error::Error>> {
        use crate::config::CompareConfig;
        use crate::run::compare::{Baseline, Comparison, Kind};

        let before = Baseline::parse(
            r#"{"niceeval_baseline": 1, "evals": [
          {"id": "evals::refund", "outcome": "passed", "runs": 20, "passed": 18, "pass_rate": 0.9},
          {"id": "evals::greeting", "outcome": "failed", "runs": 1, "passed": 0, "pass_rate": 0.0}
        ]}"#,
            "baseline.json",
        )?;
        let now = Baseline::parse(
            r#"{"niceeval_baseline": 1, "evals": [
          {"id": "evals::refund", "outcome": "passed", "runs": 20, "passed": 6, "pass_rate": 0.3},
          {"id": "evals::greeting", "outcome": "passed", "runs": 1, "passed": 1, "pass_rate": 1.0}
        ]}"#,
            "now",
        )?;

        let comparison = Comparison::new(&before, &now.evals, &CompareConfig::default());
        let refund = comparison.eval("evals::refund").unwrap();
        assert_eq!(refund.kind, Kind::Worse);
        let rate = refund.pass_rate.as_ref().unwrap();
        assert!(rate.p_value < 0.001 && rate.beyond_chance);
        assert_eq!(
            comparison.eval("evals::greeting").unwrap().kind,
            Kind::Fixed
        );
        assert_eq!(comparison.regressions().len(), 1); // the pass-rate drop
        Ok(())
    }
}
