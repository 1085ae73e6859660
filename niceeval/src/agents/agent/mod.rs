//! The agent under test: the [`Agent`] trait, what it receives ([`Request`]), how it reports
//! what it does ([`EventSink`]), and the in-process adapter [`agent_fn`].
//!
//! An agent turns one input into a stream of [`Event`]s. It does not build a [`crate::Turn`]
//! itself: the eval handle derives the turn (reply, data, status, usage) from the events the
//! agent emitted, so every adapter — in-process closure, replayed transcript, subprocess, remote
//! model — is judged by the same rules, and events emitted before a crash or a timeout are kept.

pub mod replay;
// Real models and programs as agents (issue 4).
#[cfg(feature = "providers")]
#[cfg_attr(docsrs, doc(cfg(feature = "providers")))]
pub mod chat;
pub mod claude_code;
pub mod codex;
pub mod command;
#[cfg(feature = "providers")]
pub(crate) mod http;
mod subprocess;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use serde_json::Value;

use crate::base::event::{ActionStatus, Event, Role};

/// The name of the [`Event::Custom`] an agent emits when it measured its own turn
/// (`{"duration_ms": n}`; AgentV's `cli` targets write `duration_ms` in their output): the run's
/// latency ([`crate::Eval::latency_ms`], what `latency` items and graders' `duration_ms` read)
/// counts that turn at the reported duration instead of the wall time of the send, as AgentV
/// prefers a target's reported duration to its own measure. The last one of a turn wins.
pub(crate) const DURATION_EVENT: &str = "agent:duration";

/// The duration a turn's events report ([`DURATION_EVENT`]), in milliseconds.
pub(crate) fn reported_duration(events: &[Event]) -> Option<f64> {
    events.iter().rev().find_map(|event| match event {
        Event::Custom { name, data } if name == DURATION_EVENT => data
            .get("duration_ms")
            .and_then(Value::as_f64)
            .filter(|ms| *ms >= 0.0),
        _ => None,
    })
}

/// Something that can be evaluated: receives input, emits events.
///
/// Implement it with [`macro@crate::async_trait`] (re-exported by niceeval), or wrap a closure with
/// [`agent_fn`].
///
/// ```
/// use niceeval::{async_trait, agent::{Agent, AgentError, Request}};
///
/// struct Echo;
///
/// #[async_trait]
/// impl Agent for Echo {
///     async fn send(&self, request: Request) -> Result<(), AgentError> {
///         request.events.say(format!("you said: {}", request.input.text));
///         Ok(())
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait Agent: Send + Sync {
    /// Handles one turn: read `request.input`, emit events through `request.events`.
    ///
    /// Returning `Err` fails the turn: an `error` event is recorded and
    /// [`crate::Eval::send`] returns the error, so `?` ends the eval as an execution error.
    async fn send(&self, request: Request) -> Result<(), AgentError>;

    /// A short name for reports (defaults to the type name).
    fn name(&self) -> String {
        std::any::type_name::<Self>()
            .rsplit("::")
            .next()
            .unwrap_or("agent")
            .to_string()
    }
}

#[async_trait::async_trait]
impl<A: Agent + ?Sized> Agent for Arc<A> {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        (**self).send(request).await
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

#[async_trait::async_trait]
impl<A: Agent + ?Sized> Agent for Box<A> {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        (**self).send(request).await
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

/// Why an agent could not complete a turn: a message for the report, and the error that caused
/// it when there is one ([`AgentError::caused_by`], reached through
/// [`std::error::Error::source`]).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct AgentError {
    message: String,
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl AgentError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        AgentError {
            message: message.into(),
            source: None,
        }
    }

    /// The same error, caused by `source` (kept, and reached through
    /// [`std::error::Error::source`]; the message already says what happened).
    pub fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Two errors are equal when their messages are (a cause is not compared).
impl PartialEq for AgentError {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

impl Eq for AgentError {}

impl From<String> for AgentError {
    fn from(message: String) -> Self {
        AgentError::new(message)
    }
}

impl From<&str> for AgentError {
    fn from(message: &str) -> Self {
        AgentError::new(message)
    }
}

/// What the eval sends to the agent: text, optionally with structured data.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Input {
    /// The user message.
    pub text: String,
    /// Structured input, when the eval sent JSON.
    pub data: Option<Value>,
}

impl From<&str> for Input {
    fn from(text: &str) -> Self {
        Input {
            text: text.to_string(),
            data: None,
        }
    }
}

impl From<String> for Input {
    fn from(text: String) -> Self {
        Input { text, data: None }
    }
}

impl From<&String> for Input {
    fn from(text: &String) -> Self {
        Input::from(text.as_str())
    }
}

impl From<&crate::base::event::Text> for Input {
    fn from(text: &crate::base::event::Text) -> Self {
        Input::from(text.as_str())
    }
}

impl From<crate::base::event::Text> for Input {
    fn from(text: crate::base::event::Text) -> Self {
        Input::from(text.as_str())
    }
}

impl From<Value> for Input {
    fn from(data: Value) -> Self {
        let text = match &data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        Input {
            text,
            data: Some(data),
        }
    }
}

/// One message of the conversation so far, as the agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// Who spoke.
    pub role: Role,
    /// What was said.
    pub text: crate::base::event::Text,
}

