//! What the subprocess agents ([`CommandAgent`](super::command::CommandAgent),
//! [`ClaudeCode`](super::claude_code::ClaudeCode), [`Codex`](super::codex::Codex)) share: the
//! program, its arguments, environment, directory and timeout ([`ProcessAgent`]), their
//! setters (written once, in [`process_setters!`]), and one turn of a program: started through
//! the process core ([`crate::base::process`]) in the request's place, stdin written, stdout handed
//! to the agent, the timeout kept, the whole process tree ended when the turn ends, and an
//! error that ends with the program's stderr.

use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, ChildStdout, Command};

use crate::agents::agent::{AgentError, Request};
use crate::base::process::{self, Stderr};

/// The variable that carries OpenTelemetry resource attributes.
#[cfg(feature = "otel")]
const RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";

/// The OpenTelemetry variables a turn's program gets inside an eval: niceeval's receiver as
/// the OTLP/HTTP endpoint, a short batch delay, the turn's `TRACEPARENT`, and the run's trace id
/// as a resource attribute (so spans of a program that does not read `TRACEPARENT` are still
/// attributed), added to the suite's own resource attributes (`resource`: the agent's
/// `OTEL_RESOURCE_ATTRIBUTES`, else the process's). The agent's own `env` comes after and wins
/// for the other variables.
#[cfg(feature = "otel")]
pub(crate) fn telemetry(request: &Request, resource: Option<&str>) -> Vec<(&'static str, String)> {
    let Some(traceparent) = request.traceparent() else {
        return Vec::new();
    };
    let Ok(endpoint) = crate::agents::trace::endpoint() else {
        return Vec::new();
    };
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.to_string()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_string()),
        ("OTEL_TRACES_EXPORTER", "otlp".to_string()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
        ("TRACEPARENT", traceparent.to_string()),
    ];
    if let Some(trace_id) = crate::agents::trace::trace_of(traceparent) {
        env.push((
            RESOURCE_ATTRIBUTES,
            resource_attributes(resource, &crate::agents::trace::hex(&trace_id)),
        ));
    }
    env
}

/// `OTEL_RESOURCE_ATTRIBUTES` (comma-separated `key=value` pairs) with the run's trace id added:
/// the suite's own pairs kept in their order, a `niceeval.trace_id` among them replaced.
#[cfg(feature = "otel")]
fn resource_attributes(theirs: Option<&str>, trace_id: &str) -> String {
    let mut pairs: Vec<&str> = theirs
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|pair| {
            !pair.is_empty()
                && pair.split('=').next().map(str::trim)
                    != Some(crate::agents::trace::RUN_ATTRIBUTE)
        })
        .collect();
    let ours = format!("{}={trace_id}", crate::agents::trace::RUN_ATTRIBUTE);
    pairs.push(&ours);
    pairs.join(",")
}

/// How much of stderr is kept (the end of it).
pub(crate) const STDERR_TAIL: usize = 16 * 1024;

/// A program run once per turn: what the subprocess agents hold in common.
#[derive(Debug, Clone)]
pub(crate) struct ProcessAgent {
    /// The program (looked up on `PATH` unless it has a folder in it).
    pub(crate) program: String,
    /// The arguments the user added (each agent places them).
    pub(crate) args: Vec<String>,
    /// Environment variables set for the program, after the agent's own defaults.
    pub(crate) env: Vec<(String, String)>,
    /// The working directory; the run's working copy (or the current directory) when unset.
    pub(crate) cwd: Option<PathBuf>,
    /// The per-turn timeout.
    pub(crate) timeout: Duration,
    /// The agent's type as users write it, naming the knob in errors (`ClaudeCode::timeout`).
    agent: &'static str,
}

/// What a turn's code gets: the running program and its stdout.
pub(crate) struct Turn {
    /// The program (wait for its exit status here).
    pub(crate) child: Child,
    /// Its stdout.
    pub(crate) stdout: ChildStdout,
}

