//! LLM-as-judge: `t.judge()` and its scorers `factuality`, `closed_qa`, `summarizes` and
//! `rubric`, graded by a separate judge model after the eval body returns.
//!
//! A judge assertion is a check like every scoped assertion: registered when its
//! [`Scoped`] builder is dropped (the end of the statement), graded after the body, soft by
//! default. It is *costly* (a model is asked over HTTP): it is not graded for a run that already
//! ended in an execution error or a skip. What it judges is captured at registration: the
//! last reply so far (or the text given to `.on(..)`) and the last user message so far as the
//! question (or `.input(..)`). After the body returns, every judge assertion of the run is sent
//! to its judge model at once (concurrently, capped per provider endpoint) and scored.
//!
//! The model resolves per call (`.model("openai/gpt-4o-mini")`), then
//! `#[eval(judge_model = "..")]`, then `[judge] model` in niceeval.toml, then the
//! `NICEEVAL_JUDGE_MODEL` environment variable. A judge that cannot be asked (no model, no API
//! key, an HTTP error, a timeout) or whose answer cannot be scored (no tool call, a choice
//! outside the allowed set, a score outside [0, 1]) is an execution error on that assertion, with
//! a message saying what to set or what went wrong — never a silent pass.
//!
//! ```
//! use niceeval::prelude::*;
//!
//! fn geography_bot() -> impl Agent {
//!     agent_fn(|request: Request| async move {
//!         request.events.say("Paris is the capital of France.");
//!         Ok(())
//!     })
//! }
//!
//! #[eval(agent = geography_bot, judge_model = "openai/gpt-4o-mini")]
//! async fn capital(t: &mut Eval) -> niceeval::Result {
//!     if let Err(why) = t.judge().ready() {
//!         return t.skip(format!("no judge model: {why}"));
//!     }
//!     t.send("What is the capital of France?").await?;
//!     t.judge().factuality("The capital of France is Paris.").at_least(0.6);
//!     t.judge().closed_qa("Does the answer name a city?").gate();
//!     Ok(())
//! }
//! # fn main() {}
//! ```

mod prompts;
pub(crate) mod resolve;
mod scorers;

use std::sync::Arc;
use std::time::Duration;

use crate::agents::provider::{ChatRequest, ModelClient, ModelName, ProviderError};
use crate::base::assertion::{AssertionKind, Grade, Settings};
use crate::base::event::{Event, Usage};
use crate::checks::scope::deferred::{BoxFuture, Graded};
use crate::checks::scope::{Check, Defer, RunView, Scoped};
use crate::config::Config;
use scorers::Scorer;

pub(crate) use resolve::JudgeEnv;

/// Why a judge assertion could not be graded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum JudgeError {
    /// No model anywhere in the resolution order.
    #[error(
        "no judge model is configured: set one for this call with .model(\"openai/gpt-4o-mini\"), for the eval with #[eval(judge_model = \"openai/gpt-4o-mini\")], for the crate with `[judge] model = \"openai/gpt-4o-mini\"` in niceeval.toml, or in the NICEEVAL_JUDGE_MODEL environment variable"
    )]
    NoModel,
    /// The resolved model name is invalid.
    #[error("the judge model from {source_name} is unusable: {error}")]
    Model {
        /// Where the name came from.
        source_name: &'static str,
        /// What is wrong with it.
        error: ProviderError,
    },
    /// `[judge]` settings are invalid.
    #[error("{message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// The judge model could not be asked (no key, HTTP error, timeout, unreadable answer).
    #[error("judge call failed: {0}")]
    Provider(ProviderError),
    /// The judge answered, but the answer cannot be scored.
    #[error("the judge {model} gave an answer niceeval cannot score: {message}")]
    Answer {
        /// The judge model.
        model: String,
        /// Why.
        message: String,
    },
    /// There is nothing to judge.
    #[error(
        "nothing to judge: the run has no reply yet; send a message first or pass the text with .on(..)"
    )]
    NothingToJudge,
    /// The assertion ran out of time.
    #[error("the judge {model} did not finish within {seconds}s")]
    Timeout {
        /// The judge model.
        model: String,
        /// The deadline.
        seconds: u64,
    },
}

impl crate::run::eval::Eval {
    /// The LLM judge: `t.judge().factuality(expected)`, `.closed_qa(criteria)`,
    /// `.summarizes(source)`, `.rubric(text)`. Each judges the last reply so far (or `.on(text)`)
    /// against the last user message so far, after the body returns; see [`Judge`].
    pub fn judge(&self) -> Judge {
        let context = JudgeContext {
            config: self.config_arc().clone(),
            eval_model: self.judge_model().map(str::to_string),
            manifest_dir: self.manifest_dir().map(std::path::Path::to_path_buf),
        };
        Judge::new(
            self.record().clone(),
            Arc::new(context),
            self.last_user_message(),
            self.reply().to_string(),
        )
    }
}

