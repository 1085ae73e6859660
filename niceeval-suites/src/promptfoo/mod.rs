//! promptfoo's `promptfooconfig.yaml`, the parts real suites use: `description`, `prompts`
//! (text, `file://` text and chat JSON/YAML, globs, prompt functions: `prompt.rs`),
//! `providers` / `targets`, `tests`
//! (inline, `file://` CSV, JSONL, JSON, YAML, globs), `defaultTest` (`vars`, `assert`,
//! `options.provider` as the judge, `options.transform`, `threshold`, `metadata`), `vars`
//! with `file://` values and list values (one test per value), `evaluateOptions`
//! (`maxConcurrency`, `repeat`), `outputPath`, YAML anchors and `<<` merges. Tests × prompts
//! × providers make the cases.

mod packed;
mod providers;
mod scenarios;
#[cfg(test)]
mod schema_coverage;
mod stored;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::agents;
use super::prompt::{self, PromptFunction};
use super::promptfoo_keys::Notes;
use super::{
    Graded, GradedKind, JudgeSpec, Suite, SuiteCase, SuiteFileError, parse_yaml, template,
};
use niceeval::reporter::MatrixCell;
use niceeval::spec::AssertSpec;
use niceeval_dataset::positions::Step;
use packed::Tests;
use providers::TestProviders;
pub(crate) use stored::StoredCases;

const TOP_KEYS: &[&str] = &[
    "description",
    "prompts",
    "providers",
    "targets",
    "tests",
    "defaultTest",
    "evaluateOptions",
    "outputPath",
    "assertionTemplates",
    "scenarios",
];
const TEST_KEYS: &[&str] = &[
    "providerOutput",
    "description",
    "vars",
    "assert",
    "options",
    "threshold",
    "metadata",
    "provider",
    "providers",
];
const OPTION_KEYS: &[&str] = &[
    "provider",
    "transform",
    "postprocess",
    "rubricPrompt",
    "transformVars",
    "prefix",
    "suffix",
    "disableVarExpansion",
    "disableDefaultAsserts",
    "repeat",
];
const EVALUATE_KEYS: &[&str] = &["maxConcurrency", "repeat"];
/// Model-graded assertion types, run by the judge.
const GRADED: &[(&str, GradedKind)] = &[
    ("llm-rubric", GradedKind::Rubric),
    ("g-eval", GradedKind::GEval),
    ("factuality", GradedKind::Factuality),
    ("model-graded-factuality", GradedKind::Factuality),
    ("model-graded-closedqa", GradedKind::ClosedQa),
    // Graded as `llm-rubric` (see DIALECTS.md): promptfoo asks a grader with web search for
    // `search-rubric` and gives `agent-rubric` the agent's trajectory.
    ("search-rubric", GradedKind::Rubric),
    ("agent-rubric", GradedKind::Rubric),
];

/// promptfoo's assertion types that niceeval does not run, with why (DIALECTS.md's list).
const NOT_RUN: &[(&str, &str)] = &[
    (
        "ruby",
        "inline Ruby code; niceeval runs code items in JavaScript and Python: write it in either",
    ),
    (
        "human",
        "a rating a person gives in promptfoo's web view; niceeval has no rating step",
    ),
    (
        "max-score",
        "promptfoo passes the output with the highest score across providers; niceeval grades each case on its own",
    ),
    (
        "trajectory:tool-used",
        "promptfoo reads the agent's steps from the OpenTelemetry spans of its own trace store; niceeval's suite runner has none (check tool calls in a Rust eval)",
    ),
    (
        "trajectory:tool-sequence",
        "promptfoo reads the agent's steps from the OpenTelemetry spans of its own trace store; niceeval's suite runner has none (check tool calls in a Rust eval)",
    ),
    (
        "trajectory:tool-args-match",
        "promptfoo reads the agent's steps from the OpenTelemetry spans of its own trace store; niceeval's suite runner has none (check tool calls in a Rust eval)",
    ),
    (
        "trajectory:step-count",
        "promptfoo reads the agent's steps from the OpenTelemetry spans of its own trace store; niceeval's suite runner has none (check tool calls in a Rust eval)",
    ),
    (
        "trajectory:goal-success",
        "promptfoo grades the agent's steps from the OpenTelemetry spans of its own trace store; niceeval's suite runner has none",
    ),
];

/// Every assertion type a promptfoo file may use here: niceeval's own (with promptfoo's
/// names), the graded ones, `similar` and its metrics, the retrieval and conversation
/// metrics, and `select-best`. Each also takes a `not-` prefix.
pub(crate) fn valid_types() -> Vec<&'static str> {
    let mut types = niceeval::__workspace::expect::canonical_names();
    let suite = GRADED
        .iter()
        .map(|(name, _)| *name)
        .chain(super::rag::Metric::NAMES)
        .chain([
            "similar",
            "similar:cosine",
            "similar:dot",
            "similar:euclidean",
            "select-best",
        ]);
    for name in suite {
        if !types.contains(&name) {
            types.push(name);
        }
    }
    types
}

/// Whether `kind` names a custom assertion (`custom:name`, or a file of that name in
/// `.niceeval/assertions/` here or above).
fn is_custom(kind: &str, base: &Path) -> bool {
    let bare = kind.strip_prefix("not-").unwrap_or(kind);
    bare.starts_with("custom:")
        || niceeval::__workspace::expect::CustomAssertions::discover(base)
            .command(bare)
            .is_some()
}

/// A segment of a path into the document, owned.
#[derive(Debug, Clone)]
pub(crate) enum OwnedStep {
    Key(String),
    Index(usize),
}

/// The file being read: where errors point.
pub(crate) struct Doc<'a> {
    pub path: &'a Path,
    /// Its text; empty for a file read by [`super::stream`], whose text is read again from
    /// the file when a place in it is needed (`streamed.reread`), and for a CSV file.
    pub text: &'a str,
    pub base: PathBuf,
    /// Where each node of `text` is, read on the first look-up (`Default::default()`).
    pub positions: std::cell::OnceCell<Option<niceeval_dataset::positions::Positions>>,
    /// A promptfoo file's notices and refusals ([`promptfoo_keys`]); `None` (AgentV): every
    /// unknown key is an error.
    pub notes: Option<&'a Notes>,
    /// Places known without `positions`: those of a file whose `tests` were read one by one.
    pub streamed: StreamedPlaces,
}

/// The places [`super::stream`] found while reading a file: its `tests` list and the test
/// item being read (a look-up elsewhere reads the whole document's places, as before).
#[derive(Debug, Default)]
pub(crate) struct StreamedPlaces {
    pub tests_at: Option<(u32, u32)>,
    /// The item's index and places: an item of `tests` (`tests[i]`), or with `root_list` of
    /// the document itself (`[i]`, a tests file).
    pub item: std::cell::RefCell<Option<(usize, super::stream::Places)>>,
    pub root_list: bool,
    /// The file read, when its text was not kept: 100,000 inline tests are 50 MB of text,
    /// and a place the items do not know (an error's, an alias item's) is rarely needed.
    pub reread: Option<PathBuf>,
    /// Its text, read again on the first look-up that needs it.
    pub text: std::cell::OnceCell<String>,
}

