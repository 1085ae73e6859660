//! JSON Schema validation: [`matches_schema`] (feature `json-schema`).

use serde_json::Value;

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;

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
        .build(&schema);
    MatchesSchema { schema, validator }
}

/// The matcher returned by [`matches_schema`].
pub struct MatchesSchema {
    schema: Value,
    /// The compiled schema, or the validator's error (an execution error when evaluated).
    validator: Result<jsonschema::Validator, jsonschema::ValidationError<'static>>,
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
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_string() } else { at };
                let e = excerpt::elide(&format!("at {at}: {e}"), 300);
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
                if let Ok(data) = &parsed
                    && validator.is_valid(data)
                {
                    return Grade::pass(format!("{} matches the schema", excerpt::json(data)));
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
