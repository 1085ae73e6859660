//! [`script`]: a script grader — any program speaking the [`crate::base::grader`] protocol — as an
//! assertion, and the interpretation of a grader's exit code and stdout that custom assertions
//! share.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::base::assertion::{
    Assertion, AssertionKind, AssertionResult, CheckContext, Grade, Settings, Subject, WorkingCopy,
};
use crate::base::event::{ActionStatus, Event, Role, Usage};
use crate::base::excerpt;
use crate::base::grader::{
    GraderInput, GraderMessage, MAX_INLINE_OUTPUT, TokenUsage, TraceSummary,
};
use crate::base::process::{Finished, Job, tail, which};

/// Default time a grader may run.
pub const DEFAULT_GRADER_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs a script grader: `command` (program and arguments, no shell) gets the [`GraderInput`](crate::base::grader::GraderInput) JSON on
/// stdin, with the checked value as `output`, and answers per [`crate::base::grader`]. Gate by
/// default.
///
/// - A JSON result gives the score and reason; its `pass` is the verdict (without `pass`, a
///   score ≥ 0.5 passes, as in AgentV); `checks` (or the older `assertions`) become the
///   result's children.
/// - Without JSON: exit 0 passes, with stdout as the reason and a note that no JSON result
///   was printed (`PDF has 7 pages (note: the grader printed no JSON result; exit code 0 read
///   as pass)`); non-zero with empty stderr fails with stdout as the reason; non-zero with
///   stderr is an execution error.
/// - A timeout (60 s unless set with [`Script::timeout`]), a program that cannot start, and a
///   JSON result with a bad `score` are execution errors naming the command.
/// - An output over 50,000 characters goes to a temporary file named by `output_path`.
/// - The command runs in the current directory (the crate's, under `cargo test`) unless set
///   with [`Script::cwd`].
///
/// The grader runs synchronously; inside the eval's runtime it is waited for with
/// `tokio::task::block_in_place`, so other tasks keep running.
///
/// ```no_run
/// use niceeval::prelude::*;
///
/// let t = Eval::detached(None);
/// let r = t.check("The answer is 42.", script(["python3", "graders/check_answer.py"]).criteria("42"));
/// println!("{}", r.reason);
/// ```
pub fn script<S: Into<String>>(command: impl IntoIterator<Item = S>) -> Script {
    Script {
        command: command.into_iter().map(Into::into).collect(),
        payload: GraderInput::default(),
        cwd: None,
        timeout: DEFAULT_GRADER_TIMEOUT,
        env: Vec::new(),
        label: None,
    }
}

/// The assertion returned by [`script`]; configure what the grader receives with its methods.
#[derive(Debug, Clone)]
pub struct Script {
    command: Vec<String>,
    payload: GraderInput,
    cwd: Option<PathBuf>,
    timeout: Duration,
    env: Vec<(String, String)>,
    label: Option<String>,
}

impl Script {
    /// The longest the grader may run (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The directory the grader runs in.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// A name for reports instead of the command line.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.label = Some(name.into());
        self
    }

    /// An environment variable for the grader.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// `config` in the payload.
    pub fn config(mut self, config: Value) -> Self {
        self.payload.config = Some(config);
        self
    }

    /// `criteria` in the payload.
    pub fn criteria(mut self, criteria: impl Into<String>) -> Self {
        self.payload.criteria = Some(criteria.into());
        self
    }

    /// `expected_output` in the payload (one assistant message).
    pub fn expected_output(mut self, expected: impl Into<String>) -> Self {
        self.payload.expected_output = vec![GraderMessage::new("assistant", expected)];
        self
    }

    /// `input` in the payload (one user message).
    pub fn input(mut self, input: impl Into<String>) -> Self {
        self.payload.input = vec![GraderMessage::new("user", input)];
        self
    }

    /// `workspace_path` in the payload (and `NICEEVAL_WORKSPACE_PATH`/`AGENTV_WORKSPACE_PATH` in
    /// the environment).
    pub fn workspace(mut self, path: impl Into<PathBuf>) -> Self {
        self.payload.workspace_path = Some(path.into().to_string_lossy().into_owned());
        self
    }

    /// Fills `messages`, `trace_summary`, `token_usage` and `cost_usd` from a run's events
    /// (`script([..]).events(t.events())`).
    pub fn events(mut self, events: &[Event]) -> Self {
        fill_from_events(&mut self.payload, events);
        self
    }

    /// Replaces the whole payload template (its `output` is still the checked value).
    pub fn payload(mut self, payload: GraderInput) -> Self {
        self.payload = payload;
        self
    }
}

