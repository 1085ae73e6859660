//! Assertions as data against promptfoo's behaviour: comma-separated values, scalars read with
//! JavaScript's `String(value)`, thresholds of pass/fail types, weight 0, and binary
//! cost/latency scores — each case's pass/fail and score as promptfoo gives them.

#![cfg(feature = "yaml")]

use niceeval::spec::{self, SpecContext};

fn run(yaml: &str, output: &str) -> spec::SpecOutcome {
    let specs = spec::from_yaml(yaml).unwrap_or_else(|e| panic!("{e}"));
    spec::evaluate(&specs, output, &SpecContext::default()).unwrap()
}

fn load_error(yaml: &str) -> String {
    spec::from_yaml(yaml).unwrap_err().to_string()
}

/// One promptfoo conformance case: assertions, output, run metrics, expected pass and score.
struct Case {
    yaml: &'static str,
    output: &'static str,
    cost: Option<f64>,
    latency: Option<f64>,
    pass: bool,
    score: Option<f64>,
}

const fn case(yaml: &'static str, output: &'static str, pass: bool) -> Case {
    Case {
        yaml,
        output,
        cost: None,
        latency: None,
        pass,
        score: None,
    }
}

#[test]
fn promptfoo_conformance_table() {
    let table = [
        // Comma-separated values, split like promptfoo's parseCommaSeparatedValues.
        case("- type: contains-any\n  value: '\"\",'", "", true),
        case("- type: icontains-any\n  value: '\"\",WORLD'", "", true),
        case(
            "- type: contains-any\n  value: '\"a\"\"b\",c'",
            "a\"b",
            true,
        ),
        case(
            r#"- type: contains-all
  value: '"say \"hello\"", "another,phrase"'"#,
            r#"say "hello" and another,phrase here"#,
            true,
        ),
        case(
            r#"- type: contains-any
  value: '"test\\test"'"#,
            r"test\test",
            true,
        ),
        case(
            r#"- type: contains-any
  value: '"hello\"world,test", "another,test"'"#,
            "just a test",
            false,
        ),
        case(
            "- type: contains-any\n  value: 'said \"hi\", nope'",
            "He said \"hi\" to me",
            true,
        ),
        case(
            "- type: contains-any\n  value: '\" cat \", dog'",
            "concatenate",
            false,
        ),
        case("- type: icontains-all\n  value: '\"\"'", "hello", true),
        case("- type: icontains-any\n  value: '  ,  ,  '", "", false),
        // Scalars are read with JavaScript's String(value).
        case("- type: contains\n  value: 1.0", "Version 1 released", true),
        case(
            "- type: contains-any\n  value: [2.0, true]",
            "it is true",
            true,
        ),
        case("- type: equals\n  value: 42", "42", true),
        case("- type: equals\n  value: 42", "42.0", false),
        case("- type: equals\n  value: 42", "42\n", false),
        case("- type: equals\n  value: 4.0", "4", true),
        case("- type: equals\n  value: true", "true", true),
        case("- type: equals\n  value: true", " true", false),
        case("- type: equals\n  value: 0.1", "0.10", false),
        case("- type: equals\n  value: '42'", "42.0", false),
        case(
            "- type: equals\n  value: {a: 1, b: [1, 2]}",
            r#"{"b": [1, 2.0], "a": 1}"#,
            true,
        ),
        case("- type: equals\n  value: [1, 2]", "[1,2]", true),
        case("- type: not-equals\n  value: 42", "42.0", true),
        // Threshold is ignored by pass/fail types.
        case(
            "- type: contains\n  value: foo\n  threshold: 0",
            "bar",
            false,
        ),
        case("- type: equals\n  value: foo\n  threshold: 0", "bar", false),
        case("- type: regex\n  value: '^a'\n  threshold: 0", "bar", false),
        case(
            "- type: contains-any\n  value: [x, y]\n  threshold: 0",
            "bar",
            false,
        ),
        case("- type: is-json\n  threshold: 0", "nope", false),
        case(
            "- type: word-count\n  value: 5\n  threshold: 0",
            "a b",
            false,
        ),
        // Whole numbers written as floats, and fractional bounds (count >= 1.5).
        case("- type: word-count\n  value: 3.0", "a b c", true),
        case("- type: word-count\n  value: {min: 1.5}", "a", false),
        case("- type: word-count\n  value: {min: 1.5}", "a b", true),
        case("- type: word-count\n  value: {max: 2.5}", "a b c", false),
        case(
            "- type: word-count\n  value: {min: 1, max: 2.5}",
            "a b",
            true,
        ),
        case(
            "- type: starts-with\n  value: b\n  threshold: 2",
            "bar",
            true,
        ),
        // ...but kept by graded ones.
        case(
            "- type: similarity\n  value: abcd\n  threshold: 0.2",
            "abxy",
            true,
        ),
        case(
            "- type: levenshtein\n  value: kitten\n  threshold: 3",
            "sitting",
            true,
        ),
        // weight 0: recorded, force-passed, not counted.
        Case {
            score: Some(1.0),
            ..case(
                "- type: contains\n  value: foo\n  weight: 0\n- type: contains\n  value: bar",
                "bar",
                true,
            )
        },
        Case {
            score: Some(0.0),
            ..case("- type: contains\n  value: bar\n  weight: 0", "bar", true)
        },
        Case {
            score: Some(1.0),
            ..case(
                "- type: assert-set\n  assert:\n    - type: contains\n      value: foo\n      weight: 0\n    - type: contains\n      value: bar",
                "bar",
                true,
            )
        },
        Case {
            score: Some(0.5),
            ..case(
                "- type: assert-set\n  assert: []\n- type: contains\n  value: bar",
                "bar",
                true,
            )
        },
        case(
            "- type: assert-set\n  weight: 0\n  assert:\n    - type: contains\n      value: foo",
            "bar",
            false,
        ),
        // cost and latency score 1 within budget, 0 over it.
        Case {
            cost: Some(0.02),
            score: Some(0.0),
            ..case("- type: cost\n  threshold: 0.01", "x", false)
        },
        Case {
            cost: Some(0.02),
            score: Some(1.0),
            ..case("- type: not-cost\n  threshold: 0.01", "x", true)
        },
        Case {
            latency: Some(4000.0),
            score: Some(0.0),
            ..case("- type: latency\n  threshold: 1000", "x", false)
        },
        Case {
            latency: Some(999.0),
            score: Some(1.0),
            ..case("- type: latency\n  threshold: 1000", "x", true)
        },
        Case {
            cost: Some(0.0),
            score: Some(1.0),
            ..case("- type: cost\n  threshold: 0", "x", true)
        },
    ];
    for (i, c) in table.iter().enumerate() {
        let specs = spec::from_yaml(c.yaml).unwrap_or_else(|e| panic!("case {i}: {e}"));
        let mut context = SpecContext::new();
        context.cost_usd = c.cost;
        context.latency_ms = c.latency;
        let out = spec::evaluate(&specs, c.output, &context).unwrap();
        assert_eq!(out.pass, c.pass, "case {i}: {}\n{:#?}", c.yaml, out.results);
        if let Some(score) = c.score {
            assert!(
                (out.score - score).abs() < 1e-12,
                "case {i}: score {}",
                out.score
            );
        }
    }
}

#[test]
fn weight_zero_metrics_and_malformed_quotes() {
    let out = run(
        "- type: contains\n  value: foo\n  weight: 0\n  metric: m",
        "bar",
    );
    assert!(out.pass && out.results[0].passed);
    assert_eq!((out.score, out.named_scores["m"]), (0.0, 0.0));
    assert!(
        out.results[0].reason.contains("weight 0"),
        "{}",
        out.results[0].reason
    );
    // An execution error is never force-passed.
    let broken = run("- type: cost\n  threshold: 1\n  weight: 0", "x");
    assert!(!broken.pass && broken.results[0].error.is_some());

    for (value, message) in [
        ("'\"test'", "unterminated quoted field"),
        ("'\"hello\" world'", "text after a closing quote"),
    ] {
        let err = load_error(&format!(
            "- type: contains\n  value: x\n- type: icontains-all\n  value: {value}"
        ));
        assert!(
            err.contains("assertion #1 (type `icontains-all`): `value` has ")
                && err.contains(message),
            "{err}"
        );
    }
}
