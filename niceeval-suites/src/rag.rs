//! promptfoo's model-graded metrics that are computed from the grader's text rather than read
//! as one verdict: `context-recall`, `context-relevance`, `context-faithfulness`,
//! `answer-relevance` and `conversation-relevance`, and their `not-` forms. Each asks the
//! grader for text in a set shape (lines marked `[Attributed]`, quoted sentences, statements
//! and `verdict: yes|no` lines, questions, a `{"verdict": …}` object) and scores it by
//! promptfoo's rules (its matchers' counting, thresholds, inversion and failure cases). The
//! grading prompts are niceeval's own; a `rubricPrompt` replaces them as in promptfoo.
//!
//! Where the context comes from is promptfoo's rule too: the test's `context` var (text, or a
//! list of texts), else the item's `contextTransform` of the output, else (for
//! `context-recall` only) the prompt.

use std::time::Duration;

use serde_json::{Map, Value};

use super::JudgeSpec;
use super::graders;
use niceeval::__workspace::provider::{ChatRequest, ModelClient, ProviderError};
use niceeval::__workspace::scope::{BoxFuture, Check, Graded};
use niceeval::scope::RunView;
use niceeval::{AssertionKind, Grade, Settings};

/// The window of `conversation-relevance` when the item sets none (promptfoo's).
pub(crate) const DEFAULT_WINDOW: usize = 5;

/// How many questions `answer-relevance` has the grader write (promptfoo's).
const QUESTIONS: usize = 3;

/// promptfoo's marks for a supported and an unsupported sentence (`context-recall`).
const ATTRIBUTED: &str = "[attributed]";
const NOT_ATTRIBUTED: &str = "[not attributed]";

/// What the grader writes when no sentence of the context helps (`context-relevance`).
const INSUFFICIENT: &str = "Insufficient Information";

/// The line before the statements' verdicts (`context-faithfulness`).
const FINAL_VERDICTS: &str = "final verdict for each statement in order:";

/// One of the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    /// How much of the expected answer (`value`) the context supports.
    ContextRecall,
    /// How much of the context the query needs.
    ContextRelevance,
    /// How much of the output the context supports.
    ContextFaithfulness,
    /// How well questions written from the output match the query (embeddings).
    AnswerRelevance,
    /// Whether each reply fits the conversation before it (`window` messages).
    ConversationRelevance,
}

impl Metric {
    /// The metric an assertion type names (with or without `not-`).
    pub(crate) fn of(kind: &str) -> Option<Metric> {
        Some(match kind.strip_prefix("not-").unwrap_or(kind) {
            "context-recall" => Metric::ContextRecall,
            "context-relevance" => Metric::ContextRelevance,
            "context-faithfulness" => Metric::ContextFaithfulness,
            "answer-relevance" => Metric::AnswerRelevance,
            "conversation-relevance" => Metric::ConversationRelevance,
            _ => return None,
        })
    }

    /// The type's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::ContextRecall => "context-recall",
            Metric::ContextRelevance => "context-relevance",
            Metric::ContextFaithfulness => "context-faithfulness",
            Metric::AnswerRelevance => "answer-relevance",
            Metric::ConversationRelevance => "conversation-relevance",
        }
    }

    /// Every type name, for the list of known types.
    pub(crate) const NAMES: [&'static str; 5] = [
        "context-recall",
        "context-relevance",
        "context-faithfulness",
        "answer-relevance",
        "conversation-relevance",
    ];

    /// Whether the metric reads a context.
    pub(crate) fn needs_context(self) -> bool {
        matches!(
            self,
            Metric::ContextRecall | Metric::ContextRelevance | Metric::ContextFaithfulness
        )
    }
}

/// The context a metric is given: one text, or chunks (a list var, or a transform's list).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Context {
    Text(String),
    Chunks(Vec<String>),
}

impl Context {
    /// As the grader reads it: chunks joined by blank lines.
    fn serialized(&self) -> String {
        match self {
            Context::Text(text) => text.clone(),
            Context::Chunks(chunks) => chunks.join("\n\n"),
        }
    }

