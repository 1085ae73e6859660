//! Graders: what each item of a test's `assertions` becomes, as AgentV 4.42.4 reads it
//! (`loaders/grader-parser.ts`): bare strings grouped into one checklist rubric (weighted by
//! their number, each line required), `rubrics`, `llm-grader` (a prompt, the test's criteria, or
//! its own rubrics), `code-grader`, `tool-trajectory`, `execution-metrics`, `token-usage`,
//! `cost`, `skill-trigger`, `field-accuracy`, `composite`, and the deterministic types as
//! niceeval's assertions as data; each with its `weight`, `required` / `min_score` and
//! `negate`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::field_accuracy::FieldAccuracy;
use super::skill_trigger::SkillTrigger;
use crate::promptfoo::{Doc, OwnedStep, key, with};
use crate::{ArgsMatch, ExpectedCall, SuiteFileError, Trajectory, TrajectoryMode};
use niceeval::spec::AssertSpec;

/// AgentV's verdict: a grader, and a test, pass at a score of 0.8 (`DEFAULT_THRESHOLD`).
pub(crate) const PASS_AT: f64 = 0.8;

/// One grader of a test, in AgentV's order (the test's own, then the file's).
#[derive(Debug, Clone)]
pub(crate) struct Grader {
    /// Its `name`, else its type.
    pub name: String,
    pub kind: GraderKind,
    /// Its weight in the test's score (1 unless given; a group of bare rubric lines weighs
    /// as many as it has lines).
    pub weight: f64,
    /// `required`: the least score the test needs of it (`min_score`, `required` as a number,
    /// else the test's threshold); under it the test's score is 0.
    pub required: Option<Required>,
    /// `negate`: its score turned over (1 − score) and its verdict with it.
    pub negate: bool,
    /// An `llm-grader`'s `target`: the target whose judge grades it, instead of the test's.
    pub judge_target: Option<String>,
    /// That target's judge, found when the file's targets are read.
    pub judge: Option<super::judge::Judge>,
}

/// How `required` is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Required {
    /// `required: true`: at the test's threshold.
    AtThreshold,
    /// `min_score`, or `required` as a number.
    AtLeast(f64),
}

impl Required {
    /// The least score, with the test's threshold.
    pub(crate) fn min(self, threshold: f64) -> f64 {
        match self {
            Required::AtThreshold => threshold,
            Required::AtLeast(min) => min,
        }
    }
}

/// What a grader checks.
#[derive(Debug, Clone)]
pub(crate) enum GraderKind {
    /// A deterministic type, or a script grader (`code-grader`), as assertions as data.
    Spec(AssertSpec),
    /// `tool-trajectory`, over the run's tool calls.
    Trajectory(Trajectory),
    /// An `llm-grader`: the judge's score, passing at 0.8, asked with its prompt template
    /// (`{{ output }}`, `{{ criteria }}` … filled), else with the test's criteria and expected
    /// output.
    Judge { template: Option<Template> },
    /// Rubric items, each asked of the judge: satisfied or not (a checklist), or a score of
    /// its bands (`score_ranges`).
    Rubrics { lines: Vec<Line>, scored: bool },
    /// `execution-metrics` / `token-usage`: the run's numbers against limits.
    Metrics(Metrics),
    /// `skill-trigger`: whether the run used a named skill.
    SkillTrigger(SkillTrigger),
    /// `field-accuracy`: fields of the answer's JSON against the expected output's.
    FieldAccuracy(FieldAccuracy),
    /// `composite`: its members' results, aggregated.
    Composite {
        members: Vec<Grader>,
        rule: CompositeRule,
    },
}

/// An `llm-grader`'s prompt template.
#[derive(Debug, Clone)]
pub(crate) enum Template {
    /// Text with AgentV's `{{ variable }}`s.
    Text(String),
    /// A program that prints the prompt, given the test's grading payload on stdin
    /// (`prompt: {command, config}`), run in its script's folder.
    Script {
        command: Vec<String>,
        cwd: std::path::PathBuf,
        config: Option<Value>,
    },
}

