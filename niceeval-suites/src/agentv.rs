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

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::agents::{self, ProviderKind, ProviderSpec};
use super::parse_yaml;
use super::promptfoo::{Doc, OwnedStep, key, steps, with};
use super::{
    ArgsMatch, ExpectedCall, Graded, GradedKind, JudgeSpec, Suite, SuiteCase, SuiteFileError,
    Trajectory, TrajectoryMode,
};
use niceeval::reporter::MatrixCell;
use niceeval::spec::AssertSpec;

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

/// A target as a case runs it: the agent, and the grader its `grader_target` names.
#[derive(Debug, Clone)]
struct Target {
    spec: Arc<ProviderSpec>,
    judge: Option<JudgeSpec>,
}

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

/// What a test's assertion items become.
struct Found<'a> {
    asserts: &'a mut Vec<AssertSpec>,
    graded: &'a mut Vec<Graded>,
    /// Rubric lines (bare strings, `rubrics`): one rubric grader for all of them.
    lines: &'a mut Vec<Graded>,
    trajectories: &'a mut Vec<Trajectory>,
}

/// An `input`: text (one user message), one `{role, content}` message, or a list of them;
/// `content` is text or a list of `{type: text | file, value}` blocks, one per line (a file
/// is read from beside the eval file and wrapped in `<file path="…">`, as AgentV does).
fn messages(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<Vec<(String, String)>, SuiteFileError> {
    let one = |at: &[OwnedStep], m: &Value| -> Result<(String, String), SuiteFileError> {
        let Value::Object(map) = m else {
            return Err(doc.err(at, "a message is a mapping with `role` and `content`"));
        };
        doc.keys(at, map, &["role", "content"], "a message")?;
        let role = map.get("role").and_then(Value::as_str).unwrap_or("user");
        if !matches!(role, "system" | "user" | "assistant") {
            return Err(doc.err(
                &with(at, key("role")),
                format!("the role `{role}` is not supported; supported: system, user, assistant"),
            ));
        }
        let text = match map.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => {
                let mut parts = Vec::new();
                for (i, block) in blocks.iter().enumerate() {
                    let at = with(&with(at, key("content")), OwnedStep::Index(i));
                    let kind = block.get("type").and_then(Value::as_str);
                    let text = block.get("value").and_then(Value::as_str);
                    match (kind, text) {
                        (Some("text"), Some(t)) => parts.push(t.to_string()),
                        (Some("file"), Some(f)) => {
                            let file = doc.base.join(f.trim_start_matches('/'));
                            let content = std::fs::read_to_string(&file).map_err(|e| {
                                doc.err(&at, format!("cannot read {}: {e}", file.display()))
                            })?;
                            // As AgentV renders a file block.
                            parts.push(format!(
                                "<file path=\"{f}\">\n{}\n</file>",
                                content.trim_end_matches('\n')
                            ));
                        }
                        _ => {
                            return Err(doc.err(
                                &at,
                                "a content block is `{type: text, value}` or `{type: file, value: path}`",
                            ));
                        }
                    }
                }
                parts.join("\n")
            }
            Some(other) => other.to_string(),
            None => return Err(doc.err(at, "a message needs `content`")),
        };
        Ok((role.to_string(), text))
    };
    match value {
        Value::String(s) => Ok(vec![("user".into(), s.clone())]),
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, m)| one(&with(at, OwnedStep::Index(i)), m))
            .collect(),
        Value::Object(map) if map.contains_key("role") => Ok(vec![one(at, value)?]),
        other => Ok(vec![("user".into(), other.to_string())]),
    }
}

/// A targets file: its path, its text and its `targets` list.
type TargetsFile = (PathBuf, String, Vec<Value>);

/// The nearest `.agentv/targets.yaml` above the eval file, read when a target is named.
struct NamedTargets {
    start: PathBuf,
    loaded: Option<Option<TargetsFile>>,
}

impl NamedTargets {
    fn new(start: &Path) -> Self {
        NamedTargets {
            start: std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf()),
            loaded: None,
        }
    }

    fn file(&mut self) -> Result<Option<&TargetsFile>, SuiteFileError> {
        if self.loaded.is_none() {
            let found = self.start.ancestors().find_map(|dir| {
                ["targets.yaml", "targets.yml"]
                    .iter()
                    .map(|f| dir.join(".agentv").join(f))
                    .find(|p| p.is_file())
            });
            self.loaded = Some(match found {
                None => None,
                Some(path) => {
                    let text =
                        std::fs::read_to_string(&path).map_err(|e| SuiteFileError::File {
                            file: path.display().to_string(),
                            message: format!("cannot read the targets file: {e}"),
                        })?;
                    let list = match parse_yaml(&path, &text)? {
                        Value::Object(mut top) => match top.remove("targets") {
                            Some(Value::Array(list)) => list,
                            _ => {
                                return Err(SuiteFileError::File {
                                    file: path.display().to_string(),
                                    message: "a targets file holds `targets:`, a list".into(),
                                });
                            }
                        },
                        _ => {
                            return Err(SuiteFileError::File {
                                file: path.display().to_string(),
                                message: "a targets file is a mapping with `targets`".into(),
                            });
                        }
                    };
                    Some((path, text, list))
                }
            });
        }
        Ok(self.loaded.as_ref().and_then(Option::as_ref))
    }
}

