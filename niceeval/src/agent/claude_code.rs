//! Claude Code as the agent under test: each turn runs `claude -p --output-format stream-json
//! --verbose` in the run's working copy and maps its stream to [`Event`](crate::Event)s.
//!
//! The program is built with [`Request::command`], so it runs in the eval's working copy
//! (`#[eval(workspace = ..)]`) under the workspace's isolation, in its own process group; the
//! whole group is killed when the turn ends, fails or times out (10 minutes by default). The
//! prompt is the last argument, after `--`.
//!
//! What the stream becomes (see the table in the `stream` module's source for every frame):
//! tool calls are `action.called`/`action.result` with Claude's tool names kept (`Bash`,
//! `Write`, `Edit`, `Read`, …; [`ActionKind`](crate::ActionKind) normalizes them, so
//! `no_failed_shell_commands` and `called_tool` work across agents), a result with `is_error`
//! is a `failed` action, `Task` is `subagent.called`/`subagent.completed`, `Skill` is
//! `skill.loaded`, text is the assistant `message`, thinking is `thinking`. The `result` frame's
//! per-model usage becomes `usage` events carrying the cost Claude Code reports
//! (`total_cost_usd`), which wins over the price table. A `result` with `is_error` or a subtype
//! other than `success` (`error_max_turns`, `error_during_execution`, an API error) adds an
//! `error` event with its message: the turn fails. Unknown frames are kept as `custom` events
//! named `claude-code:<type>`.
//!
//! The turn is an execution error (`Err`) when the program cannot start, prints a line that is
//! not JSON (the error names the line number), exits non-zero without a `result` frame, or runs
//! past the timeout; the error ends with the tail of its stderr.
//!
//! **Sessions.** The agent remembers Claude Code's `session_id` per niceeval session
//! ([`Request::session`]): a second `t.send(..)` runs with `--resume <id>` and continues the
//! conversation; after `t.new_session()` the next send starts a fresh one.
//!
//! **Environment.** API keys come from the environment only (`ANTHROPIC_API_KEY`, or whatever
//! Claude Code is logged in with); `ANTHROPIC_BASE_URL` points it at another endpoint. The agent
//! sets `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (no telemetry, error reports or update
//! checks during an eval). The default permission mode is `bypassPermissions`, since nobody is
//! there to approve a tool call and the working copy is a throwaway; Claude Code refuses it as
//! root unless `IS_SANDBOX=1`, which the agent then sets. Anything set with
//! [`ClaudeCode::env`] wins over these defaults.
//!
//! ```no_run
//! use std::time::Duration;
//! use niceeval::agent::claude_code::ClaudeCode;
//!
//! let agent = ClaudeCode::new()
//!     .model("claude-sonnet-4-5")
//!     .allowed_tools(["Bash", "Read", "Edit", "Write"])
//!     .append_system_prompt("Run the tests before you answer.")
//!     .max_turns(20)
//!     .timeout(Duration::from_secs(300));
//! # let _ = agent;
//! ```
//!
//! In `niceeval.toml`:
//!
//! ```toml
//! [agent]
//! type = "claude-code"
//! model = "claude-sonnet-4-5"
//! allowed_tools = ["Bash", "Read", "Edit", "Write"]
//! max_turns = 20
//! timeout = "5m"
//! ```

mod stream;

use std::collections::{BTreeMap, HashMap};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agent::command::{GroupKill, env_setting, read_lines, signal_note, with_stderr};
use crate::agent::{Agent, AgentError, Request};

use stream::{Ending, Stream};

/// Default per-turn timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The permission mode used unless [`ClaudeCode::permission_mode`] says otherwise.
pub const DEFAULT_PERMISSION_MODE: &str = "bypassPermissions";

/// Most a turn may print on stdout.
const MAX_OUTPUT: usize = 256 * 1024 * 1024;

/// Claude Code (`claude -p`) as an agent. See the module docs.
#[derive(Clone)]
#[must_use = "a ClaudeCode agent does nothing until an eval sends it input"]
pub struct ClaudeCode {
    program: String,
    model: Option<String>,
    allowed_tools: Vec<String>,
    disallowed_tools: Vec<String>,
    permission_mode: Option<String>,
    system_prompt: Option<String>,
    append_system_prompt: Option<String>,
    max_turns: Option<u32>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
    /// niceeval session → Claude Code session id.
    sessions: Arc<Mutex<HashMap<String, String>>>,
}

