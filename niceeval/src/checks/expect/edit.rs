//! [`levenshtein`]: the edit distance to a reference text is at most a maximum.

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::base::excerpt;
use crate::checks::expect::similarity::levenshtein_distance;

/// Default maximum distance of [`levenshtein`] (promptfoo's and Runsight's default threshold).
pub const DEFAULT_MAX_DISTANCE: usize = 5;

/// The Levenshtein edit distance between the text and `reference` — insertions, deletions and
/// substitutions of Unicode scalar values (`"é"` is one edit from `"e"`; a flag emoji made of two
/// scalars is two) — is at most a maximum: 5 by default, set with
/// [`Levenshtein::max_distance`]. Gate by default; scores 1 or 0. Case and whitespace count.
///
/// A maximum of 0 demands an exact match (promptfoo, whose check is `threshold || 5`, silently
/// turns 0 into 5; niceeval keeps the 0). For a graded 0–1 score use
/// [`crate::checks::expect::similarity`]. `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&levenshtein("kitten"), &"sitting".subject()).passed);
/// let r = AssertionResult::evaluate(&levenshtein("kitten").max_distance(2), &"sitting".subject());
/// assert!(!r.passed);
/// assert_eq!(r.reason, r#"distance 3 to "kitten" is over the maximum 2"#);
/// ```
pub fn levenshtein(reference: impl Into<String>) -> Levenshtein {
    Levenshtein {
        reference: reference.into(),
        max: DEFAULT_MAX_DISTANCE,
    }
}

/// The matcher returned by [`levenshtein`].
#[derive(Debug, Clone)]
pub struct Levenshtein {
    reference: String,
    max: usize,
}

impl Levenshtein {
    /// The largest distance that passes.
    pub fn max_distance(mut self, max: usize) -> Self {
        self.max = max;
        self
    }
}

impl Assertion for Levenshtein {
    fn describe(&self) -> String {
        format!(
            "levenshtein({}, max {})",
            excerpt::quote_width(&self.reference, 60),
            self.max
        )
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to compare");
        };
        let distance = levenshtein_distance(&text, &self.reference);
        let reference = excerpt::quote(&self.reference);
        if distance <= self.max {
            Grade::pass(format!(
                "distance {distance} to {reference} (max {})",
                self.max
            ))
        } else {
            Grade::fail(format!(
                "distance {distance} to {reference} is over the maximum {}",
                self.max
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionResult, Checkable};

    #[test]
    fn unicode_and_edges() {
        let ok = |a: &Levenshtein, t: &str| AssertionResult::evaluate(a, &t.subject()).passed;
        assert!(ok(&levenshtein("").max_distance(0), ""));
        assert!(!ok(&levenshtein("").max_distance(0), "a"));
        assert!(ok(&levenshtein("abcde"), ""));
        assert!(!ok(&levenshtein("abcdef"), ""));
        assert!(ok(&levenshtein("héllo").max_distance(1), "hello"));
        assert!(ok(&levenshtein("日本語").max_distance(1), "日本"));
        assert!(!ok(&levenshtein("Hello").max_distance(0), "hello"));
    }
}
