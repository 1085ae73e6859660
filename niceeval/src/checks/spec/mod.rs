//! Assertions as data: the assertion items of promptfoo (`assert:`), AgentV (`assert:` /
//! `assertions:`) and Runsight (`assertions:`) lists, deserialized as [`AssertSpec`] and run by
//! [`evaluate`] with the same matchers as the Rust API.
//!
//! ```
//! # #[cfg(feature = "yaml")] {
//! use niceeval::spec::{self, SpecContext};
//!
//! let specs = spec::from_yaml(r#"
//! - type: icontains
//!   value: refund
//! - type: not-contains
//!   value: error
//! - type: equals
//!   value: completed
//!   transform: "json_path:$.status"
//!   metric: status
//! - type: cost
//!   threshold: 0.05
//! "#).unwrap();
//! let mut context = SpecContext::default();
//! context.cost_usd = Some(0.01);
//! let outcome = spec::evaluate(&specs, r#"{"status": "completed", "note": "Refund sent"}"#, &context).unwrap();
//! assert!(outcome.pass);
//! assert_eq!(outcome.score, 1.0);
//! assert_eq!(outcome.named_scores["status"], 1.0);
//! # }
//! ```
//!
//! # Types
//!
//! | type | value | notes |
//! |---|---|---|
//! | `contains`, `icontains` | non-empty string or number | `includes` is an alias; a number reads as JavaScript writes it (`1.0` is `1`) |
//! | `contains-all`, `contains-any`, `icontains-all`, `icontains-any` | list, or a comma-separated string | an empty list: `-all` passes, `-any` fails; see [Comma-separated values](#comma-separated-values) |
//! | `starts-with`, `ends-with` | non-empty string | exact, case-sensitive |
//! | `regex` | pattern | a search; Rust `regex` syntax; a bad pattern is a load-time error |
//! | `equals` | any | a string, number or boolean compares as text, exactly: `42` is not `42.0`, `true` is not ` true`; objects and arrays compare as JSON (`[1, 2]` equals `[1, 2.0]`); `config: {mode: json}` compares a string `value` as JSON (Runsight), `mode: string` is the default, any other mode is a load-time error |
//! | `is-json`, `contains-json` | optional JSON Schema (object, or YAML/JSON text) | draft-07 unless `$schema` says otherwise, `format` asserted; `contains-json` also reads objects leniently (`{key: value}`, `//` comments, unclosed) |
//! | `levenshtein` | reference text | `threshold` is the maximum distance (default 5) |
//! | `similarity` | reference text | normalized Levenshtein, `threshold` default 0.6 |
//! | `bleu` | reference text or list | `threshold` default 0.5 |
//! | `gleu` | reference text or list | Google-BLEU: min of 1–4-gram precision and recall, best reference; `threshold` default 0.5 |
//! | `rouge-n` | reference text | F-measure; `threshold` default 0.75; `config: {n: 2}` for ROUGE-2 |
//! | `meteor` | reference text or list | METEOR (exact words, then Porter stems; no WordNet synonyms), best reference; `threshold` default 0.5; `alpha`, `beta`, `gamma` beside `value` (0.9, 3, 0.5) |
//! | `is-refusal` | — | promptfoo's refusal phrases (`I'm sorry…`, `As an AI`, `I can't help`); an empty reply counts as a refusal and scores 0 either way |
//! | `contains-html`, `is-html` | — | signs of HTML somewhere; the whole text parses as an HTML document with a known element and no loose text |
//! | `contains-xml`, `is-xml` | optional required elements: `a.b, c`, a list, or `{requiredElements: [...]}` | a span of the text, or the whole text (well-formed, namespaces checked, no DTD internal subset), has every dotted path (`root.item.0.name`, `root.@_id`) |
//! | `contains-sql`, `is-sql` | optional `{databaseType, allowedTables, allowedColumns}` | a fenced `sql` block (or the text), or the whole text, parses as SQL of `databaseType` (MySQL by default); the whitelists are regexes over `select::null::users`-style names |
//! | `word-count` | number, or `{min, max}` | |
//! | `cost`, `latency` | — | `threshold` (or `value`) is the budget, in USD or ms, read from the context; scores 1 within it, 0 over it |
//! | `finish-reason` | the expected reason | against [`ProviderResponse::finish_reason`], case-insensitive, the provider's spelling mapped as promptfoo's providers map it (`end_turn` is `stop`, `max_tokens` is `length`, `tool_use` is `tool_calls`); no reason fails (`not-` passes) |
//! | `perplexity`, `perplexity-score` | — | from [`ProviderResponse::logprobs`] (none is an error): `e^(−mean)` at most `threshold`, or `1/(1+e^(−mean))` at least `threshold`; no threshold passes |
//! | `guardrails` | — | [`ProviderResponse::guardrails`] (or the last `metadata.redteamHistory` entry's) flagged fails; none passes; `not-` expects a block |
//! | `is-valid-function-call`, `is-valid-openai-function-call`, `is-valid-openai-tools-call` | — | the calls of [`ProviderResponse::output`] (or a data output) against the JSON Schemas of [`ProviderResponse::provider_config`]'s `functions` / `tools` (Google's `functionDeclarations` for `google:`/`vertex:` providers); no `not-` |
//! | `tool-call-f1` | tool names: a list or a comma-separated string | F1 of the called tool names (OpenAI, Anthropic, Google shapes, or JSON blocks in text) against these; `threshold` default 1; `not-` keeps the score |
//! | `trace-span-count`, `trace-span-duration`, `trace-error-spans` | `{pattern, min, max}`; `{pattern, max, percentile}`; a number or `{pattern, max_count, max_percentage}` | over [`SpecContext::trace_spans`] (none is an error); patterns are globs (`*`, `?`), case-insensitive; no `not-` |
//! | `webhook` | URL | POSTs `{output, context: {prompt, vars}}`, reads `{pass, score?, reason?}`; `WEBHOOK_TIMEOUT` ms (default 5000) |
//! | `classifier` | a label, or none for the best | `provider: huggingface:text-classification:<model>` (`config.apiEndpoint`, `config.apiKey`, else `HF_TOKEN` / `HF_API_TOKEN`); `threshold` default 1 |
//! | `moderation` | categories to count (list), or none for all | OpenAI's `/moderations` (`omni-moderation-latest`; `provider: openai:moderation:<model>`); `OPENAI_API_KEY`, `OPENAI_API_HOST` / `OPENAI_API_BASE_URL` / `OPENAI_BASE_URL`; needs the prompt |
//! | `pi` | the question | Pi Labs' scorer with `WITHPI_API_KEY`; passes over `threshold` (default 0.5); needs the prompt; no `not-` |
//! | `javascript`, `python` | code, or `file://path[:function]` | `config` is `context.config`; `threshold` judges a returned number (and fails a Python grading result scoring below it); `not-` flips the pass and keeps the returned score (promptfoo) |
//! | `script` | — | `command:` a list (no shell) or a string (run with `sh -c`) |
//! | `assert-set` | — | nested `assert:` list; the set's `threshold`, `weight`, `metric` |
//! | anything else | — | a custom assertion from `.niceeval/assertions/` (`custom:NAME` works too) |
//!
//! promptfoo's text-format types read the reply's form rather than its words:
//!
//! ```
//! use niceeval::spec::{self, SpecContext};
//!
//! let specs = spec::from_json(r#"[
//!   {"type": "is-xml", "value": "order.id, order.@_status"},
//!   {"type": "not-is-refusal"},
//!   {"type": "not-is-html"}
//! ]"#).unwrap();
//! let reply = r#"<order status="sent"><id>7</id></order>"#;
//! assert!(spec::evaluate(&specs, reply, &SpecContext::default()).unwrap().pass);
//!
//! let sql = spec::from_json(r#"[{"type": "contains-sql",
//!   "value": {"allowedTables": ["select::null::orders"]}}]"#).unwrap();
//! let reply = "Run this:\n```sql\nSELECT id FROM orders WHERE status = 'sent'\n```";
//! assert!(spec::evaluate(&sql, reply, &SpecContext::default()).unwrap().pass);
//! let reply = "```sql\nSELECT * FROM customers\n```";
//! assert!(!spec::evaluate(&sql, reply, &SpecContext::default()).unwrap().pass);
//! ```
//!
//! Cargo features (all on by default): YAML ([`from_yaml`], `.yaml` files, a schema written as
//! YAML text) needs `yaml`; a JSON Schema `value` (and the function-call validators' schemas)
//! needs `json-schema`; `javascript` and `python` need `inline-code`; `webhook`, `classifier`,
//! `moderation` and `pi` need `providers`. Without one, such an item is a load-time error naming the feature.
//!
//! Every type takes a `not-` prefix (but those the table marks "no `not-`": promptfoo 0.123.1
//! ignores it there, so it is a load-time error), `weight`, `metric`, `transform` (`json_path:$.a.b`, or a
//! bare `$.a.b`), and `threshold`. `equals` and the `contains` types take promptfoo's
//! `normalizeUnicode`: `true` compares output and value in NFC, `NFC`, `NFD`, `NFKC` or `NFKD`
//! in that form (the compatibility forms fold `x²` into `x2`, so they are never the default). Type names are matched case-insensitively with `_` read as
//! `-` (`is_json` is `is-json`). The outcome passes only when every assertion passes.
//!
//! # Threshold, weight and score, as in promptfoo
//!
//! - `threshold` is the score needed by graded types (`similarity`, `bleu`, `rouge-n`, `meteor`,
//!   `javascript`, `python`, `script`, custom assertions, `assert-set`) and the limit of
//!   `levenshtein`, `cost` and `latency`. Pass/fail types ignore it: `contains` with
//!   `threshold: 0` still fails when the text is absent.
//! - `weight` (default 1) weighs the assertion in the score. `weight: 0` records the score but
//!   always passes the assertion (an execution error still fails it); an `assert-set`'s own
//!   `weight: 0` does not pass its members (promptfoo scores sets apart).
//! - The score is the weighted mean of the items: 1 for an empty list, 0 when every item
//!   weighs 0. A named metric is the weighted mean of the items naming it, 0 when they all
//!   weigh 0; an `assert-set` member's metric counts with the member's weight times the set's.
//!   An empty `assert-set` passes with score 0.
//!
//! # Comma-separated values
//!
//! A string `value` of the list types is split as promptfoo's `parseCommaSeparatedValues`
//! does: fields are separated by commas, with whitespace and repeated commas between them
//! skipped; a field starting with `"` is quoted — it runs to the closing quote, keeps commas and
//! spaces, and reads `\"` and `""` as a quote and `\\` as a backslash (`'"", x'` is the empty
//! string and `x`). Other fields run to the next comma and are trimmed; quotes inside them are
//! plain text (`said "hi", bye`). An unterminated quote, or text after a closing quote
//! (`"hello" world`), is a load-time error.
//!
//! ```
//! # #[cfg(feature = "yaml")] {
//! use niceeval::spec::{self, SpecContext};
//!
//! let specs = spec::from_yaml(r#"
//! - type: contains-all
//!   value: '"say \"hello\"", "another,phrase"'
//! "#).unwrap();
//! let outcome = spec::evaluate(&specs, r#"say "hello" and another,phrase"#, &SpecContext::default()).unwrap();
//! assert!(outcome.pass);
//! let err = spec::from_yaml(r#"[{type: contains-any, value: '"hello" world'}]"#).unwrap_err();
//! assert!(err.to_string().contains("assertion #0 (type `contains-any`)"), "{err}");
//! # }
//! ```
//!
//! # Where niceeval differs
//!
//! Where the peers disagree, niceeval's choices: `levenshtein` with `threshold: 0` means an
//! exact match (as promptfoo's current unit tests; older releases turned 0 into 5); `contains-json` finds arrays as well as objects
//! (Runsight; promptfoo finds objects only); BLEU follows NLTK (promptfoo's brevity penalty is
//! inverted); `rouge-n` is the ROUGE-N F-measure tokenized like Google's `rouge-score`
//! (Runsight), while promptfoo's is `js-rouge`'s case-sensitive recall of distinct n-grams, so
//! scores can differ widely (see [`crate::checks::expect::rouge_n`]); an empty `value` for
//! `contains`-like types is a load-time error (as promptfoo's invariant), not a vacuous pass;
//! numbers are accepted where promptfoo wants strings (`starts-with: 1`); a number a code
//! assertion returns is clamped to [0, 1] as its score (promptfoo keeps it); an empty list
//! scores 1 (promptfoo; Runsight 0); `meteor` pairs no WordNet synonyms (promptfoo's
//! third stage); `is-sql` and `contains-sql` parse with sqlparser, not node-sql-parser, and the
//! two grammars disagree at the edges (the known cases are listed in the tests of
//! `expect/sql/`). The peers' unit-test vectors and each difference they
//! show are listed in the repository's DIALECTS.md. Not supported:
//! model-graded types (`llm-rubric`, `similar`, `factuality`; use `t.judge()`), promptfoo's
//! JavaScript `transform` expressions and `{{var}}` templates in values.
//!
//! The types that read the response or call a service reach promptfoo's verdicts and scores,
//! with these differences: a service that cannot be reached or answers with an error (and a
//! run without the log-probabilities or trace a type needs) makes the item an execution error,
//! which `weight: 0` does not pass (promptfoo records a failure that `weight: 0` passes);
//! service answers are not cached; argument schemas are checked by the `is-json` validator,
//! whose messages differ from Ajv's (and which accepts keywords Ajv's strict mode refuses);
//! `moderation` calls only OpenAI's endpoint (promptfoo's Azure and Replicate moderation
//! providers are refused).

