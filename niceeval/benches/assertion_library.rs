//! Speed of the deterministic assertion library: a 7-assertion spec over a 2 KB output,
//! `contains_json` over 1 MB, BLEU/ROUGE-N over two 10,000-word texts, and what one eval of
//! the promptfoo comparison (`scripts/compare-promptfoo.sh`) spends on its 7 matchers, built
//! afresh and evaluated over a one-sentence reply as an eval body does on every run.

use criterion::{Criterion, criterion_group, criterion_main};
use niceeval::__workspace::{bleu_score, rouge_n_score};
use niceeval::expect::contains_json;
use niceeval::spec::{self, SpecContext};
use niceeval::{Assertion, Checkable};

fn words(n: usize, seed: u64) -> String {
    const VOCAB: &[&str] = &[
        "the", "agent", "refund", "order", "customer", "was", "issued", "quickly", "and", "a",
        "payment", "of", "to", "support", "ticket", "closed", "with", "notes", "on", "status",
    ];
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            VOCAB[(x % VOCAB.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn spec_list(c: &mut Criterion) {
    let specs = spec::from_yaml(
        r#"
- type: contains
  value: refund
- type: icontains
  value: ORDER
- type: not-contains
  value: password
- type: regex
  value: "order #\\d+"
- type: contains-any
  value: [issued, sent, done]
- type: word-count
  value: { min: 100, max: 1000 }
- type: starts-with
  value: "Dear"
"#,
    )
    .unwrap();
    let mut output = String::from("Dear customer, your refund for order #123 was issued. ");
    while output.len() < 2048 {
        output.push_str(&words(20, output.len() as u64 + 1));
        output.push(' ');
    }
    output.truncate(2048);
    let context = SpecContext::default();
    assert!(spec::evaluate(&specs, &output, &context).unwrap().pass);
    c.bench_function("spec: 7 assertions over 2 KB", |b| {
        b.iter(|| spec::evaluate(&specs, &output, &context).unwrap())
    });
}

fn json_scan(c: &mut Criterion) {
    let mut text = String::new();
    while text.len() < 1_000_000 {
        text.push_str(&words(50, text.len() as u64 + 7));
        text.push_str(" {not json} [1] \"quoted {\" ");
    }
    text.push_str(r#"{"name": "Ada", "score": 9, "tags": ["a", "b"]}"#);
    let schema = serde_json::json!({"type": "object", "required": ["name", "score"]});
    let matcher = contains_json(schema);
    let subject = text.as_str().subject();
    assert_eq!(matcher.evaluate(&subject).score, 1.0);
    c.bench_function("contains_json with schema over 1 MB", |b| {
        b.iter(|| matcher.evaluate(&subject))
    });

    // A worst case for the lenient reading: stray `{` that never close, each read towards the
    // end of the text (up to 100,000 characters) before it is given up.
    let mut stray = String::new();
    while stray.len() < 1_000_000 {
        stray.push_str(&words(50, stray.len() as u64 + 11));
        stray.push_str(" { \"unclosed ");
    }
    let stray_subject = stray.as_str().subject();
    let any = contains_json(None);
    c.bench_function("contains_json over 1 MB of unclosed braces", |b| {
        b.iter(|| any.evaluate(&stray_subject))
    });
}

fn text_metrics(c: &mut Criterion) {
    let a = words(10_000, 1);
    let b = words(10_000, 2);
    c.bench_function("bleu over two 10,000-word texts", |bench| {
        bench.iter(|| bleu_score(&a, &[&b]))
    });
    c.bench_function("rouge-1 over two 10,000-word texts", |bench| {
        bench.iter(|| rouge_n_score(&a, &b, 1))
    });
}

fn per_eval(c: &mut Criterion) {
    use niceeval::expect::{
        bleu, icontains, includes, levenshtein, regex, rouge_n, similarity, starts_with,
    };
    let reply = "Your order 42 ships today and arrives on Friday.";
    let subject = reply.subject();
    c.bench_function(
        "per eval: 7 matchers built and evaluated over a sentence",
        |b| {
            b.iter(|| {
                let results = [
                    includes("ships").evaluate(&subject),
                    icontains("ORDER").evaluate(&subject),
                    regex(r"order \d+").evaluate(&subject),
                    starts_with("Your").evaluate(&subject),
                    levenshtein("Your order 42 ships today and arrives on Friday!")
                        .max_distance(5)
                        .evaluate(&subject),
                    rouge_n("your order ships today and arrives friday").evaluate(&subject),
                    bleu("Your order 42 ships today and arrives on Friday .").evaluate(&subject),
                ];
                std::hint::black_box(results)
            })
        },
    );
    let expected = "Your order 42 ships today and arrives on Friday, as promised.";
    c.bench_function("per eval: similarity over two sentences", |b| {
        b.iter(|| std::hint::black_box(similarity(expected).evaluate(&subject)))
    });
}

criterion_group!(benches, spec_list, json_scan, text_metrics, per_eval);
criterion_main!(benches);
