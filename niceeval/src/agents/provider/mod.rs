//! Model providers: a client for chat models named `provider/model`, used by the judge and by
//! the chat agent.
//!
//! Two wire formats are spoken: `openai/…` is the OpenAI Chat Completions format (so OpenAI
//! itself, Ollama, vLLM, LM Studio and gateways all work, with a configurable base URL) and
//! `anthropic/…` is the Anthropic Messages API. A [`ChatRequest`] is provider-neutral; each
//! provider module encodes it and decodes the answer into a [`ChatResponse`].
//!
//! [`ModelClient`] adds what a real API needs: a timeout per attempt; retries with exponential
//! backoff and jitter on 429, 5xx and connection errors, honouring `Retry-After`
//! ([`RetryPolicy`]); a process-wide cap on concurrent requests per provider endpoint; and the
//! on-disk response cache ([`crate::resources::cache`]). API keys come from the environment only, travel
//! only in request headers, and never reach the cache key, the cache or an error message.

pub mod anthropic;
mod client;
pub(crate) mod http;
mod limit;
pub mod openai;
mod pool;
mod retry;

use std::fmt;

use serde_json::Value;
use serde_json::value::RawValue;

pub use crate::base::event::Usage;
pub(crate) use client::TRACEPARENT;
pub use client::resolve_key;
pub use client::{ClientOptions, DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT, ModelClient};
pub use retry::RetryPolicy;

/// Which wire format a model speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions (and every server compatible with it).
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    /// The prefix in model names: `openai` or `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The API's base URL when none is configured.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable the API key is read from when none is named.
    pub fn default_key_env(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    fn from_prefix(prefix: &str) -> Option<Provider> {
        match prefix {
            "openai" => Some(Provider::OpenAi),
            "anthropic" => Some(Provider::Anthropic),
            _ => None,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model name, `provider/model`: `openai/gpt-4o-mini`, `anthropic/claude-haiku-4-5`,
/// `openai/llama3.2` (an Ollama model through its OpenAI-compatible API). Everything after the
/// first `/` is the provider's model id, sent as is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelName {
    provider: Provider,
    model: String,
}

impl ModelName {
    /// Parses `provider/model`.
    pub fn parse(name: &str) -> Result<ModelName, ProviderError> {
        let name = name.trim();
        let bad = |reason: String| ProviderError::BadModelName {
            name: name.to_string(),
            reason,
        };
        let Some((prefix, model)) = name.split_once('/') else {
            return Err(bad(format!(
                "write it as provider/model, e.g. \"openai/{name}\" or \"anthropic/{name}\""
            )));
        };
        let provider = Provider::from_prefix(&prefix.to_ascii_lowercase()).ok_or_else(|| {
            bad(format!(
                "unknown provider {prefix:?}; known providers: \"openai\" (OpenAI and compatible \
                 servers such as Ollama, vLLM, LM Studio) and \"anthropic\""
            ))
        })?;
        if model.trim().is_empty() {
            return Err(bad(format!(
                "the model id after \"{prefix}/\" is empty, e.g. \"{prefix}/my-model\""
            )));
        }
        Ok(ModelName {
            provider,
            model: model.trim().to_string(),
        })
    }

    /// A name from its parts.
    pub fn new(provider: Provider, model: impl Into<String>) -> ModelName {
        ModelName {
            provider,
            model: model.into(),
        }
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The provider's model id (the part after `provider/`).
    pub fn model(&self) -> &str {
        &self.model
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)
    }
}

/// An API key. Read from the environment, sent only in request headers; its `Debug` output is
/// redacted so it cannot leak into a report or a panic message.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key from its value.
    pub fn new(value: impl Into<String>) -> ApiKey {
        ApiKey(value.into())
    }

    /// The key in environment variable `var`, when it is set and not blank.
    pub fn from_env(var: &str) -> Option<ApiKey> {
        std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| ApiKey(v.trim().to_string()))
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Whether `base_url` points at this machine (`localhost`, `127.x.x.x`, `[::1]`): such servers
/// (a local Ollama, vLLM, LM Studio) are called without an API key when none is set.
pub fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChatMessage {
    /// What the user said.
    User(String),
    /// What the model said earlier, with the tools it called.
    Assistant {
        /// The text (may be empty when the model only called tools).
        text: String,
        /// The tool calls it made.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of a tool call, fed back to the model.
    ToolResult {
        /// The call this answers (`ToolCall::id`).
        call_id: String,
        /// The tool's name.
        name: String,
        /// The tool's output, as text (JSON for structured outputs).
        output: String,
        /// Whether the tool failed.
        is_error: bool,
    },
}

/// A tool the model may call: name, description, and a JSON schema for its input.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    name: String,
    description: String,
    parameters: Box<RawValue>,
}

impl PartialEq for ToolSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.parameters.get() == other.parameters.get()
    }
}

