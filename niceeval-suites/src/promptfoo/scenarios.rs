//! promptfoo's `scenarios`: each scenario's `config` (a list of test-like entries: vars,
//! items, options) crossed with its `tests`, as promptfoo's evaluator expands them. Each pair
//! is one test: the entry's vars under the test's, the entry's items before the test's, the
//! test's description (else the entry's); `defaultTest` then applies as to every test.

use serde_json::{Map, Value};

use super::{Doc, OwnedStep, Test, merge, read_test};
use crate::SuiteFileError;
use crate::parse_yaml;

const SCENARIO_KEYS: &[&str] = &["config", "tests", "description"];

/// The tests of `scenarios` (the value of the key), in order: scenario by scenario, entry by
/// entry of its `config`, test by test.
pub(crate) fn read(doc: &Doc<'_>, value: &Value) -> Result<Vec<Test>, SuiteFileError> {
    let at = vec![OwnedStep::Key("scenarios".into())];
    let Value::Array(items) = value else {
        return Err(doc.err(&at, "`scenarios` is a list of {config, tests}"));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = with(&at, OwnedStep::Index(i));
        match item {
            Value::Object(map) => out.extend(scenario(doc, &at, map)?),
            // `file://scenarios.yaml`: a scenario, or a list of them.
            Value::String(reference) => {
                let path = crate::file_path(&doc.base, reference);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| doc.err(&at, format!("cannot read {}: {e}", path.display())))?;
                let sub = Doc {
                    path: &path,
                    text: &text,
                    // Paths in it are the config's, as promptfoo reads them.
                    base: doc.base.clone(),
                    positions: Default::default(),
                    notes: doc.notes,
                    streamed: Default::default(),
                };
                let list = match parse_yaml(&path, &text)? {
                    Value::Array(list) => list,
                    other => vec![other],
                };
                for (j, entry) in list.iter().enumerate() {
                    let Value::Object(map) = entry else {
                        return Err(sub.err(
                            &[OwnedStep::Index(j)],
                            "a scenario is a mapping (config, tests)",
                        ));
                    };
                    out.extend(scenario(&sub, &[OwnedStep::Index(j)], map)?);
                }
            }
            _ => return Err(doc.err(&at, "a scenario is a mapping (config, tests) or file://…")),
        }
    }
    Ok(out)
}

fn scenario(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
) -> Result<Vec<Test>, SuiteFileError> {
    doc.keys(at, map, SCENARIO_KEYS, "a scenario")?;
    let entries = list(
        doc,
        &with(at, OwnedStep::Key("config".into())),
        map.get("config"),
        true,
    )?;
    let tests = list(
        doc,
        &with(at, OwnedStep::Key("tests".into())),
        map.get("tests"),
        false,
    )?;
    let mut out = Vec::new();
    for (entry_at, entry) in &entries {
        let data = read_test(doc, entry_at, entry, None, line(doc, entry_at))?;
        if tests.is_empty() {
            out.push(data.clone());
        }
        for (test_at, test) in &tests {
            let test = read_test(doc, test_at, test, None, line(doc, test_at))?;
            let description = test
                .description
                .clone()
                .or_else(|| data.description.clone());
            let mut merged = merge(&data, test);
            merged.description = description;
            out.push(merged);
        }
    }
    Ok(out)
}

/// A mapping with where it is.
type Placed<'v> = (Vec<OwnedStep>, &'v Map<String, Value>);

/// The mappings of a scenario's `config` or `tests` with where each is.
fn list<'v>(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: Option<&'v Value>,
    required: bool,
) -> Result<Vec<Placed<'v>>, SuiteFileError> {
    let what = match at.last() {
        Some(OwnedStep::Key(k)) => k.clone(),
        _ => String::new(),
    };
    match value {
        None | Some(Value::Null) if !required => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let at = with(at, OwnedStep::Index(i));
                match item {
                    Value::Object(map) => Ok((at, map)),
                    _ => Err(doc.err(
                        &at,
                        format!("each of a scenario's `{what}` is a mapping (vars, assert, …)"),
                    )),
                }
            })
            .collect(),
        // A missing key is pointed at on its scenario.
        None => Err(doc.err(
            &at[..at.len().saturating_sub(1)],
            format!("a scenario's `{what}` is a list of mappings (vars, assert, …)"),
        )),
        _ => Err(doc.err(
            at,
            format!("a scenario's `{what}` is a list of mappings (vars, assert, …)"),
        )),
    }
}

fn line(doc: &Doc<'_>, at: &[OwnedStep]) -> usize {
    doc.position(&super::steps(at)).map_or(1, |p| p.0)
}

fn with(at: &[OwnedStep], seg: OwnedStep) -> Vec<OwnedStep> {
    let mut v = at.to_vec();
    v.push(seg);
    v
}