/// `messages`, `trace_summary`, `token_usage` and `cost_usd` from events.
pub(crate) fn fill_from_events(payload: &mut GraderInput, events: &[Event]) {
    let mut summary = TraceSummary::default();
    let mut messages = Vec::new();
    for event in events {
        match event {
            Event::Message { role, text } => {
                let role = match role {
                    Role::User => "user",
                    Role::Assistant => {
                        summary.llm_call_count += 1;
                        "assistant"
                    }
                    Role::System => "system",
                };
                messages.push(GraderMessage::new(role, text.as_str()));
            }
            Event::ActionCalled { name, .. } => {
                summary.event_count += 1;
                *summary.tool_calls.entry(name.clone()).or_insert(0) += 1;
            }
            Event::ActionResult { status, .. } if *status != ActionStatus::Completed => {
                summary.error_count += 1;
            }
            _ => {}
        }
    }
    let usage = Usage::from_events(events);
    payload.messages = messages;
    payload.trace_summary = Some(summary);
    payload.token_usage = Some(TokenUsage {
        input: usage.input_tokens,
        output: usage.output_tokens,
    });
    if usage.cost_usd.is_some() {
        payload.cost_usd = usage.cost_usd;
    }
}

/// Everything needed to run one grader process over one value.
pub(crate) struct GraderRun<'a> {
    pub command: &'a [String],
    pub payload: &'a GraderInput,
    pub cwd: Option<&'a std::path::Path>,
    pub timeout: Duration,
    pub env: &'a [(String, String)],
    /// The run's working copy, given by `t.check`'s context.
    pub working_copy: Option<&'a WorkingCopy>,
}

impl GraderRun<'_> {
    /// Runs the grader on `output` and interprets what it says.
    pub fn grade(&self, output: Option<&str>) -> Grade {
        let Some((program, args)) = self.command.split_first() else {
            return Grade::error("the grader command is empty; give a program and its arguments");
        };
        let mut payload = self.payload.clone();
        // Inside a workspace eval's `t.check`, the grader gets the working copy and its diff
        // (AgentV's `workspace_path` and `file_changes`) unless they were set by hand.
        if let Some(copy) = self.working_copy {
            if payload.workspace_path.is_none() {
                payload.workspace_path = Some(copy.path().to_string_lossy().into_owned());
            }
            if payload.file_changes.is_none() {
                payload.file_changes = copy.diff();
            }
        }
        // Keep a long output in a temp file alive until the grader has finished.
        let mut _spill = None;
        match output {
            Some(text) if text.chars().count() > MAX_INLINE_OUTPUT => {
                let file = match spill(text) {
                    Ok(file) => file,
                    Err(e) => {
                        return Grade::error(format!(
                            "cannot write the long output to a temporary file: {e}"
                        ));
                    }
                };
                payload.output = None;
                payload.output_path = Some(file.path().to_string_lossy().into_owned());
                _spill = Some(file);
            }
            other => payload.output = other.map(str::to_string),
        }
        let stdin = match serde_json::to_vec(&payload) {
            Ok(bytes) => bytes,
            Err(e) => return Grade::error(format!("cannot serialize the grader input: {e}")),
        };
        let mut env = self.env.to_vec();
        if let Some(ws) = &payload.workspace_path {
            env.push(("NICEEVAL_WORKSPACE_PATH".into(), ws.clone()));
            env.push(("AGENTV_WORKSPACE_PATH".into(), ws.clone()));
        }
        let job = Job {
            program: program.clone(),
            args: args.to_vec(),
            stdin,
            cwd: self.cwd.map(|p| p.to_path_buf()),
            env,
            timeout: self.timeout,
        };
        match job.run() {
            Ok(finished) => interpret(&job.display(), finished, self.timeout),
            Err(e) => Grade::error(spawn_error(&job, &e)),
        }
    }
}

