//! The [`Eval`] handle (`t`): talks to the agent under test and records assertions.

use std::sync::Arc;

use crate::agents::agent::{Agent, EventSink, Input, Message, Request};
use crate::base::assertion::{Assertion, AssertionResult, CheckContext, Checkable, WorkingCopy};
use crate::base::event::{Event, Role, Usage};
use crate::checks::scope::{Scoped, ScopedCheck};
use crate::config::Config;
use crate::run::error::{Error, Result};
use crate::run::record::Record;

mod assertions;
mod traced;
mod workspace;

use crate::run::turn::{Turn, TurnStatus};
use traced::Traced;
pub use workspace::RunTests;

/// The handle an eval body receives as `t`.
///
/// Value assertions ([`Eval::check`], [`Eval::require`]) take `&self`, so they borrow naturally
/// alongside `t.reply()`: `t.check(t.reply(), includes("x"))` compiles.
pub struct Eval {
    id: String,
    agent: Option<Arc<dyn Agent>>,
    config: Arc<Config>,
    record: Arc<Record>,
    events: Vec<Event>,
    turns: Vec<Turn>,
    session: u32,
    history: Vec<Message>,
    /// `#[eval(judge_model = ..)]`.
    judge_model: Option<String>,
    /// The eval crate's manifest directory (for the judge cache's target directory).
    manifest_dir: Option<std::path::PathBuf>,
    /// The case of a dataset eval this run is for.
    case_id: Option<String>,
    case_name: Option<String>,
    /// How long the agent took over this run's turns, in milliseconds.
    latency_ms: f64,
    /// The `input.requested` payload the last turn of this session is parked on.
    awaiting: Option<serde_json::Value>,
    /// The run's working copy (`#[eval(workspace = ..)]`).
    workspace: Option<Arc<crate::resources::workspace::Workspace>>,
    /// The run's trace: spans received for it become the turns' events (nothing without
    /// `otel`).
    trace: Traced,
}

impl std::fmt::Debug for Eval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Eval")
            .field("id", &self.id)
            .field("turns", &self.turns.len())
            .field("events", &self.events.len())
            .finish()
    }
}

impl Eval {
    pub(crate) fn new(
        id: String,
        agent: Option<Arc<dyn Agent>>,
        config: Arc<Config>,
        record: Arc<Record>,
    ) -> Self {
        Eval {
            id,
            agent,
            config,
            record,
            events: Vec::new(),
            turns: Vec::new(),
            session: 1,
            history: Vec::new(),
            judge_model: None,
            manifest_dir: None,
            awaiting: None,
            case_id: None,
            case_name: None,
            latency_ms: 0.0,
            workspace: None,
            trace: Traced::default(),
        }
    }

    /// Gives the run its trace (spans received for it become the turns' events).
    #[cfg(feature = "otel")]
    pub(crate) fn with_trace(mut self, trace: Arc<crate::agents::trace::RunTrace>) -> Self {
        self.trace = Traced::new(trace);
        self
    }

    /// Gives the run its working copy.
    pub(crate) fn with_workspace(
        mut self,
        workspace: Option<Arc<crate::resources::workspace::Workspace>>,
    ) -> Self {
        self.workspace = workspace;
        self
    }

    /// Sets the dataset case this run is for: its own id and its test name.
    pub(crate) fn with_case(mut self, case: Option<(&str, &str)>) -> Self {
        self.case_id = case.map(|(id, _)| id.to_string());
        self.case_name = case.map(|(_, name)| name.to_string());
        self
    }

    /// The id of the dataset case this eval runs, as its record gives it (`"new-york"` stays
    /// `"new-york"`, `42` becomes `"42"`; a record without an `id` gives its 1-based position,
    /// `"7"`), for an eval with `#[eval(cases = "..")]`; `None` otherwise.
    ///
    /// ```
    /// assert_eq!(niceeval::Eval::detached(None).case_id(), None);
    /// ```
    pub fn case_id(&self) -> Option<&str> {
        self.case_id.as_deref()
    }

    /// The case's name in test names and eval ids (`new_york`, `case_42`, `case_007`): its id
    /// with characters outside `[A-Za-z0-9_]` replaced; `None` outside a dataset eval.
    ///
    /// ```
    /// assert_eq!(niceeval::Eval::detached(None).case_name(), None);
    /// ```
    pub fn case_name(&self) -> Option<&str> {
        self.case_name.as_deref()
    }

    /// Sets the eval's judge model (`#[eval(judge_model = ..)]`).
    pub(crate) fn with_judge_model(mut self, model: Option<&str>) -> Self {
        self.judge_model = model.map(str::to_string);
        self
    }

