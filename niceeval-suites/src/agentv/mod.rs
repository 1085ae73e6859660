//! AgentV's `*.eval.yaml` (4.42), the parts its own examples use: `name`, `description`,
//! `target` / `execution.target` (a named target of the nearest `.agentv/targets.yaml` —
//! `openai`, `anthropic` and `cli` providers, `use_target`, `grader_target` —, `default`, or a
//! provider id as in promptfoo) / `targets`, suite-level `assertions` and `input`, `tests`
//! (`id`, `criteria`, `input` as text or messages with text and file blocks,
//! `expected_output`, `assert` / `assertions` with bare-string rubric lines, `rubrics`,
//! `llm-grader`, `code-grader` and every `spec` type, `tool-trajectory` over the agent's
//! events, `vars`, `metadata`, `execution.target` / `skip_defaults`), `default_test`,
//! `evaluate_options` (`max_concurrency`, `repeat`), and `workspace.template` (each run gets a
//! working copy, as `#[eval(workspace = ..)]`). Keys are snake_case.

mod graders;
mod inputs;
mod targets;

use std::path::Path;

use serde_json::{Map, Value};

use super::parse_yaml;
use super::promptfoo::{Doc, OwnedStep, key, steps, with};
use super::{Suite, SuiteCase, SuiteFileError};
use graders::{Found, item_of, rubric, rubric_lines};
use inputs::{interpolate_vars, messages};
use niceeval::reporter::MatrixCell;
use targets::{NamedTargets, Target, target};

const TOP_KEYS: &[&str] = &[
    "$schema",
    "name",
    "description",
    "category",
    "metadata",
    "governance",
    "version",
    "author",
    "license",
    "tags",
    "requires",
    "target",
    "targets",
    "execution",
    "input",
    "assert",
    "assertions",
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
    "execution",
    // A label grouping tests of one conversation in AgentV's reports.
    "conversation_id",
];
const DEFAULT_KEYS: &[&str] = &["assert", "assertions", "rubrics", "vars", "metadata"];

/// Reads an AgentV eval file.
pub(crate) fn read(path: &Path, text: &str) -> Result<Suite, SuiteFileError> {
    let doc = Doc {
        path,
        text,
        base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        positions: Default::default(),
        notes: None,
        streamed: Default::default(),
    };
    let Value::Object(top) = parse_yaml(path, text)? else {
        return Err(doc.err(
            &[],
            "an AgentV eval file is a mapping (name, target, tests)",
        ));
    };
    doc.keys(&[], &top, TOP_KEYS, "an AgentV eval file")?;
    let mut named = NamedTargets::new(&doc.base);
    let mut suite = Suite::default();
    let execution = match top.get("execution") {
        None => Map::new(),
        Some(Value::Object(map)) => {
            doc.keys(
                &[key("execution")],
                map,
                &["target", "targets", "workers"],
                "execution",
            )?;
            map.clone()
        }
        Some(_) => return Err(doc.err(&[key("execution")], "`execution` is a mapping")),
    };
    run_settings(&doc, &top, &execution, &mut suite)?;
    let targets = suite_targets(&doc, &top, &execution, &mut named)?;
    let shared = shared_parts(&doc, &top)?;
    let tests = test_list(&doc, &top)?;
    for (n, (at, test)) in tests.iter().enumerate() {
        let place = TestPlace {
            at,
            n,
            of: tests.len(),
        };
        test_cases(&doc, &mut suite, &mut named, &targets, &shared, place, test)?;
    }
    Ok(suite)
}

/// What the file says about the run: `execution.workers`, `evaluate_options` (its
/// `max_concurrency` over `workers`, `repeat`) and the `workspace` template.
fn run_settings(
    doc: &Doc<'_>,
    top: &Map<String, Value>,
    execution: &Map<String, Value>,
    suite: &mut Suite,
) -> Result<(), SuiteFileError> {
    if let Some(w) = execution.get("workers") {
        suite.concurrency = Some(w.as_u64().filter(|n| *n > 0).ok_or_else(|| {
            doc.err(
                &[key("execution"), key("workers")],
                "`workers` is a whole number above 0",
            )
        })? as usize);
    }
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
        if let Some(n) = count("max_concurrency")? {
            suite.concurrency = Some(n as usize);
        }
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
    Ok(())
}

