//! promptfoo and AgentV suite files run as [`niceeval`] evals. A promptfoo
//! `promptfooconfig.yaml` (module `promptfoo`) or an AgentV `EVAL.yaml` (module `agentv`) is read into
//! cases (tests × prompts × providers); each case is a data eval
//! ([`niceeval::data_eval::DataEval`]) the engine runs like a Rust eval: the case names its
//! provider as the run's agent and its grader as the judge when the run starts, sends its
//! prompt, checks its items with [`niceeval::spec`] and registers its model-graded items with
//! the judge. Every key the loader does not support is an error naming the file, line, column
//! and what is supported. `DIALECTS.md` beside this crate lists where niceeval reads either
//! tool's files differently.
//!
//! Two ways in: the `niceeval eval -c promptfooconfig.yaml` command (`niceeval-cli`), and a suite
//! target of your own crate that runs a file's cases beside its Rust evals:
//!
//! ```toml
//! # Cargo.toml
//! [dev-dependencies]
//! niceeval = "0.1"
//! niceeval-suites = "0.1"
//!
//! [[test]]
//! name = "evals"
//! harness = false
//! ```
//!
//! ```ignore
//! // tests/evals.rs: the `#[eval]` functions of this file, and the file's cases.
//! niceeval_suites::main!(suites = ["evals/promptfooconfig.yaml"]);
//! ```
//!
//! The runner reads the same command line as `niceeval::main!()`'s.

#![deny(missing_docs)]

mod agents;
mod agentv;
#[cfg(test)]
mod agentv_schema_coverage;
mod cells;
mod deflated;
mod errors;
mod file_cases;
mod geval;
mod graders;
mod node;
mod overrides;
mod prompt;
mod promptfoo;
mod promptfoo_keys;
mod provider_config;
mod rag;
mod runner;
mod select_best;
mod stream;
mod template;
mod validate;
mod vars_transform;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use niceeval::__workspace::EvalDefinition;
use niceeval::__workspace::scope::Defer;
use niceeval::data_eval::{self, DataEval, Deferred, JudgeTarget, Made, Setup, Start};
use niceeval::reporter::MatrixCell;
use niceeval::spec::{self, AssertSpec, SpecContext};
use niceeval::{AssertionResult, Chain as _, Checkable as _, Error, Eval};

pub(crate) use agents::ProviderSpec;
pub use cells::{CaseCell, cells};
pub use errors::SuiteFileError;
use errors::{CaseError, TransformFailure};
pub use overrides::{Overrides, set_overrides};
pub use runner::{main_with_suites, run_files};
pub use template::render_value;
pub use validate::{Validation, validate};

/// A model-graded item, run by the judge.
#[derive(Debug, Clone)]
pub(crate) struct Graded {
    pub kind: GradedKind,
    pub value: String,
    /// `similar`'s texts (`value` is the first).
    pub expected: Vec<String>,
    /// What the grader is given besides the output: a grading prompt and the item's own
    /// `transform` of the output (see [`GradedInput`]).
    pub prompt: Option<GradedInput>,
    pub threshold: Option<f64>,
    pub weight: Option<f64>,
    pub metric: Option<String>,
    /// A grader named on the item (`provider:`).
    pub judge: Option<JudgeSpec>,
    /// The `not-` form: the grader's verdict turned over, as promptfoo turns it (its
    /// `factuality` and `model-graded-closedqa` ignore it).
    pub inverse: bool,
    /// What a retrieval or conversation metric reads besides the item (`rag`).
    pub rag: Option<Box<RagItem>>,
}

/// A retrieval or conversation metric's own settings.
#[derive(Debug, Clone)]
pub(crate) struct RagItem {
    /// `contextTransform`: JavaScript (or a `file://` function) that extracts the context from
    /// the output.
    pub context_transform: Option<String>,
    /// `conversation-relevance`'s window (`config.windowSize`).
    pub window: usize,
    /// The embedding grader of `answer-relevance` (the item's `provider`, if it names one).
    pub embedding: Option<JudgeSpec>,
}

/// A graded item's own reading of the output, besides its value.
#[derive(Debug, Clone, Default)]
pub(crate) struct GradedInput {
    /// A grading prompt (`rubricPrompt`) sent instead of the judge's own, with `{{output}}`,
    /// `{{rubric}}` (and the scorer's other values) and the test's vars.
    pub rubric_prompt: Option<String>,
    /// promptfoo's item `transform` (JavaScript, or a `file://` JavaScript or Python
    /// function): the grader sees what it makes of the output, and the test errors when it
    /// fails or makes nothing, as in promptfoo.
    pub transform: Option<String>,
}

impl GradedInput {
    /// `None` when there is neither.
    pub(crate) fn of(rubric_prompt: Option<String>, transform: Option<String>) -> Option<Self> {
        (rubric_prompt.is_some() || transform.is_some()).then_some(Self {
            rubric_prompt,
            transform,
        })
    }

    /// The grading prompt of an item, if it has one.
    pub(crate) fn rubric_prompt(input: Option<&Self>) -> Option<&str> {
        input.and_then(|i| i.rubric_prompt.as_deref())
    }
}

/// Which judge scorer a graded item uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GradedKind {
    /// `llm-rubric`, `g-eval`, AgentV rubric lines.
    Rubric,
    /// `factuality`, `model-graded-factuality`.
    Factuality,
    /// `model-graded-closedqa`.
    ClosedQa,
    /// `similar` (`:cosine`, `:dot`, `:euclidean`), `not-similar`: embeddings compared.
    Similar {
        metric: graders::Metric,
        inverse: bool,
    },
    /// `select-best`: the test's outputs compared in one grader call (see `select_best`).
    SelectBest,
    /// A retrieval or conversation metric (see `rag`; its settings are the item's `rag`).
    Rag(rag::Metric),
    /// `g-eval`: steps, then a score out of 10 (see `geval`); its criteria are `expected`.
    GEval,
}

impl GradedKind {
    /// The kind as an error names it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            GradedKind::Rubric => "llm-rubric",
            GradedKind::Factuality => "factuality",
            GradedKind::ClosedQa => "model-graded-closedqa",
            GradedKind::Similar { .. } => "similar",
            GradedKind::SelectBest => "select-best",
            GradedKind::Rag(metric) => metric.name(),
            GradedKind::GEval => "g-eval",
        }
    }
}

/// The grader model: `provider/model` with its base URL and key variable.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JudgeSpec {
    pub model: String,
    pub base_url: Option<String>,
    pub key_env: Option<String>,
    /// Why this grader cannot do what it is named for (a chat model named as the embedding
    /// grader): promptfoo reads the file and errors the checks that use it, and so does
    /// niceeval.
    pub unusable: Option<Arc<str>>,
}