    /// Sets the eval crate's manifest directory.
    pub(crate) fn with_manifest_dir(mut self, dir: &str) -> Self {
        self.manifest_dir = Some(std::path::PathBuf::from(dir));
        self
    }

    /// A handle outside any test, for trying assertions in examples and unit tests. Its record is
    /// discarded; `send` works when `agent` is given.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// let t = Eval::detached(None);
    /// let r = t.check("hello", includes("ell"));
    /// assert!(r.passed);
    /// ```
    pub fn detached(agent: Option<Arc<dyn Agent>>) -> Self {
        Eval::new(
            "detached".to_string(),
            agent,
            Arc::new(Config::default()),
            Arc::new(Record::default()),
        )
    }

    /// The eval's id (`module::path::name`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The configuration in effect.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Sends a message to the agent and waits for its turn to end.
    ///
    /// Returns `Err` when there is no agent or the agent failed the turn (an agent error or an
    /// `error` event); propagate it with `?` to end the eval as an execution error. The turn's
    /// events are recorded either way.
    pub async fn send(&mut self, input: impl Into<Input>) -> Result<Turn> {
        self.run_turn(input.into(), None).await
    }

    /// Answers a turn parked on `input.requested` and continues the run: the agent gets the
    /// answer as its input, with the request in [`Request::responding_to`], in the same session.
    ///
    /// Returns [`Error::NotParked`] when the last turn of the current session is not waiting for
    /// input (it completed or failed, was already answered, or [`Eval::new_session`] was called
    /// since).
    pub async fn respond(&mut self, answer: impl Into<Input>) -> Result<Turn> {
        let request = self.awaiting.take().ok_or(Error::NotParked)?;
        self.run_turn(answer.into(), Some(request)).await
    }