/// Why one turn of a subprocess agent failed, before the end of the program's stderr is added
/// ([`with_stderr`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TurnError {
    /// The program could not be started; the message says how to fix that.
    #[error("{message}")]
    Start {
        /// What failed and how to fix it.
        message: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Reading the program's stdout failed.
    #[error("cannot read stdout: {0}")]
    Read(#[source] std::io::Error),
    /// The program printed more than one turn may.
    #[error(
        "the program printed more than {} on stdout, the limit for one turn; reading stopped (raise it with {raise_with})",
        human_bytes(*.limit)
    )]
    TooMuchOutput {
        /// The limit in bytes.
        limit: usize,
        /// How to raise it.
        raise_with: &'static str,
    },
    /// The turn outlived the agent's timeout.
    #[error(
        "{shown} did not finish within {timeout:?} and was killed; raise the timeout with {agent}::timeout or `timeout` under [agent] in niceeval.toml"
    )]
    TimedOut {
        /// The program as errors show it.
        shown: String,
        /// The timeout.
        timeout: Duration,
        /// The agent type, naming the knob.
        agent: &'static str,
    },
    /// Waiting for the program's exit failed.
    #[error("cannot wait for {shown}: {source}")]
    Wait {
        /// The program as errors show it.
        shown: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A stdout line that is not JSON; the message names the line and what was expected.
    #[error("{message}")]
    Line {
        /// The line, its number and what it should have been.
        message: String,
        /// The JSON parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The program's or the agent's own account of the failure (an exit status, a line that
    /// is JSON but no event, the turn's own error).
    #[error("{0}")]
    Failed(String),
}

/// How a turn ended: its outcome (an error ends with the program's stderr) and that stderr.
pub(crate) struct Ended {
    pub(crate) outcome: Result<(), AgentError>,
    pub(crate) stderr: String,
}

impl ProcessAgent {
    /// `program` with `args`; `agent` is the type's name, for errors.
    pub(crate) fn new(
        program: impl Into<String>,
        args: Vec<String>,
        timeout: Duration,
        agent: &'static str,
    ) -> ProcessAgent {
        ProcessAgent {
            program: program.into(),
            args,
            env: Vec::new(),
            cwd: None,
            timeout,
            agent,
        }
    }

    /// The command of one turn: the program with `argv`, where the request says (the working
    /// copy under its isolation, for an eval with a workspace; `cwd` still wins for the
    /// directory), with `defaults` in its environment and then the agent's own variables.
    pub(crate) fn command(
        &self,
        request: &Request,
        argv: impl IntoIterator<Item = String>,
        defaults: &[(&str, &str)],
    ) -> Command {
        let mut command = request.command(&self.program);
        command.args(argv);
        // Variables given here are not in this process's environment; a secret among them
        // (an API key in `[agent] env`) is masked in reports like the environment's own.
        for (key, value) in defaults {
            crate::base::redact::note_env(key, value);
            command.env(key, value);
        }
        // The suite's resource attributes (the agent's, its defaults', the process's) are
        // merged with the run's, not replaced by them.
        #[cfg(feature = "otel")]
        let telemetry = {
            let resource = (self.env.iter().rev())
                .find(|(key, _)| key == RESOURCE_ATTRIBUTES)
                .map(|(_, value)| value.clone())
                .or_else(|| {
                    (defaults.iter().rev())
                        .find(|(key, _)| *key == RESOURCE_ATTRIBUTES)
                        .map(|(_, value)| value.to_string())
                })
                .or_else(|| std::env::var(RESOURCE_ATTRIBUTES).ok());
            telemetry(request, resource.as_deref())
        };
        #[cfg(feature = "otel")]
        for (key, value) in &telemetry {
            command.env(key, value);
        }
        for (key, value) in &self.env {
            #[cfg(feature = "otel")]
            if key == RESOURCE_ATTRIBUTES && telemetry.iter().any(|(k, _)| k == key) {
                continue; // merged above
            }
            crate::base::redact::note_env(key, value);
            command.env(key, value);
        }
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
    }

    /// Runs one turn of `command`: starts it (`cannot_start` says why it could not), writes
    /// `stdin`, hands `turn` the program and its stdout, and fails past the timeout (the error
    /// names `shown`, the program as errors show it, and the knob). Whatever happens, the whole
    /// process tree is ended before this returns; an error ends with the tail of the program's
    /// stderr, read to its end.
    pub(crate) async fn send<F, Fut>(
        &self,
        shown: &str,
        mut command: Command,
        stdin: Option<Vec<u8>>,
        cannot_start: impl FnOnce(&std::io::Error) -> String,
        turn: F,
    ) -> Ended
    where
        F: FnOnce(Turn) -> Fut,
        Fut: Future<Output = Result<(), TurnError>>,
    {
        command.stdout(Stdio::piped());
        let spawned = process::spawn(&mut command, stdin, Stderr::Tail(STDERR_TAIL));
        drop(command);
        let process::Spawned {
            mut child,
            mut tree,
            stderr,
        } = match spawned {
            Ok(spawned) => spawned,
            Err(e) => {
                let message = cannot_start(&e);
                return Ended {
                    outcome: Err(with_stderr(TurnError::Start { message, source: e }, "")),
                    stderr: String::new(),
                };
            }
        };
        // The turn owns the child; the tree and the stderr reader stay here, to be ended and
        // read whether the turn finishes, fails or times out.
        let Some(stdout) = child.stdout.take() else {
            return Ended {
                outcome: Err(AgentError::new("the program's stdout was not captured")),
                stderr: String::new(),
            };
        };
        let (outcome, timed_out) =
            match tokio::time::timeout(self.timeout, turn(Turn { child, stdout })).await {
                Ok(outcome) => (outcome, false),
                Err(_) => (
                    Err(TurnError::TimedOut {
                        shown: shown.to_string(),
                        timeout: self.timeout,
                        agent: self.agent,
                    }),
                    true,
                ),
            };
        // A program that failed gets a moment to finish its stderr before the tree is ended; a
        // hung one is ended first.
        let failed = outcome.is_err() && !timed_out;
        let stderr = process::finish(&mut tree, stderr, failed).await;
        Ended {
            outcome: outcome.map_err(|error| with_stderr(error, &stderr)),
            stderr,
        }
    }
}

/// The error of a failed turn: `error`'s message, then the end of the program's stderr (or a
/// note that it was empty), where a program says what went wrong; `error` is kept as the cause.
pub(crate) fn with_stderr(error: TurnError, stderr: &str) -> AgentError {
    let stderr = stderr.trim();
    AgentError::new(if stderr.is_empty() {
        format!("{error} (stderr was empty)")
    } else {
        format!("{error}; stderr:\n{stderr}")
    })
    .caused_by(error)
}

/// The public setters every subprocess agent shares, each written once: `program`, `args`,
/// `timeout`, `env`, `current_dir`, for a type with a `process: ProcessAgent` field.
macro_rules! process_setters {
    ($agent:ty { $($setter:ident),* $(,)? }) => {
        impl $agent {
            $( $crate::agents::agent::subprocess::process_setters!(@ $setter); )*
        }
    };
    (@ program) => {
        /// The program to run (a name on `PATH`, or a path).
        pub fn program(mut self, program: impl Into<String>) -> Self {
            self.process.program = program.into();
            self
        }
    };
    (@ args) => {
        /// Extra arguments, after the agent's own options and before the prompt.
        pub fn args<I, S>(mut self, args: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.process.args.extend(args.into_iter().map(Into::into));
            self
        }
    };
    (@ timeout) => {
        /// The per-turn timeout; the program's whole process tree is ended when it passes.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.process.timeout = timeout;
            self
        }
    };
    (@ env) => {
        /// Sets an environment variable for the program (it wins over the agent's defaults).
        pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
            self.process.env.push((key.into(), value.into()));
            self
        }
    };
    (@ current_dir) => {
        /// The working directory (default: the run's working copy, else the current
        /// directory).
        pub fn current_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
            self.process.cwd = Some(dir.into());
            self
        }
    };
}
pub(crate) use process_setters;

