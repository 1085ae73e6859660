//! A promptfoo chat provider's `config` read as promptfoo sends it: the keys promptfoo's
//! OpenAI and Anthropic providers put in the request body (`seed`, `top_p`, `stop`,
//! `response_format`, `passthrough`, …) go in niceeval's request body, promptfoo's defaults
//! (`temperature` 0, `max_tokens` 1024, Anthropic's `stream: false`) are sent too, keys that
//! only tune promptfoo (costs, retries, headers of its own) are accepted with a notice, and
//! only what would change a verdict and cannot be done (tools the model may call) is refused.

use std::path::Path;

use serde_json::{Map, Value, json};

/// What a chat provider's `config` asks beyond the endpoint and key.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ChatExtra {
    /// The system message promptfoo's `systemPrompt` puts first (it replaces the prompt's).
    pub system: Option<String>,
    /// Keys sent in the request body over niceeval's own.
    pub body: Map<String, Value>,
}

/// The typed settings and the extra keys of a chat provider's `config`.
#[derive(Debug, Default)]
pub(crate) struct ChatConfig {
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub extra: ChatExtra,
    /// One line each for stderr: keys accepted without effect.
    pub notices: Vec<String>,
}

/// The keys that reach the endpoint or the key, read by the caller.
const CONNECTION: &[&str] = &["apiBaseUrl", "apiHost", "apiKey", "apiKeyEnvar"];

/// Keys promptfoo's OpenAI chat provider copies into the body as they are.
const OPENAI_BODY: &[&str] = &[
    "seed",
    "max_completion_tokens",
    "reasoning_effort",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "tool_choice",
    "tool_resources",
    "stop",
    "prompt_cache_key",
    "prompt_cache_options",
    "prompt_cache_retention",
    "modalities",
    "audio",
    "verbosity",
    "reasoning",
    "service_tier",
    "user",
    "metadata",
    "store",
];

/// Keys promptfoo's Anthropic Messages provider copies into the body as they are.
const ANTHROPIC_BODY: &[&str] = &[
    "top_p",
    "top_k",
    "cache_control",
    "service_tier",
    "stop_sequences",
    "metadata",
    "tool_choice",
    "thinking",
];

/// Keys that only tune promptfoo itself, and what niceeval does instead.
fn promptfoo_only(key: &str) -> Option<&'static str> {
    Some(match key {
        "cost" | "inputCost" | "outputCost" | "audioCost" => {
            "niceeval prices usage from niceeval.toml's [prices]"
        }
        "maxRetries" | "timeout" => "niceeval.toml's [provider] settings apply",
        "organization" | "headers" | "beta" => "niceeval sends no extra headers",
        "showThinking" => "the reply's text is what is checked",
        "omitDefaults" => "the defaults are not sent",
        "stream" => "niceeval reads the whole answer; the text is the same",
        "apiVersion" => "not used by the OpenAI and Anthropic APIs niceeval calls",
        _ => return None,
    })
}

