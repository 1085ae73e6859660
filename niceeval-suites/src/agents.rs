//! The providers (promptfoo) and targets (AgentV) of suite files as agents: OpenAI- and
//! Anthropic-compatible chat models (the chat agent), `echo`, `exec:` commands (the command
//! agent, the prompt as its argument, its stdout the reply), HTTP targets (a real HTTP call
//! with templated URL, headers and body, and `transformResponse`), and `file://` Python and
//! JavaScript providers (their `call_api` / `callApi` run in a subprocess).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value, json};

use super::SuiteCase;
use super::node::SnippetError;
use super::template::{self, TemplateError};
use niceeval::__workspace::provider::{ApiKey, ClientOptions};
use niceeval::Role;
use niceeval::agent::chat::ChatAgent;
use niceeval::agent::command::{CommandAgent, InputMode};
use niceeval::agent::{Agent, AgentError, Message, Request};

/// Why a case's prompt cannot be sent to its provider; the YAML reader's error is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendingError {
    /// A prompt of chat messages written as YAML that does not read.
    #[error("the chat prompt is not valid YAML: {0}")]
    Yaml(#[source] yaml_serde::Error),
    /// A chat message of another role.
    #[error(
        "a chat prompt with an `{0}` message is not supported; supported: system, user and assistant messages"
    )]
    Role(String),
    /// A chat prompt that does not end with a user message.
    #[error(
        "a chat prompt ending with an assistant message (a prefill) is not supported: niceeval sends the conversation up to its last user message, so end it with a user message"
    )]
    Prefill,
    /// A chat agent asked of a provider that is no chat model.
    #[error("not a chat provider")]
    NotChat,
}

/// Why promptfoo's `http` provider could not make its request or read the reply; the
/// transform's, template's or URL parser's error is kept.
#[derive(Debug, thiserror::Error)]
enum HttpTargetError {
    /// `transformRequest` failed.
    #[error("transformRequest: {0}")]
    TransformRequest(#[source] SnippetError),
    /// The URL, a header, a query parameter or the body does not render.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The rendered URL does not parse (with `queryParams` to add).
    #[error("URL {url}: {source}")]
    Url {
        /// The URL as rendered.
        url: String,
        /// The parser's error.
        #[source]
        source: <reqwest::Url as std::str::FromStr>::Err,
    },
    /// `transformResponse` failed.
    #[error("transformResponse: {0}")]
    TransformResponse(#[source] SnippetError),
    /// `transformResponse` made `null` or `undefined`: promptfoo's "No output", an error of
    /// the test with no item checked.
    #[error("No output (transformResponse made nothing of the reply)")]
    NoOutput,
}

/// The agent's error: the target's message, its cause kept.
impl From<HttpTargetError> for AgentError {
    fn from(e: HttpTargetError) -> AgentError {
        AgentError::new(e.to_string()).caused_by(e)
    }
}

/// One provider of a suite file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProviderSpec {
    /// As written (`openai:chat:gpt-4o-mini`).
    pub id: String,
    /// `label`, else the id: what case names show when a file has several providers.
    pub label: String,
    pub kind: ProviderKind,
    /// Lines for stderr: `config` keys accepted without effect.
    pub notices: Vec<String>,
    /// promptfoo's provider `transform`: JavaScript (inline, or a `file://` JavaScript or
    /// Python function) applied to each output before the test's `options.transform`.
    pub transform: Option<String>,
}

/// What a provider is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ProviderKind {
    Chat {
        /// `provider/model`.
        model: String,
        base_url: Option<String>,
        key_env: Option<String>,
        key: Option<String>,
        temperature: Option<f64>,
        max_tokens: Option<u32>,
        /// promptfoo's `systemPrompt` and the further body keys of its `config`.
        extra: super::provider_config::ChatExtra,
    },
    /// AgentV's `default` target: the agent `niceeval.toml` configures.
    Configured,
    Echo,
    Exec(String),
    Http(HttpSpec),
    Script {
        python: bool,
        path: PathBuf,
        function: Option<String>,
        config: Value,
    },
    /// AgentV's `cli` target: a shell command with `{PROMPT}` (shell-quoted), `{PROMPT_FILE}`
    /// and `{OUTPUT_FILE}`, run in `cwd`; the output file is the reply (text, or JSON with
    /// `output` messages whose `tool_calls` become the run's tool calls, or `text`).
    AgentvCli {
        command: String,
        cwd: PathBuf,
        timeout_seconds: Option<u64>,
    },
}

/// An HTTP target.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HttpSpec {
    pub url: String,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    /// `queryParams`, templated, appended to the URL.
    pub query: Vec<(String, String)>,
    /// `transformRequest`: JavaScript (or `file://x.js`) making the prompt (text, or an
    /// object merged over a JSON body) from `prompt`, `vars`, `context`.
    pub transform_request: Option<String>,
    pub transform_response: Option<String>,
    /// Where `file://` transforms are found.
    pub base: PathBuf,
}

