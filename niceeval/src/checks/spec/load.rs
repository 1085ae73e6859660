//! Reading assertion lists from YAML or JSON: a bare list, or a mapping holding one under
//! `assert` (promptfoo, AgentV) or `assertions` (Runsight, AgentV).

use std::path::Path;

use serde_json::Value;

use super::locate::{self, Source};
use super::{AssertSpec, Location, SpecError};

/// Parses assertions from YAML (JSON is YAML too, so this reads both).
#[cfg(feature = "yaml")]
#[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
///
/// ```
/// let specs = niceeval::spec::from_yaml(r#"
/// assert:
///   - type: contains
///     value: refund
///   - type: not-icontains
///     value: sorry
///     weight: 2
/// "#).unwrap();
/// assert_eq!(specs.len(), 2);
/// assert_eq!(specs[1].kind, "not-icontains");
///
/// let err = niceeval::spec::from_yaml("- type: contans\n  value: x").unwrap_err();
/// assert!(err.to_string().contains("unknown assertion type `contans`"), "{err}");
/// ```
pub fn from_yaml(text: &str) -> Result<Vec<AssertSpec>, SpecError> {
    read(Source::Yaml(text), "YAML", None)
}

/// Parses assertions from JSON.
///
/// ```
/// let specs = niceeval::spec::from_json(r#"[{"type": "is-json"}, {"type": "regex", "value": "\\d+"}]"#).unwrap();
/// assert_eq!(specs.len(), 2);
/// ```
pub fn from_json(text: &str) -> Result<Vec<AssertSpec>, SpecError> {
    read(Source::Json(text), "JSON", None)
}

/// Reads assertions from a `.json`, `.yaml` or `.yml` file. Custom assertion types are looked
/// up from the file's directory; pass that directory as [`super::SpecContext::base_dir`] when
/// evaluating so `file://` paths and script commands resolve from it too.
///
/// Every error names the file, line and column: a parse error where the parser stopped, an
/// invalid item where the item starts (`path:7:5: assertion #2 (type `regex`): invalid regular
/// expression ...`).
pub fn load(path: impl AsRef<Path>) -> Result<Vec<AssertSpec>, SpecError> {
    let path = path.as_ref();
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError::Parse {
        origin: origin.clone(),
        location: None,
        message: e.to_string(),
    })?;
    let source = if path.extension().is_some_and(|e| e == "json") {
        Source::Json(&text)
    } else {
        Source::Yaml(&text)
    };
    read(source, &origin, path.parent())
}

/// Turns a parsed document into assertions and checks them (from the current directory).
/// A `Value` carries no positions: errors name items by their index only.
#[cfg(all(test, not(feature = "inline-code")))]
pub(crate) fn from_value(value: Value, origin: &str) -> Result<Vec<AssertSpec>, SpecError> {
    let specs = parse_list(value, origin, &|_| None)?;
    super::validate_in(&specs, None)?;
    Ok(specs)
}

/// Why a YAML document cannot be read without the `yaml` feature.
#[cfg(not(feature = "yaml"))]
pub(super) const YAML_NEEDS_FEATURE: &str = "reading YAML needs niceeval's `yaml` feature; enable it in Cargo.toml (it is on by default), or write the assertions as JSON (a .json file)";

/// Parses `source`, turns it into assertions and checks them, locating every error in the text.
fn read(
    source: Source<'_>,
    origin: &str,
    base_dir: Option<&Path>,
) -> Result<Vec<AssertSpec>, SpecError> {
    let parsed = match source {
        #[cfg(feature = "yaml")]
        Source::Yaml(text) => {
            yaml_serde::from_str(text).map_err(|e| locate::yaml_error(&e, origin))
        }
        #[cfg(not(feature = "yaml"))]
        Source::Yaml(_) => Err((None, YAML_NEEDS_FEATURE.to_string())),
        Source::Json(text) => {
            serde_json::from_str(text).map_err(|e| locate::json_error(&e, origin))
        }
    };
    let value: Value = parsed.map_err(|(location, message)| SpecError::Parse {
        origin: origin.to_string(),
        location,
        message,
    })?;
    let key = list_key(&value);
    let locate = |index: usize| locate::item(source, key, index, origin);
    let specs = parse_list(value, origin, &locate)?;
    super::validate_in(&specs, base_dir).map_err(|error| match error {
        SpecError::Invalid(items) => SpecError::Invalid(
            items
                .into_iter()
                .map(|mut item| {
                    item.location = item
                        .position
                        .strip_prefix('#')
                        .and_then(|i| i.parse().ok())
                        .and_then(locate);
                    item
                })
                .collect(),
        ),
        other => other,
    })?;
    Ok(specs)
}

