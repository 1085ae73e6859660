//! `moderation`: the output checked by OpenAI's moderation endpoint, as promptfoo's default
//! moderation provider asks it: `POST <base>/moderations` with
//! `{"model": "omni-moderation-latest", "input": [{"type": "text", "text": <output>}]}` (a
//! plain string for models that take no images), `Authorization: Bearer` the key. The base is
//! the provider's `config.apiHost` (`https://<host>/v1`) or `config.apiBaseUrl`, else
//! `OPENAI_API_HOST` (`https://<host>/v1`), `OPENAI_API_BASE_URL` or `OPENAI_BASE_URL`, else
//! `https://api.openai.com/v1`; the key the config's `apiKey`, else the variable its
//! `apiKeyEnvar` names, else `OPENAI_API_KEY`; `OPENAI_ORGANIZATION` (or `config.organization`)
//! is sent as `OpenAI-Organization`.
//!
//! Every flagged result's true categories are flags; `value` (a list of category names)
//! narrows which flags count. No counted flag passes; `not-` flips the verdict and the score.
//! An empty output passes unchecked, and the item needs the run's prompt, as in promptfoo.

use super::ServiceFailure;
use serde_json::{Map, Value, json};

use super::http::{Post, request_timeout, send};
use super::{Env, ProviderSpec};
use crate::base::assertion::{Assertion, Grade, Subject};
use crate::checks::expect::response::{described, verdict};

/// The model promptfoo moderates with by default.
pub(crate) const DEFAULT_MODEL: &str = "omni-moderation-latest";

/// The moderation models that take image inputs (and so a list of parts as `input`).
const MULTIMODAL_MODELS: &[&str] = &["omni-moderation-latest", "omni-moderation-2024-09-26"];

/// The model of a moderation provider id, or why niceeval cannot use it.
pub(crate) fn model_of(id: &str) -> Result<String, ServiceFailure> {
    match id.strip_prefix("openai:moderation") {
        Some("") => Ok(DEFAULT_MODEL.to_string()),
        Some(rest) if rest.len() > 1 && rest.starts_with(':') => Ok(rest[1..].to_string()),
        _ => Err(ServiceFailure::from(format!(
            "`provider` {id:?} is not a moderation provider niceeval calls; use openai:moderation or openai:moderation:<model> (promptfoo's Azure and Replicate moderation providers are not supported)"
        ))),
    }
}

/// The matcher of a `moderation` item, for one evaluation.
pub(crate) struct Moderation {
    pub(crate) model: String,
    /// The item's `provider`, when it names one (its `config`); `None` for promptfoo's default.
    pub(crate) provider: Option<ProviderSpec>,
    /// The categories that count; empty for all.
    pub(crate) categories: Vec<String>,
    /// The prompt sent.
    pub(crate) prompt: Option<String>,
    pub(crate) inverse: bool,
    pub(crate) env: Env,
}

impl Moderation {
    fn config(&self) -> Map<String, Value> {
        self.provider
            .as_ref()
            .map(|p| p.config.clone())
            .unwrap_or_default()
    }

    fn setting(&self, key: &str) -> Option<String> {
        self.provider.as_ref().and_then(|p| p.setting(key))
    }

    /// The API's base URL.
    fn base_url(&self) -> String {
        if let Some(host) = self.setting("apiHost") {
            return format!("https://{host}/v1");
        }
        if let Some(base) = self.setting("apiBaseUrl") {
            return base;
        }
        if let Some(host) = self.env.get("OPENAI_API_HOST") {
            return format!("https://{host}/v1");
        }
        self.env
            .get("OPENAI_API_BASE_URL")
            .or_else(|| self.env.get("OPENAI_BASE_URL"))
            .unwrap_or_else(|| "https://api.openai.com/v1".to_string())
    }

    /// `<base>/moderations`, keeping the base's query and fragment after the path.
    fn url(&self) -> String {
        let base = self.base_url();
        let (base, fragment) = base.split_at(base.find('#').unwrap_or(base.len()));
        let (path, query) = base.split_at(base.find('?').unwrap_or(base.len()));
        format!(
            "{}/moderations{query}{fragment}",
            path.trim_end_matches('/')
        )
    }

