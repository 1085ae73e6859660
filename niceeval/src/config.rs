//! `niceeval.toml`: finding it, parsing it (errors name file, line and column), and applying
//! the `NICEEVAL_*` environment overrides.
//!
//! ```toml
//! [judge]
//! model = "openai/gpt-4o-mini"
//! base_url = "http://127.0.0.1:11434/v1"
//! api_key_env = "OPENAI_API_KEY"
//! cache = "read-write"   # off | read | write | read-write
//! timeout = "60s"        # per judge request
//!
//! [agent]
//! type = "replay"
//! path = "transcripts/refund.jsonl"
//!
//! [prices."openai/gpt-4o"]
//! input = 2.5     # USD per 1M input tokens
//! output = 10.0
//!
//! [run]
//! concurrency = 8
//! strict = false
//! timeout = "2m"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The file name searched for.
pub const FILE_NAME: &str = "niceeval.toml";

/// Default per-run timeout of an eval body.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Why the configuration is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// The file is not valid TOML or does not fit the schema.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// An environment override has a bad value.
    #[error("environment variable {name}={value:?} is invalid: {message}")]
    Env {
        /// The variable.
        name: String,
        /// Its value.
        value: String,
        /// What is wrong and what is accepted.
        message: String,
    },
}

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[judge]`: the judge model for LLM-as-judge assertions.
    #[serde(default)]
    pub judge: JudgeConfig,
    /// `[agent]`: the default agent, used by evals without `agent = ..`.
    #[serde(default)]
    pub agent: Option<AgentConfig>,
    /// `[prices."provider/model"]`: USD per 1M tokens, overriding the built-in table.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// `[run]`: how evals run.
    #[serde(default)]
    pub run: RunConfig,
    /// Where the file was found (`None` when there is none).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// `[judge]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeConfig {
    /// `provider/model`, e.g. `openai/gpt-4o-mini`.
    pub model: Option<String>,
    /// Base URL of the provider's API (for OpenAI-compatible servers such as Ollama).
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Judge response cache: `off`, `read`, `write` or `read-write` (the default).
    #[serde(default)]
    pub cache: Option<crate::cache::CacheMode>,
    /// Timeout of one judge request, e.g. `"60s"` (the default).
    #[serde(default)]
    pub timeout: Option<String>,
    /// Judge requests in flight at once per provider endpoint (default 8).
    #[serde(default)]
    pub max_concurrency: Option<usize>,
}

/// `[agent]`: a default agent described as data. `type` selects the adapter; the other keys are
/// the adapter's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentConfig {
    /// `replay`, `command` or `openai`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The adapter's settings.
    #[serde(flatten)]
    pub settings: BTreeMap<String, toml::Value>,
}

/// A price entry: USD per 1M tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per 1M input tokens.
    pub input: f64,
    /// USD per 1M output tokens.
    pub output: f64,
    /// USD per 1M cache-read tokens (defaults to the input price).
    #[serde(default)]
    pub cache_read: Option<f64>,
}

/// `[run]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// How many evals the suite runner runs at once.
    pub concurrency: Option<usize>,
    /// Fail evals whose soft assertions fall below their thresholds.
    #[serde(default)]
    pub strict: bool,
    /// Per-run timeout of an eval body, e.g. `"30s"`, `"2m"`.
    pub timeout: Option<String>,
    /// Runs per eval (overridden by `#[eval(runs = ..)]`).
    pub runs: Option<u32>,
}

impl Config {
    /// Finds `niceeval.toml` in `start` or its nearest ancestor and parses it; the defaults when
    /// there is none. Environment overrides are applied.
    pub fn discover(start: &Path) -> Result<Config, ConfigError> {
        let mut config = match find(start) {
            Some(path) => Config::from_file(&path)?,
            None => Config::default(),
        };
        config.apply_env(|name| std::env::var(name).ok())?;
        Ok(config)
    }

