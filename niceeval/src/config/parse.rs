//! Parsing `niceeval.toml` with every error of the file reported at once.
//!
//! 1. The TOML syntax is parsed with recovery: every syntax error is reported (and nothing
//!    else, since a broken document says little about its keys).
//! 2. One pass over the parsed tables finds the keys no table takes (with a "did you mean"),
//!    and removes them.
//! 3. The rest is deserialized into [`Config`]; each error (a bad value, a wrong type, a
//!    missing key) is recorded, the key at fault removed, and deserialization tried again until
//!    it succeeds. Removing a required key (`[agent] type`, a price's `input`) makes its table
//!    fail as a whole on the next try: that consequence is not reported, the table is dropped.
//!
//! Errors are sorted by position in the file.

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::agent::{AGENT_TYPES, deserialize, keys, missing};
use super::validate::{key_name, sub_key};
use super::{AgentConfig, Config, ConfigError};
use crate::base::suggest::closest;

/// The tables of the file.
pub(super) const TABLES: &[&str] = &[
    "judge",
    "agent",
    "provider",
    "prices",
    "run",
    "report",
    "workspace",
    "compare",
    "trace",
    "results",
    "history",
];
/// The keys of `[judge]`.
pub(super) const JUDGE_KEYS: &[&str] = &[
    "model",
    "base_url",
    "api_key_env",
    "cache",
    "cache_dir",
    "timeout",
    "max_concurrency",
];
/// The keys of `[provider]`.
pub(super) const PROVIDER_KEYS: &[&str] = &["max_concurrency", "requests_per_minute"];
/// The keys of `[run]`.
pub(super) const RUN_KEYS: &[&str] = &["concurrency", "strict", "timeout", "runs", "slow_after"];
/// The keys of a `[prices."provider/model"]` entry.
pub(super) const PRICE_KEYS: &[&str] = &["input", "output", "cache_read"];
/// The keys of `[report]`.
pub(super) const REPORT_KEYS: &[&str] = &["max_text", "snapshot_reasons", "redact"];
/// The keys of `[compare]`.
pub(super) const COMPARE_KEYS: &[&str] = &[
    "fail_on",
    "alpha",
    "metric_margin",
    "tokens_margin",
    "cost_margin",
    "baseline_include",
];

/// The keys of `[trace]`.
pub(super) const TRACE_KEYS: &[&str] = &["settle", "export"];
/// The keys of `[results]`.
pub(super) const RESULTS_KEYS: &[&str] = &["keep_runs"];
/// The keys of `[history]`.
pub(super) const HISTORY_KEYS: &[&str] = &["enabled", "path"];

pub(super) const WORKSPACE_KEYS: &[&str] = &[
    "isolation",
    "network",
    "ignore",
    "keep",
    "max_files",
    "max_bytes",
];

pub(super) fn parse(text: &str, name: &str) -> Result<Config, ConfigError> {
    let (mut document, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        return Err(ConfigError::from_list(
            syntax
                .iter()
                .map(|e| located(text, name, None, e))
                .collect(),
        ));
    }
    let mut errors: Vec<ConfigError> = unknown_keys(document.get_mut())
        .into_iter()
        .map(|unknown| unknown.error(text, name))
        .collect();
    // `[agent]` is read on its own: its keys depend on its `type`.
    let agent = document
        .get_mut()
        .remove("agent")
        .and_then(|entry| read_agent(entry, text, name, &mut errors));
    let config = collect(document, text, name, &mut errors, key_name, |d| {
        serde_path_to_error::deserialize::<_, Config>(d)
    });
    match config {
        Some(mut config) if errors.is_empty() => {
            config.agent = agent;
            Ok(config)
        }
        _ => {
            errors.sort_by_key(|e| match e {
                ConfigError::Parse { line, column, .. } => (*line, *column),
                _ => (usize::MAX, usize::MAX),
            });
            errors.dedup();
            Err(ConfigError::from_list(errors))
        }
    }
}

/// A parse error at the place `e` names (the start of the file when it names none).
fn located(text: &str, name: &str, key: Option<String>, e: &toml::de::Error) -> ConfigError {
    let (line, column) = e
        .span()
        .map(|span| line_column(text, span.start))
        .unwrap_or((1, 1));
    ConfigError::Parse {
        path: name.to_string(),
        line,
        column,
        key,
        message: e.message().trim_end().to_string(),
    }
}

/// An error at byte `offset`.
fn at(text: &str, name: &str, offset: usize, key: &str, message: String) -> ConfigError {
    let (line, column) = line_column(text, offset);
    ConfigError::Parse {
        path: name.to_string(),
        line,
        column,
        key: Some(key.to_string()),
        message,
    }
}

