use super::*;

/// The textbook dynamic programme, as the reference.
fn reference(a: &[char], b: &[char]) -> usize {
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

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const ALPHABETS: [&str; 5] = [
    "ab",
    "abcdefghijklmnopqrstuvwxyz ",
    "aé日😀\u{301}",
    "日本語のテキスト",
    "aA1 éÉ€😀👍🏽\u{200d}한글",
];

fn random_text(rng: &mut Rng, len: usize, alphabet: &[char]) -> Vec<char> {
    (0..len)
        .map(|_| alphabet[rng.below(alphabet.len())])
        .collect()
}

/// `text` with about `rate` percent of its characters substituted, deleted or followed by
/// an insertion.
fn edited(rng: &mut Rng, text: &[char], rate: usize, alphabet: &[char]) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len() + 8);
    for &c in text {
        let roll = rng.below(300);
        if roll < rate {
            out.push(alphabet[rng.below(alphabet.len())]);
        } else if roll < 2 * rate {
            // deleted
        } else if roll < 3 * rate {
            out.push(c);
            out.push(alphabet[rng.below(alphabet.len())]);
        } else {
            out.push(c);
        }
    }
    out
}

const LENGTHS: [usize; 16] = [
    0, 1, 2, 3, 7, 31, 63, 64, 65, 100, 127, 128, 129, 191, 192, 257,
];

#[test]
fn matches_the_reference_on_pseudo_random_pairs() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for alphabet in ALPHABETS {
        let alphabet: Vec<char> = alphabet.chars().collect();
        for &len_a in &LENGTHS {
            for &len_b in &LENGTHS {
                let a = random_text(&mut rng, len_a, &alphabet);
                // Unrelated texts of these lengths...
                let b = random_text(&mut rng, len_b, &alphabet);
                assert_eq!(distance_chars(&a, &b), reference(&a, &b), "{a:?} / {b:?}");
                checked += 1;
            }
            // ...and edited copies, from nearly equal to far apart.
            for rate in [0, 1, 5, 20, 60, 100] {
                let a = random_text(&mut rng, len_a, &alphabet);
                let b = edited(&mut rng, &a, rate, &alphabet);
                let expected = reference(&a, &b);
                assert_eq!(distance_chars(&a, &b), expected, "{a:?} / {b:?}");
                assert_eq!(distance_chars(&b, &a), expected, "symmetric: {a:?} / {b:?}");
                checked += 2;
            }
        }
    }
    assert!(checked > 1_000);
}

#[test]
fn long_edited_texts_match_the_reference() {
    // Long enough for the band to move through many blocks and to be doubled.
    let mut rng = Rng(42);
    for alphabet in ALPHABETS {
        let alphabet: Vec<char> = alphabet.chars().collect();
        for (len, rate) in [(700, 3), (1_000, 15), (1_300, 60), (900, 150)] {
            let a = random_text(&mut rng, len, &alphabet);
            let b = edited(&mut rng, &a, rate, &alphabet);
            assert_eq!(
                distance_chars(&a, &b),
                reference(&a, &b),
                "len {len}, rate {rate}"
            );
        }
    }
}

#[test]
fn banded_run_is_exact_under_its_cutoff_and_above_it_otherwise() {
    let mut rng = Rng(7);
    for alphabet in ALPHABETS {
        let alphabet: Vec<char> = alphabet.chars().collect();
        for _ in 0..60 {
            let len = 1 + rng.below(400);
            let a = random_text(&mut rng, len, &alphabet);
            let rate = rng.below(90);
            let b = edited(&mut rng, &a, rate, &alphabet);
            let (p, t) = if a.len() <= b.len() {
                (&a, &b)
            } else {
                (&b, &a)
            };
            if p.is_empty() {
                continue;
            }
            let exact = reference(p, t);
            for bits in [PatternBits::new(p), PatternBits::with_dense_limit(p, 0)] {
                assert_eq!(bits.run(t, None), exact);
                for slack in [0, 1, 2, 5, 31, 64, 100, 500] {
                    let cutoff = t.len() - p.len() + 2 * slack;
                    let got = bits.run(t, Some(slack));
                    assert!(got >= exact, "a banded result is an upper bound");
                    if exact <= cutoff {
                        assert_eq!(got, exact, "slack {slack}");
                    } else {
                        assert!(got > cutoff, "slack {slack}: {got} <= {cutoff} < {exact}");
                    }
                }
            }
        }
    }
}

#[test]
fn edge_cases() {
    assert_eq!(distance("", ""), 0);
    assert_eq!(distance("abc", ""), 3);
    assert_eq!(distance("", "日本"), 2);
    assert_eq!(distance("same", "same"), 0);
    assert_eq!(distance("kitten", "sitting"), 3);
    assert_eq!(distance("😀", "😃"), 1, "one scalar value each");
    assert_eq!(distance("é", "e\u{301}"), 2, "no Unicode normalization");
    assert_eq!(distance("Hello", "hello"), 1, "case-sensitive");
    let long = "x".repeat(200);
    assert_eq!(distance(&long, &format!("{long}y")), 1);
    assert_eq!(distance(&format!("y{long}"), &long), 1);
}

#[test]
fn pattern_bits_group_positions_by_block() {
    let pattern: Vec<char> = "a".repeat(70).chars().chain("é".chars()).collect();
    let bits = PatternBits::new(&pattern);
    let Masks::Dense(table) = &bits.masks else {
        panic!("a small pattern is stored densely")
    };
    let row = |c: char| &table[bits.id(c) * 2..bits.id(c) * 2 + 2];
    assert_eq!(row('a'), &[!0u64, 0b11_1111]);
    assert_eq!(row('é'), &[0, 1u64 << 6]);
    assert_eq!(bits.id('b'), 0);
    assert_eq!(bits.id('日'), 0);
    assert_eq!(row('日'), &[0, 0]);

    let sparse = PatternBits::with_dense_limit(&pattern, 0);
    let Masks::Sparse { starts, entries } = &sparse.masks else {
        panic!("a zero limit forces the sparse form")
    };
    let of = |c: char| &entries[starts[sparse.id(c)]..starts[sparse.id(c) + 1]];
    assert_eq!(of('a'), &[(0, !0u64), (1, 0b11_1111)]);
    assert_eq!(of('é'), &[(1, 1u64 << 6)]);
}

#[test]
fn a_budget_bounds_the_work() {
    let mut rng = Rng(11);
    let alphabet: Vec<char> = ALPHABETS[1].chars().collect();
    let a = random_text(&mut rng, 2_000, &alphabet);
    let b = random_text(&mut rng, 2_000, &alphabet);
    // Unrelated texts need the whole table: 2,000 columns × 32 blocks, plus a first band.
    let exact = reference(&a, &b);
    assert_eq!(distance_within(&a, &b, 2_000 * 40), Some(exact));
    assert_eq!(distance_within(&a, &b, 2_000 * 30), None);
    assert_eq!(distance_within(&a, &b, 0), None);
    // Close texts fit in a narrow band, and trimmed or empty ones cost nothing.
    let near = edited(&mut rng, &a, 2, &alphabet);
    assert_eq!(
        distance_within(&a, &near, 2_000 * 8),
        Some(reference(&a, &near))
    );
    assert_eq!(distance_within(&a, &a, 0), Some(0));
    assert_eq!(distance_within(&a, &[], 0), Some(2_000));
}
