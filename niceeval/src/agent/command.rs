//! The command agent: runs a program per turn, hands it the input, and reads the [`Event`]s it
//! prints on stdout, one JSON object per line (the same JSONL as recorded transcripts).
//!
//! Each send starts the program afresh, in its own process group. The input goes on stdin as
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
//! whole process group is killed, so nothing it started outlives the turn. The stderr of the last
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

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::agent::{Agent, AgentError, EventSink, Request};
use crate::event::Event;

/// Default per-turn timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Default cap on what one turn may print on stdout.
pub const DEFAULT_MAX_OUTPUT: usize = 64 * 1024 * 1024;

/// How much of stderr is kept (the end of it).
const STDERR_TAIL: usize = 16 * 1024;

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
    program: String,
    args: Vec<String>,
    input: InputMode,
    timeout: Duration,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    max_output: usize,
    last_stderr: Arc<Mutex<String>>,
}

impl std::fmt::Debug for CommandAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandAgent")
            .field("command", &self.display())
            .field("input", &self.input)
            .field("timeout", &self.timeout)
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
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            input: InputMode::default(),
            timeout: DEFAULT_TIMEOUT,
            cwd: None,
            env: Vec::new(),
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

    /// The per-turn timeout; the process group is killed when it passes.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets an environment variable for the program.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
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
        std::iter::once(&self.program)
            .chain(&self.args)
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

    async fn run(&self, request: &Request, kill: &mut GroupKill) -> Result<(), String> {
        // In the run's working copy (and its isolation) when the eval has a workspace; an
        // explicit `current_dir` still wins for the directory.
        let mut command = request.command(&self.program);
        command
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .env("NICEEVAL_SESSION", &request.session);
        if self.input == InputMode::Arg {
            command.arg(&request.input.text);
        }
        let payload = self.stdin_payload(request);
        command.stdin(if payload.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| {
            format!(
                "cannot start `{}`: {e}; check the program exists and is executable",
                self.display()
            )
        })?;
        let stdout = kill.watch(&mut child, payload)?;
        read_events(stdout, &request.events, self.max_output).await?;
        let status = child
            .wait()
            .await
            .map_err(|e| format!("cannot wait for `{}`: {e}", self.display()))?;
        if status.success() {
            return Ok(());
        }
        Err(match status.code() {
            Some(code) => format!("`{}` exited with status {code}", self.display()),
            None => format!(
                "`{}` was terminated{}",
                self.display(),
                signal_note(&status)
            ),
        })
    }
}

#[cfg(unix)]
pub(crate) fn signal_note(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    status
        .signal()
        .map(|s| format!(" by signal {s}"))
        .unwrap_or_default()
}

#[cfg(not(unix))]
pub(crate) fn signal_note(_: &std::process::ExitStatus) -> String {
    String::new()
}

/// Kills the turn's process group when dropped (the turn ended, failed, timed out, or the eval
/// itself was cancelled), and holds the stderr reader.
#[derive(Default)]
pub(crate) struct GroupKill {
    /// The process group's leader (the spawned program, started with `process_group(0)`).
    pub(crate) pid: Option<u32>,
    /// The task reading the program's stderr tail.
    pub(crate) stderr: Option<tokio::task::JoinHandle<String>>,
}

impl GroupKill {
    /// Takes charge of a turn's spawned program (started with `process_group(0)` and piped
    /// stdout and stderr): remembers its group, writes `stdin` concurrently (a program that
    /// prints before it has read everything must not deadlock), keeps the tail of its stderr,
    /// and returns its stdout. Shared by the subprocess agents.
    pub(crate) fn watch(
        &mut self,
        child: &mut tokio::process::Child,
        stdin: Option<Vec<u8>>,
    ) -> Result<tokio::process::ChildStdout, String> {
        self.pid = child.id();
        if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), stdin) {
            tokio::spawn(async move {
                let _ = pipe.write_all(&bytes).await;
            });
        }
        if let Some(stderr) = child.stderr.take() {
            self.stderr = Some(tokio::spawn(read_tail(stderr, STDERR_TAIL)));
        }
        child
            .stdout
            .take()
            .ok_or_else(|| "the program's stdout was not captured".to_string())
    }

    pub(crate) fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.take() {
            if let Ok(pgid) = i32::try_from(pid) {
                // SAFETY: kill(2) with a negative pid signals the process group we created with
                // process_group(0); it has no memory-safety preconditions.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
        }
    }

    pub(crate) async fn stderr(&mut self) -> String {
        match self.stderr.take() {
            Some(handle) => tokio::time::timeout(Duration::from_secs(2), handle)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default(),
            None => String::new(),
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
        if let Some(handle) = self.stderr.take() {
            handle.abort();
        }
    }
}

