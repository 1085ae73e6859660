//! `finish-reason`: why the model stopped, compared without regard to case with the reason the
//! item expects. The provider's own spelling is first put in the common form promptfoo's
//! providers report (`end_turn` and `stop_sequence` are `stop`, `max_tokens` is `length`,
//! `tool_use` and `function_call` are `tool_calls`, `refusal` is `content_filter`); the expected
//! value is compared as written, as promptfoo compares it.

use super::{described, verdict};
use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;

/// Provider spellings and the common form each stands for (promptfoo's table); a reason not
/// listed is kept, lower-cased.
const COMMON_FORMS: &[(&str, &str)] = &[
    ("stop", "stop"),
    ("length", "length"),
    ("content_filter", "content_filter"),
    ("tool_calls", "tool_calls"),
    ("function_call", "tool_calls"),
    ("end_turn", "stop"),
    ("stop_sequence", "stop"),
    ("max_tokens", "length"),
    ("model_context_window_exceeded", "length"),
    ("tool_use", "tool_calls"),
    ("refusal", "content_filter"),
    ("pause_turn", "pause_turn"),
];

/// The common form of a provider's finish reason; `None` for a blank one.
pub(crate) fn common_form(raw: &str) -> Option<String> {
    let key = raw.trim().to_lowercase();
    if key.is_empty() {
        return None;
    }
    Some(
        COMMON_FORMS
            .iter()
            .find(|(spelling, _)| *spelling == key)
            .map_or(key, |(_, form)| (*form).to_string()),
    )
}

/// The matcher of a `finish-reason` item, for one evaluation.
pub(crate) struct FinishReason {
    /// The reason the item expects, as written.
    pub(crate) expected: String,
    /// The reason the provider gave, as it gave it.
    pub(crate) actual: Option<String>,
    /// The `not-` form.
    pub(crate) inverse: bool,
}

impl Assertion for FinishReason {
    fn describe(&self) -> String {
        described(
            self.inverse,
            "finish_reason",
            &excerpt::quote_width(&self.expected, 40),
        )
    }

    fn evaluate(&self, _output: &Subject<'_>) -> Grade {
        let Some(actual) = self.actual.as_deref().and_then(common_form) else {
            // No reason: the `not-` form passes, as in promptfoo.
            let pass = self.inverse;
            let reason = if pass {
                "Assertion passed"
            } else {
                "Provider did not supply stop/finish reason"
            };
            return verdict(pass, if pass { 1.0 } else { 0.0 }, reason);
        };
        let pass = (self.expected.to_lowercase() == actual.to_lowercase()) != self.inverse;
        let reason = if pass {
            "Assertion passed".to_string()
        } else {
            format!(
                "Expected finish reason {}\"{}\" but got \"{actual}\"",
                if self.inverse { "not " } else { "" },
                self.expected
            )
        };
        verdict(pass, if pass { 1.0 } else { 0.0 }, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;

    fn run(expected: &str, actual: Option<&str>, inverse: bool) -> AssertionResult {
        let a = FinishReason {
            expected: expected.into(),
            actual: actual.map(Into::into),
            inverse,
        };
        AssertionResult::evaluate(&a, &Subject::Text("out".into()))
    }

    // promptfoo's finishReason.test.ts: "should pass when finish reason matches", "should fail
    // when stop reason does not match", "should fail when provider does not return stop reason".
    #[test]
    fn promptfoo_vectors() {
        let r = run("stop", Some("stop"), false);
        assert!(r.passed && r.score == 1.0);
        let r = run("stop", Some("length"), false);
        assert!(!r.passed && r.score == 0.0);
        assert_eq!(
            r.reason,
            r#"Expected finish reason "stop" but got "length""#
        );
        let r = run("stop", None, false);
        assert!(!r.passed && r.score == 0.0);
        assert!(r.reason.contains("did not supply"));
    }

    #[test]
    fn provider_spellings_take_their_common_form() {
        assert!(run("stop", Some("end_turn"), false).passed);
        assert!(run("STOP", Some(" Stop_Sequence "), false).passed);
        assert!(run("length", Some("max_tokens"), false).passed);
        assert!(run("tool_calls", Some("tool_use"), false).passed);
        assert!(run("tool_calls", Some("function_call"), false).passed);
        assert!(run("content_filter", Some("refusal"), false).passed);
        assert!(run("weird", Some("WEIRD"), false).passed);
        // The expected value is compared as written: promptfoo does not map it.
        assert!(!run("end_turn", Some("end_turn"), false).passed);
        assert_eq!(common_form("  "), None);
    }

    #[test]
    fn not_form_flips_the_verdict() {
        let r = run("stop", Some("length"), true);
        assert!(r.passed && r.score == 1.0);
        let r = run("stop", Some("end_turn"), true);
        assert!(!r.passed);
        assert_eq!(
            r.reason,
            r#"Expected finish reason not "stop" but got "stop""#
        );
        // No reason at all: the not- form passes.
        assert!(run("stop", None, true).passed);
        assert!(run("stop", Some(""), true).passed);
    }
}