mod aggregate;
mod as_assertion;
mod load;
mod locate;
mod prepare;

mod response;
mod values;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::assertion::{AssertionResult, CheckContext, Subject};
use crate::base::grader::{GraderMessage, TokenUsage, TraceSummary};

pub use as_assertion::assertions;
#[cfg(feature = "yaml")]
#[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
pub use load::from_yaml;
pub use load::{from_json, load};
pub use response::{ProviderResponse, TraceSpan};

use prepare::Prepared;

/// A spec's prepared form, keyed by the spec it was prepared from.
type PreparedSpec = Arc<(AssertSpec, Result<Prepared, ItemProblem>)>;

/// One assertion as data: an item of an `assert:` / `assertions:` list.
///
/// Unknown keys are kept in [`AssertSpec::extra`] (AgentV passes them to script graders as
/// configuration). Fields are read when the spec is first evaluated; changing them later is
/// picked up on the next evaluation.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct AssertSpec {
    /// The assertion type, optionally prefixed with `not-`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The expected value, reference text, pattern, schema or code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Score needed to pass (or the type's own limit: distance, budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Weight in the mean score (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Named metric the score counts towards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// `json_path:$.a.b` (or `$.a.b`): check that part of the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<String>,
    /// Configuration for code assertions, script graders and custom assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// The command of a `script` grader: a list (program and arguments) or a shell string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Value>,
    /// A display name (AgentV).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The members of an `assert-set`.
    #[serde(
        default,
        rename = "assert",
        alias = "assertions",
        skip_serializing_if = "Option::is_none"
    )]
    pub assert: Option<Vec<AssertSpec>>,
    /// Any other keys of the item.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
    #[serde(skip)]
    cache: Arc<Mutex<Option<PreparedSpec>>>,
}