/// The keys of an HTTP provider's `config`.
const HTTP_CONFIG: &[&str] = &[
    "url",
    "method",
    "headers",
    "body",
    "queryParams",
    "transformRequest",
    "transformResponse",
    "responseParser",
    // promptfoo-only tuning, accepted with a notice.
    "maxRetries",
    "tokenEstimation",
];

/// The OpenAI base URL promptfoo reads from the environment.
pub(crate) fn openai_base_url_from_env() -> Option<String> {
    std::env::var("OPENAI_BASE_URL")
        .or_else(|_| std::env::var("OPENAI_API_BASE_URL"))
        .ok()
        .filter(|v| !v.is_empty())
        .or_else(|| {
            std::env::var("OPENAI_API_HOST")
                .ok()
                .filter(|v| !v.is_empty())
                .map(|h| format!("https://{h}/v1"))
        })
}

/// A provider from its `id` and `config`. `Err((key, message))` names the wrong key.
pub(crate) fn parse(
    id: &str,
    label: Option<&str>,
    config: Option<&Value>,
    base: &Path,
) -> Result<ProviderSpec, (Option<String>, String)> {
    let empty = Map::new();
    let config_map = match config {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => return Err((Some("config".into()), "`config` is a mapping".into())),
    };
    let unknown = |allowed: &[&str]| -> Result<(), (Option<String>, String)> {
        match config_map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => Err((
                Some(k.clone()),
                format!(
                    "provider `{id}`: config key `{k}` is not supported; supported: {}",
                    allowed.join(", ")
                ),
            )),
            None => Ok(()),
        }
    };
    let string = |key: &str| {
        config_map
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut notices = Vec::new();
    let mut chat =
        |provider: &str, model: &str| -> Result<ProviderKind, (Option<String>, String)> {
            let read = super::provider_config::read(provider, id, model, config_map, base)?;
            notices.extend(read.notices);
            let env_base = match provider {
                "openai" => openai_base_url_from_env(),
                _ => std::env::var("ANTHROPIC_BASE_URL")
                    .ok()
                    .filter(|v| !v.is_empty()),
            };
            Ok(ProviderKind::Chat {
                model: format!("{provider}/{model}"),
                base_url: string("apiBaseUrl")
                    .or_else(|| string("apiHost").map(|h| format!("https://{h}/v1")))
                    .or(env_base),
                key_env: string("apiKeyEnvar"),
                key: string("apiKey"),
                temperature: read.temperature,
                max_tokens: read.max_tokens,
                extra: read.extra,
            })
        };
    let kind = if let Some(model) = id.strip_prefix("openai:chat:") {
        chat("openai", model)?
    } else if let Some(model) = id.strip_prefix("anthropic:messages:") {
        chat("anthropic", model)?
    } else if let Some(model) = id
        .strip_prefix("anthropic:")
        .filter(|m| !m.contains(':') && !m.is_empty())
    {
        // `anthropic:<model>`: promptfoo's short form of the Messages provider.
        chat("anthropic", model)?
    } else if let Some(rest) = id.strip_prefix("openai:") {
        if rest.starts_with("completion:")
            || rest.starts_with("embedding:")
            || rest.starts_with("embeddings:")
            || rest.starts_with("assistant:")
            || rest.starts_with("responses:")
        {
            return Err((None, unsupported_id(id)));
        }
        chat("openai", rest)?
    } else if id == "echo" {
        unknown(&[])?;
        ProviderKind::Echo
    } else if let Some(command) = id.strip_prefix("exec:") {
        unknown(&[])?;
        ProviderKind::Exec(command.trim().to_string())
    } else if id == "http"
        || id == "https"
        || id.starts_with("http://")
        || id.starts_with("https://")
    {
        unknown(HTTP_CONFIG)?;
        let url = string("url")
            .or_else(|| {
                id.starts_with("http")
                    .then(|| id.to_string())
                    .filter(|u| u.contains("://"))
            })
            .ok_or((None, format!("provider `{id}` needs `config.url`")))?;
        let headers = match config_map.get("headers") {
            None => Vec::new(),
            Some(Value::Object(h)) => h
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect(),
            Some(_) => return Err((Some("headers".into()), "`headers` is a mapping".into())),
        };
        let code = |key: &str| -> Result<Option<String>, (Option<String>, String)> {
            match config_map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err((
                    Some(key.into()),
                    format!("`{key}` is a JavaScript expression or file://… (text)"),
                )),
            }
        };
        let transform_response = match code("transformResponse")? {
            Some(c) => Some(c),
            None => code("responseParser")?,
        };
        let query = match config_map.get("queryParams") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(q)) => q
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect(),
            Some(_) => {
                return Err((
                    Some("queryParams".into()),
                    "`queryParams` is a mapping".into(),
                ));
            }
        };
        for key in ["maxRetries", "tokenEstimation"] {
            if config_map.contains_key(key) {
                notices.push(format!(
                    "`{key}` in the config of provider `{id}`: {}",
                    if key == "maxRetries" {
                        "niceeval retries as its provider layer does (3 times, on 429, 5xx and connection errors)"
                    } else {
                        "niceeval counts no tokens for an HTTP target"
                    }
                ));
            }
        }
        ProviderKind::Http(HttpSpec {
            url,
            method: string("method")
                .unwrap_or_else(|| "POST".into())
                .to_uppercase(),
            headers,
            body: config_map.get("body").cloned(),
            query,
            transform_request: code("transformRequest")?,
            transform_response,
            base: base.to_path_buf(),
        })
    } else if let Some(file) = id.strip_prefix("file://") {
        let (path, function) = match file.rsplit_once(':') {
            Some((p, f)) if !f.contains('/') && (p.ends_with(".py") || p.ends_with(".js")) => {
                (p, Some(f.to_string()))
            }
            _ => (file, None),
        };
        let python = path.ends_with(".py");
        if !(python || path.ends_with(".js") || path.ends_with(".cjs")) {
            return Err((None, unsupported_id(id)));
        }
        ProviderKind::Script {
            python,
            path: base.join(path),
            function,
            config: config.cloned().unwrap_or(Value::Null),
        }
    } else {
        return Err((None, unsupported_id(id)));
    };
    Ok(ProviderSpec {
        transform: None,
        id: id.to_string(),
        label: label.map_or_else(|| id.to_string(), str::to_string),
        kind,
        notices,
    })
}

