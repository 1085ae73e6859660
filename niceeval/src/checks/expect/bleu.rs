//! [`bleu`]: sentence BLEU-4 against one or more reference texts, computed as NLTK's
//! `sentence_bleu` with `SmoothingFunction().method2`.

use rustc_hash::FxHashMap;

use crate::base::assertion::{Assertion, Grade, Settings, Subject};
use crate::base::excerpt;

/// Default threshold of [`bleu`] (promptfoo's and Runsight's).
pub const DEFAULT_BLEU_THRESHOLD: f64 = 0.5;

/// Sentence-level BLEU-4 of `candidate` against `references`, in [0, 1].
///
/// - Tokens: the text lower-cased (Unicode), split on whitespace; punctuation stays attached.
/// - Modified n-gram precision for n = 1..4: candidate n-gram counts clipped by the largest count
///   in any one reference, over the number of candidate n-grams (at least 1).
/// - Smoothing (Lin & Och 2004, NLTK's `method2`): 2- to 4-gram precisions become
///   `(matches + 1) / (total + 1)`; the unigram precision is not smoothed, and no unigram match
///   at all scores 0.
/// - Brevity penalty `exp(1 − r/c)` when the candidate (length c) is shorter than the reference
///   closest in length (r; on a tie, the shorter reference), else 1; an empty candidate scores 0.
/// - Uniform weights: the geometric mean of the four precisions.
///
/// promptfoo's `bleu` differs (its penalty uses `exp(1 − c/r)` and it floors zero precisions at
/// 1e-7 instead of smoothing); niceeval matches NLTK, the reference implementation, to 1e-6.
pub fn bleu_score<S: AsRef<str>>(candidate: &str, references: &[S]) -> f64 {
    let candidate_lower = candidate.to_lowercase();
    let refs_lower: Vec<String> = references
        .iter()
        .map(|r| r.as_ref().to_lowercase())
        .collect();
    // Tokens become small integer ids, so an n-gram (n ≤ 4) is one u128 key.
    let mut vocabulary: FxHashMap<&str, u32> = FxHashMap::default();
    let hyp: Vec<u32> = token_ids(&candidate_lower, &mut vocabulary);
    let refs: Vec<Vec<u32>> = refs_lower
        .iter()
        .map(|r| token_ids(r, &mut vocabulary))
        .collect();
    if hyp.is_empty() || refs.is_empty() {
        return 0.0;
    }
    let mut log_sum = 0.0;
    for n in 1..=4 {
        let (matches, total) = modified_precision(&refs, &hyp, n);
        let p = if n == 1 {
            if matches == 0 {
                return 0.0;
            }
            matches as f64 / total as f64
        } else {
            (matches + 1) as f64 / (total + 1) as f64
        };
        log_sum += 0.25 * p.ln();
    }
    let c = hyp.len();
    let r = closest_ref_length(&refs, c);
    let bp = if c > r {
        1.0
    } else {
        (1.0 - r as f64 / c as f64).exp()
    };
    bp * log_sum.exp()
}

/// Whitespace tokens as ids (1-based; equal tokens share an id).
fn token_ids<'a>(text: &'a str, vocabulary: &mut FxHashMap<&'a str, u32>) -> Vec<u32> {
    text.split_whitespace()
        .map(|t| {
            let next = vocabulary.len() as u32 + 1;
            *vocabulary.entry(t).or_insert(next)
        })
        .collect()
}

/// Packs an n-gram of token ids (n ≤ 4) into one key.
fn key(gram: &[u32]) -> u128 {
    gram.iter().fold(0u128, |k, &id| (k << 32) | u128::from(id))
}

fn ngram_counts(tokens: &[u32], n: usize) -> FxHashMap<u128, usize> {
    let mut counts = FxHashMap::with_capacity_and_hasher(tokens.len(), Default::default());
    if tokens.len() >= n {
        for gram in tokens.windows(n) {
            *counts.entry(key(gram)).or_insert(0) += 1;
        }
    }
    counts
}

/// (clipped matches, max(1, candidate n-grams)).
fn modified_precision(refs: &[Vec<u32>], hyp: &[u32], n: usize) -> (usize, usize) {
    let counts = ngram_counts(hyp, n);
    let total: usize = counts.values().sum();
    let mut max_ref: FxHashMap<u128, usize> =
        FxHashMap::with_capacity_and_hasher(counts.len(), Default::default());
    for reference in refs {
        let ref_counts = ngram_counts(reference, n);
        for gram in counts.keys() {
            if let Some(&c) = ref_counts.get(gram) {
                let entry = max_ref.entry(*gram).or_insert(0);
                *entry = (*entry).max(c);
            }
        }
    }
    let matches = counts
        .iter()
        .map(|(gram, &c)| c.min(max_ref.get(gram).copied().unwrap_or(0)))
        .sum();
    (matches, total.max(1))
}

