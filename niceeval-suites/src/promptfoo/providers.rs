//! promptfoo's providers as its loader reads them (0.123.1's `loadApiProviders`): a list of ids,
//! `{id, label, config}` mappings and `{<id>: {label, config}}` maps, where any entry may be a
//! providers file (`file://providers.yaml`, `.yml`, `.json`) holding one provider or a list;
//! and a test's own `provider` (the target it calls instead of each suite provider) and
//! `providers` (the suite providers it runs against, by label, id, `prefix*` or `prefix:`).
//! A test's `options.provider` is its grader, read with the other options.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::{Doc, OwnedStep, key, with};
use crate::SuiteFileError;
use crate::agents::{self, ProviderSpec};
use crate::parse_yaml;

/// The keys of a provider mapping niceeval reads; the others go to [`super::promptfoo_keys`].
const PROVIDER_KEYS: &[&str] = &["id", "label", "config", "transform"];

/// What a test asks of the providers.
#[derive(Debug, Clone, Default)]
pub(crate) struct TestProviders {
    /// `provider`: called instead of each suite provider.
    pub provider: Option<Arc<ProviderSpec>>,
    /// `providers`: the suite providers the test runs against (`None`: all).
    pub only: Option<Vec<String>>,
}

impl TestProviders {
    /// The test's own over the default test's, as promptfoo merges them.
    pub(crate) fn over(self, default: &TestProviders) -> TestProviders {
        TestProviders {
            provider: self.provider.or_else(|| default.provider.clone()),
            only: self.only.or_else(|| default.only.clone()),
        }
    }

    /// Whether the test runs against `provider` (promptfoo's `isProviderAllowed`).
    pub(crate) fn allows(&self, provider: &ProviderSpec) -> bool {
        match &self.only {
            None => true,
            Some(refs) => refs.iter().any(|r| matches(r, provider)),
        }
    }
}

/// promptfoo's `doesProviderRefMatch`: the label, the id (`openai:chat:m` and `openai:m` are
/// one model), `prefix*`, or `ref:` followed by more.
fn matches(reference: &str, provider: &ProviderSpec) -> bool {
    let canonical = |id: &str| {
        id.replacen("openai:chat:", "openai:", 1)
            .replacen("anthropic:messages:", "anthropic:", 1)
    };
    let id = provider.id.as_str();
    let label = provider.label.as_str();
    let (cid, cref) = (canonical(id), canonical(reference));
    if label == reference || id == reference || cid == cref {
        return true;
    }
    if let Some(prefix) = reference.strip_suffix('*')
        && (label.starts_with(prefix) || id.starts_with(prefix) || cid.starts_with(prefix))
    {
        return true;
    }
    let with_colon = format!("{reference}:");
    label.starts_with(&with_colon) || id.starts_with(&with_colon) || cid.starts_with(&with_colon)
}

/// Whether `id` names a providers file rather than a provider.
fn is_file(id: &str) -> bool {
    id.starts_with("file://") && [".yaml", ".yml", ".json"].iter().any(|e| id.ends_with(e))
}

/// A suite's `providers` (or `targets`).
pub(crate) fn read_providers(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<Vec<Arc<ProviderSpec>>, SuiteFileError> {
    let mut out = Vec::new();
    match value {
        Value::String(_) | Value::Object(_) => out.extend(entry(doc, at, value)?),
        Value::Array(list) => {
            for (i, item) in list.iter().enumerate() {
                out.extend(entry(doc, &with(at, OwnedStep::Index(i)), item)?);
            }
        }
        _ => return Err(doc.err(at, "`providers` is a list of providers")),
    }
    if out.is_empty() {
        return Err(doc.err(at, "`providers` names no provider"));
    }
    Ok(out)
}

/// A test's `provider`: one provider (a providers file holding one).
pub(crate) fn read_test_provider(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<Arc<ProviderSpec>, SuiteFileError> {
    let mut found = entry(doc, at, value)?;
    if found.len() != 1 {
        return Err(doc.err(
            at,
            format!(
                "a test's `provider` is one provider; this names {} (promptfoo: \"Multiple providers found\")",
                found.len()
            ),
        ));
    }
    Ok(found.remove(0))
}

/// A test's `providers`: a list of references.
pub(crate) fn read_filter(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
) -> Result<Vec<String>, SuiteFileError> {
    let Value::Array(list) = value else {
        return Err(doc.err(
            at,
            "a test's `providers` is a list of provider labels or ids (promptfoo: \"providers must be an array\")",
        ));
    };
    list.iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Ok(s.clone()),
            _ => Err(doc.err(
                &with(at, OwnedStep::Index(i)),
                "a provider label or id (text)",
            )),
        })
        .collect()
}

