//! The graders of a suite file's model-graded items, as promptfoo has them: the grader
//! `provider` (an id, `{id, config}`, or a map `{text: …, embedding: …}` naming the chat model
//! of `llm-rubric` and the others and the embedding model of `similar`), a custom grading
//! prompt (`rubricPrompt`: text or chat messages, rendered with `{{output}}`, `{{rubric}}` and
//! the test's vars), `similar` (cosine similarity of embeddings from an OpenAI-compatible
//! `/embeddings` endpoint), and a test's `threshold` over all of its items (plain, transformed,
//! graded), which promptfoo compares with the test's weighted score.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::JudgeSpec;
use super::agents::{self, ProviderKind};
use super::template::TemplateError;
use niceeval::__workspace::provider::{
    ChatMessage, ChatRequest, ClientOptions, ModelClient, ModelName, ProviderError,
};
use niceeval::__workspace::scope::{self as deferred, BoxFuture, Graded};
use niceeval::__workspace::scope::{Check, Defer, Deferred};
use niceeval::scope::RunView;
use niceeval::{AssertionKind, AssertionResult, Grade, Settings};

/// promptfoo's default embedding model (its OpenAI default provider's).
const DEFAULT_EMBEDDING_MODEL: &str = "text-embedding-3-large";

/// Why a grader `provider` or a `rubricPrompt` cannot be used; a file's, JSON's or YAML's
/// error is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GraderError {
    /// A key of a grader map other than `text` and `embedding`.
    #[error(
        "`{0}` in a grader map is not supported; supported: text (the chat grader), embedding (the embedding model of `similar`)"
    )]
    MapKey(String),
    /// The `text` grader of a grader map.
    #[error("`text`: {0}")]
    Text(#[source] Box<GraderError>),
    /// The `embedding` grader of a grader map.
    #[error("`embedding`: {0}")]
    Embedding(#[source] Box<GraderError>),
    /// A grader mapping without `id`.
    #[error("{} needs an `id`", .0.what())]
    NoId(GraderRole),
    /// A grader that is neither an id nor a mapping.
    #[error("{} is an id or a mapping with `id`", .0.what())]
    Shape(GraderRole),
    /// An embedding id niceeval cannot call.
    #[error(
        "the embedding grader `{0}` is not supported; supported: openai:embedding:<model> (any OpenAI-compatible /embeddings endpoint, through `apiBaseUrl` or OPENAI_BASE_URL)"
    )]
    EmbeddingId(String),
    /// The provider's id or `config` does not read (the provider reader's words).
    #[error("{0}")]
    Provider(String),
    /// An embedding grader that is no OpenAI embedding model.
    #[error("the embedding grader `{0}` is not an OpenAI embedding model")]
    NotEmbedding(String),
    /// A grader that is no chat model.
    #[error(
        "the grader `{0}` is not a chat model; a grader is openai:chat:<model>, openai:<model> or anthropic:messages:<model>"
    )]
    NotChat(String),
    /// A `rubricPrompt` computed by code.
    #[error(
        "a grading prompt computed by code ({0}) is not supported; give its text, chat messages, or a .txt / .json / .yaml file"
    )]
    PromptCode(String),
    /// A `rubricPrompt` file that cannot be read, or a `.json` / `.yaml` one that does not parse.
    #[error(transparent)]
    Data(#[from] super::DataFileError),
    /// A `rubricPrompt` that is neither text, messages nor a file.
    #[error("`rubricPrompt` is text, chat messages or file://…, not {0}")]
    PromptValue(Value),
}

/// Which grader an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GraderRole {
    /// A grader `provider` (the chat grader).
    Chat,
    /// The embedding grader of `similar`.
    Embedding,
}

impl GraderRole {
    fn what(self) -> &'static str {
        match self {
            GraderRole::Chat => "a grader `provider`",
            GraderRole::Embedding => "an embedding grader",
        }
    }
}

/// Why `similar` could not compare the texts; the provider's error is kept.
#[derive(Debug, thiserror::Error)]
enum SimilarError {
    /// The embedding model could not be reached or answered wrongly.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The embedding grader cannot be asked.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The two embeddings cannot be compared.
    #[error("the embeddings have different lengths ({0} and {1})")]
    Lengths(usize, usize),
    /// Nothing to compare with.
    #[error("`similar` needs at least one value to compare with")]
    NoValue,
}

/// The grader models a `provider` names: the chat model of the graded items and the
/// embedding model of `similar` (`None`: the default).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Graders {
    pub text: Option<JudgeSpec>,
    pub embedding: Option<JudgeSpec>,
}

