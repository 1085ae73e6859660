//! What an assertion looks at: the [`Subject`] (text, JSON or nothing) and the [`Checkable`]
//! values that turn into one (strings, JSON, options, numbers, booleans).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

/// Why a value has not the form a check asked for (data, text, a number of some type): the
/// reason the check fails with.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// There is no value (`None`).
    #[error("there is no value (None)")]
    Missing,
    /// Text that is not JSON (shown quoted and elided).
    #[error("the text {shown} is not JSON ({source})")]
    NotJson {
        /// The text, quoted and elided.
        shown: String,
        /// The JSON parser's error.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// A value of another kind than `expected` (`text`, `u64`, `a bool`, ...).
    #[error("expected {expected}, got {found}")]
    Expected {
        /// What the check asked for.
        expected: &'static str,
        /// The value, shown short.
        found: String,
    },
    /// A number outside the range of `expected`.
    #[error("expected {expected}, got {found} (out of range)")]
    OutOfRange {
        /// The number type asked for.
        expected: &'static str,
        /// The value, shown short.
        found: String,
    },
}

/// The value an assertion looks at: text, JSON, or nothing (`None`).
#[derive(Debug, Clone, PartialEq)]
pub enum Subject<'a> {
    /// A string value.
    Text(Cow<'a, str>),
    /// A JSON value (numbers, objects, arrays, booleans, null; strings arrive as [`Subject::Text`]).
    Json(Cow<'a, Value>),
    /// An absent value (`None`).
    Missing,
}

impl Subject<'_> {
    /// The text form: strings as they are, other JSON as compact JSON, missing as `None`.
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Subject::Text(text) => Some(Cow::Borrowed(text)),
            Subject::Json(value) => Some(match value.as_ref() {
                Value::String(s) => Cow::Borrowed(s.as_str()),
                other => Cow::Owned(other.to_string()),
            }),
            Subject::Missing => None,
        }
    }

    /// The JSON form: text becomes a JSON string, missing becomes `None`.
    pub fn json(&self) -> Option<Cow<'_, Value>> {
        match self {
            Subject::Text(text) => Some(Cow::Owned(Value::String(text.to_string()))),
            Subject::Json(value) => Some(Cow::Borrowed(value.as_ref())),
            Subject::Missing => None,
        }
    }

    /// Structured data: JSON as it is; text parsed as JSON (the form `matches::<T>()` and
    /// `matches_schema` use on a reply). `Err` says why there is no data.
    pub fn parsed(&self) -> Result<Cow<'_, Value>, ViewError> {
        match self {
            Subject::Json(value) => Ok(Cow::Borrowed(value.as_ref())),
            Subject::Text(text) => {
                serde_json::from_str(text)
                    .map(Cow::Owned)
                    .map_err(|e| ViewError::NotJson {
                        shown: crate::base::excerpt::quote(text),
                        source: Arc::new(e),
                    })
            }
            Subject::Missing => Err(ViewError::Missing),
        }
    }

    /// A short, quoted, elided rendering for reasons.
    pub fn preview(&self) -> String {
        match self {
            Subject::Text(text) => crate::base::excerpt::quote(text),
            Subject::Json(value) => crate::base::excerpt::json(value),
            Subject::Missing => "None".to_string(),
        }
    }
}

/// A value that assertions can look at. Implemented for strings, JSON, options, numbers and
/// booleans, and for references to any of them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be checked directly",
    label = "not a string, JSON value, number, bool or option",
    note = "wrap a struct in `json!(..)` (or `serde_json::to_value(&value)?`) to check it as JSON, or check one of its fields"
)]
pub trait Checkable {
    /// This value as a [`Subject`].
    fn subject(&self) -> Subject<'_>;
}

impl<T: Checkable + ?Sized> Checkable for &T {
    fn subject(&self) -> Subject<'_> {
        (**self).subject()
    }
}

impl Checkable for str {
    fn subject(&self) -> Subject<'_> {
        Subject::Text(Cow::Borrowed(self))
    }
}

impl Checkable for String {
    fn subject(&self) -> Subject<'_> {
        Subject::Text(Cow::Borrowed(self))
    }
}

impl Checkable for crate::base::event::Text {
    fn subject(&self) -> Subject<'_> {
        Subject::Text(Cow::Borrowed(self.as_str()))
    }
}

impl Checkable for Cow<'_, str> {
    fn subject(&self) -> Subject<'_> {
        Subject::Text(Cow::Borrowed(self))
    }
}

impl Checkable for Value {
    fn subject(&self) -> Subject<'_> {
        match self {
            Value::String(s) => Subject::Text(Cow::Borrowed(s)),
            other => Subject::Json(Cow::Borrowed(other)),
        }
    }
}

impl<T: Checkable> Checkable for Option<T> {
    fn subject(&self) -> Subject<'_> {
        match self {
            Some(value) => value.subject(),
            None => Subject::Missing,
        }
    }
}

macro_rules! checkable_via_json {
    ($($ty:ty),*) => {$(
        impl Checkable for $ty {
            fn subject(&self) -> Subject<'_> {
                Subject::Json(Cow::Owned(Value::from(*self)))
            }
        }
    )*};
}

checkable_via_json!(
    bool, u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64
);