impl Doc<'_> {
    pub(crate) fn err(&self, at: &[OwnedStep], message: impl Into<String>) -> SuiteFileError {
        let steps = steps(at);
        super::at(
            self.path,
            self.placed_text(),
            &steps,
            self.position(&steps),
            message.into(),
        )
    }

    /// The line and column of the value at `path`: the document is read once, on the first
    /// look-up, however many follow.
    pub(crate) fn position(&self, path: &[Step<'_>]) -> Option<(usize, usize)> {
        match path {
            [Step::Key("tests")] => {
                if let Some((line, column)) = self.streamed.tests_at {
                    return Some((line as usize, column as usize));
                }
            }
            [Step::Key("tests"), Step::Index(i), rest @ ..] if !self.streamed.root_list => {
                if let Some(found) = self.hot_item(*i, rest) {
                    return found;
                }
            }
            [Step::Index(i), rest @ ..] if self.streamed.root_list => {
                if let Some(found) = self.hot_item(*i, rest) {
                    return found;
                }
            }
            _ => {}
        }
        self.positions
            .get_or_init(|| niceeval_dataset::positions::Positions::read(self.placed_text()))
            .as_ref()?
            .find(path)
    }

    /// The text places are found in: `text`, or the file's, read again.
    fn placed_text(&self) -> &str {
        match &self.streamed.reread {
            Some(file) => self
                .streamed
                .text
                .get_or_init(|| std::fs::read_to_string(file).unwrap_or_default()),
            None => self.text,
        }
    }

    /// The line a key is written on: its value's line, or the nearest line above naming the
    /// key (a block value starts below its key).
    fn key_line(&self, place: &[OwnedStep], key: &str) -> usize {
        let line = self.position(&steps(place)).map_or(1, |p| p.0);
        let text = self.placed_text();
        let names = |l: &str| {
            let l = l.trim_start().trim_start_matches("- ").trim_start();
            let l = l.trim_start_matches(['"', '\'']);
            l.strip_prefix(key).is_some_and(|rest| {
                rest.trim_start_matches(['"', '\''])
                    .trim_start()
                    .starts_with(':')
            })
        };
        (line.saturating_sub(3).max(1)..=line)
            .rev()
            .find(|n| text.lines().nth(n - 1).is_some_and(names))
            .unwrap_or(line)
    }

    /// Whether the document has a text its nodes are placed in (a CSV file has none).
    fn has_text(&self) -> bool {
        !self.text.is_empty() || self.streamed.reread.is_some()
    }

    /// The place of `rest` under item `i` (`Some(None)`: none), when the item being read is
    /// `i` and knows it.
    fn hot_item(&self, i: usize, rest: &[Step<'_>]) -> Option<Option<(usize, usize)>> {
        match &*self.streamed.item.borrow() {
            Some((n, places)) if *n == i => places.find(rest),
            _ => None,
        }
    }

    /// Fails on the first key of `map` not in `allowed`.
    pub(crate) fn keys(
        &self,
        at: &[OwnedStep],
        map: &Map<String, Value>,
        allowed: &[&str],
        what: &str,
    ) -> Result<(), SuiteFileError> {
        // `x-…` keys at the top hold YAML anchors for the rest of the file (promptfoo ignores
        // them too).
        let holder = |k: &str| at.is_empty() && k.starts_with("x-");
        if let Some(notes) = self.notes {
            // promptfoo: a key it accepts is never a reason to refuse the file.
            for key in map
                .keys()
                .filter(|k| !allowed.contains(&k.as_str()) && !holder(k))
            {
                match notes.unread(what, key) {
                    Ok(Some(notice)) => notes.notice(notice),
                    Ok(None) => {
                        let place = with(at, OwnedStep::Key(key.clone()));
                        let hint = niceeval::__workspace::closest(key, allowed.iter().copied());
                        notes.unknown_key(what, key, hint, || self.key_line(&place, key));
                    }
                    Err(why) => notes.refuse(self.err(
                        &with(at, OwnedStep::Key(key.clone())),
                        format!("`{key}` in {what} is not supported: {why}"),
                    )),
                }
            }
            return Ok(());
        }
        if let Some(key) = map
            .keys()
            .find(|k| !allowed.contains(&k.as_str()) && !holder(k))
        {
            let mut path = at.to_vec();
            path.push(OwnedStep::Key(key.clone()));
            let hint = match key.as_str() {
                "env" => " (set the variables in the environment instead)",
                _ => "",
            };
            return Err(self.err(
                &path,
                format!(
                    "`{key}` in {what} is not supported{hint}; supported: {}{}",
                    allowed.join(", "),
                    if at.is_empty() {
                        " (and x-… keys holding YAML anchors)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        Ok(())
    }
}

/// `at` as the steps of a look-up.
pub(crate) fn steps(at: &[OwnedStep]) -> Vec<Step<'_>> {
    at.iter()
        .map(|s| match s {
            OwnedStep::Key(k) => Step::Key(k.as_str()),
            OwnedStep::Index(i) => Step::Index(*i),
        })
        .collect()
}

pub(crate) fn with(at: &[OwnedStep], seg: OwnedStep) -> Vec<OwnedStep> {
    let mut v = at.to_vec();
    v.push(seg);
    v
}

pub(crate) fn key(k: &str) -> OwnedStep {
    OwnedStep::Key(k.to_string())
}

/// A prompt: its label and template, or the function that makes it.
#[derive(Debug, Clone)]
struct Prompt {
    label: String,
    template: String,
    function: Option<Arc<PromptFunction>>,
}

/// One test, merged with `defaultTest`, before the matrix.
#[derive(Debug, Clone)]
pub(crate) struct Test {
    pub(crate) description: Option<String>,
    vars: Map<String, Value>,
    /// The vars' names in the order they were written: list-valued vars expand in this order
    /// (the first one outermost), as in promptfoo.
    order: Vec<String>,
    /// Items with where each was written (file, path).
    asserts: Vec<(Value, Origin)>,
    transform: Option<String>,
    /// `options.transformVars`: JavaScript making more vars of the test's (`vars_transform`).
    transform_vars: Option<String>,
    /// `options.prefix` / `options.suffix`: text around every prompt's template.
    affixes: (Option<String>, Option<String>),
    /// `options.disableVarExpansion`: list vars stay lists (one test).
    no_expansion: bool,
    /// `options.disableDefaultAsserts`: `defaultTest`'s items do not apply.
    no_default_asserts: bool,
    /// `options.repeat`: the test's rows, this many times.
    repeat: Option<usize>,
    /// `providerOutput`: the output its cases check, no provider asked (an object as JSON).
    provider_output: Option<Arc<str>>,
    judge: Option<JudgeSpec>,
    /// `options.provider`'s embedding grader (`{embedding: …}`), for `similar`.
    embedding: Option<JudgeSpec>,
    /// `options.rubricPrompt`, loaded.
    rubric_prompt: Option<String>,
    threshold: Option<f64>,
    /// The test's own `provider` and its `providers` filter.
    providers: TestProviders,
    line: usize,
}

/// Where an assertion item was written.
#[derive(Debug, Clone)]
struct Origin {
    file: PathBuf,
    line: usize,
    column: usize,
}

/// Reads a promptfoo config.
pub(crate) fn read(path: &Path, text: String) -> Result<Suite, SuiteFileError> {
    let notes = Notes::default();
    let read = read_with(path, text, &notes);
    // A refusal met on the way is reported with every other one; an error that stopped the
    // reading comes after them.
    match (read, notes.refused()) {
        (Ok(mut suite), false) => {
            (suite.notices, suite.ignored_keys) = notes.finish()?;
            Ok(suite)
        }
        (Ok(_), true) => Err(notes
            .finish()
            .err()
            .unwrap_or_else(|| unreachable_err(path))),
        (Err(e), _) => {
            notes.refuse(e);
            Err(notes
                .finish()
                .err()
                .unwrap_or_else(|| unreachable_err(path)))
        }
    }
}

fn unreachable_err(path: &Path) -> SuiteFileError {
    SuiteFileError::File {
        file: path.display().to_string(),
        message: "cannot be read".into(),
    }
}

fn read_with(path: &Path, text: String, notes: &Notes) -> Result<Suite, SuiteFileError> {
    // The items of `tests` are read one by one, from compact text: a file of 20,000 inline
    // tests is never a tree of 20,000 tests. (`$ref`s point anywhere: not with them.) The
    // text is not kept once the stream has read it: places come from the items, and the file
    // is read again for one they do not know.
    let read = super::stream::read(&text, !text.contains("$ref"));
    let (mut value, streamed, tests_at, text) = match read {
        Some(read) => {
            drop(text);
            (read.value, read.tests, read.tests_at, None)
        }
        None => (
            super::parse_yaml_serde(path, &text)?,
            None,
            None,
            Some(text),
        ),
    };
    let doc = Doc {
        path,
        text: text.as_deref().unwrap_or_default(),
        base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        positions: Default::default(),
        notes: Some(notes),
        streamed: StreamedPlaces {
            tests_at,
            reread: text.is_none().then(|| path.to_path_buf()),
            ..StreamedPlaces::default()
        },
    };
    resolve_refs(&doc, &mut value)?;
    // `niceeval eval --var` / `--grader`.
    crate::overrides::apply(&mut value);
    let Value::Object(top) = value else {
        return Err(doc.err(
            &[],
            "a promptfoo config is a mapping (prompts, providers, tests)",
        ));
    };
    doc.keys(&[], &top, TOP_KEYS, "a promptfoo config")?;
    if top.contains_key("providers") && top.contains_key("targets") {
        return Err(doc.err(&[key("targets")], "give `providers` or `targets`, not both"));
    }
    let mut prompts = match top.get("prompts") {
        None => vec![Prompt {
            label: "{{prompt}}".into(),
            template: "{{prompt}}".into(),
            function: None,
        }],
        Some(v) => read_prompts(&doc, &[key("prompts")], v)?,
    };
    let provider_key = if top.contains_key("targets") {
        "targets"
    } else {
        "providers"
    };
    let providers = match top.get(provider_key) {
        None => return Err(doc.err(&[], "a promptfoo config needs `providers` (or `targets`)")),
        Some(v) => providers::read_providers(&doc, &[key(provider_key)], v)?,
    };
    let default = match top.get("defaultTest") {
        None => None,
        Some(Value::Object(map)) => Some(read_test(&doc, &[key("defaultTest")], map, None, 0)?),
        Some(_) => {
            return Err(doc.err(
                &[key("defaultTest")],
                "`defaultTest` is a mapping (vars, assert, options, threshold, metadata); a file:// defaultTest is not supported",
            ));
        }
    };
    let mut suite = Suite::default();
    if let Some(v) = top.get("evaluateOptions") {
        let at = [key("evaluateOptions")];
        let Value::Object(map) = v else {
            return Err(doc.err(&at, "`evaluateOptions` is a mapping"));
        };
        doc.keys(&at, map, EVALUATE_KEYS, "evaluateOptions")?;
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
        suite.concurrency = count("maxConcurrency")?.map(|n| n as usize);
        suite.repeat = count("repeat")?.map(|n| n.min(u64::from(u32::MAX)) as u32);
    }
    match top.get("outputPath") {
        None => {}
        Some(Value::String(p)) => suite.output_paths.push(super::file_path(&doc.base, p)),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let Some(p) = item.as_str() else {
                    return Err(doc.err(&[key("outputPath"), OwnedStep::Index(i)], "a path"));
                };
                suite.output_paths.push(super::file_path(&doc.base, p));
            }
        }
        Some(_) => {
            return Err(doc.err(
                &[key("outputPath")],
                "`outputPath` is a path or a list of paths",
            ));
        }
    }
    let tests_line = doc.position(&[Step::Key("tests")]).map_or(1, |p| p.0);
    // promptfoo: a file's `tests` (or one empty test when it has neither tests nor
    // scenarios), then each scenario's tests (see `scenarios`).
    let scenario_tests = match top.get("scenarios") {
        None => Vec::new(),
        Some(v) => scenarios::read(&doc, v)?,
    };
    let no_tests = match (&streamed, top.get("tests")) {
        (Some(items), _) => items.is_empty(),
        (None, None | Some(Value::Null)) => true,
        (None, Some(Value::Array(items))) => items.is_empty(),
        (None, Some(_)) => false,
    };
    let mut tests = match top.get("tests") {
        _ if no_tests && top.contains_key("scenarios") => Tests::default(),
        Some(_) if streamed.is_some() => {
            read_streamed_tests(&doc, streamed.unwrap_or_default(), tests_line)?
        }
        None => Tests::of([empty_test(tests_line)]),
        // No test at all (a tests file that is not there): promptfoo runs one empty test.
        Some(v) => match read_tests(&doc, v, tests_line)? {
            tests if tests.is_empty() => Tests::of([empty_test(tests_line)]),
            tests => tests,
        },
    };
    for test in scenario_tests {
        tests.push(test);
    }
    tests.seal();
    // defaultTest under each test, then list-valued vars expanded into one test each. The
    // tests are taken one at a time, and each one's cases are built (and checked), kept
    // deflated (`StoredCases`) and dropped: a file's cases are whole again one at a time,
    // when each one runs.
    let several_prompts = prompts.len() > 1;
    if several_prompts {
        for (i, prompt) in prompts.iter_mut().enumerate() {
            if prompt.label == prompt.template {
                prompt.label = format!("prompt {}", i + 1);
            }
        }
    }
    let labels = (
        super::unique_labels(prompts.iter().map(|p| p.label.as_str())),
        super::unique_labels(providers.iter().map(|p| p.label.as_str())),
    );
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut n = 0;
    let mut transformer: Option<super::vars_transform::VarsTransformer> = None;
    let mut stored = StoredCases::new(&doc.base, &prompts, &providers, &labels);
    for test in tests.iter() {
        let test = match &default {
            Some(d) => merge(d, test),
            None => test,
        };
        let combinations = if test.no_expansion {
            vec![test.vars.clone()]
        } else {
            cartesian(&test.vars, &test.order)
        };
        // `options.repeat`: every combination's rows again, as promptfoo repeats them.
        let repeated = combinations
            .iter()
            .cycle()
            .take(combinations.len() * test.repeat.unwrap_or(1))
            .cloned()
            .collect::<Vec<_>>();
        for mut vars in repeated {
            prompt::trim_vars(&mut vars);
            let mut order = test.order.clone();
            // Code that makes vars (`transformVars`, `file://` code vars) fails at the test.
            let at_test = |message: String| SuiteFileError::At {
                file: doc.path.display().to_string(),
                line: test.line,
                column: 1,
                message,
            };
            if let Some(code) = &test.transform_vars {
                let made = transformer
                    .get_or_insert_with(|| super::vars_transform::VarsTransformer::new(&doc.base))
                    .apply(code, &vars)
                    .map_err(|e| at_test(format!("transformVars: {e}")))?;
                order.extend(made.keys().filter(|k| !vars.contains_key(*k)).cloned());
                vars = made;
            }
            // Vars written `file://x.js` / `file://x.py` are computed by their code, with the
            // first prompt's template, as promptfoo computes them when it renders it.
            let code_vars: Vec<(String, String)> = vars
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .filter(|(_, v)| is_code_var(v))
                .collect();
            for (name, reference) in code_vars {
                let template = prompts.first().map(|p| p.template.as_str()).unwrap_or("");
                let provider = providers.first().map(|p| p.id.as_str()).unwrap_or("");
                let made = transformer
                    .get_or_insert_with(|| super::vars_transform::VarsTransformer::new(&doc.base))
                    .var(&name, &reference, template, &vars, provider)
                    .map_err(|e| at_test(format!("the var `{name}` ({reference}): {e}")))?;
                vars.insert(name, made);
            }
            let test = Test {
                vars,
                order,
                ..test.clone()
            };
            let mut cases = Vec::new();
            cases_of(
                &doc,
                &mut cases,
                &mut seen,
                n,
                &test,
                (&prompts, &labels.0),
                (&providers, &labels.1),
            )?;
            stored.push(cases);
            n += 1;
        }
    }
    suite.stored = Some(stored.finish(n));
    Ok(suite)
}

/// The cases of one test: one per prompt and provider, named and placed in the matrix (their
/// `position` is written when each is made to run, [`position`]: the count of tests it names
/// is known once every test is read).
fn cases_of(
    doc: &Doc<'_>,
    cases: &mut Vec<SuiteCase>,
    seen: &mut BTreeMap<String, usize>,
    n: usize,
    test: &Test,
    (prompts, prompt_labels): (&[Prompt], &[String]),
    (providers, provider_labels): (&[Arc<super::ProviderSpec>], &[String]),
) -> Result<(), SuiteFileError> {
    let path = doc.path;
    let several_prompts = prompts.len() > 1;
    let several_providers = providers.len() > 1;
    let base_name = test
        .description
        .clone()
        .unwrap_or_else(|| format!("test {}", n + 1))
        .replace("::", ":");
    if let Some(only) = &test.providers.only {
        providers::check_filter(only, providers).map_err(|e| SuiteFileError::At {
            file: path.display().to_string(),
            line: test.line,
            column: 1,
            message: e.to_string(),
        })?;
    }
    let (asserts, graded, unknown) = assertions(test, doc.notes, &doc.base)?;
    let asserts = super::Packed::new(&asserts);
    let vars = super::Packed::ordered(&test.vars, &test.order);
    let first = cases.len();
    for (p, prompt) in prompts.iter().enumerate() {
        // A prompt function makes its prompt when the case runs. A template that cannot be
        // rendered errors its cases when they run, and the file's other cases run, as promptfoo
        // errors that prompt's rows and runs the others.
        let (rendered, prompt_error) = match &prompt.function {
            Some(_) => (String::new(), None),
            None => match prompt::render(&affixed(&prompt.template, &test.affixes), &test.vars) {
                Ok(rendered) => (rendered, None),
                Err(e) => (
                    String::new(),
                    Some(Arc::<str>::from(format!(
                        "{}: prompt {:?} for {base_name:?}: {e}",
                        path.display(),
                        prompt.label
                    ))),
                ),
            },
        };
        for (q, provider) in providers.iter().enumerate() {
            if !test.providers.allows(provider) {
                continue;
            }
            let mut labels = Vec::new();
            if several_prompts {
                labels.push(prompt.label.replace("::", ":"));
            }
            if several_providers {
                labels.push(provider.label.replace("::", ":"));
            }
            let mut name = base_name.clone();
            if !labels.is_empty() {
                name = format!("{name} [{}]", labels.join(", "));
            }
            let count = seen.entry(name.clone()).or_insert(0);
            *count += 1;
            if *count > 1 {
                name = format!("{name} ({count})");
            }
            cases.push(SuiteCase {
                name,
                line: test.line,
                prompt: rendered.clone(),
                prompt_function: prompt.function.clone(),
                load_error: prompt_error.clone().or_else(|| unknown.clone()),
                // A test's own `provider` is called instead of the suite's, in its column.
                provider: test
                    .providers
                    .provider
                    .clone()
                    .unwrap_or_else(|| provider.clone()),
                vars: vars.clone(),
                asserts: asserts.clone(),
                graded: graded.clone(),
                transform: test.transform.clone(),
                threshold: test.threshold,
                judge: test.judge.clone(),
                embedding: test.embedding.clone(),
                select_best: None,
                fixed_output: test.provider_output.clone(),
                base_dir: doc.base.clone(),
                expected_output: None,
                criteria: None,
                trajectories: Vec::new(),
                agentv: None,
                matrix: MatrixCell::new(
                    n + 1,
                    base_name.clone(),
                    (p + 1, prompt_labels[p].clone()),
                    (q + 1, provider_labels[q].clone()),
                )
                .columns(prompts.len() * providers.len()),
                position: String::new(),
            });
        }
    }
    if let Some(item) = graded.iter().find(|g| g.kind == GradedKind::SelectBest) {
        // The test's cases in promptfoo's order (provider by provider, then prompt), which
        // the grader's index follows.
        let n = providers.len();
        let order: Vec<usize> = (0..n)
            .flat_map(|q| (0..prompts.len()).map(move |p| first + p * n + q))
            .collect();
        let group = super::select_best::Group::new(
            item.value.clone(),
            item.judge.clone().or_else(|| test.judge.clone()),
            super::GradedInput::rubric_prompt(item.prompt.as_ref()).map(str::to_string),
            order.iter().map(|i| cases[*i].clone()).collect(),
        );
        for (index, i) in order.iter().enumerate() {
            cases[*i].select_best = Some((group.clone(), index));
        }
    }
    Ok(())
}

/// Where case `(n, p, q)` sits among the `total` tests, in words: its eval's description.
fn position(
    n: usize,
    total: usize,
    (p, prompt): (usize, &Prompt),
    (q, provider): (usize, &super::ProviderSpec),
) -> String {
    format!(
        "promptfoo test {} of {}, prompt {} ({}), provider {} ({})",
        n + 1,
        total,
        p + 1,
        excerpt(&prompt.label),
        q + 1,
        provider.label
    )
}

/// Replaces every `{$ref: "#/a/b"}` with the part of the document it points at (promptfoo
/// dereferences its config, as JSON Schema does; `assertionTemplates` is where suites keep
/// the items they reuse). A reference to another file, or to nothing, is an error.
fn resolve_refs(doc: &Doc<'_>, value: &mut Value) -> Result<(), SuiteFileError> {
    fn walk(
        doc: &Doc<'_>,
        root: &Value,
        value: &mut Value,
        at: &mut Vec<OwnedStep>,
        depth: usize,
    ) -> Result<(), SuiteFileError> {
        if let Value::Object(map) = value
            && let Some(target) = map.get("$ref")
        {
            let mut ref_at = at.clone();
            ref_at.push(key("$ref"));
            let Some(pointer) = target.as_str().and_then(|t| t.strip_prefix('#')) else {
                return Err(doc.err(
                        &ref_at,
                        format!(
                            "`$ref: {target}` is not supported: niceeval follows references within the file (`#/assertionTemplates/<name>`)"
                        ),
                    ));
            };
            let Some(found) = root.pointer(pointer) else {
                return Err(doc.err(
                    &ref_at,
                    format!("`$ref: {target}` points at nothing in this file"),
                ));
            };
            if depth > 32 {
                return Err(doc.err(&ref_at, "`$ref` references form a cycle"));
            }
            let mut found = found.clone();
            // Keys beside `$ref` override the referenced ones.
            if let Value::Object(extra) = value.clone()
                && let Value::Object(target) = &mut found
            {
                for (k, v) in extra {
                    if k != "$ref" {
                        target.insert(k, v);
                    }
                }
            }
            *value = found;
            return walk(doc, root, value, at, depth + 1);
        }
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    at.push(OwnedStep::Key(k.clone()));
                    walk(doc, root, v, at, depth)?;
                    at.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter_mut().enumerate() {
                    at.push(OwnedStep::Index(i));
                    walk(doc, root, v, at, depth)?;
                    at.pop();
                }
            }
            _ => {}
        }
        Ok(())
    }
    if !value.to_string().contains("\"$ref\"") {
        return Ok(());
    }
    let root = value.clone();
    walk(doc, &root, value, &mut Vec::new(), 0)
}

fn excerpt(text: &str) -> String {
    niceeval::__workspace::excerpt::elide(&text.replace('\n', " "), 40)
}

/// The test's items rendered with its vars and split into checks and judge calls; invalid
/// items are errors at the place they were written.
/// Also the error of the test's items of unknown types, which promptfoo's run gives their
/// rows (the file's other tests run).
type Items = (Vec<AssertSpec>, Vec<Graded>, Option<Arc<str>>);

fn assertions(test: &Test, notes: Option<&Notes>, base: &Path) -> Result<Items, SuiteFileError> {
    let mut unknown: Vec<String> = Vec::new();
    let mut asserts = Vec::new();
    let mut graded = Vec::new();
    for (item, origin) in &test.asserts {
        let fail = |message: String| SuiteFileError::At {
            file: origin.file.display().to_string(),
            line: origin.line,
            column: origin.column,
            message,
        };
        // What niceeval cannot run is reported with the file's other refusals; the item is
        // left out meanwhile.
        let refuse = |message: String| match notes {
            Some(notes) => {
                notes.refuse(fail(message));
                Ok(())
            }
            None => Err(fail(message)),
        };
        let Value::Object(map) = item else {
            return Err(fail(format!(
                "an assertion is a mapping with a `type`, not {item}"
            )));
        };
        let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
        let mut map = map.clone();
        if matches!(
            kind.strip_prefix("not-").unwrap_or(kind),
            "is-json" | "contains-json"
        ) && let Some(Value::String(reference)) = map.get("value")
            && reference.starts_with("file://")
        {
            let schema =
                schema_file(base, &origin.file, reference).map_err(|e| fail(e.to_string()))?;
            map.insert("value".into(), schema);
        }
        if let Some(value) = map
            .get("value")
            .filter(|_| !matches!(kind, "javascript" | "python"))
        {
            let rendered =
                template::render_value(value, &test.vars).map_err(|e| fail(e.to_string()))?;
            map.insert("value".into(), rendered);
        }
        let base = origin.file.parent().unwrap_or(Path::new("."));
        // promptfoo: an item's `rubricPrompt` over the test's.
        let rubric_prompt = match map.get("rubricPrompt") {
            Some(p) => Some(super::graders::load_prompt(p, base).map_err(|e| fail(e.to_string()))?),
            None => test.rubric_prompt.clone(),
        };
        if kind == "select-best" {
            let Some(criteria) = map.get("value").and_then(Value::as_str) else {
                return Err(fail("`select-best` needs a `value`: the criteria".into()));
            };
            graded.push(Graded {
                kind: GradedKind::SelectBest,
                value: criteria.to_string(),
                expected: Vec::new(),
                prompt: super::GradedInput::of(rubric_prompt, None),
                threshold: None,
                weight: None,
                metric: None,
                judge: match map.get("provider") {
                    None => None,
                    Some(p) => {
                        super::graders::read(p, &origin.file)
                            .map_err(|e| fail(e.to_string()))?
                            .text
                    }
                },
                inverse: false,
                rag: None,
            });
            continue;
        }
        if let Some(metric) = super::rag::Metric::of(kind) {
            match rag_item(&map, kind, metric, rubric_prompt, &origin.file, &fail)? {
                Ok(item) => graded.push(item),
                Err(message) => refuse(message)?,
            }
            continue;
        }
        if let Some(metric) = super::graders::Metric::of(kind) {
            graded.push(similar(&map, kind, metric, base, &fail)?);
            continue;
        }
        let (inverse, bare) = match kind.strip_prefix("not-") {
            Some(rest) if GRADED.iter().any(|(n, _)| *n == rest) => (true, rest),
            _ => (false, kind),
        };
        if let Some((_, g)) = GRADED.iter().find(|(name, _)| *name == bare) {
            // g-eval's criteria: one text, or a list graded one by one.
            let criteria: Vec<String> = match map.get("value") {
                Some(Value::Array(items)) if *g == GradedKind::GEval => items
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .collect(),
                _ => Vec::new(),
            };
            let value = match map.get("value") {
                Some(Value::Array(_)) if *g == GradedKind::GEval => String::new(),
                // A rubric in a file, as promptfoo reads it (`value: file://rubric.txt`).
                Some(Value::String(s)) if s.starts_with("file://") => {
                    let base = origin.file.parent().unwrap_or(Path::new("."));
                    let path = super::file_path(base, s);
                    std::fs::read_to_string(&path)
                        .map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?
                }
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                // With a `rubricPrompt`, the prompt may hold all the grader needs.
                None if rubric_prompt.is_some() => String::new(),
                None => {
                    refuse(format!("`{kind}` needs a `value`"))?;
                    continue;
                }
            };
            if let Some(message) = unsupported_key(&map, kind, &["rubricPrompt", "transform"]) {
                refuse(message)?;
                continue;
            }
            let judge = match map.get("provider") {
                None => None,
                Some(p) => {
                    super::graders::read(p, &origin.file)
                        .map_err(|e| fail(e.to_string()))?
                        .text
                }
            };
            let transform = match map.get("transform") {
                None => None,
                Some(Value::String(code)) => Some(code.clone()),
                Some(_) => return Err(fail(format!("`transform` on `{kind}` is code, a string"))),
            };
            graded.push(Graded {
                kind: *g,
                expected: match *g {
                    GradedKind::GEval if criteria.is_empty() => vec![value.clone()],
                    _ => criteria,
                },
                value,
                // promptfoo's g-eval has prompts of its own.
                prompt: super::GradedInput::of(
                    rubric_prompt.filter(|_| kind != "g-eval"),
                    transform,
                ),
                threshold: map.get("threshold").and_then(Value::as_f64),
                weight: map.get("weight").and_then(Value::as_f64),
                metric: map
                    .get("metric")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                judge,
                inverse,
                rag: None,
            });
            continue;
        }
        let bare = kind.strip_prefix("not-").unwrap_or(kind);
        if let Some((name, why)) = NOT_RUN.iter().find(|(name, _)| *name == bare) {
            refuse(format!(
                "assertion type `{kind}` is not supported: `{name}` is {why}"
            ))?;
            continue;
        }
        if let Some(notes) = notes
            && !niceeval::__workspace::expect::is_builtin_type(kind)
            && !is_custom(kind, origin.file.parent().unwrap_or(Path::new(".")))
        {
            let normalized = kind.trim().to_ascii_lowercase().replace('_', "-");
            let (prefix, bare) = match normalized.strip_prefix("not-") {
                Some(rest) => ("not-", rest),
                None => ("", normalized.as_str()),
            };
            let types = valid_types();
            let hint = niceeval::__workspace::suggest::closest(bare, types.iter().copied())
                .map(|near| format!("; did you mean `{prefix}{near}`?"))
                .unwrap_or_default();
            let error = fail(format!("unknown assertion type `{kind}`{hint}"));
            unknown.push(error.to_string());
            notes.unknown_type(kind);
            continue;
        }
        let spec = AssertSpec::from_item(Value::Object(map)).map_err(|e| fail(e.to_string()))?;
        let base = origin.file.parent().map(Path::to_path_buf);
        // A JavaScript `transform` runs before the item (see `run`): the item is checked
        // without it.
        let mut checked = spec.clone();
        if super::is_js_transform(&checked) {
            checked.transform = None;
        }
        niceeval::spec::validate_in(std::slice::from_ref(&checked), base.as_deref()).map_err(
            |e| {
                let mut message = e.to_string().replacen("assertion #0 ", "assertion ", 1);
                if message.contains("unknown assertion type") {
                    message.push_str(&format!(
                        "; in a suite file also the graded types {}",
                        GRADED
                            .iter()
                            .map(|(name, _)| *name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                fail(message)
            },
        )?;
        asserts.push(spec);
    }
    let unknown = (!unknown.is_empty()).then(|| Arc::<str>::from(unknown.join("; ")));
    Ok((asserts, graded, unknown))
}

/// The JSON Schema of an `is-json` / `contains-json` item given as `file://schema.json` (or
/// `.yaml`): relative to the config's directory as promptfoo reads it, else to the file that
/// names it (a tests file elsewhere).
fn schema_file(base: &Path, naming: &Path, reference: &str) -> Result<Value, SchemaFileError> {
    let beside = naming.parent().map(|dir| super::file_path(dir, reference));
    let path = std::iter::once(super::file_path(base, reference))
        .chain(beside)
        .find(|p| p.is_file())
        .ok_or_else(|| SchemaFileError::Missing {
            reference: reference.to_string(),
            base: base.to_path_buf(),
        })?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("json" | "yaml" | "yml") => Ok(super::read_data(&path)?),
        _ => Err(SchemaFileError::Kind(reference.to_string())),
    }
}

/// Why the schema file of an `is-json` / `contains-json` item cannot be used; the reader's
/// error is kept.
#[derive(Debug, thiserror::Error)]
enum SchemaFileError {
    /// Neither beside the config nor beside the file naming it.
    #[error("the schema {reference} does not exist (looked in {})", .base.display())]
    Missing { reference: String, base: PathBuf },
    /// The file cannot be read, or does not parse.
    #[error(transparent)]
    Data(#[from] super::DataFileError),
    /// Another kind of file.
    #[error("the schema {0} is not a .json, .yaml or .yml file")]
    Kind(String),
}

/// A `similar` item: the texts compared (a list passes on any), the threshold (promptfoo's
/// default 0.75) and the embedding grader named on it.
fn similar(
    map: &Map<String, Value>,
    kind: &str,
    metric: super::graders::Metric,
    base: &Path,
    fail: &dyn Fn(String) -> SuiteFileError,
) -> Result<Graded, SuiteFileError> {
    if let Some(message) = unsupported_key(map, kind, &[]) {
        return Err(fail(message));
    }
    let text = |v: &Value| -> Result<String, SuiteFileError> {
        match v {
            Value::String(s) if s.starts_with("file://") => {
                let path = super::file_path(base, s);
                std::fs::read_to_string(&path)
                    .map_err(|e| fail(format!("cannot read {}: {e}", path.display())))
            }
            Value::String(s) => Ok(s.clone()),
            other => Ok(other.to_string()),
        }
    };
    let expected = match map.get("value") {
        Some(Value::Array(items)) if !items.is_empty() => {
            items.iter().map(text).collect::<Result<Vec<_>, _>>()?
        }
        Some(v @ Value::String(_)) => vec![text(v)?],
        _ => {
            return Err(fail(format!(
                "`{kind}` needs a `value`: the text, or a list of texts, to compare with"
            )));
        }
    };
    let judge = match map.get("provider") {
        None => None,
        Some(p) => {
            let graders = super::graders::read(p, base).map_err(|e| fail(e.to_string()))?;
            // A chat grader here is no embedding model: promptfoo falls back to its default.
            graders.embedding
        }
    };
    Ok(Graded {
        kind: GradedKind::Similar {
            metric,
            inverse: kind.starts_with("not-"),
        },
        value: expected[0].clone(),
        expected,
        prompt: None,
        threshold: Some(map.get("threshold").and_then(Value::as_f64).unwrap_or(0.75)),
        weight: map.get("weight").and_then(Value::as_f64),
        metric: map
            .get("metric")
            .and_then(Value::as_str)
            .map(str::to_string),
        judge,
        inverse: false,
        rag: None,
    })
}

/// A retrieval or conversation metric's item (`context-recall`, …, `not-` forms): its value
/// (the expected answer of `context-recall`), threshold (promptfoo's default 0.5),
/// `contextTransform`, `config.windowSize` and graders. `Ok(Err(message))`: a key niceeval
/// does not read, refused with the file's others.
fn rag_item(
    map: &Map<String, Value>,
    kind: &str,
    metric: super::rag::Metric,
    rubric_prompt: Option<String>,
    file: &Path,
    fail: &dyn Fn(String) -> SuiteFileError,
) -> Result<Result<Graded, String>, SuiteFileError> {
    if let Some(message) =
        unsupported_key(map, kind, &["rubricPrompt", "contextTransform", "config"])
    {
        return Ok(Err(message));
    }
    let value = match map.get("value") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    if metric == super::rag::Metric::ContextRecall && value.is_empty() {
        return Err(fail(
            "`context-recall` needs a `value`: the expected answer or fact to find in the context"
                .into(),
        ));
    }
    let context_transform = match map.get("contextTransform") {
        None => None,
        Some(Value::String(code)) => Some(code.clone()),
        Some(_) => {
            return Err(fail(format!(
                "`contextTransform` on `{kind}` is code, a string"
            )));
        }
    };
    let window = match map.get("config").and_then(|c| c.get("windowSize")) {
        None | Some(Value::Null) => super::rag::DEFAULT_WINDOW,
        Some(v) => match v.as_u64() {
            Some(n) if n > 0 => n as usize,
            _ => {
                return Err(fail(format!(
                    "`config.windowSize` on `{kind}` is a whole number above 0, not {v}"
                )));
            }
        },
    };
    let graders = match map.get("provider") {
        None => super::graders::Graders::default(),
        Some(p) => super::graders::read(p, file).map_err(|e| fail(e.to_string()))?,
    };
    Ok(Ok(Graded {
        kind: GradedKind::Rag(metric),
        value,
        expected: Vec::new(),
        prompt: super::GradedInput::of(rubric_prompt, None),
        threshold: map.get("threshold").and_then(Value::as_f64),
        weight: map.get("weight").and_then(Value::as_f64),
        metric: map
            .get("metric")
            .and_then(Value::as_str)
            .map(str::to_string),
        judge: graders.text,
        inverse: kind.starts_with("not-"),
        rag: Some(Box::new(super::RagItem {
            context_transform,
            window,
            embedding: graders.embedding,
        })),
    }))
}

/// Whether a var's value names code that computes it (`file://x.js`, `.cjs`, `.mjs`, `.py`).
fn is_code_var(value: &str) -> bool {
    value.starts_with("file://")
        && [".js", ".cjs", ".mjs", ".py"]
            .iter()
            .any(|e| value.ends_with(e))
}

/// A prompt's template with a test's `prefix` and `suffix` around it.
fn affixed<'a>(
    template: &'a str,
    (prefix, suffix): &(Option<String>, Option<String>),
) -> std::borrow::Cow<'a, str> {
    if prefix.is_none() && suffix.is_none() {
        return std::borrow::Cow::Borrowed(template);
    }
    std::borrow::Cow::Owned(format!(
        "{}{template}{}",
        prefix.as_deref().unwrap_or(""),
        suffix.as_deref().unwrap_or("")
    ))
}

/// The test of a file without tests: no vars, no items (the default test's apply).
fn empty_test(line: usize) -> Test {
    Test {
        description: None,
        vars: Map::new(),
        order: Vec::new(),
        asserts: Vec::new(),
        transform: None,
        transform_vars: None,
        affixes: (None, None),
        no_expansion: false,
        no_default_asserts: false,
        repeat: None,
        provider_output: None,
        judge: None,
        embedding: None,
        rubric_prompt: None,
        threshold: None,
        providers: TestProviders::default(),
        line,
    }
}

/// A test under `defaultTest`: its vars over the default's, the default's items first.
pub(crate) fn merge(default: &Test, test: Test) -> Test {
    let mut vars = default.vars.clone();
    vars.extend(test.vars);
    let mut order = default.order.clone();
    order.extend(
        test.order
            .into_iter()
            .filter(|k| !default.vars.contains_key(k)),
    );
    let no_default_asserts = test.no_default_asserts || default.no_default_asserts;
    let mut asserts = if no_default_asserts {
        Vec::new()
    } else {
        default.asserts.clone()
    };
    asserts.extend(test.asserts);
    Test {
        description: test.description,
        vars,
        order,
        asserts,
        transform: test.transform.or_else(|| default.transform.clone()),
        transform_vars: test
            .transform_vars
            .or_else(|| default.transform_vars.clone()),
        affixes: (
            test.affixes.0.or_else(|| default.affixes.0.clone()),
            test.affixes.1.or_else(|| default.affixes.1.clone()),
        ),
        no_expansion: test.no_expansion || default.no_expansion,
        no_default_asserts,
        repeat: test.repeat.or(default.repeat),
        provider_output: test.provider_output,
        judge: test.judge.or_else(|| default.judge.clone()),
        embedding: test.embedding.or_else(|| default.embedding.clone()),
        rubric_prompt: test.rubric_prompt.or_else(|| default.rubric_prompt.clone()),
        threshold: test.threshold.or(default.threshold),
        providers: test.providers.over(&default.providers),
        line: test.line,
    }
}

/// Whether a list var runs its test once per item: promptfoo expands a list whose first item
/// is a string; any other list (of objects, numbers, or empty) is one value, given whole.
fn expands(items: &[Value]) -> bool {
    matches!(items.first(), Some(Value::String(_)))
}

/// One set of vars per combination of the list-valued vars (promptfoo runs a test once per
/// value of a list of strings).
fn cartesian(vars: &Map<String, Value>, order: &[String]) -> Vec<Map<String, Value>> {
    let mut out = vec![Map::new()];
    let written = order.iter().filter_map(|k| vars.get_key_value(k));
    let rest = vars.iter().filter(|(k, _)| !order.contains(k));
    for (k, v) in written.chain(rest) {
        match v {
            Value::Array(items) if expands(items) => {
                out = out
                    .into_iter()
                    .flat_map(|m| {
                        items.iter().map(move |item| {
                            let mut m = m.clone();
                            m.insert(k.clone(), item.clone());
                            m
                        })
                    })
                    .collect();
            }
            other => {
                for m in &mut out {
                    m.insert(k.clone(), other.clone());
                }
            }
        }
    }
    out
}

/// Expands a `file://` reference, globs included, into its files (sorted).
fn files(doc: &Doc<'_>, at: &[OwnedStep], reference: &str) -> Result<Vec<PathBuf>, SuiteFileError> {
    let path = super::file_path(&doc.base, reference);
    let text = path.display().to_string();
    if text.contains(['*', '?', '[']) {
        let mut found: Vec<PathBuf> = glob::glob(&text)
            .map_err(|e| doc.err(at, format!("bad glob {reference:?}: {e}")))?
            .filter_map(Result::ok)
            .collect();
        found.sort();
        if found.is_empty() {
            return Err(doc.err(at, format!("{reference:?} matches no file")));
        }
        Ok(found)
    } else if path.exists() {
        Ok(vec![path])
    } else {
        Err(doc.err(
            at,
            format!("{reference:?}: no such file ({})", path.display()),
        ))
    }
}

fn read_text(doc: &Doc<'_>, at: &[OwnedStep], path: &Path) -> Result<String, SuiteFileError> {
    std::fs::read_to_string(path)
        .map_err(|e| doc.err(at, format!("cannot read {}: {e}", path.display())))
}

fn read_prompts(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<Vec<Prompt>, SuiteFileError> {
    let mut out = Vec::new();
    match value {
        Value::String(s) => prompt_item(doc, at, s, None, &mut out)?,
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let at = with(at, OwnedStep::Index(i));
                match item {
                    Value::String(s) => prompt_item(doc, &at, s, None, &mut out)?,
                    Value::Object(map) => {
                        doc.keys(&at, map, &["raw", "id", "label"], "a prompt")?;
                        let label = map.get("label").and_then(Value::as_str);
                        match (
                            map.get("raw").and_then(Value::as_str),
                            map.get("id").and_then(Value::as_str),
                        ) {
                            // `raw` is read as a string prompt is: `raw: file://x.txt` (or a
                            // bare path) as that file, as promptfoo does.
                            (Some(raw), _) => prompt_item(doc, &at, raw, label, &mut out)?,
                            // Without `raw`, promptfoo reads the `id` as the prompt: a file
                            // (`file://…` or a bare path) or the text itself.
                            (None, Some(id)) => prompt_item(doc, &at, id, label, &mut out)?,
                            _ => {
                                return Err(doc.err(
                                    &at,
                                    "a prompt object needs `raw` (the template) or `id`, as promptfoo requires",
                                ));
                            }
                        }
                    }
                    _ => {
                        return Err(
                            doc.err(&at, "a prompt is text, file://… or a mapping with `raw`")
                        );
                    }
                }
            }
        }
        Value::Object(map) => {
            for (file, label) in map {
                let at = with(at, OwnedStep::Key(file.clone()));
                prompt_item(doc, &at, file, label.as_str(), &mut out)?;
            }
        }
        _ => return Err(doc.err(at, "`prompts` is a list of prompts")),
    }
    Ok(out)
}

/// Fails on a chat prompt (a JSON list of messages) that niceeval cannot send: one with
/// earlier assistant turns, or not exactly one user message. `what` names the prompt.
fn chat_prompt(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    template: &str,
    what: &str,
) -> Result<(), SuiteFileError> {
    agents::chat_messages(template)
        .map(drop)
        .map_err(|e| doc.err(at, format!("{what}: {e}")))
}

fn prompt_item(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    text: &str,
    label: Option<&str>,
    out: &mut Vec<Prompt>,
) -> Result<(), SuiteFileError> {
    if !text.starts_with("file://") && names_file(text) {
        // `prompt.txt`, `prompts/*.txt`, `prompts.py:fn`: promptfoo reads a prompt that
        // names a file as that file, and one that only looks like a path as nothing.
        match bare_path(doc, text) {
            Some(true) => return prompt_item(doc, at, &format!("file://{text}"), label, out),
            Some(false) => {}
            None => {
                return Err(doc.err(
                    at,
                    format!(
                        "there are no prompts in {text:?}: a one-line prompt with `/`, `\\` or `*`, or a dot three or four characters from its end, is read as a file path (as promptfoo reads it), and no such file exists; write the prompt over two lines (`|` block) to have it read as text"
                    ),
                ));
            }
        }
    }
    let Some(reference) = text.strip_prefix("file://") else {
        chat_prompt(doc, at, text, "the prompt")?;
        out.push(Prompt {
            label: label.unwrap_or(text).to_string(),
            template: text.to_string(),
            function: None,
        });
        return Ok(());
    };
    if let Some(function) = PromptFunction::parse(&doc.base, reference) {
        let function = function.map_err(|e| doc.err(at, format!("prompt {text}: {e}")))?;
        out.push(Prompt {
            label: label.unwrap_or(reference).to_string(),
            template: String::new(),
            function: Some(Arc::new(function)),
        });
        return Ok(());
    }
    if reference.ends_with(".ts") || reference.contains(".ts:") {
        return Err(doc.err(
            at,
            format!("prompt functions in TypeScript ({text}) are not supported; supported: .js, .cjs, .mjs and .py"),
        ));
    }
    for file in files(doc, at, text)? {
        let content = read_text(doc, at, &file)?;
        let shown = file
            .strip_prefix(&doc.base)
            .unwrap_or(&file)
            .display()
            .to_string();
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        let templates: Vec<String> = match ext {
            "json" => vec![content],
            // Chat messages as JSON text with their keys in the written order, as promptfoo
            // reads a YAML prompt file.
            "yaml" | "yml" => vec![yaml_as_json(&file, &content)?],
            // promptfoo splits a text file at its `---` lines and trims each prompt.
            "txt" => {
                let mut prompts = Vec::new();
                let mut buffer: Vec<&str> = Vec::new();
                for line in content.lines().chain(std::iter::once("---")) {
                    if line.trim() == "---" {
                        let prompt = buffer.join("\n").trim().to_string();
                        if !prompt.is_empty() {
                            prompts.push(prompt);
                        }
                        buffer.clear();
                    } else {
                        buffer.push(line);
                    }
                }
                prompts
            }
            // A Markdown or Jinja file is one prompt, its text as written (its last newline
            // included).
            _ => vec![content],
        };
        let several = templates.len() > 1;
        for (i, template) in templates.into_iter().enumerate() {
            let label = match (label, several) {
                (Some(l), false) => l.to_string(),
                (Some(l), true) => format!("{l} #{}", i + 1),
                (None, false) => shown.clone(),
                (None, true) => format!("{shown} #{}", i + 1),
            };
            chat_prompt(doc, at, &template, &shown)?;
            out.push(Prompt {
                label,
                template,
                function: None,
            });
        }
    }
    Ok(())
}

/// A YAML file as JSON text, its keys in the order they were written.
fn yaml_as_json(path: &Path, text: &str) -> Result<String, SuiteFileError> {
    let bad = |message: String| SuiteFileError::File {
        file: path.display().to_string(),
        message,
    };
    let mut value: yaml_serde::Value =
        yaml_serde::from_str(text).map_err(|e| bad(format!("not valid YAML: {e}")))?;
    value
        .apply_merge()
        .map_err(|e| bad(format!("not valid YAML: {e}")))?;
    serde_json::to_string(&value).map_err(|e| bad(format!("cannot read the YAML as data: {e}")))
}

/// Whether a prompt's text is a path to a prompt file (one line, a known extension, with an
/// optional `:function`) rather than a template.
/// The extensions promptfoo's prompt loader knows a file by (its `VALID_FILE_EXTENSIONS`).
const PROMPT_EXTENSIONS: &[&str] = &[
    ".cjs", ".cts", ".j2", ".js", ".json", ".jsonl", ".md", ".mjs", ".mts", ".py", ".ts", ".txt",
    ".yml", ".yaml",
];

/// promptfoo's `maybeFilePath`: a one-line prompt is read as a path when it starts with
/// `file://`, names a file of a known extension (`x.py`, `x.py:fn`), has a dot third or
/// fourth from its end, or holds `*`, `/` or `\`.
fn names_file(text: &str) -> bool {
    if text.contains('\n')
        || ["portkey://", "langfuse://", "helicone://"]
            .iter()
            .any(|scheme| text.contains(scheme))
    {
        return false;
    }
    if text.starts_with("file://") {
        return true;
    }
    let tokens: Vec<&str> = text.split(':').collect();
    let last = tokens.last().copied().unwrap_or("");
    let before = tokens.len().checked_sub(2).map(|i| tokens[i]);
    let from_end = |n: usize| text.chars().rev().nth(n - 1);
    PROMPT_EXTENSIONS
        .iter()
        .any(|e| last.ends_with(e) || before.is_some_and(|b| b.ends_with(e)))
        || from_end(3) == Some('.')
        || from_end(4) == Some('.')
        || text.contains(['*', '/', '\\'])
}

/// How promptfoo reads a prompt that [`names_file`] takes for a path: `Some(true)` as the
/// file (a known extension, or a glob that matches), `Some(false)` as its text (a glob that
/// matches nothing), `None`: as nothing at all (promptfoo's "There are no prompts in …").
fn bare_path(doc: &Doc<'_>, text: &str) -> Option<bool> {
    // `x.py:fn` names a function of a JavaScript, Python, Go or Ruby file.
    let path = match text.rsplit_once(':') {
        Some((p, _))
            if [
                ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".py", ".go", ".rb",
            ]
            .iter()
            .any(|e| p.ends_with(e)) =>
        {
            p
        }
        _ => text,
    };
    let full = doc.base.join(path);
    if path.contains(['*', '?', '[']) || full.is_dir() {
        let pattern = full.display().to_string();
        let matched = glob::glob(&pattern)
            .map(|mut found| found.any(|f| f.is_ok()))
            .unwrap_or(false);
        return Some(matched);
    }
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}"));
    match ext {
        Some(e) if PROMPT_EXTENSIONS.contains(&e.as_str()) || e == ".csv" => Some(true),
        _ if full.is_file() => Some(true),
        _ => None,
    }
}

fn read_tests(doc: &Doc<'_>, value: &Value, line: usize) -> Result<Tests, SuiteFileError> {
    let at = vec![key("tests")];
    let mut out = Tests::default();
    match value {
        Value::String(_) => read_tests_item(doc, &at, value, line, true, &mut out)?,
        Value::Array(list) => {
            for (i, item) in list.iter().enumerate() {
                read_tests_item(
                    doc,
                    &with(&at, OwnedStep::Index(i)),
                    item,
                    line,
                    false,
                    &mut out,
                )?;
            }
        }
        _ => return Err(doc.err(&at, "`tests` is a list of tests or file://…")),
    }
    Ok(out)
}

/// [`read_tests`] over the items [`super::stream`] took out of the document, each parsed
/// when its turn comes and dropped after.
fn read_streamed_tests(
    doc: &Doc<'_>,
    items: super::stream::Items,
    line: usize,
) -> Result<Tests, SuiteFileError> {
    let at = vec![key("tests")];
    let mut out = Tests::default();
    for (i, item) in items.iter().enumerate() {
        let at = with(&at, OwnedStep::Index(i));
        let value: Value = serde_json::from_str(&item.text)
            .map_err(|e| doc.err(&at, format!("cannot read the test again: {e}")))?;
        *doc.streamed.item.borrow_mut() = item.places.map(|places| (i, places));
        let read = read_tests_item(doc, &at, &value, line, false, &mut out);
        *doc.streamed.item.borrow_mut() = None;
        read?;
    }
    Ok(out)
}

/// One item of `tests`: a test, or the file(s) of tests it names.
/// One item of `tests`. `standalone`: `tests` is this one file (not a list), which promptfoo
/// reads as a standalone tests file: a JSON or JSONL item without a description is named by
/// its row (`Row #3`), as every CSV row is.
fn read_tests_item(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    item: &Value,
    line: usize,
    standalone: bool,
    out: &mut Tests,
) -> Result<(), SuiteFileError> {
    {
        match item {
            // `file://tests.csv`, or the bare path (`tests.csv`, `tests/*.yaml`): promptfoo
            // reads every string in `tests` as a file.
            Value::String(reference) => {
                let reference = if reference.starts_with("file://") {
                    reference.clone()
                } else {
                    format!("file://{reference}")
                };
                // promptfoo warns of a tests file that is not there and runs on without it.
                let path = super::file_path(&doc.base, &reference);
                let pattern = path.display().to_string();
                let missing = if pattern.contains(['*', '?', '[']) {
                    glob::glob(&pattern).map_or(true, |mut found| found.next().is_none())
                } else {
                    !path.exists()
                };
                if missing && let Some(notes) = doc.notes {
                    notes.notice(format!(
                        "no test file found for {reference}; its tests are left out (promptfoo runs on without them too)"
                    ));
                    return Ok(());
                }
                for file in files(doc, at, &reference)? {
                    tests_file(doc, at, &file, standalone, out)?;
                }
            }
            Value::Object(map) => out.push(read_test(doc, at, map, None, line)?),
            _ => {
                return Err(doc.err(
                    at,
                    "a test is a mapping (description, vars, assert) or file://…",
                ));
            }
        }
    }
    Ok(())
}

/// The tests of a CSV, JSONL, JSON or YAML file, appended to `out`.
fn tests_file(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    file: &Path,
    standalone: bool,
    out: &mut Tests,
) -> Result<(), SuiteFileError> {
    let csv = file.extension().is_some_and(|e| e == "csv");
    let (text, mut records) = match yaml_tests(file) {
        Some((text, items, lines)) => (text, FileRecords::Yaml(items, lines)),
        None => {
            let cases = niceeval_dataset::read(file).map_err(|e| doc.err(at, e.to_string()))?;
            // A CSV or JSONL file is not one YAML document: nothing is placed in its text
            // (a JSONL file's items have their line and column 1 either way).
            let jsonl = file.extension().is_some_and(|e| e == "jsonl");
            let text = if csv || jsonl {
                String::new()
            } else {
                read_text(doc, at, file)?
            };
            let cases = cases
                .into_iter()
                .map(|case| (case.line, Box::<str>::from(case.record), None))
                .collect();
            (text, FileRecords::Dataset(cases))
        }
    };
    let cases: Box<dyn Iterator<Item = FileTest> + '_> = match &mut records {
        FileRecords::Yaml(items, lines) => Box::new(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| (lines.get(i).copied().unwrap_or(1), item.text, item.places)),
        ),
        FileRecords::Dataset(cases) => Box::new(cases.drain(..)),
    };
    // `file://` paths inside a tests file are the config's, as promptfoo reads them (its one
    // base path, the config's folder), not the tests file's.
    let sub = Doc {
        path: file,
        text: &text,
        base: doc.base.clone(),
        positions: Default::default(),
        notes: doc.notes,
        streamed: StreamedPlaces {
            root_list: true,
            ..StreamedPlaces::default()
        },
    };
    for (i, (line, record, places)) in cases.enumerate() {
        let Ok(Value::Object(record)) = serde_json::from_str::<Value>(&record) else {
            continue;
        };
        *sub.streamed.item.borrow_mut() = places.map(|places| (i, places));
        let located = |message: String| SuiteFileError::At {
            file: file.display().to_string(),
            line,
            column: 1,
            message,
        };
        let map = if csv {
            // A row: its columns are vars, but for promptfoo's special columns.
            let mut test = Map::new();
            let mut vars = Map::new();
            for (k, v) in record {
                match k.as_str() {
                    "assert" | "description" => {
                        test.insert(k, v);
                    }
                    // An empty cell sets no threshold.
                    "__threshold" if v.as_str().is_some_and(|s| s.trim().is_empty()) => {}
                    "__threshold" => {
                        let th = v
                            .as_str()
                            .and_then(|s| s.trim().parse::<f64>().ok())
                            .ok_or_else(|| {
                                located(format!("`__threshold` is a number, not {v}"))
                            })?;
                        test.insert("threshold".into(), th.into());
                    }
                    k if k.starts_with("__metadata") => {}
                    k if k.starts_with("__") => {
                        return Err(located(format!(
                            "the column `{k}` is not supported; supported special columns: __expected, __expectedN, __description, __threshold, __metadata:NAME"
                        )));
                    }
                    _ => {
                        vars.insert(k, v);
                    }
                }
            }
            test.insert("vars".into(), Value::Object(vars));
            // promptfoo names a row without `__description` by its number.
            test.entry("description")
                .or_insert_with(|| Value::String(format!("Row #{}", i + 1)));
            test
        } else {
            let mut record = record;
            // promptfoo names an item of a standalone JSON or JSONL tests file without a
            // description by its number, as a CSV row.
            if standalone
                && file
                    .extension()
                    .is_some_and(|e| e == "jsonl" || e == "json")
            {
                record
                    .entry("description")
                    .or_insert_with(|| Value::String(format!("Row #{}", i + 1)));
            }
            record
        };
        let test_at = [OwnedStep::Index(i)];
        let test = read_test(&sub, &test_at, &map, Some(line), line).map_err(|e| match e {
            SuiteFileError::File { message, .. } => located(message),
            other => other,
        })?;
        out.push(test);
    }
    Ok(())
}

