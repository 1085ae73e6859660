//! OpenAI's Codex CLI as the agent under test: each turn runs `codex exec --json` in the run's
//! working copy and maps its event stream to niceeval events.
//!
//! | Codex (`codex exec --json`)                         | niceeval event                                   |
//! |-----------------------------------------------------|--------------------------------------------------|
//! | `command_execution` item                            | `action.called` `command_execution` (`{"command"}`) and `action.result` (`{"exit_code", "output"}`): `failed` on a non-zero exit code or status `failed`, `rejected` when `declined` |
//! | `file_change` item                                  | one `file_change` action per changed file (input `{"path", "kind"}`: `add` is a file write, `update` an edit, `delete` a deletion) |
//! | `mcp_tool_call` item                                | an action named `mcp__<server>__<tool>` with the call's arguments; `failed` when the server reports an error |
//! | `web_search` item                                   | an action named `web_search` (`{"query", "action"}`) |
//! | `agent_message` item                                | an assistant `message`                           |
//! | `reasoning` item                                    | `thinking`                                       |
//! | `turn.completed`                                    | `usage` (cached input tokens are part of the input tokens, counted once; model `openai/<model>` when set with [`Codex::model`]). Codex reports the thread's running totals, so a resumed turn's usage is its totals minus those after the thread's previous turn |
//! | `turn.failed`, or `error` with no `turn.completed`  | the turn fails with Codex's message              |
//! | anything else (`todo_list`, `plan`, `error` notices, unknown frames and items) | `custom` named `codex:<type>` carrying the frame or item |
//!
//! Tools start with `action.called` on `item.started` and end with `action.result` on
//! `item.completed`; an item that only completes gets both. Events are recorded as they
//! arrive, so a crash or a timeout keeps what came before it.
//!
//! **Sessions.** The first turn of a niceeval session starts a new Codex thread; later turns of
//! the same session (`request.session`) run `codex exec resume <thread id>`, so Codex sees the
//! whole conversation. A new session (`t.new_session()`) starts a new thread. Resuming reads
//! the thread from `CODEX_HOME`: do not pass `--ephemeral` to an eval that sends twice.
//!
//! **The command line.** `codex exec --json --skip-git-repo-check` (the working copy need not
//! be a Git repository) with `--model`, `-c sandbox_mode=..`, `-c approval_policy=..` (default
//! `never`: nothing can answer an approval prompt in an eval), every [`Codex::config`] override
//! as `-c key=value`, then [`Codex::args`], and the prompt on stdin (`-`). The program is
//! started with [`Request::command`]: in the run's working copy under the workspace's isolation
//! when the eval has a workspace, in the current directory otherwise; as a process tree of its
//! own, ended whole when the turn ends or times out (600 s by default).
//!
//! **Sandboxes.** Unless [`Codex::sandbox`] says otherwise, Codex's commands may write in the
//! working directory only (`workspace-write`, Codex's own Linux sandbox). Under a workspace with
//! `isolation = "bubblewrap"` the default is `danger-full-access` instead: the working copy is
//! isolated already and Codex's sandbox cannot start inside another one. Codex writes its
//! sessions under `CODEX_HOME` (`~/.codex` by default), which must be writable where Codex runs;
//! and on Linux, a `CODEX_HOME` under `/tmp` keeps Codex from installing the helper its
//! `workspace-write` sandbox needs.
//!
//! **The turn fails** — the error ends with the tail of Codex's stderr — when Codex reports a
//! failed turn, exits non-zero or by a signal, ends without completing the turn, prints a line
//! that is not a JSON event (the message names the line number), or runs past its timeout.
//!
//! API keys come from the environment only (Codex reads `OPENAI_API_KEY`, or the `env_key` of
//! a custom model provider, or its own login under `CODEX_HOME`); niceeval never passes one on
//! the command line.
//!
//! ```no_run
//! use std::time::Duration;
//! use niceeval::agent::codex::{ApprovalPolicy, Codex, SandboxMode};
//!
//! let agent = Codex::new()
//!     .model("gpt-5.5")
//!     .sandbox(SandboxMode::WorkspaceWrite)
//!     .approval_policy(ApprovalPolicy::Never)
//!     .config("model_reasoning_effort", "low")
//!     .timeout(Duration::from_secs(900));
//! # let _ = agent;
//! ```
//!
//! In `niceeval.toml`:
//!
//! ```toml
//! [agent]
//! type = "codex"
//! model = "gpt-5.5"
//! sandbox = "workspace-write"          # read-only | workspace-write | danger-full-access
//! approval_policy = "never"            # untrusted | on-failure | on-request | never
//! timeout = "10m"
//! config = { model_reasoning_effort = "low" }   # extra `-c key=value` overrides
//! args = ["--add-dir", "/srv/shared"]       # more options, before the prompt
//! program = "codex"
//! env = { CODEX_HOME = "/var/lib/evals/codex-home" }
//! ```

mod stream;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agents::agent::subprocess::{
    ProcessAgent, Turn, TurnError, exit_error, process_setters, read_lines,
};
use crate::agents::agent::{Agent, AgentError, Request};