fn unsupported_id(id: &str) -> String {
    format!(
        "provider `{id}` is not supported; supported: openai:chat:<model>, openai:<model>, \
         anthropic:messages:<model>, anthropic:<model>, echo, exec:<command>, http / https / a URL (with \
         config url, method, headers, body, transformResponse), file://<provider>.py and \
         file://<provider>.js"
    )
}

/// The agent a case sends its prompt to, and what it sends.
/// `None`: the agent the configuration gives the run.
/// What a case sends: its agent (`None`: the configured one), the turn's input, and the
/// earlier turns of a chat prompt (the history).
pub(crate) type Sending = (Option<Arc<dyn Agent>>, String, Vec<Message>);

/// With a chat provider, the prompt's earlier turns are the turn's history.
pub(crate) fn agent_for(
    case: &SuiteCase,
    vars: &Map<String, Value>,
) -> Result<Sending, SendingError> {
    let provider = &case.provider;
    let (agent, input): (Arc<dyn Agent>, String) = match &provider.kind {
        ProviderKind::Configured => return Ok((None, case.prompt.clone(), Vec::new())),
        ProviderKind::Chat { .. } => {
            let chat = conversation(&case.prompt)?;
            return Ok((
                Some(chat_agent(provider, chat.system)?),
                chat.user,
                chat.earlier,
            ));
        }
        ProviderKind::Echo => (
            Arc::new(niceeval::agent::agent_fn(|request: Request| async move {
                request.events.say(request.input.text.clone());
                Ok(())
            })),
            case.prompt.clone(),
        ),
        ProviderKind::Exec(command) => (
            cached(&format!("exec\u{0}{command}"), || {
                Arc::new(
                    CommandAgent::new(
                        "sh",
                        [
                            "-c".to_string(),
                            format!("{command} \"$@\""),
                            "sh".to_string(),
                        ],
                    )
                    .input_mode(InputMode::Arg)
                    .text_output(),
                )
            }),
            case.prompt.clone(),
        ),
        ProviderKind::AgentvCli {
            command,
            cwd,
            timeout_seconds,
        } => {
            // The cli target gets the user's text; AgentV sends no system message to it either.
            (
                Arc::new(AgentvCliAgent {
                    command: command.clone(),
                    cwd: cwd.clone(),
                    timeout: timeout_seconds.map(std::time::Duration::from_secs),
                }),
                conversation(&case.prompt)?.user,
            )
        }
        ProviderKind::Http(spec) => (
            Arc::new(niceeval::__workspace::agent::HttpAgent::new(Arc::new(
                PromptfooHttp {
                    spec: spec.clone(),
                    vars: vars.clone(),
                },
            ))),
            case.prompt.clone(),
        ),
        ProviderKind::Script {
            python,
            path,
            function,
            config,
        } => {
            let context = json!({ "vars": vars, "config": config }).to_string();
            let agent: CommandAgent = if *python {
                CommandAgent::new(
                    "python3",
                    [
                        "-c".to_string(),
                        PYTHON_PROVIDER.to_string(),
                        path.display().to_string(),
                        function.clone().unwrap_or_else(|| "call_api".into()),
                        context,
                    ],
                )
            } else {
                CommandAgent::new(
                    "node",
                    [
                        "-e".to_string(),
                        JS_PROVIDER.to_string(),
                        path.display().to_string(),
                        function.clone().unwrap_or_default(),
                        context,
                    ],
                )
            };
            (Arc::new(agent.text_output()), case.prompt.clone())
        }
    };
    Ok((Some(agent), input, Vec::new()))
}