fn spill(text: &str) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix("niceeval-output-")
        .suffix(".json")
        .tempfile()?;
    serde_json::to_writer(&mut file, text)?;
    file.flush()?;
    Ok(file)
}

/// Says why a program could not start, with the fix.
pub(crate) fn spawn_error(job: &Job, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound && which(&job.program).is_none() {
        let cwd = job
            .cwd
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        format!(
            "cannot run `{}`: `{}` was not found (not on PATH, or no such file from {cwd}); install it or fix the command",
            job.display(),
            job.program
        )
    } else if e.kind() == std::io::ErrorKind::PermissionDenied {
        format!(
            "cannot run `{}`: permission denied; make it executable (chmod +x) or run it through its interpreter",
            job.display()
        )
    } else {
        format!("cannot run `{}`: {e}", job.display())
    }
}

/// What a pass by exit code alone says: the grader printed no JSON result.
const NO_JSON_PASS: &str = "the grader printed no JSON result; exit code 0 read as pass";

/// Turns a finished grader into a grade, per the exit-code convention and JSON result format.
pub(crate) fn interpret(command: &str, finished: Finished, timeout: Duration) -> Grade {
    let Finished {
        code,
        stdout,
        stderr,
        timed_out,
    } = finished;
    if timed_out {
        return Grade::error(format!(
            "grader `{command}` timed out after {:.1}s (raise the timeout if it needs longer)",
            timeout.as_secs_f64()
        ));
    }
    let Some(code) = code else {
        return Grade::error(format!(
            "grader `{command}` was killed by a signal{}",
            if stderr.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", tail(&stderr, 2000))
            }
        ));
    };
    let trimmed = stdout.trim();
    let structured = parse_result(trimmed);
    if code != 0 && !stderr.trim().is_empty() {
        return Grade::error(format!(
            "grader `{command}` exited with code {code}: {}",
            tail(&stderr, 2000)
        ));
    }
    match structured {
        Some(Ok(grade)) => grade,
        Some(Err(why)) => Grade::error(format!(
            "grader `{command}` printed an invalid result: {why}; expected {{\"pass\": bool, \"score\": 0..1, \"reason\": \"..\", \"checks\": [..]}}"
        )),
        // The exit code decides, as the protocol says; the reason says so, so that a grader
        // that meant to print a result (and printed something else) does not pass unnoticed.
        None if code == 0 => Grade::pass(if trimmed.is_empty() {
            "the grader printed nothing; exit code 0 read as pass".to_string()
        } else {
            format!("{} (note: {NO_JSON_PASS})", excerpt::elide(trimmed, 500))
        }),
        None => Grade::fail(if trimmed.is_empty() {
            format!("the grader exited with code {code}")
        } else {
            excerpt::elide(trimmed, 500)
        }),
    }
}

/// A JSON result on stdout: `None` when stdout is not a JSON object (the exit code decides).
fn parse_result(stdout: &str) -> Option<Result<Grade, InvalidResult>> {
    if !stdout.starts_with('{') {
        return None;
    }
    let value: Value = serde_json::from_str(stdout).ok().or_else(|| {
        // Some graders log before the result: take the last line that is a JSON object.
        stdout
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with('{'))
            .and_then(|l| serde_json::from_str(l).ok())
    })?;
    let object = value.as_object()?;
    if !["pass", "score", "checks", "assertions"]
        .iter()
        .any(|k| object.contains_key(*k))
    {
        return Some(Err(InvalidResult::NoVerdict(excerpt::json(&value))));
    }
    Some(grade_from_result(&value))
}

