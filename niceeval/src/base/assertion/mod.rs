//! What an assertion is: the [`Assertion`] trait every matcher implements, the value it looks at
//! ([`Subject`] via [`Checkable`]), what it returns ([`Grade`]), its severity and threshold
//! ([`Settings`], chained through [`Configured`]), the pass rule, and the recorded
//! [`AssertionResult`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

mod context;
mod subject;

pub use context::{CheckContext, WorkingCopy};
pub use subject::{Checkable, Subject, ViewError};
pub use transform::{Transform, json_path};
mod transform;

/// Whether a failed assertion fails the eval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A hard requirement: not passing fails the eval.
    Gate,
    /// A quality signal: below its threshold the eval still passes, with a mark (fails under
    /// strict).
    Soft,
}

impl Severity {
    /// `gate` or `soft`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Gate => "gate",
            Severity::Soft => "soft",
        }
    }
}

/// The pass rule for one assertion.
///
/// - gate without threshold: passes when `score > 0`;
/// - gate or soft with threshold: passes when `score >= threshold`;
/// - soft without threshold: always passes (it is a recorded signal).
pub fn passes(severity: Severity, threshold: Option<f64>, score: f64) -> bool {
    match (severity, threshold) {
        (_, Some(threshold)) => score >= threshold,
        (Severity::Gate, None) => score > 0.0,
        (Severity::Soft, None) => true,
    }
}

/// What kind of mechanism produced an assertion result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum AssertionKind {
    /// `t.check` / `t.require` on a value.
    Value,
    /// Evaluated over the event stream after the body.
    Scoped,
    /// A token, cost or call budget.
    Efficiency,
    /// Graded by a judge model.
    Judge,
    /// One test case of a test suite run in the working copy (`t.run_tests`).
    Test,
}

/// Severity, threshold, weight and metric of one assertion.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Gate or soft.
    pub severity: Severity,
    /// Score needed to pass, if any.
    pub threshold: Option<f64>,
    /// Weight in the eval's mean score (0 records without counting).
    pub weight: f64,
    /// Named metric this assertion contributes to.
    pub metric: Option<String>,
}

impl Settings {
    /// A gate without threshold (the default of matchers and scoped assertions).
    pub fn gate() -> Self {
        Settings {
            severity: Severity::Gate,
            threshold: None,
            weight: 1.0,
            metric: None,
        }
    }

    /// A soft assertion with an optional threshold.
    pub fn soft(threshold: Option<f64>) -> Self {
        Settings {
            severity: Severity::Soft,
            threshold,
            ..Settings::gate()
        }
    }

    /// Makes it soft with this threshold (what `.at_least(x)` does).
    pub fn at_least(&mut self, threshold: f64) {
        self.severity = Severity::Soft;
        self.threshold = Some(threshold);
    }

    /// Makes it a gate, keeping the threshold (what `.gate()` does).
    pub fn make_gate(&mut self) {
        self.severity = Severity::Gate;
    }
}

/// What an assertion says about one value: a score in [0, 1] and why.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grade {
    /// Score in [0, 1].
    pub score: f64,
    /// Why: shows the relevant part of the value.
    pub reason: String,
    /// The assertion could not be evaluated (an execution error, not a failed check).
    pub error: Option<String>,
    /// Results of nested assertions (assertion sets, grader checks).
    pub children: Vec<AssertionResult>,
    /// The assertion's own verdict, for assertions that decide pass/fail themselves rather than
    /// by score alone: `not(..)`, assertion sets, code assertions and script graders that report
    /// `pass`. It decides an assertion without threshold (gate or soft: a soft one that says
    /// "fail" is marked below threshold); a threshold (set by default or with `.at_least(x)`) is
    /// judged on the score alone. `None` (the default) leaves the verdict to the pass rule.
    pub verdict: Option<bool>,
    /// The score and reason carry a measurement that changes from run to run (tokens, dollars,
    /// milliseconds): budgets set it, and snapshots redact such numbers, keeping the verdict.
    pub measured: bool,
}