/// Calls (and awaits, when it is `async`) `call_api(prompt, options, context)` of a promptfoo
/// Python provider; prints its `output` (JSON when it is not text), or its `error` (promptfoo's
/// "No output" when there is no output) on stderr with status 1.
const PYTHON_PROVIDER: &str = r#"
import importlib.util, json, sys
path, name, ctx = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
spec = importlib.util.spec_from_file_location("provider", path)
module = importlib.util.module_from_spec(spec)
sys.path.insert(0, __import__("os").path.dirname(path))
spec.loader.exec_module(module)
prompt = sys.stdin.read()
result = getattr(module, name)(prompt, {"config": ctx.get("config") or {}}, {"vars": ctx["vars"]})
if __import__("inspect").isawaitable(result):
    # An `async def` provider, as promptfoo awaits it.
    result = __import__("asyncio").run(result)
if isinstance(result, dict) and result.get("error"):
    print(result["error"], file=sys.stderr)
    sys.exit(1)
out = result.get("output") if isinstance(result, dict) else result
if out is None:
    # promptfoo's "No output": the row errors and no item is checked.
    print("No output", file=sys.stderr)
    sys.exit(1)
print(out if isinstance(out, str) else json.dumps(out), end="")
"#;

/// Calls `callApi(prompt, context)` of a promptfoo JavaScript provider (a class, or an
/// object with `callApi`, or the named function).
const JS_PROVIDER: &str = r#"
const [path, name, ctxText] = process.argv.slice(1);
const ctx = JSON.parse(ctxText);
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', async () => {
  try {
    let m = require(require('path').resolve(path));
    if (m && m.default) m = m.default;
    let result;
    if (name) result = await m[name](input, { vars: ctx.vars }, { config: ctx.config || {} });
    else if (typeof m === 'function' && m.prototype && m.prototype.callApi) result = await new m({ config: ctx.config || {} }).callApi(input, { vars: ctx.vars });
    else if (typeof m === 'function') result = await m(input, { vars: ctx.vars });
    else result = await m.callApi(input, { vars: ctx.vars });
    if (result && result.error) { process.stderr.write(String(result.error)); process.exit(1); }
    const out = result && typeof result === 'object' && 'output' in result ? result.output : result;
    if (out === undefined || out === null) { process.stderr.write('No output'); process.exit(1); }
    process.stdout.write(typeof out === 'string' ? out : JSON.stringify(out));
  } catch (e) { process.stderr.write(String(e && e.stack || e)); process.exit(1); }
});
"#;

/// One agent per key for the whole process: agents with the same settings share their
/// HTTP client.
fn cached(key: &str, make: impl FnOnce() -> Arc<dyn Agent>) -> Arc<dyn Agent> {
    static AGENTS: OnceLock<Mutex<HashMap<String, Arc<dyn Agent>>>> = OnceLock::new();
    let mut agents = AGENTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    agents.entry(key.to_string()).or_insert_with(make).clone()
}

fn chat_agent(
    provider: &ProviderSpec,
    system: Option<String>,
) -> Result<Arc<dyn Agent>, SendingError> {
    let ProviderKind::Chat {
        model,
        base_url,
        key_env,
        key,
        temperature,
        max_tokens,
        extra,
    } = &provider.kind
    else {
        return Err(SendingError::NotChat);
    };
    // promptfoo's `systemPrompt` replaces the prompt's system message.
    let system = extra.system.clone().or(system);
    let key_text = format!(
        "chat\u{0}{model}\u{0}{base_url:?}\u{0}{key_env:?}\u{0}{key:?}\u{0}{temperature:?}\u{0}{max_tokens:?}\u{0}{system:?}\u{0}{}",
        Value::Object(extra.body.clone())
    );
    Ok(cached(&key_text, || {
        let mut agent = ChatAgent::new(model);
        if let Some(url) = base_url {
            agent = agent.base_url(url.clone());
        }
        if let Some(var) = key_env {
            agent = agent.api_key_env(var.clone());
        }
        if let Some(key) = key {
            let mut options = ClientOptions::default();
            if let Some(url) = base_url {
                options = options.base_url(url.clone());
            }
            agent = agent.client_options(options.api_key(ApiKey::new(key.clone())));
        }
        if let Some(t) = temperature {
            agent = agent.temperature(*t);
        }
        if let Some(n) = max_tokens {
            agent = agent.max_tokens(*n);
        }
        if let Some(system) = system {
            agent = agent.system(system);
        }
        Arc::new(agent.body_keys(extra.body.clone()))
    }))
}