/// The file's targets: `target`, `targets`, `execution.target` or `execution.targets` (one of
/// them), else the `default` target.
fn suite_targets(
    doc: &Doc<'_>,
    top: &Map<String, Value>,
    execution: &Map<String, Value>,
    named: &mut NamedTargets,
) -> Result<Vec<Target>, SuiteFileError> {
    let mut targets = Vec::new();
    let given: Vec<(Vec<OwnedStep>, &Value)> = [
        (vec![key("target")], top.get("target")),
        (vec![key("targets")], top.get("targets")),
        (
            vec![key("execution"), key("target")],
            execution.get("target"),
        ),
        (
            vec![key("execution"), key("targets")],
            execution.get("targets"),
        ),
    ]
    .into_iter()
    .filter_map(|(at, v)| v.map(|v| (at, v)))
    .collect();
    match given.as_slice() {
        [] => targets.push(target(doc, &[], &Value::String("default".into()), named)?),
        [(at, Value::Array(list))] => {
            for (i, t) in list.iter().enumerate() {
                targets.push(target(doc, &with(at, OwnedStep::Index(i)), t, named)?);
            }
        }
        [(at, t)] if matches!(at.last(), Some(OwnedStep::Key(k)) if k == "target") => {
            targets.push(target(doc, at, t, named)?);
        }
        [(at, _)] => return Err(doc.err(at, "`targets` is a list")),
        [_, (at, _), ..] => {
            return Err(doc.err(
                at,
                "name the target once: `target`, `targets`, `execution.target` or `execution.targets`",
            ));
        }
    }
    Ok(targets)
}

/// What every test of the file shares: `default_test`, the file's own graders and its input.
struct Shared {
    default: Map<String, Value>,
    /// The file's `assert` / `assertions`.
    suite_level: Map<String, Value>,
    suite_input: Vec<(String, String)>,
}

fn shared_parts(doc: &Doc<'_>, top: &Map<String, Value>) -> Result<Shared, SuiteFileError> {
    let default = match top.get("default_test") {
        None => Map::new(),
        Some(Value::Object(map)) => {
            doc.keys(&[key("default_test")], map, DEFAULT_KEYS, "default_test")?;
            map.clone()
        }
        Some(_) => return Err(doc.err(&[key("default_test")], "`default_test` is a mapping")),
    };
    // Suite-level graders: `default_test`'s, then the file's own `assert` / `assertions`.
    let mut suite_level = Map::new();
    for k in ["assert", "assertions"] {
        if let Some(v) = top.get(k) {
            suite_level.insert(k.to_string(), v.clone());
        }
    }
    let suite_input = match top.get("input") {
        None => Vec::new(),
        Some(v) => messages(doc, &[key("input")], v)?,
    };
    Ok(Shared {
        default,
        suite_level,
        suite_input,
    })
}

/// A test and where it sits: its place in the file, its number and how many there are.
#[derive(Clone, Copy)]
struct TestPlace<'a> {
    at: &'a [OwnedStep],
    n: usize,
    of: usize,
}

/// A test as the file gives it, with where it is written.
type PlacedTest = (Vec<OwnedStep>, Map<String, Value>);