/// Why a grader's JSON result cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InvalidResult {
    /// A JSON object without any of the keys of a result (shown elided).
    #[error("the JSON object {0} has none of pass, score, checks")]
    NoVerdict(String),
    /// `pass` is not a boolean.
    #[error("pass must be true or false, got {0}")]
    Pass(Value),
    /// `score` is a number that is not finite.
    #[error("score must be a number, got {0}")]
    Score(Value),
    /// `score` is not a number at all.
    #[error("score must be a number between 0 and 1, got {0}")]
    ScoreKind(Value),
    /// `checks` (or `assertions`, `componentResults`) is not a list.
    #[error("{0} must be a list")]
    NotAList(&'static str),
    /// One item of the list.
    #[error("{key}[{index}]: {source}")]
    Item {
        /// The list's key.
        key: &'static str,
        /// The item's index.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: Box<InvalidResult>,
    },
}

/// Reads `{pass, score, reason, checks}` (AgentV), `{score, assertions[]}` (the older form) and
/// `{pass, score, reason, componentResults}` (promptfoo's grading result).
pub(crate) fn grade_from_result(value: &Value) -> Result<Grade, InvalidResult> {
    let pass = match value.get("pass").or_else(|| value.get("pass_")) {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => return Err(InvalidResult::Pass(other.clone())),
    };
    let score = match value.get("score") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s.is_finite() => Some(s.clamp(0.0, 1.0)),
            _ => return Err(InvalidResult::Score(Value::Number(n.clone()))),
        },
        Some(other) => return Err(InvalidResult::ScoreKind(other.clone())),
    };
    let reason = ["reason", "reasoning"]
        .iter()
        .find_map(|k| value.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let mut children = Vec::new();
    for key in ["checks", "assertions", "componentResults"] {
        if let Some(items) = value.get(key) {
            let Some(items) = items.as_array() else {
                return Err(InvalidResult::NotAList(key));
            };
            for (i, item) in items.iter().enumerate() {
                children.push(check_result(item, i).map_err(|e| InvalidResult::Item {
                    key,
                    index: i,
                    source: Box::new(e),
                })?);
            }
        }
    }
    let score = match (score, pass) {
        (Some(s), _) => s,
        (None, Some(p)) => f64::from(u8::from(p)),
        (None, None) if !children.is_empty() => {
            children.iter().filter(|c| c.passed).count() as f64 / children.len() as f64
        }
        (None, None) => 0.0,
    };
    let verdict = pass.unwrap_or(score >= 0.5);
    let reason = reason.unwrap_or_else(|| {
        if children.is_empty() {
            format!("the grader scored {score:.3}")
        } else {
            format!(
                "{}/{} checks passed",
                children.iter().filter(|c| c.passed).count(),
                children.len()
            )
        }
    });
    Ok(Grade::score(score, reason)
        .with_verdict(verdict)
        .with_children(children))
}

fn check_result(item: &Value, index: usize) -> Result<AssertionResult, InvalidResult> {
    let text = ["text", "name", "description"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| format!("check {}", index + 1));
    let pass = match item.get("pass").or_else(|| item.get("passed")) {
        Some(Value::Bool(b)) => Some(*b),
        None | Some(Value::Null) => None,
        Some(other) => return Err(InvalidResult::Pass(other.clone())),
    };
    let score = match item.get("score") {
        Some(Value::Number(n)) => n.as_f64().map(|s| s.clamp(0.0, 1.0)),
        None | Some(Value::Null) => None,
        Some(other) => return Err(InvalidResult::Score(other.clone())),
    };
    let pass = pass.or(score.map(|s| s >= 0.5)).unwrap_or(false);
    let score = score.unwrap_or(f64::from(u8::from(pass)));
    let mut reason = item
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(evidence) = item.get("evidence").and_then(Value::as_str) {
        if !reason.is_empty() {
            reason.push_str("; ");
        }
        reason.push_str("evidence: ");
        reason.push_str(evidence);
    }
    Ok(AssertionResult::from_grade(
        text,
        AssertionKind::Value,
        &Settings::gate(),
        Grade::score(score, reason).with_verdict(pass),
    ))
}