impl std::fmt::Debug for AssertSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("AssertSpec");
        d.field("type", &self.kind);
        if let Some(v) = &self.value {
            d.field("value", v);
        }
        if let Some(t) = self.threshold {
            d.field("threshold", &t);
        }
        if let Some(w) = self.weight {
            d.field("weight", &w);
        }
        if let Some(m) = &self.metric {
            d.field("metric", m);
        }
        if let Some(t) = &self.transform {
            d.field("transform", t);
        }
        if let Some(c) = &self.config {
            d.field("config", c);
        }
        if let Some(c) = &self.command {
            d.field("command", c);
        }
        if let Some(a) = &self.assert {
            d.field("assert", a);
        }
        d.finish()
    }
}

impl PartialEq for AssertSpec {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.value == other.value
            && self.threshold == other.threshold
            && self.weight == other.weight
            && self.metric == other.metric
            && self.transform == other.transform
            && self.config == other.config
            && self.command == other.command
            && self.name == other.name
            && self.assert == other.assert
            && self.extra == other.extra
    }
}

impl AssertSpec {
    /// An assertion of `kind` with `value`.
    ///
    /// ```
    /// use niceeval::spec::{self, AssertSpec, SpecContext};
    ///
    /// let specs = [AssertSpec::new("starts-with", "Dear"), AssertSpec::new("word-count", serde_json::json!({"max": 5}))];
    /// assert!(spec::evaluate(&specs, "Dear Ada", &SpecContext::default()).unwrap().pass);
    /// ```
    pub fn new(kind: impl Into<String>, value: impl Into<Value>) -> Self {
        AssertSpec {
            kind: kind.into(),
            value: Some(value.into()),
            ..AssertSpec::default()
        }
    }