fn closest_ref_length(refs: &[Vec<u32>], hyp_len: usize) -> usize {
    refs.iter()
        .map(Vec::len)
        .min_by_key(|&len| (len.abs_diff(hyp_len), len))
        .unwrap_or(0)
}

/// References for [`bleu`]: one text or several.
#[derive(Debug, Clone)]
pub struct References(Vec<String>);

impl From<&str> for References {
    fn from(s: &str) -> Self {
        References(vec![s.to_string()])
    }
}

impl From<String> for References {
    fn from(s: String) -> Self {
        References(vec![s])
    }
}

impl<S: Into<String>> From<Vec<S>> for References {
    fn from(v: Vec<S>) -> Self {
        References(v.into_iter().map(Into::into).collect())
    }
}

impl<S: Into<String>, const N: usize> From<[S; N]> for References {
    fn from(v: [S; N]) -> Self {
        References(v.into_iter().map(Into::into).collect())
    }
}

/// BLEU-4 of the text against one reference, or several (`bleu(["a b", "c d"])`), as
/// [`bleu_score`] computes it. A gate with threshold 0.5 by default (as in promptfoo and
/// Runsight: a lower score fails); chain `.at_least(x)` for a soft signal with another
/// threshold. An empty text scores 0; `None` fails.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let reference = "the quick brown fox jumps over the lazy dog";
/// let r = AssertionResult::evaluate(&bleu(reference), &"The quick brown fox jumps over the lazy dog".subject());
/// assert!(r.passed && r.score > 0.999);
/// let r = AssertionResult::evaluate(&bleu(reference), &"a fox".subject());
/// assert!(!r.passed);
/// ```
pub fn bleu(references: impl Into<References>) -> Bleu {
    Bleu {
        references: references.into().0,
    }
}

/// The matcher returned by [`bleu`].
#[derive(Debug, Clone)]
pub struct Bleu {
    references: Vec<String>,
}

impl Assertion for Bleu {
    fn describe(&self) -> String {
        match self.references.as_slice() {
            [one] => format!("bleu({})", excerpt::quote_width(one, 60)),
            many => format!("bleu({} references)", many.len()),
        }
    }

    fn settings(&self) -> Settings {
        let mut s = Settings::gate();
        s.threshold = Some(DEFAULT_BLEU_THRESHOLD);
        s
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to compare");
        };
        if self.references.is_empty() {
            return Grade::error("bleu needs at least one reference text");
        }
        let score = bleu_score(&text, &self.references);
        Grade::score(score, format!("BLEU-4 {score:.4} for {}", value.preview()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Hand-computed: 4 of 4 unigrams, 2/3 bigrams -> (2+1)/(3+1), trigrams (1+1)/(2+1),
        // 4-grams (0+1)/(1+1); no brevity penalty (same length).
        let s = bleu_score("the cat sat down", &["the cat sat up"]);
        let expected =
            (0.25f64 * (0.75f64.ln() + 0.75f64.ln() + (2.0f64 / 3.0).ln() + 0.5f64.ln())).exp();
        assert!((s - expected).abs() < 1e-12, "{s} vs {expected}");
        // Brevity: 2 tokens vs 4.
        let s = bleu_score("the cat", &["the cat sat up"]);
        let p = (0.25f64 * ((2.0f64 / 2.0).ln() + (2.0f64 / 2.0).ln() + 0.5f64.ln() + 0.5f64.ln()))
            .exp();
        assert!((s - p * (1.0f64 - 2.0).exp()).abs() < 1e-12);
    }

    #[test]
    fn closest_reference_prefers_shorter_on_tie() {
        let refs = vec![vec![1u32; 3], vec![1u32; 5]];
        assert_eq!(closest_ref_length(&refs, 4), 3);
    }

    #[test]
    fn clipping_uses_the_largest_count_in_one_reference() {
        let refs = vec![vec![7u32; 2], vec![7u32]];
        let (m, t) = modified_precision(&refs, &[7, 7, 7], 1);
        assert_eq!((m, t), (2, 3));
    }
}
