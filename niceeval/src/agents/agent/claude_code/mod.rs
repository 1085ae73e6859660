//! Claude Code as the agent under test: each turn runs `claude -p --output-format stream-json
//! --verbose` in the run's working copy and maps its stream to [`Event`](crate::Event)s.
//!
//! The program is built with [`Request::command`], so it runs in the eval's working copy
//! (`#[eval(workspace = ..)]`) under the workspace's isolation, as a process tree of its own;
//! the whole tree — the commands of its Bash tool included, which run in sessions of their
//! own — is ended when the turn ends, fails or times out (10 minutes by default). The
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agents::agent::subprocess::{
    ProcessAgent, Turn, TurnError, exit_error, process_setters, read_lines,
};
use crate::agents::agent::{Agent, AgentError, EventSink, Request};

use stream::{Ending, Stream};

/// Default per-turn timeout.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The permission mode used unless [`ClaudeCode::permission_mode`] says otherwise.
pub(crate) const DEFAULT_PERMISSION_MODE: &str = "bypassPermissions";

/// Most a turn may print on stdout.
const MAX_OUTPUT: usize = 256 * 1024 * 1024;

/// Claude Code (`claude -p`) as an agent. See the module docs.
#[derive(Clone)]
#[must_use = "a ClaudeCode agent does nothing until an eval sends it input"]
pub struct ClaudeCode {
    process: ProcessAgent,
    model: Option<String>,
    allowed_tools: Vec<String>,
    disallowed_tools: Vec<String>,
    permission_mode: Option<String>,
    system_prompt: Option<String>,
    append_system_prompt: Option<String>,
    max_turns: Option<u32>,
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
            .field("program", &self.process.program)
            .field("model", &self.model)
            .field("permission_mode", &self.effective_permission_mode())
            .field("timeout", &self.process.timeout)
            .finish_non_exhaustive()
    }
}

impl ClaudeCode {
    /// Runs `claude` from `PATH` with Claude Code's default model.
    pub fn new() -> ClaudeCode {
        ClaudeCode {
            process: ProcessAgent::new("claude", Vec::new(), DEFAULT_TIMEOUT, "ClaudeCode"),
            model: None,
            allowed_tools: Vec::new(),
            disallowed_tools: Vec::new(),
            permission_mode: None,
            system_prompt: None,
            append_system_prompt: None,
            max_turns: None,
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
        argv.extend(self.process.args.iter().cloned());
        argv.push("--".to_string());
        argv.push(prompt.to_string());
        argv
    }

    /// The command line for errors: the program and its options, not the prompt.
    fn display(&self) -> String {
        match &self.model {
            Some(model) => format!("{} -p --model {model}", self.process.program),
            None => format!("{} -p", self.process.program),
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads one turn's stream into `sink` and reads the program's exit.
    async fn run(
        &self,
        turn: Turn,
        stream: &mut Stream,
        sink: &EventSink,
    ) -> Result<(), TurnError> {
        let Turn { mut child, stdout } = turn;
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
        let status = child.wait().await.map_err(|source| TurnError::Wait {
            shown: format!("`{}`", self.display()),
            source,
        })?;
        if matches!(stream.ending(), Some(Ending::Failed(_))) {
            // A failed `result` already recorded its error event; Claude Code exits 1 after it.
            return Ok(());
        }
        match exit_error(&format!("`{}`", self.display()), status) {
            Some(error) if status.code().is_some() => {
                Err(TurnError::Failed(format!("{error} without a result")))
            }
            other => other.map_or(Ok(()), |e| Err(TurnError::Failed(e))),
        }
    }
}

process_setters!(ClaudeCode {
    args,
    program,
    timeout,
    env
});

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
        let resume = self.sessions().get(&request.session).cloned();
        let root = self.effective_permission_mode() == "bypassPermissions" && running_as_root();
        let mut defaults = vec![("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")];
        if root {
            defaults.push(("IS_SANDBOX", "1"));
        }
        let command = self.process.command(
            &request,
            self.argv(&request.input.text, resume.as_deref()),
            &defaults,
        );
        let mut stream = Stream::default();
        let program = &self.process.program;
        let ended = self
            .process
            .send(
                &format!("`{}`", self.display()),
                command,
                None,
                |e| {
                    format!(
                        "cannot start `{program}`: {e}; install Claude Code (`npm install -g \
                         @anthropic-ai/claude-code`) or set the program's path with \
                         ClaudeCode::program or `program` under [agent]"
                    )
                },
                |turn| self.run(turn, &mut stream, &request.events),
            )
            .await;
        for event in stream.finish() {
            request.events.emit(event);
        }
        if let Some(id) = stream.session_id() {
            self.sessions()
                .insert(request.session.clone(), id.to_string());
        }
        ended.outcome
    }

    fn name(&self) -> String {
        match &self.model {
            Some(model) => format!("claude-code ({model})"),
            None => "claude-code".to_string(),
        }
    }
}

/// Builds the agent from `[agent] type = "claude-code"`.
pub(crate) fn from_config(config: &crate::config::ClaudeCodeConfig) -> ClaudeCode {
    let mut agent = ClaudeCode::new().args(config.args.iter().cloned());
    agent.model = config.model.clone();
    agent.allowed_tools = config.allowed_tools.clone().unwrap_or_default();
    agent.disallowed_tools = config.disallowed_tools.clone().unwrap_or_default();
    agent.permission_mode = config.permission_mode.clone();
    agent.system_prompt = config.system_prompt.clone();
    agent.append_system_prompt = config.append_system_prompt.clone();
    agent.max_turns = config.max_turns;
    super::process_keys(
        &mut agent.process,
        config.program.as_ref(),
        config.timeout.as_ref(),
        &config.env,
    );
    agent
}

#[cfg(test)]
mod tests;