    /// An assertion of `kind` without a value (`is-json`, `cost`, ...).
    pub fn of_type(kind: impl Into<String>) -> Self {
        AssertSpec {
            kind: kind.into(),
            ..AssertSpec::default()
        }
    }

    /// Deserializes one list item. A plain string (AgentV's rubric shorthand) is refused: it
    /// needs a judge model. The error is a [`SpecError::Item`].
    pub fn from_item(item: Value) -> Result<AssertSpec, SpecError> {
        let refused = |message: String| SpecError::Item {
            message,
            source: None,
        };
        match item {
            Value::String(rubric) => Err(refused(format!(
                "{} is an LLM rubric (a plain string), which needs a judge model; assertions as data run deterministic types only — use t.judge().rubric(..) in Rust",
                crate::base::excerpt::quote_width(&rubric, 60)
            ))),
            Value::Object(_) => serde_json::from_value(item).map_err(|e| SpecError::Item {
                message: e.to_string(),
                source: Some(Arc::new(e)),
            }),
            other => Err(refused(format!(
                "expected a mapping with a `type`, got {other}"
            ))),
        }
    }

    fn fingerprint(&self) -> AssertSpec {
        AssertSpec {
            cache: Arc::default(),
            ..self.clone()
        }
    }

    /// The prepared (validated, compiled) form, cached until the spec changes.
    fn prepared(&self) -> PreparedSpec {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = cache.as_ref()
            && hit.0 == *self
        {
            return hit.clone();
        }
        let fresh = Arc::new((self.fingerprint(), prepare::prepare(self)));
        *cache = Some(fresh.clone());
        fresh
    }
}