impl Grade {
    /// Marks the score and reason as a measurement; see [`Grade::measured`].
    pub fn measured(mut self) -> Self {
        self.measured = true;
        self
    }

    /// Score 1.
    pub fn pass(reason: impl Into<String>) -> Self {
        Grade::score(1.0, reason)
    }

    /// Score 0.
    pub fn fail(reason: impl Into<String>) -> Self {
        Grade::score(0.0, reason)
    }

    /// Score 1 when `ok`, else 0.
    pub fn from_bool(ok: bool, reason: impl Into<String>) -> Self {
        Grade::score(if ok { 1.0 } else { 0.0 }, reason)
    }

    /// Any score.
    pub fn score(score: f64, reason: impl Into<String>) -> Self {
        Grade {
            score,
            reason: reason.into(),
            ..Grade::default()
        }
    }

    /// The assertion could not be evaluated.
    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        Grade {
            score: 0.0,
            reason: message.clone(),
            error: Some(message),
            ..Grade::default()
        }
    }

    /// Sets the assertion's own verdict; see [`Grade::verdict`].
    ///
    /// ```
    /// use niceeval::{AssertionKind, AssertionResult, Grade, Settings};
    ///
    /// // A grader that says "fail" with a partial score fails a gate without threshold.
    /// let grade = Grade::score(0.8, "2 of 3 checks").with_verdict(false);
    /// let r = AssertionResult::from_grade("g".into(), AssertionKind::Value, &Settings::gate(), grade);
    /// assert!(!r.passed);
    /// ```
    pub fn with_verdict(mut self, verdict: bool) -> Self {
        self.verdict = Some(verdict);
        self
    }

    /// Adds nested results.
    pub fn with_children(mut self, children: Vec<AssertionResult>) -> Self {
        self.children = children;
        self
    }
}

/// A check on a value: the trait behind every matcher.
///
/// Implement `describe` and `evaluate`; override `settings` for a soft default. The chaining
/// methods (`at_least`, `gate`, `weight`, `metric`) come for free.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::{Grade, Subject};
///
/// struct Shouting;
///
/// impl Assertion for Shouting {
///     fn describe(&self) -> String {
///         "is all caps".into()
///     }
///     fn evaluate(&self, value: &Subject<'_>) -> Grade {
///         let text = value.text().unwrap_or_default();
///         Grade::from_bool(text.chars().all(|c| !c.is_lowercase()), format!("got {}", value.preview()))
///     }
/// }
///
/// let grade = Shouting.evaluate(&"HELLO".subject());
/// assert_eq!(grade.score, 1.0);
/// let soft = Shouting.at_least(0.5);
/// assert_eq!(soft.settings().threshold, Some(0.5));
/// ```
pub trait Assertion {
    /// A short name for reports, e.g. `includes("refund")`.
    fn describe(&self) -> String;

    /// Grades one value.
    fn evaluate(&self, value: &Subject<'_>) -> Grade;

    /// Grades one value knowing what its run knows (`t.check` gives the run's cost, agent time
    /// and working copy). The default ignores the context; an assertion that reads the run's
    /// facts overrides it, and one that wraps others passes it on.
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        let _ = context;
        self.evaluate(value)
    }

    /// Severity, threshold, weight and metric; a gate without threshold unless overridden.
    fn settings(&self) -> Settings {
        Settings::gate()
    }

    /// Checks a part of the value instead of the whole, e.g.
    /// `.transform(json_path("$.status"))`; see [`crate::checks::expect::json_path`].
    fn transform(self, transform: crate::base::assertion::Transform) -> Configured
    where
        Self: Sized + Send + Sync + 'static,
    {
        Configured::new(self).transform(transform)
    }
}

