//! Graders: what each `assertions` item becomes (rubric lines, `llm-grader`, script graders,
//! tool trajectories, the deterministic types), with AgentV's names and defaults.

use serde_json::Value;

use crate::promptfoo::{Doc, OwnedStep, key, with};
use crate::{
    ArgsMatch, ExpectedCall, Graded, GradedKind, SuiteFileError, Trajectory, TrajectoryMode,
};
use niceeval::spec::AssertSpec;

/// What a test's assertion items become.
pub(super) struct Found<'a> {
    pub asserts: &'a mut Vec<AssertSpec>,
    pub graded: &'a mut Vec<Graded>,
    /// Rubric lines (bare strings, `rubrics`): one rubric grader for all of them.
    pub lines: &'a mut Vec<Graded>,
    pub trajectories: &'a mut Vec<Trajectory>,
}

/// AgentV's verdict: a grader passes at a score of 0.8 (`DEFAULT_THRESHOLD`).
pub(super) const PASS_AT: f64 = 0.8;

pub(super) fn rubric(text: String, weight: Option<f64>) -> Graded {
    Graded {
        kind: GradedKind::Rubric,
        value: text,
        threshold: Some(PASS_AT),
        weight,
        metric: None,
        judge: None,
        expected: Vec::new(),
        prompt: None,
        inverse: false,
        rag: None,
    }
}

/// `rubrics:` — lines, or `{outcome | description | text, weight}` items.
pub(super) fn rubric_lines(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
    graded: &mut Vec<Graded>,
) -> Result<(), SuiteFileError> {
    let Value::Array(items) = value else {
        return Err(doc.err(at, "`rubrics` is a list of rubric lines"));
    };
    for (i, item) in items.iter().enumerate() {
        let at = with(at, OwnedStep::Index(i));
        match item {
            Value::String(s) => graded.push(rubric(s.clone(), None)),
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
                    ],
                    "a rubric",
                )?;
                let outcome = ["outcome", "description", "text"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_str));
                // A criterion with score ranges (AgentV's analytic rubric) is its id and its
                // bands, in words.
                let text = match (outcome, map.get("score_ranges")) {
                    (Some(text), None) => text.to_string(),
                    (outcome, Some(Value::Object(ranges))) => {
                        let mut text = outcome
                            .or_else(|| map.get("id").and_then(Value::as_str))
                            .unwrap_or("criterion")
                            .to_string();
                        text.push_str(", scored 0-10 by these bands:");
                        for (from, band) in ranges {
                            let band = band
                                .as_str()
                                .map_or_else(|| band.to_string(), str::to_string);
                            text.push_str(&format!(" from {from}: {band};"));
                        }
                        if let Some(min) = map.get("min_score").and_then(Value::as_f64) {
                            text.push_str(&format!(" it needs at least {min} of 1"));
                        }
                        text
                    }
                    (_, Some(_)) => {
                        return Err(doc.err(
                            &with(&at, key("score_ranges")),
                            "`score_ranges` maps each band's lowest score to its description",
                        ));
                    }
                    (None, None) => {
                        return Err(doc.err(
                            &at,
                            "a rubric item needs `outcome` (its text) or `score_ranges`",
                        ));
                    }
                };
                graded.push(rubric(text, map.get("weight").and_then(Value::as_f64)));
            }
            _ => return Err(doc.err(&at, "a rubric is text or a mapping with `outcome`")),
        }
    }
    Ok(())
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