    async fn run_turn(
        &mut self,
        input: Input,
        responding_to: Option<serde_json::Value>,
    ) -> Result<Turn> {
        let agent = self.agent.clone().ok_or_else(|| Error::NoAgent {
            eval: self.id.clone(),
        })?;
        let sink = EventSink::default();
        let user = Event::user(input.text.clone());
        // What the working copy looked like before the send, so the turn knows what it changed.
        let before = match &self.workspace {
            Some(ws) => Some(workspace::snapshot(ws).await?),
            None => None,
        };
        let first_event = self.record.begin_turn(user.clone(), sink.clone());
        if let (Some(ws), Some(before)) = (&self.workspace, &before) {
            self.record.turn_workspace(ws.clone(), before.clone());
        }
        let traceparent = self.trace.traceparent();
        let request = Request {
            input: input.clone(),
            session: format!("session-{}", self.session),
            history: self.history.clone(),
            responding_to,
            events: sink.clone(),
            sandbox: self.workspace.as_ref().map(|ws| ws.sandbox().clone()),
            manifest_dir: self.manifest_dir.clone(),
            traceparent,
        };
        let started = std::time::Instant::now();
        let outcome = self.trace.send(agent.as_ref(), request).await;
        let measured_ms = started.elapsed().as_secs_f64() * 1000.0;
        let (mut emitted, data) = sink.drain();
        // An agent that measured its own turn reports it; that counts, not the send's wall time.
        let duration_ms = crate::agents::agent::reported_duration(&emitted).unwrap_or(measured_ms);
        // The turn's spans (waiting up to `[trace] settle` for those still on their way) as
        // events, after the agent's own.
        self.trace
            .add_spans(&mut emitted, self.config.trace_settle())
            .await;
        if let Err(e) = &outcome {
            emitted.push(Event::Error {
                message: e.message().to_string(),
            });
        }
        if let (Some(ws), Some(before)) = (&self.workspace, before) {
            match workspace::changes_since(ws, before).await {
                Ok(Some(changed)) => emitted.push(changed),
                Ok(None) => {}
                Err(e) => emitted.push(Event::Error {
                    message: format!("cannot tell what the turn changed in the working copy: {e}"),
                }),
            }
        }
        self.record.end_turn(&emitted);
        let mut events = Vec::with_capacity(emitted.len() + 1);
        events.push(user);
        events.extend(emitted);
        self.events.extend_from_slice(&events);
        let turn = Turn::from_events(self.turns.len(), first_event, events, data)
            .attach(self.record.clone())
            .in_workspace(self.workspace.is_some());
        self.latency_ms += duration_ms;
        self.awaiting = turn.pending_request().cloned();
        self.history.push(Message {
            role: Role::User,
            text: input.text.into(),
        });
        if !turn.message.is_empty() {
            self.history.push(Message {
                role: Role::Assistant,
                text: turn.message.clone(),
            });
        }
        self.turns.push(turn.clone());
        if turn.status == TurnStatus::Failed {
            let message = turn
                .events
                .iter()
                .rev()
                .find_map(|e| match e {
                    Event::Error { message } => Some(message.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "the turn failed".to_string());
            return Err(Error::Agent {
                agent: agent.name(),
                message,
            });
        }
        Ok(turn)
    }

    /// Earlier turns the agent gets as this session's history before the first send (a data
    /// eval's start: a suite file's chat prompt with several turns).
    pub(crate) fn seed_history(&mut self, messages: Vec<Message>) {
        self.history.extend(messages);
    }

    /// Starts a new conversation: the agent gets a new session id and an empty history. Events
    /// and assertions of the run are kept; a turn left waiting for input can no longer be
    /// answered with [`Eval::respond`].
    pub fn new_session(&mut self) {
        self.session += 1;
        self.history.clear();
        self.awaiting = None;
    }

    /// The last assistant message of the run (empty before the first reply).
    pub fn reply(&self) -> &str {
        self.turns
            .iter()
            .rev()
            .find(|t| !t.message.is_empty())
            .map_or("", |t| t.message.as_str())
    }

    /// Every event of the run so far, across turns and sessions.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Every turn of the run so far.
    pub fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// Tokens summed over the run's `usage` events, and their cost: what the agent reported,
    /// else the estimate from the price table (`[prices]` in niceeval.toml over the built-in
    /// table) for the models the events name — `None` when a model has no price.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> niceeval::Result {
    /// let agent = agent_fn(|request: Request| async move {
    ///     request.events.emit(niceeval::Event::Usage {
    ///         input_tokens: 1_000_000, output_tokens: 0, cache_read_tokens: 0,
    ///         cost_usd: None, model: Some("openai/gpt-4o-mini".into()),
    ///     });
    ///     request.events.say("done");
    ///     Ok(())
    /// });
    /// let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
    /// t.send("go").await?;
    /// assert_eq!(t.usage().input_tokens, 1_000_000);
    /// assert!((t.usage().cost_usd.unwrap() - 0.15).abs() < 1e-9); // the built-in price
    /// # Ok(()) }
    /// ```
    pub fn usage(&self) -> Usage {
        let mut usage = Usage::from_events(&self.events);
        usage.cost_usd = crate::resources::price::run_cost(&self.events, &self.config);
        usage
    }

    /// How long the agent took over this run's turns so far, in milliseconds.
    pub fn latency_ms(&self) -> f64 {
        self.latency_ms
    }

    /// The context for assertions as data ([`crate::checks::spec::evaluate`]) filled in from this run:
    /// its messages, trace summary and tokens, its cost ([`Eval::usage`]: reported, else
    /// estimated) and its latency ([`Eval::latency_ms`]), so `cost` and `latency` items need
    /// nothing passed by hand.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// use niceeval::spec::{self, AssertSpec};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> niceeval::Result {
    /// let agent = agent_fn(|request: Request| async move {
    ///     request.events.emit(niceeval::Event::Usage {
    ///         input_tokens: 1000, output_tokens: 100, cache_read_tokens: 0,
    ///         cost_usd: None, model: Some("openai/gpt-4o-mini".into()),
    ///     });
    ///     request.events.say("Refund sent");
    ///     Ok(())
    /// });
    /// let mut t = Eval::detached(Some(std::sync::Arc::new(agent)));
    /// t.send("refund please").await?;
    /// let specs = vec![
    ///     AssertSpec::new("cost", serde_json::json!(0.01)),
    ///     AssertSpec::new("latency", serde_json::json!(5000)),
    /// ];
    /// let outcome = spec::evaluate(&specs, &t.reply(), &t.spec_context()).unwrap();
    /// assert!(outcome.pass, "{:?}", outcome.results);
    /// # Ok(()) }
    /// ```
    pub fn spec_context(&self) -> crate::checks::spec::SpecContext {
        let mut context = crate::checks::spec::SpecContext::new().with_events(&self.events);
        context.cost_usd = self.usage().cost_usd;
        context.latency_ms = Some(self.latency_ms());
        context
    }

    /// Checks `value` now, records the result and continues.
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// let t = Eval::detached(None);
    /// let r = t.check(json!({"n": 3}), equals(json!({"n": 3})));
    /// assert!(r.passed);
    /// ```
    pub fn check<V: Checkable, A: Assertion>(&self, value: V, assertion: A) -> AssertionResult {
        // What the checks that need it read of the run: assertions as data its cost and
        // latency, script and custom graders its working copy.
        let working_copy = self.workspace.as_ref().map(|ws| {
            let ws = ws.clone();
            WorkingCopy::new(ws.path().to_path_buf(), move || {
                ws.try_diff().ok().map(|d| d.text().to_string())
            })
        });
        let context = CheckContext::of_run(self.usage().cost_usd, self.latency_ms, working_copy);
        let result = AssertionResult::evaluate_in(&assertion, &value.subject(), &context);
        self.record.push_result(result.clone());
        result
    }

    /// Like [`Eval::check`], but returns `Err` when the assertion does not pass, so `?` stops the
    /// body. The failure is recorded; the outcome follows from it (a failed gate fails the eval).
    ///
    /// ```
    /// use niceeval::prelude::*;
    ///
    /// let t = Eval::detached(None);
    /// assert!(t.require(r#"{"id": 7}"#, is_json(None)).is_ok());
    /// assert!(t.require("not JSON", is_json(None)).is_err());
    /// ```
    pub fn require<V: Checkable, A: Assertion>(
        &self,
        value: V,
        assertion: A,
    ) -> Result<AssertionResult> {
        let result = self.check(value, assertion);
        if result.passed {
            Ok(result)
        } else {
            Err(Error::Required {
                name: result.name.clone(),
                reason: result.reason.clone(),
            })
        }
    }

    /// Marks the run skipped and returns the error that stops the body: write
    /// `return t.skip("why");` in a body returning `niceeval::Result`. The skip is recorded even
    /// if the returned error is ignored. A failed gate or an execution error still wins over it.
    pub fn skip(&self, reason: impl Into<String>) -> Result {
        let reason = reason.into();
        self.record.skip(reason.clone());
        Err(Error::Skipped(reason))
    }

    /// Registers a scoped check of your own (any [`ScopedCheck`]) over the whole run,
    /// evaluated after the body returns, like the built-in `t.called_tool(..)` and friends.
    /// On a [`crate::Turn`], `turn.scoped(check)` limits it to that turn.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// use niceeval::scope::{RunView, ScopedCheck};
    ///
    /// struct NoErrors;
    ///
    /// impl ScopedCheck for NoErrors {
    ///     fn describe(&self) -> String {
    ///         "no error events".into()
    ///     }
    ///     fn evaluate(&self, run: &RunView<'_>) -> niceeval::Grade {
    ///         let errors = run.events.iter().filter(|e| matches!(e, Event::Error { .. })).count();
    ///         niceeval::Grade::from_bool(errors == 0, format!("{errors} error events"))
    ///     }
    /// }
    ///
    /// # let t = Eval::detached(None);
    /// t.scoped(NoErrors);
    /// ```
    pub fn scoped<C: ScopedCheck + 'static>(&self, check: C) -> Scoped<C> {
        Scoped::new(self.record.clone(), check, None)
    }

    /// The former name of [`Eval::scoped`].
    #[deprecated(since = "0.2.0", note = "renamed to `scoped`: `t.scoped(check)`")]
    pub fn expect_run<C: ScopedCheck + 'static>(&self, check: C) -> Scoped<C> {
        self.scoped(check)
    }
}

