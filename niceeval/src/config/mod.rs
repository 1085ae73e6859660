//! `niceeval.toml`: finding it (walking up from the eval crate's manifest directory), parsing
//! and validating it (every error names the file, line, column and key), and applying the
//! `NICEEVAL_*` environment overrides.
//!
//! ```toml
//! [judge]
//! model = "openai/gpt-4o-mini"             # provider/model
//! base_url = "http://127.0.0.1:11434/v1"   # any OpenAI-compatible server
//! api_key_env = "OPENAI_API_KEY"           # the variable's NAME; keys never go in this file
//! cache = "read-write"                     # off | read | write | read-write
//! cache_dir = "target/judge-cache"         # where answers are cached (relative to this file)
//! timeout = "60s"                          # per judge request
//!
//! [agent]                                  # the default agent of evals without `agent = ..`
//! type = "replay"
//! path = "transcripts/refund.jsonl"
//!
//! [provider]                               # limits per model endpoint, across every process
//! max_concurrency = 8                      # requests in flight at once (default 8)
//! requests_per_minute = 500                # requests started per minute (default: no limit)
//!
//! [prices."openai/gpt-4o"]                 # USD per 1M tokens, over the built-in table
//! input = 2.5
//! output = 10.0
//! cache_read = 1.25                        # optional
//!
//! [run]
//! concurrency = 8                          # evals at once in a suite runner
//! strict = false                           # soft assertions below threshold fail evals
//! timeout = "2m"                           # per run of an eval body: ms, s, m, h
//! runs = 1                                 # runs per eval
//! slow_after = "60s"                       # name evals still running after this long
//!
//! [report]
//! max_text = "64KiB"                       # longest text stored per value (bytes, KiB, MiB, KB, MB)
//! snapshot_reasons = true                  # false: snapshots leave reasons (which quote the reply) out
//! redact = ["MY_VAR", "/ghp_[A-Za-z0-9]{36}/"]  # more secrets to mask (besides *KEY*, *TOKEN*, … variables)
//!
//! [compare]                                # comparing a run with a baseline (--baseline FILE)
//! fail_on = ["broken-gate", "pass-rate-drop", "metric-drop"]   # what is a regression (exit 3);
//!                                          # also "tokens-rise", "cost-rise"
//! alpha = 0.05                             # level of the pass-rate test (Fisher's exact)
//! metric_margin = 0.05                     # how far a score or metric may fall
//! tokens_margin = 0.1                      # how far tokens per run may rise (0.1 = 10%)
//! cost_margin = 0.1                        # how far cost per run may rise (0.1 = 10%)
//! baseline_include = []                    # also save "cost" and/or "duration" in baselines
//! [results]                                # target/niceeval/results/*.jsonl
//! keep_runs = 1                            # earlier runs of each eval a results file keeps (1+)
//! [history]                                # the run history (feature `history`; `niceeval history`)
//! enabled = true                           # record every finished run's summaries
//! path = "../.niceeval/history.sqlite"     # default: target/niceeval/history.sqlite
//!
//! [workspace]                              # evals with #[eval(workspace = "dir")]
//! isolation = "local"                      # local | bubblewrap (Debian's bwrap)
//! network = false                          # bubblewrap: may the agent's processes use the network
//! ignore = ["target/", "*.log"]            # left out of diffs, besides the template's .gitignore
//! keep = "failed"                          # failed | always | never: keep the working copy after a run
//! max_files = 100000                       # a template (and a diff) holds at most this many files
//! max_bytes = "256MiB"                     # ... and this many bytes
//!
//! [trace]                                  # OpenTelemetry (feature `otel`)
//! settle = "500ms"                         # after a send, wait this long at most for spans on their way
//! export = "http://127.0.0.1:4318"         # send each eval as a trace to this OTLP/HTTP endpoint
//! ```
//!
//! Environment overrides, applied after the file: `NICEEVAL_STRICT` (`1`/`true`/`yes`/`on` or
//! `0`/`false`/`no`/`off`), `NICEEVAL_RUNS` (1 or more), `NICEEVAL_JUDGE_MODEL`
//! (`provider/model`), `NICEEVAL_JUDGE_BASE_URL`. A bad value is an error naming the variable.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod duration;
mod parse;
mod validate;

pub use duration::{DurationSetting, parse_duration};
use validate::{check_base_url, check_judge_model};

mod agent;
mod prices;
mod values;

pub use agent::fields;
pub use agent::{
    AgentConfig, ChatConfig, ClaudeCodeConfig, CodexConfig, CommandConfig, CommandLine,
    ReplayConfig,
};
#[cfg(test)]
pub(crate) use agent::{CODEX_APPROVAL_POLICIES, CODEX_SANDBOX_MODES};
pub use agent::{CodexApproval, CodexSandbox, CommandInput, CommandOutput};
pub use prices::PriceConfig;
pub use values::{CacheMode, Isolation, Keep};

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
    #[error("{path}:{line}:{column}: {}{message}", key_prefix(.key))]
    Parse {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The key at fault, as written in the file: `[run] timeout`,
        /// `[prices."openai/gpt-4o"] input` (`None` for syntax errors).
        key: Option<String>,
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
    /// Several errors, in the order of the file: every error of a file is reported at once.
    /// Displayed one per line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Many(Vec<ConfigError>),
}

impl ConfigError {
    /// The errors one by one: the list of [`ConfigError::Many`], else this error alone.
    ///
    /// ```
    /// use niceeval::__workspace::config::Config;
    ///
    /// let err = Config::parse("[run]\nruns = 0\ntimeout = \"soon\"\n", "niceeval.toml").unwrap_err();
    /// assert_eq!(err.errors().len(), 2);
    /// ```
    pub fn errors(&self) -> &[ConfigError] {
        match self {
            ConfigError::Many(errors) => errors,
            one => std::slice::from_ref(one),
        }
    }