/// The graders of a grader `provider` value (`options.provider`, an item's `provider`).
///
/// As promptfoo's `getGradingProvider`: a map with `text` / `embedding` names one grader per
/// kind of check; an id or `{id, config}` is the chat grader, or the embedding grader when it
/// is an embedding provider (`openai:embedding:<model>`).
pub(crate) fn read(value: &Value, file: &Path) -> Result<Graders, GraderError> {
    if let Value::Object(map) = value
        && !map.contains_key("id")
        && (map.contains_key("text") || map.contains_key("embedding"))
    {
        if let Some(k) = map
            .keys()
            .find(|k| !["text", "embedding"].contains(&k.as_str()))
        {
            return Err(GraderError::MapKey(k.clone()));
        }
        return Ok(Graders {
            text: match map.get("text") {
                None | Some(Value::Null) => None,
                Some(text) => {
                    Some(judge_spec(text, file).map_err(|e| GraderError::Text(Box::new(e)))?)
                }
            },
            embedding: match map.get("embedding") {
                None | Some(Value::Null) => None,
                Some(embedding) => Some(
                    embedding_spec(embedding, file)
                        .map_err(|e| GraderError::Embedding(Box::new(e)))?,
                ),
            },
        });
    }
    if id_of(value).is_some_and(is_embedding_id) {
        return Ok(Graders {
            text: None,
            embedding: Some(embedding_spec(value, file)?),
        });
    }
    Ok(Graders {
        text: Some(judge_spec(value, file)?),
        embedding: None,
    })
}

fn id_of(value: &Value) -> Option<&str> {
    match value {
        Value::String(id) => Some(id),
        Value::Object(map) => map.get("id").and_then(Value::as_str),
        _ => None,
    }
}

fn is_embedding_id(id: &str) -> bool {
    id.starts_with("openai:embedding:") || id.starts_with("openai:embeddings:")
}

/// An embedding model: `openai:embedding:<model>` (or `embeddings`), reached as promptfoo's
/// OpenAI providers are (`apiBaseUrl`, `apiHost`, `apiKeyEnvar`, else `OPENAI_BASE_URL`).
fn embedding_spec(value: &Value, file: &Path) -> Result<JudgeSpec, GraderError> {
    let (id, config) = id_and_config(value, GraderRole::Embedding)?;
    let Some(model) = id
        .strip_prefix("openai:embedding:")
        .or_else(|| id.strip_prefix("openai:embeddings:"))
    else {
        // promptfoo loads `openai:<model>` (and any other provider) as given and errors the
        // checks that ask it for embeddings; the file reads.
        if let Ok(mut spec) = judge_spec(value, file) {
            spec.unusable = Some(Arc::from(
                format!(
                    "the embedding grader `{id}` is not an embedding provider (promptfoo reads `{id}` as a chat model and errors this check too); write openai:embedding:<model>"
                )
                .as_str(),
            ));
            return Ok(spec);
        }
        return Err(GraderError::EmbeddingId(id.to_string()));
    };
    // The chat provider of the same API reads the same connection keys.
    let base = file.parent().unwrap_or(Path::new("."));
    let spec = agents::parse(&format!("openai:chat:{model}"), None, config, base)
        .map_err(|(_, m)| GraderError::Provider(m.replace("openai:chat:", "openai:embedding:")))?;
    chat_judge(spec.kind).ok_or_else(|| GraderError::NotEmbedding(id.to_string()))
}

/// The id and `config` of a grader written as an id or as `{id, config}`.
fn id_and_config(value: &Value, role: GraderRole) -> Result<(&str, Option<&Value>), GraderError> {
    match value {
        Value::String(id) => Ok((id.as_str(), None)),
        Value::Object(map) => match map.get("id").and_then(Value::as_str) {
            Some(id) => Ok((id, map.get("config"))),
            None => Err(GraderError::NoId(role)),
        },
        _ => Err(GraderError::Shape(role)),
    }
}

/// promptfoo's default embedding grader.
pub(crate) fn default_embedding() -> JudgeSpec {
    JudgeSpec {
        model: format!("openai/{DEFAULT_EMBEDDING_MODEL}"),
        base_url: agents::openai_base_url_from_env(),
        key_env: None,
        unusable: None,
    }
}

/// A `rubricPrompt` as promptfoo loads it: text as written, chat messages (a list) as their
/// JSON, `file://` text read (JSON and YAML files as their data's JSON).
pub(crate) fn load_prompt(value: &Value, base: &Path) -> Result<String, GraderError> {
    match value {
        Value::String(s) if s.starts_with("file://") => {
            let path = super::file_path(base, s);
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if matches!(ext, "js" | "cjs" | "mjs" | "ts" | "py") {
                return Err(GraderError::PromptCode(s.clone()));
            }
            if matches!(ext, "json" | "yaml" | "yml") {
                return Ok(super::read_data(&path)?.to_string());
            }
            std::fs::read_to_string(&path)
                .map_err(|source| super::DataFileError::Read { path, source }.into())
        }
        Value::String(s) => Ok(s.clone()),
        Value::Array(_) | Value::Object(_) => Ok(value.to_string()),
        other => Err(GraderError::PromptValue(other.clone())),
    }
}

