//! User-defined checks: [`satisfies`] (a predicate with a label) and [`make_assertion`] (a
//! scoring function with chosen severity and threshold), plus [`View`], the typed views of a
//! value their closures receive. A closure that panics becomes an execution error on its
//! assertion, never a crashed eval.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use crate::base::assertion::{Assertion, Grade, Settings, Severity, Subject, ViewError};

/// A typed view of a checked value, as a closure parameter of [`satisfies`] and
/// [`make_assertion`].
///
/// | view | text value | JSON value | `None` |
/// |---|---|---|---|
/// | `&str`, `&String` | the text | a JSON string's contents; other JSON has no text view | none |
/// | `&Value` | a JSON string | the value | none |
/// | numbers (`&u64`, `&i32`, `&f64`, ...) | the text parsed as a JSON number | a number in the type's range (`3.0` is an integer) | none |
/// | `&bool` | `true` / `false` | a boolean | none |
///
/// When the value has no such view (the wrong type, out of range, `None`), the assertion fails
/// with a reason saying what was expected and what there was.
pub trait View {
    /// What this view is called in reasons (`text`, `JSON value`, `u64`...).
    const NAME: &'static str;

    /// Calls `f` with this view of `value`, or says why the value has no such view.
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, ViewError>;
}

impl View for str {
    const NAME: &'static str = "text";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, ViewError> {
        match value {
            Subject::Text(text) => Ok(f(text)),
            Subject::Json(v) => match v.as_ref() {
                Value::String(s) => Ok(f(s)),
                _ => Err(ViewError::Expected {
                    expected: "text",
                    found: value.preview(),
                }),
            },
            Subject::Missing => Err(ViewError::Expected {
                expected: "text",
                found: "None".to_string(),
            }),
        }
    }
}

impl View for String {
    const NAME: &'static str = "text";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, ViewError> {
        str::view(value, |s| f(&s.to_string()))
    }
}

impl View for Value {
    const NAME: &'static str = "JSON value";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, ViewError> {
        match value.json() {
            Some(v) => Ok(f(&v)),
            None => Err(ViewError::Expected {
                expected: "a JSON value",
                found: "None".to_string(),
            }),
        }
    }
}

/// The value as a JSON scalar: JSON as it is, text parsed as JSON (surrounding whitespace
/// ignored); `None` for `None` and for text that is not JSON.
fn scalar<'a>(value: &'a Subject<'_>) -> Option<Cow<'a, Value>> {
    match value {
        Subject::Json(v) => Some(Cow::Borrowed(v.as_ref())),
        Subject::Text(text) => serde_json::from_str(text.trim()).ok().map(Cow::Owned),
        Subject::Missing => None,
    }
}

/// An integral JSON number, exactly (floats only when they have no fractional part).
fn integer(value: &Value) -> Option<i128> {
    let n = value.as_number()?;
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    n.as_f64()
        .filter(|f| f.fract() == 0.0 && f.abs() < 1e30)
        .map(|f| f as i128)
}

macro_rules! view_integer {
    ($($ty:ty),*) => {$(
        impl View for $ty {
            const NAME: &'static str = stringify!($ty);
            fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, ViewError> {
                let found = scalar(value);
                match found.as_deref().and_then(integer).map(<$ty>::try_from) {
                    Some(Ok(n)) => Ok(f(&n)),
                    Some(Err(_)) => Err(ViewError::OutOfRange {
                        expected: stringify!($ty),
                        found: value.preview(),
                    }),
                    None => Err(ViewError::Expected {
                        expected: stringify!($ty),
                        found: value.preview(),
                    }),
                }
            }
        }
    )*};
}

view_integer!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

macro_rules! view_float {
    ($($ty:ty),*) => {$(
        impl View for $ty {
            const NAME: &'static str = stringify!($ty);
            fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, ViewError> {
                match scalar(value).as_deref().and_then(Value::as_f64) {
                    #[allow(clippy::unnecessary_cast)]
                    Some(n) => Ok(f(&(n as $ty))),
                    None => Err(ViewError::Expected {
                        expected: stringify!($ty),
                        found: value.preview(),
                    }),
                }
            }
        }
    )*};
}