impl<A: Assertion + ?Sized> Assertion for Box<A> {
    fn describe(&self) -> String {
        (**self).describe()
    }
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        (**self).evaluate(value)
    }
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        (**self).evaluate_in(value, context)
    }
    fn settings(&self) -> Settings {
        (**self).settings()
    }
}

/// The chaining every kind of assertion shares — value assertions, scoped assertions, budgets
/// and judge calls: `.at_least(x)`, `.gate()`, `.weight(w)`, `.metric(name)`. Each kind
/// implements [`Chain::configure`] once; the four methods are written here only.
///
/// A value assertion is wrapped in a [`Configured`] by its first chained call; builders (the
/// `Scoped` builder of `t.called_tool(..)`, a judge call) return themselves.
///
/// ```
/// use niceeval::prelude::*;
///
/// let soft = includes("refund").at_least(0.5).weight(2.0).metric("accuracy");
/// let settings = soft.settings();
/// assert_eq!(settings.severity, Severity::Soft);
/// assert_eq!((settings.threshold, settings.weight), (Some(0.5), 2.0));
/// assert_eq!(settings.metric.as_deref(), Some("accuracy"));
/// assert_eq!(soft.gate().settings().severity, Severity::Gate);
/// ```
pub trait Chain: Sized {
    /// What chaining returns: the builder itself, or the value assertion wrapped in [`Configured`].
    type Chained;

    /// Applies one change to the assertion's [`Settings`].
    fn configure(self, change: impl FnOnce(&mut Settings)) -> Self::Chained;

    /// Makes the assertion soft, passing at `score >= threshold`.
    ///
    /// # Panics
    ///
    /// At the call site, when `threshold` is not a number in [0, 1] (scores are in [0, 1], so
    /// `1.5` could never pass and `-1.0` could never fail).
    #[track_caller]
    fn at_least(self, threshold: f64) -> Self::Chained {
        if !(0.0..=1.0).contains(&threshold) {
            panic!(
                ".at_least({threshold}): a threshold is a score between 0 and 1 (e.g. .at_least(0.8))"
            );
        }
        self.configure(|s| s.at_least(threshold))
    }

    /// Makes the assertion a gate, keeping any threshold.
    fn gate(self) -> Self::Chained {
        self.configure(Settings::make_gate)
    }

    /// Sets the assertion's weight in the eval's mean score (0 records without counting).
    ///
    /// # Panics
    ///
    /// At the call site, when `weight` is negative, infinite or NaN.
    #[track_caller]
    fn weight(self, weight: f64) -> Self::Chained {
        if !(weight.is_finite() && weight >= 0.0) {
            panic!(
                ".weight({weight}): a weight is a finite number, 0 or more (0 records the assertion without counting it)"
            );
        }
        self.configure(|s| s.weight = weight)
    }

    /// Counts the assertion towards a named metric.
    fn metric(self, name: impl Into<String>) -> Self::Chained {
        let name = name.into();
        self.configure(|s| s.metric = Some(name))
    }
}

impl<A: Assertion + Send + Sync + 'static> Chain for A {
    type Chained = Configured;

    fn configure(self, change: impl FnOnce(&mut Settings)) -> Configured {
        let mut configured = Configured::new(self);
        change(&mut configured.settings);
        configured
    }
}

/// A value assertion with its settings changed by chaining (`.at_least`, `.gate`, ...) or a
/// [`transform`](Configured::transform). Chaining a `Configured` changes it in place, so every chained
/// value assertion has this one type: `let mut a = includes("x").at_least(0.5); a = a.weight(2.0);`
/// compiles, and assertions of different matchers fit in one `Vec<Configured>`.
#[derive(Clone)]
#[must_use = "an assertion does nothing until passed to t.check or t.require"]
pub struct Configured {
    inner: Arc<dyn Assertion + Send + Sync>,
    settings: Settings,
    transform: Option<crate::base::assertion::Transform>,
}

impl std::fmt::Debug for Configured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Configured")
            .field("assertion", &self.inner.describe())
            .field("settings", &self.settings)
            .field("transform", &self.transform)
            .finish()
    }
}

