//! Structural matchers: deep equality ([`equals`]), typed deserialization ([`matches`]) and JSON
//! Schema validation ([`matches_schema`]).

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::assertion::{Assertion, Grade, Subject};
use crate::excerpt;

/// Deep equality with an expected value (anything `Serialize`). Gate by default.
///
/// Compared as JSON: objects by keys regardless of order, numbers by value (`1 == 1.0`). When
/// the expected value is structured and the checked value is text, the text is parsed as JSON
/// first, so a reply that *is* JSON can be compared with `json!(..)`. The reason names the first
/// differing path.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let data = Some(json!({ "intent": "ship", "id": 1 }));
/// let r = AssertionResult::evaluate(&equals(json!({ "intent": "refund", "id": 1 })), &data.subject());
/// assert!(!r.passed);
/// assert_eq!(r.reason, r#"at $.intent: expected "refund", got "ship""#);
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
            Err(e) => return Grade::error(format!("the expected value cannot be serialized: {e}")),
        };
        let actual = match (value, expected) {
            (Subject::Missing, Value::Null) => return Grade::pass("None equals null"),
            (Subject::Missing, _) => {
                return Grade::fail(format!("expected {}, got None", excerpt::json(expected)))
            }
            (Subject::Text(text), Value::String(_)) => Value::String(text.to_string()),
            (Subject::Text(text), _) => match serde_json::from_str::<Value>(text) {
                Ok(v) => v,
                Err(_) => {
                    return Grade::fail(format!(
                        "expected {}, got the text {}",
                        excerpt::json(expected),
                        value.preview()
                    ))
                }
            },
            (Subject::Json(v), _) => v.as_ref().clone(),
        };
        match json_difference(expected, &actual) {
            None => Grade::pass("values are equal"),
            Some(diff) => Grade::fail(diff),
        }
    }
}

/// The first difference between two JSON values, as `at PATH: expected X, got Y`, or `None`
/// when they are equal. Numbers compare by value, objects ignore key order.
///
/// ```
/// use niceeval::expect::json_difference;
/// use serde_json::json;
///
/// assert_eq!(json_difference(&json!([1, {"a": 2}]), &json!([1.0, {"a": 2}])), None);
/// assert_eq!(
///     json_difference(&json!({"a": [1, 2]}), &json!({"a": [1]})).unwrap(),
///     "at $.a: expected an array of 2 items, got 1"
/// );
/// ```
pub fn json_difference(expected: &Value, actual: &Value) -> Option<String> {
    let mut path = String::from("$");
    diff_at(expected, actual, &mut path)
}

fn diff_at(expected: &Value, actual: &Value, path: &mut String) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let len = path.len();
                push_key(path, key);
                let found = match a.get(key) {
                    None => Some(format!(
                        "at {path}: missing (expected {})",
                        excerpt::json(ev)
                    )),
                    Some(av) => diff_at(ev, av, path),
                };
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            a.keys().find(|k| !e.contains_key(*k)).map(|extra| {
                let len = path.len();
                push_key(path, extra);
                let msg = format!(
                    "at {path}: unexpected key (got {})",
                    excerpt::json(&a[extra])
                );
                path.truncate(len);
                msg
            })
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Some(format!(
                    "at {path}: expected an array of {} items, got {}",
                    e.len(),
                    a.len()
                ));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = diff_at(ev, av, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Value::Number(e), Value::Number(a)) if numbers_equal(e, a) => None,
        (e, a) if e == a => None,
        (e, a) => Some(format!(
            "at {path}: expected {}, got {}",
            excerpt::json(e),
            excerpt::json(a)
        )),
    }
}

fn push_key(path: &mut String, key: &str) {
    if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_') {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{}]", Value::String(key.to_string())));
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The value deserializes (serde) into `T`. Text is parsed as JSON first. Gate by default.
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
/// assert!(no.reason.contains("missing field `intent`"), "{}", no.reason);
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

pub(crate) fn short_type_name<T>() -> String {
    let full = std::any::type_name::<T>();
    // Keep generic arguments readable: strip module paths from every segment.
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
        let data = match value.parsed() {
            Ok(data) => data,
            Err(why) => return Grade::fail(why),
        };
        match T::deserialize(data.as_ref()) {
            Ok(_) => Grade::pass(format!("deserializes into {}", short_type_name::<T>())),
            Err(e) => Grade::fail(format!(
                "{} does not deserialize into {}: {e}",
                excerpt::json(&data),
                short_type_name::<T>()
            )),
        }
    }
}

/// The value validates against a JSON Schema (drafts 4 to 2020-12). Text is parsed as JSON
/// first. Gate by default. An invalid schema is an execution error on the assertion.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let schema = json!({ "type": "object", "required": ["id"], "properties": { "id": { "type": "string" } } });
/// let r = AssertionResult::evaluate(&matches_schema(schema), &json!({ "id": 7 }).subject());
/// assert!(!r.passed);
/// assert!(r.reason.contains("/id"), "{}", r.reason);
/// ```
pub fn matches_schema(schema: Value) -> MatchesSchema {
    let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string());
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
            Err(e) => return Grade::error(format!("invalid JSON Schema: {e}")),
        };
        let data = match value.parsed() {
            Ok(data) => data,
            Err(why) => return Grade::fail(why),
        };
        let problems: Vec<String> = validator
            .iter_errors(&data)
            .take(5)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_string() } else { at };
                format!("at {at}: {e}")
            })
            .collect();
        if problems.is_empty() {
            Grade::pass("valid against the schema")
        } else {
            Grade::fail(format!(
                "{} is not valid: {}",
                excerpt::json(&data),
                problems.join("; ")
            ))
        }
    }
}