/// Deserializes `document` with `de`; each error (a bad value, a wrong type, a missing key) is
/// recorded, the key at fault removed, and deserialization tried again until it succeeds.
/// `None` when it never does.
fn collect<'i, T>(
    mut document: Spanned<DeTable<'i>>,
    text: &str,
    name: &str,
    errors: &mut Vec<ConfigError>,
    key_of: impl Fn(&serde_path_to_error::Path) -> Option<String>,
    de: impl Fn(toml::de::Deserializer<'i>) -> Result<T, serde_path_to_error::Error<toml::de::Error>>,
) -> Option<T> {
    // Paths removed because of an error: an error on a table that lost one of its keys is that
    // removal's consequence.
    let mut removed: Vec<Vec<String>> = Vec::new();
    loop {
        let failure = match de(toml::de::Deserializer::from(document.clone())) {
            Ok(value) => return Some(value),
            Err(failure) => failure,
        };
        let path = map_path(failure.path());
        let consequence = removed
            .iter()
            .any(|r| r.len() > path.len() && r.starts_with(&path));
        if !consequence {
            errors.push(located(text, name, key_of(failure.path()), failure.inner()));
        }
        // Without progress the loop would never end; what was found is reported.
        if path.is_empty() || !remove(document.get_mut(), &path) {
            return None;
        }
        removed.push(path);
    }
}

/// Reads `[agent]`: its `type` first, then the keys that type takes (an unknown one gets a
/// "did you mean"), then their values. `None` after an error.
fn read_agent(
    entry: Spanned<DeValue<'_>>,
    text: &str,
    name: &str,
    errors: &mut Vec<ConfigError>,
) -> Option<AgentConfig> {
    let span = entry.span();
    let types = AGENT_TYPES
        .iter()
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let DeValue::Table(mut table) = entry.into_inner() else {
        errors.push(at(
            text,
            name,
            span.start,
            "[agent]",
            "expected a table with `type` and the agent's settings".to_string(),
        ));
        return None;
    };
    let kind = match table.get("type") {
        None => {
            errors.push(at(
                text,
                name,
                span.start,
                "[agent]",
                format!("missing field `type`; the agent types are {types}"),
            ));
            return None;
        }
        Some(value) => match value.get_ref() {
            DeValue::String(kind) if AGENT_TYPES.contains(&kind.as_ref()) => kind.to_string(),
            DeValue::String(kind) => {
                let message = match closest(kind, AGENT_TYPES.iter().copied()) {
                    Some(near) => format!(
                        "unknown agent type {kind:?}; did you mean \"{near}\"? (one of {types})"
                    ),
                    None => format!("unknown agent type {kind:?}; the agent types are {types}"),
                };
                errors.push(at(text, name, value.span().start, "[agent] type", message));
                return None;
            }
            _ => {
                let written = text.get(value.span()).unwrap_or("").trim();
                errors.push(at(
                    text,
                    name,
                    value.span().start,
                    "[agent] type",
                    format!("invalid type: {written}, expected a string, one of {types}"),
                ));
                return None;
            }
        },
    };
    table.remove("type");
    let (fields, required) = keys(&kind)?;
    let mut found = Vec::new();
    check_table(
        &mut table,
        "[agent]",
        fields,
        &format!("type = \"{kind}\" takes"),
        &mut found,
    );
    if matches!(kind.as_str(), "chat" | "openai" | "anthropic") {
        for unknown in &mut found {
            unknown
                .message
                .push_str(" (tools are declared in code with ChatAgent::tool)");
        }
    }
    errors.extend(found.into_iter().map(|u| u.error(text, name)));
    if required.iter().any(|key| table.get(*key).is_none()) {
        errors.push(at(text, name, span.start, "[agent]", missing(&kind)));
        return None;
    }
    collect(
        Spanned::new(span, table),
        text,
        name,
        errors,
        |path| Some(agent_key(path)),
        |d| deserialize(&kind, d),
    )
}

/// A key of `[agent]` as the file writes it: `[agent] env.HOME`.
fn agent_key(path: &serde_path_to_error::Path) -> String {
    let rest = sub_key(path);
    if rest.is_empty() {
        "[agent]".to_string()
    } else {
        format!("[agent] {rest}")
    }
}

/// A key no table takes.
struct Unknown {
    /// Byte offset of the key.
    offset: usize,
    /// As written in the file: `[run] concurency`.
    key: String,
    message: String,
}