impl Configured {
    /// Wraps an assertion with its own default settings; a `Configured` is returned as it is.
    pub fn new<A: Assertion + Send + Sync + 'static>(inner: A) -> Self {
        if let Some(configured) = (&inner as &dyn std::any::Any).downcast_ref::<Configured>() {
            return configured.clone();
        }
        let settings = inner.settings();
        Configured {
            inner: Arc::new(inner),
            settings,
            transform: None,
        }
    }

    /// Checks the part of the value the transform selects (a JSONPath query); a value that is not
    /// JSON, or has no match, fails this assertion with a reason.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// use niceeval::AssertionResult;
    ///
    /// let status = equals("completed").transform(json_path("$.status"));
    /// let r = AssertionResult::evaluate(&status, &r#"{"status":"completed"}"#.subject());
    /// assert!(r.passed);
    /// assert_eq!(r.name, r#"equals("completed") at $.status"#);
    /// ```
    pub fn transform(mut self, transform: crate::base::assertion::Transform) -> Self {
        self.transform = Some(transform);
        self
    }
}

impl Assertion for Configured {
    fn describe(&self) -> String {
        match &self.transform {
            Some(t) => format!("{} at {}", self.inner.describe(), t.expression()),
            None => self.inner.describe(),
        }
    }
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.evaluate_in(value, &CheckContext::default())
    }
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        match &self.transform {
            None => self.inner.evaluate_in(value, context),
            Some(t) => match t.apply(value) {
                Ok(selected) => self.inner.evaluate_in(&selected, context),
                Err(grade) => grade,
            },
        }
    }
    fn settings(&self) -> Settings {
        self.settings.clone()
    }
}

/// One recorded assertion: what was checked, how it scored, and whether it passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssertionResult {
    /// What was checked, e.g. `includes("refund")`.
    pub name: String,
    /// Which mechanism produced it.
    pub kind: AssertionKind,
    /// Gate or soft.
    pub severity: Severity,
    /// Score in [0, 1].
    pub score: f64,
    /// Score needed to pass, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Whether it passed under the pass rule.
    pub passed: bool,
    /// Why.
    pub reason: String,
    /// Weight in the eval's mean score.
    #[serde(default = "one")]
    pub weight: f64,
    /// Named metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Set when the assertion could not be evaluated (an execution error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Nested results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<AssertionResult>,
    /// Score and reason are a measurement (a budget's tokens, cost or time) that changes from
    /// run to run; snapshots show `[measured]` in their place.
    #[serde(default, skip_serializing_if = "is_false")]
    pub measured: bool,
    /// Tokens and cost the assertion itself spent: an LLM judge's call (its cost estimated from
    /// the price table; zero when served from the cache). Reported apart from the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::base::event::Usage>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn one() -> f64 {
    1.0
}

/// `text` [`crate::base::excerpt::cap`]ped in place.
fn cap_in_place(text: &mut String, max: usize) {
    if let std::borrow::Cow::Owned(kept) = crate::base::excerpt::cap(text, max) {
        *text = kept;
    }
}

impl AssertionResult {
    /// Masks the secrets `redactor` knows in the name, reason and error of this result and of
    /// its children.
    pub(crate) fn redact_texts(&mut self, redactor: &crate::base::redact::Redactor) {
        redactor.in_place(&mut self.name);
        redactor.in_place(&mut self.reason);
        if let Some(error) = &mut self.error {
            redactor.in_place(error);
        }
        for child in &mut self.children {
            child.redact_texts(redactor);
        }
    }

    /// Caps the name, reason and error of this result and of its children to about `max` bytes
    /// each, as reports store them (see [`crate::base::excerpt::cap`]).
    pub(crate) fn cap_texts(&mut self, max: usize) {
        cap_in_place(&mut self.name, max);
        cap_in_place(&mut self.reason, max);
        if let Some(error) = &mut self.error {
            cap_in_place(error, max);
        }
        for child in &mut self.children {
            child.cap_texts(max);
        }
    }