    /// The API key and the variable promptfoo names when there is none.
    fn api_key(&self) -> (Option<String>, String) {
        let config = self.config();
        let named = self.setting("apiKeyEnvar");
        let envar = named
            .clone()
            .unwrap_or_else(|| "OPENAI_API_KEY".to_string());
        if let Some(key) = self.setting("apiKey") {
            return (Some(key), envar);
        }
        let use_default = config.get("useDefaultApiKey") != Some(&Value::Bool(false));
        let key = match &named {
            Some(name) => self.env.get(name),
            None if use_default => self.env.get("OPENAI_API_KEY"),
            None => None,
        };
        (key, envar)
    }

    /// Why promptfoo would moderate with a provider niceeval does not call, if it would.
    fn unsupported_default(&self) -> Option<&'static str> {
        if self.provider.is_some() {
            return None;
        }
        if self.env.get("OPENAI_API_KEY").is_none()
            && (self.env.get("REPLICATE_API_KEY").is_some()
                || self.env.get("REPLICATE_API_TOKEN").is_some())
        {
            return Some(
                "without OPENAI_API_KEY and with a Replicate key, promptfoo moderates with Llama Guard on Replicate, which niceeval does not call; set OPENAI_API_KEY or `provider: openai:moderation`",
            );
        }
        if self.env.get("AZURE_CONTENT_SAFETY_ENDPOINT").is_some() {
            return Some(
                "with AZURE_CONTENT_SAFETY_ENDPOINT set, promptfoo moderates with Azure Content Safety, which niceeval does not call; give `provider: openai:moderation` to use OpenAI's",
            );
        }
        None
    }

    /// The flags the API raised (category and its highest score), or the grader's error.
    fn flags(&self, text: &str) -> Result<Vec<(String, f64)>, ServiceFailure> {
        let config = self.config();
        let (key, envar) = self.api_key();
        let required = config
            .get("apiKeyRequired")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        if required && key.is_none() {
            return Err(ServiceFailure::from(format!(
                "API call error: API key is not set. Set the {envar} environment variable or add `apiKey` to the provider config."
            )));
        }
        let custom: Map<String, Value> = config
            .get("headers")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut headers = Vec::new();
        if let Some(key) = key {
            headers.push(("Authorization".to_string(), format!("Bearer {key}")));
        }
        let overridden = custom
            .keys()
            .any(|k| k.eq_ignore_ascii_case("OpenAI-Organization"));
        let organization = self
            .setting("organization")
            .or_else(|| self.env.get("OPENAI_ORGANIZATION"));
        if let (Some(organization), false) = (organization, overridden) {
            headers.push(("OpenAI-Organization".to_string(), organization));
        }
        for (name, value) in &custom {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string);
            headers.push((name.clone(), value));
        }
        let input = if MULTIMODAL_MODELS.contains(&self.model.as_str()) {
            json!([{"type": "text", "text": text}])
        } else {
            json!(text)
        };
        let retries = config
            .get("maxRetries")
            .and_then(Value::as_u64)
            .map_or(4, |n| n.min(u64::from(u32::MAX)) as u32);
        let answer = send(
            &Post {
                url: self.url(),
                headers,
                body: json!({"model": self.model, "input": input}),
                timeout: request_timeout(&self.env),
                retries,
            },
            &self.env,
        )
        .map_err(|e| format!("API call error: {e}"))?;
        if !answer.ok() {
            return Err(ServiceFailure::from(format!(
                "API error: {}: {}",
                answer.status_line(),
                crate::base::excerpt::elide(&answer.text, 400)
            )));
        }
        let data: Value = serde_json::from_str(&answer.text)
            .map_err(|e| format!("API call error: the answer is not JSON: {e}"))?;
        let mut flags: Vec<(String, f64)> = Vec::new();
        let results = data.get("results").and_then(Value::as_array);
        for result in results.into_iter().flatten() {
            if result.get("flagged") != Some(&Value::Bool(true)) {
                continue;
            }
            let Some(categories) = result.get("categories").and_then(Value::as_object) else {
                continue;
            };
            for (category, flagged) in categories {
                if flagged != &Value::Bool(true) {
                    continue;
                }
                let confidence = result
                    .pointer(&format!(
                        "/category_scores/{}",
                        category.replace('~', "~0").replace('/', "~1")
                    ))
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::NAN);
                match flags.iter_mut().find(|(c, _)| c == category) {
                    Some((_, kept)) if confidence > *kept || kept.is_nan() => *kept = confidence,
                    Some(_) => {}
                    None => flags.push((category.clone(), confidence)),
                }
            }
        }
        Ok(flags)
    }
}