/// One rubric item.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub id: String,
    /// What the judge is asked.
    pub text: String,
    pub weight: f64,
    /// The least it needs (a checklist line: 1, satisfied, unless `required: false`; a
    /// scored criterion: `min_score`, or 1 with `required: true`).
    pub min: Option<f64>,
}

/// The limits of `execution-metrics` and `token-usage` (AgentV's names).
#[derive(Debug, Clone, Default)]
pub(crate) struct Metrics {
    pub max_tool_calls: Option<f64>,
    pub max_llm_calls: Option<f64>,
    pub max_tokens: Option<f64>,
    pub max_input: Option<f64>,
    pub max_output: Option<f64>,
    pub max_cost_usd: Option<f64>,
    pub max_duration_ms: Option<f64>,
    pub target_exploration_ratio: Option<f64>,
    pub exploration_tolerance: f64,
}

pub(crate) use crate::graders::Combine;

/// `execution.trials`: how many times each test runs, and how the trials' scores make its
/// score.
#[derive(Debug, Clone)]
pub(crate) struct Trials {
    pub count: u32,
    /// `pass_at_k`: the best (`Max`); `mean`; `confidence_interval`: the lower bound.
    pub strategy: Combine,
}

/// Reads `execution.trials`.
pub(super) fn trials(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<Trials, SuiteFileError> {
    let Value::Object(map) = value else {
        return Err(doc.err(at, "`trials` is a mapping with `count` and `strategy`"));
    };
    doc.keys(
        at,
        map,
        &["count", "strategy", "cost_limit_usd", "costLimitUsd"],
        "trials",
    )?;
    let count = map
        .get("count")
        .and_then(Value::as_u64)
        .filter(|n| *n >= 1)
        .ok_or_else(|| {
            doc.err(
                &with(at, key("count")),
                "`count` is a whole number, 1 or more",
            )
        })?;
    let strategy = match map
        .get("strategy")
        .and_then(Value::as_str)
        .unwrap_or("pass_at_k")
    {
        "pass_at_k" => Combine::Max,
        "mean" => Combine::Mean,
        "confidence_interval" => Combine::LowerBound95,
        other => {
            return Err(doc.err(
                &with(at, key("strategy")),
                format!("`strategy` is pass_at_k, mean or confidence_interval, not `{other}`"),
            ));
        }
    };
    Ok(Trials {
        count: count.min(u64::from(u32::MAX)) as u32,
        strategy,
    })
}

/// A `composite`'s aggregator.
#[derive(Debug, Clone)]
pub(crate) enum CompositeRule {
    /// `weighted_average`: the members' scores weighed by `weights` (by name; 1 unless
    /// given), passing at 0.8.
    WeightedAverage(BTreeMap<String, f64>),
    /// `threshold`: the share of members that pass, passing at the threshold.
    Threshold(f64),
}

/// Reads a list of graders (`assertions`, `assert`, `evaluators`): AgentV groups its bare
/// strings into one rubric grader placed at the first string, weighing as many as it has
/// lines, each line required.
pub(super) fn graders(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    list: &Value,
    criteria: Option<&str>,
) -> Result<Vec<Grader>, SuiteFileError> {
    let Value::Array(items) = list else {
        return Err(doc.err(at, "the graders are a list"));
    };
    let mut out = Vec::new();
    let mut strings = Vec::new();
    let mut placeholder = None;
    for (i, item) in items.iter().enumerate() {
        let at = with(at, OwnedStep::Index(i));
        match item {
            Value::String(line) => {
                if placeholder.is_none() {
                    placeholder = Some(out.len());
                }
                if !line.trim().is_empty() {
                    strings.push(line.trim().to_string());
                }
            }
            _ => out.push(grader(doc, &at, item, criteria)?),
        }
    }
    if let Some(place) = placeholder
        && !strings.is_empty()
    {
        let weight = strings.len() as f64;
        let lines = strings
            .into_iter()
            .enumerate()
            .map(|(i, text)| Line {
                id: format!("rubric-{}", i + 1),
                text,
                weight: 1.0,
                min: Some(1.0),
            })
            .collect();
        out.insert(
            place,
            Grader {
                name: "rubrics".into(),
                kind: GraderKind::Rubrics {
                    lines,
                    scored: false,
                },
                weight,
                required: None,
                negate: false,
                judge_target: None,
                judge: None,
            },
        );
    }
    Ok(out)
}

/// The common keys of every grader.
pub(super) const COMMON: &[&str] = &["type", "name", "weight", "required", "min_score", "negate"];

/// One grader item (a mapping with `type`).
fn grader(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    item: &Value,
    criteria: Option<&str>,
) -> Result<Grader, SuiteFileError> {
    let _ = criteria;
    let Value::Object(map) = item else {
        return Err(doc.err(at, "a grader is a rubric line or a mapping with `type`"));
    };
    let kind_name = map.get("type").and_then(Value::as_str).unwrap_or("");
    let number = |k: &str| -> Result<Option<f64>, SuiteFileError> {
        match map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| doc.err(&with(at, key(k)), format!("`{k}` is a number"))),
        }
    };
    let weight = number("weight")?.unwrap_or(1.0);
    if weight < 0.0 {
        return Err(doc.err(&with(at, key("weight")), "`weight` is 0 or more"));
    }
    let min_score = number("min_score")?;
    let required = match map.get("required") {
        None | Some(Value::Bool(false)) | Some(Value::Null) => None,
        Some(Value::Bool(true)) => Some(min_score.map_or(Required::AtThreshold, Required::AtLeast)),
        Some(Value::Number(n)) => {
            let n = n.as_f64().unwrap_or(0.0);
            if !(n > 0.0 && n <= 1.0) {
                return Err(doc.err(
                    &with(at, key("required")),
                    "`required` is true, false or a least score in (0, 1]",
                ));
            }
            Some(Required::AtLeast(min_score.unwrap_or(n)))
        }
        Some(_) => {
            return Err(doc.err(
                &with(at, key("required")),
                "`required` is true, false or a least score in (0, 1]",
            ));
        }
    };
    let negate = match map.get("negate") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(doc.err(&with(at, key("negate")), "`negate` is true or false")),
    };
    fn allowed<'a>(own: &[&'a str]) -> Vec<&'a str> {
        COMMON.iter().chain(own).copied().collect()
    }
    let kind = match kind_name {
        "llm-grader" | "llm_grader" | "llm-rubric" | "llm_rubric" | "llm-judge" | "llm_judge"
        | "rubric" => {
            doc.keys(
                at,
                map,
                &allowed(&[
                    "prompt",
                    "value",
                    "rubrics",
                    "model",
                    "target",
                    "config",
                    "max_steps",
                    "temperature",
                    "threshold",
                ]),
                kind_name,
            )?;
            match map.get("rubrics") {
                Some(list) => rubric_items(doc, &with(at, key("rubrics")), list)?,
                None => GraderKind::Judge {
                    template: judge_template(doc, at, map, kind_name)?,
                },
            }
        }
        "rubrics" => {
            doc.keys(at, map, &allowed(&["criteria", "value"]), kind_name)?;
            let list = map
                .get("criteria")
                .or_else(|| map.get("value"))
                .ok_or_else(|| doc.err(at, "a `rubrics` grader needs `criteria` (a list)"))?;
            rubric_items(doc, &with(at, key("criteria")), list)?
        }
        "tool_trajectory" | "tool-trajectory" => GraderKind::Trajectory(trajectory(doc, at, map)?),
        "execution-metrics" | "execution_metrics" | "token-usage" | "token_usage" => {
            GraderKind::Metrics(metrics(doc, at, map, kind_name)?)
        }
        "composite" => {
            doc.keys(
                at,
                map,
                &allowed(&["assertions", "assert", "evaluators", "aggregator"]),
                kind_name,
            )?;
            let list = map
                .get("assertions")
                .or_else(|| map.get("assert"))
                .or_else(|| map.get("evaluators"))
                .ok_or_else(|| doc.err(at, "a `composite` needs `assertions` (its members)"))?;
            let members = graders(doc, &with(at, key("assertions")), list, criteria)?;
            GraderKind::Composite {
                members,
                rule: composite_rule(doc, &with(at, key("aggregator")), map.get("aggregator"))?,
            }
        }
        "skill-trigger" | "skill_trigger" => {
            GraderKind::SkillTrigger(super::skill_trigger::parse(doc, at, map, kind_name)?)
        }
        "field-accuracy" | "field_accuracy" => {
            GraderKind::FieldAccuracy(super::field_accuracy::parse(doc, at, map, kind_name)?)
        }
        "include" => {
            return Err(doc.err(
                at,
                format!("the `{kind_name}` grader is not supported (see DIALECTS.md)"),
            ));
        }
        _ => GraderKind::Spec(spec_item(doc, at, map, kind_name)?),
    };
    let name = match (map.get("name").and_then(Value::as_str), &kind) {
        (Some(name), _) => name.to_string(),
        // AgentV names an unnamed `skill-trigger` after its skill.
        (None, GraderKind::SkillTrigger(s)) => format!("skill-trigger-{}", s.skill),
        (None, _) => kind_name.to_string(),
    };
    let judge_target = match map.get("target") {
        Some(Value::String(t)) if kind_name.contains("grader") || kind_name.contains("rubric") => {
            Some(t.clone())
        }
        _ => None,
    };
    Ok(Grader {
        name,
        kind,
        weight,
        required,
        negate,
        judge_target,
        judge: None,
    })
}