/// The grader's request for a `rubricPrompt`: the template rendered with `named` (`output`,
/// `rubric`, …) and then the test's `vars`, each written as promptfoo's `fromVars` writes it
/// (JSON-escaped, so a chat-message template stays JSON), sent as chat messages when it is a
/// list of them, else as one user message. No tool is offered: the grader answers in text.
pub(crate) fn grading_request(
    template: &str,
    named: &[(&str, &str)],
    vars: &Map<String, Value>,
) -> Result<ChatRequest, TemplateError> {
    let mut values = Map::new();
    for (name, text) in named {
        values.insert((*name).to_string(), Value::String(escaped(text)));
    }
    for (name, value) in vars {
        values.insert(name.clone(), Value::String(from_var(value)));
    }
    let text = super::template::render(template, &values)?;
    Ok(chat_request(&text).temperature(0.0).max_tokens(2048))
}

/// `JSON.stringify(text).slice(1, -1)`.
pub(crate) fn escaped(text: &str) -> String {
    let json = Value::String(text.to_string()).to_string();
    json[1..json.len() - 1].to_string()
}

/// promptfoo's `fromVars`: objects (and null) as JSON, anything else as its JSON with the
/// first and last characters cut (a string's quotes; a number loses its first and last
/// digits there too, as in promptfoo).
pub(crate) fn from_var(value: &Value) -> String {
    match value {
        Value::Object(_) | Value::Array(_) | Value::Null => value.to_string(),
        other => {
            let json = other.to_string();
            if json.len() < 2 {
                String::new()
            } else {
                json[1..json.len() - 1].to_string()
            }
        }
    }
}

/// A rendered grading prompt as chat messages: a JSON list of `{role, content}` as those
/// messages (system ones joined into the system prompt), any other text as one user message.
pub(crate) fn chat_request(text: &str) -> ChatRequest {
    let trimmed = text.trim_start();
    let messages = trimmed
        .starts_with('[')
        .then(|| serde_json::from_str::<Vec<Map<String, Value>>>(trimmed).ok())
        .flatten()
        .filter(|list| !list.is_empty() && list.iter().all(|m| m.contains_key("role")));
    let Some(messages) = messages else {
        return ChatRequest::new().user(text);
    };
    let mut request = ChatRequest::new();
    let mut system = Vec::new();
    for message in messages {
        let content = match message.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        match message.get("role").and_then(Value::as_str) {
            Some("system") | Some("developer") => system.push(content),
            Some("assistant") => request.messages.push(ChatMessage::Assistant {
                text: content,
                tool_calls: Vec::new(),
            }),
            _ => request = request.user(content),
        }
    }
    if !system.is_empty() {
        request = request.system(system.join("\n"));
    }
    request
}

/// How `similar` compares two embeddings (`similar`, `similar:cosine`, `similar:dot`,
/// `similar:euclidean`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    Cosine,
    Dot,
    Euclidean,
}

impl Metric {
    /// The metric of an assertion type (`similar`, `not-similar:dot`, …); `None` when the
    /// suffix names none.
    pub(crate) fn of(kind: &str) -> Option<Metric> {
        let bare = kind.strip_prefix("not-").unwrap_or(kind);
        match bare.split_once(':') {
            None if bare == "similar" => Some(Metric::Cosine),
            Some(("similar", "cosine")) => Some(Metric::Cosine),
            Some(("similar", "dot")) => Some(Metric::Dot),
            Some(("similar", "euclidean")) => Some(Metric::Euclidean),
            _ => None,
        }
    }

    /// How similar `a` and `b` are (higher is more similar; euclidean distance `d` is
    /// `1 / (1 + d)`).
    fn similarity(self, a: &[f64], b: &[f64]) -> Result<f64, SimilarError> {
        if a.len() != b.len() {
            return Err(SimilarError::Lengths(a.len(), b.len()));
        }
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        Ok(match self {
            Metric::Cosine => cosine(a, b),
            Metric::Dot => dot,
            Metric::Euclidean => {
                let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
                1.0 / (1.0 + d.sqrt())
            }
        })
    }
}

/// `similar`: the output's embedding against each expected text's, passing at `threshold`
/// (promptfoo's default 0.75) for any of them; `not-similar` passes when it is below it for
/// every one. A costly check (model calls), graded after the body.
pub(crate) struct Similar {
    pub model: JudgeSpec,
    pub expected: Vec<String>,
    pub output: String,
    pub threshold: f64,
    pub metric: Metric,
    pub inverse: bool,
    pub timeout: std::time::Duration,
}