/// The judge of one eval handle: `t.judge()`. Each scorer returns the [`Scoped`] builder of a
/// judge call, registered when dropped.
#[derive(Clone)]
pub struct Judge {
    record: Arc<dyn Defer>,
    context: Arc<JudgeContext>,
    input: String,
    output: String,
}

/// What every judge call of one run resolves its model and client from.
#[derive(Debug)]
pub(crate) struct JudgeContext {
    /// The configuration (`[judge]`, with `NICEEVAL_JUDGE_*` applied).
    pub config: Arc<Config>,
    /// `#[eval(judge_model = ..)]`.
    pub eval_model: Option<String>,
    /// The eval crate's manifest directory, where the cache's target directory is found.
    pub manifest_dir: Option<std::path::PathBuf>,
}

impl JudgeContext {
    fn env(&self) -> JudgeEnv<'_> {
        JudgeEnv {
            config: &self.config,
            eval_model: self.eval_model.as_deref(),
            manifest_dir: self.manifest_dir.as_deref(),
        }
    }
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("eval_model", &self.context.eval_model)
            .finish_non_exhaustive()
    }
}

impl Judge {
    pub(crate) fn new(
        record: Arc<dyn Defer>,
        context: Arc<JudgeContext>,
        input: String,
        output: String,
    ) -> Judge {
        Judge {
            record,
            context,
            input,
            output,
        }
    }

    /// This judge with its calls registered in `record` instead of the run's (a suite file's
    /// test threshold grades them together with the test's other items).
    #[doc(hidden)]
    pub fn with_record(mut self, record: Arc<dyn Defer>) -> Judge {
        self.record = record;
        self
    }

    fn assertion(&self, scorer: Scorer) -> Scoped<JudgeCheck> {
        let check = JudgeCheck {
            context: self.context.clone(),
            scorer,
            input: self.input.clone(),
            output: self.output.clone(),
            model: None,
            transform: None,
            request: None,
            unreadable_fails: false,
        };
        Scoped::new(self.record.clone(), check, None)
    }

    /// Is the reply factually consistent with `expected`? autoevals Factuality: the judge picks
    /// (A) subset 0.4, (B) superset 0.6, (C) same details 1, (D) disagreement 0, (E) differences
    /// that don't matter 1.
    pub fn factuality(&self, expected: impl Into<String>) -> Scoped<JudgeCheck> {
        self.assertion(Scorer::Factuality {
            expected: expected.into(),
            scores: prompts::FACTUALITY_SCORES,
        })
    }

    /// [`Judge::factuality`] scored as promptfoo's `factuality` assertion is: (A) subset,
    /// (B) superset, (C) same details and (E) differences that don't matter score 1, (D)
    /// disagreement 0.
    #[doc(hidden)]
    pub fn factuality_promptfoo(&self, expected: impl Into<String>) -> Scoped<JudgeCheck> {
        self.assertion(Scorer::Factuality {
            expected: expected.into(),
            scores: prompts::PROMPTFOO_FACTUALITY_SCORES,
        })
    }

    /// Does the reply meet `criteria`? autoevals ClosedQA: Y scores 1, N scores 0.
    pub fn closed_qa(&self, criteria: impl Into<String>) -> Scoped<JudgeCheck> {
        self.assertion(Scorer::ClosedQa {
            criteria: criteria.into(),
        })
    }

    /// Is the reply a faithful and complete summary of `source`? (A) faithful and complete 1,
    /// (B) faithful but missing a main point 0.5, (C) unsupported or contradicting claims 0,
    /// (D) not a summary of the source 0.
    pub fn summarizes(&self, source: impl Into<String>) -> Scoped<JudgeCheck> {
        self.assertion(Scorer::Summarizes {
            source: source.into(),
        })
    }

    /// How well does the reply satisfy `rubric`? The judge gives a score from 0 to 1 with its
    /// reasons.
    pub fn rubric(&self, rubric: impl Into<String>) -> Scoped<JudgeCheck> {
        self.assertion(Scorer::Rubric {
            rubric: rubric.into(),
        })
    }

    /// Asks the judge model (`model`, else the one this judge resolves) `request` now and
    /// returns its text: one call, for a check that reads the answer itself (a suite file's
    /// `select-best`, which compares several outputs at once).
    #[doc(hidden)]
    pub async fn ask_text(
        &self,
        model: Option<&str>,
        request: &ChatRequest,
    ) -> Result<String, JudgeError> {
        let env = self.context.env();
        let name = resolve::resolve_model(model, env.eval_model, env.config)?;
        let options = resolve::client_options(&name, &env)?;
        let client = ModelClient::new(name, options).map_err(JudgeError::Provider)?;
        client
            .complete(request)
            .await
            .map(|response| response.text)
            .map_err(JudgeError::Provider)
    }

