//! The script-grader wire format (AgentV's), and helpers for writing a grader in Rust.
//!
//! A script grader is any program that reads one JSON object ([`GraderInput`], snake_case keys) on
//! stdin and answers on stdout, either with a JSON [`Output`] (`pass`, `score`, `reason`,
//! `checks`) or, for a plain pass/fail check, with its exit code alone:
//!
//! | exit code | stderr    | result                                           |
//! |-----------|-----------|--------------------------------------------------|
//! | 0         | any       | pass (score 1), or the JSON result it printed     |
//! | non-zero  | empty     | fail (score 0), stdout as the reason              |
//! | non-zero  | not empty | execution error, with stderr                      |
//!
//! niceeval runs graders with [`crate::checks::expect::script`] (Rust) and `type: script` +
//! `command:` (assertions as data), and named ones from `.niceeval/assertions/` with
//! [`crate::checks::expect::custom`].
//!
//! To write a grader in Rust, make a binary that calls [`run`]:
//!
//! ```no_run
//! use niceeval::grader::{self, Check, Output};
//!
//! fn main() {
//!     grader::run(|input| {
//!         let output = input.output.as_deref().unwrap_or_default();
//!         Output::from_checks(vec![
//!             Check::new("mentions 42", output.contains("42"), "looked for \"42\""),
//!             Check::new("is short", output.len() < 200, format!("{} bytes", output.len())),
//!         ])
//!     })
//! }
//! ```

use std::collections::BTreeMap;
use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Outputs longer than this many characters are not inlined in [`GraderInput::output`]: they are
/// written to a temporary file named by [`GraderInput::output_path`].
pub(crate) const MAX_INLINE_OUTPUT: usize = 50_000;

/// One message of a conversation, as graders see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraderMessage {
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    /// The content: a string, or structured content parts.
    #[serde(default)]
    pub content: Value,
}

impl GraderMessage {
    /// A message with text content.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        GraderMessage {
            role: role.into(),
            content: Value::String(content.into()),
        }
    }

    /// The text of the content: the string itself, or the `text` of each content part, joined.
    pub fn text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }
}

/// Lightweight execution metrics of the run being graded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Total tool invocations.
    #[serde(default)]
    pub event_count: u64,
    /// Calls per tool name.
    #[serde(default)]
    pub tool_calls: BTreeMap<String, u64>,
    /// Failed tool calls.
    #[serde(default)]
    pub error_count: u64,
    /// Model calls (assistant messages).
    #[serde(default)]
    pub llm_call_count: u64,
}

/// Token consumption of the run being graded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Input (prompt) tokens.
    #[serde(default)]
    pub input: u64,
    /// Output (completion) tokens.
    #[serde(default)]
    pub output: u64,
}

/// What a grader receives on stdin (snake_case JSON). Absent values are `null` or empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GraderInput {
    /// The input messages of the eval.
    #[serde(default)]
    pub input: Vec<GraderMessage>,
    /// Paths of input files referenced by the eval.
    #[serde(default)]
    pub input_files: Vec<String>,
    /// The final answer being graded; `null` when it was too long and written to
    /// [`GraderInput::output_path`] instead ([`read_input`] loads it back for you).
    #[serde(default)]
    pub output: Option<String>,
    /// A temporary file holding the final answer as a JSON string, for answers over
    /// 50,000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_path: Option<String>,
    /// Reference answer messages.
    #[serde(default)]
    pub expected_output: Vec<GraderMessage>,
    /// Transcript messages of the run.
    #[serde(default)]
    pub messages: Vec<GraderMessage>,
    /// Evaluation criteria of the test case.
    #[serde(default)]
    pub criteria: Option<String>,
    /// Execution metrics.
    #[serde(default)]
    pub trace_summary: Option<TraceSummary>,
    /// Token consumption.
    #[serde(default)]
    pub token_usage: Option<TokenUsage>,
    /// Cost in USD.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Total duration in milliseconds.
    #[serde(default)]
    pub duration_ms: Option<f64>,
    /// The agent's workspace directory, when there is one (also in the environment as
    /// `NICEEVAL_WORKSPACE_PATH` and `AGENTV_WORKSPACE_PATH`).
    #[serde(default)]
    pub workspace_path: Option<String>,
    /// The changes of the workspace against its baseline, as a unified diff (AgentV's
    /// `file_changes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_changes: Option<String>,
    /// The assertion's `config` from the spec, or set with `.config(..)`.
    #[serde(default)]
    pub config: Option<Value>,
    /// Test-case variables (promptfoo's `vars`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vars: BTreeMap<String, Value>,
    /// The test's metadata (AgentV's `metadata`), `null` when it has none.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// The run's trace as AgentV's code graders read it: [`GraderInput::trace_summary`]'s
    /// counts with the transcript `messages`; `null` without a trace summary.
    #[serde(default)]
    pub trace: Option<Value>,
}

impl GraderInput {
    /// The final answer, whether inline or in [`GraderInput::output_path`]; empty when there is none.
    pub fn output_text(&self) -> std::io::Result<String> {
        if let Some(text) = &self.output {
            return Ok(text.clone());
        }
        match &self.output_path {
            None => Ok(String::new()),
            Some(path) => {
                let raw = std::fs::read_to_string(path)?;
                serde_json::from_str::<String>(&raw).or(Ok(raw))
            }
        }
    }
}

