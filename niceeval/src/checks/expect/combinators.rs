//! Assertions built from assertions: [`not`] (the opposite verdict) and [`all_of`] (an
//! assertion set with its own threshold, weight and metric), plus [`BoxedAssertion`], the
//! type-erased form lists of different matchers need.

use crate::base::assertion::{
    Assertion, AssertionResult, CheckContext, Grade, Settings, Severity, Subject, passes,
};
use crate::base::outcome::mean_score;

/// Any assertion, boxed: what [`all_of`] takes. Make one with `.boxed()` on any assertion.
pub type BoxedAssertion = Box<dyn Assertion + Send + Sync>;

/// Boxes assertions for lists such as [`all_of`]; implemented for every `Send + Sync`
/// assertion.
pub trait IntoBoxed {
    /// This assertion as a [`BoxedAssertion`].
    fn boxed(self) -> BoxedAssertion;
}

impl<A: Assertion + Send + Sync + 'static> IntoBoxed for A {
    fn boxed(self) -> BoxedAssertion {
        Box::new(self)
    }
}

/// The opposite of `assertion`: passes exactly when it does not, with score `1 − score`.
///
/// The verdict is the inner assertion's own (under its own threshold), flipped: `not(bleu(r))`
/// passes when BLEU is below 0.5, whatever the score. Severity, weight and metric are the inner
/// assertion's; chain `.at_least(x)` on the `not` to judge `1 − score` against `x` instead. An
/// inner execution error stays an error (it is not turned into a pass). A soft inner assertion
/// without threshold is a signal, so its `not` is a signal too (it always passes). This is what
/// the `not-` prefix does in assertions as data (promptfoo, Runsight).
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let r = AssertionResult::evaluate(&not(includes("error")), &"all good".subject());
/// assert!(r.passed);
/// assert_eq!(r.name, r#"not(includes("error"))"#);
/// let r = AssertionResult::evaluate(&not(bleu("the cat sat on the mat")), &"the cat sat on the mat".subject());
/// assert!(!r.passed && r.score < 1e-9);
/// ```
pub fn not<A: Assertion>(assertion: A) -> Not<A> {
    Not { inner: assertion }
}

/// The matcher returned by [`not`].
#[derive(Debug, Clone)]
pub struct Not<A> {
    inner: A,
}

impl<A: Assertion> Assertion for Not<A> {
    fn describe(&self) -> String {
        format!("not({})", self.inner.describe())
    }

    fn settings(&self) -> Settings {
        let mut s = self.inner.settings();
        s.threshold = None;
        s
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.evaluate_in(value, &CheckContext::default())
    }

    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        let settings = self.inner.settings();
        let inner = self.inner.evaluate_in(value, context);
        if inner.error.is_some() {
            return inner;
        }
        let score = if inner.score.is_nan() {
            0.0
        } else {
            inner.score.clamp(0.0, 1.0)
        };
        let inner_passed = match (inner.verdict, settings.threshold) {
            (Some(own), None) => own,
            _ => passes(settings.severity, settings.threshold, score),
        };
        let signal = settings.severity == Severity::Soft && settings.threshold.is_none();
        let reason = if inner_passed {
            format!("the negated assertion holds: {}", inner.reason)
        } else {
            format!("the negated assertion does not hold: {}", inner.reason)
        };
        let grade = Grade::score(1.0 - score, reason).with_children(inner.children);
        if signal {
            grade
        } else {
            grade.with_verdict(!inner_passed)
        }
    }
}

/// An assertion set: every assertion checks the same value; the set's score is their weighted
/// mean (weight 0 records without counting), and it passes when every member passed — or, once
/// it has a threshold (`.at_least(x)`, or `.at_least(x).gate()` to keep it a gate), when the
/// score reaches it. The members are kept as the set's children in reports. Weight and metric
/// chain on the set like on any assertion. A member's execution error is the set's.
///
/// Members of different types are made one type by chaining (`.gate()`, `.weight(1.0)`, or
/// [`Configured::new`](crate::Configured::new)); members of one type
/// can be given as they are. A set with nothing to count (empty, or every member of weight 0)
/// scores 0 and passes when no member failed, as promptfoo's `assert-set`. A weight-0 member
/// still decides pass/fail here, as weight-0 gates do in an eval (assertions as data pass
/// weight-0 items instead, as promptfoo does).
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// // Matchers of different types become one type when chained (they are gates already).
/// let tone = all_of([icontains("thanks").gate(), not(icontains("sorry")).gate(), word_count(..=50).gate()]);
/// let r = AssertionResult::evaluate(&tone, &"Sorry, and thanks!".subject());
/// assert!(!r.passed);
/// assert!((r.score - 2.0 / 3.0).abs() < 1e-12);
/// assert_eq!(r.children.len(), 3);
/// let lenient = all_of([icontains("thanks").gate(), not(icontains("sorry")).gate()]).at_least(0.5).gate();
/// assert!(AssertionResult::evaluate(&lenient, &"Sorry, and thanks!".subject()).passed);
///
/// // Members of one type need no boxing.
/// let both = all_of([includes("order"), includes("shipped")]);
/// assert!(AssertionResult::evaluate(&both, &"order 123 shipped".subject()).passed);
/// ```
pub fn all_of<I>(assertions: I) -> AllOf
where
    I: IntoIterator,
    I::Item: IntoBoxed,
{
    AllOf {
        members: assertions.into_iter().map(IntoBoxed::boxed).collect(),
    }
}

