//! AgentV's `*.eval.yaml`, the parts its own examples use: `name`, `description`, `target`
//! (`default` — the agent of `niceeval.toml` — or a provider id as in promptfoo) / `targets`,
//! `tests` (`id`, `criteria`, `input` as text or messages, `expected_output`, `assert` /
//! `assertions` with bare-string rubric lines, `rubrics`, script graders and every
//! `spec` type, `tool_trajectory` over the agent's events, `vars`, `metadata`),
//! `default_test`, `evaluate_options` (`max_concurrency`, `repeat`), and `workspace.template`
//! (each run gets a working copy, as `#[eval(workspace = ..)]`). Keys are snake_case.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::agents::{self, ProviderKind, ProviderSpec};
use super::promptfoo::{Doc, Seg, parse_yaml};
use super::{Graded, GradedKind, Suite, SuiteCase, SuiteFileError, Trajectory};
use crate::definition::MatrixCell;
use crate::spec::{self, AssertSpec};

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "target",
    "targets",
    "tests",
    "default_test",
    "evaluate_options",
    "workspace",
];
const TEST_KEYS: &[&str] = &[
    "id",
    "criteria",
    "input",
    "expected_output",
    "assert",
    "assertions",
    "rubrics",
    "vars",
    "metadata",
];
const DEFAULT_KEYS: &[&str] = &["assert", "assertions", "rubrics", "vars", "metadata"];

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

fn with(at: &[Seg], seg: Seg) -> Vec<Seg> {
    let mut v = at.to_vec();
    v.push(seg);
    v
}

