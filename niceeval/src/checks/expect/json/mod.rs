//! JSON shape matchers: [`is_json`] (the whole value is JSON) and [`contains_json`] (JSON
//! objects or arrays appear somewhere in text), each with an optional JSON Schema, plus
//! `find_json`, the extractor behind `contains_json`.

use std::sync::Arc;

use serde_json::Value;

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;

mod lenient;

/// A compiled JSON Schema shared by the JSON matchers.
#[derive(Clone)]
struct Schema {
    source: Value,
    validator: Result<Arc<Validator>, SchemaError>,
}

/// Why a JSON Schema cannot check values: it does not compile, or schemas need a feature that
/// is off.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SchemaError {
    /// The schema does not compile; the validator's error is kept.
    #[cfg(feature = "json-schema")]
    #[error("invalid JSON Schema: {0}")]
    Invalid(#[source] Arc<jsonschema::ValidationError<'static>>),
    /// Built without the `json-schema` feature.
    #[cfg(not(feature = "json-schema"))]
    #[error(
        "validating against a JSON Schema needs niceeval's `json-schema` feature; enable it in Cargo.toml (it is on by default)"
    )]
    NeedsFeature,
}

impl Schema {
    fn new(source: Value) -> Schema {
        let validator = build_validator(&source).map(Arc::new);
        Schema { source, validator }
    }

    /// The first few problems of `value` against the schema; empty when valid.
    #[cfg(feature = "json-schema")]
    fn problems(validator: &Validator, value: &Value) -> Vec<String> {
        validator
            .iter_errors(value)
            .take(5)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_string() } else { at };
                format!("at {at}: {e}")
            })
            .collect()
    }

    #[cfg(not(feature = "json-schema"))]
    fn problems(validator: &Validator, _value: &Value) -> Vec<String> {
        match *validator {}
    }
}

#[cfg(feature = "json-schema")]
use jsonschema::Validator;

/// Without the `json-schema` feature no schema compiles, so there is never a validator.
#[cfg(not(feature = "json-schema"))]
enum Validator {}

#[cfg(not(feature = "json-schema"))]
impl Validator {
    fn is_valid(&self, _value: &Value) -> bool {
        match *self {}
    }
}

/// Compiles a schema as promptfoo's Ajv does: draft-07 unless `$schema` names another draft,
/// and `format` asserted (`email`, `date-time`, `uri`, ...).
#[cfg(feature = "json-schema")]
fn build_validator(schema: &Value) -> Result<Validator, SchemaError> {
    let mut options = jsonschema::options().should_validate_formats(true);
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft7);
    }
    options
        .build(schema)
        .map_err(|e| SchemaError::Invalid(Arc::new(e)))
}

/// Without the `json-schema` feature a schema is an execution error on the assertion (never a
/// silent pass).
#[cfg(not(feature = "json-schema"))]
fn build_validator(_schema: &Value) -> Result<Validator, SchemaError> {
    Err(SchemaError::NeedsFeature)
}

/// Why a JSON Schema does not compile, if it does not (used to reject bad specs at load time).
#[cfg(feature = "json-schema")]
pub(crate) fn check_schema(schema: &Value) -> Result<(), SchemaError> {
    build_validator(schema).map(drop)
}

/// Validates `value` against `schema` compiled as the JSON matchers compile it: the first few
/// problems (empty when valid), or why the schema does not compile. The function-call
/// validators use it on call arguments.
#[cfg(feature = "json-schema")]
pub(crate) fn schema_problems(schema: &Value, value: &Value) -> Result<Vec<String>, SchemaError> {
    let validator = build_validator(schema)?;
    Ok(Schema::problems(&validator, value))
}

/// The matcher returned by [`is_json`].
#[derive(Clone)]
pub struct IsJson {
    schema: Option<Schema>,
}

impl std::fmt::Debug for IsJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IsJson")
            .field("schema", &self.schema.as_ref().map(|s| &s.source))
            .finish()
    }
}

