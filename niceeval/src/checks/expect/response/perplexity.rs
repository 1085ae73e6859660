//! `perplexity` and `perplexity-score`: how surprised the model was by its own tokens, from the
//! log-probabilities the provider returned. With `m` the mean log-probability, perplexity is
//! `e^(−m)` (lower is surer; it passes at or under `threshold`) and the score form is
//! `1 / (1 + e^(−m))` (higher is surer; it passes at or over `threshold`). Without a threshold
//! both pass, as in promptfoo; a provider that returned no log-probabilities is an error.

use super::{described, verdict};
use crate::base::assertion::{Assertion, Grade, Subject};

/// Which of the two types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `perplexity`: `e^(−mean)`, a ceiling.
    Perplexity,
    /// `perplexity-score`: `1 / (1 + e^(−mean))`, a floor.
    Score,
}

/// The matcher of a `perplexity` or `perplexity-score` item, for one evaluation.
pub(crate) struct Perplexity {
    pub(crate) form: Form,
    /// The provider's log-probabilities, one per token.
    pub(crate) logprobs: Option<Vec<f64>>,
    pub(crate) threshold: Option<f64>,
    pub(crate) inverse: bool,
}

impl Assertion for Perplexity {
    fn describe(&self) -> String {
        let name = match self.form {
            Form::Perplexity => "perplexity",
            Form::Score => "perplexity_score",
        };
        let detail = self.threshold.map(|t| t.to_string()).unwrap_or_default();
        described(self.inverse, name, &detail)
    }

    fn evaluate(&self, _output: &Subject<'_>) -> Grade {
        let logprobs = match self.logprobs.as_deref() {
            Some(l) if !l.is_empty() => l,
            _ => {
                return Grade::error(match self.form {
                    Form::Perplexity => {
                        "Perplexity assertion does not support providers that do not return logProbs"
                    }
                    Form::Score => {
                        "perplexity-score assertion does not support providers that do not return logProbs"
                    }
                });
            }
        };
        let mean = logprobs.iter().sum::<f64>() / logprobs.len() as f64;
        match self.form {
            Form::Perplexity => {
                let perplexity = (-mean).exp();
                let pass = self
                    .threshold
                    .is_none_or(|t| (perplexity <= t) != self.inverse);
                let reason = match self.threshold {
                    Some(t) if !pass => format!(
                        "Perplexity {perplexity:.2} is {} threshold {t}",
                        if self.inverse {
                            "less than or equal to"
                        } else {
                            "greater than"
                        }
                    ),
                    _ => "Assertion passed".to_string(),
                };
                verdict(pass, if pass { 1.0 } else { 0.0 }, reason)
            }
            Form::Score => {
                let norm = 1.0 / (1.0 + (-mean).exp());
                let pass = self.threshold.is_none_or(|t| (norm >= t) != self.inverse);
                let reason = match self.threshold {
                    Some(t) if !pass => format!(
                        "Perplexity score {norm:.2} is {} threshold {t}",
                        if self.inverse {
                            "greater than or equal to"
                        } else {
                            "less than"
                        }
                    ),
                    _ => "Assertion passed".to_string(),
                };
                let score = if self.inverse { 1.0 - norm } else { norm };
                verdict(pass, score, reason)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::AssertionResult;

    fn run(
        form: Form,
        logprobs: Option<Vec<f64>>,
        threshold: Option<f64>,
        inverse: bool,
    ) -> AssertionResult {
        let a = Perplexity {
            form,
            logprobs,
            threshold,
            inverse,
        };
        AssertionResult::evaluate(&a, &Subject::Text("".into()))
    }

    // promptfoo's perplexity.test.ts, `handlePerplexity` (threshold 5): [0, 0] is perplexity 1,
    // [-2] is 7.39.
    #[test]
    fn perplexity_vectors() {
        let p = Form::Perplexity;
        assert!(
            run(p, Some(vec![0.0, 0.0]), Some(5.0), false).passed,
            "within threshold"
        );
        assert!(
            !run(p, Some(vec![-2.0]), Some(5.0), false).passed,
            "exceeds threshold"
        );
        assert!(run(p, Some(vec![-2.0]), None, false).passed, "no threshold");
        let r = run(p, None, Some(5.0), false);
        assert!(
            r.error
                .as_deref()
                .unwrap()
                .contains("does not support providers that do not return logProbs")
        );
        // inverse (not-perplexity)
        let r = run(p, Some(vec![0.0, 0.0]), Some(5.0), true);
        assert!(!r.passed);
        assert!(r.reason.contains("less than or equal to"));
        assert!(run(p, Some(vec![-2.0]), Some(5.0), true).passed);
        // "fails at the threshold boundary": perplexity exactly 5 is within.
        assert!(!run(p, Some(vec![-(5f64.ln())]), Some(5.0), true).passed);
        let r = run(p, Some(vec![-2.0]), Some(5.0), false);
        assert_eq!(r.reason, "Perplexity 7.39 is greater than threshold 5");
    }

    // promptfoo's perplexity.test.ts, "handlePerplexityScore inverse (not-perplexity-score)".
    #[test]
    fn perplexity_score_vectors() {
        let s = Form::Score;
        let base = run(s, Some(vec![-2.0]), Some(0.5), false);
        assert!((base.score - 0.1192).abs() < 1e-4);
        assert!(!base.passed);
        let inverted = run(s, Some(vec![-2.0]), Some(0.5), true);
        assert!((inverted.score - 0.8808).abs() < 1e-4);
        assert!(inverted.passed);
        let r = run(s, Some(vec![0.0, 0.0]), Some(0.9), false);
        assert!(!r.passed);
        assert!(r.reason.contains("less than"));
        assert!(run(s, None, None, false).error.is_some());
        assert!(run(s, Some(vec![]), None, false).error.is_some());
        // No threshold passes, keeping the score.
        let r = run(s, Some(vec![0.0]), None, false);
        assert!(r.passed && (r.score - 0.5).abs() < 1e-12);
    }
}