impl Check for Similar {
    fn describe(&self) -> String {
        let first = self.expected.first().map(String::as_str).unwrap_or("");
        format!(
            "{}similar({}{}) at {}",
            if self.inverse { "not-" } else { "" },
            niceeval::__workspace::excerpt::quote_width(first, 60),
            if self.expected.len() > 1 {
                format!(" and {} more", self.expected.len() - 1)
            } else {
                String::new()
            },
            self.threshold
        )
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Judge
    }

    fn settings(&self) -> Settings {
        Settings::gate()
    }

    fn costly(&self) -> bool {
        true
    }

    fn grade(self: Box<Self>, _run: &RunView<'_>) -> BoxFuture<Graded> {
        Box::pin(async move {
            let grade = match self.compare().await {
                Ok(grade) => grade,
                Err(e) => Grade::error(e.to_string()),
            };
            (grade, None)
        })
    }
}

impl Similar {
    async fn compare(&self) -> Result<Grade, SimilarError> {
        let client = client(
            &self.model,
            self.timeout,
            " (the embedding grader of `similar`)",
        )?;
        let output = client.embed(&self.output).await?;
        let mut best: Option<(f64, bool, String)> = None;
        for expected in &self.expected {
            let vector = client.embed(expected).await?;
            let similarity = self.metric.similarity(&vector, &output)?;
            let (pass, score) = if self.inverse {
                (
                    similarity <= self.threshold + f64::EPSILON,
                    1.0 - similarity,
                )
            } else {
                (similarity >= self.threshold - f64::EPSILON, similarity)
            };
            let reason = format!(
                "similarity {similarity:.2} is {} threshold {} (to {})",
                if similarity >= self.threshold {
                    "at least the"
                } else {
                    "below the"
                },
                self.threshold,
                niceeval::__workspace::excerpt::quote_width(expected, 60)
            );
            // `similar` passes on the first value it is similar to; `not-similar` fails on
            // the first it is too similar to.
            if pass != self.inverse {
                return Ok(verdict(score, pass, reason));
            }
            let keep = match &best {
                None => true,
                Some((b, _, _)) if self.inverse => score < *b,
                Some((b, _, _)) => score > *b,
            };
            if keep {
                best = Some((score, pass, reason));
            }
        }
        let (score, pass, reason) = best.ok_or(SimilarError::NoValue)?;
        Ok(verdict(score, pass, reason))
    }
}

/// A client of a grader model, reached as `spec` says (its base URL, its key variable);
/// `role` ends the error that names a missing key.
pub(crate) fn client(
    spec: &JudgeSpec,
    timeout: std::time::Duration,
    role: &str,
) -> Result<ModelClient, ClientError> {
    if let Some(why) = &spec.unusable {
        return Err(ClientError::Unusable(why.to_string()));
    }
    let name = ModelName::parse(&spec.model)?;
    let key = niceeval::__workspace::provider::resolve_key(
        &name,
        spec.base_url.as_deref(),
        spec.key_env.as_deref(),
        role,
    )?;
    let mut options = ClientOptions::default()
        .timeout(timeout)
        .timeout_setting("[provider] timeout in niceeval.toml");
    if let Some(url) = &spec.base_url {
        options = options.base_url(url.clone());
    }
    if let Some(key) = key {
        options = options.api_key(key);
    }
    Ok(ModelClient::new(name, options)?)
}

/// Why a grader model cannot be asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientError {
    /// The provider's own error (a model name, a key, the connection).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The grader named cannot do this (`JudgeSpec::unusable`).
    #[error("{0}")]
    Unusable(String),
}

/// The cosine similarity of two embeddings of one length; a zero vector is like nothing (0),
/// as promptfoo's cosine says.
pub(crate) fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let magnitude = norm(a) * norm(b);
    if magnitude == 0.0 {
        0.0
    } else {
        dot / magnitude
    }
}

fn verdict(score: f64, pass: bool, reason: String) -> Grade {
    Grade::score(score.clamp(0.0, 1.0), reason).with_verdict(pass)
}

/// Where a judged item of a suite file registers: each check is passed on to `record`
/// wrapped in [`Decided`], which reaches the item's verdict as promptfoo does.
pub(crate) struct Deciding {
    pub record: Arc<dyn Defer>,
    /// The item's threshold (promptfoo's default 0.5 when it has none).
    pub threshold: f64,
    /// The `not-` form: the verdict turned over.
    pub inverse: bool,
}

