//! An AgentV test's verdict, reached as AgentV's orchestrator reaches it: every grader gives a
//! score in [0, 1]; the test's score is their weighted mean (a `negate`d grader counts
//! 1 − score), 0 when a `required` grader scores under its least score; the test passes when
//! its score reaches its threshold (0.8 unless `execution.threshold` says otherwise), whichever
//! graders fail. A rubric grader asks the judge each item apart and scores the weighted share
//! of items satisfied (a required item unmet fails the grader, not the test); a `composite`
//! aggregates its members the same way.

use std::sync::Arc;

use serde_json::Value;

use super::AgentvCase;
use super::field_accuracy::FieldAccuracyCheck;
use super::graders::{CompositeRule, Grader, GraderKind, Line, Metrics, PASS_AT, Template};
use super::judge::{Asked, JudgeCheck, Prompt, layout};
use super::skill_trigger::SkillTriggerCheck;
use crate::graders::{Aggregate, Collect, Combine, Counting, Deciding, Skips};
use crate::{SuiteCase, TrajectoryCheck};
use niceeval::__workspace::scope::{self as deferred, Defer};
use niceeval::scope::{RunView, ScopedCheck};
use niceeval::spec::{AssertSpec, SpecContext};
use niceeval::{Chain as _, Checkable as _};
use niceeval::{Eval, Grade};

/// A judged rubric line is satisfied at this score of niceeval's judge (0 to 1).
const SATISFIED_AT: f64 = 0.5;

/// Registers the test's score over its graders on `t`.
pub(crate) fn grade(
    t: &mut Eval,
    case: &SuiteCase,
    av: &AgentvCase,
    output: &str,
    context: &SpecContext,
) {
    let aggregate = scored(
        t,
        case,
        av,
        output,
        context,
        "AgentV score (weighted mean of its graders)",
    );
    drop(aggregate.register(niceeval::__workspace::eval::checks_of(t)));
}

/// The score of one answer over the test's graders: their weighted mean (a `negate`d grader
/// counting 1 − score), 0 under a `required` grader's least score, an execution error when a
/// grader is skipped.
fn scored(
    t: &mut Eval,
    case: &SuiteCase,
    av: &AgentvCase,
    output: &str,
    context: &SpecContext,
    name: &str,
) -> Aggregate {
    let record = Arc::new(Collect::default());
    let mut gates = Vec::new();
    let mut flips = Vec::new();
    for g in &av.graders {
        register(t, case, av, g, output, context, record.clone(), g.weight);
        gates.push(g.required.map(|r| r.min(av.threshold)));
        flips.push(g.negate);
    }
    Aggregate {
        gates,
        gate_zeroes: true,
        skips: Skips::Fail,
        flips,
        ..Aggregate::of(
            av.threshold,
            record.take(),
            format!("{name} ≥ {}", av.threshold),
        )
    }
}

/// A test with `execution.trials`: the test run `count` times, each trial in a new session
/// (the first was sent as the case's prompt, its answer `first`) and scored over the test's
/// graders; the test's score is the trials' made one by the strategy (`pass_at_k`: the best,
/// `mean`: their mean, `confidence_interval`: the lower bound of their mean's 95% interval).
/// A trial the target fails scores 0. Every trial sees the run's tool calls so far.
pub(crate) async fn trials(
    t: &mut Eval,
    case: &SuiteCase,
    av: &AgentvCase,
    input: &str,
    first: Result<(), String>,
    context: &SpecContext,
    trials: &super::graders::Trials,
) {
    let collected = Arc::new(Collect::default());
    let mut answer = first.map(|()| t.reply().to_string());
    for n in 1..=trials.count {
        if n > 1 {
            t.new_session();
            answer = match t.send(input.to_string()).await {
                Ok(_) => Ok(t.reply().to_string()),
                Err(e) => Err(e.to_string()),
            };
        }
        let name = format!("trial {n} of {}", trials.count);
        match &answer {
            Ok(text) => {
                let mut context = context.clone();
                context.latency_ms = Some(t.latency_ms());
                let aggregate = scored(t, case, av, text, &context, &name);
                drop(aggregate.register(collected.clone()));
            }
            Err(why) => {
                let fixed = Fixed {
                    name,
                    score: 0.0,
                    reason: format!("the target failed this trial: {why}"),
                };
                drop(deferred::register(collected.clone(), fixed));
            }
        }
    }
    let aggregate = Aggregate {
        combine: trials.strategy,
        one_by_one: true,
        ..Aggregate::of(
            av.threshold,
            collected.take(),
            format!("AgentV score ({} trials) ≥ {}", trials.count, av.threshold),
        )
    };
    drop(aggregate.register(niceeval::__workspace::eval::checks_of(t)));
}