impl ToolSpec {
    /// A tool whose input follows the JSON schema `parameters`.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        let parameters = serde_json::value::to_raw_value(&parameters)
            .unwrap_or_else(|_| RawValue::from_string("{}".to_string()).unwrap_or_default());
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// A tool whose schema is JSON text, kept byte for byte (property order matters to models:
    /// they tend to fill properties in the order given).
    pub(crate) fn from_schema_text(name: &str, description: &str, schema: &'static str) -> Self {
        let parameters = RawValue::from_string(schema.to_string())
            .unwrap_or_else(|_| RawValue::from_string("{}".to_string()).unwrap_or_default());
        ToolSpec {
            name: name.to_string(),
            description: description.to_string(),
            parameters,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the tool does, for the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input schema as JSON text.
    pub fn parameters(&self) -> &RawValue {
        &self.parameters
    }
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call some tool.
    // Both wire formats encode it; no caller of the crate asks for it yet.
    #[allow(dead_code)]
    Required,
    /// The model must call this tool (how the judge forces `select_choice`).
    Tool(String),
}

/// A provider-neutral chat request.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ChatRequest {
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Whether and which tool the model must call (sent only when there are tools).
    pub tool_choice: ToolChoice,
    /// Cap on output tokens (Anthropic requires one; 1024 is sent when unset).
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Further keys of the request body, sent as given after the ones above (a key here
    /// replaces theirs): a promptfoo provider's `config` (`seed`, `top_p`, `response_format`,
    /// `passthrough`, …) as promptfoo sends it.
    pub(crate) extra: Option<std::sync::Arc<serde_json::Map<String, Value>>>,
}

impl ChatRequest {
    /// An empty request.
    pub fn new() -> ChatRequest {
        ChatRequest::default()
    }

    /// Sets the system prompt.
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
        self
    }

    /// Appends a user message.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(ChatMessage::User(text.into()));
        self
    }

    /// Declares a tool.
    pub fn tool(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// Forces a call of the tool `name`.
    pub fn force_tool(mut self, name: impl Into<String>) -> Self {
        self.tool_choice = ToolChoice::Tool(name.into());
        self
    }

    /// Sets the output token cap.
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's call id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments. When the provider sent text that is not JSON, this is that text as a JSON
    /// string and [`ToolCall::arguments_error`] says why.
    pub arguments: Value,
    /// Set when the arguments were not valid JSON.
    pub arguments_error: Option<String>,
}

/// A provider-neutral chat response.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ChatResponse {
    /// The text the model wrote (text blocks joined), empty when it only called tools.
    pub text: String,
    /// The tool calls it made, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens spent.
    pub usage: Usage,
    /// The model that answered, as the provider reports it.
    pub model: Option<String>,
    /// Why the model stopped (`stop`, `tool_calls`, `end_turn`, `tool_use`, ...).
    pub stop_reason: Option<String>,
    /// Served from the on-disk cache.
    pub cached: bool,
}