/// Everything an agent gets for one turn. Owned, so closures can move it into futures.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Request {
    /// This turn's input.
    pub input: Input,
    /// Identifier of the conversation; changes on [`crate::Eval::new_session`].
    pub session: String,
    /// Earlier messages of this session, oldest first (this turn's input not included).
    pub history: Vec<Message>,
    /// When this turn answers an `input.requested` event: that event's request.
    pub responding_to: Option<Value>,
    /// Where the agent reports what it does.
    pub events: EventSink,
    /// The run's working copy and its isolation, for an eval with `#[eval(workspace = ..)]`.
    pub(crate) sandbox: Option<crate::resources::workspace::Sandbox>,
    /// The directory of the eval's crate (its manifest), inside an eval: what a command
    /// agent's relative script paths resolve against.
    pub(crate) manifest_dir: Option<std::path::PathBuf>,
    /// The turn's W3C trace context, inside an eval (feature `otel`).
    pub(crate) traceparent: Option<String>,
}

impl Request {
    /// A request with this input and no history, for calling an agent outside an eval (its
    /// events go to `events`).
    ///
    /// ```
    /// use niceeval::agent::{EventSink, Request};
    ///
    /// let request = Request::new("hello", EventSink::default());
    /// assert_eq!(request.input.text, "hello");
    /// assert!(request.workdir().is_none());
    /// ```
    pub fn new(input: impl Into<Input>, events: EventSink) -> Request {
        Request {
            input: input.into(),
            session: "session-1".to_string(),
            history: Vec::new(),
            responding_to: None,
            events,
            sandbox: None,
            manifest_dir: None,
            traceparent: None,
        }
    }

    /// The turn's W3C trace context (`00-<trace id>-<span id>-01`), inside an eval: an agent
    /// that calls a traced service passes it on (a `traceparent` header), so the service's
    /// spans, exported to niceeval's receiver, become this run's events (see `niceeval::trace`).
    ///
    /// ```
    /// use niceeval::agent::{EventSink, Request};
    ///
    /// assert_eq!(Request::new("hi", EventSink::default()).traceparent(), None);
    /// ```
    pub fn traceparent(&self) -> Option<&str> {
        self.traceparent.as_deref()
    }

    /// The same request, working in `sandbox` (a working copy and its isolation).
    #[doc(hidden)] // how the engine runs an agent in a working copy
    pub fn with_sandbox(mut self, sandbox: crate::resources::workspace::Sandbox) -> Request {
        self.sandbox = Some(sandbox);
        self
    }

    /// The run's working copy, when the eval has a workspace (`#[eval(workspace = ..)]`): the
    /// directory the agent is to work in.
    pub fn workdir(&self) -> Option<&std::path::Path> {
        self.sandbox.as_ref().map(|s| s.root())
    }

    /// The run's sandbox, when the eval has a workspace.
    #[doc(hidden)] // agents use `command` and `workdir`
    pub fn sandbox(&self) -> Option<&crate::resources::workspace::Sandbox> {
        self.sandbox.as_ref()
    }

    /// A command for running `program` during this turn: in the working copy, under the
    /// workspace's isolation (`[workspace] isolation = "bubblewrap"` wraps it in `bwrap`), when
    /// the eval has a workspace; a plain command in the current directory otherwise. Agents
    /// that run programs build them here so they work where the eval looks.
    ///
    /// ```
    /// use niceeval::agent::{EventSink, Request};
    ///
    /// let request = Request::new("hi", EventSink::default());
    /// let command = request.command("echo");
    /// assert_eq!(command.as_std().get_program(), "echo");
    /// ```
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
        match &self.sandbox {
            Some(sandbox) => sandbox.command(program),
            None => tokio::process::Command::new(program),
        }
    }
}

/// The channel an agent reports events through. Cheap to clone; all clones feed the same turn.
///
/// ```
/// use niceeval::{Event, agent::EventSink};
/// use serde_json::json;
///
/// let sink = EventSink::default();
/// sink.tool_call("lookup_order", json!({"id": "123"}), json!({"status": "shipped"}));
/// sink.say("Your order has shipped.");
/// let events = sink.snapshot();
/// assert_eq!(events.len(), 3);
/// assert_eq!(events[2], Event::assistant("Your order has shipped."));
/// ```
#[derive(Clone, Default)]
pub struct EventSink {
    inner: Arc<Mutex<SinkState>>,
}

