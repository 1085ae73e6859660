//! The tool-input matching language shared by `called_tool(..).input(m)` and
//! `not_called_tool(..).input(m)`: [`InputMatch`], its conversions, its evaluation and the
//! explanation of a mismatch.

use std::fmt;
use std::sync::Arc;

use regex::Regex;
use serde_json::{Map, Number, Value};

use crate::base::excerpt;

/// What a tool call's input must look like. Every form works at the top level and in place of
/// any field or element inside an object or array form, so forms nest freely.
///
/// | Form | Built from | Matches a value when |
/// |---|---|---|
/// | object | a JSON object, [`InputMatch::object`] | it is an object and every given key is present and matches (extra keys are fine) |
/// | array | a JSON array, [`InputMatch::array`] | it is an array of **the same length** whose elements match position by position |
/// | scalar | a JSON string, number, bool or null | it is equal (numbers by value: `1` matches `1.0`) |
/// | regex | a [`Regex`] | a string's text, or any other value's compact JSON, matches the regex somewhere |
/// | predicate | a closure `\|v: &Value\| -> bool`, [`InputMatch::predicate`] | the closure returns `true` |
///
/// A JSON value is a *deep-partial* match: objects at every depth may have keys the pattern does
/// not mention, while arrays must have exactly as many elements as the pattern (to accept longer
/// arrays, use a predicate). A key the pattern mentions must be present; `null` in a pattern
/// matches only a present `null`.
///
/// At the top level, a regex sees the whole input serialized as compact JSON, e.g.
/// `{"command":"npm i left-pad"}` (keys sorted, as `serde_json` keeps them); in place of a field
/// it sees that field's text. Inputs are only serialized when a regex meets a non-string value.
///
/// ```
/// use niceeval::{json, Regex, scope::InputMatch};
///
/// // deep partial: extra keys are fine
/// let m = InputMatch::from(json!({ "id": "123" }));
/// assert!(m.matches(&json!({ "id": "123", "verbose": true })));
///
/// // a regex over the serialized input
/// let m = InputMatch::from(Regex::new(r#""command":"npm i"#).unwrap());
/// assert!(m.matches(&json!({ "command": "npm i left-pad" })));
///
/// // a regex standing for one field's value, inside a partial match
/// let m = InputMatch::object([
///     ("command", InputMatch::from(Regex::new("^pwd").unwrap())),
///     ("cwd", json!("/tmp").into()),
/// ]);
/// assert!(m.matches(&json!({ "command": "pwd -P", "cwd": "/tmp" })));
/// assert_eq!(
///     m.explain(&json!({ "command": "ls", "cwd": "/tmp" })).unwrap(),
///     r#"at $.command: "ls" does not match /^pwd/"#
/// );
///
/// // a predicate
/// let m = InputMatch::from(|input: &serde_json::Value| input["n"].as_u64() > Some(2));
/// assert!(m.matches(&json!({ "n": 3 })));
/// ```
///
/// For specs written as data (JSON or TOML files), [`InputMatch::from_spec`] reads the same
/// language from plain JSON, with `{"$regex": "..."}` standing for a regex.
#[derive(Clone)]
pub enum InputMatch {
    /// An object whose given keys must all be present and match; other keys are ignored.
    Object(Vec<(String, InputMatch)>),
    /// An array of the same length whose elements match position by position.
    Array(Vec<InputMatch>),
    /// A string, number, boolean or null that must be equal (numbers compare by value).
    Scalar(Value),
    /// Matches a string's text, or another value's compact JSON, anywhere.
    Regex(Regex),
    /// A closure deciding on the value, with a label for reports.
    Predicate(Predicate),
}

/// A labelled closure over a JSON value: the predicate form of [`InputMatch`].
#[derive(Clone)]
pub struct Predicate {
    label: String,
    f: Arc<dyn Fn(&Value) -> bool + Send + Sync>,
}

impl Predicate {
    /// The label shown in reports.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Runs the closure.
    pub fn test(&self, value: &Value) -> bool {
        (self.f)(value)
    }
}