/// What the judge (layer 7, feature `providers`) reads from the handle to register its calls.
#[cfg_attr(not(feature = "providers"), allow(dead_code))]
impl Eval {
    /// The last user message so far (empty before the first `send`).
    pub(crate) fn last_user_message(&self) -> String {
        self.events
            .iter()
            .rev()
            .find_map(|e| match e {
                Event::Message {
                    role: Role::User,
                    text,
                } => Some(text.to_string()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The run's record, where builders register their work.
    pub(crate) fn record(&self) -> &Arc<Record> {
        &self.record
    }

    /// `#[eval(judge_model = ..)]`, if set.
    pub(crate) fn judge_model(&self) -> Option<&str> {
        self.judge_model.as_deref()
    }

    /// The eval crate's manifest directory, when the engine runs a registered eval.
    pub(crate) fn manifest_dir(&self) -> Option<&std::path::Path> {
        self.manifest_dir.as_deref()
    }

    pub(crate) fn config_arc(&self) -> &Arc<Config> {
        &self.config
    }
}

/// The run's list of checks graded after the body, as a target to register on
/// ([`crate::checks::scope::deferred::register`]): how a data eval's own kinds of checks join the run.
pub fn checks_of(t: &Eval) -> Arc<dyn crate::checks::scope::Defer> {
    t.record.clone()
}

/// The run's working copy, when the eval has one (suite files' script graders get its path,
/// as `t.check` gives it to a script grader).
pub fn workspace_path(t: &Eval) -> Option<std::path::PathBuf> {
    t.workspace.as_ref().map(|ws| ws.path().to_path_buf())
}