/// The whole value is JSON, optionally valid against a JSON Schema. Gate by default; scores 1
/// or 0.
///
/// As in promptfoo (Ajv), a schema is read as draft-07 unless its `$schema` names another
/// draft (4 to 2020-12), and `format` is asserted: `{"type": "string", "format": "email"}`
/// fails on `"nope"`.
///
/// Text is parsed as one JSON document (surrounding whitespace allowed, nothing else: wrap-up
/// prose or a Markdown fence makes it fail — use [`contains_json`] for that). Any JSON value
/// counts, including `"a string"`, `42` and `null`. A value that already is JSON (a
/// `serde_json::Value` that is not a string) passes without parsing. `None` fails. An invalid
/// schema is an execution error here and a load-time error in assertions as data.
///
/// A schema needs the `json-schema` feature: without it, `is_json(schema)` is an execution
/// error saying so (never a pass), and `is_json(None)` works as above.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&is_json(None), &r#" {"a": 1} "#.subject()).passed);
/// assert!(!AssertionResult::evaluate(&is_json(None), &"{'a': 1}".subject()).passed);
/// # #[cfg(feature = "json-schema")] {
/// let schema = json!({"type": "object", "required": ["name"]});
/// let r = AssertionResult::evaluate(&is_json(schema), &r#"{"age": 3}"#.subject());
/// assert!(!r.passed);
/// assert!(r.reason.contains("\"name\" is a required property"), "{}", r.reason);
/// # }
/// ```
pub fn is_json(schema: impl Into<Option<Value>>) -> IsJson {
    IsJson {
        schema: schema.into().map(Schema::new),
    }
}

fn describe_schema(name: &str, schema: &Option<Schema>) -> String {
    match schema {
        None => format!("{name}()"),
        Some(s) => format!("{name}({})", excerpt::elide(&s.source.to_string(), 60)),
    }
}

impl Assertion for IsJson {
    fn describe(&self) -> String {
        describe_schema("is_json", &self.schema)
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let validator = match self.schema.as_ref().map(|s| &s.validator) {
            Some(Err(e)) => return Grade::error(e.to_string()),
            Some(Ok(v)) => Some(v),
            None => None,
        };
        let parsed = match value {
            Subject::Missing => return Grade::fail("there is no value (None)"),
            Subject::Json(v) => std::borrow::Cow::Borrowed(v.as_ref()),
            Subject::Text(text) => match serde_json::from_str::<Value>(text) {
                Ok(v) => std::borrow::Cow::Owned(v),
                Err(e) => {
                    return Grade::fail(format!("{} is not JSON: {e}", value.preview()));
                }
            },
        };
        let Some(validator) = validator else {
            return Grade::pass("the value is JSON");
        };
        let problems = Schema::problems(validator, &parsed);
        if problems.is_empty() {
            Grade::pass("the value is JSON, valid against the schema")
        } else {
            Grade::fail(format!(
                "{} does not match the schema: {}",
                excerpt::json(&parsed),
                problems.join("; ")
            ))
        }
    }
}

/// Every JSON object and array found in `text`, in order, outermost first.
///
/// The scan starts at each `{` or `[`, parses one JSON value there with a real JSON parser (so
/// brackets and quotes inside strings never confuse it), and on success continues after that
/// value: a found value's nested objects are not reported again. Where a `{` does not start
/// strict JSON, it is read leniently as promptfoo's `extractJsonObjects` does: from the `{` to
/// its matching `}` (braces in double-quoted strings do not count), or to the end of the text
/// with the missing `}` added, as YAML flow after `//` comments become `#` comments. So
/// `{key: value}`, `{"score": 1.0 // perfect}`, an unclosed `{"incomplete": "object"` and even
/// `{word}` (`{"word": null}`) are objects. Without the `yaml` feature the lenient reading is
/// JSON with `//` comments dropped: comments and a missing `}` are forgiven, YAML flow
/// (`{key: value}`, `{word}`) is not. The lenient reading looks at no more than 4 MB of one
/// text in all (and 100,000 bytes from any one `{`), so a text full of braces that never close
/// stays fast; past that, only strict JSON is found. Where neither reading works it moves on to the next
/// `{` or `[`, so an invalid outer block can still contain valid inner ones. Prose around the
/// values, Markdown fences and several values in one text are all fine. Nesting deeper than
/// 128 levels is not recognized (the parser's recursion limit).
#[cfg(test)]
pub(crate) fn find_json(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    scan_json(text, true, |v| {
        found.push(v);
        false
    });
    found
}

/// Calls `f` with each JSON object or array in `text`; stops when `f` returns true. Without
/// `lenient`, only strict JSON is found.
fn scan_json(text: &str, lenient: bool, mut f: impl FnMut(Value) -> bool) {
    let bytes = text.as_bytes();
    let mut budget = lenient::BUDGET;
    let mut i = 0;
    while let Some(offset) = memchr2(b'{', b'[', &bytes[i..]) {
        let start = i + offset;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        let found = match stream.next() {
            Some(Ok(value)) => Some((value, start + stream.byte_offset())),
            _ if lenient && bytes[start] == b'{' => lenient::object_at(text, start, &mut budget),
            _ => None,
        };
        match found {
            Some((value, end)) => {
                i = end;
                if f(value) {
                    return;
                }
            }
            None => i = start + 1,
        }
    }
}

