//! `classifier`: the output classified by a HuggingFace text-classification model
//! (`provider: huggingface:text-classification:<model>`, or `hf:…`), as promptfoo asks it:
//! `POST {"inputs": <output>, "parameters": {}}` to the HuggingFace inference router
//! (`https://router.huggingface.co/hf-inference/models/<model>`, or the provider's
//! `config.apiEndpoint`), with `Authorization: Bearer` the provider's `config.apiKey`, else
//! `HF_TOKEN`, else `HF_API_TOKEN`; the answer is `[{label, score}, …]` (or that list inside a
//! one-item list).
//!
//! With a `value` (a label), the score is that label's (0 when absent); without, the highest
//! score. It passes at or over `threshold` (default 1, with a margin of one machine epsilon);
//! `not-` flips the verdict and turns the score into `1 − score`.

use super::ServiceFailure;
use serde_json::{Value, json};

use super::http::{Post, request_timeout, send};
use super::{Env, ProviderSpec};
use crate::base::assertion::{Assertion, Grade, Subject};
use crate::checks::expect::response::{described, verdict};

/// Where promptfoo sends HuggingFace inference requests.
pub(crate) const HF_INFERENCE_URL: &str = "https://router.huggingface.co/hf-inference";

/// promptfoo's default threshold of `classifier`.
pub(crate) const DEFAULT_THRESHOLD: f64 = 1.0;

/// The model of a text-classification provider id, or why the id names none.
pub(crate) fn model_of(id: &str) -> Result<String, ServiceFailure> {
    let parts: Vec<&str> = id.split(':').collect();
    match parts.as_slice() {
        ["huggingface" | "hf", "text-classification", model @ ..]
            if !model.is_empty() && !model.join(":").is_empty() =>
        {
            Ok(model.join(":"))
        }
        _ => Err(ServiceFailure::from(format!(
            "`provider` {id:?} is not a classification provider; `classifier` needs huggingface:text-classification:<model> (or hf:text-classification:<model>)"
        ))),
    }
}

/// The matcher of a `classifier` item, for one evaluation.
pub(crate) struct Classifier {
    pub(crate) model: String,
    pub(crate) provider: ProviderSpec,
    /// The label whose score counts; `None` for the highest.
    pub(crate) label: Option<String>,
    pub(crate) threshold: f64,
    pub(crate) inverse: bool,
    pub(crate) env: Env,
    /// Attempts after the first on a connection failure (promptfoo: 4).
    pub(crate) retries: u32,
}

impl Classifier {
    fn url(&self) -> String {
        self.provider
            .setting("apiEndpoint")
            .unwrap_or_else(|| format!("{HF_INFERENCE_URL}/models/{}", self.model))
    }

    /// Each label's score, or the grader's error.
    fn classify(&self, text: &str) -> Result<Vec<(String, f64)>, ServiceFailure> {
        let url = self.url();
        let token = self
            .provider
            .setting("apiKey")
            .or_else(|| self.env.get("HF_TOKEN"))
            .or_else(|| self.env.get("HF_API_TOKEN"));
        let headers = token
            .map(|t| vec![("Authorization".to_string(), format!("Bearer {t}"))])
            .unwrap_or_default();
        let answer = send(
            &Post {
                url: url.clone(),
                headers,
                body: json!({"inputs": text, "parameters": {}}),
                timeout: request_timeout(&self.env),
                retries: self.retries,
            },
            &self.env,
        )
        .map_err(|e| format!("API call error: {e}"))?;
        let data: Value = serde_json::from_str(&answer.text).map_err(|e| {
            format!(
                "API call error: cannot read the answer of {url} ({}) as JSON: {e}. Received text: {}",
                answer.status_line(),
                crate::base::excerpt::elide(&answer.text, 200)
            )
        })?;
        if let Some(error) = data.as_object().and_then(|m| m.get("error")) {
            let error = error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_string);
            return Err(ServiceFailure::from(format!("API call error: {error}")));
        }
        // `[[{label, score}, …]]` is one text's list.
        let items = match &data {
            Value::Array(outer) if outer.len() == 1 && outer[0].is_array() => &outer[0],
            other => other,
        };
        let malformed = || format!("Malformed response data: {data}");
        let list = items
            .as_array()
            .filter(|l| !l.is_empty())
            .ok_or_else(malformed)?;
        list.iter()
            .map(|item| {
                let label = item.get("label").and_then(Value::as_str);
                let score = item
                    .get("score")
                    .and_then(Value::as_f64)
                    .filter(|s| s.is_finite());
                match (label, score) {
                    (Some(label), Some(score)) => Ok((label.to_string(), score)),
                    _ => Err(ServiceFailure::from(malformed())),
                }
            })
            .collect()
    }
}

