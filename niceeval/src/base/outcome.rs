//! How one run's results fold into an [`Outcome`], and how several runs fold into a pass rate.

use serde::{Deserialize, Serialize};

use crate::base::assertion::{AssertionKind, AssertionResult};

/// The result of an eval (or of one run of it).
///
/// One run folds in this order: an execution error (panic, timeout, agent or judge error, a
/// bug in the eval) → `Failed`, marked as an error; any gate not passed → `Failed`;
/// `t.skip(reason)` → `Skipped`; a soft assertion below its threshold → `Passed` with a
/// below-threshold mark (`Failed` under strict); otherwise `Passed`. Several runs
/// (`runs = N`) pass when their pass rate reaches `min_pass_rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// No execution error, every gate passed (softs below threshold are marked, not failed).
    Passed,
    /// An execution error, a failed gate, or (under strict) a soft below its threshold.
    Failed,
    /// `t.skip(reason)` was called and nothing failed.
    Skipped,
}

impl Outcome {
    /// `passed`, `failed` or `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of execution error ended a run: why it failed without its assertions deciding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunErrorKind {
    /// The body ran past its timeout.
    Timeout,
    /// The body, the agent factory or a check panicked.
    Panic,
    /// The agent under test failed (its error, or no agent to send to).
    Agent,
    /// A judge call could not be graded (no model, no key, the provider failed).
    Judge,
    /// The configuration (`niceeval.toml`, an environment override) is unusable.
    Config,
    /// The run was cancelled before it finished (an interrupted suite, an aborted task).
    Cancelled,
    /// An assertion could not be evaluated (a bad pattern, a missing file, a crashed grader).
    Assertion,
    /// The body returned an error of its own (`?` on an I/O, JSON or regex error, …).
    Body,
    /// The run could not start (the runtime, a lost task).
    Setup,
    /// A record written before errors had kinds.
    Other,
}

impl RunErrorKind {
    /// The kind as serialized: `timeout`, `panic`, `agent`, …
    pub fn as_str(self) -> &'static str {
        match self {
            RunErrorKind::Timeout => "timeout",
            RunErrorKind::Panic => "panic",
            RunErrorKind::Agent => "agent",
            RunErrorKind::Judge => "judge",
            RunErrorKind::Config => "config",
            RunErrorKind::Cancelled => "cancelled",
            RunErrorKind::Assertion => "assertion",
            RunErrorKind::Body => "body",
            RunErrorKind::Setup => "setup",
            RunErrorKind::Other => "other",
        }
    }
}

/// The execution error that failed a run: its kind and the message a reader needs (what
/// happened and what to change). Serialized as `{"kind": "timeout", "message": "…"}`; a plain
/// string (a record written before kinds) reads as kind `other`. Displays as its message.
///
/// ```
/// use niceeval::{RunError, RunErrorKind};
///
/// let error = RunError::new(RunErrorKind::Timeout, "timed out after 30s");
/// assert_eq!(error.to_string(), "timed out after 30s");
/// assert_eq!(
///     serde_json::to_string(&error).unwrap(),
///     r#"{"kind":"timeout","message":"timed out after 30s"}"#
/// );
/// let old: RunError = serde_json::from_str(r#""boom""#).unwrap();
/// assert_eq!((old.kind, old.message()), (RunErrorKind::Other, "boom"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct RunError {
    /// What kind of error.
    pub kind: RunErrorKind,
    /// What happened, and what to change.
    pub message: String,
}

impl RunError {
    /// Masks the secrets `redactor` knows in the message.
    pub(crate) fn redact_texts(&mut self, redactor: &crate::base::redact::Redactor) {
        redactor.in_place(&mut self.message);
    }

    /// Caps the message to about `max` bytes, as reports store it (see
    /// [`crate::base::excerpt::cap`]).
    pub(crate) fn cap_texts(&mut self, max: usize) {
        if let std::borrow::Cow::Owned(kept) = crate::base::excerpt::cap(&self.message, max) {
            self.message = kept;
        }
    }

