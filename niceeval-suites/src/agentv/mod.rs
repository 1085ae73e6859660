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

mod field_accuracy;
pub(crate) mod graders;
mod inputs;
mod judge;
mod keys;
pub(crate) mod score;
mod skill_trigger;
mod targets;

use std::path::Path;

use serde_json::{Map, Value};

use super::parse_yaml;
use super::promptfoo::{Doc, OwnedStep, key, steps, with};
use super::promptfoo_keys::Notes;
use super::{Suite, SuiteCase, SuiteFileError};
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
    "eval_cases",
    "evalcases",
    "input_files",
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
    "input_files",
    "expected_outcome",
    "evaluators",
    "mode",
    "turns",
    "aggregation",
];
const DEFAULT_KEYS: &[&str] = &["assert", "assertions", "rubrics", "vars", "metadata"];

/// Whether a suite file is AgentV's: by its name, as AgentV's docs name them, whatever the
/// case (`EVAL.yaml`, `name.EVAL.yaml`, `x.eval.yml`), by its `$schema`
/// (`agentv-eval-v2`), or by its keys: a YAML file without promptfoo's `prompts` and
/// `providers` whose top level or tests use keys only AgentV has (`execution`, `target`,
/// `criteria`, `expected_output`, `assertions`, `input`).
pub(crate) fn recognizes(path: &Path, text: &str) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"));
    let Some(stem) = stem else {
        return false;
    };
    if stem == "eval" || stem.ends_with(".eval") {
        return true;
    }
    // The top level's keys, and the keys of its lists' items, read from the text (a promptfoo
    // config of 100,000 tests is not parsed twice).
    static TOP: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static ITEM: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let top = TOP.get_or_init(|| {
        regex::Regex::new(r#"(?m)^["']?([A-Za-z_$][A-Za-z0-9_$-]*)["']?\s*:"#)
            .expect("a valid pattern")
    });
    let item = ITEM.get_or_init(|| {
        regex::Regex::new(
            r"(?m)^\s*(?:-\s+)?(criteria|expected_output|assertions|expected_outcome)\s*:",
        )
        .expect("a valid pattern")
    });
    let keys: Vec<&str> = top
        .captures_iter(text)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect();
    if text.contains("agentv-eval-v2") && keys.contains(&"$schema") {
        return true;
    }
    if keys
        .iter()
        .any(|k| matches!(*k, "prompts" | "providers" | "defaultTest" | "scenarios"))
        || !keys.contains(&"tests")
    {
        return false;
    }
    keys.iter().any(|k| {
        matches!(
            *k,
            "execution" | "target" | "assertions" | "input" | "input_files"
        )
    }) || item.is_match(text)
}

/// What an AgentV case carries besides a suite case's own parts.
#[derive(Debug, Clone)]
pub(crate) struct AgentvCase {
    /// Every input message (role, text), the file's first: the `input` of script graders.
    pub input: Vec<(String, String)>,
    /// `input_files`, as written.
    pub input_files: Vec<String>,
    /// The test's `metadata`.
    pub metadata: Option<Value>,
    /// Its graders, in AgentV's order.
    pub graders: Vec<graders::Grader>,
    /// The score the test needs (`execution.threshold`, else 0.8).
    pub threshold: f64,
    /// The judge the file names for the target (its `grader_target`, a program when that is a
    /// `cli` target; or the LLM target itself), asked in AgentV's protocol; `None`: niceeval's
    /// configured judge.
    pub judge: Option<judge::Judge>,
    /// A conversation test's turns after the first (the first is sent as the case's prompt);
    /// empty for a test of one turn.
    pub turns: Vec<Turn>,
    /// The first turn's graders and expected output, in a conversation test.
    pub first_turn: Option<Turn>,
    /// `execution.trials`: the test run that many times, its score made of theirs.
    pub trials: Option<graders::Trials>,
    /// How a conversation test's turn scores (and its conversation graders' score) make its
    /// score (`aggregation`).
    pub aggregation: graders::Combine,
    /// Its `expected_output` as written (the expected data of `field-accuracy`).
    pub expected: Option<Value>,
}