/// What the assertions know beyond the output: test variables, the prompt, references, and the
/// run's metrics (for `cost`, `latency` and script graders).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SpecContext {
    /// Test-case variables (`context.vars` for code assertions, `vars` for graders).
    pub vars: BTreeMap<String, Value>,
    /// The prompt sent (`context.prompt`).
    pub prompt: Option<String>,
    /// The input message (`input` for graders).
    pub input: Option<String>,
    /// Every input message, earlier turns and system messages included (`input` for graders
    /// when given, instead of [`SpecContext::input`] as one user message).
    pub input_messages: Vec<GraderMessage>,
    /// Paths of the files the input references (`input_files` for graders).
    pub input_files: Vec<String>,
    /// The test's metadata (`metadata` for graders).
    pub metadata: Option<Value>,
    /// The reference answer (`expected_output` for graders).
    pub expected_output: Option<String>,
    /// Evaluation criteria (`criteria` for graders).
    pub criteria: Option<String>,
    /// The run's cost in USD (`cost` assertions, `cost_usd` for graders).
    pub cost_usd: Option<f64>,
    /// The run's latency in milliseconds (`latency` assertions, `duration_ms` for graders).
    pub latency_ms: Option<f64>,
    /// Token usage (`token_usage` for graders).
    pub token_usage: Option<TokenUsage>,
    /// Transcript messages (`messages` for graders).
    pub messages: Vec<GraderMessage>,
    /// Execution metrics (`trace_summary` for graders).
    pub trace_summary: Option<TraceSummary>,
    /// The agent's workspace (`workspace_path` for graders).
    pub workspace_path: Option<PathBuf>,
    /// Where relative `file://` paths, script commands and `.niceeval/assertions/` are resolved
    /// from (usually the spec file's directory); the current directory when `None`.
    pub base_dir: Option<PathBuf>,
    /// Time limit for each subprocess assertion (code, script, custom); their defaults otherwise.
    pub timeout: Option<Duration>,
    /// What the provider returned besides its text, and how it was configured (the response
    /// types: `finish-reason`, `perplexity`, `guardrails`, the function-call validators,
    /// `tool-call-f1`).
    pub response: ProviderResponse,
    /// The spans of the run's trace (`trace-span-count`, `trace-span-duration`,
    /// `trace-error-spans`); `None` when the run has no trace data, which those types report
    /// as an error. [`SpecContext::with_events`] fills it from the run's spans.
    pub trace_spans: Option<Vec<TraceSpan>>,
}