/// A test of a tests file: its line, its record as JSON text, its places when known.
type FileTest = (usize, Box<str>, Option<super::stream::Places>);

/// The tests of a tests file: a YAML file's items deflated as they were read (with each one's
/// line), or the records `niceeval_dataset` read.
enum FileRecords {
    Yaml(super::stream::Items, Vec<usize>),
    Dataset(Vec<FileTest>),
}

/// A YAML tests file read one item at a time, with each item's places (as
/// `niceeval_dataset` reads it: `<<` kept as a key, lines from its `- ` items); `None` leaves
/// it to `niceeval_dataset`, which holds the whole file as YAML events and values, and
/// refuses what it refuses: not a list, an empty one, an item that is not a mapping, `id`s.
fn yaml_tests(file: &Path) -> Option<(String, super::stream::Items, Vec<usize>)> {
    if !matches!(
        file.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    ) {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let read = super::stream::read_with(&text, super::stream::Split::Root, false)?;
    let items = read.tests?;
    if items.is_empty() {
        return None;
    }
    for item in items.iter() {
        match serde_json::from_str::<Value>(&item.text) {
            Ok(Value::Object(map)) if !map.contains_key("id") => {}
            _ => return None,
        }
    }
    let lines = niceeval_dataset::yaml_item_lines(&text);
    Some((text, items, lines))
}

/// One test mapping (or `defaultTest`).
pub(crate) fn read_test(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
    line_of_record: Option<usize>,
    line: usize,
) -> Result<Test, SuiteFileError> {
    doc.keys(at, map, TEST_KEYS, "a test")?;
    let line = line_of_record
        .or_else(|| (at.len() == 2).then(|| doc.position(&steps(at)).map(|p| p.0))?)
        .unwrap_or(line);
    let description = match map.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let mut vars = Map::new();
    match map.get("vars") {
        None | Some(Value::Null) => {}
        Some(Value::Object(v)) => {
            for (name, value) in v {
                let at = with(&with(at, key("vars")), OwnedStep::Key(name.clone()));
                vars.insert(name.clone(), var_value(doc, &at, value)?);
            }
        }
        Some(_) => {}
    }
    // Where each var was written: list-valued vars expand in that order, and prompt
    // functions see the vars in it, as in promptfoo.
    let mut order = Vec::new();
    if vars.len() > 1 && doc.has_text() {
        let mut placed: Vec<((usize, usize), String)> = vars
            .keys()
            .map(|name| {
                let mut steps = steps(at);
                steps.push(Step::Key("vars"));
                steps.push(Step::Key(name.as_str()));
                let place = doc.position(&steps).unwrap_or((usize::MAX, usize::MAX));
                (place, name.clone())
            })
            .collect();
        placed.sort();
        order = placed.into_iter().map(|(_, name)| name).collect();
    }
    match map.get("vars") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(Value::String(s)) if s.starts_with("file://") => {
            return Err(doc.err(
                &with(at, key("vars")),
                "vars from a file are not supported; write them inline",
            ));
        }
        Some(_) => return Err(doc.err(&with(at, key("vars")), "`vars` is a mapping")),
    }
    let mut asserts = Vec::new();
    match map.get("assert") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let item_at = with(&with(at, key("assert")), OwnedStep::Index(i));
                // The item's own place, in a YAML or JSON tests file too.
                let found = doc
                    .has_text()
                    .then(|| doc.position(&steps(&item_at)))
                    .flatten();
                let origin = if let Some((line, column)) = found {
                    Origin {
                        file: doc.path.to_path_buf(),
                        line,
                        column,
                    }
                } else if line_of_record.is_some() || !doc.has_text() {
                    Origin {
                        file: doc.path.to_path_buf(),
                        line,
                        column: 1,
                    }
                } else {
                    match doc.err(&item_at, "") {
                        SuiteFileError::At { line, column, .. } => Origin {
                            file: doc.path.to_path_buf(),
                            line,
                            column,
                        },
                        _ => Origin {
                            file: doc.path.to_path_buf(),
                            line,
                            column: 1,
                        },
                    }
                };
                asserts.push((item.clone(), origin));
            }
        }
        Some(_) => {
            return Err(doc.err(&with(at, key("assert")), "`assert` is a list of assertions"));
        }
    }
    let mut transform = None;
    let mut transform_vars = None;
    let mut affixes = (None, None);
    let mut no_expansion = false;
    let mut no_default_asserts = false;
    let mut repeat = None;
    let mut judge = None;
    let mut embedding = None;
    let mut rubric_prompt = None;
    match map.get("options") {
        None | Some(Value::Null) => {}
        Some(Value::Object(options)) => {
            let at = with(at, key("options"));
            doc.keys(&at, options, OPTION_KEYS, "options")?;
            // `postprocess` is promptfoo's older name of `transform`.
            let written = ["transform", "postprocess"]
                .into_iter()
                .find_map(|k| options.get(k).map(|t| (k, t)));
            if let Some((name, t)) = written {
                match t.as_str() {
                    Some(code) => transform = Some(code.to_string()),
                    None => {
                        return Err(doc.err(
                            &with(&at, key(name)),
                            "`transform` is JavaScript (text) or file://… (.js, .cjs, .mjs, .py)",
                        ));
                    }
                }
            }
            let text = |name: &str| -> Result<Option<String>, SuiteFileError> {
                match options.get(name) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(t)) => Ok(Some(t.clone())),
                    Some(_) => Err(doc.err(&with(&at, key(name)), format!("`{name}` is text"))),
                }
            };
            affixes = (text("prefix")?, text("suffix")?);
            let flag = |name: &str| -> Result<bool, SuiteFileError> {
                match options.get(name) {
                    None | Some(Value::Null) => Ok(false),
                    Some(Value::Bool(b)) => Ok(*b),
                    Some(_) => {
                        Err(doc.err(&with(&at, key(name)), format!("`{name}` is true or false")))
                    }
                }
            };
            no_expansion = flag("disableVarExpansion")?;
            no_default_asserts = flag("disableDefaultAsserts")?;
            repeat = match options.get("repeat") {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(n) if n > 0 => Some(n as usize),
                    _ => {
                        return Err(doc.err(
                            &with(&at, key("repeat")),
                            format!("`repeat` is a whole number above 0, not {v}"),
                        ));
                    }
                },
            };
            match options.get("transformVars") {
                None | Some(Value::Null) => {}
                Some(Value::String(code)) => transform_vars = Some(code.clone()),
                Some(_) => {
                    return Err(doc.err(
                        &with(&at, key("transformVars")),
                        "`transformVars` is JavaScript (text) or file://….js",
                    ));
                }
            }
            if let Some(p) = options.get("provider") {
                let graders = super::graders::read(p, doc.path)
                    .map_err(|e| doc.err(&with(&at, key("provider")), e.to_string()))?;
                judge = graders.text;
                embedding = graders.embedding;
            }
            if let Some(p) = options.get("rubricPrompt") {
                rubric_prompt = Some(
                    super::graders::load_prompt(p, &doc.base)
                        .map_err(|e| doc.err(&with(&at, key("rubricPrompt")), e.to_string()))?,
                );
            }
        }
        Some(_) => return Err(doc.err(&with(at, key("options")), "`options` is a mapping")),
    }
    let threshold = match map.get("threshold") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| doc.err(&with(at, key("threshold")), "`threshold` is a number"))?,
        ),
    };
    let mut providers = TestProviders::default();
    if let Some(v) = map.get("provider").filter(|v| !v.is_null()) {
        providers.provider = Some(providers::read_test_provider(
            doc,
            &with(at, key("provider")),
            v,
        )?);
    }
    if let Some(v) = map.get("providers").filter(|v| !v.is_null()) {
        providers.only = Some(providers::read_filter(doc, &with(at, key("providers")), v)?);
    }
    Ok(Test {
        description,
        vars,
        order,
        asserts,
        transform,
        transform_vars,
        affixes,
        no_expansion,
        no_default_asserts,
        repeat,
        provider_output: match map.get("providerOutput") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(Arc::from(text.as_str())),
            Some(other) => Some(Arc::from(other.to_string().as_str())),
        },
        judge,
        embedding,
        rubric_prompt,
        threshold,
        providers,
        line,
    })
}

