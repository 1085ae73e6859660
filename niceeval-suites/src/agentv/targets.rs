//! Targets: the names of the nearest `.agentv/targets.yaml` (its provider kinds and their
//! keys, `use_target`, `grader_target`), `default`, or a provider id.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::judge::CliJudge;
use crate::agents::{self, ProviderKind, ProviderSpec};
use crate::promptfoo::{Doc, OwnedStep, key, with};
use crate::promptfoo_keys::Notes;
use crate::{JudgeSpec, SuiteFileError, parse_yaml};

/// A target as a case runs it: the agent, and the grader its `grader_target` names.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub spec: Arc<ProviderSpec>,
    pub judge: Option<JudgeSpec>,
    /// A `mock` target's canned `response`: the answer, no provider asked.
    pub fixed: Option<Arc<str>>,
    /// Its `grader_target` when that is a `cli` target: the judge is that program.
    pub cli_judge: Option<Arc<CliJudge>>,
}

impl Target {
    /// The target as a judge itself (a grader's `target`): its chat model, or its program.
    pub(super) fn as_judge(&self) -> Option<super::judge::Judge> {
        program_judge(&self.spec.kind)
            .map(super::judge::Judge::Program)
            .or_else(|| chat_judge(&self.spec.kind).map(super::judge::Judge::Model))
    }
}

/// The judge a chat target makes (its model, URL and key).
fn chat_judge(kind: &ProviderKind) -> Option<JudgeSpec> {
    match kind {
        ProviderKind::Chat {
            model,
            base_url,
            key_env,
            ..
        } => Some(JudgeSpec {
            model: model.clone(),
            base_url: base_url.clone(),
            key_env: key_env.clone(),
            unusable: None,
        }),
        _ => None,
    }
}

/// The judge program a `cli` target makes.
fn program_judge(kind: &ProviderKind) -> Option<Arc<CliJudge>> {
    match kind {
        ProviderKind::AgentvCli {
            command,
            cwd,
            timeout_seconds,
        } => Some(Arc::new(CliJudge {
            command: command.clone(),
            cwd: cwd.clone(),
            timeout: timeout_seconds.map(std::time::Duration::from_secs),
        })),
        _ => None,
    }
}

/// A targets file: its path, its text and its `targets` list.
type TargetsFile = (PathBuf, String, Vec<Value>);

/// The nearest `.agentv/targets.yaml` above the eval file, read when a target is named.
pub(super) struct NamedTargets<'n> {
    start: PathBuf,
    loaded: Option<Option<TargetsFile>>,
    /// The eval file's notes: a target's keys that niceeval does not read are noticed there
    /// (AgentV's targets pass unknown keys through), its refusals reported with the file's.
    notes: &'n Notes,
}

impl<'n> NamedTargets<'n> {
    pub(super) fn new(start: &Path, notes: &'n Notes) -> Self {
        NamedTargets {
            start: std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf()),
            loaded: None,
            notes,
        }
    }

    fn file(&mut self) -> Result<Option<&TargetsFile>, SuiteFileError> {
        if self.loaded.is_none() {
            let found = self.start.ancestors().find_map(|dir| {
                ["targets.yaml", "targets.yml"]
                    .iter()
                    .map(|f| dir.join(".agentv").join(f))
                    .find(|p| p.is_file())
            });
            self.loaded = Some(match found {
                None => None,
                Some(path) => {
                    let text =
                        std::fs::read_to_string(&path).map_err(|e| SuiteFileError::File {
                            file: path.display().to_string(),
                            message: format!("cannot read the targets file: {e}"),
                        })?;
                    let list = match parse_yaml(&path, &text)? {
                        Value::Object(mut top) => match top.remove("targets") {
                            Some(Value::Array(list)) => list,
                            _ => {
                                return Err(SuiteFileError::File {
                                    file: path.display().to_string(),
                                    message: "a targets file holds `targets:`, a list".into(),
                                });
                            }
                        },
                        _ => {
                            return Err(SuiteFileError::File {
                                file: path.display().to_string(),
                                message: "a targets file is a mapping with `targets`".into(),
                            });
                        }
                    };
                    Some((path, text, list))
                }
            });
        }
        Ok(self.loaded.as_ref().and_then(Option::as_ref))
    }
}