impl SpecContext {
    /// An empty context.
    pub fn new() -> Self {
        SpecContext::default()
    }

    /// Sets [`SpecContext::base_dir`].
    pub fn with_base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Sets [`SpecContext::cost_usd`].
    pub fn with_cost_usd(mut self, cost: f64) -> Self {
        self.cost_usd = Some(cost);
        self
    }

    /// Sets [`SpecContext::latency_ms`].
    pub fn with_latency_ms(mut self, ms: f64) -> Self {
        self.latency_ms = Some(ms);
        self
    }

    /// Adds a variable.
    pub fn with_var(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Fills messages, trace summary, token usage and cost from a run's events, and the trace
    /// spans when the run received any.
    pub fn with_events(mut self, events: &[crate::base::event::Event]) -> Self {
        let mut payload = crate::base::grader::GraderInput::default();
        crate::checks::expect::fill_from_events(&mut payload, events);
        self.messages = payload.messages;
        self.trace_summary = payload.trace_summary;
        self.token_usage = payload.token_usage;
        if payload.cost_usd.is_some() {
            self.cost_usd = payload.cost_usd;
        }
        // The name under which `agents/trace` keeps a received span among the run's events.
        let spans: Vec<TraceSpan> = events
            .iter()
            .filter_map(|event| match event {
                crate::base::event::Event::Custom { name, data } if name == "otel.span" => {
                    TraceSpan::from_event_data(data)
                }
                _ => None,
            })
            .collect();
        if !spans.is_empty() {
            self.trace_spans = Some(spans);
        }
        // The skills a coding agent loaded, as promptfoo's providers report them
        // (`metadata.skillCalls`), for `skill-used`.
        let skills: Vec<Value> = events
            .iter()
            .filter_map(|event| match event {
                crate::base::event::Event::SkillLoaded { name } => {
                    Some(serde_json::json!({ "name": name }))
                }
                _ => None,
            })
            .collect();
        if !skills.is_empty() {
            let metadata = self
                .response
                .metadata
                .get_or_insert_with(|| Value::Object(Default::default()));
            if let Some(map) = metadata.as_object_mut() {
                let calls = map
                    .entry("skillCalls")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Some(list) = calls.as_array_mut() {
                    list.extend(skills);
                }
            }
        }
        self
    }
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecOutcome {
    /// Every assertion passed.
    pub pass: bool,
    /// Weighted mean score (weight 0 records without counting): 1 for an empty list, 0 when
    /// every assertion weighs 0 (as promptfoo).
    pub score: f64,
    /// Weighted mean score of each named metric (0 when its assertions all weigh 0); an
    /// `assert-set`'s members count towards theirs.
    pub named_scores: BTreeMap<String, f64>,
    /// Each assertion's result, in order.
    pub results: Vec<AssertionResult>,
}

/// Where something is written: the file (or `YAML` / `JSON` for text), 1-based line and
/// column. Displayed `path:line:column`, as compilers write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file, or `YAML` / `JSON` for text given directly.
    pub origin: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.origin, self.line, self.column)
    }
}

/// One invalid assertion item.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemError {
    /// Where: `#2`, or `#3.assert[1]` inside a set.
    pub position: String,
    /// The item's `type` as written.
    pub kind: String,
    /// What is wrong and how to fix it.
    pub message: String,
    /// Where the item starts in the text it was read from (`None` for items built in code or
    /// read from a [`serde_json::Value`]).
    pub location: Option<Location>,
}

impl std::fmt::Display for ItemError {
    /// `path:line:column: assertion #2 (type `regex`): invalid regular expression ...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(location) = &self.location {
            write!(f, "{location}: ")?;
        }
        write!(
            f,
            "assertion {} (type `{}`): {}",
            self.position, self.kind, self.message
        )
    }
}