/// An `llm-grader`'s prompt template, as AgentV reads it: `file://path` is a file (looked for
/// beside the eval file and in the folders above it), any other text is the template itself;
/// without one, AgentV's default asks about the criteria.
fn judge_template(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
    kind: &str,
) -> Result<Option<Template>, SuiteFileError> {
    match map.get("prompt").or_else(|| map.get("value")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(t)) => match t.strip_prefix("file://") {
            Some(reference) => {
                let file = search_roots(&doc.base)
                    .into_iter()
                    .map(|root| root.join(reference))
                    .find(|f| f.is_file())
                    .ok_or_else(|| {
                        doc.err(
                            &with(at, key("prompt")),
                            format!("the grader's prompt file {reference} is not beside the eval file or above it"),
                        )
                    })?;
                std::fs::read_to_string(&file)
                    .map(|text| Some(Template::Text(text)))
                    .map_err(|e| doc.err(at, format!("cannot read {}: {e}", file.display())))
            }
            None => Ok(Some(Template::Text(t.clone()))),
        },
        Some(Value::Object(script)) => {
            let at = with(at, key("prompt"));
            doc.keys(
                &at,
                script,
                &["command", "script", "config"],
                "a prompt script",
            )?;
            let mut command: Vec<String> =
                match script.get("command").or_else(|| script.get("script")) {
                    Some(Value::String(c)) => c.split_whitespace().map(str::to_string).collect(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .map(|p| p.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| doc.err(&at, "`command` is a list of words"))?,
                    _ => return Err(doc.err(&at, "a prompt script needs `command`")),
                };
            // The script (the command's last word) is looked for as AgentV looks for files;
            // it runs in its own folder.
            let last = command.pop().unwrap_or_default();
            let file = search_roots(&doc.base)
                .into_iter()
                .map(|root| root.join(&last))
                .find(|f| f.is_file())
                .ok_or_else(|| {
                    doc.err(
                        &at,
                        format!("the prompt script {last} is not beside the eval file or above it"),
                    )
                })?;
            let cwd = file
                .parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            command.push(file.display().to_string());
            Ok(Some(Template::Script {
                command,
                cwd,
                config: script.get("config").cloned(),
            }))
        }
        Some(_) => Err(doc.err(at, format!("`{kind}`'s prompt is text"))),
    }
}

