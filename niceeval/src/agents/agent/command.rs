//! The command agent: runs a program per turn, hands it the input, and reads what it prints on
//! stdout: the [`Event`]s of the turn, one JSON object per line (the same JSONL as recorded
//! transcripts), or with [`CommandAgent::text_output`] (`[agent] output = "text"`) the reply
//! itself — the whole of stdout, less its final newline, is the turn's one assistant message, as
//! promptfoo's `exec:` provider reads a script.
//!
//! Each send starts the program afresh, as a process tree of its own. The input goes on stdin as
//! plain text (the default), on stdin as one JSON object (`{"input", "data", "session",
//! "history", "responding_to"}`), or as the last argument. `NICEEVAL_SESSION` holds the session
//! id. Events are recorded as they arrive, so a crash or a timeout keeps what came before it.
//! In an eval with a workspace the program runs in the run's working copy, under the
//! workspace's isolation (see [`crate::agents::agent::Request::command`]).
//!
//! **Script paths.** Inside an eval, a relative path to the agent's own code resolves against
//! the agent's directory ([`CommandAgent::current_dir`], or `cwd` under `[agent]`, which defaults
//! to the directory of `niceeval.toml`) or else the eval's crate directory — never against the
//! working copy the program runs in. Two arguments are script paths: the program itself when it
//! is a relative path with a `/` (`./agent.sh`, `agents/fixer.sh`; a bare name is looked up on
//! `PATH`), and the first argument that does not start with `-` when it is a relative path
//! naming an existing file there (`agents/fixer.py` in `["python3", "-u", "agents/fixer.py"]`).
//! Each is passed as an absolute path when that file exists; any other argument is passed as
//! written. Under `[workspace] isolation = "bubblewrap"` a program or script under `/tmp` (outside
//! the working copy) is an error before the turn runs: the sandbox's `/tmp` is a private one, in
//! which the program would not find it.
//!
//! The turn fails — with an `error` event whose message ends with the program's stderr — when
//! the program exits non-zero or by a signal, prints a line that is not an event (the message
//! names the line number; not with text output), prints more than the output cap (64 MiB by
//! default; reading stops, memory stays bounded), or runs past its timeout (120 s by default).
//! Whenever a turn ends, the whole process tree is ended (SIGTERM, then SIGKILL), so nothing it
//! started outlives the turn. The stderr of the last turn is kept ([`CommandAgent::last_stderr`]).
//!
//! ```no_run
//! use std::time::Duration;
//! use niceeval::agent::command::{CommandAgent, InputMode};
//!
//! let agent = CommandAgent::new("python3", ["agents/support.py"])
//!     .input_mode(InputMode::Json)
//!     .timeout(Duration::from_secs(30));
//! let scripted = CommandAgent::shell(r#"echo '{"type":"message","role":"assistant","text":"hi"}'"#);
//! // A script whose stdout is the reply.
//! let plain = CommandAgent::new("python3", ["agents/answer.py"]).text_output();
//! # let _ = (agent, scripted, plain);
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::agents::agent::subprocess::{
    ProcessAgent, Turn, TurnError, exit_error, process_setters, read_lines,
};
use crate::agents::agent::{Agent, AgentError, EventSink, Request};
use crate::base::event::Event;
use crate::config::CommandLine;

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
    /// Whether stdout is the reply as plain text (else JSONL events).
    text: bool,
    max_output: usize,
    last_stderr: Arc<Mutex<String>>,
}