/// Why a data-form pattern ([`InputMatch::from_spec`]) is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputMatchError {
    /// A `{"$regex": ..}` whose pattern does not compile.
    #[error("at {path}: invalid regular expression {pattern:?}: {message}")]
    Regex {
        /// Where in the pattern, e.g. `$.command`.
        path: String,
        /// The pattern as written.
        pattern: String,
        /// What the regex compiler said.
        message: String,
    },
    /// A `$regex` key whose value is not a string, or that shares its object with other keys.
    #[error("at {path}: {message}")]
    Operator {
        /// Where in the pattern.
        path: String,
        /// What is wrong and how to write it.
        message: String,
    },
}

impl InputMatch {
    /// An object form from `(key, pattern)` pairs; each pattern is any form.
    ///
    /// ```
    /// use niceeval::{json, Regex, scope::InputMatch};
    ///
    /// let m = InputMatch::object([("path", InputMatch::from(Regex::new(r"\.rs$").unwrap()))]);
    /// assert!(m.matches(&json!({ "path": "src/lib.rs", "mode": "w" })));
    /// assert!(!m.matches(&json!({ "file": "src/lib.rs" })));
    /// ```
    pub fn object<K, M>(fields: impl IntoIterator<Item = (K, M)>) -> InputMatch
    where
        K: Into<String>,
        M: Into<InputMatch>,
    {
        InputMatch::Object(
            fields
                .into_iter()
                .map(|(k, m)| (k.into(), m.into()))
                .collect(),
        )
    }

    /// An array form: the same number of elements, each matching its pattern.
    pub fn array<M: Into<InputMatch>>(items: impl IntoIterator<Item = M>) -> InputMatch {
        InputMatch::Array(items.into_iter().map(Into::into).collect())
    }