    /// One error as itself, several as [`ConfigError::Many`].
    fn from_list(mut errors: Vec<ConfigError>) -> ConfigError {
        if errors.len() == 1 {
            errors.remove(0)
        } else {
            ConfigError::Many(errors)
        }
    }
}

fn key_prefix(key: &Option<String>) -> String {
    key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default()
}

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "the tables of niceeval.toml")]
pub struct Config {
    /// `[judge]`: the judge model for LLM-as-judge assertions.
    #[serde(default)]
    pub judge: JudgeConfig,
    /// `[agent]`: the default agent, used by evals without `agent = ..`.
    #[serde(default)]
    pub agent: Option<AgentConfig>,
    /// `[provider]`: limits on requests to each model endpoint, shared by every process of the
    /// machine.
    #[serde(default)]
    pub provider: ProviderConfig,
    /// `[prices."provider/model"]`: USD per 1M tokens, overriding the built-in table
    /// (see the price table).
    #[serde(default)]
    pub prices: BTreeMap<String, PriceConfig>,
    /// `[run]`: how evals run.
    #[serde(default)]
    pub run: RunConfig,
    /// `[report]`: what reports store.
    #[serde(default)]
    pub report: ReportConfig,
    /// `[compare]`: baselines, and what counts as a regression against one.
    #[serde(default)]
    pub compare: CompareConfig,
    /// `[workspace]`: working copies of evals with `#[eval(workspace = ..)]`.
    #[serde(default)]
    pub workspace: WorkspaceConfig,
    /// `[trace]`: OpenTelemetry in (the receiver's settle time) and out (export).
    #[serde(default)]
    pub trace: TraceConfig,
    /// `[results]`: the results files under `target/niceeval/results`.
    #[serde(default)]
    pub results: ResultsConfig,
    /// `[history]`: the store of every finished run's summaries (`niceeval history`).
    #[serde(default)]
    pub history: HistoryConfig,
    /// Where the file was found (`None` when there is none).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// `[judge]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with model, base_url, api_key_env, cache, cache_dir, timeout, max_concurrency"
)]
pub struct JudgeConfig {
    /// `provider/model`, e.g. `openai/gpt-4o-mini`.
    #[serde(default, deserialize_with = "validate::judge_model")]
    pub model: Option<String>,
    /// Base URL of the provider's API (`http://` or `https://`; for OpenAI-compatible servers
    /// such as Ollama or vLLM).
    #[serde(default, deserialize_with = "validate::base_url")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (never the key itself).
    #[serde(default, deserialize_with = "validate::api_key_env")]
    pub api_key_env: Option<String>,
    /// Judge response cache: `off`, `read`, `write` or `read-write` (the default).
    #[serde(default)]
    pub cache: Option<CacheMode>,
    /// Where judge answers are cached, relative to the directory of `niceeval.toml` (default:
    /// `niceeval/cache` in the Cargo target directory; see
    /// [`ResponseCache::judge_dir`](crate::resources::cache::ResponseCache::judge_dir)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_dir: Option<PathBuf>,
    /// Timeout of one judge request, e.g. `"60s"` (the default); validated when parsed.
    #[serde(default)]
    pub timeout: Option<DurationSetting>,
    /// Judge requests in flight at once per provider endpoint (default 8).
    #[serde(default, deserialize_with = "validate::concurrency")]
    pub max_concurrency: Option<usize>,
}

/// `[provider]`: limits on the requests to each model endpoint (one provider and base URL),
/// counted across every process of the machine that shares the Cargo target directory — the
/// chat agents and judges of every eval, under `cargo test` or nextest alike.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with max_concurrency, requests_per_minute"
)]
pub struct ProviderConfig {
    /// Requests in flight at once per endpoint (default 8; `[judge] max_concurrency`, when set,
    /// is the judge endpoint's).
    #[serde(default, deserialize_with = "validate::concurrency")]
    pub max_concurrency: Option<usize>,
    /// Requests started per minute per endpoint, evenly spaced (none by default).
    #[serde(default, deserialize_with = "validate::per_minute")]
    pub requests_per_minute: Option<u32>,
}

/// `[run]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with concurrency, strict, timeout, runs, slow_after"
)]
pub struct RunConfig {
    /// How many evals the suite runner runs at once (1 or more).
    #[serde(default, deserialize_with = "validate::concurrency")]
    pub concurrency: Option<usize>,
    /// Fail evals whose soft assertions fall below their thresholds.
    #[serde(default)]
    pub strict: bool,
    /// Per-run timeout of an eval body, e.g. `"30s"`, `"2m"`; validated when parsed.
    #[serde(default)]
    pub timeout: Option<DurationSetting>,
    /// Runs per eval (1 or more; overridden by `#[eval(runs = ..)]`).
    #[serde(default, deserialize_with = "validate::runs")]
    pub runs: Option<u32>,
    /// After how long the suite runner names an eval that is still running (`"60s"`, as
    /// libtest; validated when parsed).
    #[serde(default)]
    pub slow_after: Option<DurationSetting>,
}

/// `[report]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with max_text, snapshot_reasons, redact"
)]
pub struct ReportConfig {
    /// The longest text stored per value in reports, results files and transcripts: each
    /// message, thinking text, tool input or output and assertion reason longer than this is
    /// elided in its middle, with the full size stated. A number of bytes (`65536`) or a size
    /// (`"64KiB"`, `"1MiB"`, `"500KB"`); default `crate::base::excerpt::DEFAULT_MAX_TEXT` (64 KiB).
    /// Assertions always see the whole value.
    #[serde(default, deserialize_with = "validate::size")]
    pub max_text: Option<u64>,
    /// Whether snapshots (`#[eval(snapshot)]`, `assert_report_snapshot!`) show the assertions'
    /// reasons (default `true`). Reasons quote the reply; with `false` a snapshot holds each
    /// assertion's verdict, name and score, so a reworded reply that passes the same way does
    /// not fail every snapshot.
    #[serde(default)]
    pub snapshot_reasons: Option<bool>,
    /// More secrets to mask in everything niceeval prints or writes, besides the values of
    /// environment variables whose names look secret (`*KEY*`, `*TOKEN*`, `*SECRET*`,
    /// `*PASSWORD*`, `*CREDENTIAL*`): a variable's name (`"MY_VAR"`: its value is masked) or a
    /// regular expression between slashes (`"/ghp_[A-Za-z0-9]{36}/"`). Masked values show
    /// their first four characters: `sk-a…[redacted]`. Assertions see raw values.
    #[serde(default, deserialize_with = "validate::redact_rules")]
    pub redact: Option<Vec<String>>,
}