impl Defer for Deciding {
    fn defer(&self, work: Deferred) {
        let (threshold, inverse) = (self.threshold, self.inverse);
        self.record.defer(work.map_check(|check| {
            Box::new(Decided {
                check,
                threshold,
                inverse,
            }) as Box<dyn Check>
        }))
    }
}

/// A judged check's verdict as promptfoo reaches it: the grader's own verdict (a failing one,
/// such as an answer that cannot be read, fails whatever the threshold) and the score at the
/// threshold; for `not-llm-rubric` turned over, with the score `1 - score`. A grading error
/// stays an error.
struct Decided {
    check: Box<dyn Check>,
    threshold: f64,
    inverse: bool,
}

impl Check for Decided {
    fn describe(&self) -> String {
        if self.inverse {
            format!("not {}", self.check.describe())
        } else {
            self.check.describe()
        }
    }

    fn kind(&self) -> AssertionKind {
        self.check.kind()
    }

    fn settings(&self) -> Settings {
        Settings::gate()
    }

    fn costly(&self) -> bool {
        self.check.costly()
    }

    fn grade(self: Box<Self>, run: &RunView<'_>) -> BoxFuture<Graded> {
        let (threshold, inverse) = (self.threshold, self.inverse);
        let graded = self.check.grade(run);
        Box::pin(async move {
            let (grade, usage) = graded.await;
            if grade.error.is_some() {
                return (grade, usage);
            }
            let passed = grade.verdict.unwrap_or(true) && grade.score >= threshold - f64::EPSILON;
            if !inverse {
                let children = grade.children.clone();
                let decided = Grade::score(grade.score, grade.reason)
                    .with_verdict(passed)
                    .with_children(children);
                return (decided, usage);
            }
            let score = (1.0 - grade.score).clamp(0.0, 1.0);
            let reason = format!(
                "turned over ({}): {}",
                if passed { "passed" } else { "failed" },
                grade.reason
            );
            (Grade::score(score, reason).with_verdict(!passed), usage)
        })
    }
}

/// Checks registered here instead of on the run, to be graded by a [`TestScore`].
#[derive(Default)]
pub(crate) struct Collect(Mutex<Vec<Deferred>>);

impl Defer for Collect {
    fn defer(&self, work: Deferred) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(work);
    }
}

impl Collect {
    /// The checks registered so far.
    pub(crate) fn take(&self) -> Vec<Deferred> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// A score made of several items' results, each with its weight: a promptfoo test's
/// `threshold` (every item of the test — those checked in the body and the model-graded ones,
/// graded here — counts in the test's score, 0 when nothing weighs, and the test passes when
/// the score reaches the threshold, whichever items fail), and AgentV's test score, rubric
/// checklists and composite graders, whose `required` members gate it.
pub(crate) struct Aggregate {
    pub threshold: f64,
    /// Results already known (the items checked in the body), first.
    pub done: Vec<AssertionResult>,
    /// Checks graded here, after `done`.
    pub pending: Vec<Deferred>,
    /// What a member counts: its score, or 1 when it passed and 0 when it failed.
    pub counting: Counting,
    /// A member's least count (by position: `done`, then `pending`) below which the
    /// aggregate fails: AgentV's `required` / `min_score`.
    pub gates: Vec<Option<f64>>,
    /// A failed gate makes the score 0 (AgentV's test score) rather than only the verdict a
    /// failure (a rubric checklist).
    pub gate_zeroes: bool,
    /// Members whose score is turned over (1 − score) and verdict with it (AgentV's
    /// `negate`), by position as `gates`.
    pub flips: Vec<bool>,
    /// What a member that could not be graded (an execution error) does.
    pub skips: Skips,
    /// How the members' counts make the score.
    pub combine: Combine,
    /// Members graded one after another rather than at once.
    pub one_by_one: bool,
    /// How the aggregate is named in the report.
    pub label: String,
}

/// How an [`Aggregate`]'s members make its score: their weighted mean, the lowest or the
/// highest (an AgentV conversation test's `aggregation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combine {
    Mean,
    Min,
    Max,
    /// The lower bound of the 95% confidence interval of the members' mean (Student's t,
    /// two-sided), clamped to [0, 1]: AgentV's `confidence_interval` trials.
    LowerBound95,
}

/// Student's t critical values for a two-sided 95% interval, by degrees of freedom 1 to 29;
/// from 30 on the normal value 1.96 is used (as AgentV does).
const T95: [f64; 29] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045,
];