/// One case of a suite file: one test with one prompt and one provider.
#[derive(Debug, Clone)]
pub(crate) struct SuiteCase {
    /// Its name within the file (`description`, or `test N`; with the prompt's and provider's
    /// labels when the file has several).
    pub name: String,
    /// The line of the file (or of the tests file) it comes from.
    pub line: usize,
    /// The prompt, rendered with the vars.
    pub prompt: String,
    /// promptfoo's prompt function, which makes the prompt when the case runs.
    pub prompt_function: Option<Arc<prompt::PromptFunction>>,
    /// Why the case cannot run, found when the file was read (its prompt cannot be rendered
    /// with the test's vars, an item has a type no reader knows): the case errors when it
    /// runs, as promptfoo errors those rows and runs the others.
    pub load_error: Option<Arc<str>>,
    pub provider: Arc<ProviderSpec>,
    /// The test's vars, kept as text until the case runs.
    pub vars: Packed<Map<String, Value>>,
    /// The deterministic items, validated when the file was read and kept as text until the
    /// case runs (a prepared matcher is rebuilt then, and dropped with the case).
    pub asserts: Packed<Vec<AssertSpec>>,
    pub graded: Vec<Graded>,
    /// `options.transform`: JavaScript (inline, or `file://` JavaScript or Python) applied to
    /// the output before every assertion.
    pub transform: Option<String>,
    /// The test's `threshold`: it passes when its score reaches this, failing items or not.
    pub threshold: Option<f64>,
    pub judge: Option<JudgeSpec>,
    /// The embedding grader of `similar` (`options.provider.embedding`).
    pub embedding: Option<JudgeSpec>,
    /// promptfoo's `providerOutput`: the output the case checks instead of asking its
    /// provider.
    pub fixed_output: Option<Arc<str>>,
    /// With a `select-best` item: its test's cases and this case's index among them.
    pub select_best: Option<(Arc<select_best::Group>, usize)>,
    /// Where relative `file://` paths of the case's items start.
    pub base_dir: PathBuf,
    /// AgentV's expected output (the `expected_output` of script graders).
    pub expected_output: Option<String>,
    /// AgentV's `criteria` (the `criteria` of script graders).
    pub criteria: Option<String>,
    /// Where the case sits in the matrix, in words (`test 3, prompt 1, provider 2`): the
    /// eval's description.
    pub position: String,
    /// AgentV's `tool_trajectory` items, checked over the run's tool calls.
    pub trajectories: Vec<Trajectory>,
    /// An AgentV case's graders and inputs (its score is AgentV's: see `agentv::score`).
    pub agentv: Option<Arc<agentv::AgentvCase>>,
    /// Its test, prompt and provider, as the reports show the file's matrix.
    pub matrix: MatrixCell,
}

/// A value kept as its JSON text until its case runs.
///
/// A suite file of 10,000 tests is 10,000 cases held for the whole run; parsed vars and
/// assertion items (maps, prepared matchers) cost several kilobytes a case, their text a
/// tenth of that. Each case parses its own when it runs and drops them when it ends.
#[derive(Clone)]
pub(crate) struct Packed<T> {
    text: Box<str>,
    kind: std::marker::PhantomData<fn() -> T>,
}

impl<T: serde::Serialize + serde::de::DeserializeOwned> Packed<T> {
    /// Packs `value`.
    pub(crate) fn new(value: &T) -> Self {
        // Maps with string keys, JSON values and assertion items always serialize.
        let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
        Self {
            text: text.into_boxed_str(),
            kind: std::marker::PhantomData,
        }
    }

    /// The value, parsed again.
    pub(crate) fn get(&self) -> Result<T, Error> {
        serde_json::from_str(&self.text).map_err(|e| CaseError::Packed(e).into())
    }
}

impl Packed<Map<String, Value>> {
    /// Packs `vars` with their keys in `order` (the order they were written; keys not named
    /// there follow by name): JavaScript and Python code given the text sees promptfoo's order.
    pub(crate) fn ordered(vars: &Map<String, Value>, order: &[String]) -> Self {
        let mut text = String::from("{");
        let named = order.iter().filter(|k| vars.contains_key(k.as_str()));
        let rest = vars.keys().filter(|k| !order.contains(k));
        let mut first = true;
        for name in named.chain(rest) {
            if let Some(value) = vars.get(name.as_str()) {
                if !first {
                    text.push(',');
                }
                first = false;
                text.push_str(&Value::String(name.clone()).to_string());
                text.push(':');
                text.push_str(&value.to_string());
            }
        }
        text.push('}');
        Self {
            text: text.into_boxed_str(),
            kind: std::marker::PhantomData,
        }
    }
}

impl<T> Packed<T> {
    /// The value packed as `text` (what [`Packed::text`] gave).
    pub(crate) fn from_text(text: &str) -> Self {
        Self {
            text: text.into(),
            kind: std::marker::PhantomData,
        }
    }

    /// The value as its JSON text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

impl<T> std::fmt::Debug for Packed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// AgentV's `tool-trajectory`: the tools the agent called, by name and arguments.
#[derive(Debug, Clone)]
pub(crate) struct Trajectory {
    /// How the calls are compared with the expected ones.
    pub mode: TrajectoryMode,
    pub expected: Vec<ExpectedCall>,
    /// At least this many calls of each tool (read by `any_order` only, as AgentV).
    pub minimums: Vec<(String, usize)>,
    /// How arguments are compared when an expected call names none (`args_match`).
    pub args_match: ArgsMatch,
}

/// AgentV's tool-trajectory `mode`, read once when the file is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrajectoryMode {
    /// `any_order`: each tool of `minimums` called at least so often (the default); AgentV
    /// reads no `expected` calls in this mode.
    AnyOrder,
    /// `in_order`: they happened in this order, others between them allowed.
    InOrder,
    /// `exact`: exactly these calls, in order.
    Exact,
    /// `superset`: each expected call matched by its own actual call, in any order.
    Superset,
    /// `subset`: every actual call is one of the expected ones.
    Subset,
}

impl TrajectoryMode {
    /// Every mode with its name in suite files.
    const NAMES: [(TrajectoryMode, &'static str); 5] = [
        (TrajectoryMode::AnyOrder, "any_order"),
        (TrajectoryMode::InOrder, "in_order"),
        (TrajectoryMode::Exact, "exact"),
        (TrajectoryMode::Superset, "superset"),
        (TrajectoryMode::Subset, "subset"),
    ];

    /// The name as a suite file writes it.
    pub(crate) fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(mode, _)| *mode == self)
            .map_or("any_order", |(_, name)| name)
    }
}

impl std::fmt::Display for TrajectoryMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A tool-trajectory `mode` AgentV does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool-trajectory mode `{0}` is not supported; supported: any_order, in_order, exact, superset, subset"
)]
pub(crate) struct UnknownMode(pub String);

impl std::str::FromStr for TrajectoryMode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Self, UnknownMode> {
        Self::NAMES
            .iter()
            .find(|(_, name)| *name == text)
            .map(|(mode, _)| *mode)
            .ok_or_else(|| UnknownMode(text.to_string()))
    }
}

/// A [`Trajectory`] as a check of the run's tool calls, graded after the body (a scoped check:
/// it sees every call the run recorded, late trace spans included). Its score is AgentV's
/// (matched checks over expected checks), passing at 0.8 as AgentV's `scoreToVerdict`.
pub(crate) struct TrajectoryCheck(pub Trajectory);