/// `[trace]`: OpenTelemetry spans received from agents and exported to a collector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with settle, export")]
pub struct TraceConfig {
    /// After a send, how long niceeval waits at most for spans still on their way (a trace
    /// whose received spans name parents not received yet, or whose agent is still running)
    /// before the turn's checks read them: `"500ms"` by default (`DEFAULT_SETTLE`).
    #[serde(default)]
    pub settle: Option<DurationSetting>,
    /// An OTLP/HTTP endpoint (`http://host:4318`) to send each eval to as a trace: eval, runs,
    /// turns, the agent's own spans, and assertion results as span events.
    #[serde(default, deserialize_with = "validate::base_url")]
    pub export: Option<String>,
}

/// The default of `[trace] settle`.
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(500);

/// `[compare]`: what `--baseline` calls a regression, the level of its statistics, and what
/// `--save-baseline` writes (see `niceeval::compare`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with fail_on, alpha, metric_margin, tokens_margin, cost_margin, baseline_include"
)]
pub struct CompareConfig {
    /// The kinds of regression that fail a run compared with a baseline (exit code 3 when no
    /// eval failed): `"broken-gate"` (an eval or case that passed fails now; for evals run
    /// several times on both sides, only when its pass-rate drop is beyond chance),
    /// `"pass-rate-drop"` (an eval run several times whose pass rate fell beyond chance, even
    /// if it still passes), `"metric-drop"` (a named metric, or the mean score of an eval
    /// passing on both sides, fell by more than `metric_margin`; for means over several runs,
    /// also beyond chance by Welch's t-test; a score that is each run's pass/fail is the pass
    /// rate, tested once by Fisher's test, not again), `"tokens-rise"` (the tokens per run of an
    /// eval passing on both sides rose by more than `tokens_margin`), `"cost-rise"` (its cost
    /// per run rose by more than `cost_margin`; the baseline must record cost:
    /// `baseline_include = ["cost"]`). Default: the first three (`DEFAULT_FAIL_ON`); `[]`
    /// reports the comparison and never fails.
    #[serde(default, deserialize_with = "validate::fail_on")]
    pub fail_on: Option<Vec<String>>,
    /// The level of the pass-rate test and of the intervals (their confidence is `1 − alpha`):
    /// a drop is beyond chance when Fisher's exact test gives `p < alpha`. Strictly between 0
    /// and 0.5; default 0.05.
    #[serde(default, deserialize_with = "validate::alpha")]
    pub alpha: Option<f64>,
    /// How far the mean score or a named metric (both in [0, 1]) may fall before it is a
    /// drop, e.g. `0.05`; default 0.05. From 0 to 1.
    #[serde(default, deserialize_with = "validate::margin")]
    pub metric_margin: Option<f64>,
    /// How far the tokens (input + output) per run of an eval may rise, as a fraction of the
    /// baseline's, before it is a `tokens-rise`: `0.1` (the default) lets 10% more pass. 0 or
    /// more.
    #[serde(default, deserialize_with = "validate::tokens_margin")]
    pub tokens_margin: Option<f64>,
    /// How far the cost per run of an eval may rise, as a fraction of the baseline's, before it
    /// is a `cost-rise`: `0.1` (the default) lets 10% more pass. 0 or more.
    #[serde(default, deserialize_with = "validate::cost_margin")]
    pub cost_margin: Option<f64>,
    /// What baselines also record, beyond outcomes, pass rates, scores, metrics and tokens:
    /// `"cost"`, `"duration"`. Default none: both change from run to run, and a baseline is
    /// meant to stay byte-identical when nothing changed.
    #[serde(default, deserialize_with = "validate::baseline_include")]
    pub baseline_include: Option<Vec<String>>,
}

/// The kinds of regression `[compare] fail_on` takes.
pub const FAIL_ON: &[&str] = &[
    "broken-gate",
    "pass-rate-drop",
    "metric-drop",
    "tokens-rise",
    "cost-rise",
];

/// What `[compare] fail_on` is when not given: the rises of tokens and cost are asked for.
pub const DEFAULT_FAIL_ON: &[&str] = &["broken-gate", "pass-rate-drop", "metric-drop"];

/// What `[compare] baseline_include` takes.
pub const BASELINE_INCLUDE: &[&str] = &["cost", "duration"];

impl CompareConfig {
    /// `alpha`, else 0.05.
    pub fn alpha(&self) -> f64 {
        self.alpha.unwrap_or(0.05)
    }

    /// `metric_margin`, else 0.05.
    pub fn metric_margin(&self) -> f64 {
        self.metric_margin.unwrap_or(0.05)
    }

    /// `tokens_margin`, else 0.1.
    pub fn tokens_margin(&self) -> f64 {
        self.tokens_margin.unwrap_or(0.1)
    }

    /// `cost_margin`, else 0.1.
    pub fn cost_margin(&self) -> f64 {
        self.cost_margin.unwrap_or(0.1)
    }

    /// Whether `kind` (one of [`FAIL_ON`]) fails a run: listed in `fail_on`, or, with `fail_on`
    /// not given, one of [`DEFAULT_FAIL_ON`].
    ///
    /// ```
    /// use niceeval::__workspace::config::Config;
    ///
    /// let config = Config::parse("[compare]\nfail_on = [\"broken-gate\"]\n", "niceeval.toml").unwrap();
    /// assert!(config.compare.fails_on("broken-gate"));
    /// assert!(!config.compare.fails_on("metric-drop"));
    /// assert!(Config::default().compare.fails_on("metric-drop"));
    /// assert!(!Config::default().compare.fails_on("tokens-rise"));
    /// ```
    pub fn fails_on(&self, kind: &str) -> bool {
        match &self.fail_on {
            Some(list) => list.iter().any(|k| k == kind),
            None => DEFAULT_FAIL_ON.contains(&kind),
        }
    }

