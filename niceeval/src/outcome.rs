//! How one run's results fold into an [`Outcome`], and how several runs fold into a pass rate.

use serde::{Deserialize, Serialize};

use crate::assertion::AssertionResult;

/// The result of an eval (or of one run of it).
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

/// The fold of one run: the outcome and the marks that explain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Folded {
    /// The outcome.
    pub outcome: Outcome,
    /// The execution error that failed the run, if any (the body's error or panic, a timeout,
    /// or an assertion that could not be evaluated).
    pub error: Option<String>,
    /// Some soft assertion fell below its threshold.
    pub below_threshold: bool,
}

/// Folds one run, in this order: execution error → Failed (marked as an error); any gate not
/// passed → Failed; skip → Skipped; a soft below threshold → Passed with a mark (Failed under
/// `strict`); otherwise Passed.
///
/// ```
/// use niceeval::{fold, Outcome};
///
/// assert_eq!(fold(None, &[], Some("no key"), false).outcome, Outcome::Skipped);
/// let failed = fold(Some("timed out after 30s"), &[], Some("no key"), false);
/// assert_eq!(failed.outcome, Outcome::Failed);
/// assert_eq!(failed.error.as_deref(), Some("timed out after 30s"));
/// ```
pub fn fold(
    error: Option<&str>,
    assertions: &[AssertionResult],
    skip: Option<&str>,
    strict: bool,
) -> Folded {
    let assertion_error = assertions.iter().find_map(|a| {
        a.error
            .as_ref()
            .map(|e| format!("assertion {} could not be evaluated: {e}", a.name))
    });
    let error = error.map(str::to_string).or(assertion_error);
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
///
/// ```
/// use niceeval::{mean_score, AssertionResult, AssertionKind, Grade, Settings};
///
/// let a = AssertionResult::from_grade("a".into(), AssertionKind::Value, &Settings::gate(), Grade::score(1.0, ""));
/// let mut heavy = Settings::gate();
/// heavy.weight = 3.0;
/// let b = AssertionResult::from_grade("b".into(), AssertionKind::Value, &heavy, Grade::score(0.0, ""));
/// assert_eq!(mean_score(&[a, b]), Some(0.25));
/// ```
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
///
/// ```
/// use niceeval::{metric_scores, AssertionKind, AssertionResult, Grade, Settings};
///
/// let mut tone = Settings::gate();
/// tone.metric = Some("tone".into());
/// let a = AssertionResult::from_grade("a".into(), AssertionKind::Value, &tone, Grade::score(1.0, ""));
/// let b = AssertionResult::from_grade("b".into(), AssertionKind::Value, &tone, Grade::score(0.5, ""));
/// assert_eq!(metric_scores(&[a, b])["tone"], 0.75);
/// ```
pub fn metric_scores(assertions: &[AssertionResult]) -> std::collections::BTreeMap<String, f64> {
    fn walk(
        results: &[AssertionResult],
        sums: &mut std::collections::BTreeMap<String, (f64, f64)>,
    ) {
        for r in results {
            if let Some(metric) = &r.metric {
                if r.weight > 0.0 {
                    let entry = sums.entry(metric.clone()).or_insert((0.0, 0.0));
                    entry.0 += r.score * r.weight;
                    entry.1 += r.weight;
                }
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
    use crate::assertion::{AssertionKind, Grade, Settings};

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
            folded.error.as_deref(),
            Some("assertion a could not be evaluated: boom")
        );
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
