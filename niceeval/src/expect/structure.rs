//! Structural matchers: deep equality ([`equals`]), typed deserialization ([`matches`]) and JSON
//! Schema validation ([`matches_schema`]). All three see `None` as JSON `null` (and say "None"
//! in their reasons), and parse text as JSON when they need structured data.

use std::borrow::Cow;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::json_diff;
pub use super::json_diff::json_difference;
use crate::assertion::{Assertion, Grade, Subject};
use crate::excerpt;

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
        expected: serde_json::to_value(expected).map_err(|e| e.to_string()),
    }
}

/// The matcher returned by [`equals`].
#[derive(Debug, Clone)]
pub struct Equals {
    expected: Result<Value, String>,
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

/// Problems described in one reason.
const SHOWN_PROBLEMS: usize = 5;

/// The value validates against a JSON Schema (drafts 4, 6, 7, 2019-09 and 2020-12; the
/// `$schema` keyword picks one, 2020-12 otherwise). **Gate by default.**
///
/// - **Text** is parsed as JSON and validated; when that fails (or it is not JSON), the text is
///   validated as a plain string, so `{"type": "string", "maxLength": 280}` checks any reply.
/// - **JSON** values validate directly.
/// - **`None`** is validated as `null`: a schema that allows `null` accepts it.
///
/// `format` keywords (`email`, `date-time`, `uri`, ...) are asserted, not just annotations.
/// An invalid schema, or one with a `$ref` that cannot be resolved offline, is an execution
/// error on the assertion (the eval fails, marked as an error), never a silent pass. The reason
/// lists up to five problems, each at its path in the value.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let schema = json!({ "type": "object", "required": ["id"], "properties": { "id": { "type": "string" } } });
/// let r = AssertionResult::evaluate(&matches_schema(schema.clone()), &json!({ "id": 7 }).subject());
/// assert!(!r.passed);
/// assert_eq!(r.reason, r#"{"id":7} does not match the schema: at /id: 7 is not of type "string""#);
///
/// assert!(AssertionResult::evaluate(&matches_schema(schema), &r#"{"id": "A-1"}"#.subject()).passed);
///
/// let broken = AssertionResult::evaluate(&matches_schema(json!({ "type": "text" })), &"{}".subject());
/// assert!(broken.error.is_some());
/// ```
pub fn matches_schema(schema: Value) -> MatchesSchema {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .map_err(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            excerpt::elide(&format!("at {at}: {e}"), 300)
        });
    MatchesSchema { schema, validator }
}

/// The matcher returned by [`matches_schema`].
pub struct MatchesSchema {
    schema: Value,
    validator: Result<jsonschema::Validator, String>,
}

impl std::fmt::Debug for MatchesSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatchesSchema")
            .field("schema", &self.schema)
            .finish()
    }
}

impl MatchesSchema {
    /// The problems of `data`: up to [`SHOWN_PROBLEMS`] described, and whether there are more.
    fn problems(validator: &jsonschema::Validator, data: &Value) -> (Vec<String>, bool) {
        let mut errors = validator.iter_errors(data);
        let shown = errors
            .by_ref()
            .take(SHOWN_PROBLEMS)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_string() } else { at };
                // Messages quote the offending value: keep them short.
                format!("at {at}: {}", excerpt::elide(&e.to_string(), 120))
            })
            .collect();
        (shown, errors.next().is_some())
    }

    fn grade(validator: &jsonschema::Validator, data: &Value) -> Grade {
        let shown_as = excerpt::json(data);
        let (problems, more) = Self::problems(validator, data);
        if problems.is_empty() {
            return Grade::pass(format!("{shown_as} matches the schema"));
        }
        Grade::fail(format!(
            "{shown_as} does not match the schema: {}{}",
            problems.join("; "),
            if more { "; and more" } else { "" }
        ))
    }
}

impl Assertion for MatchesSchema {
    fn describe(&self) -> String {
        format!(
            "matches_schema({})",
            excerpt::elide(&self.schema.to_string(), 60)
        )
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let validator = match &self.validator {
            Ok(v) => v,
            Err(e) => {
                return Grade::error(format!(
                    "invalid JSON Schema ({e}); fix the schema given to matches_schema"
                ));
            }
        };
        match value {
            Subject::Missing => {
                if validator.is_valid(&Value::Null) {
                    Grade::pass("None matches the schema (as null)")
                } else {
                    Grade::fail("there is no value (None) to validate against the schema")
                }
            }
            Subject::Text(text) => {
                let parsed = serde_json::from_str::<Value>(text);
                if let Ok(data) = &parsed {
                    if validator.is_valid(data) {
                        return Grade::pass(format!("{} matches the schema", excerpt::json(data)));
                    }
                }
                if validator.is_valid(&Value::String(text.to_string())) {
                    return Grade::pass("the text matches the schema as a string");
                }
                match parsed {
                    Ok(data) => Self::grade(validator, &data),
                    Err(e) => Grade::fail(format!(
                        "the text {} is not JSON ({e}), and as a string it does not match the schema",
                        value.preview()
                    )),
                }
            }
            Subject::Json(data) => Self::grade(validator, data),
        }
    }
}

#[cfg(test)]
mod tests;