/// A chat prompt read as a conversation: its system text, the earlier turns and the last
/// user message.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Conversation {
    pub system: Option<String>,
    /// User and assistant messages before the last user message: the turn's history.
    pub earlier: Vec<Message>,
    pub user: String,
}

/// Checks a prompt that is chat messages (when it loads): system, user and assistant messages
/// in any order, ending with the user message the turn sends.
pub(crate) fn chat_messages(prompt: &str) -> Result<(), SendingError> {
    conversation(prompt).map(drop)
}

/// A prompt read as a conversation: a JSON list of `{role, content}` is system messages, then
/// user and assistant turns ending with a user message (AgentV inputs send them all).
fn conversation(prompt: &str) -> Result<Conversation, SendingError> {
    let plain = || Conversation {
        user: prompt.to_string(),
        ..Conversation::default()
    };
    let trimmed = prompt.trim_start();
    let messages = if trimmed.starts_with("- role:") {
        // promptfoo's chat messages written as YAML.
        match yaml_serde::from_str::<Value>(prompt) {
            Ok(Value::Array(messages)) => messages,
            Ok(_) => return Ok(plain()),
            Err(e) => return Err(SendingError::Yaml(e)),
        }
    } else if trimmed.starts_with('[') {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Array(messages)) => messages,
            _ => return Ok(plain()),
        }
    } else {
        return Ok(plain());
    };
    let mut system = Vec::new();
    let mut turns = Vec::new();
    for message in &messages {
        let (Some(role), Some(content)) = (
            message.get("role").and_then(Value::as_str),
            message.get("content"),
        ) else {
            return Ok(plain());
        };
        let content = content
            .as_str()
            .map_or_else(|| content.to_string(), str::to_string);
        match role {
            "system" | "developer" => system.push(content),
            "user" => turns.push(Message {
                role: Role::User,
                text: content.into(),
            }),
            "assistant" => turns.push(Message {
                role: Role::Assistant,
                text: content.into(),
            }),
            other => return Err(SendingError::Role(other.to_string())),
        }
    }
    let user = match turns.pop() {
        Some(Message {
            role: Role::User,
            text,
        }) => text.to_string(),
        _ => return Err(SendingError::Prefill),
    };
    Ok(Conversation {
        system: (!system.is_empty()).then(|| system.join("\n\n")),
        earlier: turns,
        user,
    })
}

/// AgentV's `cli` target (see [`ProviderKind::AgentvCli`]).
#[derive(Debug)]
struct AgentvCliAgent {
    command: String,
    cwd: PathBuf,
    timeout: Option<std::time::Duration>,
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// An AgentV `cli` command with its placeholders filled: `{PROMPT}` (the prompt, one shell
/// word), `{PROMPT_FILE}` and `{OUTPUT_FILE}` (paths, one shell word each).
pub(crate) fn agentv_command(
    template: &str,
    prompt: &str,
    prompt_file: &std::path::Path,
    output_file: &std::path::Path,
) -> String {
    template
        .replace("{PROMPT}", &shell_quote(prompt))
        .replace(
            "{PROMPT_FILE}",
            &shell_quote(&prompt_file.display().to_string()),
        )
        .replace(
            "{OUTPUT_FILE}",
            &shell_quote(&output_file.display().to_string()),
        )
}

#[async_trait::async_trait]
impl Agent for AgentvCliAgent {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let dir = tempfile::tempdir()
            .map_err(|e| AgentError::new(format!("a temporary directory: {e}")))?;
        let prompt_file = dir.path().join("prompt.txt");
        let output_file = dir.path().join("output.json");
        std::fs::write(&prompt_file, request.input.text.as_bytes())
            .map_err(|e| AgentError::new(format!("writing {}: {e}", prompt_file.display())))?;
        let command = agentv_command(
            &self.command,
            &request.input.text,
            &prompt_file,
            &output_file,
        );
        // Through the process core: whatever the command leaves running is ended with it,
        // also when the turn times out or is cancelled.
        let mut sh = request.command("sh");
        sh.arg("-c")
            .arg(&command)
            .current_dir(&self.cwd)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let run = niceeval::__workspace::process::output(&mut sh);
        let out = match self.timeout {
            Some(limit) => tokio::time::timeout(limit, run).await.map_err(|_| {
                AgentError::new(format!("`{command}` ran longer than {}s", limit.as_secs()))
            })?,
            None => run.await,
        }
        .map_err(|e| AgentError::new(format!("running `{command}`: {e}")))?;
        if !out.status.success() {
            return Err(AgentError::new(format!(
                "`{command}` exited with {}: {}",
                out.status,
                niceeval::__workspace::excerpt::elide(&String::from_utf8_lossy(&out.stderr), 500)
            )));
        }
        let text = std::fs::read_to_string(&output_file).map_err(|e| {
            AgentError::new(format!(
                "`{command}` wrote no {{OUTPUT_FILE}} ({}): {e}",
                output_file.display()
            ))
        })?;
        report_cli_output(&request.events, &text);
        Ok(())
    }