/// A test's `providers` naming no provider of the suite.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the test's `providers` names \"{reference}\", which is no provider of the suite; available providers: {}",
    .available.join(", ")
)]
pub(crate) struct UnknownProvider {
    /// The reference as written.
    reference: String,
    /// Each provider, as `label (id)` or its id.
    available: Vec<String>,
}

/// Fails on a reference of a test's `providers` that matches no suite provider, as promptfoo
/// does before it runs anything.
pub(crate) fn check_filter(
    only: &[String],
    providers: &[Arc<ProviderSpec>],
) -> Result<(), UnknownProvider> {
    for reference in only {
        if !providers.iter().any(|p| matches(reference, p)) {
            let available: Vec<String> = providers
                .iter()
                .map(|p| {
                    if p.label != p.id {
                        format!("{} ({})", p.label, p.id)
                    } else {
                        p.id.clone()
                    }
                })
                .collect();
            return Err(UnknownProvider {
                reference: reference.clone(),
                available,
            });
        }
    }
    Ok(())
}

/// One entry of a providers list: an id, a mapping, or a providers file (one or more).
fn entry(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    item: &Value,
) -> Result<Vec<Arc<ProviderSpec>>, SuiteFileError> {
    let file_ref = match item {
        Value::String(id) if is_file(id) => Some(id.as_str()),
        Value::Object(map) => map
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| is_file(id)),
        _ => None,
    };
    if let Some(reference) = file_ref {
        return providers_file(doc, at, reference);
    }
    // promptfoo's provider `transform`: applied to every output of the provider, before a
    // test's own `options.transform`.
    let transform = match item {
        Value::Object(map) => {
            let options = match map.get("id") {
                Some(_) => Some(map),
                None => map.values().next().and_then(Value::as_object),
            };
            match options.and_then(|o| o.get("transform")) {
                None | Some(Value::Null) => None,
                Some(Value::String(code)) => Some(code.clone()),
                Some(_) => {
                    return Err(doc.err(
                        &with(at, key("transform")),
                        "a provider's `transform` is JavaScript or file://… (text)",
                    ));
                }
            }
        }
        _ => None,
    };
    let (id, label, config) = match item {
        Value::String(id) => (id.clone(), None, None),
        Value::Object(map) if map.contains_key("id") => {
            doc.keys(at, map, PROVIDER_KEYS, "a provider")?;
            let Some(id) = map.get("id").and_then(Value::as_str) else {
                return Err(doc.err(&with(at, key("id")), "a provider's `id` is text"));
            };
            (
                id.to_string(),
                map.get("label").and_then(Value::as_str).map(str::to_string),
                map.get("config").cloned(),
            )
        }
        // `{ "openai:gpt-4o": { config: .. } }`.
        Value::Object(map) if map.len() == 1 => {
            let (id, inner) = map
                .iter()
                .next()
                .map(|(k, v)| (k.clone(), v.clone()))
                .unwrap_or_default();
            let at = with(at, OwnedStep::Key(id.clone()));
            let Value::Object(inner) = inner else {
                return Err(doc.err(
                    &at,
                    "a provider mapping's value is its options (label, config)",
                ));
            };
            doc.keys(&at, &inner, PROVIDER_KEYS, "a provider")?;
            (
                inner
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or(id, str::to_string),
                inner
                    .get("label")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                inner.get("config").cloned(),
            )
        }
        _ => return Err(doc.err(at, "a provider is an id or a mapping with `id`")),
    };
    // promptfoo renders a provider's id as a template before reading it (`{{ env.MODEL }}`).
    let id = crate::template::render(&id, &serde_json::Map::new())
        .map_err(|e| doc.err(&id_place(at, item), format!("the provider id {id:?}: {e}")))?;
    let mut spec = agents::parse(&id, label.as_deref(), config.as_ref(), &doc.base).map_err(
        |(k, message)| {
            let at = match k {
                Some(k) => with(&with(at, key("config")), OwnedStep::Key(k)),
                None => at.to_vec(),
            };
            doc.err(&at, message)
        },
    )?;
    if let Some(notes) = doc.notes {
        for notice in &spec.notices {
            notes.notice(notice.clone());
        }
    }
    spec.transform = transform;
    Ok(vec![Arc::new(spec)])
}

