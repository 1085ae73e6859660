//! The command agent: runs a program per turn, hands it the input, and reads the [`Event`]s it
//! prints on stdout, one JSON object per line (the same JSONL as recorded transcripts).
//!
//! Each send starts the program afresh, as a process tree of its own. The input goes on stdin as
//! plain text (the default), on stdin as one JSON object (`{"input", "data", "session",
//! "history", "responding_to"}`), or as the last argument. `NICEEVAL_SESSION` holds the session
//! id. Events are recorded as they arrive, so a crash or a timeout keeps what came before it.
//! In an eval with a workspace the program runs in the run's working copy, under the
//! workspace's isolation (see [`crate::agent::Request::command`]).
//!
//! The turn fails — with an `error` event whose message ends with the program's stderr — when
//! the program exits non-zero or by a signal, prints a line that is not an event (the message
//! names the line number), prints more than the output cap (64 MiB by default; reading stops,
//! memory stays bounded), or runs past its timeout (120 s by default). Whenever a turn ends, the
//! whole process tree is ended (SIGTERM, then SIGKILL), so nothing it started outlives the turn. The stderr of the last
//! turn is kept ([`CommandAgent::last_stderr`]).
//!
//! ```no_run
//! use std::time::Duration;
//! use niceeval::agent::command::{CommandAgent, InputMode};
//!
//! let agent = CommandAgent::new("python3", ["agents/support.py"])
//!     .input_mode(InputMode::Json)
//!     .timeout(Duration::from_secs(30));
//! let scripted = CommandAgent::shell(r#"echo '{"type":"message","role":"assistant","text":"hi"}'"#);
//! # let _ = (agent, scripted);
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncRead;

use crate::agent::process::{ProcessAgent, Turn, exit_error, process_setters, read_lines};
use crate::agent::{Agent, AgentError, EventSink, Request};
use crate::config::CommandLine;
use crate::event::Event;

/// Default per-turn timeout.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Default cap on what one turn may print on stdout.
pub(crate) const DEFAULT_MAX_OUTPUT: usize = 64 * 1024 * 1024;

/// How the program receives the turn's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InputMode {
    /// The input text on stdin, then end of file.
    #[default]
    Stdin,
    /// One JSON object on stdin: `input`, `data`, `session`, `history`, `responding_to`.
    Json,
    /// The input text as the last argument; stdin is empty.
    Arg,
}

/// An agent that is a program speaking JSONL events. See the module docs.
#[derive(Clone)]
pub struct CommandAgent {
    process: ProcessAgent,
    input: InputMode,
    max_output: usize,
    last_stderr: Arc<Mutex<String>>,
}

impl std::fmt::Debug for CommandAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandAgent")
            .field("command", &self.display())
            .field("input", &self.input)
            .field("timeout", &self.process.timeout)
            .finish_non_exhaustive()
    }
}

