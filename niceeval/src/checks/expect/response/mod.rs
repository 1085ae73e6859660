//! Assertions on what the provider returned besides its text, as promptfoo's handlers judge
//! it: why the model stopped (`finish_reason`), how sure it was of its tokens (`perplexity`),
//! whether a guardrail flagged the exchange (`guardrails`), whether its function and tool calls
//! fit the schemas the provider was configured with (`function_call`), and which tools it called
//! against the expected ones (`tool_call_f1`, reading calls out of prose with `json_blocks`).
//!
//! Each matcher is built for one evaluation from what the run produced and reaches promptfoo's
//! verdict itself, `not-` included (its score is promptfoo's too, which a plain flip of the
//! score would not give): the spec layer marks them as deciding their own verdict.

pub(crate) mod finish_reason;
#[cfg(feature = "json-schema")]
pub(crate) mod function_call;
pub(crate) mod guardrails;
mod json_blocks;
pub(crate) mod perplexity;
pub(crate) mod skill_used;
pub(crate) mod tool_call_f1;

use serde_json::Value;

use crate::base::assertion::{Grade, Subject};

/// The output as promptfoo's handlers receive it: data as it is; for a text subject, the
/// provider's non-text output (`raw`: its tool calls) when it has one, else the text.
pub(crate) fn provider_output(subject: &Subject<'_>, raw: Option<&Value>) -> Value {
    match (subject, raw) {
        (Subject::Json(value), _) => value.as_ref().clone(),
        (Subject::Text(_) | Subject::Missing, Some(raw)) => raw.clone(),
        (Subject::Text(text), None) => Value::String(text.to_string()),
        (Subject::Missing, None) => Value::Null,
    }
}

/// A grade with promptfoo's verdict: `pass` decides, `score` is recorded.
pub(crate) fn verdict(pass: bool, score: f64, reason: impl Into<String>) -> Grade {
    Grade::score(score, reason).with_verdict(pass)
}

/// `name(detail)`, or `not(name(detail))` for the `not-` form.
pub(crate) fn described(inverse: bool, name: &str, detail: &str) -> String {
    if inverse {
        format!("not({name}({detail}))")
    } else {
        format!("{name}({detail})")
    }
}

/// Whether JavaScript reads `value` as true (`null`, `false`, `0`, `NaN` and `""` are false).
pub(crate) fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// Why a response item does not read or does not hold (a call that fits no schema, a value of the wrong shape), in words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct CallProblem(String);

impl From<String> for CallProblem {
    fn from(message: String) -> Self {
        CallProblem(message)
    }
}

impl From<&str> for CallProblem {
    fn from(message: &str) -> Self {
        CallProblem(message.to_string())
    }
}

impl From<CallProblem> for String {
    fn from(problem: CallProblem) -> Self {
        problem.0
    }
}