/// The file's tests: its `tests` list, or the records of a `file://` tests file.
fn test_list(doc: &Doc<'_>, top: &Map<String, Value>) -> Result<Vec<PlacedTest>, SuiteFileError> {
    let tests = match top.get("tests") {
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, t)| match t {
                Value::Object(m) => Ok((vec![key("tests"), OwnedStep::Index(i)], m.clone())),
                _ => Err(doc.err(
                    &[key("tests"), OwnedStep::Index(i)],
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
    Ok(tests)
}

/// One test's cases, one per target: its input and vars with the defaults, its graders (the
/// defaults', the file's unless `skip_defaults`, its own), its rubric lines as one grader.
fn test_cases(
    doc: &Doc<'_>,
    suite: &mut Suite,
    named: &mut NamedTargets,
    targets: &[Target],
    shared: &Shared,
    place: TestPlace<'_>,
    test: &Map<String, Value>,
) -> Result<(), SuiteFileError> {
    let TestPlace { at, n, of } = place;
    let Shared {
        default,
        suite_level,
        suite_input,
    } = shared;
    doc.keys(at, test, TEST_KEYS, "a test")?;
    let line = doc.position(&steps(at)).map_or(1, |p| p.0);
    let id = match test.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => format!("test {}", n + 1),
    };
    let mut skip_defaults = false;
    let mut case_targets = targets.to_vec();
    match test.get("execution") {
        None => {}
        Some(Value::Object(map)) => {
            let at = with(at, key("execution"));
            doc.keys(&at, map, &["target", "skip_defaults"], "a test's execution")?;
            skip_defaults = map
                .get("skip_defaults")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if let Some(t) = map.get("target") {
                case_targets = vec![target(doc, &with(&at, key("target")), t, named)?];
            }
        }
        Some(_) => return Err(doc.err(&with(at, key("execution")), "`execution` is a mapping")),
    }
    let mut vars = default
        .get("vars")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(v)) = test.get("vars") {
        vars.extend(v.clone());
    }
    let render = |t: &str| -> Result<String, SuiteFileError> { Ok(interpolate_vars(t, &vars)) };
    let mut input = if skip_defaults {
        Vec::new()
    } else {
        suite_input.clone()
    };
    match test.get("input") {
        Some(v) => input.extend(messages(doc, &with(at, key("input")), v)?),
        None => {
            return Err(doc.err(at, "a test needs `input` (text or a list of messages)"));
        }
    }
    let input = input
        .into_iter()
        .map(|(role, text)| Ok((role, render(&text)?)))
        .collect::<Result<Vec<_>, SuiteFileError>>()?;
    let prompt = match input.as_slice() {
        [(role, text)] if role == "user" => text.clone(),
        _ => Value::Array(
            input
                .iter()
                .map(|(role, text)| serde_json::json!({"role": role, "content": text}))
                .collect(),
        )
        .to_string(),
    };
    let expected_output = match test.get("expected_output") {
        None => None,
        Some(Value::String(s)) => Some(render(s)?),
        Some(Value::Array(messages)) => match messages.last().and_then(|m| m.get("content")) {
            Some(Value::String(c)) => Some(render(c)?),
            Some(c) => Some(c.to_string()),
            None => None,
        },
        Some(other) => Some(other.to_string()),
    };
    let criteria = match test.get("criteria") {
        Some(Value::String(c)) => Some(render(c)?),
        _ => None,
    };
    let mut asserts = Vec::new();
    let mut graded = Vec::new();
    let mut trajectories = Vec::new();
    let mut lines = Vec::new();
    let mut sources = vec![(default, vec![key("default_test")])];
    if !skip_defaults {
        sources.push((suite_level, Vec::new()));
    }
    sources.push((test, at.to_vec()));
    // As AgentV does, a test's rubric lines (its own and the suite's) are one rubric
    // grader: the judge scores them together.
    for (source, at) in sources {
        for list_key in ["assert", "assertions"] {
            let Some(list) = source.get(list_key) else {
                continue;
            };
            let Value::Array(items) = list else {
                return Err(doc.err(&with(&at, key(list_key)), format!("`{list_key}` is a list")));
            };
            for (i, item) in items.iter().enumerate() {
                let at = with(&with(&at, key(list_key)), OwnedStep::Index(i));
                item_of(
                    doc,
                    &at,
                    item,
                    criteria.as_deref(),
                    &mut Found {
                        asserts: &mut asserts,
                        graded: &mut graded,
                        lines: &mut lines,
                        trajectories: &mut trajectories,
                    },
                )?;
            }
        }
        if let Some(rubrics) = source.get("rubrics") {
            let at = with(&at, key("rubrics"));
            rubric_lines(doc, &at, rubrics, &mut lines)?;
        }
    }
    match lines.len() {
        0 => {}
        1 => graded.append(&mut lines),
        _ => graded.push(rubric(
            lines
                .iter()
                .map(|g| format!("- {}", g.value))
                .collect::<Vec<_>>()
                .join("\n"),
            None,
        )),
    }
    if let Some(criteria) = &criteria
        && graded.is_empty()
        && asserts.is_empty()
        && trajectories.is_empty()
    {
        graded.push(rubric(criteria.clone(), None));
    }
    let several = case_targets.len() > 1;
    let target_labels = super::unique_labels(case_targets.iter().map(|t| t.spec.label.as_str()));
    for (q, target) in case_targets.iter().enumerate() {
        let name = if several {
            format!("{} [{}]", id.replace("::", ":"), target.spec.label)
        } else {
            id.replace("::", ":")
        };
        suite.cases.push(SuiteCase {
            name,
            line,
            prompt: prompt.clone(),
            prompt_function: None,
            load_error: None,
            provider: target.spec.clone(),
            vars: super::Packed::new(&vars),
            asserts: super::Packed::new(&asserts),
            graded: graded.clone(),
            transform: None,
            threshold: None,
            judge: target.judge.clone(),
            embedding: None,
            select_best: None,
            fixed_output: None,
            base_dir: doc.base.clone(),
            expected_output: expected_output.clone(),
            criteria: criteria.clone(),
            position: format!(
                "AgentV test {} of {}, target {} ({})",
                n + 1,
                of,
                q + 1,
                target.spec.label
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::targets::{env_name, interpolate};
    use super::*;
    use crate::{ArgsMatch, ExpectedCall, Trajectory};

    fn call(tool: &str, args: Option<Value>, args_match: Option<ArgsMatch>) -> ExpectedCall {
        ExpectedCall {
            tool: tool.into(),
            args,
            args_match,
        }
    }

    #[test]
    fn interpolates_vars_as_agentv_does() {
        let vars = json!({"q": "Paris?", "p": {"name": "Ada"}, "n": 3})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(
            interpolate_vars("{{q}} {{ p.name }} {{n}} {{ p }}", &vars),
            r#"Paris? Ada 3 {"name":"Ada"}"#
        );
        // Unknown names and expressions stay as they are (a Jinja payload in a prompt).
        assert_eq!(
            interpolate_vars("{{ 7 * 7 }} {{ config.SECRET }}", &vars),
            "{{ 7 * 7 }} {{ config.SECRET }}"
        );
        // Without vars nothing is touched.
        assert_eq!(interpolate_vars("{{q}}", &Map::new()), "{{q}}");
    }

    #[test]
    fn reads_environment_references_of_targets() {
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(interpolate("${{ PATH }}/a"), format!("{path}/a"));
        assert_eq!(interpolate("${{ NICEEVAL_AGENTV_UNSET }}"), "");
        assert_eq!(
            env_name(" ${{ OPENAI_API_KEY }} ").as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(env_name("sk-${{ X }}"), None);
    }

    #[test]
    fn trajectories_match_modes_and_arguments() {
        let calls = vec![
            ("search".to_string(), json!({"q": "weather", "page": 1})),
            ("fetch".to_string(), json!({"id": 7})),
        ];
        let t = |mode: &str, expected: Vec<ExpectedCall>, args_match: ArgsMatch| Trajectory {
            mode: mode.parse().expect("a trajectory mode"),
            expected,
            minimums: Vec::new(),
            args_match,
        };
        let search = |args_match| call("search", Some(json!({"q": "weather"})), args_match);
        // Exact arguments (the default) fail on the extra `page`; superset passes.
        assert!(
            t("in_order", vec![search(None)], ArgsMatch::Exact)
                .check(&calls)
                .is_err()
        );
        assert!(
            t("in_order", vec![search(None)], ArgsMatch::Superset)
                .check(&calls)
                .is_ok()
        );
        assert!(
            t(
                "in_order",
                vec![search(Some(ArgsMatch::Fields(vec!["q".into()])))],
                ArgsMatch::Exact
            )
            .check(&calls)
            .is_ok()
        );
        // Order, exactness, sets.
        let names = |n: &[&str]| n.iter().map(|n| call(n, None, None)).collect::<Vec<_>>();
        assert!(
            t("in_order", names(&["fetch", "search"]), ArgsMatch::Exact)
                .check(&calls)
                .is_err()
        );
        assert!(
            t("exact", names(&["search", "fetch"]), ArgsMatch::Exact)
                .check(&calls)
                .is_ok()
        );
        assert!(
            t("exact", names(&["search"]), ArgsMatch::Exact)
                .check(&calls)
                .is_err()
        );
        assert!(
            t("superset", names(&["fetch", "search"]), ArgsMatch::Exact)
                .check(&calls)
                .is_ok()
        );
        assert!(
            t("superset", names(&["search", "search"]), ArgsMatch::Exact)
                .check(&calls)
                .is_err()
        );
        let subset = t("subset", names(&["search"]), ArgsMatch::Exact).check(&calls);
        assert!(
            subset
                .unwrap_err()
                .to_string()
                .contains("`fetch` was called")
        );
        let mut minimums = t("any_order", Vec::new(), ArgsMatch::Exact);
        minimums.minimums = vec![("search".into(), 2)];
        assert!(
            minimums
                .check(&calls)
                .unwrap_err()
                .to_string()
                .contains("at least 2")
        );
    }
}