use stream::{Stream, Totals};

/// The Codex thread of a niceeval session.
#[derive(Debug, Clone)]
struct Thread {
    id: String,
    /// The thread's token totals after its last completed turn.
    totals: Totals,
}

/// Default per-turn timeout: coding tasks take minutes.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The most one turn may print on stdout.
const MAX_OUTPUT: usize = 64 * 1024 * 1024;

/// Where Codex may write when it runs commands (`-c sandbox_mode=..`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SandboxMode {
    /// Commands may read, not write.
    ReadOnly,
    /// Commands may write in the working directory (the default, but under bubblewrap).
    #[default]
    WorkspaceWrite,
    /// No sandbox: for a working copy that is isolated already (a container, bubblewrap).
    DangerFullAccess,
}

impl SandboxMode {
    /// The name Codex uses (`read-only`, `workspace-write`, `danger-full-access`).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }
}

/// When Codex stops to ask before running a command (`-c approval_policy=..`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ApprovalPolicy {
    /// Ask before anything but known-safe read-only commands.
    Untrusted,
    /// Ask when a sandboxed command fails.
    OnFailure,
    /// The model decides when to ask.
    OnRequest,
    /// Never ask (the default: nothing answers a prompt during an eval).
    #[default]
    Never,
}

impl ApprovalPolicy {
    /// The name Codex uses (`untrusted`, `on-failure`, `on-request`, `never`).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Untrusted => "untrusted",
            ApprovalPolicy::OnFailure => "on-failure",
            ApprovalPolicy::OnRequest => "on-request",
            ApprovalPolicy::Never => "never",
        }
    }
}

/// The Codex CLI (`codex exec --json`) as an [`Agent`]. See the module docs.
#[derive(Clone)]
#[must_use = "a Codex agent does nothing until an eval sends it input"]
pub struct Codex {
    process: ProcessAgent,
    model: Option<String>,
    /// `None`: `workspace-write`, or `danger-full-access` inside niceeval's bubblewrap.
    sandbox: Option<SandboxMode>,
    approval: ApprovalPolicy,
    config: Vec<(String, String)>,
    /// Codex thread per niceeval session.
    threads: Arc<Mutex<HashMap<String, Thread>>>,
}