    fn name(&self) -> String {
        format!("cli {}", self.command)
    }
}

/// What an AgentV `cli` target wrote to its output file, as events (AgentV's cli provider):
/// JSON with `output` (or `output_messages`) messages, else `text`, else the whole file is the
/// answer. Each assistant message is a message (AgentV counts them as LLM calls; the answer is
/// the last one with content), each of their `tool_calls` a tool call (its `duration_ms` as a
/// [`crate::TOOL_DURATION_EVENT`]); `token_usage` (`input`, `output`, `cached`) and `cost_usd`
/// are the turn's usage, `duration_ms` its duration ([`niceeval::__workspace::agent::DURATION_EVENT`]),
/// each when the JSON gives it (a negative cost or duration is dropped, as AgentV does).
fn report_cli_output(events: &niceeval::agent::EventSink, text: &str) {
    let json: Option<Value> = serde_json::from_str(text).ok();
    let Some(obj) = json.as_ref().and_then(Value::as_object) else {
        events.say(text);
        return;
    };
    let messages = obj
        .get("output")
        .or_else(|| obj.get("output_messages"))
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty());
    match (messages, obj.get("text")) {
        (Some(messages), _) => {
            // Each assistant message's text (`None`: no content; not the answer).
            let mut said: Vec<Option<String>> = Vec::new();
            for message in messages {
                for call in message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let name = call
                        .get("tool")
                        .or_else(|| call.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let call_id = events.tool_call(
                        name,
                        call.get("input").cloned().unwrap_or(Value::Null),
                        call.get("output").cloned().unwrap_or(Value::Null),
                    );
                    if let Some(ms) = call.get("duration_ms").and_then(Value::as_f64) {
                        events.emit(niceeval::Event::Custom {
                            name: crate::TOOL_DURATION_EVENT.into(),
                            data: json!({"call_id": call_id, "duration_ms": ms}),
                        });
                    }
                }
                if message.get("role").and_then(Value::as_str) == Some("assistant") {
                    said.push(match message.get("content") {
                        Some(Value::String(t)) => Some(t.clone()),
                        Some(Value::Null) | None => None,
                        Some(other) => Some(other.to_string()),
                    });
                }
            }
            // The answer last, so it is the reply; assistant messages without content after
            // it still count, said before it.
            if let Some(answer) = said.iter().rposition(Option::is_some) {
                let last = said.remove(answer);
                said.push(last);
            }
            for text in said {
                events.say(text.unwrap_or_default());
            }
        }
        (None, Some(t)) => events.say(match t {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        }),
        // Neither: the whole file is the answer, and no metrics are read (AgentV).
        (None, None) => {
            events.say(text);
            return;
        }
    }
    let number = |v: Option<&Value>| v.and_then(Value::as_f64).filter(|n| *n >= 0.0);
    let tokens = obj.get("token_usage").and_then(|u| {
        let count = |k: &str| number(u.get(k)).map(|n| n as u64);
        Some((
            count("input")?,
            count("output")?,
            count("cached").unwrap_or(0),
        ))
    });
    let cost_usd = number(obj.get("cost_usd"));
    if tokens.is_some() || cost_usd.is_some() {
        let (input_tokens, output_tokens, cache_read_tokens) = tokens.unwrap_or_default();
        events.emit(niceeval::Event::Usage {
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cost_usd,
            model: None,
        });
    }
    if let Some(ms) = number(obj.get("duration_ms")) {
        events.emit(niceeval::Event::Custom {
            name: niceeval::__workspace::agent::DURATION_EVENT.into(),
            data: json!({"duration_ms": ms}),
        });
    }
}

/// promptfoo's `http` provider as an [`HttpTarget`](niceeval::__workspace::agent::HttpTarget): the
/// URL, headers and body templated with the case's vars and the prompt (what
/// `transformRequest` made of it), the reply what `transformResponse` reads.
#[derive(Debug)]
struct PromptfooHttp {
    spec: HttpSpec,
    vars: Map<String, Value>,
}