    /// The model a judge call without `.model(..)` would use, or why it cannot be used (no model
    /// configured, an invalid name, no API key). Use it to skip judge evals where no judge is
    /// set up: `if let Err(why) = t.judge().ready() { return t.skip(why.to_string()); }`.
    pub fn ready(&self) -> Result<ModelName, JudgeError> {
        let name = resolve::resolve_model(
            None,
            self.context.eval_model.as_deref(),
            &self.context.config,
        )?;
        let env = JudgeEnv {
            manifest_dir: None,
            ..self.context.env()
        };
        resolve::client_options(&name, &env)?;
        Ok(name)
    }
}

/// The options of a judge assertion, chained on its builder with `.at_least(x)`, `.gate()`,
/// `.weight(w)` and `.metric(name)`.
impl Scoped<JudgeCheck> {
    /// Judges `text` instead of the last reply.
    pub fn on(self, text: impl AsRef<str>) -> Self {
        let text = text.as_ref().to_string();
        self.map_check(|c| JudgeCheck { output: text, ..c })
    }

    /// Uses `text` as the question instead of the last user message.
    pub fn input(self, text: impl AsRef<str>) -> Self {
        let text = text.as_ref().to_string();
        self.map_check(|c| JudgeCheck { input: text, ..c })
    }

    /// Uses this judge model (`provider/model`) for this assertion.
    pub fn model(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.map_check(|c| JudgeCheck {
            model: Some(name),
            ..c
        })
    }

    /// Sends `request` instead of the scorer's own prompt: a suite file's grading prompt
    /// (promptfoo's `rubricPrompt`), already rendered. The judge answers in text, read as the
    /// scorer's verdict (promptfoo's JSON, or a choice).
    #[doc(hidden)]
    pub fn request(self, request: ChatRequest) -> Self {
        self.map_check(|c| JudgeCheck {
            request: Some(request),
            ..c
        })
    }

    /// An answer the judge gives that cannot be scored fails this assertion with score 0
    /// instead of making it an execution error: promptfoo's rule for its graders, which a
    /// suite file's graded items follow.
    #[doc(hidden)]
    pub fn unreadable_answer_fails(self) -> Self {
        self.map_check(|c| JudgeCheck {
            unreadable_fails: true,
            ..c
        })
    }

    /// Judges only the part of the text (the reply, or [`on`](Self::on)'s) that a JSONPath
    /// query selects: a reply `{"answer": "..", "trace": [..]}` judged at `$.answer` sends the
    /// judge the answer alone. Text that is not JSON, or a query that selects nothing, fails
    /// this assertion with the reason and asks no judge.
    ///
    /// ```
    /// use niceeval::prelude::*;
    /// # fn my_agent() -> impl Agent { agent_fn(|_r: Request| async { Ok(()) }) }
    ///
    /// #[eval(agent = my_agent)]
    /// async fn answer_is_factual(t: &mut Eval) -> niceeval::Result {
    ///     t.send("What is the capital of France? Answer as JSON.").await?;
    ///     t.judge()
    ///         .factuality("Paris")
    ///         .transform(json_path("$.answer"));
    ///     Ok(())
    /// }
    /// # fn main() {}
    /// ```
    pub fn transform(self, transform: crate::base::assertion::Transform) -> Self {
        self.map_check(|c| JudgeCheck {
            transform: Some(transform),
            ..c
        })
    }
}

/// One judge call: what [`Judge`]'s scorers register, graded by the judge model after the body.
/// Configured on its [`Scoped`] builder: `.on(text)`, `.input(text)`, `.model(name)`,
/// `.transform(..)`.
#[derive(Debug, Clone)]
pub struct JudgeCheck {
    context: Arc<JudgeContext>,
    scorer: Scorer,
    input: String,
    output: String,
    model: Option<String>,
    transform: Option<crate::base::assertion::Transform>,
    /// A request sent instead of the scorer's prompt.
    request: Option<ChatRequest>,
    /// An answer that cannot be scored fails the assertion (score 0) instead of erroring it.
    unreadable_fails: bool,
}

impl JudgeCheck {
    /// The name in reports: the scorer, and the JSONPath it judges, if any.
    fn name(&self) -> String {
        match &self.transform {
            Some(t) => format!("{} at {}", self.scorer.describe(), t.expression()),
            None => self.scorer.describe(),
        }
    }

