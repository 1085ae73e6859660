//! The chat agent: a model behind a provider API (`openai/…` for OpenAI-compatible servers —
//! OpenAI, Ollama, vLLM, LM Studio, gateways — or `anthropic/…`) as the agent under test, with a
//! system prompt and declared tools.
//!
//! Each send is one conversation turn: the session's history plus the new input go to the
//! model; every model call emits a `usage` event; every tool call emits `action.called`, runs the
//! tool's handler — a closure you supply, so tool results are deterministic fixtures or calls
//! into your real code — and emits `action.result` (`failed` when the handler returns `Err`,
//! the tool is unknown, or the arguments are not JSON; the model sees the error and may recover).
//! The loop ends when the model answers without calling tools (its text becomes the reply), or
//! fails the turn after `max_rounds` rounds of tool calls.
//!
//! In an eval with a workspace, tools act on the run's working copy: handlers made with
//! [`Tool::with_context`] get it in their [`ToolContext`], and the built-in [`Tool::shell`],
//! [`Tool::read_file`] and [`Tool::write_file`] give a model a small coding toolbox there
//! (commands run under the workspace's isolation).
//!
//! The API key comes from the provider's variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) or the
//! one named with [`ChatAgent::api_key_env`]; a loopback base URL needs none. Responses are not
//! cached unless [`ChatAgent::cache`] asks, so `runs = N` samples the model N times.
//!
//! ```no_run
//! use niceeval::agent::chat::{ChatAgent, Tool};
//! use niceeval::json;
//!
//! fn support_bot() -> ChatAgent {
//!     ChatAgent::new("openai/llama3.2")
//!         .base_url("http://127.0.0.1:11434/v1")
//!         .system("You are a support agent. Look orders up before answering.")
//!         .tool(Tool::new(
//!             "lookup_order",
//!             "Looks an order up by id",
//!             json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
//!             |input| async move { Ok(json!({ "id": input["id"], "status": "shipped" })) },
//!         ))
//! }
//! ```

/// The name of the event a chat agent emits with its model's finish reason.
pub(crate) const FINISH_EVENT: &str = "chat:finish";

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

use crate::agents::agent::{Agent, AgentError, Request};
use crate::agents::provider::{
    ChatMessage, ChatRequest, ClientOptions, ModelClient, ModelName, ProviderError, ToolSpec,
};
use crate::base::event::{ActionStatus, Event, Role};
pub use crate::config::CacheMode;

type Handler = Arc<
    dyn Fn(Value, ToolContext) -> Pin<Box<dyn Future<Output = Result<Value, AgentError>> + Send>>
        + Send
        + Sync,
>;

/// What a tool handler knows of the turn it runs in: the run's sandbox, when the eval has a
/// workspace (its working copy and isolation), so built-in tools such as [`Tool::shell`] act
/// where the eval looks.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ToolContext {
    /// The run's working copy and isolation, for an eval with `#[eval(workspace = ..)]`.
    pub sandbox: Option<crate::resources::workspace::Sandbox>,
}

impl ToolContext {
    /// The working copy, when there is one.
    pub fn workdir(&self) -> Option<&std::path::Path> {
        self.sandbox.as_ref().map(|s| s.root())
    }

    /// A command running `program` in the working copy under its isolation (the current
    /// directory when there is no workspace).
    pub fn command(&self, program: &str) -> tokio::process::Command {
        match &self.sandbox {
            Some(sandbox) => sandbox.command(program),
            None => tokio::process::Command::new(program),
        }
    }

    /// `path` inside the working copy; absolute paths and `..` are refused.
    fn file(&self, path: &str) -> Result<std::path::PathBuf, AgentError> {
        let dir = self
            .workdir()
            .ok_or("this tool works on files of the eval's workspace, and the eval has none")?;
        let rel = std::path::Path::new(path);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(AgentError::new(format!(
                "{path:?} is outside the working copy; give a relative path"
            )));
        }
        Ok(dir.join(rel))
    }
}

/// A tool the chat agent offers its model, with the handler that produces its results.
#[derive(Clone)]
pub struct Tool {
    spec: ToolSpec,
    handler: Handler,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.spec.name())
            .finish()
    }
}