/// One aspect a grader checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was checked.
    pub text: String,
    /// Whether it holds.
    pub pass: bool,
    /// A score in [0, 1], when the check is graded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Why.
    #[serde(default)]
    pub reason: String,
    /// Supporting evidence (a quote, a path, a count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl Check {
    /// A pass/fail check.
    pub fn new(text: impl Into<String>, pass: bool, reason: impl Into<String>) -> Self {
        Check {
            text: text.into(),
            pass,
            score: None,
            reason: reason.into(),
            evidence: None,
        }
    }
}

/// What a grader prints on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Output {
    /// The verdict.
    pub pass: bool,
    /// Score in [0, 1].
    pub score: f64,
    /// Why.
    #[serde(default)]
    pub reason: String,
    /// Per-aspect results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
}

impl Output {
    /// A pass with score 1.
    pub fn pass(reason: impl Into<String>) -> Self {
        Output {
            pass: true,
            score: 1.0,
            reason: reason.into(),
            checks: Vec::new(),
        }
    }

    /// A failure with score 0.
    pub fn fail(reason: impl Into<String>) -> Self {
        Output {
            pass: false,
            score: 0.0,
            reason: reason.into(),
            checks: Vec::new(),
        }
    }

    /// Aggregates checks: score is the fraction that passed, pass means all of them (and at
    /// least one) passed.
    ///
    /// ```
    /// use niceeval::grader::{Check, Output};
    ///
    /// let out = Output::from_checks(vec![Check::new("a", true, ""), Check::new("b", false, "")]);
    /// assert_eq!((out.pass, out.score, out.reason.as_str()), (false, 0.5, "1/2 checks passed"));
    /// ```
    pub fn from_checks(checks: Vec<Check>) -> Self {
        let passed = checks.iter().filter(|c| c.pass).count();
        let total = checks.len();
        Output {
            pass: total > 0 && passed == total,
            score: if total == 0 {
                0.0
            } else {
                passed as f64 / total as f64
            },
            reason: format!("{passed}/{total} checks passed"),
            checks,
        }
    }
}

/// Why a grader could not read its input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraderError {
    /// Reading stdin (or the output file) failed.
    #[error("cannot read the grader input: {0}")]
    Io(#[from] std::io::Error),
    /// Stdin was not the expected JSON object.
    #[error("the grader input is not a JSON object of the script-grader format: {0}")]
    Json(#[from] serde_json::Error),
}

/// Reads the grader input from stdin; a long output kept in `output_path` is loaded into
/// [`GraderInput::output`].
pub fn read_input() -> Result<GraderInput, GraderError> {
    let mut raw = String::new();
    std::io::stdin().read_to_string(&mut raw)?;
    parse_input(&raw)
}

/// Parses a grader input (as [`read_input`] does with stdin).
///
/// ```
/// let input = niceeval::grader::parse_input(r#"{"output": "The answer is 42.", "criteria": "42"}"#).unwrap();
/// assert_eq!(input.output.as_deref(), Some("The answer is 42."));
/// assert_eq!(input.criteria.as_deref(), Some("42"));
/// ```
pub fn parse_input(raw: &str) -> Result<GraderInput, GraderError> {
    let mut input: GraderInput = serde_json::from_str(raw)?;
    if input.output.is_none() && input.output_path.is_some() {
        input.output = Some(input.output_text()?);
    }
    Ok(input)
}

/// Runs a grader: reads [`GraderInput`] from stdin, calls `grade`, prints the [`Output`] as JSON and
/// exits 0. Input that cannot be read is reported on stderr with exit code 2 (an execution
/// error for niceeval); a panic in `grade` does the same through Rust's panic message and exit
/// code 101.
pub fn run(grade: impl FnOnce(&GraderInput) -> Output) -> ! {
    let input = match read_input() {
        Ok(input) => input,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let output = grade(&input);
    let mut stdout = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut stdout, &output)
        .map_err(std::io::Error::other)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    if let Err(e) = written {
        eprintln!("cannot write the grader result: {e}");
        std::process::exit(2);
    }
    std::process::exit(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_round_trips_snake_case() {
        let input = GraderInput {
            output: Some("x".into()),
            cost_usd: Some(0.1),
            trace_summary: Some(TraceSummary::default()),
            ..GraderInput::default()
        };
        let json = serde_json::to_value(&input).unwrap();
        assert!(
            json.get("trace_summary")
                .unwrap()
                .get("llm_call_count")
                .is_some()
        );
        assert!(json.get("expected_output").unwrap().is_array());
        assert_eq!(parse_input(&json.to_string()).unwrap(), input);
    }

    #[test]
    fn output_path_is_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, serde_json::to_string("long answer").unwrap()).unwrap();
        let raw = serde_json::json!({"output": null, "output_path": path}).to_string();
        assert_eq!(
            parse_input(&raw).unwrap().output.as_deref(),
            Some("long answer")
        );
    }

    #[test]
    fn message_text_of_parts() {
        let m: GraderMessage = serde_json::from_value(serde_json::json!({
            "role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
        }))
        .unwrap();
        assert_eq!(m.text(), "a\nb");
    }
}
