//! Structural matchers: deep equality ([`equals`]), typed deserialization ([`matches`]) and JSON
//! Schema validation (`matches_schema`, in `schema.rs`, feature `json-schema`). All three see
//! `None` as JSON `null` (and say "None" in their reasons), and parse text as JSON when they need
//! structured data.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::json_diff;
use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;
#[cfg(feature = "json-schema")]
pub use schema::matches_schema;

/// Differences described in one reason; the rest are counted.
const SHOWN_DIFFERENCES: usize = 3;

/// Deep equality with an expected value (anything `Serialize`: `json!(..)`, strings, numbers,
/// your own structs). **Gate by default.**
///
/// Compared as JSON: objects by keys regardless of order, arrays item by item, numbers by value
/// (`1 == 1.0`, exactly). How the checked value is read:
///
/// - **Text** against an expected string: compared as it is (case-sensitive, no trimming, no
///   Unicode normalization).
/// - **Text** against any other expected value: parsed as JSON first, so a reply that *is*
///   JSON compares with `json!(..)`; text that is not JSON fails.
/// - **JSON** values compare directly.
/// - **`None`** equals only `null` (`equals(json!(null))`, `equals(())`, `equals(None::<T>)`).
///
/// The reason names each differing path (`at $.items[1].qty: expected 2, got 3`, up to three,
/// then a count); long strings are shown around their first differing character.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let data = Some(json!({ "intent": "ship", "id": 1 }));
/// let r = AssertionResult::evaluate(&equals(json!({ "intent": "refund", "id": 1.0 })), &data.subject());
/// assert!(!r.passed);
/// assert_eq!(r.reason, r#"at $.intent: expected "refund", got "ship""#);
///
/// // A JSON reply compares with a JSON value; a plain text with a string.
/// assert!(AssertionResult::evaluate(&equals(json!([1, 2])), &"[1, 2.0]".subject()).passed);
/// assert!(AssertionResult::evaluate(&equals("Hello"), &"Hello".subject()).passed);
/// ```
pub fn equals(expected: impl Serialize) -> Equals {
    Equals {
        expected: serde_json::to_value(expected).map_err(Arc::new),
    }
}

/// The matcher returned by [`equals`].
#[derive(Debug, Clone)]
pub struct Equals {
    /// The expected value as JSON, or why it has no JSON form (an execution error when
    /// evaluated).
    expected: Result<Value, Arc<serde_json::Error>>,
}

impl Assertion for Equals {
    fn describe(&self) -> String {
        match &self.expected {
            Ok(Value::String(s)) => format!("equals({})", excerpt::quote_width(s, 60)),
            Ok(v) => format!("equals({})", excerpt::elide(&v.to_string(), 60)),
            Err(_) => "equals(<unserializable>)".to_string(),
        }
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let expected = match &self.expected {
            Ok(v) => v,
            Err(e) => {
                return Grade::error(format!(
                    "the expected value cannot be represented as JSON ({e}); \
                     pass equals(..) a value whose map keys are strings"
                ));
            }
        };
        let actual: Cow<'_, Value> = match (value, expected) {
            (Subject::Missing, Value::Null) => return Grade::pass("None, as expected (null)"),
            (Subject::Missing, _) => {
                return Grade::fail(format!("expected {}, got None", excerpt::json(expected)));
            }
            (Subject::Text(text), Value::String(_)) => Cow::Owned(Value::String(text.to_string())),
            (Subject::Text(text), _) => match serde_json::from_str::<Value>(text) {
                Ok(v) => Cow::Owned(v),
                Err(e) => {
                    return Grade::fail(format!(
                        "expected {}, got the text {}, which is not JSON ({e})",
                        excerpt::json(expected),
                        value.preview()
                    ));
                }
            },
            (Subject::Json(v), _) => Cow::Borrowed(v.as_ref()),
        };
        let found = json_diff::differences(expected, &actual, SHOWN_DIFFERENCES);
        if found.total == 0 {
            return Grade::pass(format!("equal to {}", excerpt::json(expected)));
        }
        let mut reason = found.shown.join("; ");
        let more = found.total - found.shown.len();
        if more > 0 {
            reason.push_str(&format!(
                "; and {more} more difference{}",
                if more == 1 { "" } else { "s" }
            ));
        }
        Grade::fail(reason)
    }
}