impl PromptfooHttp {
    /// The request for the turn's input: the URL, headers and body templated with the vars
    /// and the prompt (what `transformRequest` made of it).
    async fn build(
        &self,
        input: &str,
    ) -> Result<niceeval::__workspace::provider::HttpRequest, HttpTargetError> {
        let mut vars = self.vars.clone();
        let mut prompt = Value::String(input.to_string());
        if let Some(code) = &self.spec.transform_request {
            prompt = super::node::request_transform(code, input, &vars, &self.spec.base)
                .await
                .map_err(HttpTargetError::TransformRequest)?;
        }
        let prompt_text = match &prompt {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        vars.insert("prompt".into(), Value::String(prompt_text));
        let mut url = template::render(&self.spec.url, &vars)?;
        if !self.spec.query.is_empty() {
            let mut parsed = match reqwest::Url::parse(&url) {
                Ok(parsed) => parsed,
                Err(source) => return Err(HttpTargetError::Url { url, source }),
            };
            for (k, v) in &self.spec.query {
                let v = template::render(v, &vars)?;
                parsed.query_pairs_mut().append_pair(k, &v);
            }
            url = parsed.to_string();
        }
        let mut headers = Vec::new();
        for (name, value) in &self.spec.headers {
            headers.push((name.clone(), template::render(value, &vars)?));
        }
        let json = self.is_json();
        let body = match (&self.spec.body, &prompt) {
            // An object from transformRequest is merged over a JSON body, as promptfoo does.
            (body, Value::Object(made)) if json => {
                let mut merged = match body {
                    Some(Value::String(text)) => {
                        serde_json::from_str::<Value>(text).unwrap_or(Value::Null)
                    }
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                if !merged.is_object() {
                    merged = Value::Object(Map::new());
                }
                if let Value::Object(m) = &mut merged {
                    m.extend(made.clone());
                }
                Some(merged.to_string().into_bytes())
            }
            (None, _) => None,
            // A JSON body written as text: its strings take the variables JSON-escaped.
            (Some(Value::String(text)), _) => Some(template::render(text, &vars)?.into_bytes()),
            (Some(body), _) => Some(
                template::render_value(body, &vars)?
                    .to_string()
                    .into_bytes(),
            ),
        };
        if json
            && body.is_some()
            && !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            headers.push(("content-type".into(), "application/json".into()));
        }
        Ok(niceeval::__workspace::provider::HttpRequest {
            method: self.spec.method.clone(),
            url,
            headers,
            body,
        })
    }

    /// The reply in the answer's body: what `transformResponse` reads of it, or the body.
    async fn read_reply(&self, text: String) -> Result<String, HttpTargetError> {
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let Some(expr) = &self.spec.transform_response else {
            return Ok(text);
        };
        let made = match native_path(expr, &json) {
            Some(found) => found.clone(),
            None => super::node::run_value(
                expr,
                &["json", "text", "context"],
                vec![
                    json.clone(),
                    Value::String(text),
                    json!({ "vars": self.vars }),
                ],
            )
            .await
            .map_err(HttpTargetError::TransformResponse)?,
        };
        match made {
            Value::Null => Err(HttpTargetError::NoOutput),
            Value::String(s) => Ok(s),
            other => Ok(other.to_string()),
        }
    }

    fn is_json(&self) -> bool {
        let declared = self
            .spec
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.to_ascii_lowercase().contains("json"));
        declared.unwrap_or(!matches!(self.spec.body, None | Some(Value::String(_))))
    }
}

#[async_trait::async_trait]
impl niceeval::__workspace::agent::HttpTarget for PromptfooHttp {
    async fn request(
        &self,
        input: &str,
    ) -> Result<niceeval::__workspace::provider::HttpRequest, AgentError> {
        self.build(input).await.map_err(AgentError::from)
    }

    async fn reply(&self, text: String) -> Result<String, AgentError> {
        self.read_reply(text).await.map_err(AgentError::from)
    }

    fn name(&self) -> String {
        format!("http {}", self.spec.url)
    }
}