impl CommandAgent {
    /// Runs `program` with `args` (no shell involved).
    pub fn new<I, S>(program: impl Into<String>, args: I) -> CommandAgent
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CommandAgent {
            process: ProcessAgent::new(
                program,
                args.into_iter().map(Into::into).collect(),
                DEFAULT_TIMEOUT,
                "CommandAgent",
            ),
            input: InputMode::default(),
            max_output: DEFAULT_MAX_OUTPUT,
            last_stderr: Arc::default(),
        }
    }

    /// Runs `script` with `sh -c` (`cmd /C` on Windows).
    pub fn shell(script: impl Into<String>) -> CommandAgent {
        if cfg!(windows) {
            CommandAgent::new("cmd", ["/C".to_string(), script.into()])
        } else {
            CommandAgent::new("sh", ["-c".to_string(), script.into()])
        }
    }

    /// How the input is passed.
    pub fn input_mode(mut self, mode: InputMode) -> Self {
        self.input = mode;
        self
    }

    /// The most a turn may print on stdout, in bytes.
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = bytes.max(1);
        self
    }

    /// The stderr of the last turn (its last 16 KiB).
    pub fn last_stderr(&self) -> String {
        self.last_stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn display(&self) -> String {
        std::iter::once(&self.process.program)
            .chain(&self.process.args)
            .map(|a| {
                if a.contains(char::is_whitespace) || a.is_empty() {
                    format!("{a:?}")
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn stdin_payload(&self, request: &Request) -> Option<Vec<u8>> {
        match self.input {
            InputMode::Stdin => Some(request.input.text.clone().into_bytes()),
            InputMode::Json => Some(
                json!({
                    "input": request.input.text,
                    "data": request.input.data,
                    "session": request.session,
                    "history": request.history,
                    "responding_to": request.responding_to,
                })
                .to_string()
                .into_bytes(),
            ),
            InputMode::Arg => None,
        }
    }
}

process_setters!(CommandAgent {
    timeout,
    current_dir,
    env
});

#[async_trait::async_trait]
impl Agent for CommandAgent {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let mut argv = self.process.args.clone();
        if self.input == InputMode::Arg {
            argv.push(request.input.text.clone());
        }
        let session = request.session.as_str();
        let command = self
            .process
            .command(&request, argv, &[("NICEEVAL_SESSION", session)]);
        let shown = format!("`{}`", self.display());
        let ended = self
            .process
            .send(
                &shown,
                command,
                self.stdin_payload(&request),
                |e| {
                    format!("cannot start {shown}: {e}; check the program exists and is executable")
                },
                |turn| async {
                    let Turn { mut child, stdout } = turn;
                    read_events(stdout, &request.events, self.max_output).await?;
                    let status = child
                        .wait()
                        .await
                        .map_err(|e| format!("cannot wait for {shown}: {e}"))?;
                    exit_error(&shown, status).map_or(Ok(()), Err)
                },
            )
            .await;
        *self.last_stderr.lock().unwrap_or_else(|p| p.into_inner()) = ended.stderr;
        ended.outcome
    }

    fn name(&self) -> String {
        format!("command `{}`", self.display())
    }
}

/// Reads JSONL events from `stdout` into `sink` as they arrive. Fails on the first line that is
/// not an event, or past `max_output` bytes (without buffering more than that).
async fn read_events(
    stdout: impl AsyncRead + Unpin,
    sink: &EventSink,
    max_output: usize,
) -> Result<(), String> {
    read_lines(
        stdout,
        max_output,
        "CommandAgent::max_output or `max_output` under [agent]",
        |line, number| parse_line(line, number, sink),
    )
    .await
}

fn parse_line(line: &[u8], number: usize, sink: &EventSink) -> Result<(), String> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return Ok(());
    }
    let event: Event = serde_json::from_str(text).map_err(|e| {
        format!(
            "stdout line {number} is not a niceeval event ({e}): {}; print one JSON object per \
             line with a \"type\" such as \"message\" or \"action.called\"",
            crate::excerpt::quote(text)
        )
    })?;
    sink.emit(event);
    Ok(())
}

/// Builds a command agent from `[agent] type = "command"`; `base` is the directory of
/// `niceeval.toml`, against which `cwd` resolves (and the default directory).
pub(crate) fn from_config(
    config: &crate::config::CommandConfig,
    base: &std::path::Path,
) -> Result<CommandAgent, String> {
    let mut agent = match &config.command {
        CommandLine::Shell(script) => CommandAgent::shell(script.clone()),
        CommandLine::Argv(argv) => match argv.split_first() {
            Some((program, args)) => CommandAgent::new(program.clone(), args.to_vec()),
            None => return Err("[agent] command must not be empty".to_string()),
        },
    };
    agent.input = match config.input.as_deref() {
        None | Some("stdin") => InputMode::Stdin,
        Some("json") => InputMode::Json,
        Some("arg") => InputMode::Arg,
        Some(other) => return Err(format!("[agent] input = {other:?} is not an input mode")),
    };
    if let Some(timeout) = &config.timeout {
        agent = agent.timeout(super::setting_duration(timeout)?);
    }
    if let Some(bytes) = config.max_output {
        agent = agent.max_output(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    for (key, value) in &config.env {
        agent = agent.env(key, value);
    }
    Ok(agent.current_dir(match &config.cwd {
        Some(dir) => base.join(dir),
        None => base.to_path_buf(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_parse_per_line_and_bad_lines_are_named() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let sink = EventSink::default();
        let input: &[u8] = b"{\"type\":\"message\",\"role\":\"assistant\",\"text\":\"a\"}\r\n\n{\"type\":\"skill.loaded\",\"name\":\"s\"}";
        rt.block_on(read_events(input, &sink, 1024)).unwrap();
        assert_eq!(sink.snapshot().len(), 2);
        let sink = EventSink::default();
        let input: &[u8] = b"{\"type\":\"thinking\",\"text\":\"x\"}\nnot json\n";
        let err = rt.block_on(read_events(input, &sink, 1024)).unwrap_err();
        assert!(
            err.starts_with("stdout line 2 is not a niceeval event"),
            "{err}"
        );
        assert_eq!(
            sink.snapshot().len(),
            1,
            "events before the bad line are kept"
        );
        let big = vec![b'x'; 5000];
        let err = rt
            .block_on(read_events(&big[..], &EventSink::default(), 4096))
            .unwrap_err();
        assert!(err.contains("more than 4 KiB"), "{err}");
    }

    #[test]
    fn settings_are_validated() {
        let base = std::path::Path::new("/cfg");
        let parse = |text: &str| {
            crate::config::Config::parse(&format!("[agent]\ntype = \"command\"\n{text}"), "n.toml")
                .map_err(|e| e.to_string())
                .map(|config| match config.agent {
                    Some(crate::config::AgentConfig::Command(settings)) => {
                        from_config(&settings, base).unwrap()
                    }
                    other => panic!("{other:?}"),
                })
        };
        let err = parse("").unwrap_err();
        assert!(err.contains("needs `command"), "{err}");
        let agent =
            parse("command = [\"python3\", \"a.py\"]\ninput = \"json\"\ntimeout = \"5s\"\n")
                .unwrap();
        assert_eq!(agent.input, InputMode::Json);
        assert_eq!(agent.process.timeout, Duration::from_secs(5));
        assert_eq!(agent.process.cwd.as_deref(), Some(base));
        assert_eq!(agent.process.program, "python3");
        let err = parse("command = \"x\"\ninptu = \"x\"\n").unwrap_err();
        assert!(
            err.starts_with(
                "n.toml:4:1: [agent] inptu: unknown key `inptu`; did you mean `input`?"
            ),
            "{err}"
        );
        let err = parse("command = []\ninput = \"file\"\n").unwrap_err();
        assert!(
            err.contains("n.toml:3:11: [agent] command: must be a non-empty array"),
            "{err}"
        );
        assert!(
            err.contains("n.toml:4:9: [agent] input: \"file\" is not an input mode"),
            "{err}"
        );
    }
}