/// Rubric items (`rubrics:` of a test or an `llm-grader`, `criteria` of `rubrics`): text
/// lines (required), or `{id, outcome, weight, required, min_score, score_ranges}`.
pub(super) fn rubric_items(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<GraderKind, SuiteFileError> {
    let Value::Array(items) = value else {
        return Err(doc.err(at, "rubrics are a list of rubric lines"));
    };
    if items.is_empty() {
        return Err(doc.err(at, "rubrics need at least one item"));
    }
    let scored = items
        .iter()
        .any(|i| i.get("score_ranges").is_some_and(|r| !r.is_null()));
    let mut lines = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = with(at, OwnedStep::Index(i));
        let default_id = format!("rubric-{}", i + 1);
        match item {
            Value::String(s) => lines.push(Line {
                id: default_id,
                text: s.clone(),
                weight: 1.0,
                min: Some(1.0),
            }),
            Value::Object(map) => {
                doc.keys(
                    &at,
                    map,
                    &[
                        "id",
                        "outcome",
                        "description",
                        "text",
                        "weight",
                        "required",
                        "score_ranges",
                        "min_score",
                        "required_min_score",
                        "operator",
                    ],
                    "a rubric",
                )?;
                let id = map
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or(default_id, str::to_string);
                let outcome = ["outcome", "description", "text"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_str));
                let weight = map.get("weight").and_then(Value::as_f64).unwrap_or(1.0);
                let required = map.get("required").and_then(Value::as_bool);
                let min_score = map.get("min_score").and_then(Value::as_f64).or_else(|| {
                    map.get("required_min_score")
                        .and_then(Value::as_f64)
                        .map(|m| m / 10.0)
                });
                let text = match map.get("score_ranges") {
                    None | Some(Value::Null) => outcome
                        .ok_or_else(|| {
                            doc.err(
                                &at,
                                "a rubric item needs `outcome` (its text) or `score_ranges`",
                            )
                        })?
                        .to_string(),
                    Some(ranges) => {
                        bands(doc, &with(&at, key("score_ranges")), outcome, &id, ranges)?
                    }
                };
                let min = if scored {
                    min_score.or((required == Some(true)).then_some(1.0))
                } else {
                    // A checklist line is required unless it says otherwise.
                    match required {
                        Some(false) => None,
                        _ => Some(1.0),
                    }
                };
                lines.push(Line {
                    id,
                    text,
                    weight,
                    min,
                });
            }
            _ => return Err(doc.err(&at, "a rubric is text or a mapping with `outcome`")),
        }
    }
    Ok(GraderKind::Rubrics { lines, scored })
}