/// One turn of a conversation test (`mode: conversation`).
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    /// The user's message.
    pub input: String,
    /// The turn's expected output.
    pub expected_output: Option<String>,
    /// The turn's graders (none: the turn scores 1).
    pub graders: Vec<graders::Grader>,
}

/// Reads an AgentV eval file: every refusal of the file is reported at once, with the test
/// errors met on the way.
pub(crate) fn read(path: &Path, text: &str) -> Result<Suite, SuiteFileError> {
    let notes = Notes::with_rule(keys::unread, "AgentV");
    let read = read_with(path, text, &notes);
    match read {
        Ok(mut suite) if !notes.refused() => {
            let (notices, ignored) = notes.finish()?;
            suite.notices.extend(notices);
            suite.ignored_keys = ignored;
            Ok(suite)
        }
        Ok(_) => Err(notes
            .finish()
            .err()
            .unwrap_or_else(|| SuiteFileError::File {
                file: path.display().to_string(),
                message: "cannot be read".into(),
            })),
        Err(e) => {
            notes.refuse(e);
            Err(notes
                .finish()
                .err()
                .unwrap_or_else(|| SuiteFileError::File {
                    file: path.display().to_string(),
                    message: "cannot be read".into(),
                }))
        }
    }
}

fn read_with(path: &Path, text: &str, notes: &Notes) -> Result<Suite, SuiteFileError> {
    let doc = Doc {
        path,
        text,
        base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        positions: Default::default(),
        notes: Some(notes),
        streamed: Default::default(),
    };
    let Value::Object(top) = parse_yaml(path, text)? else {
        return Err(doc.err(
            &[],
            "an AgentV eval file is a mapping (name, target, tests)",
        ));
    };
    doc.keys(&[], &top, TOP_KEYS, keys::FILE)?;
    let mut named = NamedTargets::new(&doc.base, notes);
    let mut suite = Suite::default();
    let execution = match top.get("execution") {
        None => Map::new(),
        Some(Value::Object(map)) => {
            doc.keys(
                &[key("execution")],
                map,
                &[
                    "target",
                    "targets",
                    "workers",
                    "threshold",
                    "assertions",
                    "evaluators",
                    "trials",
                ],
                keys::EXECUTION,
            )?;
            map.clone()
        }
        Some(_) => return Err(doc.err(&[key("execution")], "`execution` is a mapping")),
    };
    run_settings(&doc, &top, &execution, &mut suite)?;
    let targets = suite_targets(&doc, &top, &execution, &mut named)?;
    let shared = shared_parts(&doc, &top, &execution)?;
    let tests = test_list(&doc, &top)?;
    for (n, (at, test)) in tests.iter().enumerate() {
        let place = TestPlace {
            at,
            n,
            of: tests.len(),
        };
        // A test that cannot be read is reported with every other refusal of the file.
        if let Err(e) = test_cases(&doc, &mut suite, &mut named, &targets, &shared, place, test) {
            notes.refuse(e);
        }
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
    named: &mut NamedTargets<'_>,
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
    /// The file's graders (`assertions`, else `assert`, else `execution.assertions` /
    /// `execution.evaluators`), with where each list is written.
    suite_level: Vec<(Vec<OwnedStep>, Value)>,
    suite_input: Vec<(String, String)>,
    /// The file's `input_files`.
    suite_files: Vec<String>,
    /// `execution.threshold`, else AgentV's 0.8.
    threshold: f64,
    /// `execution.trials`.
    trials: Option<graders::Trials>,
}

fn shared_parts(
    doc: &Doc<'_>,
    top: &Map<String, Value>,
    execution: &Map<String, Value>,
) -> Result<Shared, SuiteFileError> {
    let default = match top.get("default_test") {
        None => Map::new(),
        Some(Value::Object(map)) => {
            doc.keys(&[key("default_test")], map, DEFAULT_KEYS, "default_test")?;
            map.clone()
        }
        Some(_) => return Err(doc.err(&[key("default_test")], "`default_test` is a mapping")),
    };
    let suite_level = [
        (vec![key("assertions")], top.get("assertions")),
        (vec![key("assert")], top.get("assert")),
        (
            vec![key("execution"), key("assertions")],
            execution.get("assertions"),
        ),
        (
            vec![key("execution"), key("evaluators")],
            execution.get("evaluators"),
        ),
    ]
    .into_iter()
    .find_map(|(at, v)| v.map(|v| (at, v.clone())))
    .into_iter()
    .collect();
    let suite_input = match top.get("input") {
        None => Vec::new(),
        Some(v) => messages(doc, &[key("input")], v)?,
    };
    Ok(Shared {
        default,
        suite_level,
        suite_input,
        suite_files: file_list(doc, &[key("input_files")], top.get("input_files"))?,
        threshold: threshold_of(doc, &[key("execution")], execution)?.unwrap_or(graders::PASS_AT),
        trials: execution
            .get("trials")
            .map(|v| graders::trials(doc, &[key("execution"), key("trials")], v))
            .transpose()?,
    })
}

/// The judge of each grader that names a `target` of its own (composites' members included).
fn resolve_judges(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    list: &mut [graders::Grader],
    named: &mut NamedTargets<'_>,
) -> Result<(), SuiteFileError> {
    for g in list.iter_mut() {
        if let graders::GraderKind::Composite { members, .. } = &mut g.kind {
            resolve_judges(doc, at, members, named)?;
        }
        let Some(name) = g.judge_target.clone() else {
            continue;
        };
        let found = targets::named_target(named, &name, 0)?.ok_or_else(|| {
            doc.err(
                at,
                format!("the grader `{}` names the target `{name}`, which is not a target of .agentv/targets.yaml", g.name),
            )
        })?;
        g.judge = Some(found.as_judge().ok_or_else(|| {
            doc.err(
                at,
                format!("the grader `{}` names the target `{name}`, which is neither a chat model nor a cli program", g.name),
            )
        })?);
    }
    Ok(())
}

/// A test's conversation: its `turns` (`mode: conversation`) and `aggregation`.
fn conversation(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    test: &Map<String, Value>,
    criteria: Option<&str>,
) -> Result<(Vec<Turn>, graders::Combine), SuiteFileError> {
    let aggregation = match test.get("aggregation").and_then(Value::as_str) {
        None | Some("mean") => graders::Combine::Mean,
        Some("min") => graders::Combine::Min,
        Some("max") => graders::Combine::Max,
        Some(other) => {
            return Err(doc.err(
                &with(at, key("aggregation")),
                format!("`aggregation` is mean, min or max, not `{other}`"),
            ));
        }
    };
    let turns = match (test.get("mode").and_then(Value::as_str), test.get("turns")) {
        (Some("conversation"), Some(Value::Array(list))) if !list.is_empty() => list,
        (Some("conversation"), _) => {
            return Err(doc.err(at, "a conversation test needs `turns` (a list of turns)"));
        }
        (Some(other), _) => {
            return Err(doc.err(
                &with(at, key("mode")),
                format!("`mode` is `conversation`, not `{other}`"),
            ));
        }
        (None, None) => return Ok((Vec::new(), aggregation)),
        (None, Some(_)) => {
            return Err(doc.err(
                &with(at, key("turns")),
                "`turns` go with `mode: conversation`",
            ));
        }
    };
    let mut out = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        let at = with(&with(at, key("turns")), OwnedStep::Index(i));
        let Value::Object(map) = turn else {
            return Err(doc.err(&at, "a turn is a mapping with `input`"));
        };
        doc.keys(
            &at,
            map,
            &["input", "expected_output", "assertions"],
            "a turn",
        )?;
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let input = map
            .get("input")
            .map(text)
            .ok_or_else(|| doc.err(&at, "a turn needs `input`"))?;
        let expected_output = map.get("expected_output").map(text);
        let mut list = match map.get("assertions") {
            Some(v) => graders::graders(doc, &with(&at, key("assertions")), v, criteria)?,
            None => Vec::new(),
        };
        // A turn with an expected output and no graders is graded against it.
        if list.is_empty() && expected_output.is_some() {
            list.push(graders::Grader {
                name: "llm-grader".into(),
                kind: graders::GraderKind::Judge { template: None },
                weight: 1.0,
                required: None,
                negate: false,
                judge_target: None,
                judge: None,
            });
        }
        out.push(Turn {
            input,
            expected_output,
            graders: list,
        });
    }
    Ok((out, aggregation))
}