impl std::fmt::Debug for Codex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Codex")
            .field("program", &self.process.program)
            .field("model", &self.model)
            .field("sandbox", &self.sandbox)
            .field("approval_policy", &self.approval)
            .field("config", &self.config)
            .field("args", &self.process.args)
            .field("timeout", &self.process.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for Codex {
    fn default() -> Self {
        Codex::new()
    }
}

impl Codex {
    /// Runs `codex` from `PATH` with Codex's configured model, sandbox `workspace-write` and
    /// approval policy `never`.
    pub fn new() -> Codex {
        Codex {
            process: ProcessAgent::new("codex", Vec::new(), DEFAULT_TIMEOUT, "Codex"),
            model: None,
            sandbox: None,
            approval: ApprovalPolicy::default(),
            config: Vec::new(),
            threads: Arc::default(),
        }
    }

    /// The model (`--model`); usage events name it `openai/<model>` so the price table can
    /// price them.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Where Codex's commands may write. Unset, it is `workspace-write`, or
    /// `danger-full-access` when the eval's workspace runs under `bubblewrap` isolation: the
    /// working copy is isolated already, and Codex's own sandbox cannot start inside it.
    pub fn sandbox(mut self, mode: SandboxMode) -> Self {
        self.sandbox = Some(mode);
        self
    }

    /// When Codex asks before running a command.
    pub fn approval_policy(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// One more configuration override, passed as `-c key=value`: `value` is TOML
    /// (`"high"` becomes `key="high"`, `5` stays `key=5`, tables and arrays are written inline).
    pub fn config(mut self, key: impl Into<String>, value: impl Into<toml::Value>) -> Self {
        self.config.push((key.into(), toml_inline(&value.into())));
        self
    }

    /// The Codex thread of a niceeval session, once its first turn started one.
    pub fn thread_id(&self, session: &str) -> Option<String> {
        self.threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .map(|thread| thread.id.clone())
    }

    /// The sandbox mode for a turn in `sandbox` (the eval's workspace, if any).
    fn sandbox_for(&self, sandbox: Option<&crate::resources::workspace::Sandbox>) -> SandboxMode {
        self.sandbox
            .unwrap_or_else(|| match sandbox.map(|s| s.isolation()) {
                Some(crate::config::Isolation::Bubblewrap) => SandboxMode::DangerFullAccess,
                _ => SandboxMode::WorkspaceWrite,
            })
    }

    /// The arguments after the program for a turn: `resume` is the thread to continue,
    /// `sandbox` the mode for Codex's commands.
    fn arguments(&self, resume: Option<&str>, sandbox: SandboxMode) -> Vec<String> {
        let mut argv = vec!["exec".to_string()];
        if resume.is_some() {
            argv.push("resume".to_string());
        }
        argv.extend(["--json".to_string(), "--skip-git-repo-check".to_string()]);
        if let Some(model) = &self.model {
            argv.extend(["--model".to_string(), model.clone()]);
        }
        let mut config = vec![
            ("sandbox_mode".to_string(), quoted(sandbox.as_str())),
            (
                "approval_policy".to_string(),
                quoted(self.approval.as_str()),
            ),
        ];
        config.extend(self.config.iter().cloned());
        for (key, value) in config {
            argv.extend(["-c".to_string(), format!("{key}={value}")]);
        }
        argv.extend(self.process.args.iter().cloned());
        if let Some(thread) = resume {
            argv.push(thread.to_string());
        }
        // The prompt comes on stdin: no length limit, no confusion with an option.
        argv.push("-".to_string());
        argv
    }

    /// Reads one turn's stream into the request's events, keeps the session's thread, and
    /// reads Codex's exit.
    async fn run(
        &self,
        turn: Turn,
        request: &Request,
        resume: Option<&Thread>,
    ) -> Result<(), TurnError> {
        let Turn { mut child, stdout } = turn;
        let program = &self.process.program;
        let before = resume.map(|t| t.totals).unwrap_or_default();
        let mut stream = Stream::new(self.model.as_deref(), before);
        let read = read_lines(
            stdout,
            MAX_OUTPUT,
            "a shorter task; Codex's output is capped at 64 MiB per turn",
            |line, number| stream.line(line, number, &request.events),
        )
        .await;
        if let Some(id) = stream.thread_id() {
            let thread = Thread {
                id: id.to_string(),
                totals: stream.totals().unwrap_or(before),
            };
            self.threads
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(request.session.clone(), thread);
        }
        read?;
        let status = child.wait().await.map_err(|source| TurnError::Wait {
            shown: format!("`{program}`"),
            source,
        })?;
        let exit = exit_error(&format!("`{program} exec`"), status);
        // Codex's own account of the turn is the better reason; the exit status follows it.
        match (stream.finish(), exit) {
            (Ok(()), None) => Ok(()),
            (Ok(()), Some(exit)) => Err(TurnError::Failed(exit)),
            (Err(reason), None) => Err(TurnError::Failed(reason.to_string())),
            (Err(reason), Some(exit)) => Err(TurnError::Failed(format!("{reason} ({exit})"))),
        }
    }
}

process_setters!(Codex {
    args,
    program,
    timeout,
    env
});

#[async_trait::async_trait]
impl Agent for Codex {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let resume = self
            .threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&request.session)
            .cloned();
        let command = self.process.command(
            &request,
            self.arguments(
                resume.as_ref().map(|t| t.id.as_str()),
                self.sandbox_for(request.sandbox()),
            ),
            &[],
        );
        let program = &self.process.program;
        self.process
            .send(
                "codex",
                command,
                // The prompt goes on stdin (`-`).
                Some(request.input.text.clone().into_bytes()),
                |e| {
                    format!(
                        "cannot start `{program}`: {e}; install Codex (`npm install -g \
                         @openai/codex`) or set its path with Codex::program / `program` under \
                         [agent]"
                    )
                },
                |turn| self.run(turn, &request, resume.as_ref()),
            )
            .await
            .outcome
    }

    fn name(&self) -> String {
        match &self.model {
            Some(model) => format!("codex ({model})"),
            None => "codex".to_string(),
        }
    }
}

fn quoted(text: &str) -> String {
    toml_inline(&toml::Value::String(text.to_string()))
}

/// `value` as inline TOML, as `-c key=value` expects it.
fn toml_inline(value: &toml::Value) -> String {
    match value {
        toml::Value::Table(table) => {
            let fields: Vec<String> = table
                .iter()
                .map(|(k, v)| format!("{}={}", toml_key(k), toml_inline(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        toml::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(toml_inline).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn toml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_string()
    } else {
        toml_inline(&toml::Value::String(key.to_string()))
    }
}

/// Builds a Codex agent from `[agent] type = "codex"` (see the module docs).
pub(crate) fn from_config(config: &crate::config::CodexConfig) -> Codex {
    let mut agent = Codex::new().args(config.args.iter().cloned());
    agent.model = config.model.clone();
    use crate::config::{CodexApproval, CodexSandbox};
    if let Some(mode) = config.sandbox {
        agent.sandbox = Some(match mode {
            CodexSandbox::ReadOnly => SandboxMode::ReadOnly,
            CodexSandbox::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            CodexSandbox::DangerFullAccess => SandboxMode::DangerFullAccess,
        });
    }
    if let Some(policy) = config.approval_policy {
        agent.approval = match policy {
            CodexApproval::Untrusted => ApprovalPolicy::Untrusted,
            CodexApproval::OnFailure => ApprovalPolicy::OnFailure,
            CodexApproval::OnRequest => ApprovalPolicy::OnRequest,
            CodexApproval::Never => ApprovalPolicy::Never,
        };
    }
    for (key, value) in &config.config {
        agent = agent.config(key.clone(), value.clone());
    }
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
