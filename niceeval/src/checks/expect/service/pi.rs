//! `pi`: the output scored by Pi Labs' scoring system, as promptfoo asks it:
//! `POST https://api.withpi.ai/v1/scoring_system/score` with
//! `{"llm_input": <prompt>, "llm_output": <output>, "scoring_spec": [{"question": <value>}]}`
//! and the key `WITHPI_API_KEY` as `x-api-key`; the answer's `total_score` is the score, and
//! it passes strictly over `threshold` (default 0.5).

use super::ServiceFailure;
use serde_json::{Value, json};

use super::Env;
use super::http::{Post, request_timeout, send};
use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;
use crate::checks::expect::response::{described, verdict};

/// Pi Labs' scoring endpoint.
pub(crate) const PI_URL: &str = "https://api.withpi.ai/v1/scoring_system/score";

/// promptfoo's default threshold of `pi`.
pub(crate) const DEFAULT_THRESHOLD: f64 = 0.5;

/// The matcher of a `pi` item, for one evaluation.
pub(crate) struct Pi {
    /// The question the output is scored on.
    pub(crate) question: String,
    /// The prompt sent.
    pub(crate) prompt: Option<String>,
    pub(crate) threshold: f64,
    pub(crate) env: Env,
    /// [`PI_URL`]; a test's fake otherwise.
    pub(crate) url: String,
    /// Attempts after the first on a connection failure (promptfoo: 4).
    pub(crate) retries: u32,
}

impl Pi {
    fn score(&self, prompt: &str, output: &str) -> Result<f64, ServiceFailure> {
        let Some(key) = self.env.get("WITHPI_API_KEY") else {
            return Err(ServiceFailure::from(
                "Env var WITHPI_API_KEY must be set. Visit https://docs.withpi.ai for more information."
                    .to_string(),
            ));
        };
        let answer = send(
            &Post {
                url: self.url.clone(),
                headers: vec![("x-api-key".to_string(), key)],
                body: json!({
                    "llm_input": prompt,
                    "llm_output": output,
                    "scoring_spec": [{"question": self.question}],
                }),
                timeout: request_timeout(&self.env),
                retries: self.retries,
            },
            &self.env,
        )
        .map_err(|e| e.to_string())?;
        let data: Value = serde_json::from_str(&answer.text).map_err(|e| {
            format!(
                "cannot read the answer ({}) as JSON: {e}: {}",
                answer.status_line(),
                excerpt::elide(&answer.text, 200)
            )
        })?;
        data.get("total_score")
            .and_then(Value::as_f64)
            .ok_or_else(|| {
                ServiceFailure::from(format!(
                    "the answer ({}) has no numeric `total_score`: {}",
                    answer.status_line(),
                    excerpt::elide(&answer.text, 200)
                ))
            })
    }
}

impl Assertion for Pi {
    fn describe(&self) -> String {
        described(false, "pi", &excerpt::quote_width(&self.question, 60))
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Grade {
        let Some(prompt) = &self.prompt else {
            return Grade::error("\"pi\" assertion must have a prompt that is a string");
        };
        let output = subject.text().unwrap_or_default();
        match self.score(prompt, &output) {
            Ok(score) => verdict(score > self.threshold, score, "Pi Scorer"),
            Err(e) => Grade::error(format!("Could not perform remote grading: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;
    use crate::checks::expect::service::fake;

    fn pi(url: &str, env: Env) -> Pi {
        Pi {
            question: "test question".into(),
            prompt: Some("test prompt".into()),
            threshold: DEFAULT_THRESHOLD,
            env,
            url: url.into(),
            retries: 0,
        }
    }

    // pi.test.ts: "should call handlePiScorer with correct parameters" — the question, the
    // prompt and the output, in Pi's request shape.
    #[test]
    fn the_request_and_the_score() {
        let (url, received) = fake::serve(vec![(
            200,
            r#"{"total_score": 0.8, "question_scores": {"test question": 0.8}}"#.into(),
        )]);
        let r = AssertionResult::evaluate(
            &pi(&url, Env::fixed(&[("WITHPI_API_KEY", "pi-key")])),
            &Subject::Text("test output".into()),
        );
        assert!(r.passed && (r.score - 0.8).abs() < 1e-12);
        assert_eq!(r.reason, "Pi Scorer");
        let sent = received.lock().unwrap()[0].clone();
        assert_eq!(sent.header("x-api-key"), Some("pi-key"));
        assert_eq!(
            sent.body,
            json!({"llm_input": "test prompt", "llm_output": "test output", "scoring_spec": [{"question": "test question"}]})
        );
    }

    #[test]
    fn the_threshold_is_strict() {
        let (url, _) = fake::serve(vec![(200, r#"{"total_score": 0.5}"#.into())]);
        let r = AssertionResult::evaluate(
            &pi(&url, Env::fixed(&[("WITHPI_API_KEY", "k")])),
            &Subject::Text("x".into()),
        );
        assert!(!r.passed && r.score == 0.5);
    }

    // pi.test.ts: "should validate prompt exists"; and the key must be set.
    #[test]
    fn a_prompt_and_a_key_are_needed() {
        let mut a = pi(PI_URL, Env::fixed(&[]));
        a.prompt = None;
        let r = AssertionResult::evaluate(&a, &Subject::Text("x".into()));
        assert_eq!(
            r.error.as_deref(),
            Some("\"pi\" assertion must have a prompt that is a string")
        );
        let r = AssertionResult::evaluate(&pi(PI_URL, Env::fixed(&[])), &Subject::Text("x".into()));
        assert!(
            r.error
                .as_deref()
                .unwrap()
                .contains("Env var WITHPI_API_KEY must be set")
        );
        let (url, _) = fake::serve(vec![(401, r#"{"detail": "bad key"}"#.into())]);
        let r = AssertionResult::evaluate(
            &pi(&url, Env::fixed(&[("WITHPI_API_KEY", "k")])),
            &Subject::Text("x".into()),
        );
        assert!(
            r.error.as_deref().unwrap().contains("401 Unauthorized"),
            "{}",
            r.reason
        );
    }
}