    /// Whether baselines record `what` (`"cost"` or `"duration"`).
    pub fn includes(&self, what: &str) -> bool {
        self.baseline_include
            .as_ref()
            .is_some_and(|list| list.iter().any(|k| k == what))
    }
}

/// `[results]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with keep_runs")]
pub struct ResultsConfig {
    /// How many earlier runs of each eval a results file keeps when a new run starts writing
    /// it (1 or more; default [`ResultsConfig::DEFAULT_KEEP_RUNS`]): the file holds at most
    /// this many records of each eval plus the new run's, so it does not grow with history.
    /// At least one, so an eval a filtered run does not select keeps its latest result.
    #[serde(default, deserialize_with = "validate::keep_runs")]
    pub keep_runs: Option<usize>,
}

impl ResultsConfig {
    /// Earlier runs kept per eval when `keep_runs` is not set: the latest one (what
    /// `--rerun-failed` and the report mode read).
    pub const DEFAULT_KEEP_RUNS: usize = 1;

    /// `keep_runs`, or its default.
    pub fn keep_runs(&self) -> usize {
        self.keep_runs.unwrap_or(Self::DEFAULT_KEEP_RUNS).max(1)
    }
}

/// `[history]`: where the run history is kept (see the book's History page). The store
/// itself is the feature `history`'s; without it these keys are read and do nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with enabled, path")]
pub struct HistoryConfig {
    /// Whether finished runs are recorded (default `true`; `NICEEVAL_HISTORY=off` too).
    #[serde(default)]
    pub enabled: Option<bool>,
    /// The store's file, relative to the directory of `niceeval.toml` (default:
    /// `niceeval/history.sqlite` in the Cargo target directory, gone with `cargo clean`).
    #[serde(default)]
    pub path: Option<PathBuf>,
}

impl HistoryConfig {
    /// Whether runs are recorded: `enabled`, `true` when unset.
    pub fn enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
}

/// `[workspace]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with isolation, network, ignore, keep, max_files, max_bytes"
)]
pub struct WorkspaceConfig {
    /// How the agent's processes are isolated: `"local"` (default) or `"bubblewrap"`.
    #[serde(default)]
    pub isolation: Option<Isolation>,
    /// Whether bubblewrapped processes may use the network (default `false`).
    #[serde(default)]
    pub network: bool,
    /// Patterns (gitignore syntax) the diff leaves out, besides the template's `.gitignore`.
    #[serde(default)]
    pub ignore: Vec<String>,
    /// What becomes of a working copy after its run: `"failed"` (default: kept when the run
    /// failed), `"always"` or `"never"`.
    #[serde(default)]
    pub keep: Option<Keep>,
    /// The most files a template (and a diff) may hold (default 100,000).
    #[serde(default, deserialize_with = "validate::max_files")]
    pub max_files: Option<u64>,
    /// The most bytes a template (and a diff) may hold: a number or a size such as `"256MiB"`
    /// (the default).
    #[serde(default, deserialize_with = "validate::size")]
    pub max_bytes: Option<u64>,
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

    /// Parses and validates TOML text; `name` is used in error messages.
    ///
    /// ```
    /// use niceeval::__workspace::config::{Config, ConfigError};
    ///
    /// let err = Config::parse("[run]\nstrict = \"yes\"\n", "niceeval.toml").unwrap_err();
    /// assert!(err.to_string().starts_with("niceeval.toml:2:10: [run] strict: "), "{err}");
    ///
    /// let err = Config::parse("[run]\nconcurrency = 0\n", "niceeval.toml").unwrap_err();
    /// let ConfigError::Parse { line, key, .. } = &err else { panic!("{err}") };
    /// assert_eq!((*line, key.as_deref()), (2, Some("[run] concurrency")));
    /// ```
    pub fn parse(text: &str, name: &str) -> Result<Config, ConfigError> {
        parse::parse(text, name)
    }