    /// Builds the result of grading under `settings`, applying the pass rule (and, without a
    /// threshold, the grade's own [`Grade::verdict`] when it has one). A score outside
    /// [0, 1] or NaN is an author bug and becomes an execution error.
    pub fn from_grade(
        name: String,
        kind: AssertionKind,
        settings: &Settings,
        grade: Grade,
    ) -> AssertionResult {
        let Grade {
            score,
            reason,
            mut error,
            children,
            verdict,
            measured,
        } = grade;
        if error.is_none() && !(0.0..=1.0).contains(&score) {
            error = Some(format!(
                "the assertion produced score {score}, outside [0, 1]; scores must be between 0 and 1"
            ));
        }
        let score = if score.is_nan() {
            0.0
        } else {
            score.clamp(0.0, 1.0)
        };
        let by_rule = passes(settings.severity, settings.threshold, score);
        let passed = error.is_none()
            && match (verdict, settings.threshold) {
                (Some(own), None) => own,
                _ => by_rule,
            };
        AssertionResult {
            name,
            kind,
            severity: settings.severity,
            score,
            threshold: settings.threshold,
            passed,
            reason: match &error {
                Some(message) if reason.is_empty() => message.clone(),
                _ => reason,
            },
            weight: settings.weight,
            metric: settings.metric.clone(),
            error,
            children,
            measured,
            usage: None,
        }
    }

    /// Evaluates a value assertion on a value. An assertion that panics is an execution error
    /// on this result (the panic's message is the error), never a panic of the caller.
    pub fn evaluate(assertion: &dyn Assertion, value: &Subject<'_>) -> AssertionResult {
        Self::evaluate_in(assertion, value, &CheckContext::default())
    }