/// What is wrong with a model's answer: the body is not the wire format's JSON, or lacks what
/// the format promises.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// The body is not JSON of the API's answer.
    #[error("not a {api} answer ({source})")]
    NotAnAnswer {
        /// The API (`Chat Completions`, `Messages API`).
        api: &'static str,
        /// Why it does not read.
        #[source]
        source: std::sync::Arc<serde_json::Error>,
    },
    /// A part the format requires is missing.
    #[error("{0}")]
    Missing(&'static str),
    /// The answer is the API's error.
    #[error("the answer is an error: {0}")]
    ErrorAnswer(String),
    /// `message.content` is neither text nor parts.
    #[error("`message.content` is neither text nor parts: {0}")]
    Content(serde_json::Value),
    /// A `tool_use` content block without a name.
    #[error("content block {0} (tool_use) has no `name`")]
    ToolUseWithoutName(usize),
    /// The body is not JSON at all.
    #[error("not JSON: {0}")]
    NotJson(#[source] std::sync::Arc<serde_json::Error>),
    /// An embedding holds something other than a number.
    #[error("the embedding holds {0}, not a number")]
    NotANumber(serde_json::Value),
}

impl AnswerError {
    fn not_an_answer(api: &'static str) -> impl FnOnce(serde_json::Error) -> AnswerError {
        move |e| AnswerError::NotAnAnswer {
            api,
            source: std::sync::Arc::new(e),
        }
    }
}

/// Why a model call failed. Messages never contain an API key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// A model name is not `provider/model`.
    #[error("invalid model name {name:?}: {reason}")]
    BadModelName {
        /// The name as given.
        name: String,
        /// What is wrong and how to write it.
        reason: String,
    },
    /// No API key in the environment.
    #[error("{model} needs an API key: set the {var} environment variable{hint}")]
    MissingKey {
        /// The model.
        model: String,
        /// The variable that was read.
        var: String,
        /// How else to configure it.
        hint: String,
    },
    /// The base URL is unusable.
    #[error("invalid base URL {url:?} for {model}: {reason}")]
    BadBaseUrl {
        /// The model.
        model: String,
        /// The URL as configured.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The server answered with an error status.
    #[error("{model} at {url} answered HTTP {status}{after}: {message}")]
    Status {
        /// The model.
        model: String,
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The provider's error message, or an excerpt of the body.
        message: String,
        /// ` after N attempts` when retried.
        after: String,
    },
    /// The server did not answer in time.
    #[error("{model} at {url} did not answer within {seconds}s; raise {setting}")]
    Timeout {
        /// The model.
        model: String,
        /// The endpoint.
        url: String,
        /// The timeout.
        seconds: f64,
        /// Where the timeout is set (`[judge] timeout in niceeval.toml`, the agent's).
        setting: String,
    },
    /// The server could not be reached.
    #[error("cannot reach {model} at {url}{after}: {message}")]
    Connect {
        /// The model.
        model: String,
        /// The endpoint.
        url: String,
        /// The transport error.
        message: String,
        /// ` after N attempts` when retried.
        after: String,
    },
    /// The server asked to wait longer than the retry policy allows.
    #[error(
        "{model} at {url} is rate limited and asked to retry after {seconds}s, longer than the {max}s niceeval waits; try again later or lower the request rate"
    )]
    RetryTooLate {
        /// The model.
        model: String,
        /// The endpoint.
        url: String,
        /// What `Retry-After` asked for.
        seconds: u64,
        /// The longest wait allowed.
        max: u64,
    },
    /// The answer is not what the wire format promises (malformed JSON, missing fields).
    #[error("{model} at {url} sent an answer niceeval cannot read: {message}")]
    Decode {
        /// The model.
        model: String,
        /// The endpoint.
        url: String,
        /// What is wrong, with an excerpt of the body.
        message: String,
    },
}

/// `body` as JSON bytes, with the request's extra keys merged over its own (the caller's last
/// word, as promptfoo spreads `passthrough` last).
pub(crate) fn encode_with_extra(
    body: &impl serde::Serialize,
    request: &ChatRequest,
) -> Result<Vec<u8>, serde_json::Error> {
    let Some(extra) = request.extra.as_deref().filter(|e| !e.is_empty()) else {
        return serde_json::to_vec(body);
    };
    let mut value = serde_json::to_value(body)?;
    if let Value::Object(map) = &mut value {
        for (k, v) in extra {
            map.insert(k.clone(), v.clone());
        }
    }
    serde_json::to_vec(&value)
}

/// Quotes at most `max` characters of a response body for an error message.
pub(crate) fn body_excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    crate::base::excerpt::quote(text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_parse_and_reject() {
        let n = ModelName::parse("openai/meta-llama/Llama-3-8B").unwrap();
        assert_eq!(n.model(), "meta-llama/Llama-3-8B");
        assert_eq!(
            ModelName::parse("Anthropic/claude").unwrap().provider(),
            Provider::Anthropic
        );
        let err = ModelName::parse("google/gemini").unwrap_err().to_string();
        assert!(err.contains("unknown provider \"google\""), "{err}");
        assert!(ModelName::parse("openai/").is_err());
    }

    #[test]
    fn api_key_debug_is_redacted() {
        let key = ApiKey::new("sk-secret-123");
        assert!(!format!("{key:?}").contains("secret"));
    }

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("http://[::1]:8080/v1"));
        assert!(is_loopback("http://127.1.2.3"));
        assert!(!is_loopback("http://10.0.0.2:11434/v1"));
        assert!(!is_loopback("not a url"));
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::agents::provider::{ChatRequest, ModelName, Provider};

        let name = ModelName::parse("openai/gpt-4o-mini").unwrap();
        assert_eq!(name.provider(), Provider::OpenAi);
        assert_eq!(name.model(), "gpt-4o-mini");
        let request = ChatRequest::new().system("Be brief.").user("Hello");
        assert_eq!(request.messages.len(), 1);
    }

    #[test]
    fn example_2() {
        use crate::agents::provider::ModelName;

        assert_eq!(
            ModelName::parse("anthropic/claude-haiku-4-5")
                .unwrap()
                .to_string(),
            "anthropic/claude-haiku-4-5"
        );
        let err = ModelName::parse("gpt-4o").unwrap_err().to_string();
        assert!(err.contains("openai/gpt-4o"), "{err}");
    }

    #[test]
    fn example_3() {
        use crate::agents::provider::is_loopback;

        assert!(is_loopback("http://127.0.0.1:11434/v1"));
        assert!(is_loopback("http://localhost:8000"));
        assert!(!is_loopback("https://api.openai.com/v1"));
    }
}
