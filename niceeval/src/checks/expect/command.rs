//! Commands that ran: the [`command_succeeded`] matcher, and the [`Checkable`] forms of a
//! finished process ([`std::process::Output`], [`std::process::ExitStatus`]).

use std::borrow::Cow;
use std::process::{ExitStatus, Output};

use serde_json::{Map, Value, json};

use crate::base::assertion::{Assertion, Checkable, Grade, Subject};

/// A finished process is checked as a JSON object: `exit_code` (null when a signal ended it),
/// `signal` (Unix), `success`, and `stdout` / `stderr` as text (invalid UTF-8 replaced).
impl Checkable for Output {
    fn subject(&self) -> Subject<'_> {
        let mut object = status_object(&self.status);
        object.insert(
            "stdout".into(),
            Value::String(String::from_utf8_lossy(&self.stdout).into_owned()),
        );
        object.insert(
            "stderr".into(),
            Value::String(String::from_utf8_lossy(&self.stderr).into_owned()),
        );
        Subject::Json(Cow::Owned(Value::Object(object)))
    }
}

/// An exit status is checked as `{"exit_code", "signal", "success"}`, as for [`Output`].
impl Checkable for ExitStatus {
    fn subject(&self) -> Subject<'_> {
        Subject::Json(Cow::Owned(Value::Object(status_object(self))))
    }
}

fn status_object(status: &ExitStatus) -> Map<String, Value> {
    let mut object = Map::new();
    object.insert("exit_code".into(), json!(status.code()));
    object.insert("signal".into(), json!(signal(status)));
    object.insert("success".into(), json!(status.success()));
    object
}

#[cfg(unix)]
fn signal(status: &ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    status.signal()
}

#[cfg(not(unix))]
fn signal(_status: &ExitStatus) -> Option<i32> {
    None
}

/// The matcher returned by [`command_succeeded`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CommandSucceeded;

/// The command exited with code 0. Gate by default.
///
/// Checks a [`std::process::Output`] or [`std::process::ExitStatus`] (from `std::process` or
/// `tokio::process`), a bare exit code, or a JSON command result such as a shell tool's output:
/// an object with `exit_code` (also spelled `exitCode`, `code`, `returncode` or a numeric
/// `status`) or, lacking one, a boolean `success`; text is parsed as such JSON. A failure
/// reason gives the exit code or the signal, and the end of `stderr` (else of `stdout`), where
/// a build or test command says what went wrong. `None` fails; a value that is no command
/// result is an execution error.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let ok = std::process::Command::new("true").output().unwrap();
/// assert!(AssertionResult::evaluate(&command_succeeded(), &ok.subject()).passed);
///
/// let result = json!({"exit_code": 2, "stderr": "error[E0308]: mismatched types"});
/// let r = AssertionResult::evaluate(&command_succeeded(), &result.subject());
/// assert!(!r.passed);
/// assert_eq!(r.reason, r#"exited with code 2; stderr ends: "error[E0308]: mismatched types""#);
/// ```
pub fn command_succeeded() -> CommandSucceeded {
    CommandSucceeded
}

/// How much of the end of stderr / stdout a failure reason shows, in characters.
const TAIL_CHARS: usize = 400;

impl Assertion for CommandSucceeded {
    fn describe(&self) -> String {
        "command_succeeded()".to_string()
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let json: Cow<'_, Value> = match value {
            Subject::Missing => return Grade::fail("there is no command result (None)"),
            Subject::Json(v) => Cow::Borrowed(v.as_ref()),
            Subject::Text(text) => match serde_json::from_str::<Value>(text) {
                Ok(v @ (Value::Object(_) | Value::Number(_))) => Cow::Owned(v),
                _ => return Grade::error(not_a_result(&value.preview())),
            },
        };
        match finished(&json) {
            Err(why) => Grade::error(why.to_string()),
            Ok(Finished::Code(0)) => Grade::pass("exited with code 0"),
            Ok(Finished::Success(true)) => Grade::pass("succeeded"),
            Ok(how) => {
                let mut reason = match how {
                    Finished::Code(code) => format!("exited with code {code}"),
                    Finished::Signal(signal) => format!("was killed by signal {signal}"),
                    Finished::Success(_) => "did not succeed".to_string(),
                };
                if let Some((stream, tail)) = output_tail(&json) {
                    reason.push_str(&format!(
                        "; {stream} ends: {}",
                        crate::base::excerpt::quote(&tail)
                    ));
                }
                Grade::fail(reason)
            }
        }
    }
}

/// How a command finished, as far as the result says.
enum Finished {
    Code(i64),
    Signal(i64),
    Success(bool),
}

const CODE_KEYS: [&str; 5] = ["exit_code", "exitCode", "code", "returncode", "status"];

/// Why a value tells no command's end.
#[derive(Debug, thiserror::Error)]
enum NotFinished {
    #[error("{0} is not an exit code")]
    NotAnExitCode(serde_json::Number),
    #[error("the command result has no exit_code, signal or success field ({0})")]
    NoField(String),
    #[error("{}", not_a_result(.0))]
    NotAResult(String),
}

