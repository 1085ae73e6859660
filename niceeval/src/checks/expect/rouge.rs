//! [`rouge_n`]: ROUGE-N F-measure against a reference text, tokenized as Google's
//! `rouge-score` package does.

use rustc_hash::FxHashMap;

use crate::base::assertion::{Assertion, Grade, Settings, Subject};
use crate::base::excerpt;

/// Default threshold of [`rouge_n`] (promptfoo's and Runsight's).
pub const DEFAULT_ROUGE_THRESHOLD: f64 = 0.75;

/// The tokens ROUGE compares: the text lower-cased (Unicode), every run of characters outside
/// `[a-z0-9]` treated as a separator. So `"Don't-stop!"` is `don t stop`, and letters outside
/// ASCII (`é`, `日`) separate words and never match — exactly `rouge-score`'s default
/// tokenizer without stemming.
#[cfg(test)]
pub(crate) fn rouge_tokens(text: &str) -> Vec<String> {
    split_tokens(&text.to_lowercase())
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// ROUGE-N F-measure of `candidate` against `reference`, in [0, 1]: with overlapping n-grams
/// counted with clipping, precision = overlap / candidate n-grams, recall = overlap / reference
/// n-grams (each denominator at least 1), F = 2PR / (P + R), and 0 when both are 0 (so an
/// empty text, or one shorter than n tokens, scores 0). `n` = 0 is treated as 1.
pub fn rouge_n_score(candidate: &str, reference: &str, n: usize) -> f64 {
    let n = n.max(1);
    let cand_lower = candidate.to_lowercase();
    let ref_lower = reference.to_lowercase();
    let cand = split_tokens(&cand_lower);
    let refr = split_tokens(&ref_lower);
    let c = ngram_counts(&cand, n);
    let r = ngram_counts(&refr, n);
    let overlap: usize = c
        .iter()
        .map(|(g, &k)| k.min(r.get(g).copied().unwrap_or(0)))
        .sum();
    let c_total: usize = c.values().sum();
    let r_total: usize = r.values().sum();
    let precision = overlap as f64 / c_total.max(1) as f64;
    let recall = overlap as f64 / r_total.max(1) as f64;
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

fn split_tokens(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !c.is_ascii_lowercase() && !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .collect()
}

fn ngram_counts<'a>(tokens: &'a [&'a str], n: usize) -> FxHashMap<&'a [&'a str], usize> {
    let mut m = FxHashMap::with_capacity_and_hasher(tokens.len(), Default::default());
    if tokens.len() >= n {
        for g in tokens.windows(n) {
            *m.entry(g).or_insert(0) += 1;
        }
    }
    m
}

/// ROUGE-N F-measure ([`rouge_n_score`]) against `reference`; n = 1 (ROUGE-1) unless set with
/// [`RougeN::n`]. A gate with threshold 0.75 by default (as in promptfoo and Runsight); chain
/// `.at_least(x)` for a soft signal with another threshold. `None` fails.
///
/// The metric and tokenizer are `rouge-score`'s (Google's reference package), which Runsight
/// uses. promptfoo's `rouge-n` computes something else: `js-rouge`'s `n()`, a recall — the
/// distinct n-grams shared with the reference over the reference's n-gram count — on
/// case-sensitive treebank tokens. Scores can differ widely: a candidate holding the reference
/// plus as many other words scores 1 there and about 0.67 here; `"the the the the"` against
/// itself scores 0.25 there and 1 here; a change of case costs a match there, not here. niceeval
/// keeps the F-measure, which penalizes padding as well as omissions.
///
/// ```
/// use niceeval::prelude::*;
/// use niceeval::AssertionResult;
///
/// let r = AssertionResult::evaluate(&rouge_n("The cat sat on the mat."), &"the cat sat on a mat".subject());
/// assert!(r.passed, "{}", r.reason);
/// let r = AssertionResult::evaluate(&rouge_n("the cat sat on the mat").n(2), &"the cat sat on a mat".subject());
/// assert!(!r.passed);
/// ```
pub fn rouge_n(reference: impl Into<String>) -> RougeN {
    RougeN {
        reference: reference.into(),
        n: 1,
    }
}

/// The matcher returned by [`rouge_n`].
#[derive(Debug, Clone)]
pub struct RougeN {
    reference: String,
    n: usize,
}

impl RougeN {
    /// The n-gram length (1 for ROUGE-1, 2 for ROUGE-2, ...; 0 means 1).
    pub fn n(mut self, n: usize) -> Self {
        self.n = n.max(1);
        self
    }
}

impl Assertion for RougeN {
    fn describe(&self) -> String {
        format!(
            "rouge_{}({})",
            self.n,
            excerpt::quote_width(&self.reference, 60)
        )
    }

    fn settings(&self) -> Settings {
        let mut s = Settings::gate();
        s.threshold = Some(DEFAULT_ROUGE_THRESHOLD);
        s
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to compare");
        };
        let score = rouge_n_score(&text, &self.reference, self.n);
        Grade::score(
            score,
            format!("ROUGE-{} F {score:.4} for {}", self.n, value.preview()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_matches_rouge_score_rules() {
        assert_eq!(rouge_tokens("ÉCOLE école"), ["cole", "cole"]);
        assert_eq!(
            rouge_tokens("K"),
            ["k"],
            "Kelvin sign lower-cases to ASCII k"
        );
        assert!(rouge_tokens("日本語 ！").is_empty());
        assert_eq!(rouge_tokens("a_b-c"), ["a", "b", "c"]);
    }

    #[test]
    fn bigram_and_short_texts() {
        assert_eq!(rouge_n_score("a", "a", 2), 0.0);
        let f = rouge_n_score("a b c", "a b d", 2); // 1 of 2 bigrams each side
        assert!((f - 0.5).abs() < 1e-12);
    }
}