impl niceeval::scope::ScopedCheck for TrajectoryCheck {
    fn describe(&self) -> String {
        let tools: Vec<&str> = self.0.expected.iter().map(|e| e.tool.as_str()).collect();
        format!("tool_trajectory {} {tools:?}", self.0.mode)
    }

    fn evaluate(&self, run: &niceeval::scope::RunView<'_>) -> niceeval::Grade {
        let calls = ToolCall::from_events(run.events);
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        let called = if names.is_empty() {
            "no tool called".to_string()
        } else {
            format!("tools called: {}", names.join(", "))
        };
        let scored = self.0.score(&calls);
        let mut lines: Vec<String> = scored
            .checks
            .iter()
            .map(|(text, held)| format!("{} {text}", if *held { "ok" } else { "MISS" }))
            .collect();
        lines.push(called);
        niceeval::Grade::score(scored.score, lines.join("; ")).with_verdict(scored.score >= 0.8)
    }
}

/// The name of the [`niceeval::Event::Custom`] an agent emits after a tool call whose duration
/// it knows (AgentV's cli output gives a call's `duration_ms`): `{"call_id", "duration_ms"}`.
/// The run's events have no place for a call's duration; a trajectory's per-call latency
/// limits (`max_duration_ms`) read it from here.
pub(crate) const TOOL_DURATION_EVENT: &str = "agentv:tool_duration";

/// One tool call of a run, as a trajectory compares it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub name: String,
    /// `None`: the call carried no arguments.
    pub input: Option<Value>,
    /// How long the call took, when the agent said ([`TOOL_DURATION_EVENT`]).
    pub duration_ms: Option<f64>,
}

impl ToolCall {
    /// A call by name and input, its duration unknown.
    #[cfg(test)]
    pub(crate) fn new(name: &str, input: Value) -> Self {
        ToolCall {
            name: name.to_string(),
            input: (!input.is_null()).then_some(input),
            duration_ms: None,
        }
    }

