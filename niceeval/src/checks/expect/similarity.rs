//! [`similarity`]: how close the value is to an expected text, as normalized Levenshtein
//! similarity, and the distance functions behind it ([`levenshtein_distance`],
//! [`normalized_similarity`]; the algorithm lives in `levenshtein.rs`).

use crate::base::assertion::{Assertion, Grade, Settings, Subject};
use crate::base::excerpt;

use super::levenshtein;

/// Default threshold of [`similarity`].
pub const DEFAULT_THRESHOLD: f64 = 0.6;

/// Most block updates one evaluation may take (about a few seconds): beyond it, comparing is an
/// execution error rather than a stalled eval. Two 20,000-character texts take at most 6.3
/// million; only texts of hundreds of thousands of characters that are also very different
/// reach it.
const WORK_BUDGET: u64 = 1 << 30;

/// The value is close to `expected`: scores the normalized Levenshtein similarity
/// `1 - distance / max(len(value), len(expected))`, in [0, 1], counted in Unicode scalar values.
///
/// **Soft with threshold 0.6 by default**: below 0.6 the eval still passes, with a mark (and
/// fails under strict). Chain `.at_least(x)` for another threshold, `.gate()` to make it a hard
/// requirement.
///
/// - **Text** is compared as it is: case-sensitive, without Unicode normalization (precomposed
///   `"é"` and decomposed `"e\u{301}"` are two edits apart).
/// - **JSON** values (numbers, booleans, objects, arrays) are compared as their compact JSON
///   text.
/// - **`None`** scores 0.
/// - Two empty texts are identical (1.0); an empty text and a non-empty one score 0.
///
/// The reason gives the score, the number of edits, both texts (long ones elided in the middle)
/// and, for long texts, where they first differ. Fast on long texts: two 20,000-character texts
/// take a few milliseconds (a bit-parallel algorithm, see [`levenshtein_distance`]); a long
/// value against a short expected text is linear. Texts of hundreds of thousands of characters
/// that are also very different would take minutes: past a budget of about a billion block
/// updates (seconds), the assertion is an execution error asking for shorter excerpts.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let r = AssertionResult::evaluate(&similarity("kitten"), &"sitting".subject());
/// assert!((r.score - (1.0 - 3.0 / 7.0)).abs() < 1e-12);
/// assert_eq!(r.severity, Severity::Soft);
/// assert!(!r.passed, "0.571 is below the default threshold 0.6");
/// assert_eq!(r.reason, r#"similarity 0.571 (3 edits over 7 chars): got "sitting", expected "kitten""#);
///
/// // A stricter threshold, or a gate.
/// let r = AssertionResult::evaluate(&similarity("Your refund is on its way").at_least(0.8),
///                                   &"Your refund is on the way".subject());
/// assert!(r.passed);
/// let r = AssertionResult::evaluate(&similarity("yes").gate(), &None::<String>.subject());
/// assert!(!r.passed && r.is_failed_gate());
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
            return Grade::fail(format!(
                "there is no value (None) to compare with the expected text {}",
                excerpt::quote(&self.expected)
            ));
        };
        if text == self.expected {
            return Grade::pass(format!(
                "identical to the expected text ({} chars)",
                text.chars().count()
            ));
        }
        let (edits, actual_len, expected_len) =
            levenshtein::distance_str_within(&text, &self.expected, WORK_BUDGET);
        let longest = actual_len.max(expected_len);
        let Some(edits) = edits else {
            return Grade::error(format!(
                "the value ({actual_len} chars) and the expected text ({expected_len} chars) are \
                 too long and too different to compare exactly in reasonable time; compare \
                 shorter excerpts"
            ));
        };
        let score = 1.0 - edits as f64 / longest as f64;
        let mut reason = format!(
            "similarity {score:.3} ({edits} edit{} over {longest} chars): got {}, expected {}",
            if edits == 1 { "" } else { "s" },
            excerpt::quote(&text),
            excerpt::quote(&self.expected)
        );
        // When a text is elided, point at where the two start to differ.
        if longest > excerpt::DEFAULT_WIDTH
            && let Some(at) = excerpt::first_difference(&text, &self.expected)
        {
            reason.push_str(&format!(
                "; first difference at char {}: got {}, expected {}",
                excerpt::char_index(&text, at),
                excerpt::around(&text, at..at),
                excerpt::around(&self.expected, at..at)
            ));
        }
        Grade::score(score, reason)
    }
}

