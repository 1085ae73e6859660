//! promptfoo's `gleu` (Google-BLEU) as assertions as data know it: a sentence-level score of
//! the text against one or more references, the smaller of n-gram precision and recall over
//! the 1- to 4-grams, the best over the references. Written from promptfoo's rules (words
//! lower-cased and split on whitespace, trailing dots dropped; an identical word list scores 1;
//! an empty text 0), not from its code.

use crate::base::assertion::{Assertion, Grade, Settings, Subject};
use crate::base::excerpt;

/// promptfoo's default threshold of `gleu`.
const DEFAULT_GLEU_THRESHOLD: f64 = 0.5;

/// The words GLEU counts: lower-cased, split on whitespace, each without its trailing dots.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split_whitespace()
        .map(|w| w.trim_end_matches('.').to_string())
        .collect()
}

/// How many times each `n`-word sequence of `words` occurs.
fn ngram_counts(
    words: &[String],
    n: usize,
) -> (std::collections::HashMap<&[String], usize>, usize) {
    let mut counts = std::collections::HashMap::new();
    if n == 0 || n > words.len() {
        return (counts, 0);
    }
    for gram in words.windows(n) {
        *counts.entry(gram).or_insert(0) += 1;
    }
    (counts, words.len() - n + 1)
}

/// The GLEU of `candidate` against each of `references`, the best of them, in [0, 1].
pub(crate) fn gleu_score<S: AsRef<str>>(candidate: &str, references: &[S]) -> f64 {
    if candidate.trim().is_empty() {
        return 0.0;
    }
    let candidate = words(candidate);
    references
        .iter()
        .map(|reference| {
            let reference = words(reference.as_ref());
            if reference == candidate {
                return 1.0;
            }
            let (mut matches, mut candidate_total, mut reference_total) = (0, 0, 0);
            for n in 1..=4 {
                let (mine, mine_total) = ngram_counts(&candidate, n);
                let (theirs, theirs_total) = ngram_counts(&reference, n);
                matches += mine
                    .iter()
                    .map(|(gram, count)| (*count).min(theirs.get(gram).copied().unwrap_or(0)))
                    .sum::<usize>();
                candidate_total += mine_total;
                reference_total += theirs_total;
            }
            if candidate_total == 0 || reference_total == 0 {
                return 0.0;
            }
            let precision = matches as f64 / candidate_total as f64;
            let recall = matches as f64 / reference_total as f64;
            precision.min(recall)
        })
        .fold(0.0, f64::max)
}

/// The `gleu` item: a gate at its threshold (0.5 by default), as in promptfoo.
#[derive(Debug, Clone)]
pub(crate) struct Gleu {
    pub(crate) references: Vec<String>,
}

impl Assertion for Gleu {
    fn describe(&self) -> String {
        match self.references.as_slice() {
            [one] => format!("gleu({})", excerpt::quote_width(one, 60)),
            many => format!("gleu({} references)", many.len()),
        }
    }

    fn settings(&self) -> Settings {
        let mut s = Settings::gate();
        s.threshold = Some(DEFAULT_GLEU_THRESHOLD);
        s
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to compare");
        };
        if self.references.is_empty() {
            return Grade::error("gleu needs at least one reference text");
        }
        let score = gleu_score(&text, &self.references);
        Grade::score(score, format!("GLEU {score:.4} for {}", value.preview()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// promptfoo's own test inputs for `gleu` and the bounds its tests expect.
    #[test]
    fn promptfoos_examples() {
        let r = ["The cat sat on the mat"];
        assert!(gleu_score("The cat sat on the mat", &r) > 0.999);
        assert!((gleu_score("the the the the the the the", &r) - 0.0909).abs() < 0.00005);
        let r = [
            "It is a guide to action that ensures that the military will forever heed Party commands",
        ];
        let s = gleu_score(
            "It is a guide to action which ensures that the military always obeys the commands of the party",
            &r,
        );
        assert!(s > 0.4 && s < 0.5, "{s}");
        let s = gleu_score(
            "It is to insure the troops forever hearing the activity guidebook that party direct",
            &r,
        );
        assert!(s > 0.13 && s < 0.14, "{s}");
    }

    #[test]
    fn edges() {
        assert_eq!(gleu_score("   ", &["a b"]), 0.0);
        // Trailing dots and case do not count; the best reference wins.
        assert_eq!(gleu_score("Hello world.", &["x y", "hello world"]), 1.0);
        // One word against one word that differs: no n-gram in common.
        assert_eq!(gleu_score("a", &["b"]), 0.0);
    }
}
