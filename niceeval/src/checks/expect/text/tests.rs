use super::*;
use crate::base::assertion::{AssertionResult, Checkable, Severity};
use serde_json::json;

fn check(a: &dyn Assertion, value: &Subject<'_>) -> AssertionResult {
    AssertionResult::evaluate(a, value)
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap()
}

#[test]
fn gates_by_default() {
    for a in [&includes("x") as &dyn Assertion, &excludes("x")] {
        assert_eq!(a.settings().severity, Severity::Gate);
        assert_eq!(a.settings().threshold, None);
    }
}

#[test]
fn describe_names_the_pattern() {
    assert_eq!(includes("refund").describe(), r#"includes("refund")"#);
    assert_eq!(excludes(re(r"\d+")).describe(), r#"excludes(/\d+/)"#);
    let long = includes("p".repeat(500)).describe();
    assert!(long.contains("chars elided") && long.len() < 100, "{long}");
}

#[test]
fn empty_pattern_is_an_execution_error() {
    for (a, name) in [
        (&includes("") as &dyn Assertion, "includes"),
        (&excludes(""), "excludes"),
    ] {
        for value in [Subject::Text("text".into()), Subject::Missing] {
            let r = check(a, &value);
            assert!(!r.passed);
            let error = r.error.expect("an execution error");
            assert!(error.starts_with(&format!("{name}(\"\")")), "{error}");
            assert!(error.contains("give a non-empty pattern"), "{error}");
        }
    }
}

#[test]
fn empty_value() {
    let r = check(&includes("x"), &"".subject());
    assert!(!r.passed);
    assert_eq!(r.reason, r#""" does not contain "x""#);
    assert!(check(&excludes("x"), &"".subject()).passed);
    // A regex that matches the empty text.
    assert!(check(&includes(re("^$")), &"".subject()).passed);
    assert!(!check(&excludes(re("^$")), &"".subject()).passed);
}

#[test]
fn none_fails_includes_and_passes_excludes() {
    let r = check(&includes("refund"), &Subject::Missing);
    assert!(!r.passed && r.error.is_none());
    assert_eq!(
        r.reason,
        r#"there is no value (None) to search for "refund""#
    );
    let r = check(&excludes("refund"), &Subject::Missing);
    assert!(r.passed);
    assert_eq!(
        r.reason,
        r#"there is no value (None), so nothing contains "refund""#
    );
}

#[test]
fn found_reasons_show_position_count_and_context() {
    let r = check(&includes("a"), &"banana".subject());
    assert_eq!(r.reason, r#"found "a" 3 times, first at char 1: "banana""#);
    let r = check(&excludes(re(r"\d+")), &"call 555 or 666".subject());
    assert!(!r.passed);
    assert_eq!(
        r.reason,
        r#"/\d+/ matched "555" 2 times, first at char 5: "call 555 or 666""#
    );
}

#[test]
fn unicode_text() {
    // CJK and emoji: positions are in characters.
    let r = check(&includes("テキスト"), &"日本語のテキストです".subject());
    assert_eq!(
        r.reason,
        r#"found "テキスト" at char 4: "日本語のテキストです""#
    );
    let r = check(&includes("👍🏽"), &"ok 👍🏽 done".subject());
    assert!(r.passed);
    // No normalization: precomposed é is not decomposed e + U+0301, and the reason shows why.
    let r = check(&includes("café"), &"un cafe\u{301}".subject());
    assert!(!r.passed);
    assert_eq!(r.reason, r#""un cafe\u{301}" does not contain "café""#);
    // Case: literal is case-sensitive, the reason offers the case-insensitive hit.
    let r = check(&includes("école"), &"ÉCOLE".subject());
    assert!(!r.passed);
    assert!(
        r.reason
            .ends_with(r#"(ignoring case, "ÉCOLE" is at char 0: "ÉCOLE")"#),
        "{}",
        r.reason
    );
    // (?i) folds Unicode case.
    assert!(check(&includes(re("(?i)école")), &"ÉCOLE".subject()).passed);
}

#[test]
fn regex_patterns() {
    assert!(check(&includes(re(r"^\s*\{")), &"  {\"a\":1}".subject()).passed);
    assert!(!check(&includes(re(r"^hello$")), &"hello world".subject()).passed);
    let r = check(&includes(re(r"order #\d+")), &"no order".subject());
    assert_eq!(r.reason, r#""no order" does not match /order #\d+/"#);
    // &Regex works too.
    let shared = re("x");
    assert!(check(&includes(&shared), &"xyz".subject()).passed);
    assert!(!check(&excludes(&shared), &"xyz".subject()).passed);
}

#[test]
fn json_values_are_searched_as_compact_json() {
    let data = json!({ "intent": "refund", "amount": 42 });
    assert!(check(&includes("\"intent\":\"refund\""), &data.subject()).passed);
    assert!(check(&includes("42"), &data.subject()).passed);
    assert!(check(&includes("true"), &true.subject()).passed);
    assert!(check(&includes("12"), &123u64.subject()).passed);
    assert!(check(&includes("null"), &Some(json!(null)).subject()).passed);
    let r = check(&excludes("refund"), &data.subject());
    assert_eq!(
        r.reason,
        r#"found "refund" at char 23: "{\"amount\":42,\"intent\":\"refund\"}""#
    );
}

#[test]
fn huge_values_keep_reasons_short() {
    let huge = format!(
        "{}the secret token{}",
        "lorem ipsum ".repeat(300_000),
        " dolor".repeat(300_000)
    );
    let r = check(&excludes("secret"), &huge.as_str().subject());
    assert!(!r.passed);
    assert!(r.reason.contains("at char 3600004"), "{}", r.reason);
    assert!(r.reason.contains("the secret token"), "{}", r.reason);
    assert!(r.reason.chars().count() < 200, "{}", r.reason);

    let r = check(&includes("absent"), &huge.as_str().subject());
    assert!(!r.passed);
    assert!(r.reason.contains("chars elided"), "{}", r.reason);
    assert!(r.reason.chars().count() < 250, "{}", r.reason);

    // A match that is itself huge is elided too.
    let r = check(&includes(re("(lorem ipsum )+")), &huge.as_str().subject());
    assert!(r.passed);
    assert!(r.reason.chars().count() < 400, "{}", r.reason);
}