/// `threshold` of an `execution` mapping: a score in [0, 1].
fn threshold_of(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    execution: &Map<String, Value>,
) -> Result<Option<f64>, SuiteFileError> {
    match execution.get("threshold") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|t| (0.0..=1.0).contains(t))
            .map(Some)
            .ok_or_else(|| {
                doc.err(
                    &with(at, key("threshold")),
                    "`threshold` is a score in [0, 1]",
                )
            }),
    }
}

/// `input_files`: paths (text).
fn file_list(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: Option<&Value>,
) -> Result<Vec<String>, SuiteFileError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| doc.err(at, "`input_files` is a list of paths")),
        Some(_) => Err(doc.err(at, "`input_files` is a list of paths")),
    }
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
    let tests = match top
        .get("tests")
        .or_else(|| top.get("eval_cases"))
        .or_else(|| top.get("evalcases"))
    {
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
        // An external tests file (`./cases.jsonl`, `file://cases.yaml`), beside the eval
        // file.
        Some(Value::String(s)) => {
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
    named: &mut NamedTargets<'_>,
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
        suite_files,
        ..
    } = shared;
    doc.keys(at, test, TEST_KEYS, keys::TEST)?;
    let line = doc.position(&steps(at)).map_or(1, |p| p.0);
    let id = match test.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => format!("test {}", n + 1),
    };
    let mut skip_defaults = false;
    let mut threshold = shared.threshold;
    let mut case_targets = targets.to_vec();
    match test.get("execution") {
        None => {}
        Some(Value::Object(map)) => {
            let at = with(at, key("execution"));
            doc.keys(
                &at,
                map,
                &[
                    "target",
                    "targets",
                    "skip_defaults",
                    "threshold",
                    "evaluators",
                ],
                keys::EXECUTION,
            )?;
            skip_defaults = map
                .get("skip_defaults")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if let Some(t) = threshold_of(doc, &at, map)? {
                threshold = t;
            }
            match (map.get("target"), map.get("targets")) {
                (Some(t), _) => {
                    case_targets = vec![target(doc, &with(&at, key("target")), t, named)?];
                }
                (None, Some(Value::Array(list))) => {
                    let at = with(&at, key("targets"));
                    case_targets = list
                        .iter()
                        .enumerate()
                        .map(|(i, t)| target(doc, &with(&at, OwnedStep::Index(i)), t, named))
                        .collect::<Result<_, _>>()?;
                }
                (None, Some(_)) => {
                    return Err(doc.err(&with(&at, key("targets")), "`targets` is a list"));
                }
                (None, None) => {}
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
    // `input_files` (the file's, unless `skip_defaults`, then the test's): each file a block
    // of the test's first user message, as AgentV's shorthand makes them.
    let mut input_files: Vec<String> = if skip_defaults {
        Vec::new()
    } else {
        suite_files.clone()
    };
    input_files.extend(file_list(
        doc,
        &with(at, key("input_files")),
        test.get("input_files"),
    )?);
    match test.get("input") {
        Some(v) => {
            let mut own = messages(doc, &with(at, key("input")), v)?;
            if !input_files.is_empty() {
                let blocks = inputs::file_blocks(doc, at, &input_files)?;
                match own.iter_mut().find(|(role, _)| role == "user") {
                    Some((_, text)) => *text = format!("{blocks}\n{text}"),
                    None => own.push(("user".into(), blocks)),
                }
            }
            input.extend(own);
        }
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
    let criteria = match test
        .get("criteria")
        .or_else(|| test.get("expected_outcome"))
    {
        Some(Value::String(c)) => Some(render(c)?),
        _ => None,
    };
    // AgentV's graders: the test's own list (`assertions`, else `assert`, else the older
    // `execution.evaluators` / `evaluators`), then the file's (unless `skip_defaults`); a
    // test's inline `rubrics` come first.
    let mut list = Vec::new();
    if let Some(rubrics) = test.get("rubrics") {
        list.push(graders::Grader {
            name: "rubrics".into(),
            kind: graders::rubric_items(doc, &with(at, key("rubrics")), rubrics)?,
            weight: 1.0,
            required: None,
            negate: false,
            judge_target: None,
            judge: None,
        });
    }
    let own = [
        (vec![key("assertions")], test.get("assertions")),
        (vec![key("assert")], test.get("assert")),
        (
            vec![key("execution"), key("evaluators")],
            test.get("execution").and_then(|e| e.get("evaluators")),
        ),
        (vec![key("evaluators")], test.get("evaluators")),
    ]
    .into_iter()
    .find_map(|(k, v)| v.map(|v| (k, v)));
    if let Some((k, v)) = own {
        let place: Vec<OwnedStep> = at.iter().cloned().chain(k).collect();
        list.extend(graders::graders(doc, &place, v, criteria.as_deref())?);
    }
    if !skip_defaults {
        for (place, v) in suite_level {
            list.extend(graders::graders(doc, place, v, criteria.as_deref())?);
        }
    }
    if let Some(v) = default.get("assertions").or_else(|| default.get("assert")) {
        list.extend(graders::graders(
            doc,
            &[key("default_test"), key("assertions")],
            v,
            criteria.as_deref(),
        )?);
    }
    let conversing = test.get("mode").and_then(Value::as_str) == Some("conversation");
    if list.is_empty() && !conversing {
        // AgentV's default grader: the judge on the criteria (or the expected output).
        let text = criteria.clone().or_else(|| {
            expected_output
                .as_ref()
                .map(|e| format!("The answer agrees with this expected answer: {e}"))
        });
        match text {
            Some(_) => list.push(graders::Grader {
                name: "llm-grader".into(),
                kind: graders::GraderKind::Judge { template: None },
                weight: 1.0,
                required: None,
                negate: false,
                judge_target: None,
                judge: None,
            }),
            None => {
                return Err(doc.err(
                    at,
                    "a test needs `criteria`, `expected_output` or `assertions` (AgentV skips it otherwise)",
                ));
            }
        }
    }
    resolve_judges(doc, at, &mut list, named)?;
    let extras = AgentvCase {
        input: input.clone(),
        input_files: input_files.clone(),
        metadata: test.get("metadata").cloned(),
        graders: list,
        threshold,
        judge: None,
        expected: test.get("expected_output").cloned(),
        turns: Vec::new(),
        first_turn: None,
        aggregation: graders::Combine::Mean,
        trials: shared.trials.clone(),
    };
    // A conversation (`mode: conversation`): its turns are sent one after another, the first
    // with the test's input before it.
    let (turns, aggregation) = conversation(doc, at, test, criteria.as_deref())?;
    let mut turns = turns.into_iter();
    let first_turn = turns.next();
    let prompt = match &first_turn {
        None => prompt,
        Some(first) => {
            let mut messages: Vec<Value> = input
                .iter()
                .map(|(role, text)| serde_json::json!({"role": role, "content": text}))
                .collect();
            messages.push(serde_json::json!({"role": "user", "content": first.input}));
            Value::Array(messages).to_string()
        }
    };
    let extras = AgentvCase {
        turns: turns.collect(),
        first_turn,
        aggregation,
        ..extras
    };
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
            asserts: super::Packed::new(&Vec::new()),
            graded: Vec::new(),
            transform: None,
            threshold: Some(threshold),
            judge: target.judge.clone(),
            embedding: None,
            select_best: None,
            fixed_output: target.fixed.clone(),
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
            trajectories: Vec::new(),
            agentv: Some(std::sync::Arc::new(AgentvCase {
                judge: match (&target.cli_judge, &target.judge) {
                    (Some(program), _) => Some(judge::Judge::Program(program.clone())),
                    (None, Some(spec)) => Some(judge::Judge::Model(spec.clone())),
                    (None, None) => None,
                },
                ..extras.clone()
            })),
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
    use crate::{ArgsMatch, ExpectedCall, ToolCall, Trajectory};

    fn call(tool: &str, args: Option<Value>, args_match: Option<ArgsMatch>) -> ExpectedCall {
        ExpectedCall {
            tool: tool.into(),
            args,
            args_match,
            max_duration_ms: None,
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
    fn trajectories_score_as_agentv_does() {
        let calls = vec![
            ToolCall::new("search", json!({"q": "weather", "page": 1})),
            ToolCall::new("fetch", json!({"id": 7})),
        ];
        let t = |mode: &str, expected: Vec<ExpectedCall>, args_match: ArgsMatch| Trajectory {
            mode: mode.parse().expect("a trajectory mode"),
            expected,
            minimums: Vec::new(),
            args_match,
        };
        let score = |t: Trajectory| t.score(&calls).score;
        let search = |args_match| call("search", Some(json!({"q": "weather"})), args_match);
        // Exact arguments (the default) fail on the extra `page`; superset passes.
        assert_eq!(
            score(t("in_order", vec![search(None)], ArgsMatch::Exact)),
            0.0
        );
        assert_eq!(
            score(t("in_order", vec![search(None)], ArgsMatch::Superset)),
            1.0
        );
        let fields = |f: &[&str]| ArgsMatch::Fields(f.iter().map(|f| f.to_string()).collect());
        assert_eq!(
            score(t(
                "in_order",
                vec![search(Some(fields(&["q"])))],
                ArgsMatch::Exact
            )),
            1.0
        );
        // A listed field the expected arguments do not give is not compared.
        assert_eq!(
            score(t(
                "in_order",
                vec![search(Some(fields(&["q", "page"])))],
                ArgsMatch::Exact
            )),
            1.0
        );
        // Order, exactness, sets: the share of expected calls matched.
        let names = |n: &[&str]| n.iter().map(|n| call(n, None, None)).collect::<Vec<_>>();
        assert_eq!(
            score(t("in_order", names(&["fetch", "search"]), ArgsMatch::Exact)),
            0.5
        );
        assert_eq!(
            score(t("exact", names(&["search", "fetch"]), ArgsMatch::Exact)),
            1.0
        );
        // AgentV scores the expected positions only: an extra call is listed, not counted
        // (niceeval failed it before following AgentV's score).
        let extra = t("exact", names(&["search"]), ArgsMatch::Exact).score(&calls);
        assert_eq!(extra.score, 1.0);
        assert!(
            extra
                .checks
                .iter()
                .any(|(text, held)| !held && text.contains("got 2"))
        );
        assert_eq!(
            score(t("superset", names(&["fetch", "search"]), ArgsMatch::Exact)),
            1.0
        );
        assert_eq!(
            score(t(
                "superset",
                names(&["search", "search"]),
                ArgsMatch::Exact
            )),
            0.5
        );
        let subset = t("subset", names(&["search"]), ArgsMatch::Exact).score(&calls);
        assert_eq!(subset.score, 0.5);
        assert!(
            subset
                .checks
                .iter()
                .any(|(text, _)| text.contains("fetch is not in allowed set"))
        );
        let mut minimums = t("any_order", Vec::new(), ArgsMatch::Exact);
        minimums.minimums = vec![("search".into(), 2), ("fetch".into(), 1)];
        let met = minimums.score(&calls);
        assert_eq!(met.score, 0.5);
        assert!(met.checks[0].0.contains("required >=2"), "{:?}", met.checks);
    }

    #[test]
    fn a_matched_calls_latency_limit_counts_when_its_duration_is_known() {
        let read = |ms: Option<f64>| ToolCall {
            duration_ms: ms,
            ..ToolCall::new("Read", json!({}))
        };
        let mut want = call("Read", None, None);
        want.max_duration_ms = Some(100.0);
        let t = |mode: &str| Trajectory {
            mode: mode.parse().expect("a trajectory mode"),
            expected: vec![want.clone()],
            minimums: Vec::new(),
            args_match: ArgsMatch::Exact,
        };
        for mode in ["in_order", "exact"] {
            assert_eq!(t(mode).score(&[read(Some(45.0))]).score, 1.0);
            assert_eq!(t(mode).score(&[read(Some(100.0))]).score, 1.0);
            assert_eq!(t(mode).score(&[read(Some(120.0))]).score, 0.5);
            // No duration: the limit is skipped, not counted.
            assert_eq!(t(mode).score(&[read(None)]).score, 1.0);
            // Not matched: the limit counts, unmet.
            assert_eq!(t(mode).score(&[]).score, 0.0);
        }
    }

    #[test]
    fn agentv_files_are_recognized_by_name_and_by_keys() {
        let p = |name: &str| std::path::PathBuf::from(name);
        for name in ["EVAL.yaml", "eval.yml", "smoke.EVAL.yaml", "x.eval.yml"] {
            assert!(recognizes(&p(name), ""), "{name}");
        }
        let agentv = "name: x\ntests:\n  - id: a\n    input: hi\n    criteria: says hi\n";
        assert!(recognizes(&p("suite.yaml"), agentv));
        let schema = "$schema: agentv-eval-v2\ntests: []\n";
        assert!(recognizes(&p("suite.yaml"), schema));
        let promptfoo = "prompts: [hi]\nproviders: [echo]\ntests:\n  - vars: {a: 1}\n";
        assert!(!recognizes(&p("promptfooconfig.yaml"), promptfoo));
        assert!(!recognizes(&p("EVAL.json"), agentv));
    }

    fn file(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn every_refusal_of_a_file_is_reported_at_once() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = file(
            dir.path(),
            "EVAL.yaml",
            "preprocessors: [{type: xlsx, command: x}]\ntests:\n  - id: a\n    input: hi\n    criteria: c\n    window_size: 2\n  - id: b\n    input: hi\n    assertions:\n      - {type: composite, assertions: [], aggregator: {type: llm-grader}}\n",
        );
        let text = std::fs::read_to_string(&path).expect("read");
        let err = read(&path, &text).expect_err("refused").to_string();
        for needle in ["preprocessors", "window_size", "aggregator"] {
            assert!(err.contains(needle), "{needle} missing from:\n{err}");
        }
    }

    #[test]
    fn unknown_keys_are_noticed_and_the_file_runs() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = file(
            dir.path(),
            "EVAL.yaml",
            "defaults: &d {x: 1}\ntests:\n  - id: a\n    task: fix it\n    input: hi\n    asertions: [contains]\n    criteria: says hi\n",
        );
        let text = std::fs::read_to_string(&path).expect("read");
        let suite = read(&path, &text).expect("runs");
        assert_eq!(suite.cases.len(), 1);
        let ignored = suite.ignored_keys.join("\n");
        assert!(ignored.contains("`task` in a test (line 4)"), "{ignored}");
        assert!(ignored.contains("Did you mean `assertions`?"), "{ignored}");
        assert!(
            ignored.contains("`defaults` in an AgentV eval file (line 1)"),
            "{ignored}"
        );
    }

    #[test]
    fn a_test_keeps_every_input_turn_and_its_graders_in_agentvs_order() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::write(dir.path().join("cases.jsonl"), "{\"id\": \"j\", \"input\": [{\"role\": \"system\", \"content\": \"be brief\"}, {\"role\": \"user\", \"content\": \"first\"}, {\"role\": \"assistant\", \"content\": \"ok\"}, {\"role\": \"user\", \"content\": \"second\"}], \"assertions\": [{\"type\": \"contains\", \"value\": \"x\"}, \"is polite\", \"is short\"]}\n").expect("write");
        let path = file(
            dir.path(),
            "EVAL.yaml",
            "tests: ./cases.jsonl\nassertions:\n  - type: is-json\n    required: true\n",
        );
        let text = std::fs::read_to_string(&path).expect("read");
        let suite = read(&path, &text).expect("runs");
        let av = suite.cases[0].agentv.clone().expect("an AgentV case");
        let roles: Vec<&str> = av.input.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        let names: Vec<&str> = av.graders.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["contains", "rubrics", "is-json"]);
        assert_eq!(av.graders[1].weight, 2.0);
        assert!(av.graders[2].required.is_some());
    }
}