view_float!(f32, f64);

impl View for bool {
    const NAME: &'static str = "bool";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, ViewError> {
        match scalar(value).as_deref() {
            Some(Value::Bool(b)) => Ok(f(b)),
            _ => Err(ViewError::Expected {
                expected: "a bool",
                found: value.preview(),
            }),
        }
    }
}

/// Runs a user closure on a view of the value; a panic becomes an execution error.
fn run_user<T: View + ?Sized, R>(
    value: &Subject<'_>,
    what: &str,
    f: impl FnOnce(&T) -> R,
) -> Result<Result<R, ViewError>, Grade> {
    catch_unwind(AssertUnwindSafe(|| T::view(value, f))).map_err(|payload| {
        Grade::error(format!(
            "{what} panicked: {}; a check should return, not panic",
            crate::base::panic::message(payload.as_ref())
        ))
    })
}

/// A predicate with a label for reports: passes when the predicate returns `true`. **Gate by
/// default.**
///
/// Annotate the closure's parameter with the view you want (`&str`, `&Value`, `&u64`,
/// `&bool`, ...): a value that has no such view — the wrong type, a number out of range,
/// `None` — fails with a reason saying so, and the predicate is not called. A predicate that
/// panics is an execution error on the assertion.
///
/// The report names it `satisfies(LABEL)`; a failure shows the value.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let short = satisfies(|s: &str| s.split_whitespace().count() < 5, "reply under 5 words");
/// assert!(AssertionResult::evaluate(&short, &"hi there".subject()).passed);
/// let r = AssertionResult::evaluate(&short, &"one two three four five six".subject());
/// assert_eq!(r.name, "satisfies(reply under 5 words)");
/// assert_eq!(r.reason, r#"reply under 5 words: false for "one two three four five six""#);
///
/// let positive = satisfies(|d: &Value| d["total"].as_f64() > Some(0.0), "total is positive");
/// assert!(AssertionResult::evaluate(&positive, &json!({ "total": 12.5 }).subject()).passed);
///
/// let r = AssertionResult::evaluate(&satisfies(|n: &u32| *n < 10, "small"), &"ten".subject());
/// assert_eq!(r.reason, r#"expected u32, got "ten""#);
/// ```
pub fn satisfies<T, F>(predicate: F, label: impl Into<String>) -> Satisfies<T, F>
where
    T: View + ?Sized,
    F: Fn(&T) -> bool,
{
    Satisfies {
        predicate,
        label: label.into(),
        _view: PhantomData,
    }
}

/// The matcher returned by [`satisfies`].
pub struct Satisfies<T: ?Sized, F> {
    predicate: F,
    label: String,
    _view: PhantomData<fn(&T)>,
}

impl<T: ?Sized, F> std::fmt::Debug for Satisfies<T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Satisfies")
            .field("label", &self.label)
            .finish()
    }
}

impl<T: View + ?Sized, F: Fn(&T) -> bool> Assertion for Satisfies<T, F> {
    fn describe(&self) -> String {
        format!("satisfies({})", self.label)
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let what = format!("the predicate of satisfies({})", self.label);
        match run_user(value, &what, &self.predicate) {
            Err(panicked) => panicked,
            Ok(Ok(true)) => Grade::pass(format!("{}: true for {}", self.label, value.preview())),
            Ok(Ok(false)) => Grade::fail(format!("{}: false for {}", self.label, value.preview())),
            Ok(Err(why)) => Grade::fail(why.to_string()),
        }
    }
}