impl Assertion for Script {
    fn describe(&self) -> String {
        match &self.label {
            Some(label) => format!("script({label})"),
            None => format!("script({})", excerpt::elide(&self.command.join(" "), 80)),
        }
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.evaluate_in(value, &CheckContext::default())
    }

    /// Inside a workspace eval's `t.check`, the grader gets the working copy and its diff
    /// (AgentV's `workspace_path` and `file_changes`) unless they were set by hand.
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        let text = value.text();
        GraderRun {
            command: &self.command,
            payload: &self.payload,
            cwd: self.cwd.as_deref(),
            timeout: self.timeout,
            env: &self.env,
            working_copy: context.working_copy(),
        }
        .grade(text.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(code: i32, stdout: &str, stderr: &str) -> Finished {
        Finished {
            code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            timed_out: false,
        }
    }

    fn judge(code: i32, stdout: &str, stderr: &str) -> AssertionResult {
        let grade = interpret("g", finished(code, stdout, stderr), DEFAULT_GRADER_TIMEOUT);
        AssertionResult::from_grade("g".into(), AssertionKind::Value, &Settings::gate(), grade)
    }

    #[test]
    fn exit_code_convention() {
        let r = judge(0, "PDF has 7 pages\n", "");
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "PDF has 7 pages (note: the grader printed no JSON result; exit code 0 read as pass)"
        );
        let r = judge(1, "PDF has only 2 pages", "");
        assert!(!r.passed && r.error.is_none() && r.reason == "PDF has only 2 pages");
        let r = judge(2, "", "Traceback: boom");
        assert!(r.error.is_some() && r.reason.contains("boom"));
        let r = judge(0, "", "warnings are fine");
        assert!(r.passed);
        assert_eq!(
            r.reason,
            "the grader printed nothing; exit code 0 read as pass"
        );
    }

    #[test]
    fn json_results() {
        let r = judge(0, r#"{"pass": false, "score": 0.8, "reason": "close"}"#, "");
        assert!(!r.passed && r.score == 0.8 && r.reason == "close");
        let r = judge(0, r#"{"score": 0.6}"#, "");
        assert!(r.passed, "score ≥ 0.5 passes without pass");
        let r = judge(
            0,
            r#"{"score": 0.5, "assertions": [{"text": "a", "passed": true}, {"text": "b", "passed": false, "evidence": "x"}]}"#,
            "",
        );
        assert_eq!(r.children.len(), 2);
        assert!(r.children[0].passed && !r.children[1].passed);
        assert_eq!(r.children[1].reason, "evidence: x");
        let r = judge(0, "log line\n{\"pass\": true, \"score\": 1}", "");
        assert!(r.passed);
        let r = judge(1, r#"{"pass": false, "score": 0.2, "reason": "nope"}"#, "");
        assert!(!r.passed && r.reason == "nope");
    }

    #[test]
    fn garbage_results_are_errors() {
        let r = judge(0, r#"{"score": "high"}"#, "");
        assert!(r.error.is_some(), "{}", r.reason);
        let r = judge(0, r#"{"verdict": "ok"}"#, "");
        assert!(r.error.is_some());
        let r = judge(0, r#"{"pass": "yes"}"#, "");
        assert!(r.error.is_some());
        let r = judge(0, "not json at all {", "");
        assert!(
            r.passed,
            "plain text with exit 0 passes by the exit-code convention"
        );
    }
}