#[async_trait::async_trait]
impl Agent for CommandAgent {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let mut kill = GroupKill::default();
        let outcome = match tokio::time::timeout(self.timeout, self.run(&request, &mut kill)).await
        {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "`{}` did not finish within {:?} and was killed; raise the timeout with \
                 CommandAgent::timeout or `timeout` under [agent] in niceeval.toml",
                self.display(),
                self.timeout
            )),
        };
        kill.kill();
        let stderr = kill.stderr().await;
        *self.last_stderr.lock().unwrap_or_else(|p| p.into_inner()) = stderr.clone();
        outcome.map_err(|message| with_stderr(message, &stderr))
    }

    fn name(&self) -> String {
        format!("command `{}`", self.display())
    }
}

/// The error of a failed turn: `message`, then the end of the program's stderr (or a note that
/// it was empty), where a program says what went wrong. Shared by the subprocess agents.
pub(crate) fn with_stderr(message: String, stderr: &str) -> AgentError {
    let stderr = stderr.trim();
    AgentError::new(if stderr.is_empty() {
        format!("{message} (stderr was empty)")
    } else {
        format!("{message}; stderr:\n{stderr}")
    })
}

/// `env = { KEY = "value", .. }` under `[agent]`: the pairs, or an error naming the file and the
/// key at fault. Shared by the subprocess agents' settings.
pub(crate) fn env_setting(
    value: &toml::Value,
    file: &str,
) -> Result<Vec<(String, String)>, String> {
    let table = value
        .as_table()
        .ok_or_else(|| format!("{file}: [agent] env must be a table of strings"))?;
    table
        .iter()
        .map(|(k, v)| {
            v.as_str()
                .map(|v| (k.clone(), v.to_string()))
                .ok_or_else(|| format!("{file}: [agent] env.{k} must be a string"))
        })
        .collect()
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

/// Reads `stdout` line by line as it arrives and hands each line (without its `\n`) and its
/// 1-based number to `on_line`, stopping at the first error it returns. Fails past
/// `max_output` bytes without buffering more than that (the message says to raise it with
/// `raise_with`). Shared by the subprocess agents.
pub(crate) async fn read_lines(
    stdout: impl AsyncRead + Unpin,
    max_output: usize,
    raise_with: &str,
    mut on_line: impl FnMut(&[u8], usize) -> Result<(), String>,
) -> Result<(), String> {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    let mut total = 0usize;
    let mut number = 0usize;
    loop {
        let buffer = reader
            .fill_buf()
            .await
            .map_err(|e| format!("cannot read stdout: {e}"))?;
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
            return Err(format!(
                "the program printed more than {} on stdout, the limit for one turn; reading \
                 stopped (raise it with {raise_with})",
                human_bytes(max_output)
            ));
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

async fn read_tail(mut stream: impl AsyncRead + Unpin, keep: usize) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut dropped = false;
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > keep * 2 {
            let cut = tail.len() - keep;
            tail.drain(..cut);
            dropped = true;
        }
    }
    if tail.len() > keep {
        let cut = tail.len() - keep;
        tail.drain(..cut);
        dropped = true;
    }
    let text = String::from_utf8_lossy(&tail).into_owned();
    if dropped {
        format!("[…earlier stderr elided…]\n{text}")
    } else {
        text
    }
}

pub(crate) fn human_bytes(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes % 1024 == 0 {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// Builds a command agent from `[agent]` settings: `command` (a string run by the shell, or an
/// array run directly), `input` (`stdin`, `json` or `arg`), `timeout`, `cwd` (relative to
/// niceeval.toml's directory, which is also the default), `max_output` (bytes), `env` (a table).
pub(crate) fn from_settings(
    settings: &std::collections::BTreeMap<String, toml::Value>,
    file: &str,
    base: &std::path::Path,
) -> Result<CommandAgent, String> {
    let mut agent = match settings.get("command") {
        Some(toml::Value::String(script)) => CommandAgent::shell(script.clone()),
        Some(toml::Value::Array(items)) => {
            let argv: Option<Vec<String>> = items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect();
            match argv.as_deref() {
                Some([program, args @ ..]) => CommandAgent::new(program.clone(), args.to_vec()),
                _ => {
                    return Err(format!(
                        "{file}: [agent] command must be a non-empty array of strings, e.g. [\"python3\", \"agent.py\"]"
                    ));
                }
            }
        }
        _ => {
            return Err(format!(
                "{file}: [agent] type = \"command\" needs `command = [\"python3\", \"agent.py\"]` (or a shell string)"
            ));
        }
    };
    for (key, value) in settings {
        agent = match key.as_str() {
            "command" => agent,
            "input" => agent.input_mode(match value.as_str() {
                Some("stdin") => InputMode::Stdin,
                Some("json") => InputMode::Json,
                Some("arg") => InputMode::Arg,
                _ => {
                    return Err(format!(
                        "{file}: [agent] input must be \"stdin\", \"json\" or \"arg\""
                    ));
                }
            }),
            "timeout" => {
                let text = value.as_str().ok_or_else(|| {
                    format!("{file}: [agent] timeout must be a string such as \"30s\"")
                })?;
                agent.timeout(
                    crate::config::parse_duration(text)
                        .map_err(|e| format!("{file}: [agent] timeout: {e}"))?,
                )
            }
            "cwd" => agent.current_dir(
                base.join(
                    value
                        .as_str()
                        .ok_or_else(|| format!("{file}: [agent] cwd must be a path string"))?,
                ),
            ),
            "max_output" => agent.max_output(
                value
                    .as_integer()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| {
                        format!("{file}: [agent] max_output must be a number of bytes")
                    })?,
            ),
            "env" => env_setting(value, file)?
                .into_iter()
                .fold(agent, |agent, (k, v)| agent.env(k, v)),
            other => {
                return Err(format!(
                    "{file}: [agent] unknown key {other:?} for type = \"command\"; known keys: command, input, timeout, cwd, max_output, env"
                ));
            }
        };
    }
    if agent.cwd.is_none() {
        agent = agent.current_dir(base);
    }
    Ok(agent)
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
    fn stderr_keeps_the_tail() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut data = vec![b'a'; 100];
        data.extend_from_slice(b"END");
        let tail = rt.block_on(read_tail(&data[..], 10));
        assert!(
            tail.ends_with("aaaaaaaEND") && tail.contains("elided"),
            "{tail}"
        );
    }

    #[test]
    fn settings_are_validated() {
        let base = std::path::Path::new("/cfg");
        let mut s = std::collections::BTreeMap::new();
        let err = from_settings(&s, "n.toml", base).unwrap_err();
        assert!(err.contains("needs `command"), "{err}");
        s.insert(
            "command".into(),
            toml::Value::Array(vec!["python3".into(), "a.py".into()]),
        );
        s.insert("input".into(), toml::Value::String("json".into()));
        s.insert("timeout".into(), toml::Value::String("5s".into()));
        let agent = from_settings(&s, "n.toml", base).unwrap();
        assert_eq!(agent.input, InputMode::Json);
        assert_eq!(agent.timeout, Duration::from_secs(5));
        assert_eq!(agent.cwd.as_deref(), Some(base));
        s.insert("inptu".into(), toml::Value::String("x".into()));
        assert!(
            from_settings(&s, "n.toml", base)
                .unwrap_err()
                .contains("unknown key \"inptu\"")
        );
    }
}