/// A conversation test (`mode: conversation`): its later turns sent one after another (the
/// first was sent as the case's prompt, with `first` its outcome), each turn scored by its
/// graders (1 without any; 0 when the target failed it), the test's own graders scoring the
/// whole conversation once; the test's score is the turns' and the conversation's scores
/// made one by `aggregation`.
pub(crate) async fn converse(
    t: &mut Eval,
    case: &SuiteCase,
    av: &AgentvCase,
    first: Result<(), String>,
    context: &SpecContext,
) {
    let Some(first_turn) = av.first_turn.clone() else {
        return;
    };
    let mut turns = vec![(first_turn, first.map(|()| t.reply().to_string()))];
    for turn in &av.turns {
        let sent = match t.send(turn.input.clone()).await {
            Ok(_) => Ok(t.reply().to_string()),
            Err(e) => Err(e.to_string()),
        };
        turns.push((turn.clone(), sent));
    }
    let record = Arc::new(Collect::default());
    let mut transcript = Vec::new();
    for (i, (turn, reply)) in turns.iter().enumerate() {
        let name = format!("turn-{}", i + 1);
        transcript.push(format!("user: {}", turn.input));
        let text = match reply {
            Err(why) => {
                let fixed = Fixed {
                    name,
                    score: 0.0,
                    reason: format!("the target failed this turn: {why}"),
                };
                drop(deferred::register(record.clone(), fixed));
                continue;
            }
            Ok(text) => text,
        };
        transcript.push(format!("assistant: {text}"));
        if turn.graders.is_empty() {
            let fixed = Fixed {
                name,
                score: 1.0,
                reason: "a turn without graders".into(),
            };
            drop(deferred::register(record.clone(), fixed));
            continue;
        }
        // The turn graded as a test of its own: its expected output, the conversation so
        // far as its question.
        let mut turn_case = case.clone();
        turn_case.expected_output = turn.expected_output.clone();
        turn_case.prompt = transcript.join("\n");
        let turn_av = AgentvCase {
            graders: turn.graders.clone(),
            ..av.clone()
        };
        let aggregate = scored(t, &turn_case, &turn_av, text, context, &name);
        drop(aggregate.register(record.clone()));
    }
    if !av.graders.is_empty() {
        let last = turns
            .iter()
            .rev()
            .find_map(|(_, r)| r.as_ref().ok())
            .cloned()
            .unwrap_or_default();
        let mut whole = case.clone();
        whole.prompt = transcript.join("\n");
        let aggregate = scored(t, &whole, av, &last, context, "conversation");
        drop(aggregate.register(record.clone()));
    }
    let aggregate = Aggregate {
        skips: Skips::Fail,
        combine: av.aggregation,
        ..Aggregate::of(
            av.threshold,
            record.take(),
            format!(
                "AgentV score (the conversation's turns, {}) ≥ {}",
                match av.aggregation {
                    Combine::Mean => "their mean",
                    Combine::Min => "the lowest",
                    Combine::Max => "the highest",
                    Combine::LowerBound95 => "the lower bound of their mean",
                },
                av.threshold
            ),
        )
    };
    drop(aggregate.register(niceeval::__workspace::eval::checks_of(t)));
}