/// A criterion scored by bands, in words for the judge (which scores 0 to 1; a band's range
/// is AgentV's 0–10).
fn bands(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    outcome: Option<&str>,
    id: &str,
    ranges: &Value,
) -> Result<String, SuiteFileError> {
    let mut text = outcome.unwrap_or(id).to_string();
    text.push_str(", scored 0-10 by these bands:");
    match ranges {
        Value::Array(list) => {
            for range in list {
                let span = range.get("score_range").and_then(Value::as_array);
                let band = range.get("outcome").and_then(Value::as_str);
                match (
                    span.and_then(|s| Some((s.first()?.as_f64()?, s.get(1)?.as_f64()?))),
                    band,
                ) {
                    (Some((lo, hi)), Some(band)) => {
                        text.push_str(&format!(" {lo}-{hi}: {band};"));
                    }
                    _ => {
                        return Err(
                            doc.err(at, "a score range is `{score_range: [low, high], outcome}`")
                        );
                    }
                }
            }
        }
        Value::Object(map) => {
            for (from, band) in map {
                let band = band
                    .as_str()
                    .map_or_else(|| band.to_string(), str::to_string);
                text.push_str(&format!(" from {from}: {band};"));
            }
        }
        _ => {
            return Err(doc.err(
                at,
                "`score_ranges` is a list of `{score_range: [low, high], outcome}`",
            ));
        }
    }
    Ok(text)
}