    /// The context a value gives: text, or a list of texts (every item a non-empty string).
    pub(crate) fn from_value(value: &Value) -> Result<Context, RagError> {
        let context = match value {
            Value::String(text) => Context::Text(text.clone()),
            Value::Array(items) => Context::Chunks(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| match item {
                        Value::String(s) => Ok(s.clone()),
                        other => Err(RagError::ContextItem(i, kind_of(other))),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            other => return Err(RagError::ContextShape(kind_of(other))),
        };
        let empty = match &context {
            Context::Text(text) => text.is_empty(),
            Context::Chunks(chunks) => chunks.is_empty() || chunks.iter().any(String::is_empty),
        };
        if empty {
            return Err(RagError::NoContext);
        }
        Ok(context)
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Why a metric could not be graded: the case errors with it, as promptfoo errors the row.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RagError {
    /// No context var, transform or fallback.
    #[error(
        "`{0}` needs a context: give the test a `context` var (text, or a list of texts) or the item a `contextTransform` that extracts it from the output"
    )]
    Missing(&'static str),
    /// An empty context.
    #[error("the context is empty")]
    NoContext,
    /// A context list with another item than text.
    #[error("the context is a list of texts, but item {0} is {1}")]
    ContextItem(usize, &'static str),
    /// A context that is neither text nor a list.
    #[error("the context is text or a list of texts, not {0}")]
    ContextShape(&'static str),
    /// The `contextTransform` failed.
    #[error("`contextTransform` failed: {0}")]
    Transform(String),
    /// The metric's var is missing.
    #[error("`{metric}` needs a `{var}` var with the user's question")]
    NoQuery {
        metric: &'static str,
        var: &'static str,
    },
    /// `context-recall` without its expected answer.
    #[error("`context-recall` needs a `value`: the expected answer or fact")]
    NoValue,
    /// A `_conversation` var that is no list of `{input, output}`.
    #[error("the `_conversation` var is a list of {{input, output}} mappings")]
    Conversation,
    /// The grader could not be asked.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The grader named cannot be asked.
    #[error(transparent)]
    Client(#[from] graders::ClientError),
    /// A custom grading prompt does not render.
    #[error("the grading prompt does not render: {0}")]
    Prompt(String),
}

/// One metric's item, ready to grade: registered after the case's body like a judge call.
pub(crate) struct RagCheck {
    pub metric: Metric,
    pub inverse: bool,
    pub threshold: f64,
    /// `context-recall`'s expected answer.
    pub value: Option<String>,
    /// The user's question (`query` var; `answer-relevance` falls back on the prompt).
    pub query: Option<String>,
    pub context: Option<Context>,
    pub output: String,
    /// `conversation-relevance`'s turns (`_conversation`, else the prompt and output).
    pub conversation: Vec<(String, String)>,
    pub window: usize,
    pub text: JudgeSpec,
    pub embedding: JudgeSpec,
    /// A `rubricPrompt` (for `context-faithfulness`, a list of two: statements, verdicts).
    pub rubric_prompt: Option<String>,
    pub vars: Map<String, Value>,
    pub timeout: Duration,
}

/// What a metric concluded, as promptfoo's matcher returns it.
struct Outcome {
    pass: bool,
    score: f64,
    reason: String,
    /// The grader's answer could not be read: not inverted, always a failure.
    grader_failed: bool,
}

impl Outcome {
    fn scored(score: f64, threshold: f64, reason: String) -> Outcome {
        Outcome {
            pass: score >= threshold - f64::EPSILON,
            score,
            reason,
            grader_failed: false,
        }
    }

    fn grader_failed(reason: impl Into<String>) -> Outcome {
        Outcome {
            pass: false,
            score: 0.0,
            reason: reason.into(),
            grader_failed: true,
        }
    }
}

impl Check for RagCheck {
    fn describe(&self) -> String {
        format!(
            "{}{} at {}",
            if self.inverse { "not-" } else { "" },
            self.metric.name(),
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
            let grade = match self.measure().await {
                Ok(outcome) => self.verdict(outcome),
                Err(e) => Grade::error(format!("{}: {e}", self.metric.name())),
            };
            (grade, None)
        })
    }
}

impl RagCheck {
    /// promptfoo's inversion: pass and score turn over, except for a grader failure (and
    /// `conversation-relevance` turns the verdict only).
    fn verdict(&self, outcome: Outcome) -> Grade {
        let (pass, score) = if !self.inverse || outcome.grader_failed {
            (outcome.pass, outcome.score)
        } else if self.metric == Metric::ConversationRelevance {
            (!outcome.pass, outcome.score)
        } else {
            (!outcome.pass, 1.0 - outcome.score)
        };
        Grade::score(score.clamp(0.0, 1.0), outcome.reason).with_verdict(pass)
    }

    async fn measure(&self) -> Result<Outcome, RagError> {
        match self.metric {
            Metric::ContextRecall => self.recall().await,
            Metric::ContextRelevance => self.relevance().await,
            Metric::ContextFaithfulness => self.faithfulness().await,
            Metric::AnswerRelevance => self.answer_relevance().await,
            Metric::ConversationRelevance => self.conversation_relevance().await,
        }
    }

    fn context(&self) -> Result<&Context, RagError> {
        self.context
            .as_ref()
            .ok_or(RagError::Missing(self.metric.name()))
    }

    fn query(&self) -> Result<&str, RagError> {
        self.query.as_deref().ok_or(RagError::NoQuery {
            metric: self.metric.name(),
            var: "query",
        })
    }

    /// The grader's text for a prompt: `custom` (a `rubricPrompt`) rendered with `named` and
    /// the vars, else niceeval's own prompt with `named` in it.
    async fn ask(
        &self,
        client: &ModelClient,
        custom: Option<&str>,
        own: &str,
        named: &[(&str, &str)],
    ) -> Result<String, RagError> {
        let request = match custom {
            Some(template) => graders::grading_request(template, named, &self.vars)
                .map_err(|e| RagError::Prompt(e.to_string()))?,
            None => ChatRequest::new()
                .user(fill(own, named))
                .temperature(0.0)
                .max_tokens(2048),
        };
        Ok(client.complete(&request).await?.text)
    }

    fn client(&self, spec: &JudgeSpec, role: &str) -> Result<ModelClient, RagError> {
        Ok(graders::client(spec, self.timeout, role)?)
    }

    async fn recall(&self) -> Result<Outcome, RagError> {
        let context = self.context()?.serialized();
        let truth = self.value.as_deref().ok_or(RagError::NoValue)?;
        let client = self.client(&self.text, " (the grader of `context-recall`)")?;
        let reply = self
            .ask(
                &client,
                self.rubric_prompt.as_deref(),
                RECALL_PROMPT,
                &[("context", &context), ("groundTruth", truth)],
            )
            .await?;
        if reply.is_empty() {
            return Ok(Outcome::grader_failed("No output"));
        }
        Ok(score_recall(&reply, self.threshold))
    }

    async fn relevance(&self) -> Result<Outcome, RagError> {
        let query = self.query()?;
        let context = self.context()?;
        let serialized = context.serialized();
        let client = self.client(&self.text, " (the grader of `context-relevance`)")?;
        let reply = self
            .ask(
                &client,
                self.rubric_prompt.as_deref(),
                RELEVANCE_PROMPT,
                &[("context", &serialized), ("query", query)],
            )
            .await?;
        if reply.is_empty() {
            return Ok(Outcome::grader_failed("No output"));
        }
        Ok(score_relevance(&reply, context, self.threshold))
    }

    async fn faithfulness(&self) -> Result<Outcome, RagError> {
        let query = self.query()?;
        let context = self.context()?.serialized();
        let client = self.client(&self.text, " (the grader of `context-faithfulness`)")?;
        // A `rubricPrompt` here is a list of two prompts: statements, then verdicts.
        let (first, second) = match self.rubric_prompt.as_deref().map(two_prompts) {
            Some((a, b)) => (a, b),
            None => (None, None),
        };
        let answer = answer_text(&self.output);
        let reply = self
            .ask(
                &client,
                first.as_deref(),
                STATEMENTS_PROMPT,
                &[("question", query), ("answer", &answer)],
            )
            .await?;
        if reply.is_empty() {
            return Ok(Outcome::grader_failed("No output"));
        }
        let statements = lines(&reply);
        if statements.is_empty() {
            return Ok(Outcome::grader_failed(
                "Could not extract context-faithfulness statements",
            ));
        }
        let listed = statements.join("\n");
        let verdicts = self
            .ask(
                &client,
                second.as_deref(),
                VERDICTS_PROMPT,
                &[("context", &context), ("statements", &listed)],
            )
            .await?;
        if verdicts.is_empty() {
            return Ok(Outcome::grader_failed("No output"));
        }
        Ok(score_faithfulness(
            &verdicts,
            statements.len(),
            self.threshold,
        ))
    }

    async fn answer_relevance(&self) -> Result<Outcome, RagError> {
        let query = self.query.as_deref().unwrap_or_default();
        let client = self.client(&self.text, " (the grader of `answer-relevance`)")?;
        let answer = answer_text(&self.output);
        let mut questions = Vec::with_capacity(QUESTIONS);
        for _ in 0..QUESTIONS {
            let reply = self
                .ask(
                    &client,
                    self.rubric_prompt.as_deref(),
                    QUESTION_PROMPT,
                    &[("answer", &answer)],
                )
                .await?;
            if reply.is_empty() {
                return Ok(Outcome::grader_failed("No output"));
            }
            questions.push(reply);
        }
        let embedder = self.client(
            &self.embedding,
            " (the embedding grader of `answer-relevance`)",
        )?;
        let asked = embedder.embed(query).await?;
        let mut total = 0.0;
        for question in &questions {
            let vector = embedder.embed(question).await?;
            total += graders::cosine(&asked, &vector);
        }
        let similarity = total / questions.len() as f64;
        let pass = similarity >= self.threshold - f64::EPSILON;
        Ok(Outcome {
            pass,
            score: similarity,
            reason: format!(
                "Relevance {similarity:.2} is {} threshold {}",
                if pass { "greater than" } else { "less than" },
                self.threshold
            ),
            grader_failed: false,
        })
    }

    async fn conversation_relevance(&self) -> Result<Outcome, RagError> {
        let client = self.client(&self.text, " (the grader of `conversation-relevance`)")?;
        let window = self.window.max(1);
        let mut relevant = 0usize;
        let total = self.conversation.len();
        for i in 0..total {
            let turns = &self.conversation[i.saturating_sub(window - 1)..=i];
            let reply = match self.rubric_prompt.as_deref() {
                Some(template) => {
                    let messages: Vec<Value> = turns
                        .iter()
                        .map(
                            |(input, output)| serde_json::json!({"input": input, "output": output}),
                        )
                        .collect();
                    let mut values = self.vars.clone();
                    values.insert("messages".into(), Value::Array(messages));
                    let text = super::template::render(template, &values)
                        .map_err(|e| RagError::Prompt(e.to_string()))?;
                    client
                        .complete(&ChatRequest::new().user(text).temperature(0.0))
                        .await?
                        .text
                }
                None => {
                    let transcript = transcript(turns);
                    client
                        .complete(
                            &ChatRequest::new()
                                .user(fill(CONVERSATION_PROMPT, &[("conversation", &transcript)]))
                                .temperature(0.0),
                        )
                        .await?
                        .text
                }
            };
            if reply.is_empty() {
                return Ok(Outcome::grader_failed("No output"));
            }
            match window_verdict(&reply) {
                Ok(true) => relevant += 1,
                Ok(false) => {}
                Err(why) => {
                    return Ok(Outcome::grader_failed(format!(
                        "Error parsing output: {why}"
                    )));
                }
            }
        }
        let score = if total > 0 {
            relevant as f64 / total as f64
        } else {
            0.0
        };
        Ok(Outcome::scored(
            score,
            self.threshold,
            format!("{relevant} out of {total} conversation windows were relevant"),
        ))
    }
}

/// The turns of a conversation, read from `_conversation` (a list of `{input, output}`), or
/// the one turn of the case.
pub(crate) fn conversation(
    vars: &Map<String, Value>,
    prompt: &str,
    output: &str,
) -> Result<Vec<(String, String)>, RagError> {
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    match vars.get("_conversation") {
        Some(Value::Array(turns)) if !turns.is_empty() => turns
            .iter()
            .map(|turn| match turn {
                Value::Object(m) => Ok((text(m.get("input")), text(m.get("output")))),
                _ => Err(RagError::Conversation),
            })
            .collect(),
        _ => Ok(vec![(prompt.to_string(), output.to_string())]),
    }
}

/// The `{{name}}` places of one of niceeval's own prompts filled in.
fn fill(template: &str, named: &[(&str, &str)]) -> String {
    let mut text = template.to_string();
    for (name, value) in named {
        text = text.replace(&format!("{{{{{name}}}}}"), value);
    }
    text
}

/// promptfoo's `tryParse` of an answer: a JSON output is given to the grader as its data.
fn answer_text(output: &str) -> String {
    match serde_json::from_str::<Value>(output) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => output.to_string(),
    }
}

/// The two prompts of a `context-faithfulness` `rubricPrompt` (a JSON list of texts or
/// `{content}` messages); anything else sets neither.
fn two_prompts(text: &str) -> (Option<String>, Option<String>) {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return (None, None);
    };
    let prompt = |i: usize| match items.get(i) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(m)) => m.get("content").and_then(Value::as_str).map(str::to_string),
        _ => None,
    };
    (prompt(0), prompt(1))
}

/// promptfoo's `splitIntoSentences`: the non-blank lines.
fn lines(text: &str) -> Vec<&str> {
    text.split('\n').filter(|l| !l.trim().is_empty()).collect()
}

/// promptfoo's `splitTextIntoSentences`: text of two or more non-blank lines is one unit a
/// line; one block of prose is cut after `.`, `!` or `?` followed by white space. Bare list
/// markers (`1.`, `2)`) are no units.
fn sentences(text: &str) -> Vec<String> {
    let non_blank = lines(text);
    let pieces: Vec<String> = if non_blank.len() > 1 {
        non_blank.into_iter().map(str::to_string).collect()
    } else {
        split_prose(text)
    };
    pieces
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && !is_list_marker(s))
        .collect()
}

