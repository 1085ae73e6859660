//! `[agent]`: the default agent, as data. `type` picks the adapter; the other keys are its
//! settings. The agents layer builds the agent from it; here every key is checked when the
//! file is read, so each mistake is an error with its place.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};

use super::CacheMode;
use super::validate;

/// `[agent]`: the default agent, used by evals without `agent = ..`.
///
/// ```toml
/// [agent]
/// type = "command"
/// command = ["python3", "agents/support.py"]
/// input = "json"
/// timeout = "30s"
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a table with `type` and the agent's settings"
)]
#[non_exhaustive]
pub enum AgentConfig {
    /// `type = "replay"`: a recorded JSONL transcript played back.
    Replay(ReplayConfig),
    /// `type = "command"`: a program speaking JSONL events.
    Command(CommandConfig),
    /// `type = "chat"`: a model behind a provider API; `model` is `provider/model`.
    Chat(ChatConfig),
    /// `type = "openai"`: the chat agent on an OpenAI-compatible API (`model` without the
    /// `openai/` prefix, or with it).
    Openai(ChatConfig),
    /// `type = "anthropic"`: the chat agent on Anthropic's API.
    Anthropic(ChatConfig),
    /// `type = "claude-code"`: Claude Code (`claude -p`).
    ClaudeCode(ClaudeCodeConfig),
    /// `type = "codex"`: the Codex CLI (`codex exec`).
    Codex(CodexConfig),
}

/// The `type`s `[agent]` takes, as written in the file.
pub(super) const AGENT_TYPES: &[&str] = &[
    "replay",
    "command",
    "chat",
    "openai",
    "anthropic",
    "claude-code",
    "codex",
];

impl AgentConfig {
    /// The `type`, as written in the file.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentConfig::Replay(_) => "replay",
            AgentConfig::Command(_) => "command",
            AgentConfig::Chat(_) => "chat",
            AgentConfig::Openai(_) => "openai",
            AgentConfig::Anthropic(_) => "anthropic",
            AgentConfig::ClaudeCode(_) => "claude-code",
            AgentConfig::Codex(_) => "codex",
        }
    }
}

/// `[agent] type = "replay"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ReplayConfig {
    /// The transcript, relative to the directory of `niceeval.toml`.
    pub path: PathBuf,
}

/// `[agent] type = "command"` (see `niceeval::agent::command`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CommandConfig {
    /// The program: a string run by the shell, or an array run directly.
    pub command: CommandLine,
    /// How the input is passed: `"stdin"` (the default), `"json"` or `"arg"`.
    #[serde(default, deserialize_with = "validate::input_mode")]
    pub input: Option<String>,
    /// What stdout holds: `"jsonl"` (the default: one niceeval event per line) or `"text"` (the
    /// reply itself, as promptfoo's `exec:` provider).
    #[serde(default, deserialize_with = "validate::output_mode")]
    pub output: Option<String>,
    /// The per-turn timeout, e.g. `"30s"`.
    #[serde(default, deserialize_with = "validate::timeout")]
    pub timeout: Option<String>,
    /// The working directory, relative to the directory of `niceeval.toml` (also the default).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The most a turn may print on stdout, in bytes.
    #[serde(default, deserialize_with = "validate::positive")]
    pub max_output: Option<u64>,
    /// Environment variables for the program.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// The `command` of a command agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum CommandLine {
    /// A script for `sh -c` (`cmd /C` on Windows).
    Shell(String),
    /// A program and its arguments, run directly.
    Argv(Vec<String>),
}