/// Why one assertion item cannot be prepared, with its cause when another library found it.
/// It becomes the message of an [`ItemError`] (the public line naming the item).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ItemProblem {
    /// A field holds no value, a value of the wrong kind or one out of range; the text says
    /// which and how to fix it.
    #[error("{0}")]
    Invalid(String),
    /// The item has no `value` and its type needs one.
    #[error("needs a `value` ({what})")]
    MissingValue {
        /// What the value should be.
        what: &'static str,
    },
    /// The `value` of a `regex` item does not compile.
    #[error("invalid regular expression /{pattern}/: {message}")]
    Regex {
        /// The pattern as written.
        pattern: String,
        /// The regex engine's complaint, on one line.
        message: String,
    },
    /// `config.mode: json` with a `value` that is no JSON text.
    #[error("config.mode is json but `value` is not JSON: {0}")]
    ValueNotJson(#[source] serde_json::Error),
    /// A schema written as text that does not parse.
    #[cfg(feature = "yaml")]
    #[error("`value` is not a JSON Schema (as YAML or JSON): {0}")]
    SchemaText(#[source] yaml_serde::Error),
    /// A schema written as text that does not parse.
    #[cfg(not(feature = "yaml"))]
    #[error(
        "`value` is not a JSON Schema as JSON ({0}); a schema written as YAML needs niceeval's `yaml` feature"
    )]
    SchemaText(#[source] serde_json::Error),
    /// A schema that does not compile.
    #[cfg(feature = "json-schema")]
    #[error(transparent)]
    Schema(#[from] crate::checks::expect::SchemaError),
    /// The `transform` is an invalid JSONPath.
    #[error("invalid JSONPath `{expr}` in `transform`: {source}")]
    Transform {
        /// The JSONPath as written.
        expr: String,
        /// The parser's error.
        #[source]
        source: Arc<serde_json_path::ParseError>,
    },
    /// A member of an `assert-set`.
    #[error("member assert[{index}] (type `{kind}`): {source}")]
    Member {
        /// The member's index in `assert`.
        index: usize,
        /// Its `type` as written.
        kind: String,
        /// What is wrong with it.
        #[source]
        source: Box<ItemProblem>,
    },
    /// The current directory, where custom assertions are looked up, cannot be read.
    #[error("cannot read the current directory to find custom assertions: {0}")]
    CurrentDir(#[source] std::io::Error),
}

impl ItemProblem {
    /// A problem described by its message (no other library's error behind it).
    pub(crate) fn invalid(message: impl Into<String>) -> ItemProblem {
        ItemProblem::Invalid(message.into())
    }
}

/// Why assertions as data could not be loaded or evaluated.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The document is not a list of assertions.
    #[error("{}", parse_message(.origin, .location.as_ref(), .message))]
    Parse {
        /// Where the text came from (a path, `YAML`, `JSON`).
        origin: String,
        /// Where in it the problem is, when the parser or the item says.
        location: Option<Location>,
        /// What is wrong.
        message: String,
    },
    /// Some items are invalid (each is listed, one per line).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<ItemError>),
    /// One list item is not an assertion ([`AssertSpec::from_item`]): a plain string (an LLM
    /// rubric, which needs a judge model), a value that is no mapping, or a mapping whose
    /// fields do not read.
    #[error("{message}")]
    Item {
        /// What is wrong.
        message: String,
        /// The reader's error, for a mapping.
        #[source]
        source: Option<Arc<serde_json::Error>>,
    },
}

/// Two errors are equal when they say the same (a cause is not compared).
impl PartialEq for SpecError {
    fn eq(&self, other: &SpecError) -> bool {
        match (self, other) {
            (
                SpecError::Parse {
                    origin,
                    location,
                    message,
                },
                SpecError::Parse {
                    origin: o,
                    location: l,
                    message: m,
                },
            ) => origin == o && location == l && message == m,
            (SpecError::Invalid(a), SpecError::Invalid(b)) => a == b,
            (SpecError::Item { message, .. }, SpecError::Item { message: m, .. }) => message == m,
            _ => false,
        }
    }
}

fn parse_message(origin: &str, location: Option<&Location>, message: &str) -> String {
    match location {
        Some(at) => format!("{at}: cannot read assertions: {message}"),
        None => format!("cannot read assertions from {origin}: {message}"),
    }
}

/// Checks every item (types, values, patterns, schemas, custom assertion names resolved from
/// `base_dir` or the current directory), reporting all problems at once.
///
/// ```
/// use niceeval::spec::{self, AssertSpec};
///
/// let specs = [AssertSpec::new("regex", "(unclosed"), AssertSpec::of_type("contains")];
/// let err = spec::validate(&specs).unwrap_err().to_string();
/// assert!(err.contains("assertion #0 (type `regex`): invalid regular expression"), "{err}");
/// assert!(err.contains("assertion #1 (type `contains`): needs a `value`"), "{err}");
/// ```
pub fn validate(specs: &[AssertSpec]) -> Result<(), SpecError> {
    validate_in(specs, None)
}

/// As [`validate`], with relative `file://` references read from `base_dir`.
pub fn validate_in(specs: &[AssertSpec], base_dir: Option<&Path>) -> Result<(), SpecError> {
    prepare_all(specs, base_dir).map(drop)
}

/// Prepares every spec, or reports every invalid one.
fn prepare_all(
    specs: &[AssertSpec],
    base_dir: Option<&Path>,
) -> Result<Vec<PreparedSpec>, SpecError> {
    let mut errors = Vec::new();
    let mut prepared = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let p = spec.prepared();
        let problem = match &p.1 {
            Err(problem) => Some(problem.to_string()),
            Ok(ready) => ready.check_custom(base_dir).err().map(|p| p.to_string()),
        };
        if let Some(message) = problem {
            errors.push(ItemError {
                position: format!("#{i}"),
                kind: spec.kind.clone(),
                message,
                location: None,
            });
        }
        prepared.push(p);
    }
    if errors.is_empty() {
        Ok(prepared)
    } else {
        Err(SpecError::Invalid(errors))
    }
}