    /// The run's tool calls in order, with the durations the agent reported.
    pub(crate) fn from_events(events: &[niceeval::Event]) -> Vec<ToolCall> {
        let durations: std::collections::HashMap<&str, f64> = events
            .iter()
            .filter_map(|e| match e {
                niceeval::Event::Custom { name, data } if name == TOOL_DURATION_EVENT => Some((
                    data.get("call_id")?.as_str()?,
                    data.get("duration_ms")?.as_f64()?,
                )),
                _ => None,
            })
            .collect();
        events
            .iter()
            .filter_map(|e| match e {
                niceeval::Event::ActionCalled {
                    call_id,
                    name,
                    input,
                } => Some(ToolCall {
                    name: name.clone(),
                    input: (!input.is_null()).then(|| input.clone()),
                    duration_ms: durations.get(call_id.as_str()).copied(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// One expected call of a trajectory.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExpectedCall {
    pub tool: String,
    /// `None`: any arguments (`args: any`, or no `args`).
    pub args: Option<Value>,
    /// This call's own `args_match`.
    pub args_match: Option<ArgsMatch>,
    /// `max_duration_ms`: the matched call took at most this long (`in_order` and `exact`).
    pub max_duration_ms: Option<f64>,
}

/// AgentV's `args_match`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ArgsMatch {
    /// Equal, no extra keys (AgentV's default).
    Exact,
    /// The actual arguments hold every expected key, with its value.
    Superset,
    /// Every actual key is expected, with its value.
    Subset,
    /// Not compared.
    Ignore,
    /// Only these fields (dot paths) are compared, those the expected arguments give.
    Fields(Vec<String>),
}

/// AgentV's `deepEqual`: JSON values equal, numbers by value (`10` is `10.0`).
fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| deep_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

impl ExpectedCall {
    /// Whether a call's arguments match, as AgentV's `argsMatch`.
    fn args_match(&self, default: &ArgsMatch, input: Option<&Value>) -> bool {
        let Some(expected) = &self.args else {
            return true;
        };
        let mode = self.args_match.as_ref().unwrap_or(default);
        if *mode == ArgsMatch::Ignore {
            return true;
        }
        let Some(input) = input else {
            return false;
        };
        // Every key of `a` is in `b`, with a deep-equal value.
        let within = |a: &Value, b: &Value| match (a.as_object(), b.as_object()) {
            (Some(a), Some(b)) => a
                .iter()
                .all(|(k, v)| b.get(k).is_some_and(|w| deep_equal(v, w))),
            _ => deep_equal(a, b),
        };
        let field = |v: &Value, path: &str| path.split('.').try_fold(v, |v, k| v.get(k)).cloned();
        match mode {
            ArgsMatch::Exact => deep_equal(expected, input),
            ArgsMatch::Superset => within(expected, input),
            ArgsMatch::Subset => within(input, expected),
            ArgsMatch::Ignore => true,
            // A listed field the expected arguments do not give is not compared.
            ArgsMatch::Fields(fields) => fields.iter().all(|f| match field(expected, f) {
                None => true,
                Some(want) => field(input, f).is_some_and(|got| deep_equal(&want, &got)),
            }),
        }
    }

    /// Whether `call` is this call: the same tool, its arguments matching.
    fn matches(&self, default: &ArgsMatch, call: &ToolCall) -> bool {
        self.tool == call.name && self.args_match(default, call.input.as_ref())
    }
}

/// A trajectory's score over a run's calls: AgentV's share of checks that hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrajectoryScore {
    /// Checks held over checks counted, 0 to 1.
    pub score: f64,
    /// Each check, and whether it held (a latency limit without a duration is not listed).
    pub checks: Vec<(String, bool)>,
}

impl TrajectoryScore {
    /// `checks` scored `held` of `counted` (1 when nothing is counted).
    fn of(checks: Vec<(String, bool)>, held: usize, counted: usize) -> Self {
        let score = if counted == 0 {
            1.0
        } else {
            held as f64 / counted as f64
        };
        TrajectoryScore { score, checks }
    }
}

/// AgentV's latency check of a matched call: `None` when there is no limit or no duration
/// (skipped, not counted).
fn latency_check(want: &ExpectedCall, call: &ToolCall) -> Option<(String, bool)> {
    let max = want.max_duration_ms?;
    let took = call.duration_ms?;
    let tool = &want.tool;
    Some(if took <= max {
        (format!("{tool} completed in {took}ms (max: {max}ms)"), true)
    } else {
        (format!("{tool} took {took}ms (max: {max}ms)"), false)
    })
}

impl Trajectory {
    /// How well `calls` follow it, as AgentV's `ToolTrajectoryGrader` scores: `any_order` the
    /// share of `minimums` met (its `expected` is not read); `in_order` and `exact` the matched
    /// expected calls plus the latency limits of matched calls that held, over the expected
    /// calls plus their latency limits (less those of matched calls without a duration);
    /// `superset` the expected calls found (each its own call) over the expected; `subset` the
    /// calls allowed over the calls.
    pub(crate) fn score(&self, calls: &[ToolCall]) -> TrajectoryScore {
        let hit = |want: &ExpectedCall, call: &ToolCall| want.matches(&self.args_match, call);
        let mut checks = Vec::new();
        match self.mode {
            TrajectoryMode::AnyOrder => {
                let mut held = 0;
                for (tool, min) in &self.minimums {
                    let n = calls.iter().filter(|c| c.name == *tool).count();
                    checks.push((
                        format!("{tool}: called {n} times (required >={min})"),
                        n >= *min,
                    ));
                    held += usize::from(n >= *min);
                }
                TrajectoryScore::of(checks, held, self.minimums.len())
            }
            TrajectoryMode::InOrder | TrajectoryMode::Exact => {
                let latency_limits = self
                    .expected
                    .iter()
                    .filter(|w| w.max_duration_ms.is_some())
                    .count();
                let (mut held, mut skipped) = (0, 0);
                let mut latency = |want: &ExpectedCall, call: &ToolCall, checks: &mut Vec<_>| {
                    match latency_check(want, call) {
                        Some(check) => {
                            held += usize::from(check.1);
                            checks.push(check);
                        }
                        None => skipped += usize::from(want.max_duration_ms.is_some()),
                    }
                };
                let mut matched = 0;
                if self.mode == TrajectoryMode::InOrder {
                    let mut at = 0;
                    for (i, want) in self.expected.iter().enumerate() {
                        // Scan forward to the next call of the tool; its arguments decide.
                        match calls[at.min(calls.len())..]
                            .iter()
                            .position(|c| c.name == want.tool)
                        {
                            Some(k) => {
                                let j = at + k;
                                at = j + 1;
                                if hit(want, &calls[j]) {
                                    checks.push((
                                        format!("found {} at position {j}", want.tool),
                                        true,
                                    ));
                                    matched += 1;
                                    latency(want, &calls[j], &mut checks);
                                } else {
                                    checks.push((
                                        format!("expected {} at position {i}: tool found at {j} but args mismatch", want.tool),
                                        false,
                                    ));
                                }
                            }
                            None => {
                                at = calls.len();
                                checks.push((
                                    format!(
                                        "expected {} at position {i}, not found in remaining trace",
                                        want.tool
                                    ),
                                    false,
                                ));
                            }
                        }
                    }
                } else {
                    if calls.len() != self.expected.len() {
                        // Listed, not counted: the score is over the expected positions.
                        checks.push((
                            format!(
                                "expected {} tool calls, got {}",
                                self.expected.len(),
                                calls.len()
                            ),
                            false,
                        ));
                    }
                    for (i, want) in self.expected.iter().enumerate() {
                        match calls.get(i) {
                            Some(call) if call.name != want.tool => checks.push((
                                format!("position {i}: expected {}, got {}", want.tool, call.name),
                                false,
                            )),
                            Some(call) if hit(want, call) => {
                                checks.push((format!("position {i}: {}", want.tool), true));
                                matched += 1;
                                latency(want, call, &mut checks);
                            }
                            Some(_) => checks.push((
                                format!("position {i}: {} args mismatch", want.tool),
                                false,
                            )),
                            None => checks.push((
                                format!("position {i}: expected {}, got nothing", want.tool),
                                false,
                            )),
                        }
                    }
                }
                let counted = self.expected.len() + latency_limits - skipped;
                TrajectoryScore::of(checks, matched + held, counted)
            }
            TrajectoryMode::Superset => {
                let mut used = vec![false; calls.len()];
                let mut held = 0;
                for want in &self.expected {
                    match (0..calls.len()).find(|&j| !used[j] && hit(want, &calls[j])) {
                        Some(j) => {
                            used[j] = true;
                            held += 1;
                            checks.push((format!("found {} at position {j}", want.tool), true));
                        }
                        None => checks.push((
                            format!("expected {} not found in actual trajectory", want.tool),
                            false,
                        )),
                    }
                }
                TrajectoryScore::of(checks, held, self.expected.len())
            }
            TrajectoryMode::Subset => {
                if self.expected.is_empty() && !calls.is_empty() {
                    let text = format!(
                        "{} unexpected tool call(s) with empty allowed list",
                        calls.len()
                    );
                    return TrajectoryScore {
                        score: 0.0,
                        checks: vec![(text, false)],
                    };
                }
                let mut held = 0;
                for (i, call) in calls.iter().enumerate() {
                    let allowed = self.expected.iter().any(|w| hit(w, call));
                    held += usize::from(allowed);
                    let verb = if allowed { "is" } else { "is not" };
                    checks.push((
                        format!("position {i}: {} {verb} in allowed set", call.name),
                        allowed,
                    ));
                }
                TrajectoryScore::of(checks, held, calls.len())
            }
        }
    }
}

/// A suite file, read.
#[derive(Debug, Default)]
pub(crate) struct Suite {
    /// An AgentV file's cases.
    pub cases: Vec<SuiteCase>,
    /// A promptfoo file's cases, kept deflated until each one runs.
    pub stored: Option<promptfoo::StoredCases>,
    /// `evaluateOptions.maxConcurrency`.
    pub concurrency: Option<usize>,
    /// `evaluateOptions.repeat`.
    pub repeat: Option<u32>,
    /// `outputPath`, resolved against the file's directory.
    pub output_paths: Vec<PathBuf>,
    /// AgentV's `workspace.template`: each run gets a working copy of it.
    pub workspace: Option<PathBuf>,
    /// What niceeval does instead of a key it accepts without acting on it (one line each,
    /// for stderr).
    pub notices: Vec<String>,
    /// The keys the format's schema does not know, dropped as the format drops them: one
    /// line each (where, and the key probably meant).
    pub ignored_keys: Vec<String>,
}

/// Reads a suite file: AgentV's when [`agentv::recognizes`] it (by its name or its keys),
/// promptfoo's otherwise.
pub(crate) fn load(path: &Path) -> Result<Suite, SuiteFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| SuiteFileError::File {
        file: path.display().to_string(),
        message: format!("cannot read the suite file: {e}"),
    })?;
    if agentv::recognizes(path, &text) {
        agentv::read(path, &text)
    } else {
        promptfoo::read(path, text)
    }
}

/// Labels made unique: a label that repeats gets ` #N` (its 1-based position) in every place
/// it appears, so the columns of a matrix never merge two providers.
pub(crate) fn unique_labels<'a>(labels: impl Iterator<Item = &'a str>) -> Vec<String> {
    let labels: Vec<&str> = labels.collect();
    labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            if labels.iter().filter(|l| *l == label).count() > 1 {
                format!("{label} #{}", i + 1)
            } else {
                label.to_string()
            }
        })
        .collect()
}

/// The name of a file without its extensions (`promptfooconfig`, `smoke` for `smoke.eval.yaml`).
pub(crate) fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "suite".into());
    let name = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(&name);
    let name = name.strip_suffix(".eval").unwrap_or(name);
    name.to_string()
}

