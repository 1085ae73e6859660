//! What a test sends: its `input` messages (text, file blocks) and AgentV's `{{ var }}`
//! templating of them.

use serde_json::{Map, Value};

use super::super::SuiteFileError;
use crate::promptfoo::{Doc, OwnedStep, key, with};

/// An `input`: text (one user message), one `{role, content}` message, or a list of them;
/// `content` is text or a list of `{type: text | file, value}` blocks, one per line (a file
/// is read from beside the eval file and wrapped in `<file path="…">`, as AgentV does).
pub(super) fn messages(
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

/// AgentV's test templating: each `{{ name }}` / `{{ a.b }}` naming a var (a dotted path into
/// it) is replaced by its value (JSON when it is not text); anything else, Jinja-looking text
/// included, stays as it is. Without vars, nothing changes.
pub(super) fn interpolate_vars(text: &str, vars: &Map<String, Value>) -> String {
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

/// `input_files` as content blocks: each file's text in `<file path="…">`, as AgentV renders
/// a file block.
pub(super) fn file_blocks(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    files: &[String],
) -> Result<String, SuiteFileError> {
    let mut parts = Vec::new();
    for f in files {
        let file = doc.base.join(f.trim_start_matches('/'));
        let content = std::fs::read_to_string(&file).map_err(|e| {
            doc.err(
                &with(at, key("input_files")),
                format!("cannot read {}: {e}", file.display()),
            )
        })?;
        parts.push(format!(
            "<file path=\"{f}\">\n{}\n</file>",
            content.trim_end_matches('\n')
        ));
    }
    Ok(parts.join("\n"))
}