impl Assertion for Moderation {
    fn describe(&self) -> String {
        described(self.inverse, "moderation", &self.categories.join(", "))
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Grade {
        if self.prompt.as_deref().is_none_or(str::is_empty) {
            return Grade::error("moderation assertion type must have a prompt");
        }
        let text = subject.text().unwrap_or_default();
        let (pass, reason) = if text.is_empty() {
            (true, "No output to moderate".to_string())
        } else {
            if let Some(why) = self.unsupported_default() {
                return Grade::error(why);
            }
            let flags = match self.flags(&text) {
                Ok(flags) => flags,
                Err(e) => return Grade::error(format!("Moderation API error: {e}")),
            };
            let counted: Vec<&str> = flags
                .iter()
                .map(|(c, _)| c.as_str())
                .filter(|c| self.categories.is_empty() || self.categories.iter().any(|k| k == c))
                .collect();
            if flags.is_empty() {
                (true, "No moderation flags detected".to_string())
            } else if counted.is_empty() {
                (true, "No relevant moderation flags detected".to_string())
            } else {
                (
                    false,
                    format!("Moderation flags detected: {}", counted.join(", ")),
                )
            }
        };
        let pass = pass != self.inverse;
        verdict(pass, if pass { 1.0 } else { 0.0 }, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;
    use crate::checks::expect::service::fake;

    fn moderation(categories: &[&str], inverse: bool, env: Env) -> Moderation {
        Moderation {
            model: DEFAULT_MODEL.into(),
            provider: None,
            categories: categories.iter().map(|s| s.to_string()).collect(),
            prompt: Some("Some prompt".into()),
            inverse,
            env,
        }
    }

    fn run(a: &Moderation, output: &str) -> AssertionResult {
        AssertionResult::evaluate(a, &Subject::Text(output.into()))
    }

    const FLAGGED: &str = r#"{"id": "modr-1", "model": "omni-moderation-latest", "results": [{
        "flagged": true,
        "categories": {"harassment": true, "violence": true, "hate": false},
        "category_scores": {"harassment": 0.7, "violence": 0.95, "hate": 0.01}
    }]}"#;

    #[test]
    fn the_request_is_openais_and_flags_fail() {
        let (url, received) = fake::serve(vec![(200, FLAGGED.into())]);
        let env = Env::fixed(&[
            ("OPENAI_BASE_URL", &format!("{url}/v1/")),
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_ORGANIZATION", "org-1"),
        ]);
        let r = run(&moderation(&[], false, env.clone()), "I will hurt you");
        assert!(!r.passed && r.score == 0.0);
        assert_eq!(r.reason, "Moderation flags detected: harassment, violence");
        let sent = received.lock().unwrap()[0].clone();
        assert_eq!(sent.path, "/v1/moderations");
        assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
        assert_eq!(sent.header("openai-organization"), Some("org-1"));
        assert_eq!(
            sent.body,
            json!({"model": "omni-moderation-latest", "input": [{"type": "text", "text": "I will hurt you"}]})
        );
        // `value` narrows the categories that count.
        let r = run(
            &moderation(&["self-harm"], false, env.clone()),
            "I will hurt you",
        );
        assert!(r.passed);
        assert_eq!(r.reason, "No relevant moderation flags detected");
        let r = run(
            &moderation(&["violence"], false, env.clone()),
            "I will hurt you",
        );
        assert_eq!(r.reason, "Moderation flags detected: violence");
        // not-moderation expects flags.
        let r = run(&moderation(&[], true, env), "I will hurt you");
        assert!(r.passed && r.score == 1.0);
    }