#[derive(Default)]
struct SinkState {
    events: Vec<Event>,
    data: Option<Value>,
    next_call: u64,
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventSink")
            .field("events", &self.lock().events.len())
            .finish()
    }
}

impl EventSink {
    fn lock(&self) -> MutexGuard<'_, SinkState> {
        // A panicking agent must not hide the events it emitted before the panic.
        self.inner
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Records one event.
    pub fn emit(&self, event: Event) {
        self.lock().events.push(event);
    }

    /// Records an assistant message.
    pub fn say(&self, text: impl Into<crate::base::event::Text>) {
        self.emit(Event::assistant(text));
    }

    /// Records a completed tool call (an `action.called` and its `action.result`); returns the
    /// generated call id.
    pub fn tool_call(&self, name: impl Into<String>, input: Value, output: Value) -> String {
        self.tool_call_with_status(name, input, output, ActionStatus::Completed)
    }

    /// Records a tool call that ended with `status`; returns the generated call id.
    pub fn tool_call_with_status(
        &self,
        name: impl Into<String>,
        input: Value,
        output: Value,
        status: ActionStatus,
    ) -> String {
        let call_id = self.next_call_id();
        self.emit(Event::ActionCalled {
            call_id: call_id.clone(),
            name: name.into(),
            input,
        });
        self.emit(Event::ActionResult {
            call_id: call_id.clone(),
            output,
            status,
        });
        call_id
    }

    /// A fresh call id, unique within this sink (`call_1`, `call_2`, ...).
    pub fn next_call_id(&self) -> String {
        let mut state = self.lock();
        state.next_call += 1;
        format!("call_{}", state.next_call)
    }

    /// Records token usage for one model call.
    pub fn usage(&self, input_tokens: u64, output_tokens: u64) {
        self.emit(Event::Usage {
            input_tokens,
            output_tokens,
            cache_read_tokens: 0,
            cost_usd: None,
            model: None,
        });
    }

    /// Records token usage for one call of `model` (`provider/model`), so `max_cost` and the
    /// reports can price it from the price table.
    ///
    /// ```
    /// use niceeval::{Event, agent::EventSink};
    ///
    /// let sink = EventSink::default();
    /// sink.model_usage("openai/gpt-4o-mini", 1200, 80);
    /// assert!(matches!(&sink.snapshot()[0], Event::Usage { model: Some(m), .. } if m == "openai/gpt-4o-mini"));
    /// ```
    pub fn model_usage(&self, model: impl Into<String>, input_tokens: u64, output_tokens: u64) {
        self.emit(Event::Usage {
            input_tokens,
            output_tokens,
            cache_read_tokens: 0,
            cost_usd: None,
            model: Some(model.into()),
        });
    }

    /// Sets the turn's structured output ([`crate::Turn::data`]).
    pub fn set_data(&self, data: Value) {
        self.lock().data = Some(data);
    }

    /// A copy of the events recorded so far.
    pub fn snapshot(&self) -> Vec<Event> {
        self.lock().events.clone()
    }

    /// Takes the recorded events and data out of the sink.
    pub(crate) fn drain(&self) -> (Vec<Event>, Option<Value>) {
        let mut state = self.lock();
        (std::mem::take(&mut state.events), state.data.take())
    }
}

/// Wraps an async closure as an [`Agent`].
///
/// ```
/// use niceeval::agent::{agent_fn, Agent, Request};
///
/// let agent = agent_fn(|request: Request| async move {
///     request.events.say(format!("echo: {}", request.input.text));
///     Ok(())
/// });
/// # fn assert_agent(_: &impl Agent) {}
/// # assert_agent(&agent);
/// ```
pub fn agent_fn<F, Fut>(f: F) -> impl Agent
where
    F: Fn(Request) -> Fut + Send + Sync,
    Fut: Future<Output = Result<(), AgentError>> + Send,
{
    FnAgent { f }
}

/// The agent returned by [`agent_fn`].
pub(crate) struct FnAgent<F> {
    f: F,
}

impl<F> fmt::Debug for FnAgent<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnAgent")
    }
}

#[async_trait::async_trait]
impl<F, Fut> Agent for FnAgent<F>
where
    F: Fn(Request) -> Fut + Send + Sync,
    Fut: Future<Output = Result<(), AgentError>> + Send,
{
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        (self.f)(request).await
    }

    fn name(&self) -> String {
        "agent_fn".to_string()
    }
}