impl Tool {
    /// A tool whose input follows `schema`; `handler` turns an input into the result (`Err` is a
    /// failed call whose message the model sees: `Err("no such order".into())`, or
    /// [`AgentError::caused_by`] to keep the error behind it).
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        handler: F,
    ) -> Tool
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, AgentError>> + Send + 'static,
    {
        Tool::with_context(name, description, schema, move |input, _| handler(input))
    }

    /// A tool whose handler also gets the turn's [`ToolContext`] (the working copy of an eval
    /// with a workspace).
    pub fn with_context<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        handler: F,
    ) -> Tool
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, AgentError>> + Send + 'static,
    {
        Tool {
            spec: ToolSpec::new(name, description, schema),
            handler: Arc::new(move |input, context| Box::pin(handler(input, context))),
        }
    }

    /// `shell`: runs `{"command": ".."}` with `sh -c` in the eval's working copy (under its
    /// isolation) and returns `{"exit_code", "stdout", "stderr"}`; `no_failed_shell_commands()`
    /// reports a non-zero exit code.
    pub fn shell() -> Tool {
        Tool::with_context(
            "shell",
            "Run a shell command in the project directory; returns its exit code and output.",
            json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
            |input, context: ToolContext| async move {
                let command = input["command"]
                    .as_str()
                    .ok_or("give the command as {\"command\": \"..\"}")?
                    .to_string();
                let mut sh = context.command("sh");
                sh.arg("-c")
                    .arg(&command)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped());
                // Through the process core: whatever the command leaves running is ended with
                // it when it exits (or when the turn is cancelled).
                let mut spawned =
                    crate::base::process::spawn(&mut sh, None, crate::base::process::Stderr::AsSet)
                        .map_err(|e| AgentError::new(format!("cannot run sh: {e}")).caused_by(e))?;
                let stdout =
                    crate::base::process::read_head(spawned.child.stdout.take(), usize::MAX);
                let stderr =
                    crate::base::process::read_head(spawned.child.stderr.take(), usize::MAX);
                let (status, stdout, stderr) = tokio::join!(spawned.child.wait(), stdout, stderr);
                spawned.tree.end().await;
                let status = status
                    .map_err(|e| AgentError::new(format!("cannot run sh: {e}")).caused_by(e))?;
                let out = std::process::Output {
                    status,
                    stdout,
                    stderr,
                };
                // A command that ran is a result, whatever its exit code: the model reads the
                // code, and `no_failed_shell_commands()` finds a non-zero one in the output.
                Ok(json!({
                    "exit_code": out.status.code(),
                    "stdout": String::from_utf8_lossy(&out.stdout),
                    "stderr": String::from_utf8_lossy(&out.stderr),
                }))
            },
        )
    }

    /// `read_file`: returns the text of `{"path": ".."}`, relative to the working copy.
    pub fn read_file() -> Tool {
        Tool::with_context(
            "read_file",
            "Read a file of the project; the path is relative to the project directory.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            |input, context: ToolContext| async move {
                let path = input["path"].as_str().ok_or("give {\"path\": \"..\"}")?;
                let file = context.file(path)?;
                std::fs::read_to_string(&file)
                    .map(Value::String)
                    .map_err(|e| AgentError::new(format!("cannot read {path}: {e}")).caused_by(e))
            },
        )
    }

    /// `write_file`: writes `{"path", "content"}` (relative to the working copy), creating
    /// its directories.
    pub fn write_file() -> Tool {
        Tool::with_context(
            "write_file",
            "Write a file of the project (created or replaced); the path is relative to the project directory.",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}),
            |input, context: ToolContext| async move {
                let path = input["path"]
                    .as_str()
                    .ok_or("give {\"path\": \"..\", \"content\": \"..\"}")?;
                let content = input["content"]
                    .as_str()
                    .ok_or("give the text as \"content\"")?;
                let file = context.file(path)?;
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        AgentError::new(format!("cannot create {}: {e}", parent.display()))
                            .caused_by(e)
                    })?;
                }
                std::fs::write(&file, content).map_err(|e| {
                    AgentError::new(format!("cannot write {path}: {e}")).caused_by(e)
                })?;
                Ok(json!({"written": path, "bytes": content.len()}))
            },
        )
    }

    /// A tool that always returns `output` (a fixture).
    pub fn returning(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        output: Value,
    ) -> Tool {
        Tool::new(name, description, schema, move |_| {
            let output = output.clone();
            async move { Ok(output) }
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.spec.name()
    }
}

/// A model as the agent under test. See the module docs.
#[derive(Clone)]
pub struct ChatAgent {
    model: Result<ModelName, ProviderError>,
    options: ClientOptions,
    key_env: Option<String>,
    system: Option<String>,
    tools: Vec<Tool>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    /// Further request-body keys (a promptfoo provider's `config`).
    extra: Option<Arc<serde_json::Map<String, Value>>>,
    max_rounds: usize,
    /// The client options were given whole: `[provider]` of niceeval.toml does not apply.
    explicit_options: bool,
    client: Arc<OnceLock<Result<Arc<ModelClient>, ProviderError>>>,
}

impl std::fmt::Debug for ChatAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatAgent")
            .field("model", &self.model)
            .field("base_url", &self.options.base_url)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl ChatAgent {
    /// A chat agent on `model` (`provider/model`). An invalid name fails the first turn with
    /// a message saying how to write it.
    pub fn new(model: &str) -> ChatAgent {
        ChatAgent {
            model: ModelName::parse(model),
            options: ClientOptions::default().timeout_setting(
                "the agent's timeout ([agent] timeout in niceeval.toml, or ChatAgent::timeout(..))",
            ),
            key_env: None,
            system: None,
            tools: Vec::new(),
            temperature: None,
            max_tokens: None,
            extra: None,
            max_rounds: 8,
            explicit_options: false,
            client: Arc::default(),
        }
    }

    fn reset(mut self) -> Self {
        self.client = Arc::default();
        self
    }

    /// The API's base URL (e.g. `http://127.0.0.1:11434/v1` for a local Ollama).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.options = self.options.base_url(url);
        self.reset()
    }

    /// Reads the API key from this environment variable; `""` means no key at all.
    pub fn api_key_env(mut self, var: impl Into<String>) -> Self {
        self.key_env = Some(var.into());
        self.reset()
    }

    /// The system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }

    /// Declares a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The output token cap per model call.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The most model calls per turn (default 8).
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// The timeout of one model call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options = self.options.timeout(timeout);
        self.reset()
    }

    /// The response cache mode (default `off`).
    pub fn cache(mut self, mode: CacheMode) -> Self {
        self.options = self.options.cache(mode);
        self.reset()
    }

    /// Further keys of every request body, sent over the agent's own (a suite file's provider
    /// `config`, as promptfoo sends it).
    #[doc(hidden)]
    pub fn body_keys(mut self, keys: serde_json::Map<String, Value>) -> Self {
        self.extra = (!keys.is_empty()).then(|| Arc::new(keys));
        self
    }

    /// All client options at once (retries, concurrency, cache directory, ...).
    #[doc(hidden)] // the provider's options are internal; tests reach them through __private
    pub fn client_options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self.explicit_options = true;
        self.reset()
    }

    fn client(&self) -> Result<Arc<ModelClient>, AgentError> {
        let built = self.client.get_or_init(|| {
            let name = self.model.clone()?;
            let key = crate::agents::provider::resolve_key(
                &name,
                self.options.base_url.as_deref(),
                self.key_env.as_deref(),
                " (or name another variable with ChatAgent::api_key_env, or `api_key_env` under \
                 [agent] in niceeval.toml; a loopback base_url needs no key)",
            )?;
            let mut options = self.options.clone();
            // `[provider]` limits of the crate under test (its niceeval.toml; a malformed file
            // is reported by the eval itself).
            if !self.explicit_options
                && let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR")
                && let Ok(config) = crate::config::Config::for_manifest_dir(&dir.to_string_lossy())
            {
                options = options.provider_config(&config.provider);
            }
            if options.api_key.is_none() {
                options.api_key = key;
            }
            ModelClient::new(name, options).map(Arc::new)
        });
        built
            .clone()
            .map_err(|e| AgentError::new(e.to_string()).caused_by(e))
    }
}

