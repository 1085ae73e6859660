//! User-defined checks: [`satisfies`] (a predicate with a label) and [`make_assertion`] (a
//! scoring function with chosen severity and threshold), plus [`View`], the typed views of a
//! value their closures receive.

use std::marker::PhantomData;

use serde_json::Value;

use crate::assertion::{Assertion, Grade, Settings, Severity, Subject};

/// A typed view of a checked value, as a closure parameter: `&str`, `&String`, `&Value`,
/// numbers and `bool`.
pub trait View {
    /// What this view is called in reasons (`text`, `JSON value`, `number`...).
    const NAME: &'static str;

    /// Calls `f` with this view of `value`, or says why the value has no such view.
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, String>;
}

impl View for str {
    const NAME: &'static str = "text";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, String> {
        match value {
            Subject::Text(text) => Ok(f(text)),
            Subject::Json(v) => match v.as_ref() {
                Value::String(s) => Ok(f(s)),
                other => Err(format!(
                    "expected text, got {}",
                    crate::excerpt::json(other)
                )),
            },
            Subject::Missing => Err("expected text, got None".to_string()),
        }
    }
}

impl View for String {
    const NAME: &'static str = "text";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, String> {
        str::view(value, |s| f(&s.to_string()))
    }
}

impl View for Value {
    const NAME: &'static str = "JSON value";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, String> {
        match value.json() {
            Some(v) => Ok(f(&v)),
            None => Err("expected a JSON value, got None".to_string()),
        }
    }
}

macro_rules! view_number {
    ($($ty:ty => $get:ident),*) => {$(
        impl View for $ty {
            const NAME: &'static str = stringify!($ty);
            fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, String> {
                let json = value.json();
                match json.as_deref().and_then(Value::$get) {
                    #[allow(clippy::unnecessary_cast)]
                    Some(n) if (n as $ty) as f64 == n as f64 => Ok(f(&(n as $ty))),
                    _ => Err(format!("expected {}, got {}", stringify!($ty), value.preview())),
                }
            }
        }
    )*};
}

view_number!(u64 => as_u64, u32 => as_u64, usize => as_u64, i64 => as_i64, i32 => as_i64, f64 => as_f64);

impl View for bool {
    const NAME: &'static str = "bool";
    fn view<R>(value: &Subject<'_>, f: impl FnOnce(&Self) -> R) -> Result<R, String> {
        match value.json().as_deref() {
            Some(Value::Bool(b)) => Ok(f(b)),
            _ => Err(format!("expected a bool, got {}", value.preview())),
        }
    }
}

/// A predicate with a label for reports. Gate by default.
///
/// Annotate the closure's parameter with the [`View`] you want (`&str`, `&Value`, `&u64`, ...);
/// a value that has no such view fails with a reason saying so.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let short = satisfies(|s: &str| s.split_whitespace().count() < 5, "reply under 5 words");
/// assert!(AssertionResult::evaluate(&short, &"hi there".subject()).passed);
/// let r = AssertionResult::evaluate(&short, &"one two three four five six".subject());
/// assert_eq!(r.name, "satisfies(reply under 5 words)");
/// assert!(!r.passed);
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
        match T::view(value, &self.predicate) {
            Ok(true) => Grade::pass(format!("{} holds", self.label)),
            Ok(false) => Grade::fail(format!(
                "{} does not hold for {}",
                self.label,
                value.preview()
            )),
            Err(why) => Grade::fail(why),
        }
    }
}

/// Starts a custom assertion named `name`; finish it with [`AssertionBuilder::score`] or
/// [`AssertionBuilder::grade`].
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
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
    /// Gate (default) or soft.
    pub fn severity(mut self, severity: Severity) -> Self {
        self.settings.severity = severity;
        self
    }

    /// Score needed to pass.
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.settings.threshold = Some(threshold);
        self
    }

    /// Scores the value with `f`, which returns a number in [0, 1].
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
        match T::view(value, &self.f) {
            Ok(grade) => grade,
            Err(why) => Grade::fail(why),
        }
    }

    fn settings(&self) -> Settings {
        self.settings.clone()
    }
}