/// A score known when the check is registered (a conversation's turn without graders, or
/// one the target failed).
struct Fixed {
    name: String,
    score: f64,
    reason: String,
}

impl ScopedCheck for Fixed {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn evaluate(&self, _run: &RunView<'_>) -> Grade {
        Grade::score(self.score, self.reason.clone()).with_verdict(self.score >= PASS_AT)
    }
}

/// Registers one grader's check on `record`, weighing `weight`.
#[allow(clippy::too_many_arguments)]
fn register(
    t: &mut Eval,
    case: &SuiteCase,
    av: &AgentvCase,
    g: &Grader,
    output: &str,
    context: &SpecContext,
    record: Arc<Collect>,
    weight: f64,
) {
    let target: Arc<dyn Defer> = record.clone();
    match &g.kind {
        GraderKind::Spec(spec) => {
            let check = SpecCheck {
                name: g.name.clone(),
                spec: spec.clone(),
                output: output.to_string(),
                context: context.clone(),
            };
            drop(deferred::register(target, check).weight(weight));
        }
        GraderKind::Trajectory(trajectory) => {
            drop(deferred::register(target, TrajectoryCheck(trajectory.clone())).weight(weight));
        }
        GraderKind::Judge { template } if g.judge.is_some() || av.judge.is_some() => {
            let prompt = match template {
                Some(Template::Text(template)) => {
                    Prompt::Ready(fill(template, &variables(case, av, output)))
                }
                Some(Template::Script {
                    command,
                    cwd,
                    config,
                }) => Prompt::Script {
                    command: command.clone(),
                    cwd: cwd.clone(),
                    payload: prompt_payload(case, av, output, context, config.as_ref()),
                },
                None => Prompt::Ready(sections(case, av, output, &[], false)),
            };
            ask_judge(av, g, prompt, Asked::Score, target, weight);
        }
        GraderKind::Rubrics { lines, scored } if g.judge.is_some() || av.judge.is_some() => {
            let prompt = Prompt::Ready(sections(case, av, output, lines, *scored));
            let asked = if *scored {
                Asked::Scored(lines.clone())
            } else {
                Asked::Items(lines.clone())
            };
            ask_judge(av, g, prompt, asked, target, weight);
        }
        GraderKind::Judge { template } => {
            let text = match template {
                Some(Template::Text(template)) => fill(template, &variables(case, av, output)),
                // A prompt script needs a judge the file names (niceeval's own judge asks
                // with its own prompt).
                Some(Template::Script { .. }) | None => grading_context(case, None),
            };
            let deciding: Arc<dyn Defer> = Arc::new(Deciding {
                record: target,
                threshold: PASS_AT,
                inverse: false,
            });
            drop(
                t.judge()
                    .with_record(deciding)
                    .rubric(text)
                    .on(output)
                    .input(&case.prompt)
                    .unreadable_answer_fails()
                    .gate()
                    .weight(weight),
            );
        }
        GraderKind::Rubrics { lines, scored } => {
            let items = Arc::new(Collect::default());
            for line in lines {
                judge_line(t, case, line, *scored, output, items.clone());
            }
            let aggregate = Aggregate {
                counting: if *scored {
                    Counting::Scores
                } else {
                    Counting::Passes
                },
                gates: lines.iter().map(|l| l.min).collect(),
                ..Aggregate::of(
                    PASS_AT,
                    items.take(),
                    format!("{} ({} rubric items)", g.name, lines.len()),
                )
            };
            drop(aggregate.register(target).weight(weight));
        }
        GraderKind::Metrics(limits) => {
            let check = MetricsCheck {
                name: g.name.clone(),
                limits: limits.clone(),
                context: context.clone(),
            };
            drop(deferred::register(target, check).weight(weight));
        }
        GraderKind::SkillTrigger(spec) => {
            let check = SkillTriggerCheck {
                name: g.name.clone(),
                spec: spec.clone(),
            };
            drop(deferred::register(target, check).weight(weight));
        }
        GraderKind::FieldAccuracy(spec) => {
            let check = FieldAccuracyCheck {
                name: g.name.clone(),
                spec: spec.clone(),
                output: output.to_string(),
                expected: case.agentv.as_ref().and_then(|av| av.expected.clone()),
            };
            drop(deferred::register(target, check).weight(weight));
        }
        GraderKind::Composite { members, rule } => {
            let inner = Arc::new(Collect::default());
            for m in members {
                let w = match rule {
                    CompositeRule::WeightedAverage(weights) => {
                        weights.get(&m.name).copied().unwrap_or(1.0)
                    }
                    CompositeRule::Threshold(_) => 1.0,
                };
                register(t, case, av, m, output, context, inner.clone(), w);
            }
            let (threshold, counting) = match rule {
                CompositeRule::WeightedAverage(_) => (PASS_AT, Counting::Scores),
                CompositeRule::Threshold(x) => (*x, Counting::Passes),
            };
            let aggregate = Aggregate {
                counting,
                skips: Skips::Exclude,
                flips: members.iter().map(|m| m.negate).collect(),
                ..Aggregate::of(
                    threshold,
                    inner.take(),
                    format!("{} (composite of {})", g.name, members.len()),
                )
            };
            drop(aggregate.register(target).weight(weight));
        }
    }
}