/// The key holding the list in a mapping document (`assert` before `assertions`).
fn list_key(value: &Value) -> Option<&'static str> {
    let map = value.as_object()?;
    ["assert", "assertions"]
        .into_iter()
        .find(|k| map.contains_key(*k))
}

fn parse_list(
    value: Value,
    origin: &str,
    locate: &dyn Fn(usize) -> Option<Location>,
) -> Result<Vec<AssertSpec>, SpecError> {
    let error = |message: String| SpecError::Parse {
        origin: origin.to_string(),
        location: None,
        message,
    };
    let list = match value {
        Value::Array(items) => items,
        Value::Object(mut map) => {
            match ["assert", "assertions"].iter().find_map(|k| map.remove(*k)) {
                Some(Value::Array(items)) => items,
                Some(other) => {
                    return Err(error(format!(
                        "`assert` must be a list of assertions, got {other}"
                    )));
                }
                None => {
                    return Err(error(
                    "expected a list of assertions, or a mapping with an `assert` or `assertions` list".to_string(),
                ));
                }
            }
        }
        Value::Null => Vec::new(),
        other => {
            return Err(error(format!("expected a list of assertions, got {other}")));
        }
    };
    list.into_iter()
        .enumerate()
        .map(|(i, item)| {
            AssertSpec::from_item(item).map_err(|message| SpecError::Parse {
                origin: origin.to_string(),
                location: locate(i),
                message: format!("assertion #{i}: {message}"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    // The errors of disabled features; with every feature on there is nothing to test here.

    #[cfg(not(feature = "inline-code"))]
    #[test]
    fn code_types_without_the_feature_are_load_time_errors_naming_it() {
        for (kind, code) in [("javascript", "output.length > 0"), ("not-python", "True")] {
            let document = serde_json::json!([{ "type": kind, "value": code }]);
            let err = super::from_value(document, "JSON").unwrap_err().to_string();
            let name = kind.trim_start_matches("not-");
            assert_eq!(
                err,
                format!(
                    "assertion #0 (type `{kind}`): the `{name}` assertion type needs niceeval's `inline-code` feature; enable it in Cargo.toml (it is on by default)"
                )
            );
        }
    }

    #[cfg(not(feature = "json-schema"))]
    #[test]
    fn a_schema_without_the_feature_is_a_load_time_error_naming_it() {
        let err = super::from_json(r#"[{"type": "is-json", "value": {"type": "object"}}]"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("JSON:1:2: assertion #0 (type `is-json`): a JSON Schema `value` needs niceeval's `json-schema` feature"),
            "{err}"
        );
        // Without a schema, `is-json` and `contains-json` work.
        assert!(super::from_json(r#"[{"type": "is-json"}, {"type": "contains-json"}]"#).is_ok());
    }

    #[cfg(not(feature = "yaml"))]
    #[test]
    fn yaml_without_the_feature_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("asserts.yaml");
        std::fs::write(&path, "- type: contains\n  value: hi\n").unwrap();
        let err = super::load(&path).unwrap_err().to_string();
        assert!(err.contains("needs niceeval's `yaml` feature"), "{err}");
        // JSON files still load.
        let path = dir.path().join("asserts.json");
        std::fs::write(&path, r#"[{"type": "contains", "value": "hi"}]"#).unwrap();
        assert_eq!(super::load(&path).unwrap().len(), 1);
        // A schema written as YAML text is refused, as JSON text it is read.
        let err = super::from_json(r#"[{"type": "is-json", "value": "type: object"}]"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a schema written as YAML needs niceeval's `yaml` feature"),
            "{err}"
        );
    }
}
