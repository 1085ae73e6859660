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
//! when the eval has a workspace, in the current directory otherwise; in its own process group,
//! killed whole when the turn ends or times out (600 s by default).
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
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agent::command::{GroupKill, env_setting, read_lines, signal_note, with_stderr};
use crate::agent::{Agent, AgentError, Request};

use stream::{Stream, Totals};

/// The Codex thread of a niceeval session.
#[derive(Debug, Clone)]
struct Thread {
    id: String,
    /// The thread's token totals after its last completed turn.
    totals: Totals,
}

/// Default per-turn timeout: coding tasks take minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

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

    fn parse(text: &str) -> Option<SandboxMode> {
        [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::DangerFullAccess,
        ]
        .into_iter()
        .find(|m| m.as_str() == text)
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

    fn parse(text: &str) -> Option<ApprovalPolicy> {
        [
            ApprovalPolicy::Untrusted,
            ApprovalPolicy::OnFailure,
            ApprovalPolicy::OnRequest,
            ApprovalPolicy::Never,
        ]
        .into_iter()
        .find(|p| p.as_str() == text)
    }
}

/// The Codex CLI (`codex exec --json`) as an [`Agent`]. See the module docs.
#[derive(Clone)]
#[must_use = "a Codex agent does nothing until an eval sends it input"]
pub struct Codex {
    program: String,
    model: Option<String>,
    /// `None`: `workspace-write`, or `danger-full-access` inside niceeval's bubblewrap.
    sandbox: Option<SandboxMode>,
    approval: ApprovalPolicy,
    config: Vec<(String, String)>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
    /// Codex thread per niceeval session.
    threads: Arc<Mutex<HashMap<String, Thread>>>,
}

impl std::fmt::Debug for Codex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Codex")
            .field("program", &self.program)
            .field("model", &self.model)
            .field("sandbox", &self.sandbox)
            .field("approval_policy", &self.approval)
            .field("config", &self.config)
            .field("args", &self.args)
            .field("timeout", &self.timeout)
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
            program: "codex".to_string(),
            model: None,
            sandbox: None,
            approval: ApprovalPolicy::default(),
            config: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
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

    /// Extra arguments after niceeval's own options (before the prompt).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The program to run instead of `codex` from `PATH`.
    pub fn program(mut self, program: impl Into<String>) -> Self {
        self.program = program.into();
        self
    }

    /// The per-turn timeout; the process group is killed when it passes.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets an environment variable for Codex (`CODEX_HOME`, say).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
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
    fn sandbox_for(&self, sandbox: Option<&crate::workspace::Sandbox>) -> SandboxMode {
        self.sandbox
            .unwrap_or_else(|| match sandbox.map(|s| s.isolation()) {
                Some(crate::workspace::Isolation::Bubblewrap) => SandboxMode::DangerFullAccess,
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
        argv.extend(self.args.iter().cloned());
        if let Some(thread) = resume {
            argv.push(thread.to_string());
        }
        // The prompt comes on stdin: no length limit, no confusion with an option.
        argv.push("-".to_string());
        argv
    }

    async fn run(&self, request: &Request, kill: &mut GroupKill) -> Result<(), String> {
        let resume = self
            .threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&request.session)
            .cloned();
        let mut command = request.command(&self.program);
        command
            .args(self.arguments(
                resume.as_ref().map(|t| t.id.as_str()),
                self.sandbox_for(request.sandbox()),
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (key, value) in &self.env {
            command.env(key, value);
        }
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| {
            format!(
                "cannot start `{}`: {e}; install Codex (`npm install -g @openai/codex`) or set \
                 its path with Codex::program / `program` under [agent]",
                self.program
            )
        })?;
        // The prompt goes on stdin (`-`).
        let stdout = kill.watch(&mut child, Some(request.input.text.clone().into_bytes()))?;
        let before = resume.as_ref().map(|t| t.totals).unwrap_or_default();
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
        let status = child
            .wait()
            .await
            .map_err(|e| format!("cannot wait for `{}`: {e}", self.program))?;
        let exit = (!status.success()).then(|| match status.code() {
            Some(code) => format!("`{} exec` exited with status {code}", self.program),
            None => format!(
                "`{} exec` was terminated{}",
                self.program,
                signal_note(&status)
            ),
        });
        // Codex's own account of the turn is the better reason; the exit status follows it.
        match (stream.finish(), exit) {
            (Ok(()), None) => Ok(()),
            (Ok(()), Some(exit)) => Err(exit),
            (Err(reason), None) => Err(reason),
            (Err(reason), Some(exit)) => Err(format!("{reason} ({exit})")),
        }
    }
}

#[async_trait::async_trait]
impl Agent for Codex {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let mut kill = GroupKill::default();
        let outcome = match tokio::time::timeout(self.timeout, self.run(&request, &mut kill)).await
        {
            Ok(outcome) => outcome,
            Err(_) => Err(format!(
                "codex did not finish within {:?} and was killed; raise the timeout with \
                 Codex::timeout or `timeout` under [agent] in niceeval.toml",
                self.timeout
            )),
        };
        kill.kill();
        let stderr = kill.stderr().await;
        outcome.map_err(|message| with_stderr(message, &stderr))
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

/// Builds a Codex agent from `[agent]` settings (see the module docs).
pub(crate) fn from_settings(
    settings: &std::collections::BTreeMap<String, toml::Value>,
    file: &str,
) -> Result<Codex, String> {
    let string = |key: &str, value: &toml::Value| {
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{file}: [agent] {key} must be a string"))
    };
    let strings = |key: &str, value: &toml::Value| -> Result<Vec<String>, String> {
        value
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| format!("{file}: [agent] {key} must be an array of strings"))
    };
    let mut agent = Codex::new();
    for (key, value) in settings {
        agent = match key.as_str() {
            "model" => agent.model(string(key, value)?),
            "program" => agent.program(string(key, value)?),
            "sandbox" => {
                let text = string(key, value)?;
                agent.sandbox(SandboxMode::parse(&text).ok_or_else(|| {
                    format!(
                        "{file}: [agent] sandbox = {text:?} is not a Codex sandbox mode; valid: \"read-only\", \"workspace-write\", \"danger-full-access\""
                    )
                })?)
            }
            "approval_policy" => {
                let text = string(key, value)?;
                agent.approval_policy(ApprovalPolicy::parse(&text).ok_or_else(|| {
                    format!(
                        "{file}: [agent] approval_policy = {text:?} is not a Codex approval policy; valid: \"untrusted\", \"on-failure\", \"on-request\", \"never\""
                    )
                })?)
            }
            "config" => {
                let table = value.as_table().ok_or_else(|| {
                    format!(
                        "{file}: [agent] config must be a table of Codex settings, e.g. config = {{ model_reasoning_effort = \"low\" }}"
                    )
                })?;
                table
                    .iter()
                    .fold(agent, |agent, (k, v)| agent.config(k.clone(), v.clone()))
            }
            "args" => agent.args(strings(key, value)?),
            "timeout" => {
                let text = value.as_str().ok_or_else(|| {
                    format!("{file}: [agent] timeout must be a string such as \"10m\"")
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
                    "{file}: [agent] unknown key {other:?} for type = \"codex\"; known keys: model, sandbox, approval_policy, config, args, program, timeout, env"
                ));
            }
        };
    }
    Ok(agent)
}

#[cfg(test)]
mod tests;