/// Reads an AgentV eval file.
pub(crate) fn read(path: &Path, text: &str) -> Result<Suite, SuiteFileError> {
    let doc = Doc {
        path,
        text,
        base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    let Value::Object(top) = parse_yaml(path, text)? else {
        return Err(doc.err(
            &[],
            "an AgentV eval file is a mapping (name, target, tests)",
        ));
    };
    doc.keys(&[], &top, TOP_KEYS, "an AgentV eval file")?;
    let mut targets = Vec::new();
    match (top.get("target"), top.get("targets")) {
        (Some(_), Some(_)) => {
            return Err(doc.err(&[key("targets")], "give `target` or `targets`, not both"));
        }
        (Some(t), None) => targets.push(target(&doc, &[key("target")], t)?),
        (None, Some(Value::Array(list))) => {
            for (i, t) in list.iter().enumerate() {
                targets.push(target(&doc, &[key("targets"), Seg::Index(i)], t)?);
            }
        }
        (None, Some(_)) => return Err(doc.err(&[key("targets")], "`targets` is a list")),
        (None, None) => targets.push(target(&doc, &[], &Value::String("default".into()))?),
    }
    let mut suite = Suite::default();
    if let Some(v) = top.get("evaluate_options") {
        let at = [key("evaluate_options")];
        let Value::Object(map) = v else {
            return Err(doc.err(&at, "`evaluate_options` is a mapping"));
        };
        doc.keys(&at, map, &["max_concurrency", "repeat"], "evaluate_options")?;
        let count = |k: &str| -> Result<Option<u64>, SuiteFileError> {
            match map.get(k) {
                None => Ok(None),
                Some(v) => v.as_u64().filter(|n| *n > 0).map(Some).ok_or_else(|| {
                    doc.err(
                        &with(&at, key(k)),
                        format!("`{k}` is a whole number above 0"),
                    )
                }),
            }
        };
        suite.concurrency = count("max_concurrency")?.map(|n| n as usize);
        suite.repeat = count("repeat")?.map(|n| n.min(u64::from(u32::MAX)) as u32);
    }
    if let Some(v) = top.get("workspace") {
        let at = [key("workspace")];
        let Value::Object(map) = v else {
            return Err(doc.err(&at, "`workspace` is a mapping with `template`"));
        };
        doc.keys(&at, map, &["template"], "workspace")?;
        match map.get("template").and_then(Value::as_str) {
            Some(dir) => {
                let dir = doc.base.join(dir);
                if !dir.is_dir() {
                    return Err(doc.err(
                        &with(&at, key("template")),
                        format!(
                            "the workspace template {} is not a directory",
                            dir.display()
                        ),
                    ));
                }
                suite.workspace = Some(dir);
            }
            None => {
                return Err(doc.err(&at, "`workspace` needs `template` (a directory)"));
            }
        }
    }
    let default = match top.get("default_test") {
        None => Map::new(),
        Some(Value::Object(map)) => {
            doc.keys(&[key("default_test")], map, DEFAULT_KEYS, "default_test")?;
            map.clone()
        }
        Some(_) => return Err(doc.err(&[key("default_test")], "`default_test` is a mapping")),
    };
    let tests: Vec<(Vec<Seg>, Map<String, Value>)> = match top.get("tests") {
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, t)| match t {
                Value::Object(m) => Ok((vec![key("tests"), Seg::Index(i)], m.clone())),
                _ => Err(doc.err(
                    &[key("tests"), Seg::Index(i)],
                    "a test is a mapping (id, input, assert)",
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(Value::String(s)) if s.starts_with("file://") => {
            let file = super::file_path(&doc.base, s);
            niceeval_dataset::read(&file)
                .map_err(|e| doc.err(&[key("tests")], e.to_string()))?
                .into_iter()
                .filter_map(|c| match serde_json::from_str::<Value>(c.record.get()) {
                    Ok(Value::Object(m)) => Some((vec![key("tests")], m)),
                    _ => None,
                })
                .collect()
        }
        _ => {
            return Err(doc.err(
                &[key("tests")],
                "an AgentV eval file needs `tests` (a list)",
            ));
        }
    };
    let several = targets.len() > 1;
    let target_labels = super::unique_labels(targets.iter().map(|t| t.label.as_str()));
    for (n, (at, test)) in tests.iter().enumerate() {
        doc.keys(at, test, TEST_KEYS, "a test")?;
        let line = spec::yaml_position(text, &steps(at)).map_or(1, |p| p.0);
        let id = match test.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => format!("test {}", n + 1),
        };
        let mut vars = default
            .get("vars")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Some(Value::Object(v)) = test.get("vars") {
            vars.extend(v.clone());
        }
        let prompt = match test.get("input") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(messages)) => Value::Array(messages.clone()).to_string(),
            _ => return Err(doc.err(at, "a test needs `input` (text or a list of messages)")),
        };
        let prompt = super::template::render(&prompt, &vars).map_err(|e| doc.err(at, e))?;
        let expected_output = match test.get("expected_output") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(messages)) => messages.last().and_then(|m| {
                m.get("content")
                    .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
            }),
            Some(other) => Some(other.to_string()),
        };
        let mut asserts = Vec::new();
        let mut graded = Vec::new();
        let mut trajectories = Vec::new();
        for (source, at) in [(&default, vec![key("default_test")]), (test, at.clone())] {
            for list_key in ["assert", "assertions"] {
                let Some(list) = source.get(list_key) else {
                    continue;
                };
                let Value::Array(items) = list else {
                    return Err(
                        doc.err(&with(&at, key(list_key)), format!("`{list_key}` is a list"))
                    );
                };
                for (i, item) in items.iter().enumerate() {
                    let at = with(&with(&at, key(list_key)), Seg::Index(i));
                    item_of(
                        &doc,
                        &at,
                        item,
                        &mut asserts,
                        &mut graded,
                        &mut trajectories,
                    )?;
                }
            }
            if let Some(rubrics) = source.get("rubrics") {
                let at = with(&at, key("rubrics"));
                rubric_lines(&doc, &at, rubrics, &mut graded)?;
            }
        }
        if let Some(Value::String(criteria)) = test.get("criteria") {
            if graded.is_empty() && asserts.is_empty() && trajectories.is_empty() {
                graded.push(rubric(criteria.clone(), None));
            }
        }
        for (q, target) in targets.iter().enumerate() {
            let name = if several {
                format!("{} [{}]", id.replace("::", ":"), target.label)
            } else {
                id.replace("::", ":")
            };
            suite.cases.push(SuiteCase {
                name,
                line,
                prompt: prompt.clone(),
                provider: target.clone(),
                vars: super::Packed::new(&vars),
                asserts: super::Packed::new(&asserts),
                graded: graded.clone(),
                transform: None,
                threshold: None,
                judge: None,
                base_dir: doc.base.clone(),
                expected_output: expected_output.clone(),
                position: format!(
                    "AgentV test {} of {}, target {} ({})",
                    n + 1,
                    tests.len(),
                    q + 1,
                    target.label
                ),
                trajectories: trajectories.clone(),
                matrix: MatrixCell::new(
                    n + 1,
                    id.replace("::", ":"),
                    (1, String::new()),
                    (q + 1, target_labels[q].clone()),
                ),
            });
        }
    }
    Ok(suite)
}

fn steps(at: &[Seg]) -> Vec<spec::Step<'_>> {
    at.iter()
        .map(|s| match s {
            Seg::Key(k) => spec::Step::Key(k.as_str()),
            Seg::Index(i) => spec::Step::Index(*i),
        })
        .collect()
}