/// The lower bound of the 95% confidence interval of `values`' mean (the mean itself for
/// fewer than two values), clamped to [0, 1].
fn lower_bound_95(values: &[f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return mean.clamp(0.0, 1.0);
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = T95.get(n - 2).copied().unwrap_or(1.96);
    (mean - t * variance.sqrt() / (n as f64).sqrt()).clamp(0.0, 1.0)
}

/// What a member of an [`Aggregate`] that could not be graded does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skips {
    /// It counts, with its score of 0 (promptfoo).
    Count,
    /// It is left out of the score (AgentV's skipped grader); with every member skipped the
    /// aggregate cannot be graded either.
    Exclude,
    /// As `Exclude`, and one skipped member is enough to make the aggregate an execution
    /// error (AgentV's test).
    Fail,
}

/// What a member of an [`Aggregate`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counting {
    /// Its score.
    Scores,
    /// 1 when it passed, 0 when it failed (AgentV's checklist rubric and `threshold`
    /// composite).
    Passes,
}

impl Aggregate {
    /// A promptfoo test's `threshold` over these results.
    pub(crate) fn test_threshold(
        threshold: f64,
        done: Vec<AssertionResult>,
        pending: Vec<Deferred>,
    ) -> Aggregate {
        Aggregate {
            done,
            ..Aggregate::of(threshold, pending, format!("test threshold {threshold}"))
        }
    }

    /// The weighted mean of the scores of `pending`, passing at `threshold`: no gates, no
    /// turned-over members, a member that cannot be graded counting 0, graded at once.
    pub(crate) fn of(threshold: f64, pending: Vec<Deferred>, label: String) -> Aggregate {
        Aggregate {
            threshold,
            done: Vec::new(),
            pending,
            counting: Counting::Scores,
            gates: Vec::new(),
            gate_zeroes: false,
            flips: Vec::new(),
            skips: Skips::Count,
            combine: Combine::Mean,
            one_by_one: false,
            label,
        }
    }

    /// Registers it on the run of `record`.
    pub(crate) fn register(self, record: Arc<dyn Defer>) -> niceeval::scope::Scoped<Aggregate> {
        deferred::register(record, self)
    }

    /// The score and verdict of these results, and why.
    pub(crate) fn decide(&self, results: &[AssertionResult]) -> (f64, bool, String) {
        let count = |r: &AssertionResult| match self.counting {
            Counting::Scores => r.score,
            Counting::Passes => f64::from(u8::from(r.passed)),
        };
        // Each member with its gate; a skipped one left out unless skips count.
        let members: Vec<(&AssertionResult, &Option<f64>)> = results
            .iter()
            .zip(self.gates.iter().chain(std::iter::repeat(&None)))
            .filter(|(r, _)| self.skips == Skips::Count || r.error.is_none())
            .collect();
        let (sum, weight) = members.iter().fold((0.0, 0.0), |(s, w), (r, _)| {
            (s + count(r) * r.weight, w + r.weight)
        });
        let counts = members.iter().map(|(r, _)| count(r));
        let mut score = match self.combine {
            Combine::Mean if weight > 0.0 => sum / weight,
            Combine::Mean => 0.0,
            Combine::Min => counts
                .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.min(c))))
                .unwrap_or(0.0),
            Combine::Max => counts
                .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))))
                .unwrap_or(0.0),
            Combine::LowerBound95 => lower_bound_95(&counts.collect::<Vec<_>>()),
        };
        let failed_gate = members
            .iter()
            .copied()
            .find(|(r, gate)| gate.is_some_and(|min| count(r) < min));
        if failed_gate.is_some() && self.gate_zeroes {
            score = 0.0;
        }
        // A mean of scores such as 0.6, 0.8 and 1.0 comes out a hair under 0.8 in floating
        // point; a score within a billionth of the threshold reaches it.
        let pass = failed_gate.is_none() && score + 1e-9 >= self.threshold;
        let reason = match failed_gate {
            Some((r, _)) => format!(
                "required `{}` failed: score {score:.2}, {} threshold {}",
                r.name,
                if pass { "≥" } else { "<" },
                self.threshold
            ),
            None => format!(
                "aggregate score {score:.2} {} {} threshold",
                if pass { "≥" } else { "<" },
                self.threshold
            ),
        };
        (score, pass, reason)
    }
}

impl Check for Aggregate {
    fn describe(&self) -> String {
        self.label.clone()
    }

    fn kind(&self) -> AssertionKind {
        AssertionKind::Value
    }

    fn settings(&self) -> Settings {
        Settings::gate()
    }

    fn costly(&self) -> bool {
        !self.pending.is_empty()
    }