fn finished(value: &Value) -> Result<Finished, NotFinished> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .map(Finished::Code)
            .ok_or_else(|| NotFinished::NotAnExitCode(n.clone())),
        Value::Object(map) => {
            if let Some(code) = CODE_KEYS.iter().find_map(|k| map.get(*k)?.as_i64()) {
                return Ok(Finished::Code(code));
            }
            if let Some(signal) = map.get("signal").and_then(Value::as_i64) {
                return Ok(Finished::Signal(signal));
            }
            map.get("success")
                .and_then(Value::as_bool)
                .map(Finished::Success)
                .ok_or_else(|| NotFinished::NoField(crate::base::excerpt::json(value)))
        }
        other => Err(NotFinished::NotAResult(crate::base::excerpt::json(other))),
    }
}

fn not_a_result(shown: &str) -> String {
    format!(
        "expected a command result (std::process::Output, ExitStatus, an exit code, or JSON \
         with exit_code), got {shown}"
    )
}

/// The last [`TAIL_CHARS`] characters of stderr, else of stdout, trimmed; `None` when both are
/// empty or absent.
fn output_tail(value: &Value) -> Option<(&'static str, String)> {
    ["stderr", "stdout"].into_iter().find_map(|stream| {
        let text = value.get(stream)?.as_str()?.trim_end();
        if text.trim().is_empty() {
            return None;
        }
        let count = text.chars().count();
        let tail = if count > TAIL_CHARS {
            let start = text
                .char_indices()
                .nth(count - TAIL_CHARS)
                .map_or(0, |(i, _)| i);
            format!("…{}", &text[start..])
        } else {
            text.to_string()
        };
        Some((stream, tail))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;
    use crate::base::assertion::Severity;

    fn check(value: &dyn Checkable) -> AssertionResult {
        AssertionResult::evaluate(&command_succeeded(), &value.subject())
    }

    #[test]
    fn a_real_process_that_exits_zero_passes() {
        let out = std::process::Command::new("sh")
            .args(["-c", "echo fine"])
            .output()
            .expect("sh runs");
        let r = check(&out);
        assert!(r.passed, "{r:?}");
        assert_eq!(r.reason, "exited with code 0");
        assert_eq!(r.severity, Severity::Gate);
        assert!(check(&out.status).passed);
    }

    #[test]
    fn a_real_failure_shows_the_code_and_the_end_of_stderr() {
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                "echo building; echo 'error: no such file' >&2; exit 3",
            ])
            .output()
            .expect("sh runs");
        let r = check(&out);
        assert!(!r.passed);
        assert_eq!(r.error, None);
        assert_eq!(
            r.reason,
            r#"exited with code 3; stderr ends: "error: no such file""#
        );
        assert_eq!(check(&out.status).reason, "exited with code 3");
    }

    #[test]
    fn stdout_is_shown_when_stderr_is_empty() {
        let r = check(&json!({"exitCode": 1, "stdout": "1 test failed\n", "stderr": " \n"}));
        assert_eq!(
            r.reason,
            r#"exited with code 1; stdout ends: "1 test failed""#
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_killed_process_names_the_signal() {
        let out = std::process::Command::new("sh")
            .args(["-c", "kill -9 $$"])
            .output()
            .expect("sh runs");
        let r = check(&out);
        assert!(!r.passed);
        assert_eq!(r.reason, "was killed by signal 9");
    }

    #[test]
    fn only_the_end_of_a_long_stderr_is_shown() {
        let stderr = format!("{}THE END", "x".repeat(10_000));
        let r = check(&json!({"returncode": 101, "stderr": stderr}));
        assert!(
            r.reason
                .starts_with("exited with code 101; stderr ends: \"…x"),
            "{}",
            r.reason
        );
        assert!(r.reason.ends_with("THE END\""));
        assert!(r.reason.chars().count() < 500, "{}", r.reason);
    }

    #[test]
    fn other_forms_of_a_result() {
        assert!(check(&0).passed);
        assert!(!check(&1).passed);
        assert!(check(&json!({"success": true})).passed);
        assert_eq!(check(&json!({"success": false})).reason, "did not succeed");
        assert!(check(&r#"{"code": 0, "stdout": "ok"}"#).passed);
        assert!(!check(&json!({"status": 2})).passed);
        assert_eq!(
            check(&None::<&str>).reason,
            "there is no command result (None)"
        );
        assert!(!check(&None::<&str>).passed);
    }

    #[test]
    fn what_is_no_command_result_is_an_execution_error() {
        for value in [
            json!("all good"),
            json!({"stdout": "x"}),
            json!([0]),
            json!(1.5),
        ] {
            let r = check(&value);
            assert!(!r.passed);
            assert!(r.error.is_some(), "{value}: {r:?}");
        }
        let r = check(&"all good");
        assert!(
            r.error
                .as_deref()
                .is_some_and(|e| e.contains("expected a command result")),
            "{r:?}"
        );
    }
}