impl Unknown {
    fn error(self, text: &str, name: &str) -> ConfigError {
        at(text, name, self.offset, &self.key, self.message)
    }
}

/// Finds and removes the keys no table takes.
fn unknown_keys(root: &mut DeTable<'_>) -> Vec<Unknown> {
    let mut found = Vec::new();
    let top: Vec<(String, usize, bool)> = root
        .iter()
        .map(|(k, v)| {
            (
                k.get_ref().to_string(),
                k.span().start,
                v.get_ref().is_table(),
            )
        })
        .collect();
    for (key, offset, is_table) in top {
        if TABLES.contains(&key.as_str()) {
            continue;
        }
        let section = [
            ("run", RUN_KEYS),
            ("judge", JUDGE_KEYS),
            ("provider", PROVIDER_KEYS),
            ("report", REPORT_KEYS),
            ("workspace", WORKSPACE_KEYS),
            ("compare", COMPARE_KEYS),
            ("trace", TRACE_KEYS),
            ("results", RESULTS_KEYS),
            ("history", HISTORY_KEYS),
        ]
        .into_iter()
        .filter(|(_, keys)| keys.contains(&key.as_str()))
        .map(|(table, _)| format!("[{table}]"))
        .collect::<Vec<_>>();
        let message = if !section.is_empty() && !is_table {
            format!(
                "unknown key `{key}` outside any table; it belongs under {}",
                section.join(" or ")
            )
        } else {
            unknown_message(&key, TABLES, "the tables are")
        };
        found.push(Unknown {
            offset,
            key: if is_table {
                format!("[{}]", super::validate::toml_key(&key))
            } else {
                super::validate::toml_key(&key)
            },
            message,
        });
        root.remove(key.as_str());
    }
    for (table, keys) in [
        ("judge", JUDGE_KEYS),
        ("provider", PROVIDER_KEYS),
        ("run", RUN_KEYS),
        ("report", REPORT_KEYS),
        ("workspace", WORKSPACE_KEYS),
        ("compare", COMPARE_KEYS),
        ("trace", TRACE_KEYS),
        ("results", RESULTS_KEYS),
        ("history", HISTORY_KEYS),
    ] {
        if let Some(DeValue::Table(t)) = root.get_mut(table).map(Spanned::get_mut) {
            let header = format!("[{table}]");
            check_table(t, &header, keys, &format!("{header} takes"), &mut found);
        }
    }
    if let Some(DeValue::Table(prices)) = root.get_mut("prices").map(Spanned::get_mut) {
        for (model, entry) in prices.iter_mut() {
            if let DeValue::Table(t) = entry.get_mut() {
                let header = format!("[prices.{}]", super::validate::toml_key(model.get_ref()));
                check_table(
                    t,
                    &header,
                    PRICE_KEYS,
                    &format!("{header} takes"),
                    &mut found,
                );
            }
        }
    }
    found
}

fn check_table(
    table: &mut DeTable<'_>,
    header: &str,
    keys: &[&str],
    valid_are: &str,
    found: &mut Vec<Unknown>,
) {
    let unknown: Vec<(String, usize)> = table
        .iter()
        .map(|(k, _)| (k.get_ref().to_string(), k.span().start))
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .collect();
    for (key, offset) in unknown {
        found.push(Unknown {
            offset,
            key: format!("{header} {}", super::validate::toml_key(&key)),
            message: unknown_message(&key, keys, valid_are),
        });
        table.remove(key.as_str());
    }
}

/// `unknown key `concurency`; did you mean `concurrency`?`, or the valid keys.
fn unknown_message(key: &str, valid: &[&str], valid_are: &str) -> String {
    match closest(key, valid.iter().copied()) {
        Some(near) => format!("unknown key `{key}`; did you mean `{near}`?"),
        None => format!(
            "unknown key `{key}`; {valid_are} {}",
            valid
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The map keys of an error's path, up to the first segment that is not one.
fn map_path(path: &serde_path_to_error::Path) -> Vec<String> {
    use serde_path_to_error::Segment;
    path.iter()
        .map_while(|segment| match segment {
            Segment::Map { key } => Some(key.clone()),
            _ => None,
        })
        .collect()
}

/// Removes the entry at `path`; whether there was one.
fn remove(table: &mut DeTable<'_>, path: &[String]) -> bool {
    match path {
        [] => false,
        [key] => table.remove(key.as_str()).is_some(),
        [key, rest @ ..] => match table.get_mut(key.as_str()).map(Spanned::get_mut) {
            Some(DeValue::Table(inner)) => remove(inner, rest),
            _ => table.remove(key.as_str()).is_some(),
        },
    }
}

pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