/// The eval definitions of a suite file's cases, named `<module>::<file stem>::<case>`
/// (`module` is the crate or `suite`), with the file's `repeat`; and the file itself, read.
///
/// `dir` is the directory the results and `niceeval.toml` belong to.
pub fn definitions(
    path: &Path,
    module: &str,
    dir: &Path,
) -> Result<(Vec<&'static EvalDefinition>, SuiteSummary), SuiteFileError> {
    let (cases, summary) = file_cases::read(path, module, dir)?;
    let defs = (0..cases.len())
        .map(|index| cases.make(index).map(Made::define))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SuiteFileError::File {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
    Ok((defs, summary))
}

/// The cases of a suite file, each made when its turn to run comes (see
/// [`niceeval::data_eval::Deferred`]), and the file itself, read; named as [`definitions`]
/// names them.
pub(crate) fn deferred(
    path: &Path,
    module: &str,
    dir: &Path,
) -> Result<(Arc<dyn Deferred>, SuiteSummary), SuiteFileError> {
    let (cases, summary) = file_cases::read(path, module, dir)?;
    Ok((Arc::new(cases), summary))
}

/// What the front end needs of a suite file besides its cases.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SuiteSummary {
    /// `evaluateOptions.maxConcurrency` / `evaluate_options.max_concurrency`.
    pub concurrency: Option<usize>,
    /// `outputPath`.
    pub output_paths: Vec<PathBuf>,
    /// Keys accepted without being acted on, each with what niceeval does instead: one line
    /// each for stderr.
    pub notices: Vec<String>,
    /// Keys the format's schema does not know, dropped as it drops them (one line each, with
    /// their places and the key probably meant); `--strict` makes them errors.
    pub ignored_keys: Vec<String>,
}

/// What a case's run starts from: its vars, parsed, the turn's input, and the case as its
/// prompt function made it (when it has one).
pub(crate) struct CaseRun {
    vars: Map<String, Value>,
    input: String,
    made: Option<Box<SuiteCase>>,
}

impl DataEval for SuiteCase {
    type Run = CaseRun;

    /// The case's provider becomes the run's agent (a `select-best` case replays its group's
    /// answer), its chat prompt's earlier turns the history, its grader the judge.
    fn start<'a>(
        &'a self,
        setup: &'a Setup,
    ) -> data_eval::BoxFuture<'a, Result<Start<CaseRun>, Error>> {
        Box::pin(async move {
            if let Some(error) = &self.load_error {
                return Err(CaseError::Load(error.to_string()).into());
            }
            let vars = self.vars.get()?;
            // A prompt function makes the case's prompt now, with its vars and provider.
            let made = match &self.prompt_function {
                Some(function) => {
                    let provider = &self.provider;
                    let label = (provider.label != provider.id).then_some(provider.label.as_str());
                    let prompt = function
                        .call(self.vars.text(), (&provider.id, label))
                        .await
                        .map_err(CaseError::from)?;
                    Some(Box::new(SuiteCase {
                        prompt,
                        ..self.clone()
                    }))
                }
                None => None,
            };
            let case = made.as_deref().unwrap_or(self);
            let (agent, input, earlier) =
                agents::agent_for(case, &vars).map_err(CaseError::from)?;
            // A `select-best` case sends through its group, which keeps every answer of the
            // test for the grader: the provider is asked once, the run replays its answer.
            // A fixed output (`providerOutput`) is the answer: no provider is asked.
            let agent = match &case.fixed_output {
                Some(text) => Some(Arc::new(niceeval::agent::replay::Replay::new(vec![
                    niceeval::Event::assistant(text.to_string()),
                ])) as Arc<dyn niceeval::agent::Agent>),
                None => agent,
            };
            let agent = match &case.select_best {
                Some((group, index)) => {
                    let events = group
                        .output(*index, &vars)
                        .await
                        .map_err(CaseError::SelectBest)?;
                    Some(Arc::new(niceeval::agent::replay::Replay::new(events))
                        as Arc<dyn niceeval::agent::Agent>)
                }
                None => agent,
            };
            let judge = case
                .judge
                .clone()
                .or_else(|| setup.configured_judge.is_none().then(default_judge));
            let mut start = Start::new(CaseRun { vars, input, made }).with_history(earlier);
            if let Some(agent) = agent {
                start = start.with_agent(agent);
            }
            if let Some(judge) = judge {
                start = start.with_judge(
                    JudgeTarget::new(judge.model)
                        .base_url(judge.base_url)
                        .api_key_env(judge.key_env),
                );
            }
            Ok(start)
        })
    }

    fn run<'a>(
        &'a self,
        t: &'a mut Eval,
        run: CaseRun,
    ) -> data_eval::BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            let CaseRun { vars, input, made } = run;
            let case = made.as_deref().unwrap_or(self);
            run_case(t, case, vars, input).await
        })
    }
}