impl Assertion for Classifier {
    fn describe(&self) -> String {
        let detail = match &self.label {
            Some(label) => format!("{}, {label:?}", self.model),
            None => self.model.clone(),
        };
        described(self.inverse, "classifier", &detail)
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Grade {
        let text = subject.text().unwrap_or_default();
        let scores = match self.classify(&text) {
            Ok(scores) => scores,
            Err(e) => return Grade::error(e),
        };
        // A label given twice keeps its last score, as an object keyed by label does.
        let score_of = |label: &str| {
            scores
                .iter()
                .rev()
                .find(|(l, _)| l == label)
                .map(|(_, s)| *s)
        };
        let score = match &self.label {
            None => scores
                .iter()
                .map(|(_, s)| *s)
                .fold(f64::NEG_INFINITY, f64::max),
            Some(label) => score_of(label).unwrap_or(0.0),
        };
        let threshold = self.threshold;
        let mut pass = score >= threshold - f64::EPSILON;
        let comparison = if pass { ">=" } else { "<" };
        let reason = match &self.label {
            None => format!("Maximum classification score {score:.2} {comparison} {threshold}"),
            Some(label) => {
                format!("Classification {label} has score {score:.2} {comparison} {threshold}")
            }
        };
        let mut score = score;
        if self.inverse {
            pass = !pass;
            score = 1.0 - score;
        }
        verdict(pass, score, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;
    use crate::checks::expect::service::fake;

    fn classifier(
        endpoint: &str,
        label: Option<&str>,
        threshold: f64,
        inverse: bool,
        env: Env,
    ) -> Classifier {
        let provider = ProviderSpec::read(
            &json!({"id": "huggingface:text-classification:org/toxic-bert", "config": {"apiEndpoint": endpoint}}),
            "classification",
        )
        .unwrap();
        Classifier {
            model: model_of(&provider.id).unwrap(),
            provider,
            label: label.map(str::to_string),
            threshold,
            inverse,
            env,
            retries: 0,
        }
    }

    fn run(a: &Classifier, output: &str) -> AssertionResult {
        AssertionResult::evaluate(a, &Subject::Text(output.into()))
    }

    #[test]
    fn provider_ids() {
        assert_eq!(
            model_of("huggingface:text-classification:org/model").unwrap(),
            "org/model"
        );
        assert_eq!(model_of("hf:text-classification:a:b").unwrap(), "a:b");
        assert!(model_of("huggingface:text-generation:gpt2").is_err());
        assert!(model_of("huggingface:text-classification").is_err());
        assert!(model_of("openai:gpt-4o").is_err());
    }

    // The HuggingFace wire format, the token from the environment, and promptfoo's rules
    // (matchesClassification, classifier.test.ts).
    #[test]
    fn a_label_is_scored_and_the_request_is_the_inference_api() {
        let (url, received) = fake::serve(vec![(
            200,
            r#"[[{"label": "toxic", "score": 0.25}, {"label": "safe", "score": 0.9}]]"#.into(),
        )]);
        let env = Env::fixed(&[("HF_API_TOKEN", "hf-secondary")]);
        let r = run(
            &classifier(
                &format!("{url}/models/x"),
                Some("safe"),
                0.7,
                false,
                env.clone(),
            ),
            "model output",
        );
        assert!(r.passed && (r.score - 0.9).abs() < 1e-12);
        assert_eq!(r.reason, "Classification safe has score 0.90 >= 0.7");
        let sent = received.lock().unwrap()[0].clone();
        assert_eq!(sent.path, "/models/x");
        assert_eq!(
            sent.body,
            json!({"inputs": "model output", "parameters": {}})
        );
        assert_eq!(sent.header("authorization"), Some("Bearer hf-secondary"));
        // HF_TOKEN wins over HF_API_TOKEN.
        let env = Env::fixed(&[("HF_TOKEN", "hf-first"), ("HF_API_TOKEN", "hf-secondary")]);
        run(&classifier(&url, Some("safe"), 0.7, false, env), "x");
        assert_eq!(
            received.lock().unwrap()[1].header("authorization"),
            Some("Bearer hf-first")
        );
        // A label the model did not return scores 0.
        let r = run(
            &classifier(&url, Some("spam"), 0.5, false, Env::fixed(&[])),
            "x",
        );
        assert!(!r.passed && r.score == 0.0);
        assert_eq!(r.reason, "Classification spam has score 0.00 < 0.5");
        assert_eq!(received.lock().unwrap()[2].header("authorization"), None);
    }

    // classifier.test.ts, "uses the default threshold and inverts matcher results for inverse
    // assertions": no label, threshold 1, a best score of 0.25 fails, so `not-` passes with 0.75.
    #[test]
    fn default_threshold_and_not_form() {
        let (url, _) = fake::serve(vec![(
            200,
            r#"[{"label": "a", "score": 0.25}, {"label": "b", "score": 0.1}]"#.into(),
        )]);
        let r = run(
            &classifier(&url, None, DEFAULT_THRESHOLD, false, Env::fixed(&[])),
            "x",
        );
        assert!(!r.passed);
        assert_eq!(r.reason, "Maximum classification score 0.25 < 1");
        let r = run(
            &classifier(&url, None, DEFAULT_THRESHOLD, true, Env::fixed(&[])),
            "x",
        );
        assert!(r.passed && (r.score - 0.75).abs() < 1e-12);
    }

    // classifier.test.ts, "preserves the full grader failure result for inverse assertions": a
    // failed classification is not inverted.
    #[test]
    fn service_failures_are_errors_either_way() {
        let (url, _) = fake::serve(vec![(503, r#"{"error": "Model is loading"}"#.into())]);
        for inverse in [false, true] {
            let r = run(&classifier(&url, None, 0.5, inverse, Env::fixed(&[])), "x");
            assert!(!r.passed);
            assert_eq!(r.error.as_deref(), Some("API call error: Model is loading"));
        }
        let (url, _) = fake::serve(vec![(200, r#"[{"label": "a"}]"#.into())]);
        let r = run(&classifier(&url, None, 0.5, false, Env::fixed(&[])), "x");
        assert!(
            r.reason.starts_with("Malformed response data"),
            "{}",
            r.reason
        );
        let (url, _) = fake::serve(vec![(200, "[]".into())]);
        assert!(
            run(&classifier(&url, None, 0.5, false, Env::fixed(&[])), "x")
                .error
                .is_some()
        );
        let r = run(
            &classifier(&fake::closed_port_url(), None, 0.5, false, Env::fixed(&[])),
            "x",
        );
        assert!(
            r.reason
                .starts_with("API call error: Request failed after 0 retries"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn the_default_url_is_the_inference_router() {
        let provider =
            ProviderSpec::read(&json!("hf:text-classification:org/m"), "classification").unwrap();
        let a = Classifier {
            model: "org/m".into(),
            provider,
            label: None,
            threshold: 1.0,
            inverse: false,
            env: Env::fixed(&[]),
            retries: 0,
        };
        assert_eq!(
            a.url(),
            "https://router.huggingface.co/hf-inference/models/org/m"
        );
    }
}