/// Evaluates assertions on `output` and aggregates them: `pass` when every assertion passed,
/// `score` the weighted mean, `named_scores` per metric. Invalid items are an `Err` naming each
/// (nothing is evaluated then); a failing assertion, a failing transform or a crashing grader
/// only fails its own result, and the others still run.
///
/// Subprocess assertions (`javascript`, `python`, `script`, custom) block the calling thread
/// while they run (inside a multi-thread Tokio runtime through `block_in_place`).
pub fn evaluate(
    specs: &[AssertSpec],
    output: &str,
    context: &SpecContext,
) -> Result<SpecOutcome, SpecError> {
    evaluate_subject(
        specs,
        &Subject::Text(std::borrow::Cow::Borrowed(output)),
        context,
    )
}

/// [`evaluate`] on a subject: data (a suite file's `JSON.parse(output)` transform) reaches code
/// assertions as data and the others as its JSON text.
pub fn evaluate_subject(
    specs: &[AssertSpec],
    subject: &Subject<'_>,
    context: &SpecContext,
) -> Result<SpecOutcome, SpecError> {
    evaluate_subject_in(specs, subject, context, &CheckContext::default())
}

/// [`evaluate_subject`] in a run: script and custom graders get its working copy.
fn evaluate_subject_in(
    specs: &[AssertSpec],
    subject: &Subject<'_>,
    context: &SpecContext,
    run: &CheckContext,
) -> Result<SpecOutcome, SpecError> {
    let prepared = prepare_all(specs, context.base_dir.as_deref())?;
    let mut results = Vec::with_capacity(specs.len());
    let mut is_set = Vec::with_capacity(specs.len());
    for ready in &prepared {
        let Ok(p) = &ready.1 else { continue };
        let assertion = p.instantiate(context);
        results.push(AssertionResult::evaluate_in(
            assertion.as_ref(),
            subject,
            run,
        ));
        is_set.push(p.is_set());
    }
    Ok(SpecOutcome {
        pass: results.iter().all(|r| r.passed),
        score: aggregate::score(&results),
        named_scores: aggregate::named_scores(&results, &is_set),
        results,
    })
}