    fn grade(self: Box<Self>, run: &RunView<'_>) -> BoxFuture<Graded> {
        let mut this = *self;
        let started = deferred::start(std::mem::take(&mut this.pending), run);
        Box::pin(async move {
            let mut results = std::mem::take(&mut this.done);
            if this.one_by_one {
                // Members that ask the same questions (trials) are graded in turn, so that no
                // two identical requests are shared as one.
                for member in started {
                    results.push(member.await);
                }
            } else {
                let handles: Vec<_> = started.into_iter().map(tokio::spawn).collect();
                for handle in handles {
                    match handle.await {
                        Ok(result) => results.push(result),
                        Err(e) => {
                            return (Grade::error(format!("a graded item was lost: {e}")), None);
                        }
                    }
                }
            }
            for (r, flip) in results.iter_mut().zip(&this.flips) {
                if *flip {
                    r.score = 1.0 - r.score;
                    r.passed = !r.passed;
                    r.reason = format!("negated: {}", r.reason);
                }
            }
            let skipped: Vec<&str> = results
                .iter()
                .filter(|r| r.error.is_some())
                .map(|r| r.name.as_str())
                .collect();
            let all_skipped = !results.is_empty() && skipped.len() == results.len();
            let skip_fails = match this.skips {
                Skips::Count => false,
                Skips::Exclude => all_skipped,
                Skips::Fail => !skipped.is_empty(),
            };
            if skip_fails {
                let why = format!("skipped: {}", skipped.join(", "));
                return (Grade::error(why).with_children(results), None);
            }
            let (score, pass, reason) = this.decide(&results);
            let usage = results.iter().filter_map(|r| r.usage).reduce(|mut a, b| {
                a.add(&b);
                a
            });
            (
                Grade::score(score.clamp(0.0, 1.0), reason)
                    .with_children(results)
                    .with_verdict(pass),
                usage,
            )
        })
    }
}

/// The judge a grader provider names (an OpenAI or Anthropic chat model).
pub(crate) fn judge_spec(value: &Value, file: &Path) -> Result<JudgeSpec, GraderError> {
    let base = file.parent().unwrap_or(Path::new("."));
    let (id, config) = id_and_config(value, GraderRole::Chat)?;
    let spec = agents::parse(id, None, config, base).map_err(|(_, m)| GraderError::Provider(m))?;
    chat_judge(spec.kind).ok_or_else(|| GraderError::NotChat(id.to_string()))
}