/// One rubric item asked of the judge: satisfied at half marks (a checklist line), or its
/// score (a criterion scored by bands).
fn judge_line(
    t: &mut Eval,
    case: &SuiteCase,
    line: &Line,
    scored: bool,
    output: &str,
    items: Arc<Collect>,
) {
    let deciding: Arc<dyn Defer> = Arc::new(Deciding {
        record: items,
        // AgentV passes a scored criterion at 7 of 10.
        threshold: if scored { 0.7 } else { SATISFIED_AT },
        inverse: false,
    });
    drop(
        t.judge()
            .with_record(deciding)
            .rubric(grading_context(
                case,
                Some(&format!("[{}] {}", line.id, line.text)),
            ))
            .on(output)
            .input(&case.prompt)
            .unreadable_answer_fails()
            .gate()
            .weight(line.weight),
    );
}

/// A grader asked of the judge the file names, in AgentV's protocol.
fn ask_judge(
    av: &AgentvCase,
    g: &Grader,
    prompt: Prompt,
    asked: Asked,
    target: Arc<dyn Defer>,
    weight: f64,
) {
    // The grader's own `target`, else the test's judge.
    let Some(judge) = g.judge.clone().or_else(|| av.judge.clone()) else {
        return;
    };
    let check = JudgeCheck {
        judge,
        name: g.name.clone(),
        prompt,
        asked,
    };
    drop(deferred::register(target, check).weight(weight));
}

/// The grading prompt, in AgentV's sections.
fn sections(
    case: &SuiteCase,
    av: &AgentvCase,
    output: &str,
    items: &[Line],
    scored: bool,
) -> String {
    let values = variables(case, av, output);
    let value = |name: &str| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    };
    layout(
        "Grade the answer to the question below against the criteria; a reference answer, when given, shows what a good answer holds.",
        &[
            ("criteria", value("criteria")),
            ("question", value("input")),
            ("reference_answer", value("expected_output")),
            ("answer", output),
        ],
        items,
        scored,
    )
}

/// What the judge is asked, besides the answer and the question niceeval's judge sends:
/// `item` (a rubric item), the test's criteria and its expected output (AgentV's grader shows
/// its judge the same).
fn grading_context(case: &SuiteCase, item: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(item) = item {
        parts.push(format!("Does the answer satisfy this requirement? {item}"));
    }
    match case.criteria.as_deref().filter(|c| !c.trim().is_empty()) {
        Some(criteria) if item.is_none() => {
            parts.push(format!(
                "Grade how well the answer meets the task's criteria: {criteria}"
            ));
        }
        Some(criteria) => parts.push(format!("The task's criteria: {criteria}")),
        None if item.is_none() => {
            parts.push("Grade how well the answer accomplishes the task.".to_string());
        }
        None => {}
    }
    if let Some(expected) = case
        .expected_output
        .as_deref()
        .filter(|e| !e.trim().is_empty())
    {
        parts.push(format!("A reference answer to compare with: {expected}"));
    }
    parts.join("\n\n")
}