/// A var's value: `file://` text (or JSON / YAML data) loaded, anything else as written.
fn var_value(doc: &Doc<'_>, at: &[OwnedStep], value: &Value) -> Result<Value, SuiteFileError> {
    match value {
        Value::String(s) if s.starts_with("file://") => {
            let path = super::file_path(&doc.base, s);
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if ext == "ts" {
                return Err(doc.err(at, format!("vars computed by TypeScript ({s}) are not supported; write the file in JavaScript (.js, .cjs, .mjs) or Python")));
            }
            if matches!(ext, "py" | "js" | "mjs" | "cjs") {
                // Computed by its code when the cases are made (`vars_transform`).
                if !path.is_file() {
                    return Err(doc.err(at, format!("{s}: no such file ({})", path.display())));
                }
                return Ok(value.clone());
            }
            if path.display().to_string().contains(['*', '?', '[']) {
                // A glob: one value per file (so one test per file), as promptfoo does.
                let mut values = Vec::new();
                for file in files(doc, at, s)? {
                    values.push(var_value(
                        doc,
                        at,
                        &Value::String(format!("file://{}", file.display())),
                    )?);
                }
                return Ok(Value::Array(values));
            }
            // An image or a video is its bytes in base64 (no `data:` prefix), as promptfoo
            // loads it for a vision prompt.
            const MEDIA: &[&str] = &[
                "jpg", "jpeg", "png", "gif", "bmp", "webp", "svg", "mp4", "webm", "ogg", "mov",
                "avi", "wmv", "mkv", "m4v",
            ];
            if MEDIA.contains(&ext.to_ascii_lowercase().as_str()) {
                use base64::Engine as _;
                let bytes = std::fs::read(&path)
                    .map_err(|e| doc.err(at, format!("cannot read {}: {e}", path.display())))?;
                return Ok(Value::String(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                ));
            }
            let content = read_text(doc, at, &path)?;
            match ext {
                "json" => serde_json::from_str(&content)
                    .map_err(|e| doc.err(at, format!("{}: not JSON: {e}", path.display()))),
                "yaml" | "yml" => parse_yaml(&path, &content),
                // promptfoo trims a text file's var.
                _ => Ok(Value::String(content.trim().to_string())),
            }
        }
        Value::Array(items) => Ok(Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| var_value(doc, &with(at, OwnedStep::Index(i)), v))
                .collect::<Result<_, _>>()?,
        )),
        other => Ok(other.clone()),
    }
}