/// One `assert` item: a rubric line, a rubric or judge type, a tool trajectory, or a `spec`
/// item (script graders included).
pub(super) fn item_of(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    item: &Value,
    criteria: Option<&str>,
    found: &mut Found<'_>,
) -> Result<(), SuiteFileError> {
    let map = match item {
        Value::String(line) => {
            found.lines.push(rubric(line.clone(), None));
            return Ok(());
        }
        Value::Object(map) => map,
        _ => return Err(doc.err(at, "an assertion is a rubric line or a mapping with `type`")),
    };
    let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "llm-rubric" | "llm_rubric" | "rubric" | "llm-judge" | "llm_judge" | "llm-grader"
        | "llm_grader" => {
            let grader = kind.contains("grader");
            if grader {
                doc.keys(
                    at,
                    map,
                    &[
                        "type",
                        "name",
                        "prompt",
                        "value",
                        "weight",
                        "threshold",
                        "required",
                    ],
                    kind,
                )?;
            }
            let text = match map.get("value").or_else(|| map.get("prompt")) {
                Some(Value::String(t)) => {
                    // An llm-grader's `prompt` is a file beside the eval file, or the text.
                    let file = doc.base.join(t);
                    if grader && map.contains_key("prompt") && file.is_file() {
                        std::fs::read_to_string(&file).map_err(|e| {
                            doc.err(at, format!("cannot read {}: {e}", file.display()))
                        })?
                    } else {
                        t.clone()
                    }
                }
                Some(_) => return Err(doc.err(at, format!("`{kind}`'s value is text"))),
                // An llm-grader without a prompt grades the test's criteria.
                None if grader => criteria.map(str::to_string).ok_or_else(|| {
                    doc.err(
                        at,
                        format!("`{kind}` needs a `prompt` or the test's `criteria`"),
                    )
                })?,
                None => return Err(doc.err(at, format!("`{kind}` needs a `value`"))),
            };
            let mut g = rubric(text, map.get("weight").and_then(Value::as_f64));
            g.threshold = map
                .get("threshold")
                .and_then(Value::as_f64)
                .or(Some(PASS_AT));
            found.graded.push(g);
        }
        "rubrics" => {
            let list = map
                .get("criteria")
                .or_else(|| map.get("value"))
                .ok_or_else(|| {
                    doc.err(
                        at,
                        "a `rubrics` item needs `criteria` (a list of rubric lines)",
                    )
                })?;
            rubric_lines(doc, &with(at, key("criteria")), list, found.lines)?;
        }
        "tool_trajectory" | "tool-trajectory" => {
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
                    "required",
                ],
                kind,
            )?;
            let mode: TrajectoryMode = map
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or("any_order")
                .parse()
                .map_err(|e: crate::UnknownMode| doc.err(&with(at, key("mode")), e.to_string()))?;
            let default_match = match map.get("args_match") {
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
                            },
                            Value::Object(m) => {
                                doc.keys(
                                    &at,
                                    m,
                                    &["tool", "args", "args_match"],
                                    "an expected call",
                                )?;
                                let tool =
                                    m.get("tool").and_then(Value::as_str).ok_or_else(|| {
                                        doc.err(&at, "an expected call needs `tool` (a name)")
                                    })?;
                                ExpectedCall {
                                    tool: tool.to_string(),
                                    args: m
                                        .get("args")
                                        .filter(|a| a.as_str() != Some("any"))
                                        .cloned(),
                                    args_match: match m.get("args_match") {
                                        None => None,
                                        Some(v) => {
                                            Some(args_match(doc, &with(&at, key("args_match")), v)?)
                                        }
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
                    return Err(
                        doc.err(&with(at, key("expected")), "`expected` is a list of calls")
                    );
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
            found.trajectories.push(Trajectory {
                mode,
                expected,
                minimums,
                args_match: default_match,
            });
        }
        _ => {
            // AgentV's spellings of promptfoo's: `negate: true` is a `not-` type, a regex's
            // `flags` go into the pattern, a `code-grader` is a script grader; `required` (a
            // failing item fails its test) is what every niceeval item does.
            let mut item = map.clone();
            item.remove("required");
            let negate = match item.remove("negate") {
                None => false,
                Some(Value::Bool(b)) => b,
                Some(_) => {
                    return Err(doc.err(&with(at, key("negate")), "`negate` is true or false"));
                }
            };
            let mut kind = kind.to_string();
            if matches!(kind.as_str(), "code-grader" | "code_grader") {
                if let Some(cwd) = item.remove("cwd")
                    && cwd.as_str().is_none_or(|c| !matches!(c, "." | "./"))
                {
                    return Err(doc.err(
                            &with(at, key("cwd")),
                            "a code-grader's `cwd` other than `.` (the eval file's directory) is not supported",
                        ));
                }
                kind = "script".into();
                // A code-grader passes at AgentV's 0.8 unless it says otherwise.
                if !item.contains_key("threshold") {
                    item.insert("threshold".into(), Value::from(PASS_AT));
                }
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
            if negate {
                kind = match kind.strip_prefix("not-") {
                    Some(rest) => rest.to_string(),
                    None => format!("not-{kind}"),
                };
            }
            item.insert("type".into(), Value::String(kind));
            let spec = AssertSpec::from_item(Value::Object(item))
                .map_err(|e| doc.err(at, e.to_string()))?;
            niceeval::spec::validate_in(std::slice::from_ref(&spec), Some(&doc.base)).map_err(
                |e| doc.err(at, e.to_string().replacen("assertion #0 ", "assertion ", 1)),
            )?;
            found.asserts.push(spec);
        }
    }
    Ok(())
}