/// What a prompt script reads on stdin (AgentV's payload, snake_case): the criteria, the
/// expected output, the answer, the input messages, the transcript, the metadata, the
/// workspace and the script's `config`.
fn prompt_payload(
    case: &SuiteCase,
    av: &AgentvCase,
    output: &str,
    context: &SpecContext,
    config: Option<&Value>,
) -> String {
    let input: Vec<Value> = av
        .input
        .iter()
        .map(|(role, text)| serde_json::json!({"role": role, "content": text}))
        .collect();
    serde_json::json!({
        "criteria": case.criteria,
        "expected_output": case.expected_output.as_ref().map(|e| vec![serde_json::json!({"role": "assistant", "content": e})]),
        "output": output,
        "answer": output,
        "messages": context.messages,
        "input_files": av.input_files,
        "input": input,
        "metadata": av.metadata,
        "trace": Value::Null,
        "file_changes": Value::Null,
        "workspace_path": context.workspace_path,
        "config": config,
    })
    .to_string()
}

/// The values an `llm-grader`'s prompt template names (AgentV's template variables).
fn variables(case: &SuiteCase, av: &AgentvCase, output: &str) -> Vec<(&'static str, String)> {
    let input = match av.input.as_slice() {
        [(_, text)] => text.clone(),
        turns => turns
            .iter()
            .map(|(role, text)| format!("{role}: {text}"))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let metadata = av.metadata.clone().unwrap_or(Value::Null);
    let rubrics: Vec<Value> = av
        .graders
        .iter()
        .filter_map(|g| match &g.kind {
            GraderKind::Rubrics { lines, .. } => Some(lines),
            _ => None,
        })
        .flatten()
        .map(|l| serde_json::json!({"id": l.id, "outcome": l.text, "weight": l.weight}))
        .collect();
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    vec![
        ("input", input),
        ("output", output.to_string()),
        (
            "expected_output",
            case.expected_output.clone().unwrap_or_default(),
        ),
        ("criteria", case.criteria.clone().unwrap_or_default()),
        ("metadata", pretty(&metadata)),
        ("metadata_json", metadata.to_string()),
        ("rubrics", pretty(&Value::Array(rubrics.clone()))),
        ("rubrics_json", Value::Array(rubrics).to_string()),
        ("file_changes", String::new()),
        ("tool_calls", String::new()),
    ]
}

/// `{{ name }}` of a known variable replaced by its value; anything else stays as written.
fn fill(template: &str, values: &[(&str, String)]) -> String {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        regex::Regex::new(r"\{\{\s*([a-zA-Z0-9_]+)\s*\}\}").expect("a valid pattern")
    });
    pattern
        .replace_all(template, |c: &regex::Captures<'_>| {
            values
                .iter()
                .find(|(name, _)| *name == &c[1])
                .map_or_else(|| c[0].to_string(), |(_, v)| v.clone())
        })
        .into_owned()
}

/// A deterministic or script grader, checked when the test's score is graded.
struct SpecCheck {
    name: String,
    spec: AssertSpec,
    output: String,
    context: SpecContext,
}

