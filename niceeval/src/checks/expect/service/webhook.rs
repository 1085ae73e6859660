//! `webhook`: the output graded by a URL of the user's. niceeval POSTs
//! `{"output": …, "context": {"prompt": …, "vars": {…}}}` (the output as data when it is data)
//! and reads `{"pass": bool, "score"?: number, "reason"?: string}` back, as promptfoo does:
//! the score defaults to 1 or 0 by `pass`; `not-` flips `pass` and turns the score into
//! `1 − score`. The time limit is `WEBHOOK_TIMEOUT` milliseconds (default 5000).

use super::ServiceFailure;
use serde_json::{Map, Value, json};

use super::Env;
use super::http::{Post, send};
use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;
use crate::checks::expect::response::{described, provider_output, verdict};

/// The matcher of a `webhook` item, for one evaluation.
pub(crate) struct Webhook {
    pub(crate) url: String,
    /// The prompt sent (`context.prompt`; left out when unknown).
    pub(crate) prompt: Option<String>,
    /// The test's variables (`context.vars`).
    pub(crate) vars: Map<String, Value>,
    pub(crate) inverse: bool,
    /// The provider's non-text output, sent instead of a text subject.
    pub(crate) output: Option<Value>,
    pub(crate) env: Env,
    /// Attempts after the first on a connection failure (promptfoo: 4).
    pub(crate) retries: u32,
}

impl Webhook {
    fn grade(&self, output: Value) -> Result<Grade, ServiceFailure> {
        let mut context = Map::new();
        if let Some(prompt) = &self.prompt {
            context.insert("prompt".into(), Value::String(prompt.clone()));
        }
        context.insert("vars".into(), Value::Object(self.vars.clone()));
        let timeout = self.env.millis("WEBHOOK_TIMEOUT").unwrap_or(5000);
        let answer = send(
            &Post {
                url: self.url.clone(),
                headers: Vec::new(),
                body: json!({"output": output, "context": context}),
                timeout: std::time::Duration::from_millis(timeout),
                retries: self.retries,
            },
            &self.env,
        )
        .map_err(|e| e.to_string())?;
        if !answer.ok() {
            return Err(ServiceFailure::from(format!(
                "Webhook response status: {}",
                answer.status
            )));
        }
        let reply: Value = serde_json::from_str(&answer.text).map_err(|e| {
            format!(
                "Invalid JSON response: {e}: {}",
                excerpt::quote_width(&answer.text, 80)
            )
        })?;
        let Some(passed) = reply.get("pass").and_then(Value::as_bool) else {
            return Err(ServiceFailure::from(
                "Webhook response must be a JSON object with a boolean \"pass\" property"
                    .to_string(),
            ));
        };
        let pass = passed != self.inverse;
        let score = match reply.get("score").and_then(Value::as_f64) {
            None => {
                if pass {
                    1.0
                } else {
                    0.0
                }
            }
            Some(score) if self.inverse => 1.0 - score,
            Some(score) => score,
        };
        let reason = match reply.get("reason") {
            Some(Value::String(r)) if !r.is_empty() => r.clone(),
            _ if pass => "Assertion passed".to_string(),
            _ => format!(
                "Webhook returned {}",
                if self.inverse { "true" } else { "false" }
            ),
        };
        Ok(verdict(pass, score, reason))
    }
}

impl Assertion for Webhook {
    fn describe(&self) -> String {
        described(
            self.inverse,
            "webhook",
            &excerpt::quote_width(&self.url, 60),
        )
    }