/// `${{ NAME }}` references replaced by the environment's values (empty when unset).
pub(super) fn interpolate(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        match rest[start + 3..].find("}}") {
            Some(end) => {
                let name = rest[start + 3..start + 3 + end].trim();
                out.push_str(&std::env::var(name).unwrap_or_default());
                rest = &rest[start + 3 + end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The variable of a value that is exactly `${{ NAME }}`.
pub(super) fn env_name(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix("${{")?.strip_suffix("}}")?.trim();
    (!inner.is_empty() && !inner.contains("${{")).then(|| inner.to_string())
}

/// A target of the eval file: a name of `.agentv/targets.yaml`, `default` (the agent of
/// niceeval.toml unless the targets file names one `default`), or a provider id.
pub(super) fn target(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    value: &Value,
    named: &mut NamedTargets<'_>,
) -> Result<Target, SuiteFileError> {
    let (id, config) = match value {
        Value::String(id) => (id.clone(), None),
        Value::Object(map) => {
            doc.keys(at, map, &["name", "id", "provider", "config"], "a target")?;
            let id = map
                .get("id")
                .or_else(|| map.get("provider"))
                .and_then(Value::as_str)
                .ok_or_else(|| doc.err(at, "a target needs `id` (a provider id)"))?;
            (id.to_string(), map.get("config").cloned())
        }
        _ => return Err(doc.err(at, "a target is `default`, a target name or a provider id")),
    };
    if config.is_none()
        && let Some(found) = named_target(named, &id, 0)?
    {
        return Ok(found);
    }
    if id == "default" {
        return Ok(Target {
            spec: Arc::new(ProviderSpec {
                transform: None,
                id: id.clone(),
                label: id,
                kind: ProviderKind::Configured,
                notices: Vec::new(),
            }),
            judge: None,
            fixed: None,
            cli_judge: None,
        });
    }
    agents::parse(&id, None, config.as_ref(), &doc.base)
        .map(|spec| Target {
            spec: Arc::new(spec),
            judge: None,
            fixed: None,
            cli_judge: None,
        })
        .map_err(|(_, m)| {
            let searched = match named.file() {
                Ok(Some((path, _, _))) => format!("not a target of {}", path.display()),
                _ => "no .agentv/targets.yaml above the eval file".to_string(),
            };
            doc.err(
                at,
                format!(
                    "target `{id}`: {searched}, and {m}; or `default`: the agent of niceeval.toml"
                ),
            )
        })
}

const TARGET_KEYS: &[&str] = &[
    "name",
    "provider",
    "use_target",
    "grader_target",
    "judge_target",
    "workers",
];
const OPENAI_KEYS: &[&str] = &[
    "base_url",
    "api_key",
    "model",
    "api_format",
    "endpoint",
    "temperature",
    "max_output_tokens",
];
const ANTHROPIC_KEYS: &[&str] = &[
    "base_url",
    "api_key",
    "model",
    "temperature",
    "max_output_tokens",
];
const CLI_KEYS: &[&str] = &[
    "command",
    "cwd",
    "timeout_seconds",
    "healthcheck",
    "verbose",
    "keep_temp_files",
];

/// The target called `name` in the targets file, if there is one.
pub(super) fn named_target(
    named: &mut NamedTargets<'_>,
    name: &str,
    depth: usize,
) -> Result<Option<Target>, SuiteFileError> {
    let eval_dir = named.start.clone();
    let Some((path, text, list)) = named.file()? else {
        return Ok(None);
    };
    let Some(index) = list
        .iter()
        .position(|t| t.get("name").and_then(Value::as_str) == Some(name))
    else {
        return Ok(None);
    };
    let (path, text) = (path.clone(), text.clone());
    let entry = list[index].clone();
    let tdoc = Doc {
        path: &path,
        text: &text,
        base: eval_dir.clone(),
        positions: Default::default(),
        notes: Some(named.notes),
        streamed: Default::default(),
    };
    let at = vec![key("targets"), OwnedStep::Index(index)];
    let Value::Object(map) = &entry else {
        return Err(tdoc.err(&at, "a target is a mapping with `name` and `provider`"));
    };
    let string = |k: &str| map.get(k).and_then(Value::as_str).map(interpolate);
    if let Some(other) = map.get("use_target").and_then(Value::as_str) {
        tdoc.keys(
            &at,
            map,
            &["name", "use_target"],
            "a target with use_target",
        )?;
        let other = interpolate(other);
        if other.is_empty() || depth > 8 {
            return Err(tdoc.err(
                &with(&at, key("use_target")),
                format!("target `{name}`: `use_target` names no target (is its variable set?)"),
            ));
        }
        return match named_target(named, &other, depth + 1)? {
            Some(t) => Ok(Some(t)),
            None => Err(tdoc.err(
                &with(&at, key("use_target")),
                format!("target `{name}`: `use_target` names `{other}`, which is not a target of this file"),
            )),
        };
    }
    let provider = map.get("provider").and_then(Value::as_str).unwrap_or("");
    let own: &[&str] = match provider {
        "openai" => OPENAI_KEYS,
        "anthropic" => ANTHROPIC_KEYS,
        "cli" => CLI_KEYS,
        "mock" => &["response"],
        _ => {
            return Err(tdoc.err(
                &with(&at, key("provider")),
                format!("target `{name}`: provider `{provider}` is not supported; supported: openai, anthropic, cli, mock (and use_target)"),
            ));
        }
    };
    let allowed: Vec<&str> = TARGET_KEYS.iter().chain(own).copied().collect();
    tdoc.keys(&at, map, &allowed, &format!("a `{provider}` target"))?;
    if provider == "mock" {
        // AgentV's canned answer (its default when `response` is not given).
        let response = string("response").unwrap_or_else(|| {
            r#"{"answer":"Mock provider response. Configure targets.yaml to supply a custom value."}"#
                .to_string()
        });
        return Ok(Some(Target {
            spec: Arc::new(ProviderSpec {
                transform: None,
                id: name.to_string(),
                label: name.to_string(),
                kind: ProviderKind::Echo,
                notices: Vec::new(),
            }),
            judge: None,
            fixed: Some(response.into()),
            cli_judge: None,
        }));
    }
    let kind = match provider {
        "cli" => {
            let command = string("command").ok_or_else(|| {
                tdoc.err(
                    &at,
                    format!("target `{name}`: a cli target needs `command`"),
                )
            })?;
            ProviderKind::AgentvCli {
                command,
                cwd: eval_dir.join(string("cwd").unwrap_or_else(|| ".".into())),
                timeout_seconds: map.get("timeout_seconds").and_then(Value::as_u64),
            }
        }
        _ => {
            if let Some(format) = string("api_format").filter(|f| f != "chat") {
                return Err(tdoc.err(
                    &with(&at, key("api_format")),
                    format!(
                        "target `{name}`: api_format `{format}` is not supported; supported: chat"
                    ),
                ));
            }
            let model = string("model").filter(|m| !m.is_empty()).ok_or_else(|| {
                tdoc.err(
                    &at,
                    format!("target `{name}`: `model` is missing or its variable is not set"),
                )
            })?;
            let raw_key = map.get("api_key").and_then(Value::as_str);
            ProviderKind::Chat {
                model: format!("{provider}/{model}"),
                // `endpoint` is AgentV's other name of an OpenAI-compatible base URL.
                base_url: string("base_url")
                    .or_else(|| string("endpoint"))
                    .filter(|u| !u.is_empty()),
                key_env: raw_key.and_then(env_name),
                key: raw_key.filter(|k| env_name(k).is_none()).map(interpolate),
                temperature: map.get("temperature").and_then(Value::as_f64),
                max_tokens: map
                    .get("max_output_tokens")
                    .and_then(Value::as_u64)
                    .map(|n| n.min(u64::from(u32::MAX)) as u32),
                extra: Default::default(),
            }
        }
    };
    let grader = map
        .get("grader_target")
        .or_else(|| map.get("judge_target"))
        .and_then(Value::as_str)
        .map(interpolate);
    let mut cli_judge = None;
    let judge = match grader {
        Some(g) => match named_target(named, &g, depth + 1)? {
            Some(t) => {
                // A `cli` target grades as a program (see `judge`).
                cli_judge = program_judge(&t.spec.kind);
                t.judge.or_else(|| chat_judge(&t.spec.kind))
            }
            None => {
                return Err(tdoc.err(
                    &with(&at, key("grader_target")),
                    format!("target `{name}`: grader_target `{g}` is not a target of this file"),
                ));
            }
        },
        // An LLM target grades with itself, as AgentV does.
        None => chat_judge(&kind),
    };
    Ok(Some(Target {
        spec: Arc::new(ProviderSpec {
            transform: None,
            id: name.to_string(),
            label: name.to_string(),
            kind,
            notices: Vec::new(),
        }),
        judge,
        fixed: None,
        cli_judge,
    }))
}