    /// Applies `NICEEVAL_STRICT`, `NICEEVAL_RUNS`, `NICEEVAL_JUDGE_MODEL` (only when the file
    /// sets no `[judge] model`), `NICEEVAL_JUDGE_BASE_URL` and `NICEEVAL_JUDGE_CACHE` read
    /// through `get` (empty values are ignored).
    ///
    /// ```
    /// use niceeval::__workspace::config::Config;
    ///
    /// let mut config = Config::default();
    /// config.apply_env(|name| (name == "NICEEVAL_RUNS").then(|| "3".to_string()))?;
    /// assert_eq!(config.run.runs, Some(3));
    /// let err = config.apply_env(|name| (name == "NICEEVAL_JUDGE_MODEL").then(|| "gpt-4o".to_string()));
    /// assert!(err.unwrap_err().to_string().contains("NICEEVAL_JUDGE_MODEL"));
    /// # Ok::<(), niceeval::__workspace::config::ConfigError>(())
    /// ```
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        let var = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let invalid = |name: &str, value: &str, message: String| ConfigError::Env {
            name: name.into(),
            value: value.into(),
            message,
        };
        if let Some(value) = var("NICEEVAL_STRICT") {
            self.run.strict = parse_bool(&value).ok_or_else(|| {
                invalid(
                    "NICEEVAL_STRICT",
                    &value,
                    "use 1/true/yes/on or 0/false/no/off".into(),
                )
            })?;
        }
        if let Some(value) = var("NICEEVAL_RUNS") {
            let runs = value
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    invalid(
                        "NICEEVAL_RUNS",
                        &value,
                        "use a whole number of runs, 1 or more".into(),
                    )
                })?;
            self.run.runs = Some(runs);
        }
        // The judge model resolves per call, then #[eval(judge_model)], then niceeval.toml, then
        // this variable: it only fills in a model the file leaves unset.
        if let Some(value) = var("NICEEVAL_JUDGE_MODEL") {
            let model = value.trim();
            check_judge_model(model)
                .map_err(|e| invalid("NICEEVAL_JUDGE_MODEL", &value, e.to_string()))?;
            self.judge.model.get_or_insert(model.to_string());
        }
        if let Some(value) = var("NICEEVAL_JUDGE_CACHE") {
            self.judge.cache = Some(
                value
                    .parse()
                    .map_err(|m| invalid("NICEEVAL_JUDGE_CACHE", &value, m))?,
            );
        }
        if let Some(value) = var("NICEEVAL_JUDGE_BASE_URL") {
            let url = value.trim();
            check_base_url(url)
                .map_err(|e| invalid("NICEEVAL_JUDGE_BASE_URL", &value, e.to_string()))?;
            self.judge.base_url = Some(url.to_string());
        }
        Ok(())
    }

    /// The longest text stored per value: `[report] max_text`, else
    /// [`crate::base::excerpt::DEFAULT_MAX_TEXT`].
    ///
    /// ```
    /// use niceeval::__workspace::config::Config;
    ///
    /// assert_eq!(Config::default().max_text(), 64 * 1024);
    /// let config = Config::parse("[report]\nmax_text = \"1MiB\"\n", "niceeval.toml")?;
    /// assert_eq!(config.max_text(), 1024 * 1024);
    /// # Ok::<(), niceeval::__workspace::config::ConfigError>(())
    /// ```
    pub fn max_text(&self) -> usize {
        self.report
            .max_text
            .map_or(crate::base::excerpt::DEFAULT_MAX_TEXT, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
    }

    /// `[trace] settle`, else [`DEFAULT_SETTLE`].
    pub fn trace_settle(&self) -> Duration {
        self.trace
            .settle
            .as_ref()
            .map(DurationSetting::get)
            .unwrap_or(DEFAULT_SETTLE)
    }

    /// The configured body timeout, or [`DEFAULT_TIMEOUT`].
    pub fn timeout(&self) -> Duration {
        self.run
            .timeout
            .as_ref()
            .map(DurationSetting::get)
            .unwrap_or(DEFAULT_TIMEOUT)
    }

    /// After how long the suite runner names an eval still running: `[run] slow_after`, else
    /// 60 seconds (libtest's).
    ///
    /// ```
    /// use niceeval::__workspace::config::Config;
    /// use std::time::Duration;
    ///
    /// assert_eq!(Config::default().slow_after(), Duration::from_secs(60));
    /// let config = Config::parse("[run]\nslow_after = \"5s\"\n", "niceeval.toml").unwrap();
    /// assert_eq!(config.slow_after(), Duration::from_secs(5));
    /// ```
    pub fn slow_after(&self) -> Duration {
        self.run
            .slow_after
            .as_ref()
            .map(DurationSetting::get)
            .unwrap_or(Duration::from_secs(60))
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

/// The configuration for evals of the crate at `manifest_dir`, loaded once per process (a
/// suite of a thousand evals reads `niceeval.toml` once, not a thousand times).
impl Config {
    pub(crate) fn for_manifest_dir(manifest_dir: &str) -> Result<Arc<Config>, ConfigError> {
        type Loaded = Result<Arc<Config>, ConfigError>;
        static CACHE: OnceLock<Mutex<HashMap<String, Loaded>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(loaded) = cache.get(manifest_dir) {
            return loaded.clone();
        }
        let loaded: Loaded = Config::discover(Path::new(manifest_dir)).map(Arc::new);
        cache.insert(manifest_dir.to_string(), loaded.clone());
        loaded
    }
}

/// `NICEEVAL_RUNS`, read once per process. A malformed value is reported by the configuration
/// (every eval fails naming the variable), so here it only counts when it parses.
pub(crate) fn env_runs() -> Option<u32> {
    static RUNS: OnceLock<Option<u32>> = OnceLock::new();
    *RUNS.get_or_init(|| {
        std::env::var("NICEEVAL_RUNS")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|n| *n > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(text: &str) -> DurationSetting {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

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
        assert_eq!(config.agent.as_ref().unwrap().kind(), "replay");
        assert_eq!(config.prices["openai/gpt-4o"].output, 10.0);
        assert!(config.run.strict);
        assert_eq!(config.timeout(), Duration::from_secs(90));
    }

    #[test]
    fn unknown_key_names_file_line_and_column() {
        let err = Config::parse("[run]\nconcurency = 4\n", "a/niceeval.toml").unwrap_err();
        assert_eq!(
            err.to_string(),
            "a/niceeval.toml:2:1: [run] concurency: unknown key `concurency`; did you mean `concurrency`?"
        );
    }

    #[test]
    fn redact_rules_are_names_or_valid_patterns() {
        let config = Config::parse(
            "[report]\nredact = [\"MY_VAR\", \"/ghp_[A-Za-z0-9]{36}/\"]\n",
            "n.toml",
        )
        .unwrap();
        assert_eq!(
            config.report.redact.as_deref(),
            Some(&["MY_VAR".to_string(), "/ghp_[A-Za-z0-9]{36}/".to_string()][..])
        );
        let err = Config::parse("[report]\nredact = [\"/(open/\"]\n", "n.toml").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("n.toml:2:"), "{text}");
        assert!(text.contains("[report] redact"), "{text}");
        assert!(text.contains("not a valid regular expression"), "{text}");
    }

    /// (line, column, key) of each error.
    fn located(err: &ConfigError) -> Vec<(usize, usize, Option<&str>)> {
        err.errors()
            .iter()
            .map(|e| match e {
                ConfigError::Parse {
                    line, column, key, ..
                } => (*line, *column, key.as_deref()),
                other => panic!("{other}"),
            })
            .collect()
    }

    #[test]
    fn every_error_of_the_file_is_reported_at_once() {
        let text = r#"[run]
concurency = 4
runs = 0
timeout = "soon"
strict = "yes"
[jduge]
model = 1
[prices."a/b"]
input = -1
output = 2
cahe_read = 1
[agent]
type = 3
path = "x"
"#;
        let err = Config::parse(text, "n.toml").unwrap_err();
        assert_eq!(
            located(&err),
            [
                (2, 1, Some("[run] concurency")),
                (3, 8, Some("[run] runs")),
                (4, 11, Some("[run] timeout")),
                (5, 10, Some("[run] strict")),
                (6, 2, Some("[jduge]")),
                (9, 9, Some("[prices.\"a/b\"] input")),
                (11, 1, Some("[prices.\"a/b\"] cahe_read")),
                (13, 8, Some("[agent] type")),
            ],
            "{err}"
        );
        // One error per line, each as a single error displays.
        let lines: Vec<String> = err.to_string().lines().map(str::to_string).collect();
        let each: Vec<String> = err.errors().iter().map(ToString::to_string).collect();
        assert_eq!(lines, each);
        assert!(lines.iter().all(|l| l.starts_with("n.toml:")), "{err}");
        assert!(
            lines[4].ends_with("unknown key `jduge`; did you mean `judge`?"),
            "{err}"
        );
    }

    #[test]
    fn every_syntax_error_is_reported() {
        let err = Config::parse("[run]\ntimeout = 30s\nstrict = yes\n", "n.toml").unwrap_err();
        assert_eq!(located(&err), [(2, 11, None), (3, 10, None)], "{err}");
        assert!(
            err.to_string()
                .starts_with("n.toml:2:11: string values must be quoted"),
            "{err}"
        );
    }

    #[test]
    fn a_table_missing_a_bad_required_key_is_reported_once() {
        // Dropping the bad `type` leaves [agent] without one: that is not a second error.
        let err = Config::parse("[agent]\ntype = 3\npath = \"x\"\n", "n.toml").unwrap_err();
        assert_eq!(located(&err), [(2, 8, Some("[agent] type"))], "{err}");
        let err = Config::parse("[prices.m]\ninput = -1\noutput = 1\n", "n.toml").unwrap_err();
        assert_eq!(located(&err), [(2, 9, Some("[prices.m] input"))], "{err}");
        // A key missing from the start is an error of its own.
        let err =
            Config::parse("[prices.m]\noutput = 1\n[agent]\npath = 1\n", "n.toml").unwrap_err();
        assert_eq!(
            located(&err),
            [(1, 1, Some("[prices.m]")), (3, 1, Some("[agent]"))],
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_suggest_close_names_only() {
        let message = |text: &str| Config::parse(text, "n.toml").unwrap_err().to_string();
        assert!(
            message("[judge]\nmodle = \"openai/x\"\n").ends_with("did you mean `model`?"),
            "{}",
            message("[judge]\nmodle = \"openai/x\"\n")
        );
        assert!(message("[prise.x]\n").ends_with("did you mean `prices`?"));
        let unrelated = message("[run]\nretries = 3\n");
        assert!(!unrelated.contains("did you mean"), "{unrelated}");
        assert!(
            unrelated
                .ends_with("[run] takes `concurrency`, `strict`, `timeout`, `runs`, `slow_after`"),
            "{unrelated}"
        );
        let outside = message("timeout = \"1s\"\n");
        assert!(
            outside.ends_with("outside any table; it belongs under [run] or [judge]"),
            "{outside}"
        );
    }

    #[test]
    fn the_known_keys_are_the_fields() {
        let config = Config {
            judge: JudgeConfig {
                model: Some("a/b".into()),
                base_url: Some("http://x".into()),
                api_key_env: Some("K".into()),
                cache: Some(CacheMode::Off),
                cache_dir: Some("c".into()),
                timeout: Some(setting("1s")),
                max_concurrency: Some(1),
            },
            agent: Some(AgentConfig::Replay(ReplayConfig {
                path: "t.jsonl".into(),
            })),
            provider: ProviderConfig {
                max_concurrency: Some(2),
                requests_per_minute: Some(60),
            },
            prices: BTreeMap::from([(
                "a/b".to_string(),
                PriceConfig {
                    input: 1.0,
                    output: 2.0,
                    cache_read: Some(0.5),
                },
            )]),
            run: RunConfig {
                concurrency: Some(1),
                strict: true,
                timeout: Some(setting("1s")),
                runs: Some(1),
                slow_after: Some(setting("1s")),
            },
            report: ReportConfig {
                max_text: Some(1024),
                snapshot_reasons: Some(false),
                redact: Some(vec!["MY_VAR".into()]),
            },
            compare: CompareConfig {
                fail_on: Some(vec!["broken-gate".into()]),
                alpha: Some(0.01),
                metric_margin: Some(0.1),
                tokens_margin: Some(0.2),
                cost_margin: Some(0.3),
                baseline_include: Some(vec!["cost".into()]),
            },
            workspace: WorkspaceConfig {
                isolation: Some(Isolation::Bubblewrap),
                network: true,
                ignore: vec!["target/".into()],
                keep: Some(Keep::Always),
                max_files: Some(10),
                max_bytes: Some(1024),
            },
            trace: TraceConfig {
                settle: Some(setting("1s")),
                export: Some("http://127.0.0.1:4318".into()),
            },
            results: ResultsConfig { keep_runs: Some(3) },
            history: HistoryConfig {
                enabled: Some(false),
                path: Some("history.sqlite".into()),
            },
            source: None,
        };
        let table: toml::Table = toml::from_str(&toml::to_string(&config).unwrap()).unwrap();
        let keys = |t: &toml::Table| t.keys().cloned().collect::<std::collections::BTreeSet<_>>();
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        assert_eq!(keys(&table), set(parse::TABLES));
        assert_eq!(
            keys(table["judge"].as_table().unwrap()),
            set(parse::JUDGE_KEYS)
        );
        assert_eq!(keys(table["run"].as_table().unwrap()), set(parse::RUN_KEYS));
        assert_eq!(
            keys(table["provider"].as_table().unwrap()),
            set(parse::PROVIDER_KEYS)
        );
        assert_eq!(
            keys(table["report"].as_table().unwrap()),
            set(parse::REPORT_KEYS)
        );
        assert_eq!(
            keys(table["prices"]["a/b"].as_table().unwrap()),
            set(parse::PRICE_KEYS)
        );
        assert_eq!(
            keys(table["compare"].as_table().unwrap()),
            set(parse::COMPARE_KEYS)
        );
        assert_eq!(
            keys(table["workspace"].as_table().unwrap()),
            set(parse::WORKSPACE_KEYS)
        );
        assert_eq!(
            keys(table["trace"].as_table().unwrap()),
            set(parse::TRACE_KEYS)
        );
        assert_eq!(
            keys(table["results"].as_table().unwrap()),
            set(parse::RESULTS_KEYS)
        );
        assert_eq!(
            keys(table["history"].as_table().unwrap()),
            set(parse::HISTORY_KEYS)
        );
    }

    #[test]
    fn keep_runs_is_validated_with_a_located_error() {
        let config = Config::parse("[results]\nkeep_runs = 4\n", "niceeval.toml").unwrap();
        assert_eq!(config.results.keep_runs(), 4);
        assert_eq!(
            Config::default().results.keep_runs(),
            ResultsConfig::DEFAULT_KEEP_RUNS
        );
        let error = Config::parse("[results]\nkeep_runs = 0\n", "niceeval.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("niceeval.toml:2:"), "{error}");
        assert!(error.contains("[results] keep_runs"), "{error}");
        let error = Config::parse("[results]\nkeep = 2\n", "niceeval.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("keep_runs"), "{error}");
    }

    #[test]
    fn compare_policy_is_validated_with_clear_errors() {
        let config = Config::parse(
            "[compare]\nfail_on = [\"pass-rate-drop\", \"metric-drop\"]\nalpha = 0.01\nmetric_margin = 0.1\nbaseline_include = [\"cost\"]\n",
            "n.toml",
        )
        .unwrap();
        assert!(!config.compare.fails_on("broken-gate"));
        assert!(config.compare.fails_on("pass-rate-drop"));
        assert_eq!(
            (config.compare.alpha(), config.compare.metric_margin()),
            (0.01, 0.1)
        );
        assert!(config.compare.includes("cost") && !config.compare.includes("duration"));
        let defaults = Config::default().compare;
        assert_eq!((defaults.alpha(), defaults.metric_margin()), (0.05, 0.05));
        // The rises of tokens and cost fail a run only when asked for, beyond their margin
        // (10% by default).
        assert_eq!(
            (defaults.tokens_margin(), defaults.cost_margin()),
            (0.1, 0.1)
        );
        assert!(!defaults.fails_on("tokens-rise") && !defaults.fails_on("cost-rise"));
        let rises = Config::parse(
            "[compare]\nfail_on = [\"tokens-rise\", \"cost-rise\"]\ntokens_margin = 0.25\ncost_margin = 2\n",
            "n.toml",
        )
        .unwrap()
        .compare;
        assert!(rises.fails_on("tokens-rise") && rises.fails_on("cost-rise"));
        assert!(!rises.fails_on("broken-gate"));
        assert_eq!((rises.tokens_margin(), rises.cost_margin()), (0.25, 2.0));

        let message = |text: &str| Config::parse(text, "n.toml").unwrap_err().to_string();
        let typo = message("[compare]\nfail_on = [\"broken-gates\"]\n");
        assert!(typo.starts_with("n.toml:2:"), "{typo}");
        assert!(typo.contains("[compare] fail_on"), "{typo}");
        assert!(typo.contains("did you mean \"broken-gate\"?"), "{typo}");
        let alpha = message("[compare]\nalpha = 5\n");
        assert!(alpha.contains("strictly between 0 and 0.5"), "{alpha}");
        let alpha = message("[compare]\nalpha = 0.7\n");
        assert!(alpha.contains("got 0.7"), "{alpha}");
        let margin = message("[compare]\nmetric_margin = -0.1\n");
        assert!(margin.contains("from 0 to 1"), "{margin}");
        let rise = message("[compare]\ntokens_margin = -0.1\n");
        assert!(rise.starts_with("n.toml:2:"), "{rise}");
        assert!(
            rise.contains("tokens_margin is how far tokens per run may rise")
                && rise.contains("0 or more")
                && rise.contains("got -0.1"),
            "{rise}"
        );
        let rise = message("[compare]\ncost_margin = nan\n");
        assert!(
            rise.contains("cost_margin is how far the cost per run"),
            "{rise}"
        );
        let rises = message("[compare]\nfail_on = [\"token-rise\"]\n");
        assert!(rises.contains("did you mean \"tokens-rise\"?"), "{rises}");
        let include = message("[compare]\nbaseline_include = [\"paths\"]\n");
        assert!(include.contains("\"cost\", \"duration\""), "{include}");
        let key = message("[compare]\nfail_of = []\n");
        assert!(key.ends_with("did you mean `fail_on`?"), "{key}");
    }

    #[test]
    fn workspace_keys_are_validated_with_their_location() {
        let text = "[workspace]\nisolation = \"docker\"\nkeep = \"sometimes\"\nmax_files = 0\nnetwrok = true\n";
        let err = Config::parse(text, "n.toml").unwrap_err();
        let all = err.to_string();
        assert!(all.contains("n.toml:2:"), "{all}");
        assert!(all.contains("[workspace] isolation"), "{all}");
        assert!(all.contains("[workspace] keep"), "{all}");
        assert!(all.contains("[workspace] max_files"), "{all}");
        assert!(all.contains("did you mean `network`?"), "{all}");
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
    fn keys_are_named_as_written_in_the_file() {
        let cases = [
            ("[judge]\nmodel = 1\n", "[judge] model"),
            ("[agent]\ntype = 3\n", "[agent] type"),
            (
                "[prices.\"my model\"]\ninput = 1\noutput = -1\n",
                "[prices.\"my model\"] output",
            ),
            (
                "[prices.plain-name_1]\ninput = 1\noutput = -1\n",
                "[prices.plain-name_1] output",
            ),
            ("[run]\nruns = 0\n", "[run] runs"),
            (
                "[provider]\nrequests_per_minute = 0\n",
                "[provider] requests_per_minute",
            ),
            (
                "[provider]\nmax_concurrency = -1\n",
                "[provider] max_concurrency",
            ),
        ];
        for (text, expected) in cases {
            match Config::parse(text, "n.toml") {
                Err(ConfigError::Parse { key, .. }) => {
                    assert_eq!(key.as_deref(), Some(expected), "{text:?}")
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn provider_limits_parse_and_misspellings_are_named() {
        let config = Config::parse(
            "[provider]\nmax_concurrency = 4\nrequests_per_minute = 500\n",
            "n.toml",
        )
        .unwrap();
        assert_eq!(config.provider.max_concurrency, Some(4));
        assert_eq!(config.provider.requests_per_minute, Some(500));
        let err = Config::parse("[provider]\nmax_concurency = 4\n", "n.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean `max_concurrency`"), "{err}");
    }

    #[test]
    fn max_text_takes_bytes_or_a_size_with_its_unit() {
        let parse = |value: &str| {
            Config::parse(&format!("[report]\nmax_text = {value}\n"), "n.toml")
                .map(|c| c.max_text())
        };
        assert_eq!(parse("65536"), Ok(65_536));
        assert_eq!(parse("\"64KiB\""), Ok(65_536));
        assert_eq!(parse("\"64 kib\""), Ok(65_536));
        assert_eq!(parse("\"500KB\""), Ok(500_000));
        assert_eq!(parse("\"1.5MiB\""), Ok(1_572_864));
        assert_eq!(parse("\"2MB\""), Ok(2_000_000));
        assert_eq!(parse("\"1GiB\""), Ok(1 << 30));
        assert_eq!(parse("\"100\""), Ok(100));
        assert_eq!(parse("\"100B\""), Ok(100));
        for bad in [
            "0",
            "-5",
            "\"\"",
            "\"64 kilobytes\"",
            "\"KiB\"",
            "\"0.1\"",
            "1.5",
            "true",
        ] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("n.toml:2:"), "{bad}: {err}");
            assert!(err.contains("[report] max_text"), "{bad}: {err}");
        }
        let err = parse("\"64 kilobytes\"").unwrap_err().to_string();
        assert!(err.contains("\"64KiB\""), "{err}");
    }

    #[test]
    fn find_walks_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), "").unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(find(&nested), Some(dir.path().join(FILE_NAME)));
    }

    #[test]
    fn agent_errors_are_located_all_at_once() {
        let message = |text: &str| Config::parse(text, "n.toml").unwrap_err().to_string();
        assert_eq!(
            message("[agent]\ntype = \"claude_code\"\n"),
            "n.toml:2:8: [agent] type: unknown agent type \"claude_code\"; did you mean \"claude-code\"? (one of \"replay\", \"command\", \"chat\", \"openai\", \"anthropic\", \"claude-code\", \"codex\")"
        );
        let err = Config::parse(
            "[agent]\ntype = \"claude-code\"\nmodle = \"x\"\nmax_turns = 0\nenv = { HOME = 1 }\ntimeout = \"soon\"\n",
            "n.toml",
        )
        .unwrap_err();
        assert_eq!(
            located(&err),
            [
                (3, 1, Some("[agent] modle")),
                (4, 13, Some("[agent] max_turns")),
                (5, 16, Some("[agent] env.HOME")),
                (6, 11, Some("[agent] timeout")),
            ],
            "{err}"
        );
        assert!(
            err.errors()[0]
                .to_string()
                .ends_with("unknown key `modle`; did you mean `model`?"),
            "{err}"
        );
        let unrelated = message("[agent]\ntype = \"codex\"\nretries = 3\n");
        assert!(
            unrelated.ends_with("type = \"codex\" takes `model`, `sandbox`, `approval_policy`, `config`, `args`, `program`, `timeout`, `env`"),
            "{unrelated}"
        );
        assert_eq!(
            message("[agent]\ntype = \"replay\"\n"),
            "n.toml:1:1: [agent]: type = \"replay\" needs `path = \"transcript.jsonl\"`"
        );
        // Other tables' errors come with the agent's.
        let err = Config::parse(
            "[run]\nruns = 0\n[agent]\ntype = \"codex\"\nsandbox = \"open\"\n",
            "n.toml",
        )
        .unwrap_err();
        assert_eq!(
            located(&err),
            [(2, 8, Some("[run] runs")), (5, 11, Some("[agent] sandbox"))],
            "{err}"
        );
    }

    #[test]
    fn every_agent_type_reads_back_what_it_writes() {
        for text in [
            "type = \"replay\"\npath = \"t.jsonl\"",
            "type = \"command\"\ncommand = [\"python3\", \"a.py\"]\ninput = \"arg\"\nenv = { A = \"1\" }",
            "type = \"command\"\ncommand = \"./agent.sh\"\nmax_output = 1024",
            "type = \"chat\"\nmodel = \"openai/gpt-4o-mini\"\ncache = \"read\"\ntemperature = 0",
            "type = \"anthropic\"\nmodel = \"claude-haiku-4-5\"",
            "type = \"claude-code\"\nallowed_tools = [\"Bash\"]\nmax_turns = 3",
            "type = \"codex\"\nsandbox = \"read-only\"\nconfig = { effort = \"low\" }",
        ] {
            let config = Config::parse(&format!("[agent]\n{text}\n"), "n.toml").unwrap();
            let agent = config.agent.clone().unwrap();
            let written = toml::to_string(&config).unwrap();
            let again = Config::parse(&written, "n.toml").unwrap();
            assert_eq!(again.agent, Some(agent), "{written}");
        }
    }
}
