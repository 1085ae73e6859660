//! Speed of `similarity` / `levenshtein_distance` on long texts: the budget is 20 ms for two
//! 20,000-character texts.
//!
//! Run: `cargo bench -p niceeval --bench similarity -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use niceeval::__workspace::levenshtein_distance;
use niceeval::expect::similarity;
use niceeval::{Assertion, Checkable};

/// Characters in each text.
const LEN: usize = 20_000;

/// xorshift64: deterministic inputs, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Prose-like text of exactly `LEN` characters: words drawn from `vocabulary`, separated by
/// spaces, with a sentence break now and then.
fn prose(rng: &mut Rng, vocabulary: &[&str]) -> Vec<char> {
    let mut text = Vec::with_capacity(LEN + 32);
    while text.len() < LEN {
        text.extend(vocabulary[rng.below(vocabulary.len())].chars());
        text.push(if rng.below(12) == 0 { '.' } else { ' ' });
    }
    text.truncate(LEN);
    text
}

/// `text` with about 10% of its characters edited (substituted, deleted, or followed by an
/// inserted character), the way a paraphrased or slightly wrong reply differs.
fn edited(rng: &mut Rng, text: &[char], alphabet: &[char]) -> String {
    let mut out = String::with_capacity(text.len() * 4);
    for &c in text {
        match rng.below(30) {
            0 => out.push(alphabet[rng.below(alphabet.len())]),
            1 => {}
            2 => {
                out.push(c);
                out.push(alphabet[rng.below(alphabet.len())]);
            }
            _ => out.push(c),
        }
    }
    out
}

const ENGLISH: &[&str] = &[
    "the",
    "refund",
    "order",
    "is",
    "on",
    "its",
    "way",
    "your",
    "we",
    "have",
    "processed",
    "request",
    "and",
    "will",
    "arrive",
    "within",
    "five",
    "business",
    "days",
    "thank",
    "you",
    "for",
    "patience",
    "please",
    "contact",
    "support",
    "if",
    "anything",
    "else",
    "comes",
    "up",
    "account",
    "payment",
    "card",
    "shipping",
    "address",
    "confirmed",
    "tracking",
    "number",
];

const MULTIBYTE: &[&str] = &[
    "返金",
    "ご注文",
    "は",
    "発送",
    "されました",
    "お客様",
    "ありがとう",
    "ございます",
    "確認",
    "😀",
    "👍🏽",
    "📦",
    "café",
    "naïve",
    "Straße",
    "überweisung",
    "déjà",
    "vu",
    "한국어",
    "지원",
    "Привет",
    "заказ",
    "доставка",
];

fn inputs(vocabulary: &[&str], seed: u64) -> (String, String, String) {
    let mut rng = Rng(seed);
    let text = prose(&mut rng, vocabulary);
    let mut alphabet: Vec<char> = vocabulary.iter().flat_map(|w| w.chars()).collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    let near = edited(&mut rng, &text, &alphabet);
    let unrelated: String = prose(&mut rng, vocabulary).into_iter().collect();
    (text.into_iter().collect(), near, unrelated)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("similarity_20k_chars");
    for (name, vocabulary, seed) in [
        ("english", ENGLISH, 0x9e37_79b9_7f4a_7c15),
        ("multibyte", MULTIBYTE, 0x2545_f491_4f6c_dd1d),
    ] {
        let (text, near, unrelated) = inputs(vocabulary, seed);
        assert_eq!(text.chars().count(), LEN);
        let d = levenshtein_distance(&text, &near);
        assert!(
            (LEN / 20..LEN / 5).contains(&d),
            "{name}: ~10% edits, got {d}"
        );

        let matcher = similarity(text.clone());
        let subject = near.as_str().subject();
        group.bench_function(format!("{name}_10pct_edits"), |b| {
            b.iter(|| black_box(matcher.evaluate(black_box(&subject))))
        });
        group.bench_function(format!("{name}_unrelated"), |b| {
            b.iter(|| levenshtein_distance(black_box(&text), black_box(&unrelated)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