/// Reads `config` of `provider` (`openai` or `anthropic`) for `model`; `Err((key, why))`
/// names a key niceeval cannot honour.
pub(crate) fn read(
    provider: &str,
    id: &str,
    model: &str,
    config: &Map<String, Value>,
    base: &Path,
) -> Result<ChatConfig, (Option<String>, String)> {
    let anthropic = provider == "anthropic";
    let mut out = ChatConfig::default();
    let omit_defaults = config.get("omitDefaults").and_then(Value::as_bool) == Some(true);
    // promptfoo sends neither `temperature` nor `max_tokens` to reasoning models.
    let reasoning = !anthropic
        && ["o1", "o3", "o4", "gpt-5"]
            .iter()
            .any(|p| model.starts_with(p) || model.contains(&format!("/{p}")));
    let number = |key: &str| -> Result<Option<f64>, (Option<String>, String)> {
        match config.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                (
                    Some(key.into()),
                    format!("provider `{id}`: `{key}` is a number"),
                )
            }),
        }
    };
    out.temperature = number("temperature")?;
    out.max_tokens = number("max_tokens")?.map(|n| n.clamp(1.0, f64::from(u32::MAX)) as u32);
    if !omit_defaults && !reasoning {
        let sampling_off =
            anthropic && (config.contains_key("top_p") || config.contains_key("thinking"));
        if out.temperature.is_none() && !sampling_off {
            out.temperature = Some(0.0);
        }
        out.max_tokens.get_or_insert(1024);
    }
    if anthropic {
        // promptfoo asks Anthropic for a whole answer unless `stream` is set; niceeval always
        // does.
        out.extra.body.insert("stream".into(), json!(false));
    }
    let body_keys = if anthropic {
        ANTHROPIC_BODY
    } else {
        OPENAI_BODY
    };
    let mut merged_last = Map::new();
    for (key, value) in config {
        let k = key.as_str();
        if CONNECTION.contains(&k) || k == "temperature" || k == "max_tokens" {
            continue;
        }
        if body_keys.contains(&k) {
            out.extra.body.insert(key.clone(), value.clone());
            continue;
        }
        match (k, anthropic) {
            ("systemPrompt", false) => {
                out.extra.system = Some(
                    value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_string),
                );
            }
            ("response_format", false) => {
                let format = load_file_value(value, base)
                    .map_err(|e| (Some(key.clone()), format!("provider `{id}`: {e}")))?;
                out.extra.body.insert(key.clone(), format);
            }
            ("output_format" | "effort", true) => {
                let format = load_file_value(value, base)
                    .map_err(|e| (Some(key.clone()), format!("provider `{id}`: {e}")))?;
                let slot = out
                    .extra
                    .body
                    .entry("output_config")
                    .or_insert_with(|| json!({}));
                if let Value::Object(m) = slot {
                    m.insert(
                        if k == "effort" { "effort" } else { "format" }.into(),
                        format,
                    );
                }
            }
            ("passthrough", false) | ("extra_body", true) => match value {
                Value::Object(m) => merged_last.extend(m.clone()),
                Value::Null => {}
                _ => {
                    return Err((
                        Some(key.clone()),
                        format!("provider `{id}`: `{key}` is a mapping of body keys"),
                    ));
                }
            },
            ("tools" | "functions" | "function_call" | "mcp", _) => {
                return Err((
                    Some(key.clone()),
                    format!(
                        "provider `{id}`: `{key}` (tools the model may call) is not supported: \
                         niceeval's suite files send a prompt and check the text that comes back"
                    ),
                ));
            }
            _ => {
                let instead = promptfoo_only(k).unwrap_or(if anthropic {
                    "promptfoo's Anthropic provider does not send it, nor does niceeval"
                } else {
                    "promptfoo's OpenAI provider does not send it, nor does niceeval"
                });
                out.notices.push(format!(
                    "`{key}` in the config of provider `{id}`: {instead}"
                ));
            }
        }
    }
    // `passthrough` / `extra_body` come last in promptfoo's body: they replace any key.
    out.extra.body.extend(merged_last);
    Ok(out)
}

/// A value that may be `file://x.json` / `.yaml` (promptfoo loads such a `response_format`).
fn load_file_value(value: &Value, base: &Path) -> Result<Value, super::DataFileError> {
    match value.as_str().and_then(|s| s.strip_prefix("file://")) {
        Some(file) => super::read_data(&base.join(file)),
        None => Ok(value.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn body_keys_defaults_and_passthrough_as_promptfoo_sends_them() {
        let c = read(
            "openai",
            "openai:gpt-4o",
            "gpt-4o",
            &config(
                json!({"seed": 3, "top_p": 0.5, "stream": false, "num_predict": 9,
                           "passthrough": {"num_predict": 64, "seed": 4}}),
            ),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(c.temperature, Some(0.0));
        assert_eq!(c.max_tokens, Some(1024));
        assert_eq!(c.extra.body["seed"], 4);
        assert_eq!(c.extra.body["top_p"], 0.5);
        assert_eq!(c.extra.body["num_predict"], 64);
        assert!(!c.extra.body.contains_key("stream"));
        assert_eq!(c.notices.len(), 2, "{:?}", c.notices);
        let r = read("openai", "openai:o3", "o3", &Map::new(), Path::new(".")).unwrap();
        assert_eq!((r.temperature, r.max_tokens), (None, None));
        let a = read(
            "anthropic",
            "anthropic:claude",
            "claude",
            &config(json!({"top_p": 0.9, "extra_body": {"x": 1}})),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(
            a.temperature, None,
            "Anthropic: top_p turns temperature off"
        );
        assert_eq!(a.extra.body["stream"], false);
        assert_eq!(a.extra.body["x"], 1);
        let err = read(
            "openai",
            "openai:gpt-4o",
            "gpt-4o",
            &config(json!({"tools": []})),
            Path::new("."),
        )
        .unwrap_err();
        assert_eq!(err.0.as_deref(), Some("tools"));
    }
}