    /// Parses one file (no environment overrides).
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let mut config = Config::parse(&text, &path.display().to_string())?;
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// Parses TOML text; `name` is used in error messages.
    ///
    /// ```
    /// use niceeval::config::Config;
    ///
    /// let err = Config::parse("[run]\nstrict = \"yes\"\n", "niceeval.toml").unwrap_err();
    /// assert!(err.to_string().starts_with("niceeval.toml:2:10:"), "{err}");
    /// ```
    pub fn parse(text: &str, name: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map(|span| line_column(text, span.start))
                .unwrap_or((1, 1));
            ConfigError::Parse {
                path: name.to_string(),
                line,
                column,
                message: e.message().to_string(),
            }
        })?;
        if let Some(timeout) = &config.run.timeout {
            parse_duration(timeout).map_err(|message| ConfigError::Parse {
                path: name.to_string(),
                line: find_line(text, "timeout"),
                column: 1,
                message: format!("[run] timeout: {message}"),
            })?;
        }
        if let Some(timeout) = &config.judge.timeout {
            parse_duration(timeout).map_err(|message| ConfigError::Parse {
                path: name.to_string(),
                line: find_line(text, "timeout"),
                column: 1,
                message: format!("[judge] timeout: {message}"),
            })?;
        }
        Ok(config)
    }

    /// Applies `NICEEVAL_STRICT`, `NICEEVAL_RUNS`, `NICEEVAL_JUDGE_MODEL` (only when the file
    /// sets no `[judge] model`), `NICEEVAL_JUDGE_BASE_URL` and `NICEEVAL_JUDGE_CACHE` read
    /// through `get`.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(value) = get("NICEEVAL_STRICT") {
            self.run.strict = parse_bool(&value).ok_or_else(|| ConfigError::Env {
                name: "NICEEVAL_STRICT".into(),
                value: value.clone(),
                message: "use 1/true/yes/on or 0/false/no/off".into(),
            })?;
        }
        if let Some(value) = get("NICEEVAL_RUNS") {
            let runs = value
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| ConfigError::Env {
                    name: "NICEEVAL_RUNS".into(),
                    value: value.clone(),
                    message: "use a whole number of runs, 1 or more".into(),
                })?;
            self.run.runs = Some(runs);
        }
        // The judge model resolves per call, then #[eval(judge_model)], then niceeval.toml, then
        // this variable: it only fills in a model the file leaves unset.
        if let Some(value) = get("NICEEVAL_JUDGE_MODEL").filter(|v| !v.trim().is_empty()) {
            self.judge.model.get_or_insert(value.trim().to_string());
        }
        if let Some(value) = get("NICEEVAL_JUDGE_CACHE").filter(|v| !v.trim().is_empty()) {
            self.judge.cache = Some(value.parse().map_err(|message| ConfigError::Env {
                name: "NICEEVAL_JUDGE_CACHE".into(),
                value: value.clone(),
                message,
            })?);
        }
        if let Some(value) = get("NICEEVAL_JUDGE_BASE_URL").filter(|v| !v.trim().is_empty()) {
            self.judge.base_url = Some(value.trim().to_string());
        }
        Ok(())
    }

    /// The configured body timeout, or [`DEFAULT_TIMEOUT`].
    pub fn timeout(&self) -> Duration {
        self.run
            .timeout
            .as_deref()
            .and_then(|t| parse_duration(t).ok())
            .unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// The nearest `niceeval.toml` at or above `start`.
pub fn find(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(FILE_NAME))
        .find(|candidate| candidate.is_file())
}

fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        _ => None,
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn find_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(key))
        .map_or(1, |i| i + 1)
}