    /// [`AssertionResult::evaluate`] knowing what the value's run knows.
    pub fn evaluate_in(
        assertion: &dyn Assertion,
        value: &Subject<'_>,
        context: &CheckContext,
    ) -> AssertionResult {
        let settings = assertion.settings();
        let grade = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assertion.evaluate_in(value, context)
        }))
        .unwrap_or_else(|panic| {
            Grade::error(format!(
                "the check panicked: {}",
                crate::base::panic::message(&*panic)
            ))
        });
        AssertionResult::from_grade(assertion.describe(), AssertionKind::Value, &settings, grade)
    }

    /// A soft assertion that scored below its threshold.
    pub fn is_below_threshold(&self) -> bool {
        self.error.is_none() && self.severity == Severity::Soft && !self.passed
    }

    /// A gate that did not pass (for any reason other than an execution error).
    pub fn is_failed_gate(&self) -> bool {
        self.error.is_none() && self.severity == Severity::Gate && !self.passed
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn chaining_rejects_impossible_thresholds_and_weights_at_the_call_site() {
        /// Any value assertion: chaining is the trait's, whatever the matcher.
        struct Any;
        impl super::Assertion for Any {
            fn describe(&self) -> String {
                "any".into()
            }
            fn evaluate(&self, _: &super::Subject<'_>) -> super::Grade {
                super::Grade::pass("")
            }
        }
        let includes = |_: &str| Any;
        for bad in [1.5, -1.0, f64::NAN, f64::INFINITY] {
            let panic = std::panic::catch_unwind(|| includes("x").at_least(bad))
                .expect_err("an impossible threshold panics");
            let message = crate::base::panic::message(&*panic);
            assert!(
                message.contains("a threshold is a score between 0 and 1"),
                "{message}"
            );
        }
        for bad in [-0.5, f64::NAN, f64::INFINITY] {
            let panic = std::panic::catch_unwind(|| includes("x").weight(bad))
                .expect_err("an impossible weight panics");
            let message = crate::base::panic::message(&*panic);
            assert!(
                message.contains("a weight is a finite number, 0 or more"),
                "{message}"
            );
        }
        assert_eq!(includes("x").at_least(0.0).settings().threshold, Some(0.0));
        assert_eq!(includes("x").at_least(1.0).settings().threshold, Some(1.0));
        assert_eq!(includes("x").weight(0.0).settings().weight, 0.0);
    }

    use super::*;

    struct Fixed(f64);
    impl Assertion for Fixed {
        fn describe(&self) -> String {
            "fixed".into()
        }
        fn evaluate(&self, _: &Subject<'_>) -> Grade {
            Grade::score(self.0, "")
        }
    }

    #[test]
    fn pass_rule_table() {
        use Severity::*;
        let table = [
            (Gate, None, 0.0, false),
            (Gate, None, 0.01, true),
            (Gate, None, 1.0, true),
            (Gate, Some(0.8), 0.79, false),
            (Gate, Some(0.8), 0.8, true),
            (Gate, Some(0.0), 0.0, true),
            (Soft, None, 0.0, true),
            (Soft, None, 1.0, true),
            (Soft, Some(0.6), 0.59, false),
            (Soft, Some(0.6), 0.6, true),
        ];
        for (severity, threshold, score, expected) in table {
            assert_eq!(
                passes(severity, threshold, score),
                expected,
                "{severity:?} {threshold:?} {score}"
            );
        }
    }

    #[test]
    fn chaining_last_call_sets_severity_and_gate_keeps_threshold() {
        let a = Fixed(0.5).at_least(0.7).gate();
        assert_eq!(a.settings().severity, Severity::Gate);
        assert_eq!(a.settings().threshold, Some(0.7));
        let b = Fixed(0.5).gate().at_least(0.3);
        assert_eq!(b.settings().severity, Severity::Soft);
        let c = Fixed(0.5).weight(2.0).metric("m");
        assert_eq!(c.settings().weight, 2.0);
        assert_eq!(c.settings().metric.as_deref(), Some("m"));
    }

    #[test]
    fn out_of_range_score_is_an_execution_error() {
        for bad in [1.5, -0.1, f64::NAN] {
            let r = AssertionResult::evaluate(&Fixed(bad), &Subject::Missing);
            assert!(r.error.is_some(), "{bad}");
            assert!(!r.passed);
            assert!(!r.is_failed_gate());
        }
    }

    #[test]
    fn panicking_assertion_is_an_execution_error() {
        struct Buggy;
        impl Assertion for Buggy {
            fn describe(&self) -> String {
                "buggy".into()
            }
            fn evaluate(&self, _: &Subject<'_>) -> Grade {
                panic!("index out of range")
            }
        }
        let r = AssertionResult::evaluate(&Buggy, &Subject::Missing);
        assert!(!r.passed);
        assert_eq!(
            r.error.as_deref(),
            Some("the check panicked: index out of range")
        );
        assert!(!r.is_failed_gate());
    }

    #[test]
    fn checkable_forms() {
        assert_eq!("a".subject(), Subject::Text("a".into()));
        assert_eq!(None::<serde_json::Value>.subject(), Subject::Missing);
        assert_eq!(
            Some(serde_json::json!("s")).subject(),
            Subject::Text("s".into())
        );
        assert_eq!(
            3u64.subject().text().as_deref(),
            Some("3"),
            "numbers render as JSON text"
        );
        assert!(Subject::Text("{\"a\":1}".into()).parsed().is_ok());
        assert!(
            Subject::Text("nope".into())
                .parsed()
                .unwrap_err()
                .to_string()
                .contains("is not JSON")
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::base::assertion::Severity::*;
        use crate::base::assertion::passes;

        assert!(passes(Gate, None, 0.1));
        assert!(!passes(Gate, None, 0.0));
        assert!(passes(Gate, Some(0.5), 0.5));
        assert!(!passes(Soft, Some(0.5), 0.49));
        assert!(passes(Soft, None, 0.0));
    }
}