    /// An error of `kind` saying `message`.
    pub fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        RunError {
            kind,
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}

impl<'de> Deserialize<'de> for RunError {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Typed { kind: RunErrorKind, message: String },
            Plain(String),
        }
        Ok(match Repr::deserialize(d)? {
            Repr::Typed { kind, message } => RunError { kind, message },
            Repr::Plain(message) => RunError {
                kind: RunErrorKind::Other,
                message,
            },
        })
    }
}

/// The fold of one run: the outcome and the marks that explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Folded {
    /// The outcome.
    pub outcome: Outcome,
    /// The execution error that failed the run, if any (the body's error or panic, a timeout,
    /// or an assertion that could not be evaluated).
    pub error: Option<RunError>,
    /// Some soft assertion fell below its threshold.
    pub below_threshold: bool,
}

/// Folds one run, in this order: execution error → Failed (marked as an error); any gate not
/// passed → Failed; skip → Skipped; a soft below threshold → Passed with a mark (Failed under
/// `strict`); otherwise Passed.
pub fn fold(
    error: Option<RunError>,
    assertions: &[AssertionResult],
    skip: Option<&str>,
    strict: bool,
) -> Folded {
    let assertion_error = assertions.iter().find_map(|a| {
        let kind = match a.kind {
            AssertionKind::Judge => RunErrorKind::Judge,
            _ => RunErrorKind::Assertion,
        };
        a.error.as_ref().map(|e| {
            RunError::new(
                kind,
                format!("assertion {} could not be evaluated: {e}", a.name),
            )
        })
    });
    let error = error.or(assertion_error);
    let below_threshold = assertions.iter().any(AssertionResult::is_below_threshold);
    let outcome = if error.is_some() || assertions.iter().any(AssertionResult::is_failed_gate) {
        Outcome::Failed
    } else if skip.is_some() {
        Outcome::Skipped
    } else if below_threshold && strict {
        Outcome::Failed
    } else {
        Outcome::Passed
    };
    Folded {
        outcome,
        error,
        below_threshold,
    }
}

/// Weighted mean score of the assertions (weight 0 records without counting); `None` when no
/// assertion carries weight.
pub fn mean_score(assertions: &[AssertionResult]) -> Option<f64> {
    let (sum, weight) = assertions
        .iter()
        .filter(|a| a.weight > 0.0)
        .fold((0.0, 0.0), |(s, w), a| {
            (s + a.score * a.weight, w + a.weight)
        });
    (weight > 0.0).then(|| sum / weight)
}