impl ScopedCheck for SpecCheck {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn evaluate(&self, _run: &RunView<'_>) -> Grade {
        // AgentV compares `equals`, `starts-with` and `ends-with` on the trimmed output.
        let trimmed = matches!(
            self.spec.kind.trim_start_matches("not-"),
            "equals" | "starts-with" | "ends-with"
        );
        let output = Value::String(if trimmed {
            self.output.trim().to_string()
        } else {
            self.output.clone()
        });
        match niceeval::spec::evaluate_subject(
            std::slice::from_ref(&self.spec),
            &output.subject(),
            &self.context,
        ) {
            Ok(outcome) => match outcome.results.into_iter().next() {
                // As AgentV: a grader that fails to run scores 0.
                Some(r) if r.error.is_some() => Grade::score(
                    0.0,
                    format!("the grader failed: {}", r.error.unwrap_or_default()),
                )
                .with_verdict(false),
                Some(r) => Grade::score(r.score, r.reason)
                    .with_children(r.children)
                    .with_verdict(r.passed),
                None => Grade::score(0.0, "the grader gave no result").with_verdict(false),
            },
            Err(e) => Grade::score(0.0, format!("the grader failed: {e}")).with_verdict(false),
        }
    }
}

/// `execution-metrics` / `token-usage`: each limit given is one check; the score is the share
/// that hold, passing at 0.8 (AgentV's rule).
struct MetricsCheck {
    name: String,
    limits: Metrics,
    context: SpecContext,
}

/// The tools AgentV counts as exploring (`DEFAULT_EXPLORATION_TOOLS`).
const EXPLORATION_TOOLS: &[&str] = &[
    "read",
    "grep",
    "glob",
    "search",
    "list",
    "Read",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
];

impl MetricsCheck {
    /// Each limit's check: what was measured and whether it holds.
    fn checks(&self) -> Vec<(String, bool)> {
        let l = &self.limits;
        let c = &self.context;
        let summary = c.trace_summary.as_ref();
        let mut out = Vec::new();
        let mut limit = |name: &str, actual: Option<f64>, max: Option<f64>| {
            if let Some(max) = max {
                out.push(match actual {
                    None => (format!("{name}: not available"), false),
                    Some(a) if a <= max => (format!("{name} {a} <= {max} max"), true),
                    Some(a) => (format!("{name} {a} > {max} max"), false),
                });
            }
        };
        limit(
            "tool calls",
            summary.map(|s| s.event_count as f64),
            l.max_tool_calls,
        );
        limit(
            "LLM calls",
            summary.map(|s| s.llm_call_count as f64),
            l.max_llm_calls,
        );
        let tokens = c.token_usage;
        limit(
            "total tokens",
            tokens.map(|u| (u.input + u.output) as f64),
            l.max_tokens,
        );
        limit("input tokens", tokens.map(|u| u.input as f64), l.max_input);
        limit(
            "output tokens",
            tokens.map(|u| u.output as f64),
            l.max_output,
        );
        limit("cost (USD)", c.cost_usd, l.max_cost_usd);
        limit("duration (ms)", c.latency_ms, l.max_duration_ms);
        if let Some(target) = l.target_exploration_ratio {
            let ratio = summary.filter(|s| s.event_count > 0).map(|s| {
                let exploring: u64 = EXPLORATION_TOOLS
                    .iter()
                    .filter_map(|t| s.tool_calls.get(*t))
                    .sum();
                exploring as f64 / s.event_count as f64
            });
            out.push(match ratio {
                None => ("exploration ratio: no tool calls".into(), false),
                Some(r) => (
                    format!(
                        "exploration ratio {r:.2} (target {target} ± {})",
                        l.exploration_tolerance
                    ),
                    (r - target).abs() <= l.exploration_tolerance,
                ),
            });
        }
        out
    }
}

impl ScopedCheck for MetricsCheck {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn evaluate(&self, _run: &RunView<'_>) -> Grade {
        let checks = self.checks();
        let held = checks.iter().filter(|(_, ok)| *ok).count();
        let score = if checks.is_empty() {
            0.0
        } else {
            held as f64 / checks.len() as f64
        };
        let reason = checks
            .iter()
            .map(|(text, _)| text.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        Grade::score(score, reason).with_verdict(score >= PASS_AT)
    }
}