/// The keys every graded item may carry.
const GRADED_KEYS: &[&str] = &[
    "type",
    "value",
    "threshold",
    "weight",
    "metric",
    "provider",
    "description",
];

/// The refusal of a graded item's first key outside [`GRADED_KEYS`] and `extra`.
fn unsupported_key(map: &Map<String, Value>, kind: &str, extra: &[&str]) -> Option<String> {
    let allowed: Vec<&str> = GRADED_KEYS.iter().chain(extra).copied().collect();
    let k = map.keys().find(|k| !allowed.contains(&k.as_str()))?;
    Some(format!(
        "`{k}` on a `{kind}` assertion is not supported; supported: {}",
        allowed.join(", ")
    ))
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_lists_of_strings_expand_as_promptfoo_expands_them() {
        let vars = json!({
            "q": ["a", "b"],
            "messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "bye"}],
            "n": [1, 2, 3],
            "none": [],
        });
        let vars = vars.as_object().unwrap();
        let made = cartesian(vars, &[]);
        assert_eq!(made.len(), 2);
        for m in &made {
            assert_eq!(
                m["messages"], vars["messages"],
                "a list of objects is one value"
            );
            assert_eq!(m["n"], json!([1, 2, 3]), "a list of numbers is one value");
            assert_eq!(m["none"], json!([]));
        }
        assert_eq!(made[0]["q"], "a");
        assert_eq!(made[1]["q"], "b");
    }
}
