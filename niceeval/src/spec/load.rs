//! Reading assertion lists from YAML or JSON: a bare list, or a mapping holding one under
//! `assert` (promptfoo, AgentV) or `assertions` (Runsight, AgentV).

use std::path::Path;

use serde_json::Value;

use super::{AssertSpec, SpecError};

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
    let value: Value = yaml_serde::from_str(text).map_err(|e| SpecError::Parse {
        origin: "YAML".to_string(),
        message: e.to_string(),
    })?;
    from_value(value, "YAML")
}

/// Parses assertions from JSON.
///
/// ```
/// let specs = niceeval::spec::from_json(r#"[{"type": "is-json"}, {"type": "regex", "value": "\\d+"}]"#).unwrap();
/// assert_eq!(specs.len(), 2);
/// ```
pub fn from_json(text: &str) -> Result<Vec<AssertSpec>, SpecError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SpecError::Parse {
        origin: "JSON".to_string(),
        message: e.to_string(),
    })?;
    from_value(value, "JSON")
}

/// Reads assertions from a `.json`, `.yaml` or `.yml` file. Custom assertion types are looked
/// up from the file's directory; pass that directory as [`super::SpecContext::base_dir`] when
/// evaluating so `file://` paths and script commands resolve from it too.
pub fn load(path: impl AsRef<Path>) -> Result<Vec<AssertSpec>, SpecError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError::Parse {
        origin: path.display().to_string(),
        message: e.to_string(),
    })?;
    let origin = path.display().to_string();
    let value: Value = if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).map_err(|e| SpecError::Parse {
            origin: origin.clone(),
            message: e.to_string(),
        })?
    } else {
        yaml_serde::from_str(&text).map_err(|e| SpecError::Parse {
            origin: origin.clone(),
            message: e.to_string(),
        })?
    };
    let specs = parse_list(value, &origin)?;
    super::validate_in(&specs, path.parent())?;
    Ok(specs)
}

/// Turns a parsed document into assertions and checks them (from the current directory).
pub fn from_value(value: Value, origin: &str) -> Result<Vec<AssertSpec>, SpecError> {
    let specs = parse_list(value, origin)?;
    super::validate_in(&specs, None)?;
    Ok(specs)
}

fn parse_list(value: Value, origin: &str) -> Result<Vec<AssertSpec>, SpecError> {
    let list = match value {
        Value::Array(items) => items,
        Value::Object(mut map) => match ["assert", "assertions"]
            .iter()
            .find_map(|k| map.remove(*k))
        {
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(SpecError::Parse {
                    origin: origin.to_string(),
                    message: format!("`assert` must be a list of assertions, got {other}"),
                })
            }
            None => {
                return Err(SpecError::Parse {
                    origin: origin.to_string(),
                    message: "expected a list of assertions, or a mapping with an `assert` or `assertions` list".to_string(),
                })
            }
        },
        Value::Null => Vec::new(),
        other => {
            return Err(SpecError::Parse {
                origin: origin.to_string(),
                message: format!("expected a list of assertions, got {other}"),
            })
        }
    };
    list.into_iter()
        .enumerate()
        .map(|(i, item)| {
            AssertSpec::from_item(item).map_err(|message| SpecError::Parse {
                origin: origin.to_string(),
                message: format!("assertion #{i}: {message}"),
            })
        })
        .collect()
}