/// `json.a.b[0].c` read without node; `None` for anything else.
fn native_path<'a>(expr: &str, json: &'a Value) -> Option<&'a Value> {
    let rest = expr.trim().strip_prefix("json")?;
    let mut value = json;
    let mut chars = rest;
    while !chars.is_empty() {
        if let Some(after) = chars.strip_prefix('.') {
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            value = value.get(&after[..end])?;
            chars = &after[end..];
        } else if let Some(after) = chars.strip_prefix('[') {
            let end = after.find(']')?;
            let index: usize = after[..end].trim().parse().ok()?;
            value = value.get(index)?;
            chars = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_agentvs_cli_output_metrics() {
        let sink = niceeval::agent::EventSink::default();
        let output = json!({
            "output": [
                {"role": "assistant", "content": "", "tool_calls": [{"tool": "Read", "input": {"p": 1}, "duration_ms": 45}]},
                {"role": "assistant", "content": "the answer"},
                {"role": "assistant"}
            ],
            "token_usage": {"input": 10, "output": 20, "cached": 5},
            "cost_usd": 0.05,
            "duration_ms": 1500
        });
        report_cli_output(&sink, &output.to_string());
        let events = sink.snapshot();
        let calls = crate::ToolCall::from_events(&events);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].duration_ms, Some(45.0));
        // Three assistant messages (three LLM calls), the answer last.
        let said: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                niceeval::Event::Message { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(said, ["", "", "the answer"]);
        let usage = niceeval::Usage::from_events(&events);
        assert_eq!((usage.input_tokens, usage.output_tokens), (10, 20));
        assert_eq!(usage.cost_usd, Some(0.05));
        assert!(events.iter().any(|e| matches!(e, niceeval::Event::Custom { name, data }
            if name == niceeval::__workspace::agent::DURATION_EVENT && data["duration_ms"] == 1500.0)));
        // Not JSON, or JSON without `output` or `text`: the whole file, no metrics.
        let sink = niceeval::agent::EventSink::default();
        report_cli_output(&sink, r#"{"cost_usd": 1}"#);
        assert_eq!(
            sink.snapshot(),
            [niceeval::Event::assistant(r#"{"cost_usd": 1}"#)]
        );
    }

    #[test]
    fn reads_simple_response_paths_without_node() {
        let json = json!({"choices": [{"message": {"content": "hi"}}], "n": 2});
        assert_eq!(
            native_path("json.choices[0].message.content", &json),
            Some(&json!("hi"))
        );
        assert_eq!(native_path("json.n", &json), Some(&json!(2)));
        assert_eq!(native_path("json.choices.map(c => c)", &json), None);
        assert_eq!(native_path("text", &json), None);
    }

    #[test]
    fn parses_provider_ids() {
        let base = Path::new(".");
        let p = parse("openai:chat:gpt-4o-mini", None, None, base).unwrap();
        assert!(
            matches!(p.kind, ProviderKind::Chat { ref model, .. } if model == "openai/gpt-4o-mini")
        );
        let p = parse("anthropic:messages:claude-3", Some("claude"), None, base).unwrap();
        assert_eq!(p.label, "claude");
        assert_eq!(
            parse("echo", None, None, base).unwrap().kind,
            ProviderKind::Echo
        );
        let err = parse("bedrock:foo", None, None, base).unwrap_err();
        assert!(
            err.1.contains("not supported; supported: openai:chat"),
            "{}",
            err.1
        );
        let err = parse("openai:gpt-4", None, Some(&json!({"tools": []})), base).unwrap_err();
        assert_eq!(err.0.as_deref(), Some("tools"));
        // promptfoo's short Anthropic form, and its prompt-caching hint (no effect on answers).
        let p = parse(
            "anthropic:claude-sonnet-5",
            None,
            Some(&json!({"cache_control": {"type": "ephemeral"}})),
            base,
        )
        .unwrap();
        assert!(
            matches!(p.kind, ProviderKind::Chat { ref model, .. } if model == "anthropic/claude-sonnet-5")
        );
        assert!(parse("anthropic:completion:claude-2", None, None, base).is_err());
    }

    #[test]
    fn splits_chat_prompts() {
        let chat = conversation(
            r#"[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]"#,
        )
        .unwrap();
        assert_eq!(chat.system.as_deref(), Some("be brief"));
        assert_eq!(chat.user, "hi");
        assert!(chat.earlier.is_empty());
        assert_eq!(conversation("plain").unwrap().user, "plain");
        assert!(chat_messages("plain").is_ok());
        // Earlier turns are the history; the last user message is the turn.
        let turns = r#"[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]"#;
        // A promptfoo file may have earlier turns, as promptfoo sends them.
        assert!(chat_messages(turns).is_ok());
        // Messages written as YAML, as promptfoo reads them.
        let chat =
            conversation("- role: system\n  content: be brief\n- role: user\n  content: hi\n")
                .unwrap();
        assert_eq!(
            (chat.system.as_deref(), chat.user.as_str()),
            (Some("be brief"), "hi")
        );
        let chat = conversation(turns).unwrap();
        assert_eq!(chat.user, "c");
        let earlier: Vec<(Role, String)> = chat
            .earlier
            .iter()
            .map(|m| (m.role, m.text.to_string()))
            .collect();
        assert_eq!(
            earlier,
            [
                (Role::User, "a".to_string()),
                (Role::Assistant, "b".to_string())
            ]
        );
        assert!(
            conversation(r#"[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]"#)
                .unwrap_err()
                .to_string()
                .contains("end it with a user message")
        );
    }
}
