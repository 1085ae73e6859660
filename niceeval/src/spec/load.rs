//! Reading assertion lists from YAML or JSON: a bare list, or a mapping holding one under
//! `assert` (promptfoo, AgentV) or `assertions` (Runsight, AgentV).

use std::path::Path;

use serde_json::Value;

use super::locate::{self, Source};
use super::{AssertSpec, Location, SpecError};

/// Parses assertions from YAML (JSON is YAML too, so this reads both).
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
pub fn from_value(value: Value, origin: &str) -> Result<Vec<AssertSpec>, SpecError> {
    let specs = parse_list(value, origin, &|_| None)?;
    super::validate_in(&specs, None)?;
    Ok(specs)
}

/// Parses `source`, turns it into assertions and checks them, locating every error in the text.
fn read(
    source: Source<'_>,
    origin: &str,
    base_dir: Option<&Path>,
) -> Result<Vec<AssertSpec>, SpecError> {
    let parsed = match source {
        Source::Yaml(text) => {
            yaml_serde::from_str(text).map_err(|e| locate::yaml_error(&e, origin))
        }
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
