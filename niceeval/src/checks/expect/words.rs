//! [`word_count`]: the number of whitespace-separated words is exact or within a range.

use std::ops::{RangeFrom, RangeInclusive, RangeToInclusive};

use crate::base::assertion::{Assertion, Grade, Subject};

/// A word count bound for [`word_count`]: an exact `usize`, `min..=max`, `min..` or `..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordBounds {
    /// Fewest words allowed.
    pub min: usize,
    /// Most words allowed (`None`: no upper bound).
    pub max: Option<usize>,
}

impl From<usize> for WordBounds {
    fn from(n: usize) -> Self {
        WordBounds {
            min: n,
            max: Some(n),
        }
    }
}

impl From<RangeInclusive<usize>> for WordBounds {
    fn from(r: RangeInclusive<usize>) -> Self {
        WordBounds {
            min: *r.start(),
            max: Some(*r.end()),
        }
    }
}

impl From<RangeFrom<usize>> for WordBounds {
    fn from(r: RangeFrom<usize>) -> Self {
        WordBounds {
            min: r.start,
            max: None,
        }
    }
}

impl From<RangeToInclusive<usize>> for WordBounds {
    fn from(r: RangeToInclusive<usize>) -> Self {
        WordBounds {
            min: 0,
            max: Some(r.end),
        }
    }
}

/// Counts words: maximal runs of non-whitespace characters, whitespace being Unicode's
/// `White_Space` (spaces, tabs, newlines, no-break and ideographic spaces). Punctuation sticks to
/// its word (`"Hello, world!"` is 2 words); text without spaces (Chinese, Japanese) is 1 word.
pub fn count_words(text: &str) -> usize {
    if !text.is_ascii() {
        return text.split_whitespace().count();
    }
    // ASCII fast path: the same White_Space set (space, \t, \n, \x0B, \x0C, \r).
    let mut words = 0;
    let mut in_word = false;
    for &b in text.as_bytes() {
        let space = b == b' ' || (b'\t'..=b'\r').contains(&b);
        if !space && !in_word {
            words += 1;
        }
        in_word = !space;
    }
    words
}

/// The number of words (whitespace-separated) is exactly `n`, or within a range: `word_count(5)`,
/// `word_count(50..=500)`, `word_count(10..)`, `word_count(..=100)`. Gate by default; scores 1
/// or 0. Empty text has 0 words. A range whose minimum exceeds its maximum can never pass and
/// says so. Non-text values are counted in their JSON text; `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// assert!(AssertionResult::evaluate(&word_count(2..=3), &"two words".subject()).passed);
/// let r = AssertionResult::evaluate(&word_count(..=1), &"two words".subject());
/// assert_eq!(r.reason, "2 words, expected at most 1");
/// ```
pub fn word_count(bounds: impl Into<WordBounds>) -> WordCount {
    WordCount {
        bounds: bounds.into(),
    }
}

/// The matcher returned by [`word_count`].
#[derive(Debug, Clone)]
pub struct WordCount {
    bounds: WordBounds,
}

impl WordCount {
    fn expected(&self) -> String {
        match (self.bounds.min, self.bounds.max) {
            (min, Some(max)) if min == max => format!("exactly {min}"),
            (0, Some(max)) => format!("at most {max}"),
            (min, None) => format!("at least {min}"),
            (min, Some(max)) => format!("between {min} and {max}"),
        }
    }
}

impl Assertion for WordCount {
    fn describe(&self) -> String {
        match (self.bounds.min, self.bounds.max) {
            (min, Some(max)) if min == max => format!("word_count({min})"),
            (0, Some(max)) => format!("word_count(..={max})"),
            (min, None) => format!("word_count({min}..)"),
            (min, Some(max)) => format!("word_count({min}..={max})"),
        }
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        if let Some(max) = self.bounds.max
            && self.bounds.min > max
        {
            return Grade::error(format!(
                "word_count: the minimum {} is greater than the maximum {max}",
                self.bounds.min
            ));
        }
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to count words in");
        };
        let n = count_words(&text);
        let ok = n >= self.bounds.min && self.bounds.max.is_none_or(|max| n <= max);
        let words = if n == 1 { "word" } else { "words" };
        let reason = format!("{n} {words}, expected {}", self.expected());
        Grade::from_bool(ok, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::assertion::{AssertionResult, Checkable};

    #[test]
    fn counting_edges() {
        assert_eq!(count_words("a\u{00A0}b\u{3000}c"), 3);
        assert_eq!(count_words("你好世界"), 1);
        assert_eq!(count_words(" \n\t "), 0);
        assert_eq!(count_words("don't stop-me now"), 3);
        for text in ["a\x0Bb\x0Cc\rd", " lead and trail ", "\x1Cx\x1Fy", "one"] {
            assert_eq!(
                count_words(text),
                text.split_whitespace().count(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn bounds() {
        let ok = |a: &WordCount, t: &str| AssertionResult::evaluate(a, &t.subject()).passed;
        assert!(ok(&word_count(0), ""));
        assert!(!ok(&word_count(1), ""));
        assert!(ok(&word_count(3..), "a b c d"));
        assert!(!ok(&word_count(5..), "a b c d"));
        assert!(ok(&word_count(..=4), "a b c d"));
        assert!(ok(&word_count(4..=4), "a b c d"));
        let backwards = WordBounds {
            min: 5,
            max: Some(3),
        };
        let r = AssertionResult::evaluate(&word_count(backwards), &"a".subject());
        assert!(r.error.is_some());
    }
}