fn memchr2(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&c| c == a || c == b)
}

/// The matcher returned by [`contains_json`].
#[derive(Clone)]
pub struct ContainsJson {
    schema: Option<Schema>,
}

impl std::fmt::Debug for ContainsJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContainsJson")
            .field("schema", &self.schema.as_ref().map(|s| &s.source))
            .finish()
    }
}

/// The text contains at least one JSON object or array (found anywhere in it), and with a schema, at
/// least one of the found values is valid against it. Gate by default; scores 1 or 0.
///
/// Only objects and arrays are looked for (a bare `42` or `"word"` in prose is not JSON here);
/// note that a bracketed citation like `[1]` is a JSON array, and that objects are also read
/// leniently, as promptfoo does (`{key: value}`, as the extractor does). A schema is read as in
/// [`is_json`] (draft-07 by default, formats asserted). With a schema, the reason of a
/// failure shows the first found value's problems. A value that already is JSON (not text)
/// passes when it is an object or array. `None` fails. A schema needs the `json-schema`
/// feature, as for [`is_json`]. Where promptfoo (which scans for objects
/// only) and Runsight (objects and arrays) differ, niceeval follows Runsight: arrays count.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let text = "Here you go:\n```json\n{\"name\": \"Ada\", \"score\": 9}\n```";
/// assert!(AssertionResult::evaluate(&contains_json(None), &text.subject()).passed);
/// # #[cfg(feature = "json-schema")] {
/// let schema = json!({"type": "object", "required": ["name", "score"]});
/// assert!(AssertionResult::evaluate(&contains_json(schema), &text.subject()).passed);
/// # }
/// assert!(!AssertionResult::evaluate(&contains_json(None), &"no json here".subject()).passed);
/// ```
pub fn contains_json(schema: impl Into<Option<Value>>) -> ContainsJson {
    ContainsJson {
        schema: schema.into().map(Schema::new),
    }
}

impl Assertion for ContainsJson {
    fn describe(&self) -> String {
        describe_schema("contains_json", &self.schema)
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let validator = match self.schema.as_ref().map(|s| &s.validator) {
            Some(Err(e)) => return Grade::error(e.to_string()),
            Some(Ok(v)) => Some(v),
            None => None,
        };
        let text = match value {
            Subject::Missing => return Grade::fail("there is no value (None)"),
            Subject::Json(v) if v.is_object() || v.is_array() => {
                let single = v.as_ref().clone();
                return self.judge(validator, 1, single_check(validator, &single));
            }
            other => other.text().unwrap_or_default().into_owned(),
        };
        // Strict JSON first: most texts carry real JSON, and the lenient reading (YAML) of every
        // other `{` costs far more. Only when no strict value will do is the text read again,
        // leniently, which also counts the values and keeps the first one's problems.
        let mut matched = false;
        scan_json(&text, false, |found| {
            matched = validator.is_none_or(|v| v.is_valid(&found));
            matched
        });
        if matched {
            return self.judge(validator, 1, Ok(()));
        }
        let mut count = 0;
        let mut first_problems: Option<(Value, Vec<String>)> = None;
        scan_json(&text, true, |found| {
            count += 1;
            match validator {
                None => {
                    matched = true;
                    true
                }
                // `is_valid` stops at the first problem; the problems are listed only for the
                // first value, the one a failure reason shows.
                Some(validator) if validator.is_valid(&found) => {
                    matched = true;
                    true
                }
                Some(validator) => {
                    if first_problems.is_none() {
                        let problems = Schema::problems(validator, &found);
                        first_problems = Some((found, problems));
                    }
                    false
                }
            }
        });
        let outcome = if matched { Ok(()) } else { Err(first_problems) };
        self.judge(validator, count, outcome)
    }
}

type Check = Result<(), Option<(Value, Vec<String>)>>;

fn single_check(validator: Option<&Arc<Validator>>, value: &Value) -> Check {
    match validator {
        None => Ok(()),
        Some(v) => {
            let problems = Schema::problems(v, value);
            if problems.is_empty() {
                Ok(())
            } else {
                Err(Some((value.clone(), problems)))
            }
        }
    }
}

