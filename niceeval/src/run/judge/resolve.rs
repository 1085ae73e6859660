//! Which judge model a call uses and how it is reached: the resolution order (per call, then
//! `#[eval(judge_model)]`, then `[judge] model` in niceeval.toml, then `NICEEVAL_JUDGE_MODEL`),
//! the base URL, the API key, timeout, cache and concurrency settings.

use std::path::Path;
use std::time::Duration;

use super::JudgeError;
use crate::agents::provider::{ClientOptions, DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT, ModelName};
use crate::config::CacheMode;
use crate::config::Config;

/// What the judge calls of one run know besides what they judge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JudgeEnv<'a> {
    /// The configuration (`[judge]`, with `NICEEVAL_JUDGE_*` applied).
    pub config: &'a Config,
    /// `#[eval(judge_model = ..)]`.
    pub eval_model: Option<&'a str>,
    /// The eval crate's manifest directory, where the cache's target directory is found.
    pub manifest_dir: Option<&'a Path>,
}

/// Where the model name came from, for error messages.
fn source_of(call: Option<&str>, eval: Option<&str>) -> &'static str {
    if call.is_some() {
        "the .model(..) of this judge call"
    } else if eval.is_some() {
        "#[eval(judge_model = ..)]"
    } else {
        "[judge] model in niceeval.toml (or NICEEVAL_JUDGE_MODEL)"
    }
}

/// The model for a judge call: `call`, then `eval`, then the configuration (whose `model` is
/// niceeval.toml's, filled in from `NICEEVAL_JUDGE_MODEL` when the file sets none).
pub(crate) fn resolve_model(
    call: Option<&str>,
    eval: Option<&str>,
    config: &Config,
) -> Result<ModelName, JudgeError> {
    let name = call
        .or(eval)
        .or(config.judge.model.as_deref())
        .filter(|n| !n.trim().is_empty())
        .ok_or(JudgeError::NoModel)?;
    ModelName::parse(name).map_err(|error| JudgeError::Model {
        source_name: source_of(call, eval),
        error,
    })
}

/// How to reach `name`. `[judge] base_url` and `api_key_env` apply to models of the provider
/// of `[judge] model` (to every model when no model is configured), so a per-call
/// `.model("anthropic/…")` is not sent to an OpenAI-compatible base URL.
pub(crate) fn client_options(
    name: &ModelName,
    env: &JudgeEnv<'_>,
) -> Result<ClientOptions, JudgeError> {
    let judge = &env.config.judge;
    let configured_provider = judge
        .model
        .as_deref()
        .and_then(|m| ModelName::parse(m).ok())
        .map(|m| m.provider());
    let applies = configured_provider.is_none_or(|p| p == name.provider());
    let base_url = judge.base_url.as_deref().filter(|_| applies);
    let key_env = judge.api_key_env.as_deref().filter(|_| applies);
    let api_key = crate::agents::provider::resolve_key(
        name,
        base_url,
        key_env,
        " (or name another variable with `api_key_env` under [judge] in niceeval.toml; a judge \
         served on a loopback base_url, such as a local Ollama, needs no key)",
    )
    .map_err(JudgeError::Provider)?;
    let timeout = judge
        .timeout
        .as_ref()
        .map_or(DEFAULT_TIMEOUT, crate::config::DurationSetting::get);
    let mut options = ClientOptions::default()
        .timeout(timeout)
        .timeout_setting("[judge] timeout in niceeval.toml")
        .cache(judge.cache.unwrap_or(CacheMode::ReadWrite))
        .max_concurrency(
            judge
                .max_concurrency
                .or(env.config.provider.max_concurrency)
                .unwrap_or(DEFAULT_MAX_CONCURRENCY),
        );
    if let Some(n) = env.config.provider.requests_per_minute {
        options = options.requests_per_minute(n);
    }
    if let Some(dir) = env.manifest_dir {
        options = options.cache_dir(crate::resources::cache::ResponseCache::judge_dir(
            env.config, dir,
        ));
    } else if let (Some(dir), Some(file)) = (&judge.cache_dir, &env.config.source) {
        options = options.cache_dir(file.parent().unwrap_or(Path::new(".")).join(dir));
    }
    if let Some(url) = base_url {
        options = options.base_url(url);
    }
    if let Some(key) = api_key {
        options = options.api_key(key);
    }
    Ok(options)
}

/// The longest a judge assertion may take in all (every attempt, every wait), a backstop
/// beyond the per-attempt timeout.
pub(crate) fn deadline(options: &ClientOptions) -> Duration {
    let attempts = options.retry.max_retries + 1;
    options.timeout.saturating_mul(attempts)
        + options
            .retry
            .max_retry_after
            .saturating_mul(options.retry.max_retries)
        + Duration::from_secs(5)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml: &str, env: &[(&str, &str)]) -> Config {
        let mut config = Config::parse(toml, "niceeval.toml").unwrap();
        config
            .apply_env(|name| {
                env.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            })
            .unwrap();
        config
    }

    #[test]
    fn resolution_order_is_call_attribute_toml_env() {
        let both = config(
            "[judge]\nmodel = \"openai/toml\"\n",
            &[("NICEEVAL_JUDGE_MODEL", "openai/env")],
        );
        let env_only = config("", &[("NICEEVAL_JUDGE_MODEL", "openai/env")]);
        let model =
            |call, eval, c: &Config| resolve_model(call, eval, c).unwrap().model().to_string();
        assert_eq!(
            model(Some("openai/call"), Some("openai/attr"), &both),
            "call"
        );
        assert_eq!(model(None, Some("openai/attr"), &both), "attr");
        assert_eq!(model(None, None, &both), "toml");
        assert_eq!(model(None, None, &env_only), "env");
        let err = resolve_model(None, None, &Config::default())
            .unwrap_err()
            .to_string();
        for needle in [
            ".model(",
            "judge_model",
            "[judge] model",
            "NICEEVAL_JUDGE_MODEL",
        ] {
            assert!(err.contains(needle), "{needle} missing from: {err}");
        }
        let err = resolve_model(None, Some("gpt-4o"), &both)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("#[eval(judge_model") && err.contains("openai/gpt-4o"),
            "{err}"
        );
    }

    #[test]
    fn base_url_and_key_env_follow_the_configured_provider() {
        let c = config(
            "[judge]\nmodel = \"openai/m\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
            &[],
        );
        let env = JudgeEnv {
            config: &c,
            eval_model: None,
            manifest_dir: None,
        };
        let openai = client_options(&ModelName::parse("openai/x").unwrap(), &env).unwrap();
        assert_eq!(openai.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert!(openai.api_key.is_none(), "loopback needs no key");
        assert_eq!(openai.cache_mode, CacheMode::ReadWrite);
        if std::env::var_os("ANTHROPIC_API_KEY").is_none() {
            let err = client_options(&ModelName::parse("anthropic/y").unwrap(), &env)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("ANTHROPIC_API_KEY") && err.contains("api_key_env"),
                "{err}"
            );
        }
    }
}