/// A deterministic or script grader as an assertion item: AgentV's spellings of niceeval's
/// (`negate` is handled by the grader; a regex's `flags` go into the pattern; a
/// `code-grader` is a `script` whose `cwd` is relative to the eval file; `cost`'s `budget` is
/// its threshold).
fn spec_item(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
    kind: &str,
) -> Result<AssertSpec, SuiteFileError> {
    let mut item = map.clone();
    for k in ["required", "min_score", "negate", "weight", "name"] {
        item.remove(k);
    }
    let mut kind = kind.to_string();
    if matches!(kind.as_str(), "code-grader" | "code_grader") {
        for k in ["target", "preprocessors"] {
            if item.contains_key(k) {
                return Err(doc.err(
                    &with(at, key(k)),
                    format!("a code-grader's `{k}` is not supported (see DIALECTS.md)"),
                ));
            }
        }
        if let Some(script) = item.remove("script")
            && !item.contains_key("command")
        {
            item.insert("command".into(), script);
        }
        // AgentV looks for a grader's `cwd` from the eval file's folder, then each folder above
        // it up to the repository's root, then the directory it runs in.
        if let Some(Value::String(cwd)) = item.get("cwd") {
            match search_roots(&doc.base)
                .into_iter()
                .map(|root| root.join(cwd))
                .find(|dir| dir.is_dir())
            {
                Some(dir) => {
                    item.insert("cwd".into(), Value::String(dir.display().to_string()));
                }
                None => {
                    return Err(doc.err(
                        &with(at, key("cwd")),
                        format!(
                            "the code-grader's `cwd` {cwd} is not a folder beside the eval file, above it, or in the current directory"
                        ),
                    ));
                }
            }
        }
        kind = "script".into();
        // A code-grader passes at AgentV's 0.8 unless it says otherwise.
        if !item.contains_key("threshold") {
            item.insert("threshold".into(), Value::from(PASS_AT));
        }
    }
    // AgentV trims the value of `equals`, `starts-with` and `ends-with` (and the output, when
    // the grader runs).
    if matches!(kind.as_str(), "equals" | "starts-with" | "ends-with")
        && let Some(Value::String(v)) = item.get("value")
    {
        let v = v.trim().to_string();
        item.insert("value".into(), Value::String(v));
    }
    if kind == "cost"
        && let Some(budget) = item.remove("budget")
    {
        item.insert("threshold".into(), budget);
    }
    if let Some(flags) = item.remove("flags") {
        let flags = flags.as_str().unwrap_or_default();
        let pattern = item.get("value").and_then(Value::as_str);
        match pattern {
            Some(p) if kind == "regex" && flags.chars().all(|c| "imsx".contains(c)) => {
                let p = if flags.is_empty() {
                    p.to_string()
                } else {
                    format!("(?{flags}){p}")
                };
                item.insert("value".into(), Value::String(p));
            }
            _ => {
                return Err(doc.err(
                    &with(at, key("flags")),
                    "`flags` (i, m, s, x) go with a `regex` pattern",
                ));
            }
        }
    }
    item.insert("type".into(), Value::String(kind));
    let spec =
        AssertSpec::from_item(Value::Object(item)).map_err(|e| doc.err(at, e.to_string()))?;
    niceeval::spec::validate_in(std::slice::from_ref(&spec), Some(&doc.base))
        .map_err(|e| doc.err(at, e.to_string().replacen("assertion #0 ", "assertion ", 1)))?;
    Ok(spec)
}

/// Where AgentV looks for a file a grader names: the eval file's folder, each folder above it
/// up to the repository's root (the nearest folder holding `.git`), then the current
/// directory.
fn search_roots(base: &std::path::Path) -> Vec<std::path::PathBuf> {
    let start = std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf());
    let mut roots = Vec::new();
    for dir in start.ancestors() {
        roots.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            break;
        }
    }
    if let Ok(here) = std::env::current_dir()
        && !roots.contains(&here)
    {
        roots.push(here);
    }
    roots
}