/// Runs one case: sends its prompt to its provider, then checks the output.
async fn run_case(
    t: &mut Eval,
    case: &SuiteCase,
    vars: Map<String, Value>,
    input: String,
) -> Result<(), Error> {
    let asserts = case.asserts.get()?;
    // An AgentV conversation, or trials, go on when the target fails a turn or a trial (it
    // scores 0).
    let goes_on = case
        .agentv
        .as_ref()
        .is_some_and(|av| av.first_turn.is_some() || av.trials.is_some());
    // Trials send the input again; nothing else keeps it.
    let again = goes_on.then(|| input.clone());
    let first = match t.send(input).await {
        Err(e) if !goes_on => return Err(e),
        Err(e) => Err(e.to_string()),
        Ok(_) => Ok(()),
    };
    // The provider's text; a transform may make data of it (`JSON.parse(output)`), which the
    // items then see as data, as in promptfoo (text items see its JSON).
    let mut output = Value::String(t.reply().to_string());
    if let Some(code) = &case.provider.transform {
        output = node::transform(code, &output, &vars, &case.prompt, &case.base_dir)
            .await
            .map_err(CaseError::ProviderTransform)?;
        if output.is_null() {
            return Err(CaseError::NoTransformValue.into());
        }
    }
    if let Some(code) = &case.transform {
        output = node::transform(code, &output, &vars, &case.prompt, &case.base_dir)
            .await
            .map_err(CaseError::Transform)?;
        if output.is_null() {
            return Err(CaseError::NoTransformValue.into());
        }
    }
    let mut context = SpecContext::default()
        .with_base_dir(case.base_dir.clone())
        .with_events(t.events());
    context.vars = vars.clone().into_iter().collect();
    context.prompt = Some(case.prompt.clone());
    context.input = Some(case.prompt.clone());
    context.expected_output = case.expected_output.clone();
    context.criteria = case.criteria.clone();
    // What the provider said of its answer besides the text (`finish-reason` reads it).
    context.response.provider_id = Some(case.provider.id.clone());
    context.response.finish_reason = t.events().iter().rev().find_map(|e| match e {
        niceeval::Event::Custom { name, data }
            if name == niceeval::__workspace::agent::FINISH_EVENT =>
        {
            data.get("finish_reason")
                .and_then(Value::as_str)
                .map(str::to_string)
        }
        _ => None,
    });
    if let Some(av) = &case.agentv {
        // AgentV's graders, its inputs and its score rule.
        context.input_messages = av
            .input
            .iter()
            .map(|(role, text)| niceeval::grader::GraderMessage::new(role.clone(), text.clone()))
            .collect();
        context.input_files = av.input_files.clone();
        context.metadata = av.metadata.clone();
        context.workspace_path = niceeval::__workspace::eval::workspace_path(t);
        // AgentV's duration: the target's reported one, else its measured time (the run's
        // latency is both: an agent's reported duration replaces the turn's wall time).
        context.latency_ms = Some(t.latency_ms());
        // AgentV's token usage is absent when the target reports none (a grader limiting
        // tokens then fails), not zero.
        let reported_tokens = t.events().iter().any(|e| {
            matches!(e, niceeval::Event::Usage { input_tokens, output_tokens, cache_read_tokens, .. }
                if input_tokens + output_tokens + cache_read_tokens > 0)
        });
        if !reported_tokens {
            context.token_usage = None;
        }
        let text = match &output {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if av.first_turn.is_some() {
            // Boxed: the conversation's sends are large futures of their own.
            Box::pin(agentv::score::converse(t, case, av, first, &context)).await;
        } else if let Some(trials) = &av.trials {
            Box::pin(agentv::score::trials(
                t,
                case,
                av,
                again.as_deref().unwrap_or_default(),
                first,
                &context,
                trials,
            ))
            .await;
        } else {
            agentv::score::grade(t, case, av, &text, &context);
        }
        return Ok(());
    }
    let (plain, transformed): (Vec<AssertSpec>, Vec<AssertSpec>) =
        asserts.into_iter().partition(|a| !is_js_transform(a));
    // Every item's own transform runs before any item is checked: one that fails, or makes
    // nothing, errors the test, as in promptfoo (its items are not checked).
    let mut transformed_items = Vec::with_capacity(transformed.len());
    for mut item in transformed {
        let code = item.transform.take().unwrap_or_default();
        let value = item_transform(&code, &item.kind, &output, &vars, case).await?;
        transformed_items.push((item, value));
    }
    let mut graded_outputs = Vec::with_capacity(case.graded.len());
    for graded in &case.graded {
        let code = graded.prompt.as_ref().and_then(|i| i.transform.as_deref());
        graded_outputs.push(match code {
            Some(code) => {
                Some(item_transform(code, graded.kind.name(), &output, &vars, case).await?)
            }
            None => None,
        });
    }
    let transformed = transformed_items;
    // With a test `threshold` every item counts in one score, as in promptfoo
    // (`graders::Aggregate`): the items checked here are kept, the graded ones gathered, and
    // the test is judged on them all once they are graded.
    let gathered = case
        .threshold
        .map(|_| Arc::new(graders::Collect::default()));
    let mut done: Vec<AssertionResult> = Vec::new();
    if !plain.is_empty() {
        let kept = gathered.as_ref().and_then(|_| {
            niceeval::spec::evaluate_subject(&plain, &output.subject(), &context).ok()
        });
        match kept {
            Some(outcome) => done.extend(outcome.results),
            None => drop(t.check(&output, spec::assertions(&plain).context(context.clone()))),
        }
    }
    for (item, value) in transformed {
        let kept = gathered.as_ref().and_then(|_| {
            niceeval::spec::evaluate_subject(
                std::slice::from_ref(&item),
                &value.subject(),
                &context,
            )
            .ok()
        });
        match kept {
            Some(outcome) => done.extend(outcome.results),
            None => drop(t.check(&value, spec::assertions(&[item]).context(context.clone()))),
        }
    }
    // Graded after the body, over every event of the run: tool calls that arrive late (spans
    // exported after the agent's answer) count, as in any scoped check.
    for trajectory in &case.trajectories {
        t.scoped(TrajectoryCheck(trajectory.clone()));
    }
    let output_text = match &output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let record: Arc<dyn Defer> = match &gathered {
        Some(collected) => collected.clone(),
        None => niceeval::__workspace::eval::checks_of(t),
    };
    if let Some((group, index)) = &case.select_best {
        // promptfoo: select-best decides the test besides the other items (threshold or not).
        let (passed, label) = group.verdict(*index, &t.judge(), &vars).await;
        t.check(
            output_text.as_str(),
            niceeval::expect::satisfies(move |_: &str| passed, label),
        );
    }
    for (graded, own) in case.graded.iter().zip(graded_outputs) {
        if graded.kind == GradedKind::SelectBest {
            continue;
        }
        // The item's own transform made what it grades; else the case's output.
        let output_text = match own {
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => output_text.clone(),
        };
        if let GradedKind::Similar { metric, inverse } = graded.kind {
            let check = graders::Similar {
                model: graded
                    .judge
                    .clone()
                    .or_else(|| case.embedding.clone())
                    .unwrap_or_else(graders::default_embedding),
                expected: graded.expected.clone(),
                output: output_text.clone(),
                threshold: graded.threshold.unwrap_or(0.75),
                metric,
                inverse,
                timeout: niceeval::__workspace::provider::DEFAULT_TIMEOUT,
            };
            register(&record, check, graded);
            continue;
        }
        if let (GradedKind::Rag(metric), Some(item)) = (graded.kind, &graded.rag) {
            let check = rag_check(graded, item, metric, &output_text, &output, &vars, case)
                .await
                .map_err(|why| CaseError::Metric {
                    kind: metric.name(),
                    why,
                })?;
            register(&record, check, graded);
            continue;
        }
        if graded.kind == GradedKind::GEval {
            let check = geval::GEval {
                criteria: graded.expected.clone(),
                input: case.prompt.clone(),
                output: output_text.clone(),
                threshold: graded.threshold.unwrap_or(geval::DEFAULT_THRESHOLD),
                inverse: graded.inverse,
                grader: graded
                    .judge
                    .clone()
                    .or_else(|| case.judge.clone())
                    .unwrap_or_else(default_judge),
                timeout: niceeval::__workspace::provider::DEFAULT_TIMEOUT,
            };
            register(&record, check, graded);
            continue;
        }
        // The item's verdict as promptfoo reaches it (`graders::Decided`); `not-llm-rubric`
        // turns it over.
        let target: Arc<dyn Defer> = Arc::new(graders::Deciding {
            record: record.clone(),
            threshold: graded.threshold.unwrap_or(0.5),
            inverse: graded.inverse && graded.kind == GradedKind::Rubric,
        });
        let judge = t.judge().with_record(target);
        let scoped = match graded.kind {
            GradedKind::Factuality => judge.factuality_promptfoo(&graded.value),
            GradedKind::ClosedQa => judge.closed_qa(&graded.value),
            _ => judge.rubric(&graded.value),
        }
        .on(&output_text)
        .input(&case.prompt)
        .unreadable_answer_fails();
        let scoped = match GradedInput::rubric_prompt(graded.prompt.as_ref()) {
            // promptfoo's `rubricPrompt`, with the values its matcher of each kind gives.
            Some(template) => {
                let named: Vec<(&str, &str)> = match graded.kind {
                    GradedKind::Factuality => vec![
                        ("input", &case.prompt),
                        ("ideal", &graded.value),
                        ("completion", &output_text),
                    ],
                    GradedKind::ClosedQa => vec![
                        ("input", &case.prompt),
                        ("criteria", &graded.value),
                        ("completion", &output_text),
                    ],
                    _ => vec![("output", &output_text), ("rubric", &graded.value)],
                };
                let request = graders::grading_request(template, &named, &vars)
                    .map_err(CaseError::RubricPrompt)?;
                scoped.request(request)
            }
            None => scoped,
        };
        let scoped = match &graded.judge {
            Some(j) => scoped.model(j.model.clone()),
            None => scoped,
        };
        // A graded item passes or fails its test, as in promptfoo (decided in `Decided`: at its
        // threshold, else at a score of 0.5).
        let scoped = scoped.gate();
        let scoped = match graded.weight {
            Some(w) => scoped.weight(w),
            None => scoped,
        };
        match &graded.metric {
            Some(m) => drop(scoped.metric(m.clone())),
            None => drop(scoped),
        }
    }
    if let (Some(threshold), Some(collected)) = (case.threshold, &gathered) {
        drop(
            graders::Aggregate::test_threshold(threshold, done, collected.take())
                .register(niceeval::__workspace::eval::checks_of(t)),
        );
    }
    Ok(())
}

/// Registers a graded item's own check (`similar`, a metric, `g-eval`) with the item's
/// `weight` and `metric`.
fn register<C: niceeval::__workspace::scope::Check>(
    record: &Arc<dyn Defer>,
    check: C,
    graded: &Graded,
) {
    let scoped = niceeval::__workspace::scope::register(record.clone(), check);
    let scoped = match graded.weight {
        Some(w) => scoped.weight(w),
        None => scoped,
    };
    match &graded.metric {
        Some(m) => drop(scoped.metric(m.clone())),
        None => drop(scoped),
    }
}

/// A retrieval or conversation metric's check: its context (the `context` var, else the
/// item's `contextTransform` of the output, else for `context-recall` the prompt), its
/// `query` var and conversation, and its graders (the item's, the test's, promptfoo's
/// defaults).
async fn rag_check(
    graded: &Graded,
    item: &RagItem,
    metric: rag::Metric,
    output_text: &str,
    output: &Value,
    vars: &Map<String, Value>,
    case: &SuiteCase,
) -> Result<rag::RagCheck, rag::RagError> {
    let mut context = match vars.get("context") {
        Some(v @ (Value::String(_) | Value::Array(_))) => Some(rag::Context::from_value(v)?),
        _ => None,
    };
    if let Some(code) = &item.context_transform {
        let made = node::transform(code, output, vars, &case.prompt, &case.base_dir)
            .await
            .map_err(|e| rag::RagError::Transform(e.to_string()))?;
        context = Some(rag::Context::from_value(&made)?);
    }
    if context.is_none() && metric == rag::Metric::ContextRecall {
        context = Some(rag::Context::Text(case.prompt.clone()));
    }
    if context.is_none() && metric.needs_context() {
        return Err(rag::RagError::Missing(metric.name()));
    }
    let query = match vars.get("query") {
        Some(Value::String(q)) => Some(q.clone()),
        _ if metric == rag::Metric::AnswerRelevance => Some(case.prompt.clone()),
        _ => None,
    };
    let conversation = match metric {
        rag::Metric::ConversationRelevance => rag::conversation(vars, &case.prompt, output_text)?,
        _ => Vec::new(),
    };
    Ok(rag::RagCheck {
        metric,
        inverse: graded.inverse,
        threshold: graded.threshold.unwrap_or(0.5),
        value: (!graded.value.is_empty()).then(|| graded.value.clone()),
        query,
        context,
        output: output_text.to_string(),
        conversation,
        window: item.window,
        text: graded
            .judge
            .clone()
            .or_else(|| case.judge.clone())
            .unwrap_or_else(default_judge),
        embedding: item
            .embedding
            .clone()
            .or_else(|| case.embedding.clone())
            .unwrap_or_else(graders::default_embedding),
        rubric_prompt: GradedInput::rubric_prompt(graded.prompt.as_ref()).map(str::to_string),
        vars: vars.clone(),
        timeout: niceeval::__workspace::provider::DEFAULT_TIMEOUT,
    })
}

/// An item's own `transform` of the output: what it makes, or the case's error when it
/// fails or makes nothing (promptfoo errors the test then).
async fn item_transform(
    code: &str,
    kind: &str,
    output: &Value,
    vars: &Map<String, Value>,
    case: &SuiteCase,
) -> Result<Value, Error> {
    let kind = kind.to_string();
    match node::transform(code, output, vars, &case.prompt, &case.base_dir).await {
        Ok(Value::Null) => Err(CaseError::ItemTransform {
            kind,
            why: TransformFailure::NoValue,
        }
        .into()),
        Ok(value) => Ok(value),
        Err(e) => Err(CaseError::ItemTransform {
            kind,
            why: TransformFailure::Failed(e),
        }
        .into()),
    }
}

/// promptfoo's default grader: OpenAI's `gpt-4.1-mini`, reached as its OpenAI providers are.
fn default_judge() -> JudgeSpec {
    JudgeSpec {
        model: "openai/gpt-4.1-mini".into(),
        base_url: agents::openai_base_url_from_env(),
        key_env: None,
        unusable: None,
    }
}

/// A `transform` that is JavaScript rather than a JSONPath.
pub(crate) fn is_js_transform(item: &AssertSpec) -> bool {
    item.transform.as_deref().is_some_and(|t| {
        let t = t.trim();
        !(t.starts_with('$') || t.starts_with("json_path:"))
    })
}

/// Resolves a `file://` reference against `base`.
pub(crate) fn file_path(base: &Path, reference: &str) -> PathBuf {
    let path = reference.strip_prefix("file://").unwrap_or(reference);
    base.join(path)
}

/// A location in `text` for `path`: `found` (looked up by the caller, see
/// `promptfoo::Doc::position`), else the first line naming the last key.
pub(crate) fn at(
    file: &Path,
    text: &str,
    path: &[niceeval_dataset::positions::Step<'_>],
    found: Option<(usize, usize)>,
    message: String,
) -> SuiteFileError {
    let found = found.or_else(|| {
        let key = path.iter().rev().find_map(|s| match s {
            niceeval_dataset::positions::Step::Key(k) => Some(*k),
            niceeval_dataset::positions::Step::Index(_) => None,
        })?;
        text.lines().enumerate().find_map(|(i, line)| {
            let trimmed = line.trim_start().trim_start_matches("- ");
            let col = line.len() - trimmed.len() + 1;
            (trimmed.starts_with(&format!("{key}:"))).then_some((i + 1, col))
        })
    });
    match found {
        Some((line, column)) => SuiteFileError::At {
            file: file.display().to_string(),
            line,
            column,
            message,
        },
        None => SuiteFileError::File {
            file: file.display().to_string(),
            message,
        },
    }
}

/// Why a data file a suite names (a schema, a grading prompt, a provider `config` value)
/// cannot be read; the reader's error is kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DataFileError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `.json` file that is no JSON.
    #[error("{} is not JSON: {source}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// Another file, read as YAML, that is no YAML (located).
    #[error(transparent)]
    Yaml(#[from] SuiteFileError),
}

/// A data file's value: a `.json` file parsed as JSON, any other as YAML (located errors, as
/// the suite file's own). The one reader of the schema, grading-prompt and provider-config
/// files; each caller decides first which extensions it takes as data.
pub(crate) fn read_data(path: &Path) -> Result<Value, DataFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataFileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).map_err(|source| DataFileError::Json {
            path: path.to_path_buf(),
            source,
        })
    } else {
        Ok(parse_yaml(path, &text)?)
    }
}