/// Starts a custom assertion named `name`; finish it with [`AssertionBuilder::score`] (a score
/// in [0, 1]) or [`AssertionBuilder::grade`] (a full [`Grade`]: score and reason).
///
/// **Gate without threshold by default** (passes when the score is above 0); set
/// [`severity`](AssertionBuilder::severity) and [`threshold`](AssertionBuilder::threshold), or
/// chain `.at_least(x)` / `.gate()` on the result like any matcher. The closure's parameter is a
/// typed view (`&str`, `&Value`, `&u64`, ...), as for [`satisfies`]: a value without that view fails (score 0). A score outside
/// [0, 1] or NaN, and a closure that panics, are execution errors on the assertion.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::{AssertionResult, Grade};
///
/// let json_valid = make_assertion("json_valid")
///     .score(|s: &str| if serde_json::from_str::<serde_json::Value>(s).is_ok() { 1.0 } else { 0.0 });
/// assert!(AssertionResult::evaluate(&json_valid, &"[1, 2]".subject()).passed);
///
/// let concise = make_assertion("concise")
///     .severity(Severity::Soft)
///     .threshold(0.5)
///     .score(|s: &str| 1.0 / (1.0 + s.len() as f64 / 100.0));
/// let r = AssertionResult::evaluate(&concise, &"x".repeat(300).subject());
/// assert!(!r.passed && r.severity == Severity::Soft);
/// assert_eq!(r.reason, "concise scored 0.250");
///
/// let polite = make_assertion("polite").grade(|s: &str| {
///     let ok = s.contains("please");
///     Grade::from_bool(ok, if ok { "says please" } else { "never says please" })
/// });
/// assert_eq!(AssertionResult::evaluate(&polite, &"do it".subject()).reason, "never says please");
/// ```
pub fn make_assertion(name: impl Into<String>) -> AssertionBuilder {
    AssertionBuilder {
        name: name.into(),
        settings: Settings::gate(),
    }
}

/// A custom assertion under construction; see [`make_assertion`].
#[derive(Debug, Clone)]
#[must_use = "finish the assertion with .score(..) or .grade(..)"]
pub struct AssertionBuilder {
    name: String,
    settings: Settings,
}

impl AssertionBuilder {
    /// Gate (default) or soft. A soft assertion without a threshold always passes: it records
    /// its score as a signal.
    pub fn severity(mut self, severity: Severity) -> Self {
        self.settings.severity = severity;
        self
    }

    /// Score needed to pass (`score >= threshold`).
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.settings.threshold = Some(threshold);
        self
    }

    /// Scores the value with `f`, which returns a number in [0, 1]. The reason is
    /// `NAME scored 0.750`.
    pub fn score<T, F>(self, f: F) -> Custom<T, impl Fn(&T) -> Grade>
    where
        T: View + ?Sized,
        F: Fn(&T) -> f64,
    {
        let name = self.name.clone();
        self.grade(move |v: &T| {
            let score = f(v);
            Grade::score(score, format!("{name} scored {score:.3}"))
        })
    }

    /// Grades the value with `f`, which returns a full [`Grade`] (score and reason).
    pub fn grade<T, F>(self, f: F) -> Custom<T, F>
    where
        T: View + ?Sized,
        F: Fn(&T) -> Grade,
    {
        Custom {
            name: self.name,
            settings: self.settings,
            f,
            _view: PhantomData,
        }
    }
}

/// An assertion built by [`make_assertion`].
pub struct Custom<T: ?Sized, F> {
    name: String,
    settings: Settings,
    f: F,
    _view: PhantomData<fn(&T)>,
}

impl<T: ?Sized, F> std::fmt::Debug for Custom<T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Custom").field("name", &self.name).finish()
    }
}

impl<T: View + ?Sized, F: Fn(&T) -> Grade> Assertion for Custom<T, F> {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let what = format!("the scoring function of {}", self.name);
        match run_user(value, &what, &self.f) {
            Err(panicked) => panicked,
            Ok(Ok(grade)) => grade,
            Ok(Err(why)) => Grade::fail(why.to_string()),
        }
    }

    fn settings(&self) -> Settings {
        self.settings.clone()
    }
}

#[cfg(test)]
mod tests;