fn target(doc: &Doc<'_>, at: &[Seg], value: &Value) -> Result<Arc<ProviderSpec>, SuiteFileError> {
    let (id, config) = match value {
        Value::String(id) => (id.clone(), None),
        Value::Object(map) => {
            doc.keys(at, map, &["name", "id", "provider", "config"], "a target")?;
            let id = map
                .get("id")
                .or_else(|| map.get("provider"))
                .and_then(Value::as_str)
                .ok_or_else(|| doc.err(at, "a target needs `id` (a provider id)"))?;
            (id.to_string(), map.get("config").cloned())
        }
        _ => return Err(doc.err(at, "a target is `default` or a provider id")),
    };
    if id == "default" {
        return Ok(Arc::new(ProviderSpec {
            id: id.clone(),
            label: id,
            kind: ProviderKind::Configured,
        }));
    }
    agents::parse(&id, None, config.as_ref(), &doc.base)
        .map(Arc::new)
        .map_err(|(_, m)| {
            doc.err(
                at,
                format!("{m}; or `default`: the agent of niceeval.toml (AgentV's named targets in .agentv/targets.yaml are not read)"),
            )
        })
}

fn rubric(text: String, weight: Option<f64>) -> Graded {
    Graded {
        kind: GradedKind::Rubric,
        value: text,
        threshold: None,
        weight,
        metric: None,
        judge: None,
    }
}

/// `rubrics:` — lines, or `{outcome | description | text, weight}` items.
fn rubric_lines(
    doc: &Doc<'_>,
    at: &[Seg],
    value: &Value,
    graded: &mut Vec<Graded>,
) -> Result<(), SuiteFileError> {
    let Value::Array(items) = value else {
        return Err(doc.err(at, "`rubrics` is a list of rubric lines"));
    };
    for (i, item) in items.iter().enumerate() {
        let at = with(at, Seg::Index(i));
        match item {
            Value::String(s) => graded.push(rubric(s.clone(), None)),
            Value::Object(map) => {
                doc.keys(
                    &at,
                    map,
                    &["id", "outcome", "description", "text", "weight", "required"],
                    "a rubric",
                )?;
                let text = ["outcome", "description", "text"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_str))
                    .ok_or_else(|| doc.err(&at, "a rubric item needs `outcome` (its text)"))?;
                graded.push(rubric(
                    text.to_string(),
                    map.get("weight").and_then(Value::as_f64),
                ));
            }
            _ => return Err(doc.err(&at, "a rubric is text or a mapping with `outcome`")),
        }
    }
    Ok(())
}

/// One `assert` item: a rubric line, a rubric or judge type, a tool trajectory, or a `spec`
/// item (script graders included).
fn item_of(
    doc: &Doc<'_>,
    at: &[Seg],
    item: &Value,
    asserts: &mut Vec<AssertSpec>,
    graded: &mut Vec<Graded>,
    trajectories: &mut Vec<Trajectory>,
) -> Result<(), SuiteFileError> {
    let map = match item {
        Value::String(line) => {
            graded.push(rubric(line.clone(), None));
            return Ok(());
        }
        Value::Object(map) => map,
        _ => return Err(doc.err(at, "an assertion is a rubric line or a mapping with `type`")),
    };
    let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "llm-rubric" | "llm_rubric" | "rubric" | "llm-judge" | "llm_judge" => {
            let text = map
                .get("value")
                .or_else(|| map.get("prompt"))
                .and_then(Value::as_str)
                .ok_or_else(|| doc.err(at, format!("`{kind}` needs a `value`")))?;
            let mut g = rubric(text.to_string(), map.get("weight").and_then(Value::as_f64));
            g.threshold = map.get("threshold").and_then(Value::as_f64);
            graded.push(g);
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
            rubric_lines(doc, &with(at, key("criteria")), list, graded)?;
        }
        "tool_trajectory" | "tool-trajectory" => {
            doc.keys(
                at,
                map,
                &["type", "mode", "expected", "minimums", "name", "weight"],
                "tool_trajectory",
            )?;
            let mode = map
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or("any_order");
            if !matches!(mode, "any_order" | "in_order" | "exact") {
                return Err(doc.err(
                    &with(at, key("mode")),
                    format!("tool_trajectory mode `{mode}` is not supported; supported: any_order, in_order, exact"),
                ));
            }
            let expected = match map.get("expected") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => Some(s.clone()),
                        Value::Object(m) => {
                            m.get("tool").and_then(Value::as_str).map(str::to_string)
                        }
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        doc.err(
                            &with(at, key("expected")),
                            "each expected call is a tool name or `{tool: name}`",
                        )
                    })?,
                Some(_) => {
                    return Err(
                        doc.err(&with(at, key("expected")), "`expected` is a list of calls")
                    );
                }
            };
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
            trajectories.push(Trajectory {
                mode: mode.to_string(),
                expected,
                minimums,
            });
        }
        _ => {
            let spec = AssertSpec::from_item(item.clone()).map_err(|m| doc.err(at, m))?;
            spec::validate_in(std::slice::from_ref(&spec), Some(&doc.base)).map_err(|e| {
                doc.err(at, e.to_string().replacen("assertion #0 ", "assertion ", 1))
            })?;
            asserts.push(spec);
        }
    }
    Ok(())
}