/// `execution-metrics` / `token-usage` limits.
fn metrics(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
    kind: &str,
) -> Result<Metrics, SuiteFileError> {
    let own: &[&str] = if kind.starts_with("token") {
        &[
            "max_total",
            "max_input",
            "max_output",
            "maxTotal",
            "maxInput",
            "maxOutput",
        ]
    } else {
        &[
            "max_tool_calls",
            "max_llm_calls",
            "max_tokens",
            "max_cost_usd",
            "max_duration_ms",
            "target_exploration_ratio",
            "exploration_tolerance",
            "maxToolCalls",
            "maxLlmCalls",
            "maxTokens",
            "maxCostUsd",
            "maxDurationMs",
            "targetExplorationRatio",
            "explorationTolerance",
        ]
    };
    let allowed: Vec<&str> = COMMON.iter().chain(own).copied().collect();
    doc.keys(at, map, &allowed, kind)?;
    // Each limit by its snake_case name or AgentV's camelCase alias.
    let get =
        |k: &str| -> Result<Option<f64>, SuiteFileError> {
            match map.get(k).or_else(|| map.get(&camel_case(k))) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_f64().filter(|n| *n >= 0.0).map(Some).ok_or_else(|| {
                    doc.err(&with(at, key(k)), format!("`{k}` is a number, 0 or more"))
                }),
            }
        };
    let m = Metrics {
        max_tool_calls: get("max_tool_calls")?,
        max_llm_calls: get("max_llm_calls")?,
        max_tokens: get("max_tokens")?.or(get("max_total")?),
        max_input: get("max_input")?,
        max_output: get("max_output")?,
        max_cost_usd: get("max_cost_usd")?,
        max_duration_ms: get("max_duration_ms")?,
        target_exploration_ratio: get("target_exploration_ratio")?,
        exploration_tolerance: get("exploration_tolerance")?.unwrap_or(0.2),
    };
    Ok(m)
}

/// `max_tool_calls` as `maxToolCalls`.
fn camel_case(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A `composite`'s `aggregator`.
fn composite_rule(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: Option<&Value>,
) -> Result<CompositeRule, SuiteFileError> {
    let Some(Value::Object(map)) = value else {
        return Err(doc.err(
            at,
            "a `composite` needs `aggregator` ({type: weighted_average} or {type: threshold, threshold})",
        ));
    };
    match map.get("type").and_then(Value::as_str) {
        Some("weighted_average") => {
            doc.keys(
                at,
                map,
                &["type", "weights"],
                "a weighted_average aggregator",
            )?;
            let weights = match map.get("weights") {
                None => BTreeMap::new(),
                Some(Value::Object(w)) => w
                    .iter()
                    .map(|(k, v)| v.as_f64().map(|n| (k.clone(), n)))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        doc.err(
                            &with(at, key("weights")),
                            "`weights` maps member names to numbers",
                        )
                    })?,
                Some(_) => {
                    return Err(doc.err(&with(at, key("weights")), "`weights` is a mapping"));
                }
            };
            Ok(CompositeRule::WeightedAverage(weights))
        }
        Some("threshold") => {
            doc.keys(at, map, &["type", "threshold"], "a threshold aggregator")?;
            let t = map
                .get("threshold")
                .and_then(Value::as_f64)
                .filter(|t| (0.0..=1.0).contains(t))
                .ok_or_else(|| doc.err(at, "a threshold aggregator needs `threshold` in [0, 1]"))?;
            Ok(CompositeRule::Threshold(t))
        }
        Some(other @ ("code-grader" | "llm-grader")) => Err(doc.err(
            at,
            format!("a `{other}` aggregator is not supported; use weighted_average or threshold"),
        )),
        _ => Err(doc.err(
            at,
            "an aggregator's `type` is weighted_average or threshold",
        )),
    }
}