    /// A predicate with a label for reports (a bare closure converts with the label
    /// `<predicate>`).
    ///
    /// ```
    /// use niceeval::{json, scope::InputMatch};
    ///
    /// let m = InputMatch::predicate("more than 2 files", |v| v["files"].as_array().is_some_and(|f| f.len() > 2));
    /// assert_eq!(m.to_string(), "<more than 2 files>");
    /// assert!(!m.matches(&json!({ "files": [] })));
    /// ```
    pub fn predicate(
        label: impl Into<String>,
        f: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> InputMatch {
        InputMatch::Predicate(Predicate {
            label: label.into(),
            f: Arc::new(f),
        })
    }

    /// Adds (or replaces) one key of an object form; any other form is first replaced by an
    /// empty object form.
    ///
    /// ```
    /// use niceeval::{json, Regex, scope::InputMatch};
    ///
    /// let m = InputMatch::from(json!({ "cwd": "/tmp" })).with("command", Regex::new("^pwd").unwrap());
    /// assert_eq!(m.to_string(), r#"{"cwd":"/tmp","command":/^pwd/}"#);
    /// ```
    pub fn with(self, key: impl Into<String>, pattern: impl Into<InputMatch>) -> InputMatch {
        let key = key.into();
        let pattern = pattern.into();
        let mut fields = match self {
            InputMatch::Object(fields) => fields,
            _ => Vec::new(),
        };
        match fields.iter_mut().find(|(k, _)| *k == key) {
            Some((_, existing)) => *existing = pattern,
            None => fields.push((key, pattern)),
        }
        InputMatch::Object(fields)
    }

    /// Reads the language from plain JSON, for patterns stored as data: values mean what they
    /// mean in [`From<Value>`](#impl-From<Value>-for-InputMatch), except that an object whose
    /// only key is `"$regex"` with a string value is a regex (e.g.
    /// `{"command": {"$regex": "^pwd"}}`). Predicates have no data form.
    ///
    /// ```
    /// use niceeval::{json, scope::InputMatch};
    ///
    /// let m = InputMatch::from_spec(&json!({ "command": { "$regex": "^npm (i|install)" } })).unwrap();
    /// assert!(m.matches(&json!({ "command": "npm install left-pad" })));
    /// let err = InputMatch::from_spec(&json!({ "command": { "$regex": "(" } })).unwrap_err();
    /// assert!(err.to_string().starts_with("at $.command: invalid regular expression"), "{err}");
    /// ```
    pub fn from_spec(spec: &Value) -> Result<InputMatch, InputMatchError> {
        let mut path = String::from("$");
        spec_at(spec, &mut path)
    }

    /// Whether `value` matches. Never allocates unless a regex meets a non-string value.
    pub fn matches(&self, value: &Value) -> bool {
        self.matches_with(value, &mut Vec::new())
    }

    /// [`InputMatch::matches`] serializing into `buffer` (cleared first) when a regex meets a
    /// non-string value, so matching many inputs allocates once.
    pub(crate) fn matches_with(&self, value: &Value, buffer: &mut Vec<u8>) -> bool {
        match self {
            InputMatch::Object(fields) => match value {
                Value::Object(map) => fields
                    .iter()
                    .all(|(k, m)| map.get(k).is_some_and(|v| m.matches_with(v, buffer))),
                _ => false,
            },
            InputMatch::Array(items) => match value {
                Value::Array(values) => {
                    items.len() == values.len()
                        && items
                            .iter()
                            .zip(values)
                            .all(|(m, v)| m.matches_with(v, buffer))
                }
                _ => false,
            },
            InputMatch::Scalar(expected) => scalar_eq(expected, value),
            InputMatch::Regex(re) => match value {
                Value::String(s) => re.is_match(s),
                other => {
                    buffer.clear();
                    // Serializing a Value into memory cannot fail, and yields UTF-8.
                    serde_json::to_writer(&mut *buffer, other).is_ok()
                        && std::str::from_utf8(buffer).is_ok_and(|json| re.is_match(json))
                }
            },
            InputMatch::Predicate(p) => p.test(value),
        }
    }

    /// Why `value` does not match (the first difference, with its path), or `None` when it
    /// matches.
    ///
    /// ```
    /// use niceeval::{json, scope::InputMatch};
    ///
    /// let m = InputMatch::from(json!({ "ids": [1, 2] }));
    /// assert_eq!(m.explain(&json!({ "ids": [1] })).unwrap(), "at $.ids: expected an array of 2 items, got 1");
    /// assert_eq!(m.explain(&json!({})).unwrap(), "at $.ids: missing");
    /// ```
    pub fn explain(&self, value: &Value) -> Option<String> {
        let mut path = String::from("$");
        self.explain_at(value, &mut path)
    }

    fn explain_at(&self, value: &Value, path: &mut String) -> Option<String> {
        match self {
            InputMatch::Object(fields) => {
                let Value::Object(map) = value else {
                    return Some(format!(
                        "at {path}: expected an object, got {}",
                        excerpt::json(value)
                    ));
                };
                fields.iter().find_map(|(key, m)| {
                    let len = path.len();
                    push_key(path, key);
                    let found = match map.get(key) {
                        None => Some(format!("at {path}: missing")),
                        Some(v) => m.explain_at(v, path),
                    };
                    path.truncate(len);
                    found
                })
            }
            InputMatch::Array(items) => {
                let Value::Array(values) = value else {
                    return Some(format!(
                        "at {path}: expected an array, got {}",
                        excerpt::json(value)
                    ));
                };
                if items.len() != values.len() {
                    return Some(format!(
                        "at {path}: expected an array of {} items, got {}",
                        items.len(),
                        values.len()
                    ));
                }
                items
                    .iter()
                    .zip(values)
                    .enumerate()
                    .find_map(|(i, (m, v))| {
                        let len = path.len();
                        path.push_str(&format!("[{i}]"));
                        let found = m.explain_at(v, path);
                        path.truncate(len);
                        found
                    })
            }
            InputMatch::Scalar(expected) => (!scalar_eq(expected, value)).then(|| {
                format!(
                    "at {path}: expected {}, got {}",
                    excerpt::json(expected),
                    excerpt::json(value)
                )
            }),
            InputMatch::Regex(re) => (!self.matches(value)).then(|| {
                let shown = match value {
                    Value::String(s) => excerpt::quote_width(s, 80),
                    other => excerpt::elide(&other.to_string(), 80),
                };
                format!("at {path}: {shown} does not match /{}/", re.as_str())
            }),
            InputMatch::Predicate(p) => (!p.test(value)).then(|| {
                format!(
                    "at {path}: {} does not satisfy <{}>",
                    excerpt::elide(&value.to_string(), 80),
                    p.label
                )
            }),
        }
    }
}

fn spec_at(spec: &Value, path: &mut String) -> Result<InputMatch, InputMatchError> {
    match spec {
        Value::Object(map) if map.contains_key("$regex") => {
            if map.len() != 1 {
                return Err(InputMatchError::Operator {
                    path: path.clone(),
                    message: "`$regex` must be the only key of its object: write {\"field\": {\"$regex\": \"...\"}} for one field".to_string(),
                });
            }
            let Some(pattern) = map["$regex"].as_str() else {
                return Err(InputMatchError::Operator {
                    path: path.clone(),
                    message: format!(
                        "`$regex` takes a string pattern, got {}",
                        excerpt::json(&map["$regex"])
                    ),
                });
            };
            Regex::new(pattern)
                .map(InputMatch::Regex)
                .map_err(|e| InputMatchError::Regex {
                    path: path.clone(),
                    pattern: pattern.to_string(),
                    message: e.to_string(),
                })
        }
        Value::Object(map) => {
            let mut fields = Vec::with_capacity(map.len());
            for (key, value) in map {
                let len = path.len();
                push_key(path, key);
                let m = spec_at(value, path);
                path.truncate(len);
                fields.push((key.clone(), m?));
            }
            Ok(InputMatch::Object(fields))
        }
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let m = spec_at(item, path);
                path.truncate(len);
                out.push(m?);
            }
            Ok(InputMatch::Array(out))
        }
        scalar => Ok(InputMatch::Scalar(scalar.clone())),
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

fn scalar_eq(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Number(a), Value::Number(b)) => numbers_equal(a, b),
        (a, b) => a == b,
    }
}