/// The matcher returned by [`all_of`].
pub struct AllOf {
    members: Vec<BoxedAssertion>,
}

impl std::fmt::Debug for AllOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.members.iter().map(|m| m.describe()))
            .finish()
    }
}

impl Assertion for AllOf {
    fn describe(&self) -> String {
        let names: Vec<String> = self.members.iter().map(|m| m.describe()).collect();
        crate::base::excerpt::elide(&format!("all_of([{}])", names.join(", ")), 120)
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.evaluate_in(value, &CheckContext::default())
    }

    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        let results: Vec<AssertionResult> = self
            .members
            .iter()
            .map(|m| AssertionResult::evaluate_in(m.as_ref(), value, context))
            .collect();
        let failed = results.iter().filter(|r| !r.passed).count();
        let score = mean_score(&results).unwrap_or(0.0);
        if let Some(bad) = results.iter().find(|r| r.error.is_some()) {
            let message = format!(
                "member {} could not be evaluated: {}",
                bad.name,
                bad.error.as_deref().unwrap_or_default()
            );
            return Grade::error(message).with_children(results);
        }
        let reason = format!(
            "{} of {} passed, weighted score {score:.3}",
            results.len() - failed,
            results.len()
        );
        Grade::score(score, reason)
            .with_verdict(failed == 0)
            .with_children(results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::Chain;
    use crate::base::assertion::Checkable;
    use crate::checks::expect::{includes, regex, similarity};

    #[test]
    fn not_flips_binary_and_graded() {
        let r = AssertionResult::evaluate(&not(includes("a")), &"abc".subject());
        assert!(!r.passed);
        assert_eq!(r.score, 0.0);
        // similarity: soft, threshold 0.6; inner 0.5 fails, so not passes (as a soft, no threshold).
        let r = AssertionResult::evaluate(&not(similarity("abcd")), &"abxy".subject());
        assert!(r.passed);
        assert_eq!(r.severity, Severity::Soft);
        assert!((r.score - 0.5).abs() < 1e-12);
        let r = AssertionResult::evaluate(&not(similarity("abcd")), &"abcd".subject());
        assert!(!r.passed && r.is_below_threshold());
    }

    #[test]
    fn not_keeps_errors_and_double_negation() {
        let r = AssertionResult::evaluate(&not(regex("(")), &"x".subject());
        assert!(r.error.is_some() && !r.passed);
        let r = AssertionResult::evaluate(&not(not(includes("x"))), &"x".subject());
        assert!(r.passed && r.score == 1.0);
    }

    #[test]
    fn all_of_weights_and_empty() {
        let set = all_of([
            includes("a").weight(3.0).boxed(),
            includes("z").boxed(),
            includes("q").weight(0.0).boxed(),
        ]);
        let r = AssertionResult::evaluate(&set, &"abc".subject());
        assert!((r.score - 0.75).abs() < 1e-12);
        assert!(!r.passed);
        let empty =
            AssertionResult::evaluate(&all_of(Vec::<BoxedAssertion>::new()), &"abc".subject());
        assert!(empty.passed && empty.score == 0.0);
        let weightless = all_of([includes("a").weight(0.0).boxed()]);
        let r = AssertionResult::evaluate(&weightless, &"abc".subject());
        assert!(r.passed && r.score == 0.0, "nothing counts: score 0");
        let weightless_fail = all_of([includes("z").weight(0.0).boxed()]);
        assert!(!AssertionResult::evaluate(&weightless_fail, &"abc".subject()).passed);
        let err = AssertionResult::evaluate(&all_of([regex("(").boxed()]), &"x".subject());
        assert!(err.error.is_some() && err.children.len() == 1);
    }

    #[test]
    fn all_of_with_metric_and_weight() {
        let r = AssertionResult::evaluate(
            &all_of([includes("a").boxed()]).weight(2.0).metric("tone"),
            &"a".subject(),
        );
        assert_eq!((r.weight, r.metric.as_deref()), (2.0, Some("tone")));
    }
}