/// A `tool-trajectory` grader.
fn trajectory(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
) -> Result<Trajectory, SuiteFileError> {
    let kind = "tool-trajectory";
    doc.keys(
        at,
        map,
        &[
            "type",
            "mode",
            "expected",
            "minimums",
            "name",
            "weight",
            "args_match",
            "argsMatch",
            "required",
            "min_score",
            "negate",
        ],
        kind,
    )?;
    let mode: TrajectoryMode = map
        .get("mode")
        .and_then(Value::as_str)
        .unwrap_or("any_order")
        .parse()
        .map_err(|e: crate::UnknownMode| doc.err(&with(at, key("mode")), e.to_string()))?;
    let default_match = match map.get("args_match").or_else(|| map.get("argsMatch")) {
        None => ArgsMatch::Exact,
        Some(v) => args_match(doc, &with(at, key("args_match")), v)?,
    };
    let mut expected = Vec::new();
    match map.get("expected") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, call) in items.iter().enumerate() {
                let at = with(&with(at, key("expected")), OwnedStep::Index(i));
                let call = match call {
                    Value::String(s) => ExpectedCall {
                        tool: s.clone(),
                        args: None,
                        args_match: None,
                        max_duration_ms: None,
                    },
                    Value::Object(m) => {
                        doc.keys(
                            &at,
                            m,
                            &[
                                "tool",
                                "args",
                                "args_match",
                                "argsMatch",
                                "max_duration_ms",
                                "maxDurationMs",
                            ],
                            "an expected call",
                        )?;
                        let tool = m.get("tool").and_then(Value::as_str).ok_or_else(|| {
                            doc.err(&at, "an expected call needs `tool` (a name)")
                        })?;
                        ExpectedCall {
                            tool: tool.to_string(),
                            args: m.get("args").filter(|a| a.as_str() != Some("any")).cloned(),
                            args_match: match m.get("args_match").or_else(|| m.get("argsMatch")) {
                                None => None,
                                Some(v) => Some(args_match(doc, &with(&at, key("args_match")), v)?),
                            },
                            max_duration_ms: match m
                                .get("max_duration_ms")
                                .or_else(|| m.get("maxDurationMs"))
                            {
                                None => None,
                                Some(v) => Some(v.as_f64().ok_or_else(|| {
                                    doc.err(
                                        &with(&at, key("max_duration_ms")),
                                        "`max_duration_ms` is a number of milliseconds",
                                    )
                                })?),
                            },
                        }
                    }
                    _ => {
                        return Err(doc.err(
                            &at,
                            "each expected call is a tool name or `{tool: name, args}`",
                        ));
                    }
                };
                expected.push(call);
            }
        }
        Some(_) => {
            return Err(doc.err(&with(at, key("expected")), "`expected` is a list of calls"));
        }
    }
    let minimums = match map.get("minimums") {
        None => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| v.as_u64().map(|n| (k.clone(), n as usize)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                doc.err(
                    &with(at, key("minimums")),
                    "`minimums` maps tool names to counts",
                )
            })?,
        Some(_) => {
            return Err(doc.err(&with(at, key("minimums")), "`minimums` is a mapping"));
        }
    };
    Ok(Trajectory {
        mode,
        expected,
        minimums,
        args_match: default_match,
    })
}

pub(super) fn args_match(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<ArgsMatch, SuiteFileError> {
    match value {
        Value::String(s) => match s.as_str() {
            "exact" => Ok(ArgsMatch::Exact),
            "superset" => Ok(ArgsMatch::Superset),
            "subset" => Ok(ArgsMatch::Subset),
            "ignore" => Ok(ArgsMatch::Ignore),
            other => Err(doc.err(
                at,
                format!("args_match `{other}` is not supported; supported: exact, superset, subset, ignore, or a list of fields"),
            )),
        },
        Value::Array(fields) => fields
            .iter()
            .map(|f| f.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .map(ArgsMatch::Fields)
            .ok_or_else(|| doc.err(at, "args_match fields are names (text)")),
        _ => Err(doc.err(at, "`args_match` is a mode or a list of fields")),
    }
}