/// Weighted mean score of each named metric, over the assertions that name one (nested
/// results of assertion sets and graders included); weight 0 records without counting, so a
/// metric whose assertions all weigh 0 is absent.
pub fn metric_scores(assertions: &[AssertionResult]) -> std::collections::BTreeMap<String, f64> {
    fn walk(
        results: &[AssertionResult],
        sums: &mut std::collections::BTreeMap<String, (f64, f64)>,
    ) {
        for r in results {
            if let Some(metric) = &r.metric
                && r.weight > 0.0
            {
                let entry = sums.entry(metric.clone()).or_insert((0.0, 0.0));
                entry.0 += r.score * r.weight;
                entry.1 += r.weight;
            }
            walk(&r.children, sums);
        }
    }
    let mut sums = std::collections::BTreeMap::new();
    walk(assertions, &mut sums);
    sums.into_iter()
        .map(|(name, (sum, weight))| (name, sum / weight))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{Grade, Settings};

    fn result(settings: Settings, score: f64, error: bool) -> AssertionResult {
        let grade = if error {
            Grade::error("boom")
        } else {
            Grade::score(score, "")
        };
        AssertionResult::from_grade("a".into(), AssertionKind::Value, &settings, grade)
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn outcome_table() {
        let gate_ok = result(Settings::gate(), 1.0, false);
        let gate_bad = result(Settings::gate(), 0.0, false);
        let soft_low = result(Settings::soft(Some(0.8)), 0.5, false);
        let soft_ok = result(Settings::soft(Some(0.8)), 0.9, false);
        let broken = result(Settings::soft(None), 0.0, true);
        use Outcome::*;
        /// (error, assertions, skip, strict) → (outcome, below-threshold mark)
        type Row<'a> = (
            Option<&'a str>,
            Vec<AssertionResult>,
            Option<&'a str>,
            bool,
            Outcome,
            bool,
        );
        let table: Vec<Row> = vec![
            (None, vec![], None, false, Passed, false),
            (
                None,
                vec![gate_ok.clone(), soft_ok.clone()],
                None,
                false,
                Passed,
                false,
            ),
            (None, vec![gate_bad.clone()], None, false, Failed, false),
            (
                None,
                vec![gate_bad.clone()],
                Some("s"),
                false,
                Failed,
                false,
            ),
            (
                None,
                vec![gate_ok.clone()],
                Some("s"),
                false,
                Skipped,
                false,
            ),
            (None, vec![soft_low.clone()], Some("s"), true, Skipped, true),
            (None, vec![soft_low.clone()], None, false, Passed, true),
            (None, vec![soft_low.clone()], None, true, Failed, true),
            (
                Some("panic"),
                vec![gate_ok.clone()],
                None,
                false,
                Failed,
                false,
            ),
            (Some("panic"), vec![], Some("s"), false, Failed, false),
            (None, vec![broken.clone()], None, false, Failed, false),
            (None, vec![broken], Some("s"), false, Failed, false),
        ];
        for (i, (error, assertions, skip, strict, expected, mark)) in table.into_iter().enumerate()
        {
            let error = error.map(|e| RunError::new(RunErrorKind::Panic, e));
            let folded = fold(error, &assertions, skip, strict);
            assert_eq!(folded.outcome, expected, "row {i}");
            assert_eq!(folded.below_threshold, mark, "row {i}");
        }
    }

    #[test]
    fn assertion_error_is_reported_as_the_run_error() {
        let broken = result(Settings::gate(), 0.0, true);
        let folded = fold(None, &[broken], None, false);
        assert_eq!(
            folded.error.as_ref().map(RunError::message),
            Some("assertion a could not be evaluated: boom")
        );
        assert_eq!(folded.error.map(|e| e.kind), Some(RunErrorKind::Assertion));
    }

    #[test]
    fn weight_zero_is_recorded_but_not_counted() {
        let mut zero = Settings::gate();
        zero.weight = 0.0;
        let a = result(zero, 0.0, false);
        assert_eq!(mean_score(std::slice::from_ref(&a)), None);
        assert_eq!(
            mean_score(&[a, result(Settings::gate(), 0.5, false)]),
            Some(0.5)
        );
    }
}

#[cfg(test)]
mod fold_example {
    use super::*;

    #[test]
    fn a_skip_folds_to_skipped_and_an_execution_error_wins_over_it() {
        assert_eq!(
            fold(None, &[], Some("no key"), false).outcome,
            Outcome::Skipped
        );
        let timeout = RunError::new(RunErrorKind::Timeout, "timed out after 30s");
        let failed = fold(Some(timeout), &[], Some("no key"), false);
        assert_eq!(failed.outcome, Outcome::Failed);
        assert_eq!(
            failed.error.as_ref().map(RunError::message),
            Some("timed out after 30s")
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::base::outcome::mean_score;
        use crate::{AssertionKind, AssertionResult, Grade, Settings};

        let a = AssertionResult::from_grade(
            "a".into(),
            AssertionKind::Value,
            &Settings::gate(),
            Grade::score(1.0, ""),
        );
        let mut heavy = Settings::gate();
        heavy.weight = 3.0;
        let b = AssertionResult::from_grade(
            "b".into(),
            AssertionKind::Value,
            &heavy,
            Grade::score(0.0, ""),
        );
        assert_eq!(mean_score(&[a, b]), Some(0.25));
    }

    #[test]
    fn example_2() {
        use crate::base::outcome::metric_scores;
        use crate::{AssertionKind, AssertionResult, Grade, Settings};

        let mut tone = Settings::gate();
        tone.metric = Some("tone".into());
        let a = AssertionResult::from_grade(
            "a".into(),
            AssertionKind::Value,
            &tone,
            Grade::score(1.0, ""),
        );
        let b = AssertionResult::from_grade(
            "b".into(),
            AssertionKind::Value,
            &tone,
            Grade::score(0.5, ""),
        );
        assert_eq!(metric_scores(&[a, b])["tone"], 0.75);
    }
}