/// Why `[agent]` in `niceeval.toml` cannot become an agent; every message starts with the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum AgentConfigError {
    /// `command = []`.
    #[error("{file}: [agent] command must not be empty")]
    EmptyCommand {
        /// The configuration file.
        file: String,
    },
    /// The `model` of a chat agent is not `provider/model`.
    #[cfg(feature = "providers")]
    #[error("{file}: [agent] model: {source}")]
    Model {
        /// The configuration file.
        file: String,
        /// Why the name is refused.
        #[source]
        source: Box<crate::agents::provider::ProviderError>,
    },
    /// A model agent in a build without the `providers` feature.
    #[cfg(not(feature = "providers"))]
    #[error(
        "{file}: [agent] type = {kind:?} needs niceeval's `providers` feature; enable it in Cargo.toml (it is on by default)"
    )]
    NeedsProviders {
        /// The configuration file.
        file: String,
        /// The `type` as written.
        kind: String,
    },
}

/// Builds the default agent described by `[agent]` in `niceeval.toml`. Relative paths resolve
/// against the directory of the file (`config_path`).
pub(crate) fn from_config(
    agent: &crate::config::AgentConfig,
    config_path: Option<&std::path::Path>,
) -> Result<Arc<dyn Agent>, AgentConfigError> {
    use crate::config::AgentConfig;
    let file = config_path
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| crate::config::FILE_NAME.to_string());
    let base = config_path
        .and_then(|p| p.parent())
        .unwrap_or_else(|| std::path::Path::new("."));
    Ok(match agent {
        AgentConfig::Replay(replay) => Arc::new(replay::replay(base.join(&replay.path))),
        AgentConfig::Command(command) => Arc::new(command::from_config(command, base, &file)?),
        AgentConfig::ClaudeCode(claude) => Arc::new(claude_code::from_config(claude)),
        AgentConfig::Codex(codex) => Arc::new(codex::from_config(codex)),
        #[cfg(feature = "providers")]
        AgentConfig::Chat(chat) | AgentConfig::Openai(chat) | AgentConfig::Anthropic(chat) => {
            Arc::new(chat::from_config(agent.kind(), chat, &file)?)
        }
        #[cfg(not(feature = "providers"))]
        AgentConfig::Chat(_) | AgentConfig::Openai(_) | AgentConfig::Anthropic(_) => {
            return Err(AgentConfigError::NeedsProviders {
                file,
                kind: agent.kind().to_string(),
            });
        }
    })
}

/// The keys every subprocess agent's `[agent]` section has beside its own: `program`,
/// `timeout` and `env`, applied to the agent's process.
fn process_keys(
    process: &mut subprocess::ProcessAgent,
    program: Option<&String>,
    timeout: Option<&crate::config::DurationSetting>,
    env: &std::collections::BTreeMap<String, String>,
) {
    if let Some(program) = program {
        process.program = program.clone();
    }
    if let Some(timeout) = timeout {
        process.timeout = timeout.get();
    }
    process
        .env
        .extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
}

#[cfg(test)]
mod tests {
    /// A turn the agent says it took 1234 ms over counts 1234 ms, whatever the wall time.
    #[tokio::test]
    async fn a_reported_duration_is_the_turns_latency() {
        let agent = super::agent_fn(|request: super::Request| async move {
            request.events.emit(super::Event::Custom {
                name: super::DURATION_EVENT.into(),
                data: serde_json::json!({"duration_ms": 1234}),
            });
            request.events.say("done");
            Ok(())
        });
        let mut t = crate::Eval::detached(Some(std::sync::Arc::new(agent)));
        t.send("hi").await.expect("a turn");
        assert_eq!(t.latency_ms(), 1234.0);
        assert_eq!(t.spec_context().latency_ms, Some(1234.0));
    }

    fn agent(text: &str) -> crate::config::AgentConfig {
        crate::config::Config::parse(text, "niceeval.toml")
            .expect("a valid [agent]")
            .agent
            .expect("an [agent]")
    }

    #[test]
    fn codex_is_an_agent_type() {
        let config =
            agent("[agent]\ntype = \"codex\"\nmodel = \"gpt-5.5\"\nsandbox = \"read-only\"\n");
        let built = super::from_config(&config, None).expect("a codex agent");
        assert_eq!(built.name(), "codex (gpt-5.5)");
        let err = crate::config::Config::parse(
            "[agent]\ntype = \"codex\"\nsandbox = \"open\"\n",
            "niceeval.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with(
                "niceeval.toml:3:11: [agent] sandbox: \"open\" is not a Codex sandbox mode"
            ),
            "{err}"
        );
    }

    #[cfg(not(feature = "providers"))]
    #[test]
    fn model_agents_without_the_feature_are_errors_naming_it() {
        let config = agent("[agent]\ntype = \"openai\"\nmodel = \"gpt-4o-mini\"\n");
        let err = super::from_config(&config, None).err().expect("an error");
        assert_eq!(
            err.to_string(),
            "niceeval.toml: [agent] type = \"openai\" needs niceeval's `providers` feature; enable it in Cargo.toml (it is on by default)"
        );
    }
}