    /// This judge with its output narrowed by its transform, or the grade saying why there is
    /// nothing to judge.
    fn selected(&self) -> Result<JudgeCheck, Grade> {
        let mut judge = self.clone();
        if let Some(transform) = &self.transform {
            let selected = transform.apply(&crate::base::assertion::Subject::Text(
                std::borrow::Cow::Borrowed(&self.output),
            ))?;
            judge.output = selected.text().map(|t| t.into_owned()).unwrap_or_default();
        }
        Ok(judge)
    }
}

impl Check for JudgeCheck {
    fn describe(&self) -> String {
        self.name()
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Judge
    }

    fn settings(&self) -> Settings {
        Settings::soft(None)
    }

    fn costly(&self) -> bool {
        true
    }

    fn grade(self: Box<Self>, _run: &RunView<'_>) -> BoxFuture<Graded> {
        Box::pin(async move { self.ask_judge().await })
    }
}

impl JudgeCheck {
    /// Asks the judge model under the judge deadline; a panic, a timeout or a provider error is
    /// an error grade. With the grade comes what the call spent, when the model answered: its
    /// tokens, and its cost from the price table (0 for an answer from the cache).
    async fn ask_judge(&self) -> Graded {
        let judge = match self.selected() {
            Ok(judge) => judge,
            Err(grade) => return (grade, None),
        };
        // The client's connections come from the process's pool for the judge's endpoint.
        let env = self.context.env();
        let (client, deadline) = match prepare(&judge, &env) {
            Ok(prepared) => prepared,
            Err(error) => return (Grade::error(error.to_string()), None),
        };
        let model = client.name().to_string();
        let asked = tokio::spawn(async move {
            let model = client.name().to_string();
            match tokio::time::timeout(deadline, ask(&client, &judge)).await {
                Ok(asked) => asked,
                Err(_) => (
                    Grade::error(
                        JudgeError::Timeout {
                            model,
                            seconds: deadline.as_secs(),
                        }
                        .to_string(),
                    ),
                    None,
                ),
            }
        });
        let (grade, spent) = match asked.await {
            Ok(asked) => asked,
            Err(e) if e.is_panic() => (
                Grade::error(format!(
                    "the judge panicked: {}",
                    crate::base::panic::message(&*e.into_panic())
                )),
                None,
            ),
            Err(_) => (Grade::error("the judge was cancelled"), None),
        };
        let usage = spent.map(|(mut usage, cached)| {
            usage.cost_usd = if cached {
                Some(0.0)
            } else {
                let call = Event::Usage {
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    cache_read_tokens: usage.cache_read_tokens,
                    cost_usd: usage.cost_usd,
                    model: Some(model.clone()),
                };
                crate::resources::price::run_cost(std::slice::from_ref(&call), env.config)
            };
            usage
        });
        (grade, usage)
    }
}

fn prepare(judge: &JudgeCheck, env: &JudgeEnv<'_>) -> Result<(ModelClient, Duration), JudgeError> {
    if judge.output.trim().is_empty() {
        return Err(JudgeError::NothingToJudge);
    }
    let name = resolve::resolve_model(judge.model.as_deref(), env.eval_model, env.config)?;
    let options = resolve::client_options(&name, env)?;
    let deadline = resolve::deadline(&options);
    let client = ModelClient::new(name, options).map_err(JudgeError::Provider)?;
    Ok((client, deadline))
}

/// Asks the judge; with the grade, the answer's usage and whether it came from the cache.
async fn ask(client: &ModelClient, judge: &JudgeCheck) -> (Grade, Option<(Usage, bool)>) {
    let request = match &judge.request {
        Some(request) => request.clone(),
        None => judge.scorer.request(&judge.input, &judge.output),
    };
    let scorer = &judge.scorer;
    let accept = |response: &crate::agents::provider::ChatResponse| scorer.grade(response).is_ok();
    let model = client.name().to_string();
    match client.complete_if(&request, &accept).await {
        Err(error) => (Grade::error(JudgeError::Provider(error).to_string()), None),
        Ok(response) => {
            let spent = Some((response.usage, response.cached));
            let grade = match scorer.grade(&response) {
                Ok((score, reason)) => Grade::score(score, format!("{reason} (judge: {model})")),
                Err(e) if judge.unreadable_fails => Grade::score(
                    0.0,
                    format!("the judge's answer cannot be scored: {e} (judge: {model})"),
                )
                .with_verdict(false),
                Err(e) => Grade::error(
                    JudgeError::Answer {
                        model,
                        message: e.to_string(),
                    }
                    .to_string(),
                ),
            };
            (grade, spent)
        }
    }
}