#[async_trait::async_trait]
impl Agent for ChatAgent {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let client = self.client()?;
        let sink = &request.events;
        let mut messages: Vec<ChatMessage> = request
            .history
            .iter()
            .filter_map(|m| match m.role {
                Role::User => Some(ChatMessage::User(m.text.to_string())),
                Role::Assistant => Some(ChatMessage::Assistant {
                    text: m.text.to_string(),
                    tool_calls: Vec::new(),
                }),
                Role::System => None,
            })
            .collect();
        messages.push(ChatMessage::User(request.input.text.clone()));
        for _ in 0..self.max_rounds {
            let call = ChatRequest {
                system: self.system.clone(),
                messages: messages.clone(),
                tools: self.tools.iter().map(|t| t.spec.clone()).collect(),
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                extra: self.extra.clone(),
                ..ChatRequest::default()
            };
            let response = match request.traceparent() {
                Some(traceparent) => {
                    crate::agents::provider::TRACEPARENT
                        .scope(traceparent.to_string(), client.complete(&call))
                        .await
                }
                None => client.complete(&call).await,
            }
            .map_err(|e| AgentError::new(e.to_string()).caused_by(e))?;
            sink.emit(Event::Usage {
                input_tokens: response.usage.input_tokens,
                output_tokens: response.usage.output_tokens,
                cache_read_tokens: response.usage.cache_read_tokens,
                cost_usd: None,
                model: Some(client.name().to_string()),
            });
            if !response.text.is_empty() {
                sink.say(response.text.clone());
            }
            if response.tool_calls.is_empty() {
                // Why the model stopped, as its API says it (`stop`, `length`, `end_turn`, …):
                // what a suite file's `finish-reason` item reads.
                if let Some(reason) = &response.stop_reason {
                    sink.emit(Event::Custom {
                        name: FINISH_EVENT.into(),
                        data: serde_json::json!({ "finish_reason": reason }),
                    });
                }
                return Ok(());
            }
            messages.push(ChatMessage::Assistant {
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
            });
            for call in response.tool_calls {
                sink.emit(Event::ActionCalled {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    input: call.arguments.clone(),
                });
                let outcome = match (
                    &call.arguments_error,
                    self.tools.iter().find(|t| t.name() == call.name),
                ) {
                    (Some(problem), _) => Err(AgentError::new(format!(
                        "the arguments were not valid JSON: {problem}"
                    ))),
                    (None, None) => Err(AgentError::new(format!(
                        "there is no tool named {:?}; available: {}",
                        call.name,
                        self.tools
                            .iter()
                            .map(Tool::name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))),
                    (None, Some(tool)) => {
                        let context = ToolContext {
                            sandbox: request.sandbox().cloned(),
                        };
                        (tool.handler)(call.arguments.clone(), context).await
                    }
                };
                let (output, status) = match outcome {
                    Ok(output) => (output, ActionStatus::Completed),
                    Err(error) => (json!({ "error": error.to_string() }), ActionStatus::Failed),
                };
                sink.emit(Event::ActionResult {
                    call_id: call.id.clone(),
                    output: output.clone(),
                    status,
                });
                messages.push(ChatMessage::ToolResult {
                    call_id: call.id,
                    name: call.name,
                    output: match output {
                        Value::String(s) => s,
                        other => other.to_string(),
                    },
                    is_error: status != ActionStatus::Completed,
                });
            }
        }
        Err(AgentError::new(format!(
            "{} was still calling tools after {} model calls; raise the limit with ChatAgent::max_rounds",
            client.name(),
            self.max_rounds
        )))
    }

