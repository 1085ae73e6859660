//! BLEU and ROUGE-N agree with their reference implementations — NLTK's `sentence_bleu` with
//! `SmoothingFunction().method2` and Google's `rouge-score` — to 1e-6 on a generated corpus.
//!
//! The expected values are computed by running python3 on the corpus. Without the Python
//! packages the test fails under CI (CI set) and is skipped with a notice elsewhere; install
//! them with `scripts/install-test-deps.sh`.

use std::io::Write;
use std::process::{Command, Stdio};

use niceeval::__workspace::{bleu_score, rouge_n_score};
use serde_json::{Value, json};

const PYTHON: &str = r#"
import json, sys, warnings
warnings.filterwarnings("ignore")
from nltk.translate.bleu_score import sentence_bleu, SmoothingFunction
from rouge_score import rouge_scorer
cases = json.load(sys.stdin)
smooth = SmoothingFunction().method2
scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rouge3"], use_stemmer=False)
out = []
for case in cases:
    cand, refs = case["candidate"], case["references"]
    bleu = sentence_bleu([r.lower().split() for r in refs], cand.lower().split(), smoothing_function=smooth)
    rouge = scorer.score(refs[0], cand)
    out.append({"bleu": float(bleu), "rouge1": rouge["rouge1"].fmeasure, "rouge2": rouge["rouge2"].fmeasure, "rouge3": rouge["rouge3"].fmeasure})
json.dump(out, sys.stdout)
"#;

const WORDS: &[&str] = &[
    "the",
    "The",
    "THE",
    "cat",
    "sat",
    "on",
    "mat",
    "a",
    "dog",
    "ran",
    "quickly",
    "over",
    "lazy",
    "fox",
    "jumps",
    "brown",
    "quick",
    "and",
    "of",
    "to",
    "in",
    "is",
    "was",
    "it",
    "refund",
    "order",
    "#123",
    "123",
    "42",
    "don't",
    "e-mail",
    "state-of-the-art",
    "Café",
    "naïve",
    "ÉCOLE",
    "école",
    "日本語",
    "über",
    "Straße",
    "hello,",
    "world!",
    "(yes)",
    "\"quoted\"",
    "x",
    "y",
    "z",
    "ΣΟΦΙΑ",
    "σοφια",
    "🎉",
    "co-op",
    "U.S.A.",
    "it's",
    "--",
    "...",
];

/// A small deterministic generator (xorshift64*), so the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn sentence(rng: &mut Rng, len: usize) -> Vec<&'static str> {
    (0..len).map(|_| WORDS[rng.below(WORDS.len())]).collect()
}

fn separator(rng: &mut Rng) -> &'static str {
    [" ", " ", " ", "  ", "\n", "\t", " \u{00A0}"][rng.below(7)]
}

fn join(rng: &mut Rng, words: &[&str]) -> String {
    let mut s = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            s.push_str(separator(rng));
        }
        s.push_str(w);
    }
    s
}

/// Candidates are mutations of the reference (so scores spread over [0, 1]), plus edge cases.
fn corpus() -> Vec<(String, Vec<String>)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut cases: Vec<(String, Vec<String>)> = vec![
        (String::new(), vec!["the cat".into()]),
        ("the cat".into(), vec![String::new()]),
        (String::new(), vec![String::new()]),
        (
            "the the the the the the the".into(),
            vec!["the cat is on the mat".into()],
        ),
        (
            "the cat is on the mat".into(),
            vec!["the cat is on the mat".into()],
        ),
        ("cat".into(), vec!["cat".into()]),
        ("a b c".into(), vec!["a b c d e f g".into(), "a b".into()]),
        ("日本語 テキスト".into(), vec!["日本語".into()]),
    ];
    for _ in 0..400 {
        let ref_len = rng.below(30);
        let reference = sentence(&mut rng, ref_len);
        let mut candidate = reference.clone();
        let edits = rng.below(ref_len + 2);
        for _ in 0..edits {
            match rng.below(4) {
                0 if !candidate.is_empty() => {
                    let i = rng.below(candidate.len());
                    candidate.remove(i);
                }
                1 => {
                    let i = rng.below(candidate.len() + 1);
                    candidate.insert(i, WORDS[rng.below(WORDS.len())]);
                }
                2 if !candidate.is_empty() => {
                    let i = rng.below(candidate.len());
                    candidate[i] = WORDS[rng.below(WORDS.len())];
                }
                _ if candidate.len() > 1 => {
                    let i = rng.below(candidate.len() - 1);
                    candidate.swap(i, i + 1);
                }
                _ => {}
            }
        }
        let mut references = vec![join(&mut rng, &reference)];
        if rng.below(4) == 0 {
            let extra = rng.below(25);
            let other = sentence(&mut rng, extra);
            references.push(join(&mut rng, &other));
        }
        cases.push((join(&mut rng, &candidate), references));
    }
    cases
}

fn reference_values(cases: &[(String, Vec<String>)]) -> Option<Vec<Value>> {
    let missing = |why: String| {
        crate::scripts_support::available(
            false,
            &format!(
                "python3 with nltk and rouge-score, for the reference BLEU/ROUGE values ({why})"
            ),
            "install them with scripts/install-test-deps.sh",
        );
        None
    };
    let input: Vec<Value> = cases
        .iter()
        .map(|(c, r)| json!({"candidate": c, "references": r}))
        .collect();
    let mut child = match Command::new("python3")
        .args(["-c", PYTHON])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return missing(format!("cannot run python3: {e}")),
    };
    let payload = serde_json::to_vec(&input).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&payload));
    let output = child.wait_with_output().unwrap();
    // Python may exit (a failed import) before reading its input: a broken pipe then.
    let written = writer.join().unwrap();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("ModuleNotFoundError") || stderr.contains("ImportError") {
            return missing(stderr.lines().last().unwrap_or_default().to_string());
        }
        panic!("the reference script failed: {stderr}");
    }
    written.unwrap();
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

#[test]
fn bleu_and_rouge_match_the_reference_implementations() {
    let cases = corpus();
    let Some(expected) = reference_values(&cases) else {
        return;
    };
    assert_eq!(expected.len(), cases.len());
    let mut checked = 0;
    let mut nonzero = 0;
    for ((candidate, references), want) in cases.iter().zip(&expected) {
        let got = bleu_score(candidate, references);
        let want_bleu = want["bleu"].as_f64().unwrap();
        assert!(
            (got - want_bleu).abs() < 1e-6,
            "BLEU of {candidate:?} against {references:?}: niceeval {got}, NLTK {want_bleu}"
        );
        if want_bleu > 0.0 {
            nonzero += 1;
        }
        for n in 1..=3 {
            let got = rouge_n_score(candidate, &references[0], n);
            let want = want[format!("rouge{n}")].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-6,
                "ROUGE-{n} of {candidate:?} against {:?}: niceeval {got}, rouge-score {want}",
                references[0]
            );
        }
        checked += 1;
    }
    assert!(checked > 400);
    assert!(
        nonzero > 100,
        "the corpus must exercise non-zero BLEU ({nonzero})"
    );
}