impl ContainsJson {
    fn judge(&self, validator: Option<&Arc<Validator>>, count: usize, check: Check) -> Grade {
        match (check, validator) {
            (Ok(()), None) => Grade::pass("found a JSON object or array"),
            (Ok(()), Some(_)) => Grade::pass("found JSON valid against the schema"),
            (Err(_), _) if count == 0 => Grade::fail("found no JSON object or array in the text"),
            (Err(Some((value, problems))), _) => Grade::fail(format!(
                "found {count} JSON value(s), none valid against the schema; the first, {}: {}",
                excerpt::json(&value),
                problems.join("; ")
            )),
            (Err(None), _) => Grade::fail("found no JSON valid against the schema"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionResult, Checkable};
    use serde_json::json;

    #[test]
    fn find_json_edges() {
        assert_eq!(find_json(""), Vec::<Value>::new());
        assert_eq!(find_json("{}"), vec![json!({})]);
        assert_eq!(find_json("[]"), vec![json!([])]);
        assert_eq!(
            find_json("a {\"x\": [1, {\"y\": 2}]} b"),
            vec![json!({"x": [1, {"y": 2}]})]
        );
        assert_eq!(
            find_json("{\"a\":1}{\"b\":2}"),
            vec![json!({"a": 1}), json!({"b": 2})]
        );
        assert_eq!(
            find_json("{\"s\": \"[not an array]\"}"),
            vec![json!({"s": "[not an array]"})]
        );
        // An unclosed object is closed at the end of the text (promptfoo).
        assert_eq!(find_json("unclosed {\"a\": 1"), vec![json!({"a": 1})]);
        assert_eq!(
            find_json("{\"k\": \"日本語 🎉\"}"),
            vec![json!({"k": "日本語 🎉"})]
        );
        assert_eq!(
            find_json("He said \"{\" then {\"a\":1}"),
            vec![json!({"a": 1})]
        );
        // Too deep to read, except the last `{`, closed at the end as promptfoo does.
        assert_eq!(find_json(&"{".repeat(10_000)), vec![json!({})]);
    }

    #[test]
    fn is_json_accepts_any_json_value_only_whole() {
        let ok = |t: &str| AssertionResult::evaluate(&is_json(None), &t.subject()).passed;
        assert!(ok("\"a string\""));
        assert!(ok("42"));
        assert!(ok("null"));
        assert!(ok("[1,2]"));
        assert!(!ok(""));
        assert!(!ok("{\"a\":1} trailing"));
        assert!(!ok("```json\n{}\n```"));
        assert!(AssertionResult::evaluate(&is_json(None), &json!({"a": 1}).subject()).passed);
        assert!(!AssertionResult::evaluate(&is_json(None), &None::<Value>.subject()).passed);
    }

    #[cfg(feature = "json-schema")]
    #[test]
    fn any_found_value_may_satisfy_the_schema() {
        let schema = json!({"type": "object", "required": ["id"]});
        let text = "first {\"name\": 1} then {\"id\": 7}";
        assert!(AssertionResult::evaluate(&contains_json(schema.clone()), &text.subject()).passed);
        let r = AssertionResult::evaluate(&contains_json(schema), &"only {\"name\": 1}".subject());
        assert!(!r.passed);
        assert!(
            r.reason.contains("\"id\" is a required property"),
            "{}",
            r.reason
        );
    }

    #[cfg(feature = "json-schema")]
    #[test]
    fn invalid_schema_is_an_execution_error() {
        let bad = json!({"type": "no-such-type"});
        assert!(check_schema(&bad).is_err());
        let r = AssertionResult::evaluate(&contains_json(bad.clone()), &"{}".subject());
        assert!(r.error.is_some());
        let r = AssertionResult::evaluate(&is_json(bad), &"{}".subject());
        assert!(r.error.is_some());
    }

    #[cfg(not(feature = "json-schema"))]
    #[test]
    fn a_schema_without_the_feature_is_an_execution_error_naming_it() {
        for a in [
            &is_json(json!({"type": "object"})) as &dyn Assertion,
            &contains_json(json!({"type": "object"})),
        ] {
            let r = AssertionResult::evaluate(a, &"{}".subject());
            assert!(!r.passed);
            let error = r.error.expect("an execution error");
            assert!(
                error.contains("niceeval's `json-schema` feature"),
                "{error}"
            );
        }
        assert!(AssertionResult::evaluate(&is_json(None), &"{}".subject()).passed);
    }
}