/// `1 - levenshtein_distance(a, b) / max(chars(a), chars(b))`, in [0, 1]; 1.0 for two empty
/// strings. Symmetric; counted in Unicode scalar values.
pub fn normalized_similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    let (distance, a_len, b_len) = levenshtein::distance_str_within(a, b, u64::MAX);
    let longest = a_len.max(b_len);
    1.0 - distance.unwrap_or(longest) as f64 / longest as f64
}

/// Levenshtein edit distance (insertions, deletions and substitutions of one character each) in
/// Unicode scalar values.
///
/// Computed with Myers' bit-parallel algorithm in Hyyrö's block form, after cutting the common
/// prefix and suffix, inside a diagonal band grown as needed: `O(n · m / 64)` word operations in
/// the worst case, `O(n · d / 64)` for a distance `d`, and memory linear in the input. Two
/// 20,000-character texts take a few milliseconds; a short text against a multi-megabyte one is
/// linear in the long one.
pub fn levenshtein_distance(a: &str, b: &str) -> usize {
    levenshtein::distance(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionResult, Checkable, Severity};
    use serde_json::json;

    fn run(expected: &str, value: &Subject<'_>) -> AssertionResult {
        AssertionResult::evaluate(&similarity(expected), value)
    }

    #[test]
    fn soft_with_default_threshold() {
        let s = similarity("x").settings();
        assert_eq!(s.severity, Severity::Soft);
        assert_eq!(s.threshold, Some(0.6));
        let r = run("abcdefghij", &"abcdefgxyz".subject());
        assert!((r.score - 0.7).abs() < 1e-12);
        assert!(r.passed);
        let r = run("abcdefghij", &"abcdxyzxyz".subject());
        assert!((r.score - 0.4).abs() < 1e-12);
        assert!(!r.passed && r.is_below_threshold() && r.error.is_none());
    }

    #[test]
    fn empty_texts() {
        let r = run("", &"".subject());
        assert_eq!(r.score, 1.0);
        assert_eq!(r.reason, "identical to the expected text (0 chars)");
        let r = run("", &"abc".subject());
        assert_eq!(r.score, 0.0);
        assert_eq!(
            r.reason,
            r#"similarity 0.000 (3 edits over 3 chars): got "abc", expected """#
        );
        assert_eq!(run("abc", &"".subject()).score, 0.0);
    }

    #[test]
    fn unicode_is_counted_in_scalar_values_without_normalization() {
        let r = run("日本語のテキスト", &"日本語のテキスト".subject());
        assert_eq!(r.score, 1.0);
        let r = run("😀😀😀😀", &"😀😀😀😃".subject());
        assert_eq!(r.score, 0.75);
        assert!(r.reason.contains("1 edit over 4 chars"), "{}", r.reason);
        // Precomposed vs decomposed: 2 edits over 5 scalar values; the reason shows the mark.
        let r = run("café", &"cafe\u{301}".subject());
        assert!((r.score - 0.6).abs() < 1e-12, "{}", r.score);
        assert!(r.reason.contains(r#"got "cafe\u{301}""#), "{}", r.reason);
        // Case-sensitive.
        assert_eq!(run("Hello", &"hello".subject()).score, 0.8);
    }

    #[test]
    fn none_scores_zero_with_a_clear_reason() {
        let r = run("expected", &Subject::Missing);
        assert_eq!(r.score, 0.0);
        assert!(r.error.is_none());
        assert_eq!(
            r.reason,
            r#"there is no value (None) to compare with the expected text "expected""#
        );
    }

    #[test]
    fn json_values_compare_as_compact_json_text() {
        assert_eq!(run("42", &42u64.subject()).score, 1.0);
        assert_eq!(run("true", &true.subject()).score, 1.0);
        let r = run(r#"{"a":1}"#, &json!({ "a": 2 }).subject());
        assert!((r.score - (1.0 - 1.0 / 7.0)).abs() < 1e-12);
        assert!(r.reason.contains(r#"got "{\"a\":2}""#), "{}", r.reason);
    }

    #[test]
    fn long_texts_show_where_they_differ_and_stay_short() {
        let base = "The quick brown fox jumps over the lazy dog. ".repeat(400);
        let mut changed = base.clone();
        changed.replace_range(9_000..9_005, "QUICK");
        let r = run(&base, &changed.as_str().subject());
        assert!(r.score > 0.99 && r.passed);
        assert!(
            r.reason.contains("5 edits over 18000 chars"),
            "{}",
            r.reason
        );
        assert!(
            r.reason.contains("first difference at char 9000"),
            "{}",
            r.reason
        );
        assert!(r.reason.contains("QUICK"), "{}", r.reason);
        assert!(r.reason.chars().count() < 700, "{}", r.reason);
    }

    #[test]
    fn huge_value_against_a_short_expected_text_is_linear() {
        // 4 MB against 40 characters: one 64-row block per column.
        let huge = "lorem ipsum ".repeat(350_000);
        let r = run(
            "lorem ipsum dolor sit amet, consectetur",
            &huge.as_str().subject(),
        );
        assert!(r.score < 0.01);
        assert!(r.reason.chars().count() < 700, "{}", r.reason);
    }

    #[test]
    fn huge_similar_values_use_the_band() {
        // Two 1,000,000-character texts a few edits apart: the band keeps this to a few
        // blocks per column instead of 15,625.
        let a: String = (0..1_000_000u32)
            .map(|i| char::from(b'a' + (i.wrapping_mul(2_654_435_761) >> 28) as u8))
            .collect();
        let mut b = a.clone();
        b.replace_range(500_000..500_003, "xyz");
        b.insert(10, '!');
        let d = levenshtein_distance(&a, &b);
        assert!((1..=4).contains(&d), "{d}");
        let r = run(&a, &b.as_str().subject());
        assert!(r.score > 0.99999);
    }

    #[test]
    fn huge_different_texts_are_an_execution_error_not_a_stall() {
        // 300,000 characters each, unrelated: the full table would be 1.4 billion block
        // updates; the first (narrow) band shows it, and the budget stops there.
        let letters = |mut state: u64| -> String {
            (0..300_000)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    char::from(b'a' + (state % 16) as u8)
                })
                .collect()
        };
        let (a, b) = (letters(1), letters(2));
        let r = run(&a, &b.as_str().subject());
        assert!(!r.passed);
        assert_eq!(
            r.error.as_deref(),
            Some(
                "the value (300000 chars) and the expected text (300000 chars) are too long and \
                 too different to compare exactly in reasonable time; compare shorter excerpts"
            )
        );
    }

    #[test]
    fn describe_is_short() {
        assert_eq!(similarity("kitten").describe(), r#"similarity("kitten")"#);
        let long = similarity("x".repeat(1_000)).describe();
        assert!(long.len() < 120, "{long}");
    }

    #[test]
    fn distance_functions() {
        assert_eq!(levenshtein_distance("flaw", "lawn"), 2);
        assert_eq!(levenshtein_distance("a", "a"), 0);
        assert_eq!(normalized_similarity("abc", "abd"), 1.0 - 1.0 / 3.0);
        assert_eq!(
            normalized_similarity("abc", "xyz"),
            normalized_similarity("xyz", "abc")
        );
    }
}