impl std::fmt::Debug for CommandAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandAgent")
            .field("command", &self.display())
            .field("input", &self.input)
            .field("output", &if self.text { "text" } else { "jsonl" })
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
            text: false,
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

    /// Reads stdout as the reply itself rather than as JSONL events (`[agent] output = "text"`):
    /// when the program ends, everything it printed, less the final newline, is the turn's
    /// one assistant message (none when it printed nothing). The output cap, the exit status
    /// and the timeout apply as with events; a program that exits non-zero keeps its reply
    /// beside the error, one that runs past its timeout records none.
    ///
    /// ```no_run
    /// use niceeval::agent::command::CommandAgent;
    ///
    /// let agent = CommandAgent::new("python3", ["agents/answer.py"]).text_output();
    /// # let _ = agent;
    /// ```
    pub fn text_output(mut self) -> Self {
        self.text = true;
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
        let base = self
            .process
            .cwd
            .as_deref()
            .or(request.manifest_dir.as_deref());
        let (program, mut argv) = resolve_scripts(&self.process.program, &self.process.args, base);
        if let Some(sandbox) = request.sandbox.as_ref()
            && sandbox.isolation() == crate::config::Isolation::Bubblewrap
        {
            hidden_by_private_tmp(&program, &argv, sandbox.root(), base)?;
        }
        if self.input == InputMode::Arg {
            argv.push(request.input.text.clone());
        }
        let session = request.session.as_str();
        let mut process = self.process.clone();
        process.program = program;
        let command = process.command(&request, argv, &[("NICEEVAL_SESSION", session)]);
        let shown = format!("`{}`", self.display());
        let ended = process
            .send(
                &shown,
                command,
                self.stdin_payload(&request),
                |e| {
                    format!("cannot start {shown}: {e}; check the program exists and is executable")
                },
                |turn| async {
                    let Turn { mut child, stdout } = turn;
                    if self.text {
                        read_text(stdout, &request.events, self.max_output).await?;
                    } else {
                        read_events(stdout, &request.events, self.max_output).await?;
                    }
                    let status = child.wait().await.map_err(|source| TurnError::Wait {
                        shown: shown.clone(),
                        source,
                    })?;
                    exit_error(&shown, status).map_or(Ok(()), |e| Err(TurnError::Failed(e)))
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

/// The program and arguments of a turn with their script paths resolved against `base` (see
/// the module docs): the program when it is a relative path with a `/`, and the first argument
/// not starting with `-` when it is a relative path; each only when `base` holds that file.
fn resolve_scripts(program: &str, args: &[String], base: Option<&Path>) -> (String, Vec<String>) {
    let mut args = args.to_vec();
    let Some(base) = base else {
        return (program.to_string(), args);
    };
    let under_base = |path: &str| -> Option<String> {
        let relative = Path::new(path);
        if path.is_empty() || !relative.is_relative() {
            return None;
        }
        let absolute = base.join(relative);
        absolute
            .is_file()
            .then(|| absolute.to_string_lossy().into_owned())
    };
    let program = if program.contains('/') {
        under_base(program).unwrap_or_else(|| program.to_string())
    } else {
        program.to_string()
    };
    if let Some(script) = args.iter_mut().find(|a| !a.starts_with('-'))
        && let Some(absolute) = under_base(script)
    {
        *script = absolute;
    }
    (program, args)
}

/// The error of a program or script that bubblewrap's private `/tmp` hides: an existing file
/// under the host's `/tmp`, outside the working copy `root` (which is bound into the sandbox at
/// its own path). `base` is where relative script paths resolved, named when it is the cause.
fn hidden_by_private_tmp(
    program: &str,
    args: &[String],
    root: &Path,
    base: Option<&Path>,
) -> Result<(), AgentError> {
    let tmp = Path::new("/tmp");
    let script = args.iter().find(|a| !a.starts_with('-'));
    let hidden = std::iter::once(program)
        .chain(script.map(String::as_str))
        .map(PathBuf::from)
        .find(|p| p.starts_with(tmp) && !p.starts_with(root) && p.is_file());
    let Some(path) = hidden else {
        return Ok(());
    };
    let fix = match base {
        Some(base) if path.starts_with(base) && base.starts_with(tmp) => format!(
            "the directory it resolved against, {}, is itself under /tmp: move the crate out of \
             /tmp, or use [workspace] isolation = \"local\"",
            base.display()
        ),
        _ => "put it under the crate and name it by a relative path (resolved against the \
              crate's directory), or use [workspace] isolation = \"local\""
            .to_string(),
    };
    Err(AgentError::new(format!(
        "the command agent's {} {} is under /tmp, which [workspace] isolation = \"bubblewrap\" \
         replaces with a private /tmp: the program would not find it; {fix}",
        if path.as_os_str() == program {
            "program"
        } else {
            "script"
        },
        path.display()
    )))
}

/// Reads all of `stdout` (at most `max_output` bytes) as the turn's reply: one assistant
/// message of everything printed, less the final newline, emitted into `sink` at the end of
/// the output (none when nothing was printed).
async fn read_text(
    stdout: impl AsyncRead + Unpin,
    sink: &EventSink,
    max_output: usize,
) -> Result<(), TurnError> {
    let mut bytes = Vec::new();
    let limit = u64::try_from(max_output)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    stdout
        .take(limit)
        .read_to_end(&mut bytes)
        .await
        .map_err(TurnError::Read)?;
    if bytes.len() > max_output {
        return Err(TurnError::TooMuchOutput {
            limit: max_output,
            raise_with: RAISE_MAX_OUTPUT,
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = text
        .strip_suffix('\n')
        .map(|t| t.strip_suffix('\r').unwrap_or(t))
        .unwrap_or(&text);
    if !text.is_empty() {
        sink.say(text.to_string());
    }
    Ok(())
}

/// How an error says to raise the output limit.
const RAISE_MAX_OUTPUT: &str = "CommandAgent::max_output or `max_output` under [agent]";

/// Reads JSONL events from `stdout` into `sink` as they arrive. Fails on the first line that is
/// not an event, or past `max_output` bytes (without buffering more than that).
async fn read_events(
    stdout: impl AsyncRead + Unpin,
    sink: &EventSink,
    max_output: usize,
) -> Result<(), TurnError> {
    read_lines(stdout, max_output, RAISE_MAX_OUTPUT, |line, number| {
        parse_line(line, number, sink)
    })
    .await
}

fn parse_line(line: &[u8], number: usize, sink: &EventSink) -> Result<(), TurnError> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return Ok(());
    }
    let event: Event = serde_json::from_str(text).map_err(|source| TurnError::Line {
        message: format!(
            "stdout line {number} is not a niceeval event ({source}): {}; print one JSON object \
             per line with a \"type\" such as \"message\" or \"action.called\"",
            crate::base::excerpt::quote(text)
        ),
        source,
    })?;
    sink.emit(event);
    Ok(())
}

/// Builds a command agent from `[agent] type = "command"`; `base` is the directory of
/// `niceeval.toml`, against which `cwd` resolves (and the default directory).
pub(crate) fn from_config(
    config: &crate::config::CommandConfig,
    base: &std::path::Path,
    file: &str,
) -> Result<CommandAgent, crate::agents::agent::AgentConfigError> {
    let mut agent = match &config.command {
        CommandLine::Shell(script) => CommandAgent::shell(script.clone()),
        CommandLine::Argv(argv) => match argv.split_first() {
            Some((program, args)) => CommandAgent::new(program.clone(), args.to_vec()),
            None => {
                return Err(crate::agents::agent::AgentConfigError::EmptyCommand {
                    file: file.to_string(),
                });
            }
        },
    };
    use crate::config::{CommandInput, CommandOutput};
    agent.input = match config.input {
        None | Some(CommandInput::Stdin) => InputMode::Stdin,
        Some(CommandInput::Json) => InputMode::Json,
        Some(CommandInput::Arg) => InputMode::Arg,
    };
    agent.text = config.output == Some(CommandOutput::Text);
    if let Some(timeout) = &config.timeout {
        agent = agent.timeout(timeout.get());
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
        let err = rt
            .block_on(read_events(input, &sink, 1024))
            .unwrap_err()
            .to_string();
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
            .unwrap_err()
            .to_string();
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
                        from_config(&settings, base, "n.toml").unwrap()
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
        assert!(!parse("command = \"x\"\n").unwrap().text);
        assert!(!parse("command = \"x\"\noutput = \"jsonl\"\n").unwrap().text);
        assert!(parse("command = \"x\"\noutput = \"text\"\n").unwrap().text);
        let err = parse("command = \"x\"\noutput = \"txt\"\n").unwrap_err();
        assert!(
            err.contains(
                "n.toml:4:10: [agent] output: \"txt\" is not an output mode; did you mean \"text\"?"
            ),
            "{err}"
        );
    }

    #[test]
    fn text_output_is_the_whole_stdout_less_its_final_newline() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let reply = |input: &[u8]| {
            let sink = EventSink::default();
            rt.block_on(read_text(input, &sink, 1024)).unwrap();
            sink.snapshot()
        };
        assert_eq!(
            reply(b"not json\n{\"type\": \"x\"}\n\n  indented\n"),
            [Event::assistant(
                "not json\n{\"type\": \"x\"}\n\n  indented"
            )]
        );
        assert_eq!(reply(b"one line\r\n"), [Event::assistant("one line")]);
        assert_eq!(reply(b"no newline"), [Event::assistant("no newline")]);
        assert!(reply(b"").is_empty(), "nothing printed, no message");
        let err = rt
            .block_on(read_text(&[b'x'; 5000][..], &EventSink::default(), 4096))
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than 4 KiB"), "{err}");
    }

    #[test]
    fn script_paths_resolve_against_the_base_when_the_file_is_there() {
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("agents")).unwrap();
        std::fs::write(base.path().join("agents/fixer.py"), "").unwrap();
        std::fs::write(base.path().join("run.sh"), "").unwrap();
        let at = |p: &str| base.path().join(p).to_string_lossy().into_owned();
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let resolve =
            |program: &str, a: &[&str]| resolve_scripts(program, &args(a), Some(base.path()));
        // The first argument that is not an option, when the crate holds it.
        assert_eq!(
            resolve("python3", &["-u", "agents/fixer.py", "agents/fixer.py"]),
            (
                "python3".to_string(),
                args(&["-u", &at("agents/fixer.py"), "agents/fixer.py"])
            )
        );
        // A relative program with a folder part; a bare name stays a PATH lookup.
        assert_eq!(resolve("./run.sh", &[]).0, at("./run.sh"));
        assert_eq!(resolve("run.sh", &[]).0, "run.sh");
        // Absent files, absolute paths and non-paths are passed as written.
        assert_eq!(
            resolve("python3", &["agents/missing.py"]).1,
            args(&["agents/missing.py"])
        );
        assert_eq!(
            resolve("sh", &["-c", "agents/fixer.py"]).1,
            args(&["-c", &at("agents/fixer.py")])
        );
        assert_eq!(
            resolve("cat", &["/etc/hostname"]).1,
            args(&["/etc/hostname"])
        );
        assert_eq!(
            resolve("python3", &["agents"]).1,
            args(&["agents"]),
            "a directory is no script"
        );
        // Outside an eval nothing is resolved.
        assert_eq!(
            resolve_scripts("python3", &args(&["agents/fixer.py"]), None).1,
            args(&["agents/fixer.py"])
        );
    }

    #[test]
    fn a_script_under_tmp_is_hidden_by_bubblewraps_private_tmp() {
        let host = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
        let script = host.path().join("agent.py");
        std::fs::write(&script, "").unwrap();
        let script = script.to_string_lossy().into_owned();
        let copy = Path::new("/var/niceeval-copy");
        let err = hidden_by_private_tmp("python3", std::slice::from_ref(&script), copy, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "the command agent's script {script} is under /tmp, which [workspace] isolation = \"bubblewrap\" replaces with a private /tmp"
            )),
            "{err}"
        );
        assert!(err.contains("put it under the crate"), "{err}");
        assert!(err.contains("isolation = \"local\""), "{err}");
        let err = hidden_by_private_tmp(&script, &[], copy, Some(host.path()))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("the command agent's program /tmp/"),
            "{err}"
        );
        assert!(
            err.contains("is itself under /tmp: move the crate out of /tmp"),
            "{err}"
        );
        // Inside the working copy (bound at its own path), or not a file: nothing hidden.
        assert!(
            hidden_by_private_tmp("python3", std::slice::from_ref(&script), host.path(), None)
                .is_ok()
        );
        assert!(hidden_by_private_tmp("python3", &["/tmp/out.txt".into()], copy, None).is_ok());
        assert!(hidden_by_private_tmp("python3", &["-c".into(), script], copy, None).is_err());
    }
}
