use super::*;
use crate::base::assertion::{AssertionResult, Checkable};

/// `(text, references, (alpha, beta, gamma), score)`: promptfoo 0.123.1's METEOR (its source
/// with `natural` loaded, its WordNet stage left without synonyms). The first twelve are the
/// inputs of promptfoo's test/assertions/meteor.test.ts ("identical sentences", "should handle
/// nltk example", "non-matching sentences", "multiple references", "parameters and edge
/// cases", "tokenization and sentence processing", "multiple word forms and stemming"), the
/// rest probe stems, white space, repeats and an empty reference.
#[allow(clippy::type_complexity)]
const SCORES: &[(&str, &[&str], (f64, f64, f64), f64)] = &[
    (
        "The cat sat on the mat",
        &["The cat sat on the mat"],
        (0.9, 3.0, 0.5),
        0.9976851851851852,
    ),
    (
        "The cat sat on the mat.",
        &["The cat sat on the mat"],
        (0.9, 3.0, 0.5),
        0.9976851851851852,
    ),
    (
        "It is a guide to action that ensures the military will forever heed Party commands",
        &[
            "It is a guide to action which ensures that the military always obeys the commands of the party",
        ],
        (0.9, 3.0, 0.5),
        0.610679535467671,
    ),
    (
        "non matching hypothesis",
        &["The cat sat on the mat"],
        (0.9, 3.0, 0.5),
        0.0,
    ),
    (
        "The dog ran in the park",
        &["The cat sat on the mat"],
        (0.9, 3.0, 0.5),
        0.16666666666666666,
    ),
    (
        "It is a guide to action which ensures that the military always obeys the commands of the party",
        &[
            "It is a guide to action that ensures that the military will forever heed Party commands",
            "It is the guiding principle which guarantees the military forces always being under the command of the Party",
            "It is the practical guide for the army always to heed the directions of the party",
        ],
        (0.9, 3.0, 0.5),
        0.6944444444444445,
    ),
    (
        "The cat was sitting on the mat.",
        &[
            "The cat sat on the mat.",
            "There is a cat on the mat.",
            "A cat is sitting on the mat.",
        ],
        (0.9, 3.0, 0.5),
        0.7934426229508196,
    ),
    (
        "The cat is sitting on the mat",
        &["The cat sat on the mat"],
        (0.85, 2.0, 0.4),
        0.7609756097560976,
    ),
    (
        "The dog ran in the park",
        &["The cat sat on the mat"],
        (0.9, 3.0, 0.5),
        0.16666666666666663,
    ),
    (
        "The cat sat on the mat",
        &["The cat sat on the mat"],
        (0.9, 3.0, 0.5),
        0.9976851851851852,
    ),
    (
        "one, two, three",
        &["one, two, three"],
        (0.9, 3.0, 0.5),
        0.9814814814814815,
    ),
    (
        "the cat sat on the mat",
        &["THE CAT SAT ON THE MAT"],
        (0.9, 3.0, 0.5),
        0.9976851851851852,
    ),
    (
        "The cat is sitting on the mat",
        &["The cats are sitting on the mats"],
        (0.9, 3.0, 0.5),
        0.8412698412698414,
    ),
    (
        "The cat sat on the mat",
        &["The feline sat on the rug"],
        (0.9, 3.0, 0.5),
        0.625,
    ),
    (
        "the large house",
        &["the big house"],
        (0.9, 3.0, 0.5),
        0.3333333333333333,
    ),
    (
        "He runs quick to stations",
        &["He is running quickly to the station"],
        (0.9, 3.0, 0.5),
        0.2941176470588235,
    ),
    (
        "leading space ",
        &[" leading space"],
        (0.9, 3.0, 0.5),
        0.8518518518518519,
    ),
    ("c b a", &["a  b   c"], (0.9, 3.0, 0.5), 0.5),
    (
        "generous gift",
        &["generously given"],
        (0.9, 3.0, 0.5),
        0.25,
    ),
    ("something", &[""], (0.9, 3.0, 0.5), 0.0),
    (
        "relate database organization info...",
        &["Relational databases organize information."],
        (0.9, 3.0, 0.5),
        0.7361111111111112,
    ),
    ("x x x x", &["x"], (0.9, 3.0, 0.5), 0.3846153846153847),
    (
        "The cat sat on the mat",
        &["The cat sat on the mat"],
        (0.9, 3.0, 0.5),
        0.9976851851851852,
    ),
];

#[test]
fn promptfoos_scores() {
    for (text, references, (alpha, beta, gamma), expected) in SCORES {
        let p = Parameters {
            alpha: *alpha,
            beta: *beta,
            gamma: *gamma,
        };
        let score = meteor_score(text, references, p);
        assert!(
            (score - expected).abs() < 1e-12,
            "{text:?} against {references:?}: {score}, promptfoo {expected}"
        );
    }
}

/// The gap WordNet leaves: promptfoo pairs `car` with its synonym `auto` (0.9922); niceeval,
/// without WordNet, scores the sentence as if the word were different (0.7361).
#[test]
fn synonyms_are_not_paired() {
    let score = meteor_score(
        "I drove my car",
        &["I drove my auto"],
        Parameters::default(),
    );
    assert!((score - 0.7361111111111112).abs() < 1e-12, "{score}");
}

#[test]
fn the_item_is_a_gate_at_one_half_and_refuses_an_empty_output() {
    let item = Meteor {
        references: vec!["The cat sat on the mat".into()],
        parameters: Parameters::default(),
    };
    let r = AssertionResult::evaluate(&item, &"The cat sat on the mat".subject());
    assert!(r.passed && r.score > 0.99);
    let r = AssertionResult::evaluate(&item, &"The dog ran in the park".subject());
    assert!(!r.passed);
    let r = AssertionResult::evaluate(&item, &"".subject());
    assert!(r.error.is_some());
    assert_eq!(item.describe(), "meteor(\"The cat sat on the mat\")");
}

#[test]
fn words_split_as_javascript_does() {
    assert_eq!(words(" a  b. "), ["", "a", "b", ""]);
    assert_eq!(words("Hello..."), ["hello"]);
    assert_eq!(words(""), [""]);
}