    fn name(&self) -> String {
        match &self.model {
            Ok(name) => format!("chat {name}"),
            Err(_) => "chat".to_string(),
        }
    }
}

/// Builds a chat agent from `[agent] type = "chat"`, `"openai"` or `"anthropic"` (`kind`);
/// `file` names `niceeval.toml` in errors.
pub(crate) fn from_config(
    kind: &str,
    config: &crate::config::ChatConfig,
    file: &str,
) -> Result<ChatAgent, crate::agents::agent::AgentConfigError> {
    let model = &config.model;
    let model = if kind == "chat" || model.starts_with(&format!("{kind}/")) {
        model.clone()
    } else {
        format!("{kind}/{model}")
    };
    let mut agent = ChatAgent::new(&model);
    if let Err(e) = &agent.model {
        return Err(crate::agents::agent::AgentConfigError::Model {
            file: file.to_string(),
            source: Box::new(e.clone()),
        });
    }
    if let Some(url) = &config.base_url {
        agent = agent.base_url(url.clone());
    }
    if let Some(name) = &config.api_key_env {
        agent = agent.api_key_env(name.clone());
    }
    if let Some(system) = &config.system {
        agent = agent.system(system.clone());
    }
    if let Some(temperature) = config.temperature {
        agent = agent.temperature(temperature);
    }
    if let Some(n) = config.max_tokens {
        agent = agent.max_tokens(u32::try_from(n).unwrap_or(u32::MAX));
    }
    if let Some(n) = config.max_rounds {
        agent = agent.max_rounds(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if let Some(timeout) = &config.timeout {
        agent = agent.timeout(timeout.get());
    }
    if let Some(mode) = config.cache {
        agent = agent.cache(mode);
    }
    Ok(agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_build_an_agent_or_say_what_is_wrong() {
        let config = crate::config::Config::parse(
            "[agent]\ntype = \"openai\"\nmodel = \"llama3.2\"\nbase_url = \"http://127.0.0.1:11434/v1\"\ncache = \"read-write\"\n",
            "n.toml",
        )
        .unwrap();
        let Some(crate::config::AgentConfig::Openai(settings)) = &config.agent else {
            panic!("{:?}", config.agent)
        };
        let agent = from_config("openai", settings, "n.toml").unwrap();
        assert_eq!(agent.model.as_ref().unwrap().to_string(), "openai/llama3.2");
        assert_eq!(agent.options.cache_mode, CacheMode::ReadWrite);
        let err = crate::config::Config::parse("[agent]\ntype = \"openai\"\n", "n.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs `model"), "{err}");
        let err = crate::config::Config::parse(
            "[agent]\ntype = \"openai\"\nmodel = \"m\"\ntools = []\n",
            "n.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("n.toml:4:1: [agent] tools: unknown key `tools`"),
            "{err}"
        );
        assert!(err.contains("ChatAgent::tool"), "{err}");
    }

    #[test]
    fn bad_model_names_fail_the_turn_clearly() {
        let err = ChatAgent::new("gpt-4o").client().unwrap_err();
        assert!(err.message().contains("openai/gpt-4o"), "{err}");
    }
}