/// Reads `stdout` line by line as it arrives and hands each line (without its `\n`) and its
/// 1-based number to `on_line`, stopping at the first error it returns. Fails past
/// `max_output` bytes without buffering more than that (the message says to raise it with
/// `raise_with`).
pub(crate) async fn read_lines(
    stdout: impl AsyncRead + Unpin,
    max_output: usize,
    raise_with: &'static str,
    mut on_line: impl FnMut(&[u8], usize) -> Result<(), TurnError>,
) -> Result<(), TurnError> {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    let mut total = 0usize;
    let mut number = 0usize;
    loop {
        let buffer = reader.fill_buf().await.map_err(TurnError::Read)?;
        if buffer.is_empty() {
            if !line.is_empty() {
                number += 1;
                on_line(&line, number)?;
            }
            return Ok(());
        }
        let (taken, complete) = match buffer.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buffer.len(), false),
        };
        total += taken;
        if total > max_output {
            return Err(TurnError::TooMuchOutput {
                limit: max_output,
                raise_with,
            });
        }
        line.extend_from_slice(&buffer[..if complete { taken - 1 } else { taken }]);
        reader.consume(taken);
        if complete {
            number += 1;
            on_line(&line, number)?;
            line.clear();
        }
    }
}

pub(crate) fn human_bytes(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// How a finished program's status reads in an error: `None` for success.
pub(crate) fn exit_error(shown: &str, status: std::process::ExitStatus) -> Option<String> {
    if status.success() {
        return None;
    }
    Some(match status.code() {
        Some(code) => format!("{shown} exited with status {code}"),
        None => format!("{shown} was terminated{}", process::signal_note(&status)),
    })
}

#[cfg(all(test, feature = "otel"))]
mod tests {
    use super::resource_attributes;

    #[test]
    fn the_suites_resource_attributes_are_kept_beside_the_runs_trace_id() {
        assert_eq!(resource_attributes(None, "ab"), "niceeval.trace_id=ab");
        assert_eq!(resource_attributes(Some(""), "ab"), "niceeval.trace_id=ab");
        assert_eq!(
            resource_attributes(
                Some("deployment.environment=ci, service.version=1.2,"),
                "ab"
            ),
            "deployment.environment=ci,service.version=1.2,niceeval.trace_id=ab"
        );
        assert_eq!(
            resource_attributes(Some("niceeval.trace_id=old,team=evals"), "ab"),
            "team=evals,niceeval.trace_id=ab"
        );
    }
}