/// Cuts prose after each `.`, `!` or `?` that white space follows (the white space dropped).
fn split_prose(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        if matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|n| n.is_whitespace()) {
            pieces.push(std::mem::take(&mut current));
            while chars.peek().is_some_and(|n| n.is_whitespace()) {
                chars.next();
            }
        }
    }
    pieces.push(current);
    pieces
}

/// `1.` or `2)` alone.
fn is_list_marker(s: &str) -> bool {
    let digits = s.trim_end_matches(['.', ')']);
    s.len() == digits.len() + 1 && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `context-recall`'s score: of the grader's lines marked attributed or not, the share
/// marked attributed (a line with both marks is not).
fn score_recall(reply: &str, threshold: f64) -> Outcome {
    let marked: Vec<String> = lines(reply)
        .into_iter()
        .map(str::to_lowercase)
        .filter(|l| l.contains(ATTRIBUTED) || l.contains(NOT_ATTRIBUTED))
        .collect();
    if marked.is_empty() {
        return Outcome::grader_failed(
            "Grader returned no [Attributed]/[Not Attributed] classifications",
        );
    }
    let attributed = marked
        .iter()
        .filter(|l| !l.contains(NOT_ATTRIBUTED) && l.contains(ATTRIBUTED))
        .count();
    let score = attributed as f64 / marked.len() as f64;
    let outcome = Outcome::scored(score, threshold, String::new());
    let reason = format!(
        "Recall {score:.2} is {} {threshold}",
        if outcome.pass { ">=" } else { "<" }
    );
    Outcome { reason, ..outcome }
}

/// `context-relevance`'s score: the distinct sentences the grader quotes over the context's
/// units (its chunks, its lines, or its sentences), at most 1; quotes that are not in the
/// context are a grader failure.
fn score_relevance(reply: &str, context: &Context, threshold: f64) -> Outcome {
    let serialized = context.serialized();
    let segmented = match context {
        Context::Chunks(_) => true,
        Context::Text(text) => lines(text).len() > 1,
    };
    let units = match context {
        Context::Chunks(chunks) => chunks.iter().filter(|c| !c.trim().is_empty()).count(),
        Context::Text(text) => sentences(text).len(),
    };
    let insufficient = reply.contains(INSUFFICIENT);
    let mut quoted: Vec<String> = Vec::new();
    if !insufficient {
        let found: Vec<String> = if segmented {
            lines(reply).into_iter().map(str::to_string).collect()
        } else {
            sentences(reply)
        };
        for s in found {
            if !quoted.contains(&s) {
                quoted.push(s);
            }
        }
    }
    let normal = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let haystack = normal(&serialized);
    if !quoted.is_empty()
        && !quoted
            .iter()
            .any(|s| haystack.contains(&normal(strip_marker(s))))
    {
        return Outcome::grader_failed("Grader output does not quote the provided context");
    }
    let numerator = quoted.len().min(units);
    let score = if units > 0 {
        numerator as f64 / units as f64
    } else {
        0.0
    };
    let outcome = Outcome::scored(score, threshold, String::new());
    let reason = format!(
        "Context relevance {score:.2} is {} {threshold}",
        if outcome.pass { ">=" } else { "<" }
    );
    Outcome { reason, ..outcome }
}

/// A quoted sentence without its leading list marker (`1.`, `2)`, `-`, `*`).
fn strip_marker(s: &str) -> &str {
    let t = s.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let rest = if digits > 0 && matches!(t.as_bytes().get(digits), Some(b'.' | b')')) {
        &t[digits + 1..]
    } else if let Some(rest) = t.strip_prefix(['-', '*']) {
        rest
    } else {
        return s;
    };
    rest.trim_start()
}

/// `context-faithfulness`'s score from the verdicts: after promptfoo's "final verdict" line,
/// the `.`-separated answers (each must say yes or no; a missing one counts as no), else the
/// `verdict: yes` / `verdict: no` marks (statements without one count as no).
fn score_faithfulness(reply: &str, statements: usize, threshold: f64) -> Outcome {
    let text = reply.trim().to_lowercase();
    let n = statements as f64;
    let score = if let Some(at) = text.find(FINAL_VERDICTS) {
        let answers: Vec<&str> = text[at + FINAL_VERDICTS.len()..]
            .split('.')
            .filter(|a| !a.trim().is_empty())
            .collect();
        if answers.is_empty()
            || !answers
                .iter()
                .all(|a| has_word(a, "yes") || has_word(a, "no"))
        {
            return Outcome::grader_failed("Could not parse context-faithfulness verdicts");
        }
        let unfaithful = answers.iter().filter(|a| !a.contains("yes")).count();
        let missing = statements.saturating_sub(answers.len());
        1.0 - (unfaithful + missing) as f64 / n
    } else {
        let no = text.matches("verdict: no").count();
        let yes = text.matches("verdict: yes").count();
        if no + yes == 0 {
            return Outcome::grader_failed("Could not parse context-faithfulness verdicts");
        }
        let missing = statements.saturating_sub(no + yes);
        1.0 - (no + missing) as f64 / n
    };
    let score = score.clamp(0.0, 1.0);
    let outcome = Outcome::scored(score, threshold, String::new());
    let reason = format!(
        "Faithfulness {score:.2} is {} {threshold}",
        if outcome.pass { ">=" } else { "<" }
    );
    Outcome { reason, ..outcome }
}

/// Whether `word` stands alone in `text` (a regex `\bword\b` over ASCII word characters).
fn has_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// A window's verdict: the first JSON object of the reply, whose `verdict` is `yes` or `no`.
fn window_verdict(reply: &str) -> Result<bool, String> {
    let object = reply
        .match_indices('{')
        .find_map(|(at, _)| {
            serde_json::Deserializer::from_str(&reply[at..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
                .filter(Value::is_object)
        })
        .ok_or_else(|| "No JSON object found in response".to_string())?;
    match object.get("verdict").and_then(Value::as_str) {
        Some("yes") => Ok(true),
        Some("no") => Ok(false),
        _ => Err("Conversation relevance grader returned an invalid verdict".into()),
    }
}

/// The turns as the grader reads them.
fn transcript(turns: &[(String, String)]) -> String {
    let mut text = String::new();
    for (input, output) in turns {
        text.push_str(&format!("user: {input}\nassistant: {output}\n"));
    }
    text
}

const RECALL_PROMPT: &str = "You check a reference answer against a context.

Context:
{{context}}

Reference answer:
{{groundTruth}}

Split the reference answer into its sentences. For each, write one numbered line: the sentence, \
a few words on whether the context states it, and then the mark [Attributed] if the context \
supports the sentence or [Not Attributed] if it does not. Write only these lines.";

const RELEVANCE_PROMPT: &str = "Below are a question and a context. Copy, word for word and one \
per line, each sentence of the context that is needed to answer the question. Do not change the \
sentences. If no sentence helps, or the question cannot be answered from the context, write only \
the words \"Insufficient Information\".

Question: {{query}}

Context:
{{context}}";

const STATEMENTS_PROMPT: &str = "Break the answer below into short standalone statements, one \
per line, so that each can be checked on its own. Write only the statements.

Question: {{question}}
Answer: {{answer}}";

const VERDICTS_PROMPT: &str = "For each statement below, decide whether the context supports it. \
For each, write one line: the statement, a short reason, and then `verdict: yes` if the context \
supports it or `verdict: no` if it does not.

Context:
{{context}}

Statements:
{{statements}}";

const QUESTION_PROMPT: &str = "Write the one question that the following answer answers. Write \
only the question.

Answer: {{answer}}";

const CONVERSATION_PROMPT: &str = "Here is a conversation. Decide whether the assistant's last \
reply is relevant to what the user said in the conversation so far. Answer with one JSON object: \
{\"verdict\": \"yes\"} if it is relevant, or {\"verdict\": \"no\", \"reason\": \"why not\"} if \
it is not.

{{conversation}}";

#[cfg(test)]
mod tests {
    use super::*;

    // The rules below are promptfoo's, from its matchers' tests (test/matchers/rag*.test.ts):
    // inputs and expected scores.

    #[test]
    fn recall_counts_attributed_lines() {
        let reply = "1. Einstein was born in Germany. The context says so. [Attributed]\n\
                     2. He was born in 1879. [Attributed]\n\
                     3. He wrote four papers. Not in the context. [Not Attributed]\n";
        let o = score_recall(reply, 0.5);
        assert!((o.score - 2.0 / 3.0).abs() < 1e-9);
        assert!(o.pass);
        let o = score_recall(reply, 0.9);
        assert!(!o.pass);
        let none = score_recall("I cannot tell.", 0.5);
        assert!(none.grader_failed && !none.pass);
    }

    #[test]
    fn relevance_counts_quoted_units() {
        let context =
            Context::Text("Paris is the capital. France is in Europe. Cheese is good.".into());
        let o = score_relevance("Paris is the capital.", &context, 0.3);
        assert!((o.score - 1.0 / 3.0).abs() < 1e-9, "{}", o.score);
        assert!(o.pass);
        let o = score_relevance("Insufficient Information", &context, 0.3);
        assert_eq!(o.score, 0.0);
        let o = score_relevance("The moon is made of cheese.", &context, 0.3);
        assert!(o.grader_failed);
        let chunks = Context::Chunks(vec!["alpha".into(), "beta".into()]);
        let o = score_relevance("1. alpha", &chunks, 0.5);
        assert_eq!(o.score, 0.5);
    }

    #[test]
    fn faithfulness_reads_either_verdict_form() {
        let o = score_faithfulness(
            "statement 1: verdict: yes\nstatement 2: verdict: no",
            2,
            0.5,
        );
        assert_eq!(o.score, 0.5);
        let o = score_faithfulness(
            "Final verdict for each statement in order: Yes. No. Yes.",
            3,
            0.5,
        );
        assert!((o.score - 2.0 / 3.0).abs() < 1e-9);
        let o = score_faithfulness("Final verdict for each statement in order: Yes.", 3, 0.5);
        assert!((o.score - 1.0 / 3.0).abs() < 1e-9);
        let o = score_faithfulness("no idea", 2, 0.5);
        assert!(o.grader_failed);
    }

    #[test]
    fn sentences_split_prose_and_lines() {
        assert_eq!(sentences("A b. C d! E?"), ["A b.", "C d!", "E?"]);
        assert_eq!(sentences("one\ntwo\n\nthree"), ["one", "two", "three"]);
        assert_eq!(
            sentences("1. Paris is big. 2. Rome is old."),
            ["Paris is big.", "Rome is old."]
        );
    }

    #[test]
    fn window_verdicts_read_the_first_object() {
        assert_eq!(window_verdict("ok {\"verdict\": \"yes\"}"), Ok(true));
        assert_eq!(
            window_verdict("{\"verdict\": \"no\", \"reason\": \"x\"}"),
            Ok(false)
        );
        assert!(window_verdict("{\"verdict\": \"maybe\"}").is_err());
        assert!(window_verdict("no json").is_err());
    }

    #[test]
    fn contexts_are_text_or_lists_of_text() {
        assert!(matches!(
            Context::from_value(&serde_json::json!(["a", 1])),
            Err(RagError::ContextItem(1, "a number"))
        ));
        assert!(matches!(
            Context::from_value(&serde_json::json!("")),
            Err(RagError::NoContext)
        ));
        assert_eq!(
            Context::from_value(&serde_json::json!(["a", "b"]))
                .unwrap()
                .serialized(),
            "a\n\nb"
        );
    }
}