/// The value deserializes (serde) into `T`. **Gate by default.**
///
/// - **Text** is parsed as JSON into `T`, and when that fails, tried as a plain string: so
///   `matches::<String>()`, or an enum of unit variants, accepts a plain reply.
/// - **JSON** values deserialize directly.
/// - **`None`** is tried as `null`: `matches::<Option<T>>()` accepts it, other types fail.
///
/// The reason quotes serde's error (`missing field `intent``, with line and column for text)
/// and the value, elided when long.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// #[derive(serde::Deserialize)]
/// #[allow(dead_code)]
/// struct Intent { intent: String }
///
/// let ok = AssertionResult::evaluate(&matches::<Intent>(), &r#"{"intent":"refund"}"#.subject());
/// assert!(ok.passed);
/// let no = AssertionResult::evaluate(&matches::<Intent>(), &json!({"kind": 1}).subject());
/// assert_eq!(no.reason, r#"{"kind":1} does not deserialize into Intent: missing field `intent`"#);
/// let text = AssertionResult::evaluate(&matches::<Intent>(), &"sure!".subject());
/// assert!(text.reason.starts_with(r#"the text "sure!" is not JSON"#), "{}", text.reason);
/// ```
pub fn matches<T: DeserializeOwned>() -> Matches<T> {
    Matches { _type: PhantomData }
}

/// The matcher returned by [`matches`].
pub struct Matches<T> {
    _type: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Matches<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Matches<{}>", short_type_name::<T>())
    }
}

impl<T> Clone for Matches<T> {
    fn clone(&self) -> Self {
        Matches { _type: PhantomData }
    }
}

/// `T`'s name without module paths, generic arguments included: `Vec<Intent>`.
pub(crate) fn short_type_name<T: ?Sized>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::new();
    let mut segment = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            segment.push(c);
        } else {
            out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
    out
}

impl<T: DeserializeOwned> Assertion for Matches<T> {
    fn describe(&self) -> String {
        format!("matches::<{}>()", short_type_name::<T>())
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let name = short_type_name::<T>();
        match value {
            Subject::Missing => match T::deserialize(&Value::Null) {
                Ok(_) => Grade::pass(format!("None deserializes into {name} (as null)")),
                Err(_) => Grade::fail(format!(
                    "there is no value (None) to deserialize into {name}"
                )),
            },
            Subject::Text(text) => {
                let as_json = serde_json::from_str::<T>(text);
                let Err(e) = as_json else {
                    return Grade::pass(format!("the text deserializes into {name}"));
                };
                if T::deserialize(&Value::String(text.to_string())).is_ok() {
                    return Grade::pass(format!("the text deserializes into {name} as a string"));
                }
                if e.is_syntax() || e.is_eof() {
                    Grade::fail(format!(
                        "the text {} is not JSON ({e}), and {name} does not take it as a string",
                        value.preview()
                    ))
                } else {
                    Grade::fail(format!(
                        "the text {} does not deserialize into {name}: {e}",
                        value.preview()
                    ))
                }
            }
            Subject::Json(data) => match T::deserialize(data.as_ref()) {
                Ok(_) => Grade::pass(format!("{} deserializes into {name}", excerpt::json(data))),
                Err(e) => Grade::fail(format!(
                    "{} does not deserialize into {name}: {e}",
                    excerpt::json(data)
                )),
            },
        }
    }
}

#[cfg(feature = "json-schema")]
mod schema;

#[cfg(test)]
mod tests;