fn numbers_equal(a: &Number, b: &Number) -> bool {
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

impl From<Value> for InputMatch {
    /// A deep-partial match: objects and arrays become the object and array forms, recursively;
    /// anything else must be equal. Strings are literal here, even `{"$regex": ..}` (see
    /// [`InputMatch::from_spec`]).
    fn from(value: Value) -> Self {
        match value {
            Value::Object(map) => InputMatch::Object(
                map.into_iter()
                    .map(|(k, v)| (k, InputMatch::from(v)))
                    .collect(),
            ),
            Value::Array(items) => {
                InputMatch::Array(items.into_iter().map(InputMatch::from).collect())
            }
            scalar => InputMatch::Scalar(scalar),
        }
    }
}

impl From<&Value> for InputMatch {
    fn from(value: &Value) -> Self {
        InputMatch::from(value.clone())
    }
}

impl From<Map<String, Value>> for InputMatch {
    fn from(map: Map<String, Value>) -> Self {
        InputMatch::from(Value::Object(map))
    }
}

impl From<&str> for InputMatch {
    /// An exact string.
    fn from(s: &str) -> Self {
        InputMatch::Scalar(Value::String(s.to_string()))
    }
}

impl From<String> for InputMatch {
    /// An exact string.
    fn from(s: String) -> Self {
        InputMatch::Scalar(Value::String(s))
    }
}

impl From<Regex> for InputMatch {
    fn from(re: Regex) -> Self {
        InputMatch::Regex(re)
    }
}

impl From<&Regex> for InputMatch {
    fn from(re: &Regex) -> Self {
        InputMatch::Regex(re.clone())
    }
}

impl<F> From<F> for InputMatch
where
    F: Fn(&Value) -> bool + Send + Sync + 'static,
{
    /// A predicate labelled `<predicate>`; use [`InputMatch::predicate`] for a better label.
    fn from(f: F) -> Self {
        InputMatch::predicate("predicate", f)
    }
}

impl fmt::Display for InputMatch {
    /// JSON-like: `{"command":/^pwd/,"n":1,"ok":<label>}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputMatch::Object(fields) => {
                f.write_str("{")?;
                for (i, (key, m)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}:{m}", Value::String(key.clone()))?;
                }
                f.write_str("}")
            }
            InputMatch::Array(items) => {
                f.write_str("[")?;
                for (i, m) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{m}")?;
                }
                f.write_str("]")
            }
            InputMatch::Scalar(v) => write!(f, "{v}"),
            InputMatch::Regex(re) => write!(f, "/{}/", re.as_str()),
            InputMatch::Predicate(p) => write!(f, "<{}>", p.label),
        }
    }
}

impl fmt::Debug for InputMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InputMatch({self})")
    }
}

impl fmt::Debug for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Predicate(<{}>)", self.label)
    }
}
