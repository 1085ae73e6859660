//! [`Transform`]: what `.transform(..)` does to a value before an assertion sees it — a JSONPath
//! query ([`json_path`], RFC 9535) that selects one part of a JSON value or JSON text.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use serde_json_path::JsonPath;

use crate::base::assertion::{Grade, Subject};
use crate::base::excerpt;

/// Selects a part of the checked value before an assertion sees it; chain it with
/// `.transform(..)` on any assertion. Built by [`json_path`].
#[derive(Clone)]
pub struct Transform {
    expression: String,
    /// The parsed query, or the parser's error (an execution error when applied).
    path: Result<JsonPath, Arc<serde_json_path::ParseError>>,
}

impl fmt::Debug for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Transform").field(&self.expression).finish()
    }
}

/// A JSONPath query (RFC 9535) as a transform: the assertion checks what it selects.
///
/// - The value is used as JSON when it is JSON, and parsed when it is text; text that is not
///   JSON fails the assertion with a reason (the other assertions still run).
/// - One match: a string is checked as text, any other value as its compact JSON text
///   (`200`, `true`, `{"a":1}`), so `equals("200")` and `equals(200)` both accept the number.
/// - Several matches: they are checked as one JSON array (its text).
/// - No match fails the assertion with a reason naming the query.
/// - An invalid query is an execution error on the assertion that uses it; in assertions as
///   data it is a load-time error.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let output = r#"{"status": "completed", "items": [{"id": 1}, {"id": 2}], "code": 200}"#;
/// let ok = equals("completed").transform(json_path("$.status"));
/// assert!(AssertionResult::evaluate(&ok, &output.subject()).passed);
/// let code = equals("200").transform(json_path("$.code"));
/// assert!(AssertionResult::evaluate(&code, &output.subject()).passed);
/// let ids = equals("[1,2]").transform(json_path("$.items[*].id"));
/// assert!(AssertionResult::evaluate(&ids, &output.subject()).passed);
///
/// let missing = AssertionResult::evaluate(&includes("x").transform(json_path("$.nope")), &output.subject());
/// assert!(!missing.passed);
/// assert!(missing.reason.contains("no match for $.nope"), "{}", missing.reason);
/// ```
pub fn json_path(expression: impl Into<String>) -> Transform {
    let expression = expression.into();
    let path = JsonPath::parse(&expression).map_err(Arc::new);
    Transform { expression, path }
}

impl Transform {
    /// The query as written, e.g. `$.status`.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// Why the query is invalid, if it is.
    pub fn invalid(&self) -> Option<String> {
        self.path.as_ref().err().map(ToString::to_string)
    }

    /// The parser's error, when the query is invalid.
    pub(crate) fn parse_error(&self) -> Option<&Arc<serde_json_path::ParseError>> {
        self.path.as_ref().err()
    }

    /// The selected part of `value`, or the failing grade that says why there is none.
    pub fn apply(&self, value: &Subject<'_>) -> Result<Subject<'static>, Grade> {
        let path = match &self.path {
            Ok(path) => path,
            Err(e) => {
                return Err(Grade::error(format!(
                    "invalid JSONPath {}: {e}",
                    excerpt::quote(&self.expression)
                )));
            }
        };
        let data: Cow<'_, Value> = match value {
            Subject::Json(v) => Cow::Borrowed(v.as_ref()),
            Subject::Text(text) => match serde_json::from_str(text) {
                Ok(v) => Cow::Owned(v),
                Err(e) => {
                    return Err(Grade::fail(format!(
                        "transform {}: the value {} is not JSON ({e})",
                        self.expression,
                        value.preview()
                    )));
                }
            },
            Subject::Missing => {
                return Err(Grade::fail(format!(
                    "transform {}: there is no value (None)",
                    self.expression
                )));
            }
        };
        let nodes = path.query(&data).all();
        let selected = match nodes.as_slice() {
            [] => {
                return Err(Grade::fail(format!(
                    "transform: no match for {} in {}",
                    self.expression,
                    excerpt::json(&data)
                )));
            }
            [one] => (*one).clone(),
            many => Value::Array(many.iter().map(|v| (*v).clone()).collect()),
        };
        // A selected string stays a JSON string: a text matcher reads it as its text, and a
        // structural one sees a string (not "text that is not JSON"). Other values become
        // their JSON text, which text matchers read and structural ones parse back.
        Ok(match selected {
            Value::String(_) => Subject::Json(Cow::Owned(selected)),
            other => Subject::Text(Cow::Owned(other.to_string())),
        })
    }
}