impl<'de> Deserialize<'de> for CommandLine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CommandLine, D::Error> {
        struct Visitor;
        const HINT: &str =
            "a non-empty array of strings, e.g. [\"python3\", \"agent.py\"], or a shell string";
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = CommandLine;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(HINT)
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<CommandLine, E> {
                Ok(CommandLine::Shell(text.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<CommandLine, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                if argv.is_empty() {
                    return Err(serde::de::Error::custom(format!("must be {HINT}")));
                }
                Ok(CommandLine::Argv(argv))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// `[agent] type = "chat"`, `"openai"` or `"anthropic"` (see `niceeval::agent::chat`; tools
/// are declared in code).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ChatConfig {
    /// The model: `provider/model` for `type = "chat"`; with `openai` or `anthropic` the
    /// provider prefix may be left out.
    pub model: String,
    /// Base URL of the provider's API (an OpenAI-compatible server, say).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key.
    #[serde(default, deserialize_with = "validate::api_key_env")]
    pub api_key_env: Option<String>,
    /// The system prompt.
    #[serde(default)]
    pub system: Option<String>,
    /// The sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The most tokens per model answer.
    #[serde(default, deserialize_with = "validate::positive")]
    pub max_tokens: Option<u64>,
    /// The most rounds of tool calls per turn.
    #[serde(default, deserialize_with = "validate::positive")]
    pub max_rounds: Option<u64>,
    /// The timeout of one model request, e.g. `"60s"`.
    #[serde(default, deserialize_with = "validate::timeout")]
    pub timeout: Option<String>,
    /// The response cache (off unless set).
    #[serde(default)]
    pub cache: Option<CacheMode>,
}

/// `[agent] type = "claude-code"` (see `niceeval::agent::claude_code`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ClaudeCodeConfig {
    /// `--model`.
    #[serde(default)]
    pub model: Option<String>,
    /// `--allowedTools`.
    #[serde(default, deserialize_with = "validate::optional_strings")]
    pub allowed_tools: Option<Vec<String>>,
    /// `--disallowedTools`.
    #[serde(default, deserialize_with = "validate::optional_strings")]
    pub disallowed_tools: Option<Vec<String>>,
    /// `--permission-mode`.
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// `--system-prompt`.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`.
    #[serde(default)]
    pub append_system_prompt: Option<String>,
    /// `--max-turns`.
    #[serde(default, deserialize_with = "validate::max_turns")]
    pub max_turns: Option<u32>,
    /// More arguments, before the prompt.
    #[serde(
        default,
        deserialize_with = "validate::strings",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub args: Vec<String>,
    /// The program (default `claude`).
    #[serde(default)]
    pub program: Option<String>,
    /// The per-turn timeout, e.g. `"5m"`.
    #[serde(default, deserialize_with = "validate::timeout")]
    pub timeout: Option<String>,
    /// Environment variables for the program.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// `[agent] type = "codex"` (see `niceeval::agent::codex`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CodexConfig {
    /// `--model`.
    #[serde(default)]
    pub model: Option<String>,
    /// `read-only`, `workspace-write` or `danger-full-access`.
    #[serde(default, deserialize_with = "validate::codex_sandbox")]
    pub sandbox: Option<String>,
    /// `untrusted`, `on-failure`, `on-request` or `never`.
    #[serde(default, deserialize_with = "validate::codex_approval_policy")]
    pub approval_policy: Option<String>,
    /// More `-c key=value` overrides.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub config: BTreeMap<String, toml::Value>,
    /// More arguments, before the prompt.
    #[serde(
        default,
        deserialize_with = "validate::strings",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub args: Vec<String>,
    /// The program (default `codex`).
    #[serde(default)]
    pub program: Option<String>,
    /// The per-turn timeout, e.g. `"10m"`.
    #[serde(default, deserialize_with = "validate::timeout")]
    pub timeout: Option<String>,
    /// Environment variables for Codex.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// The keys of `[agent]` for `kind` (besides `type`), and the ones it needs: read from the
/// settings' types, so they cannot drift.
pub(super) fn keys(kind: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    Some(match kind {
        "replay" => (fields::<ReplayConfig>(), &["path"]),
        "command" => (fields::<CommandConfig>(), &["command"]),
        "chat" | "openai" | "anthropic" => (fields::<ChatConfig>(), &["model"]),
        "claude-code" => (fields::<ClaudeCodeConfig>(), &[]),
        "codex" => (fields::<CodexConfig>(), &[]),
        _ => return None,
    })
}

/// What `type = kind` says when the key it needs is missing.
pub(super) fn missing(kind: &str) -> String {
    match kind {
        "replay" => "type = \"replay\" needs `path = \"transcript.jsonl\"`".to_string(),
        "command" => {
            "type = \"command\" needs `command = [\"python3\", \"agent.py\"]` (or a shell string)"
                .to_string()
        }
        "chat" => "type = \"chat\" needs `model = \"provider/model\"`, e.g. \"openai/gpt-4o-mini\""
            .to_string(),
        _ => format!("type = \"{kind}\" needs `model = \"...\"`, e.g. \"gpt-4o-mini\""),
    }
}

/// Reads `[agent]` (without its `type`) as the settings of `kind`.
pub(super) fn deserialize(
    kind: &str,
    table: toml::de::Deserializer<'_>,
) -> Result<AgentConfig, serde_path_to_error::Error<toml::de::Error>> {
    use serde_path_to_error::deserialize as de;
    Ok(match kind {
        "replay" => AgentConfig::Replay(de(table)?),
        "command" => AgentConfig::Command(de(table)?),
        "openai" => AgentConfig::Openai(de(table)?),
        "anthropic" => AgentConfig::Anthropic(de(table)?),
        "claude-code" => AgentConfig::ClaudeCode(de(table)?),
        "codex" => AgentConfig::Codex(de(table)?),
        _ => AgentConfig::Chat(de(table)?),
    })
}

/// The field names of a struct that derives `Deserialize`, as serde sees them (also what
/// the guide's configuration reference is checked against).
pub fn fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields(Option<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("fields read")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Stop {
            Stop
        }
    }
    impl<'de> Deserializer<'de> for &mut Fields {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = Some(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut found = Fields(None);
    let _ = T::deserialize(&mut found);
    found.0.unwrap_or(&[])
}
