//! [`similarity`]: normalized Levenshtein similarity between the value and an expected text.

use crate::assertion::{Assertion, Grade, Settings, Subject};
use crate::excerpt;

/// Default threshold of [`similarity`].
pub const DEFAULT_THRESHOLD: f64 = 0.6;

/// Normalized Levenshtein similarity in [0, 1]: `1 - distance / max(len_a, len_b)`, counted in
/// Unicode scalar values. Soft with threshold 0.6 by default.
///
/// Two empty strings are identical (1.0). `None` scores 0.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let r = AssertionResult::evaluate(&similarity("kitten"), &"sitting".subject());
/// assert!((r.score - (1.0 - 3.0 / 7.0)).abs() < 1e-12);
/// assert!(!r.passed, "0.571 is below the default threshold 0.6");
/// assert_eq!(r.severity, Severity::Soft);
/// ```
pub fn similarity(expected: impl Into<String>) -> Similarity {
    Similarity {
        expected: expected.into(),
    }
}

/// The matcher returned by [`similarity`].
#[derive(Debug, Clone)]
pub struct Similarity {
    expected: String,
}

impl Assertion for Similarity {
    fn describe(&self) -> String {
        format!("similarity({})", excerpt::quote_width(&self.expected, 60))
    }

    fn settings(&self) -> Settings {
        Settings::soft(Some(DEFAULT_THRESHOLD))
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to compare");
        };
        let score = normalized_similarity(&text, &self.expected);
        Grade::score(
            score,
            format!(
                "similarity {score:.3} between {} and expected {}",
                value.preview(),
                excerpt::quote(&self.expected)
            ),
        )
    }
}

/// `1 - levenshtein(a, b) / max(chars(a), chars(b))`; 1.0 for two empty strings.
///
/// ```
/// assert_eq!(niceeval::expect::normalized_similarity("", ""), 1.0);
/// assert_eq!(niceeval::expect::normalized_similarity("abc", ""), 0.0);
/// ```
pub fn normalized_similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    1.0 - distance(&a, &b) as f64 / longest as f64
}

/// Levenshtein edit distance in Unicode scalar values.
///
/// ```
/// assert_eq!(niceeval::expect::levenshtein_distance("kitten", "sitting"), 3);
/// assert_eq!(niceeval::expect::levenshtein_distance("héllo", "hello"), 1);
/// ```
pub fn levenshtein_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    distance(&a, &b)
}

fn distance(a: &[char], b: &[char]) -> usize {
    // Two-row dynamic programme; O(n·m) time, O(m) memory.
    if a.is_empty() {
        return b.len();
    }
    if b.is_empty() {
        return a.len();
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}