/// Parses a duration such as `"500ms"`, `"30s"`, `"2m"`, `"1h"` or `"1m30s"`.
///
/// ```
/// use std::time::Duration;
/// use niceeval::config::parse_duration;
///
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert!(parse_duration("30").unwrap_err().contains("unit"));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration; write e.g. \"30s\", \"2m\" or \"500ms\"".into());
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!(
                "{text:?} is not a duration; write e.g. \"30s\", \"2m\" or \"500ms\""
            ));
        }
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{text:?} has a bad number"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let seconds = match unit {
            "ms" => number / 1000.0,
            "s" => number,
            "m" => number * 60.0,
            "h" => number * 3600.0,
            "" => {
                return Err(format!(
                    "{text:?} has no unit; add one of ms, s, m, h (e.g. \"30s\")"
                ))
            }
            other => {
                return Err(format!(
                    "{text:?} has an unknown unit {other:?}; use ms, s, m or h"
                ))
            }
        };
        total += Duration::from_secs_f64(seconds);
    }
    if total.is_zero() {
        return Err(format!("{text:?} is zero; a timeout must be positive"));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_file_parses() {
        let config = Config::parse(
            r#"
[judge]
model = "openai/gpt-4o-mini"
base_url = "http://127.0.0.1:1/v1"
api_key_env = "MY_KEY"

[agent]
type = "replay"
path = "t.jsonl"

[prices."openai/gpt-4o"]
input = 2.5
output = 10.0

[run]
concurrency = 4
strict = true
timeout = "90s"
"#,
            "x.toml",
        )
        .unwrap();
        assert_eq!(config.judge.model.as_deref(), Some("openai/gpt-4o-mini"));
        assert_eq!(config.agent.as_ref().unwrap().kind, "replay");
        assert_eq!(config.prices["openai/gpt-4o"].output, 10.0);
        assert!(config.run.strict);
        assert_eq!(config.timeout(), Duration::from_secs(90));
    }

    #[test]
    fn unknown_key_names_file_line_and_column() {
        let err = Config::parse("[run]\nconcurency = 4\n", "a/niceeval.toml").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("a/niceeval.toml:2:1:"), "{text}");
        assert!(text.contains("concurency"), "{text}");
    }

    #[test]
    fn bad_timeout_is_a_parse_error() {
        let err = Config::parse("[run]\ntimeout = \"soon\"\n", "n.toml").unwrap_err();
        assert!(err.to_string().contains("n.toml:2:"), "{err}");
    }

    #[test]
    fn env_overrides_apply_and_reject_garbage() {
        let mut config = Config::default();
        config
            .apply_env(|name| match name {
                "NICEEVAL_STRICT" => Some("1".into()),
                "NICEEVAL_RUNS" => Some("5".into()),
                "NICEEVAL_JUDGE_MODEL" => Some("anthropic/claude-haiku-4-5".into()),
                _ => None,
            })
            .unwrap();
        assert!(config.run.strict);
        assert_eq!(config.run.runs, Some(5));
        assert_eq!(
            config.judge.model.as_deref(),
            Some("anthropic/claude-haiku-4-5")
        );
        let err = Config::default()
            .apply_env(|name| (name == "NICEEVAL_STRICT").then(|| "maybe".into()))
            .unwrap_err();
        assert!(err.to_string().contains("NICEEVAL_STRICT"));
    }

    #[test]
    fn judge_model_env_only_fills_in_what_the_file_leaves_unset() {
        let env = |name: &str| (name == "NICEEVAL_JUDGE_MODEL").then(|| "openai/from-env".into());
        let mut from_file =
            Config::parse("[judge]\nmodel = \"openai/from-toml\"\n", "n.toml").unwrap();
        from_file.apply_env(env).unwrap();
        assert_eq!(from_file.judge.model.as_deref(), Some("openai/from-toml"));
        let mut empty = Config::default();
        empty.apply_env(env).unwrap();
        assert_eq!(empty.judge.model.as_deref(), Some("openai/from-env"));
        let err = Config::default()
            .apply_env(|name| (name == "NICEEVAL_JUDGE_CACHE").then(|| "always".into()))
            .unwrap_err();
        assert!(err.to_string().contains("read-write"), "{err}");
        let err = Config::parse("[judge]\ncache = \"sometimes\"\n", "n.toml").unwrap_err();
        assert!(err.to_string().starts_with("n.toml:2:"), "{err}");
    }

    #[test]
    fn find_walks_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), "").unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(find(&nested), Some(dir.path().join(FILE_NAME)));
    }
}