/// The judge a chat provider's connection makes (`None` for any other kind of provider).
fn chat_judge(kind: ProviderKind) -> Option<JudgeSpec> {
    match kind {
        ProviderKind::Chat {
            model,
            base_url,
            key_env,
            ..
        } => Some(JudgeSpec {
            model,
            base_url,
            key_env,
            unusable: None,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    fn result(name: &str, score: f64, passed: bool, weight: f64) -> AssertionResult {
        let mut r = AssertionResult::from_grade(
            name.into(),
            AssertionKind::Value,
            &Settings::gate(),
            Grade::score(score, "").with_verdict(passed),
        );
        r.weight = weight;
        r
    }

    fn agentv_test(gates: Vec<Option<f64>>) -> Aggregate {
        Aggregate {
            threshold: 0.8,
            done: Vec::new(),
            pending: Vec::new(),
            counting: Counting::Scores,
            gates,
            gate_zeroes: true,
            flips: Vec::new(),
            skips: Skips::Fail,
            combine: Combine::Mean,
            one_by_one: false,
            label: "test".into(),
        }
    }

    #[test]
    fn an_agentv_test_passes_on_its_weighted_mean_with_a_grader_failing() {
        // Four graders pass, one fails: the mean 0.8 reaches the threshold (AgentV's rule).
        let mut results: Vec<_> = (0..4)
            .map(|i| result(&format!("g{i}"), 1.0, true, 1.0))
            .collect();
        results.push(result("failing", 0.0, false, 1.0));
        let (score, pass, _) = agentv_test(Vec::new()).decide(&results);
        assert!((score - 0.8).abs() < 1e-9 && pass, "{score} {pass}");
        // Weights count: the failing grader weighing 4 pulls the mean to 0.5.
        results[4].weight = 4.0;
        let (score, pass, _) = agentv_test(Vec::new()).decide(&results);
        assert!((score - 0.5).abs() < 1e-9 && !pass, "{score}");
    }

    #[test]
    fn a_required_grader_under_its_least_score_zeroes_an_agentv_test() {
        let results = vec![
            result("a", 1.0, true, 1.0),
            result("b", 1.0, true, 1.0),
            result("required", 0.6, false, 1.0),
        ];
        let (score, pass, reason) = agentv_test(vec![None, None, Some(0.8)]).decide(&results);
        assert_eq!(score, 0.0);
        assert!(!pass && reason.contains("required `required`"), "{reason}");
        // At a least score of 0.5 it holds, and the mean (0.87) passes.
        let (score, pass, _) = agentv_test(vec![None, None, Some(0.5)]).decide(&results);
        assert!(pass && score > 0.86, "{score}");
    }

    #[test]
    fn an_unmet_required_rubric_item_fails_the_grader_and_keeps_its_score() {
        // AgentV's checklist: five items, one unmet and required: score 0.8, verdict fail.
        let mut results: Vec<_> = (0..4)
            .map(|i| result(&format!("r{i}"), 0.9, true, 1.0))
            .collect();
        results.push(result("r4", 0.1, false, 1.0));
        let checklist = |gates| Aggregate {
            counting: Counting::Passes,
            gate_zeroes: false,
            ..agentv_test(gates)
        };
        let (score, pass, _) = checklist(vec![Some(1.0); 5]).decide(&results);
        assert!((score - 0.8).abs() < 1e-9 && !pass, "{score} {pass}");
        // Not required: the same share passes.
        let (_, pass, _) =
            checklist(vec![Some(1.0), Some(1.0), Some(1.0), Some(1.0), None]).decide(&results);
        assert!(pass);
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn a_chat_model_named_as_the_embedding_grader_reads_and_errors_its_checks() {
        // promptfoo reads `openai:text-embedding-3-small` as a chat model: the file loads and
        // the checks that ask it for embeddings error.
        let file = Path::new("promptfooconfig.yaml");
        let graders = read(&json!({"embedding": "openai:text-embedding-3-small"}), file).unwrap();
        let embedding = graders.embedding.expect("an embedding grader");
        let why = embedding.unusable.clone().expect("unusable");
        assert!(why.contains("not an embedding provider"), "{why}");
        let err = client(&embedding, std::time::Duration::from_secs(1), "").unwrap_err();
        assert!(matches!(err, ClientError::Unusable(_)));
    }

    #[test]
    fn a_grader_map_names_the_chat_and_the_embedding_grader() {
        let file = Path::new("promptfooconfig.yaml");
        let graders = read(
            &json!({"text": "openai:chat:judge", "embedding": {"id": "openai:embedding:emb", "config": {"apiBaseUrl": "http://127.0.0.1:9/v1"}}}),
            file,
        )
        .unwrap();
        assert_eq!(graders.text.unwrap().model, "openai/judge");
        let embedding = graders.embedding.unwrap();
        assert_eq!(embedding.model, "openai/emb");
        assert_eq!(embedding.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        // An embedding id alone is the embedding grader; a chat id the chat grader.
        let alone = read(&json!("openai:embeddings:e"), file).unwrap();
        assert!(alone.text.is_none() && alone.embedding.is_some());
        let chat = read(&json!("openai:gpt-4o"), file).unwrap();
        assert!(chat.text.is_some() && chat.embedding.is_none());
        let err = read(&json!({"text": "openai:chat:j", "vision": "x"}), file)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`vision`"), "{err}");
    }

    #[test]
    fn similarity_metrics() {
        let (a, b) = ([1.0, 0.0], [1.0, 1.0]);
        let cosine = Metric::Cosine.similarity(&a, &b).unwrap();
        assert!((cosine - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        assert_eq!(Metric::Dot.similarity(&a, &b).unwrap(), 1.0);
        assert_eq!(Metric::Euclidean.similarity(&a, &a).unwrap(), 1.0);
        assert!(Metric::Cosine.similarity(&a, &[1.0]).is_err());
        assert_eq!(Metric::of("not-similar:dot"), Some(Metric::Dot));
        assert_eq!(Metric::of("similar"), Some(Metric::Cosine));
        assert_eq!(Metric::of("similar:manhattan"), None);
    }

    #[test]
    fn grading_prompts_render_escaped_values_and_chat_messages() {
        let vars = json!({"topic": "a \"quoted\"\nline", "n": 42, "data": {"k": 1}});
        let vars = vars.as_object().unwrap();
        let template = r#"[{"role": "system", "content": "Grade: {{rubric}}"}, {"role": "user", "content": "{{output}} / {{topic}} / {{n}}"}]"#;
        let request = grading_request(
            template,
            &[("output", "said \"hi\"\n"), ("rubric", "R")],
            vars,
        )
        .unwrap();
        assert_eq!(request.system.as_deref(), Some("Grade: R"));
        let ChatMessage::User(user) = &request.messages[0] else {
            panic!("a user message");
        };
        // The escaped texts are read back by the JSON parse; a number loses its ends as in
        // promptfoo.
        assert_eq!(user, "said \"hi\"\n / a \"quoted\"\nline / ");
        assert!(request.tools.is_empty());
        let plain =
            grading_request("Is {{output}} ok? {{data}}", &[("output", "a\nb")], vars).unwrap();
        let ChatMessage::User(user) = &plain.messages[0] else {
            panic!("a user message");
        };
        assert_eq!(user, "Is a\\nb ok? {\"k\":1}");
    }
}