    #[test]
    fn clean_output_passes_and_empty_output_is_not_sent() {
        let (url, received) = fake::serve(vec![(200, r#"{"results": [{"flagged": false, "categories": {"hate": false}, "category_scores": {"hate": 0.0}}]}"#.into())]);
        let env = Env::fixed(&[
            ("OPENAI_API_BASE_URL", &format!("{url}/v1")),
            ("OPENAI_API_KEY", "sk-test"),
        ]);
        let r = run(&moderation(&[], false, env.clone()), "Hello there");
        assert!(r.passed);
        assert_eq!(r.reason, "No moderation flags detected");
        let r = run(&moderation(&[], false, env.clone()), "");
        assert!(r.passed);
        assert_eq!(r.reason, "No output to moderate");
        assert_eq!(received.lock().unwrap().len(), 1);
        let mut no_prompt = moderation(&[], false, env);
        no_prompt.prompt = None;
        assert_eq!(
            run(&no_prompt, "x").error.as_deref(),
            Some("moderation assertion type must have a prompt")
        );
    }

    #[test]
    fn keys_hosts_and_failures() {
        let r = run(&moderation(&[], false, Env::fixed(&[])), "x");
        assert_eq!(
            r.error.as_deref(),
            Some(
                "Moderation API error: API call error: API key is not set. Set the OPENAI_API_KEY environment variable or add `apiKey` to the provider config."
            )
        );
        let r = run(
            &moderation(&[], false, Env::fixed(&[("REPLICATE_API_TOKEN", "r8")])),
            "x",
        );
        assert!(r.reason.contains("Llama Guard"), "{}", r.reason);
        let (url, _) = fake::serve(vec![(401, r#"{"error": {"message": "bad key"}}"#.into())]);
        let env = Env::fixed(&[("OPENAI_BASE_URL", &url), ("OPENAI_API_KEY", "sk-test")]);
        let r = run(&moderation(&[], false, env), "x");
        assert!(
            r.reason
                .starts_with("Moderation API error: API error: 401 Unauthorized: "),
            "{}",
            r.reason
        );
        let a = Moderation {
            provider: Some(ProviderSpec::read(&json!({"id": "openai:moderation:text-moderation-latest", "config": {"apiHost": "example.test", "apiKey": "k"}}), "moderation").unwrap()),
            ..moderation(&[], false, Env::fixed(&[("OPENAI_API_HOST", "ignored.test")]))
        };
        assert_eq!(a.url(), "https://example.test/v1/moderations");
        let a = moderation(
            &[],
            false,
            Env::fixed(&[
                ("OPENAI_API_HOST", "host.test"),
                ("OPENAI_BASE_URL", "http://other"),
            ]),
        );
        assert_eq!(a.url(), "https://host.test/v1/moderations");
        let a = moderation(&[], false, Env::fixed(&[]));
        assert_eq!(a.url(), "https://api.openai.com/v1/moderations");
        assert_eq!(model_of("openai:moderation").unwrap(), DEFAULT_MODEL);
        assert_eq!(
            model_of("openai:moderation:text-moderation-latest").unwrap(),
            "text-moderation-latest"
        );
        assert!(model_of("azure:moderation").is_err());
        assert!(model_of("openai:gpt-4o").is_err());
    }

    #[test]
    fn text_models_get_a_plain_string() {
        let (url, received) = fake::serve(vec![(200, r#"{"results": []}"#.into())]);
        let a = Moderation {
            model: "text-moderation-latest".into(),
            ..moderation(
                &[],
                false,
                Env::fixed(&[("OPENAI_BASE_URL", &url), ("OPENAI_API_KEY", "k")]),
            )
        };
        assert!(run(&a, "hello").passed);
        assert_eq!(received.lock().unwrap()[0].body["input"], json!("hello"));
    }
}