/// `${{ NAME }}` references replaced by the environment's values (empty when unset).
fn interpolate(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        match rest[start + 3..].find("}}") {
            Some(end) => {
                let name = rest[start + 3..start + 3 + end].trim();
                out.push_str(&std::env::var(name).unwrap_or_default());
                rest = &rest[start + 3 + end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// AgentV's test templating: each `{{ name }}` / `{{ a.b }}` naming a var (a dotted path into
/// it) is replaced by its value (JSON when it is not text); anything else, Jinja-looking text
/// included, stays as it is. Without vars, nothing changes.
fn interpolate_vars(text: &str, vars: &Map<String, Value>) -> String {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if vars.is_empty() || !text.contains("{{") {
        return text.to_string();
    }
    let pattern = PATTERN.get_or_init(|| {
        regex::Regex::new(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}").expect("a valid pattern")
    });
    pattern
        .replace_all(text, |c: &regex::Captures<'_>| {
            let mut parts = c[1].split('.');
            let first = parts.next().and_then(|k| vars.get(k));
            match parts
                .try_fold(first, |v, k| Some(v?.as_object()?.get(k)))
                .flatten()
            {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => c[0].to_string(),
            }
        })
        .into_owned()
}

/// The variable of a value that is exactly `${{ NAME }}`.
fn env_name(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix("${{")?.strip_suffix("}}")?.trim();
    (!inner.is_empty() && !inner.contains("${{")).then(|| inner.to_string())
}

/// A target of the eval file: a name of `.agentv/targets.yaml`, `default` (the agent of
/// niceeval.toml unless the targets file names one `default`), or a provider id.
fn target(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
    named: &mut NamedTargets,
) -> Result<Target, SuiteFileError> {
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
        _ => return Err(doc.err(at, "a target is `default`, a target name or a provider id")),
    };
    if config.is_none()
        && let Some(found) = named_target(named, &id, 0)?
    {
        return Ok(found);
    }
    if id == "default" {
        return Ok(Target {
            spec: Arc::new(ProviderSpec {
                transform: None,
                id: id.clone(),
                label: id,
                kind: ProviderKind::Configured,
                notices: Vec::new(),
            }),
            judge: None,
        });
    }
    agents::parse(&id, None, config.as_ref(), &doc.base)
        .map(|spec| Target {
            spec: Arc::new(spec),
            judge: None,
        })
        .map_err(|(_, m)| {
            let searched = match named.file() {
                Ok(Some((path, _, _))) => format!("not a target of {}", path.display()),
                _ => "no .agentv/targets.yaml above the eval file".to_string(),
            };
            doc.err(
                at,
                format!(
                    "target `{id}`: {searched}, and {m}; or `default`: the agent of niceeval.toml"
                ),
            )
        })
}

const TARGET_KEYS: &[&str] = &[
    "name",
    "provider",
    "use_target",
    "grader_target",
    "judge_target",
    "workers",
];
const OPENAI_KEYS: &[&str] = &[
    "base_url",
    "api_key",
    "model",
    "api_format",
    "temperature",
    "max_output_tokens",
];
const ANTHROPIC_KEYS: &[&str] = &[
    "base_url",
    "api_key",
    "model",
    "temperature",
    "max_output_tokens",
];
const CLI_KEYS: &[&str] = &[
    "command",
    "cwd",
    "timeout_seconds",
    "healthcheck",
    "verbose",
    "keep_temp_files",
];

/// The target called `name` in the targets file, if there is one.
fn named_target(
    named: &mut NamedTargets,
    name: &str,
    depth: usize,
) -> Result<Option<Target>, SuiteFileError> {
    let eval_dir = named.start.clone();
    let Some((path, text, list)) = named.file()? else {
        return Ok(None);
    };
    let Some(index) = list
        .iter()
        .position(|t| t.get("name").and_then(Value::as_str) == Some(name))
    else {
        return Ok(None);
    };
    let (path, text) = (path.clone(), text.clone());
    let entry = list[index].clone();
    let tdoc = Doc {
        path: &path,
        text: &text,
        base: eval_dir.clone(),
        positions: Default::default(),
        notes: None,
        streamed: Default::default(),
    };
    let at = vec![key("targets"), OwnedStep::Index(index)];
    let Value::Object(map) = &entry else {
        return Err(tdoc.err(&at, "a target is a mapping with `name` and `provider`"));
    };
    let string = |k: &str| map.get(k).and_then(Value::as_str).map(interpolate);
    if let Some(other) = map.get("use_target").and_then(Value::as_str) {
        tdoc.keys(
            &at,
            map,
            &["name", "use_target"],
            "a target with use_target",
        )?;
        let other = interpolate(other);
        if other.is_empty() || depth > 8 {
            return Err(tdoc.err(
                &with(&at, key("use_target")),
                format!("target `{name}`: `use_target` names no target (is its variable set?)"),
            ));
        }
        return match named_target(named, &other, depth + 1)? {
            Some(t) => Ok(Some(t)),
            None => Err(tdoc.err(
                &with(&at, key("use_target")),
                format!("target `{name}`: `use_target` names `{other}`, which is not a target of this file"),
            )),
        };
    }
    let provider = map.get("provider").and_then(Value::as_str).unwrap_or("");
    let own: &[&str] = match provider {
        "openai" => OPENAI_KEYS,
        "anthropic" => ANTHROPIC_KEYS,
        "cli" => CLI_KEYS,
        _ => {
            return Err(tdoc.err(
                &with(&at, key("provider")),
                format!("target `{name}`: provider `{provider}` is not supported; supported: openai, anthropic, cli (and use_target)"),
            ));
        }
    };
    let allowed: Vec<&str> = TARGET_KEYS.iter().chain(own).copied().collect();
    tdoc.keys(&at, map, &allowed, &format!("a `{provider}` target"))?;
    let kind = match provider {
        "cli" => {
            let command = string("command").ok_or_else(|| {
                tdoc.err(
                    &at,
                    format!("target `{name}`: a cli target needs `command`"),
                )
            })?;
            ProviderKind::AgentvCli {
                command,
                cwd: eval_dir.join(string("cwd").unwrap_or_else(|| ".".into())),
                timeout_seconds: map.get("timeout_seconds").and_then(Value::as_u64),
            }
        }
        _ => {
            if let Some(format) = string("api_format").filter(|f| f != "chat") {
                return Err(tdoc.err(
                    &with(&at, key("api_format")),
                    format!(
                        "target `{name}`: api_format `{format}` is not supported; supported: chat"
                    ),
                ));
            }
            let model = string("model").filter(|m| !m.is_empty()).ok_or_else(|| {
                tdoc.err(
                    &at,
                    format!("target `{name}`: `model` is missing or its variable is not set"),
                )
            })?;
            let raw_key = map.get("api_key").and_then(Value::as_str);
            ProviderKind::Chat {
                model: format!("{provider}/{model}"),
                base_url: string("base_url").filter(|u| !u.is_empty()),
                key_env: raw_key.and_then(env_name),
                key: raw_key.filter(|k| env_name(k).is_none()).map(interpolate),
                temperature: map.get("temperature").and_then(Value::as_f64),
                max_tokens: map
                    .get("max_output_tokens")
                    .and_then(Value::as_u64)
                    .map(|n| n.min(u64::from(u32::MAX)) as u32),
                extra: Default::default(),
            }
        }
    };
    let judge_of = |kind: &ProviderKind| match kind {
        ProviderKind::Chat {
            model,
            base_url,
            key_env,
            ..
        } => Some(JudgeSpec {
            model: model.clone(),
            base_url: base_url.clone(),
            key_env: key_env.clone(),
            unusable: None,
        }),
        _ => None,
    };
    let grader = map
        .get("grader_target")
        .or_else(|| map.get("judge_target"))
        .and_then(Value::as_str)
        .map(interpolate);
    let judge = match grader {
        Some(g) => match named_target(named, &g, depth + 1)? {
            Some(t) => t.judge.or_else(|| judge_of(&t.spec.kind)),
            None => {
                return Err(tdoc.err(
                    &with(&at, key("grader_target")),
                    format!("target `{name}`: grader_target `{g}` is not a target of this file"),
                ));
            }
        },
        // An LLM target grades with itself, as AgentV does.
        None => judge_of(&kind),
    };
    Ok(Some(Target {
        spec: Arc::new(ProviderSpec {
            transform: None,
            id: name.to_string(),
            label: name.to_string(),
            kind,
            notices: Vec::new(),
        }),
        judge,
    }))
}

/// AgentV's verdict: a grader passes at a score of 0.8 (`DEFAULT_THRESHOLD`).
const PASS_AT: f64 = 0.8;

fn rubric(text: String, weight: Option<f64>) -> Graded {
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
fn rubric_lines(
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

fn args_match(doc: &Doc<'_>, at: &[OwnedStep], value: &Value) -> Result<ArgsMatch, SuiteFileError> {
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
fn item_of(
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
                .map_err(|e: super::UnknownMode| doc.err(&with(at, key("mode")), e.to_string()))?;
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