    fn evaluate(&self, subject: &Subject<'_>) -> Grade {
        let output = provider_output(subject, self.output.as_ref());
        self.grade(output)
            .unwrap_or_else(|e| Grade::error(format!("Webhook error: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;
    use crate::checks::expect::service::fake;

    fn webhook(url: &str, inverse: bool) -> Webhook {
        Webhook {
            url: url.to_string(),
            prompt: Some("Some prompt".into()),
            vars: [("key".to_string(), json!("value"))].into_iter().collect(),
            inverse,
            output: None,
            env: Env::fixed(&[]),
            retries: 0,
        }
    }

    fn run(a: &Webhook, output: &str) -> AssertionResult {
        AssertionResult::evaluate(a, &Subject::Text(output.into()))
    }

    // promptfoo's webhook.test.ts: "should pass when the webhook returns a passing result"
    // (and what it was sent).
    #[test]
    fn a_passing_reply() {
        let (url, received) = fake::serve(vec![(
            200,
            r#"{"pass": true, "score": 0.9, "reason": "Webhook check passed"}"#.into(),
        )]);
        let r = run(
            &webhook(&format!("{url}/webhook"), false),
            "Expected output",
        );
        assert!(r.passed, "{}", r.reason);
        assert_eq!(r.score, 0.9);
        assert_eq!(r.reason, "Webhook check passed");
        let sent = received.lock().unwrap()[0].clone();
        assert_eq!(sent.path, "/webhook");
        assert_eq!(sent.header("content-type"), Some("application/json"));
        assert_eq!(
            sent.body,
            json!({"output": "Expected output", "context": {"prompt": "Some prompt", "vars": {"key": "value"}}})
        );
    }

    // "should fail when the webhook returns a failing result", and `not-`.
    #[test]
    fn a_failing_reply_and_the_not_form() {
        let (url, _) = fake::serve(vec![(
            200,
            r#"{"pass": false, "score": 0.2, "reason": "Webhook check failed"}"#.into(),
        )]);
        let r = run(&webhook(&url, false), "Different output");
        assert!(!r.passed);
        assert_eq!(r.score, 0.2);
        assert_eq!(r.reason, "Webhook check failed");
        let r = run(&webhook(&url, true), "Different output");
        assert!(r.passed);
        assert!((r.score - 0.8).abs() < 1e-12);
        let (url, _) = fake::serve(vec![(200, r#"{"pass": true}"#.into())]);
        let r = run(&webhook(&url, true), "x");
        assert!(!r.passed && r.score == 0.0);
        assert_eq!(r.reason, "Webhook returned true");
        let r = run(&webhook(&url, false), "x");
        assert!(r.passed && r.score == 1.0);
        assert_eq!(r.reason, "Assertion passed");
    }

    // "should fail when the webhook returns an error status", "should handle invalid JSON
    // response", "should handle network errors".
    #[test]
    fn broken_webhooks_are_errors() {
        let (url, _) = fake::serve(vec![(500, "Internal server error".into())]);
        let r = run(&webhook(&url, false), "x");
        assert!(!r.passed);
        assert!(
            r.reason
                .contains("Webhook error: Webhook response status: 500"),
            "{}",
            r.reason
        );
        let (url, _) = fake::serve(vec![(200, "This is not valid JSON".into())]);
        let r = run(&webhook(&url, false), "x");
        assert!(
            r.reason.contains("Webhook error: Invalid JSON response"),
            "{}",
            r.reason
        );
        let (url, _) = fake::serve(vec![(200, r#"{"ok": true}"#.into())]);
        let r = run(&webhook(&url, false), "x");
        assert!(
            r.reason.contains("boolean \"pass\" property"),
            "{}",
            r.reason
        );
        let r = run(&webhook(&fake::closed_port_url(), false), "x");
        assert!(r.error.is_some());
        assert!(
            r.reason
                .starts_with("Webhook error: Request failed after 0 retries: "),
            "{}",
            r.reason
        );
    }

    #[test]
    fn data_is_sent_as_data() {
        let (url, received) = fake::serve(vec![(200, r#"{"pass": true}"#.into())]);
        let a = webhook(&url, false);
        let output = json!({"answer": 42});
        let r = AssertionResult::evaluate(&a, &Subject::Json(std::borrow::Cow::Borrowed(&output)));
        assert!(r.passed);
        assert_eq!(
            received.lock().unwrap()[0].body["output"],
            json!({"answer": 42})
        );
    }
}