/// Where a provider's id is written: its `id` key, or the entry itself.
fn id_place(at: &[OwnedStep], item: &Value) -> Vec<OwnedStep> {
    match item {
        Value::Object(map) if map.contains_key("id") => with(at, key("id")),
        _ => at.to_vec(),
    }
}

/// The providers of a providers file: a list, or one provider; each with an `id`. Errors
/// point into the file; a provider's own files are found from the suite's directory, as
/// promptfoo finds them.
fn providers_file(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    reference: &str,
) -> Result<Vec<Arc<ProviderSpec>>, SuiteFileError> {
    let path: PathBuf = crate::file_path(&doc.base, reference);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        doc.err(
            at,
            format!("cannot read the providers file {}: {e}", path.display()),
        )
    })?;
    let value = parse_yaml(&path, &text)?;
    let sub = Doc {
        path: &path,
        text: &text,
        base: doc.base.clone(),
        positions: Default::default(),
        notes: doc.notes,
        streamed: Default::default(),
    };
    let items: Vec<(Vec<OwnedStep>, &Value)> = match &value {
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, v)| (vec![OwnedStep::Index(i)], v))
            .collect(),
        Value::Object(_) => vec![(Vec::new(), &value)],
        _ => {
            return Err(sub.err(
                &[],
                "a providers file holds a provider (a mapping with `id`) or a list of them",
            ));
        }
    };
    let mut out = Vec::new();
    for (at, item) in items {
        match item {
            Value::Object(map) if map.contains_key("id") && !is_file_id(map) => {
                out.extend(entry(&sub, &at, item)?);
            }
            _ => {
                return Err(sub.err(
                    &at,
                    format!(
                        "a provider in a providers file needs an `id` (promptfoo: \"Provider config in {} must have an id\")",
                        display(&path)
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// A file's provider whose `id` is itself a providers file (promptfoo does not follow it).
fn is_file_id(map: &serde_json::Map<String, Value>) -> bool {
    map.get("id").and_then(Value::as_str).is_some_and(is_file)
}

fn display(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, label: Option<&str>) -> ProviderSpec {
        agents::parse(id, label, None, Path::new(".")).unwrap()
    }

    #[test]
    fn references_match_as_promptfoo_matches_them() {
        let p = spec("openai:chat:gpt-4o-mini", Some("fast"));
        for r in [
            "fast",
            "openai:chat:gpt-4o-mini",
            "openai:gpt-4o-mini",
            "openai:*",
            "openai",
            "fa*",
        ] {
            assert!(matches(r, &p), "{r}");
        }
        for r in ["slow", "anthropic:*", "openai:gpt-4o"] {
            assert!(!matches(r, &p), "{r}");
        }
        let only = TestProviders {
            provider: None,
            only: Some(vec![]),
        };
        assert!(!only.allows(&p), "an empty list allows none");
        assert!(TestProviders::default().allows(&p));
    }
}