/// Parses YAML (anchors, aliases and `<<` merges applied) into JSON values: straight from
/// the parser's events ([`stream`]) when it can, else with `yaml_serde`, whose messages name
/// what is wrong.
pub(crate) fn parse_yaml(path: &Path, text: &str) -> Result<Value, SuiteFileError> {
    match stream::read(text, false) {
        Some(read) => Ok(read.value),
        None => parse_yaml_serde(path, text),
    }
}

/// [`parse_yaml`] with `yaml_serde` alone.
pub(crate) fn parse_yaml_serde(path: &Path, text: &str) -> Result<Value, SuiteFileError> {
    let located = |e: yaml_serde::Error| match e.location() {
        Some(at) => SuiteFileError::At {
            file: path.display().to_string(),
            line: at.line(),
            column: at.column(),
            message: format!("not valid YAML: {e}"),
        },
        None => SuiteFileError::File {
            file: path.display().to_string(),
            message: format!("not valid YAML: {e}"),
        },
    };
    let mut value: yaml_serde::Value = yaml_serde::from_str(text).map_err(located)?;
    value.apply_merge().map_err(located)?;
    serde_json::to_value(&value).map_err(|e| SuiteFileError::File {
        file: path.display().to_string(),
        message: format!("cannot read the YAML as data: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trajectory is graded over the events the run holds when grading starts (after the
    /// body), with the calls it saw in its reason.
    #[test]
    fn a_trajectory_is_a_scoped_check_over_the_runs_calls() {
        use niceeval::scope::{RunView, ScopedCheck as _};
        let check = TrajectoryCheck(Trajectory {
            mode: TrajectoryMode::InOrder,
            expected: ["search", "answer"]
                .into_iter()
                .map(|tool| ExpectedCall {
                    tool: tool.to_string(),
                    args: None,
                    args_match: None,
                    max_duration_ms: None,
                })
                .collect(),
            minimums: Vec::new(),
            args_match: ArgsMatch::Exact,
        });
        assert_eq!(
            check.describe(),
            r#"tool_trajectory in_order ["search", "answer"]"#
        );
        let call = |name: &str| niceeval::Event::ActionCalled {
            call_id: name.into(),
            name: name.into(),
            input: serde_json::json!({}),
        };
        let config = niceeval::__workspace::config::Config::default();
        let grade = |events: &[niceeval::Event]| {
            check.evaluate(&RunView {
                events,
                config: &config,
            })
        };
        // AgentV's score: one of the two expected calls (0.5), under its 0.8 to pass.
        let only_search = grade(&[call("search")]);
        assert_eq!(only_search.score, 0.5, "{}", only_search.reason);
        assert_eq!(only_search.verdict, Some(false));
        assert!(
            only_search.reason.ends_with("tools called: search"),
            "{}",
            only_search.reason
        );
        // The late call (a span exported after the answer) is in the events graded.
        let both = grade(&[call("search"), call("answer")]);
        assert_eq!(both.score, 1.0, "{}", both.reason);
        assert_eq!(both.verdict, Some(true));
        assert!(
            both.reason.ends_with("tools called: search, answer"),
            "{}",
            both.reason
        );
        assert_eq!(
            grade(&[]).reason.rsplit("; ").next(),
            Some("no tool called")
        );
    }

    #[test]
    fn a_case_names_its_file_relative_to_the_crate_as_a_rust_eval_does() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let text = "prompts: ['Say {{x}}']\nproviders: [echo]\ntests:\n  - vars: {x: hi}\n";
        std::fs::create_dir_all(dir.path().join("suites")).expect("writable");
        let file = dir.path().join("suites/promptfooconfig.yaml");
        std::fs::write(&file, text).expect("writable");
        let (defs, _) = definitions(&file, "suite", dir.path()).expect("read");
        assert_eq!(defs[0].file, "suites/promptfooconfig.yaml");
        // The engine finds it again from the crate's directory.
        assert!(Path::new(defs[0].manifest_dir).join(defs[0].file).is_file());
        // A file outside the crate's directory keeps the path it was given.
        let elsewhere = tempfile::tempdir().expect("a temporary directory");
        let (defs, _) = definitions(&file, "suite", elsewhere.path()).expect("read");
        assert_eq!(defs[0].file, file.display().to_string());
    }

    #[test]
    fn packed_items_come_back_as_they_were_written() {
        let items: Vec<AssertSpec> = serde_json::from_value(serde_json::json!([
            {"type": "icontains", "value": "topic 3", "weight": 2, "metric": "m"},
            {"type": "assert-set", "threshold": 0.5, "assert": [
                {"type": "regex", "value": "^A"},
                {"type": "script", "command": ["python3", "g.py"], "cwd": "x"}
            ]}
        ]))
        .unwrap();
        let packed = Packed::new(&items);
        let back = packed.get().unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&items).unwrap()
        );
        // An extra key of a script grader survives the trip.
        assert_eq!(
            back[1].assert.as_ref().unwrap()[1].extra.get("cwd"),
            Some(&serde_json::json!("x"))
        );
        let vars: Map<String, Value> = serde_json::from_str(r#"{"a": [1, {"b": null}]}"#).unwrap();
        assert_eq!(Packed::new(&vars).get().unwrap(), vars);
        // Ordered: the written order first, then any other key by name.
        let order = vec!["zeta".to_string(), "alpha".to_string()];
        let mut map = Map::new();
        for k in ["alpha", "mid", "zeta"] {
            map.insert(k.into(), Value::from(k));
        }
        let packed = Packed::ordered(&map, &order);
        assert_eq!(
            packed.text(),
            r#"{"zeta":"zeta","alpha":"alpha","mid":"mid"}"#
        );
        assert_eq!(packed.get().unwrap(), map);
    }
}

/// Defines `main` for a `harness = false` test target that runs suite files beside its
/// `#[eval]` functions: each path, relative to the crate's directory, is checked when the crate
/// compiles (a file that is not there is an error at its path), and each file's cases run
/// named `<file stem>::<test description or number>`, with the command line of
/// `niceeval::main!()`. `reporters = [..]` adds reporters of your own, as there.
///
/// ```ignore
/// niceeval_suites::main!(suites = ["evals/promptfooconfig.yaml", "evals/EVAL.yaml"]);
/// ```
#[macro_export]
macro_rules! main {
    (suites = $($rest:tt)*) => {
        $crate::__private::suites_main!($crate; $($rest)*);
    };
}

/// The door for the code `main!` expands to. Not public API: may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::runner::main_with_suites;
    pub use niceeval::reporter::Reporter;
    pub use niceeval_macros::__suites_main as suites_main;
}