impl Default for ClaudeCode {
    fn default() -> Self {
        ClaudeCode::new()
    }
}

impl std::fmt::Debug for ClaudeCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaudeCode")
            .field("program", &self.program)
            .field("model", &self.model)
            .field("permission_mode", &self.effective_permission_mode())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ClaudeCode {
    /// Runs `claude` from `PATH` with Claude Code's default model.
    pub fn new() -> ClaudeCode {
        ClaudeCode {
            program: "claude".to_string(),
            model: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            permission_mode: None,
            system_prompt: None,
            append_system_prompt: None,
            max_turns: None,
            args: Vec::new(),
            env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            sessions: Arc::default(),
        }
    }

    /// The model (`--model`): an alias such as `sonnet` or a full name.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Tools allowed without asking (`--allowedTools`), e.g. `"Bash(git diff:*)"`.
    pub fn allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Tools the agent may not use (`--disallowedTools`).
    pub fn disallowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.disallowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// The permission mode (`--permission-mode`): `bypassPermissions` (the default here),
    /// `acceptEdits`, `default`, `plan`, … With `default`, tool calls that need approval fail.
    pub fn permission_mode(mut self, mode: impl Into<String>) -> Self {
        self.permission_mode = Some(mode.into());
        self
    }

    /// Replaces Claude Code's system prompt (`--system-prompt`).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Appends to Claude Code's system prompt (`--append-system-prompt`).
    pub fn append_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.append_system_prompt = Some(prompt.into());
        self
    }

    /// The most agentic turns per send (`--max-turns`); reaching it fails the turn.
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns);
        self
    }

    /// Extra arguments, placed before the prompt.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The program to run (default `claude` from `PATH`).
    pub fn program(mut self, program: impl Into<String>) -> Self {
        self.program = program.into();
        self
    }

    /// The per-turn timeout; the process group is killed when it passes.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets an environment variable for the program (wins over the agent's defaults).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    fn effective_permission_mode(&self) -> &str {
        self.permission_mode
            .as_deref()
            .unwrap_or(DEFAULT_PERMISSION_MODE)
    }

    /// The arguments of one turn, prompt last.
    fn argv(&self, prompt: &str, resume: Option<&str>) -> Vec<String> {
        let mut argv: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut option = |flag: &str, value: &str| {
            argv.push(flag.to_string());
            argv.push(value.to_string());
        };
        if let Some(model) = &self.model {
            option("--model", model);
        }
        option("--permission-mode", self.effective_permission_mode());
        if !self.allowed_tools.is_empty() {
            option("--allowedTools", &self.allowed_tools.join(","));
        }
        if !self.disallowed_tools.is_empty() {
            option("--disallowedTools", &self.disallowed_tools.join(","));
        }
        if let Some(prompt) = &self.system_prompt {
            option("--system-prompt", prompt);
        }
        if let Some(prompt) = &self.append_system_prompt {
            option("--append-system-prompt", prompt);
        }
        if let Some(turns) = self.max_turns {
            option("--max-turns", &turns.to_string());
        }
        if let Some(id) = resume {
            option("--resume", id);
        }
        argv.extend(self.args.iter().cloned());
        argv.push("--".to_string());
        argv.push(prompt.to_string());
        argv
    }

    /// The command line for errors: the program and its options, not the prompt.
    fn display(&self) -> String {
        match &self.model {
            Some(model) => format!("{} -p --model {model}", self.program),
            None => format!("{} -p", self.program),
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn run(
        &self,
        request: &Request,
        stream: &mut Stream,
        kill: &mut GroupKill,
    ) -> Result<(), String> {
        let resume = self.sessions().get(&request.session).cloned();
        let mut command = request.command(&self.program);
        command
            .args(self.argv(&request.input.text, resume.as_deref()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        if self.effective_permission_mode() == "bypassPermissions" && running_as_root() {
            command.env("IS_SANDBOX", "1");
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| {
            format!(
                "cannot start `{}`: {e}; install Claude Code (`npm install -g \
                 @anthropic-ai/claude-code`) or set the program's path with ClaudeCode::program \
                 or `program` under [agent]",
                self.program
            )
        })?;
        let stdout = kill.watch(&mut child, None)?;
        let sink = &request.events;
        read_lines(
            stdout,
            MAX_OUTPUT,
            "a shorter task; Claude Code's output is capped at 64 MiB per turn",
            |line, number| {
                for event in stream.line(&String::from_utf8_lossy(line), number)? {
                    sink.emit(event);
                }
                Ok(())
            },
        )
        .await?;
        let status = child
            .wait()
            .await
            .map_err(|e| format!("cannot wait for `{}`: {e}", self.display()))?;
        if status.success() || matches!(stream.ending(), Some(Ending::Failed(_))) {
            // A failed `result` already recorded its error event; Claude Code exits 1 after it.
            return Ok(());
        }
        Err(match status.code() {
            Some(code) => format!(
                "`{}` exited with status {code} without a result",
                self.display()
            ),
            None => format!(
                "`{}` was terminated{}",
                self.display(),
                signal_note(&status)
            ),
        })
    }
}

#[cfg(unix)]
fn running_as_root() -> bool {
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(unix))]
fn running_as_root() -> bool {
    false
}

#[async_trait::async_trait]
impl Agent for ClaudeCode {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let mut kill = GroupKill::default();
        let mut stream = Stream::default();
        let outcome =
            match tokio::time::timeout(self.timeout, self.run(&request, &mut stream, &mut kill))
                .await
            {
                Ok(outcome) => outcome,
                Err(_) => Err(format!(
                    "`{}` did not finish within {:?} and was killed; raise the timeout with \
                     ClaudeCode::timeout or `timeout` under [agent] in niceeval.toml",
                    self.display(),
                    self.timeout
                )),
            };
        kill.kill();
        for event in stream.finish() {
            request.events.emit(event);
        }
        if let Some(id) = stream.session_id() {
            self.sessions()
                .insert(request.session.clone(), id.to_string());
        }
        let stderr = kill.stderr().await;
        outcome.map_err(|message| with_stderr(message, &stderr))
    }

    fn name(&self) -> String {
        match &self.model {
            Some(model) => format!("claude-code ({model})"),
            None => "claude-code".to_string(),
        }
    }
}

/// Builds the agent from `[agent]` settings (`type = "claude-code"`): `model`, `allowed_tools`,
/// `disallowed_tools` (arrays of strings), `permission_mode`, `system_prompt`,
/// `append_system_prompt`, `max_turns`, `args` (array), `program`, `timeout` (`"5m"`), `env` (a
/// table of strings).
pub(crate) fn from_settings(
    settings: &BTreeMap<String, toml::Value>,
    file: &str,
) -> Result<ClaudeCode, String> {
    let mut agent = ClaudeCode::new();
    let string = |key: &str, value: &toml::Value| {
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{file}: [agent] {key} must be a string"))
    };
    let strings = |key: &str, value: &toml::Value| {
        value
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                format!(
                    "{file}: [agent] {key} must be an array of strings, e.g. [\"Bash\", \"Edit\"]"
                )
            })
    };
    for (key, value) in settings {
        agent = match key.as_str() {
            "model" => agent.model(string(key, value)?),
            "allowed_tools" => agent.allowed_tools(strings(key, value)?),
            "disallowed_tools" => agent.disallowed_tools(strings(key, value)?),
            "permission_mode" => agent.permission_mode(string(key, value)?),
            "system_prompt" => agent.system_prompt(string(key, value)?),
            "append_system_prompt" => agent.append_system_prompt(string(key, value)?),
            "max_turns" => agent.max_turns(
                value
                    .as_integer()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        format!("{file}: [agent] max_turns must be a positive whole number")
                    })?,
            ),
            "args" => agent.args(strings(key, value)?),
            "program" => agent.program(string(key, value)?),
            "timeout" => {
                let text = value.as_str().ok_or_else(|| {
                    format!("{file}: [agent] timeout must be a string such as \"5m\"")
                })?;
                agent.timeout(
                    crate::config::parse_duration(text)
                        .map_err(|e| format!("{file}: [agent] timeout: {e}"))?,
                )
            }
            "env" => env_setting(value, file)?
                .into_iter()
                .fold(agent, |agent, (k, v)| agent.env(k, v)),
            other => {
                return Err(format!(
                    "{file}: [agent] unknown key {other:?} for type = \"claude-code\"; known keys: \
                     model, allowed_tools, disallowed_tools, permission_mode, system_prompt, \
                     append_system_prompt, max_turns, args, program, timeout, env"
                ));
            }
        };
    }
    Ok(agent)
}

#[cfg(test)]
mod tests;
